"""One loop under every instrument: only the modules named here call `.backward(`.

The course's training loop is `train_accumulated` (gradacc_lessons/accumulate.py). The
instruments that time it, measure its memory, split its peak into phases or trace it on
fake tensors run that loop and listen to its events (`on_event`); they never write a
window of their own. The scan reads the package's source (ast), so a new module that calls
`.backward(` fails here until it runs the one loop or is added below with its reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "gradacc_lessons"

# module (relative to the package) -> why it may call .backward() itself
ALLOWED = {
    "accumulate.py": "the one loop itself, and the accumulated gradients lesson 1 checks",
    "demos/loops.py": "the lessons' deliberately broken loops, each a pitfall by name",
    "exercises/lesson1.py": "the model answer of the exercise that asks for a loop by hand",
    "exercises/lesson2.py": "the model answers of exercises that ask for a window by hand",
    "precision.py": "lesson 6's 16-bit .grad: the model itself cast to bfloat16, no autocast",
    "demos/checkpointing.py": "one forward and backward, counting checkpointed forwards",
    "demos/batchnorm/single_sample.py": "one backward through BatchNorm written by hand",
    "demos/training.py": "counting torch.compile's recompilations, no optimizer step",
    "demos/distributed/arithmetic.py": "full-batch references and FSDP2's sync flag per call",
    "demos/distributed/workers.py": "DDP's no_sync() per micro-batch, in worker processes",
    "demos/distributed/sharded.py": "FSDP's reshard and sync flags per micro-batch",
    "demos/distributed/sharded_precision.py": "FSDP1 no_sync() and FSDP2 in bfloat16",
    "demos/distributed/ddp_buffers.py": "two DDP processes and a full batch: forwards of its own",
    "demos/frameworks/runs.py": "Accelerate's own accelerator.backward() inside accumulate()",
    "demos/frameworks/two_processes.py": "Accelerate's accelerator.backward() on two processes",
}

# The instruments that must run the one loop (issue 40): they call train_accumulated.
INSTRUMENTS = ["timing.py", "memory/measured.py", "memory/phases.py", "planning/fake_step.py"]


def _calls(path: Path, name: str) -> list[int]:
    """Lines where the module calls something named `name` (a method or a function)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if called == name:
                lines.append(node.lineno)
    return lines


def _modules() -> dict[str, Path]:
    return {path.relative_to(PACKAGE).as_posix(): path for path in PACKAGE.rglob("*.py")}


def test_only_the_allowed_modules_call_backward():
    calling = {name: _calls(path, "backward") for name, path in _modules().items()}
    unexpected = {name: lines for name, lines in calling.items() if lines and name not in ALLOWED}
    assert not unexpected, (
        f"these modules call .backward() (module: lines): {unexpected}; run the window "
        "through accumulate.train_accumulated and listen to its events (on_event), or add "
        "the module to ALLOWED with the reason it must write its own"
    )


def test_every_allowed_module_still_calls_backward():
    """The list stays short: an entry whose module no longer calls backward() must go."""
    modules = _modules()
    stale = [n for n in ALLOWED if n not in modules or not _calls(modules[n], "backward")]
    assert not stale, f"remove from ALLOWED, they call no .backward(): {stale}"


@pytest.mark.parametrize("name", INSTRUMENTS)
def test_the_instruments_run_the_one_loop(name):
    path = PACKAGE / name
    assert _calls(path, "train_accumulated"), f"{name} must run accumulate.train_accumulated"
    assert not _calls(path, "backward"), f"{name} writes a window of its own"


def test_the_scan_sees_a_backward_call(tmp_path):
    """The scan itself: a made-up module with a window of its own is found, a string is not."""
    module = tmp_path / "window.py"
    module.write_text(
        'NOTE = "loss.backward() in a string is no call"\n'
        "def window(model, batches):\n"
        "    for x, y in batches:\n"
        "        (model(x) - y).pow(2).mean().backward()\n",
        encoding="utf-8",
    )
    assert _calls(module, "backward") == [4]
