"""The grader's own re-check of autograded answers, where student code cannot reach it.

Hidden tests run in the student's kernel, next to the student's code, which can
patch anything there (torch, builtins, IPython's input transformers). So after
nbgrader, the grader checks again from outside:

- a multiple-choice answer is read from the notebook's code cells with `ast`
  (only one plain string literal assigned to the answer variable counts) and
  compared with the question bank's letter;
- the coding exercise is run again in a fresh sandboxed process that executes
  only the student's solution cell, on inputs drawn from a secret seed, and the
  trained parameters are compared with a reference computed here.
"""

from __future__ import annotations

import ast
import json
import secrets
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from gradacc_grader.inside import loop_cases
from gradacc_grader.sandbox import Limits, bwrap_command, give_to_sandbox, limited_command
from gradacc_lessons.quiz.questions import faq_questions

Cells = dict[str, str]  # grade_id -> source of the submitted cell
_HARNESS = Path(__file__).with_name("inside") / "loop_harness.py"
_CASES = 3


@dataclass(frozen=True)
class Check:
    """A trusted check of one grade cell: a function of the submitted cells -> (ok, reason)."""

    grade_id: str
    run: Callable[[Cells, dict[str, list[str]]], tuple[bool, str]]


def submitted_cells(notebook: dict) -> tuple[Cells, dict[str, list[str]]]:
    """Code cell sources by grade id, and all code cells under their grade id (or position).

    >>> nb = {"cells": [{"cell_type": "code", "source": "x = 1",
    ...                  "metadata": {"nbgrader": {"grade_id": "a"}}}]}
    >>> submitted_cells(nb)[0]
    {'a': 'x = 1'}
    """
    cells, sources = {}, {}
    for index, cell in enumerate(notebook.get("cells", [])):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue  # markdown never runs
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        grade_id = ((cell.get("metadata") or {}).get("nbgrader") or {}).get("grade_id")
        key = grade_id if isinstance(grade_id, str) else f"#cell{index}"
        sources.setdefault(key, []).append(source)
        cells.setdefault(key, source)
    return cells, sources


def literal_answer(sources: list[str], name: str) -> str | None:
    """The string the notebook's code cells assign to `name`, if it is one plain literal.

    Exactly one module-level `name = "..."` in all the cells counts; any other way
    to bind the name (a second assignment, a call, `globals()["name"]`, `del`, ...)
    makes the answer unreadable, and then None.

    >>> literal_answer(['answer = "B"  # my choice', "assert answer"], "answer")
    'B'
    >>> literal_answer(['answer = Fancy("B")'], "answer") is None
    True
    """
    values = []
    for source in sources:
        found = _assignments(source, name)
        if found is None:
            return None
        values += found
    if len(values) != 1 or not isinstance(values[0], ast.Constant):
        return None
    return values[0].value if type(values[0].value) is str else None


def _assignments(source: str, name: str) -> list[ast.expr] | None:
    """Values of the cell's module-level `name = value`; None if it binds `name` otherwise."""
    tree = _parse(source)
    if tree is None:
        return None if name in source else []
    plain = [
        node
        for node in tree.body
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id == name
    ]
    allowed = {id(node.targets[0]) for node in plain}
    if any(_rebinds(node, name) and id(node) not in allowed for node in ast.walk(tree)):
        return None
    return [node.value for node in plain]


def _parse(source: str) -> ast.Module | None:
    """The cell as plain Python; None if it is not (IPython magics, syntax errors).

    A magic can run any text (`%time answer = ...`), so a cell that needs IPython's
    translation never counts as setting an answer.
    """
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def _rebinds(node: ast.AST, name: str) -> bool:
    """Does this node bind, delete or declare `name`, or spell it as a string?"""
    if isinstance(node, ast.Name):
        return node.id == name and isinstance(node.ctx, (ast.Store, ast.Del))
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return name in node.names
    if isinstance(node, ast.alias):
        return (node.asname or node.name.split(".")[0]) == name
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name == name
    return isinstance(node, ast.Constant) and node.value == name  # globals()["answer_faq1"]


def multiple_choice(grade_id: str, variable: str, letter: str) -> Check:
    """Check, by reading the code cells, that the notebook sets `variable` to `letter`."""

    def run(cells: Cells, sources: dict[str, list[str]]) -> tuple[bool, str]:
        given = literal_answer([text for texts in sources.values() for text in texts], variable)
        if given is None:
            return False, f"{variable} is not set once to a plain string literal"
        if given.strip().upper() != letter:
            return False, f"{variable} = {given!r} is not the right answer"
        return True, "right answer"

    return Check(grade_id, run)


def loop_exercise(
    answer_cell: str = "loop_answer",
    grade_id: str = "loop_test",
    limits: Limits | None = None,
    sandbox: bool = True,
) -> Check:
    """Re-run the student's training loop in the sandbox and compare with the reference."""

    def run(cells: Cells, sources: dict[str, list[str]]) -> tuple[bool, str]:
        if len(sources.get(answer_cell, [])) != 1 or answer_cell not in cells:
            return False, f"no single code cell {answer_cell}"
        seed = secrets.randbelow(2**31)
        results = run_loop_in_sandbox(cells[answer_cell], seed, limits or Limits(), sandbox=sandbox)
        return compare_loop_results(results, seed)

    return Check(grade_id, run)


def run_loop_in_sandbox(
    source: str, seed: int, limits: Limits, timeout: float = 120, sandbox: bool = True
) -> dict:
    """Run `source` and the harness in a fresh sandbox; return what it wrote (or an error).

    sandbox=False (--unsafe-no-sandbox) keeps the resource limits and the fresh process.
    """
    with tempfile.TemporaryDirectory(prefix="gradacc-loop-") as tmp:
        scratch = Path(tmp)
        (scratch / "student.py").write_text(source, encoding="utf-8")
        give_to_sandbox(scratch)
        command = [sys.executable, "-I", str(_HARNESS), str(seed), str(_CASES)]
        try:
            subprocess.run(
                bwrap_command(command, scratch, limits)
                if sandbox
                else limited_command(command, limits),
                cwd=scratch,
                capture_output=True,
                timeout=timeout,
                start_new_session=True,
            )
        except subprocess.TimeoutExpired:
            return {"error": f"the loop did not finish in {timeout:.0f} s"}
        result = scratch / "result.json"
        if not result.is_file() or result.stat().st_size > 10_000_000:
            return {"error": "the harness wrote no result"}
        try:
            return json.loads(result.read_text(encoding="utf-8"))
        except ValueError:
            return {"error": "the harness wrote an unreadable result"}


def reference_parameters(seed: int, index: int) -> dict[str, torch.Tensor]:
    """Parameters after training case `index` with one full batch per window (the reference).

    >>> ref = reference_parameters(0, 0)
    >>> sorted(ref)[:2]
    ['0.bias', '0.weight']
    """
    model, optimizer, loss_fn, batches, steps = loop_cases.build_case(seed, index)
    for start in range(0, len(batches), steps):
        window = batches[start : start + steps]
        inputs = torch.cat([x for x, _ in window])
        targets = torch.cat([y for _, y in window])
        optimizer.zero_grad(set_to_none=True)
        loss_fn(model(inputs), targets).backward()  # the window as one batch
        optimizer.step()
    return {name: p.detach().clone() for name, p in model.named_parameters()}


def compare_loop_results(results: dict, seed: int) -> tuple[bool, str]:
    """Do the student's trained parameters match the reference in every case?"""
    if not isinstance(results, dict) or "error" in results:
        error = results.get("error", "?") if isinstance(results, dict) else "?"
        return False, f"the loop did not run: {str(error).strip().splitlines()[-1:]}"
    for index in range(_CASES):
        reference = reference_parameters(seed, index)
        case = results.get(str(index))
        got = case.get("parameters") if isinstance(case, dict) else None
        if not isinstance(got, dict) or set(got) != set(reference):
            return False, f"case {index}: no parameters ({str(case)[:200]})"
        for name, expected in reference.items():
            try:
                value = torch.tensor(got[name], dtype=torch.float64)
            except (TypeError, ValueError, RuntimeError):
                return False, f"case {index}: {name} is not a tensor"
            # float64 throughout: a right loop agrees to ~1e-15, a wrong one is off by > 1e-3.
            scale = float(expected.abs().max())
            if value.shape != expected.shape or not bool(
                (value - expected).abs().max() <= 1e-9 * max(scale, 1.0)
            ):
                return False, f"case {index} ({loop_cases.case_shapes(seed)[index]}): {name} wrong"
        if case.get("max_forward") != loop_cases.MICRO_BATCH:
            return False, f"case {index}: the model did not see one micro-batch at a time"
    return True, "matches the reference"


def checks_for(assignment: str, limits: Limits | None = None, sandbox: bool = True) -> list[Check]:
    """The trusted checks of an assignment; empty for an assignment this module does not know.

    >>> [c.grade_id for c in checks_for("gradacc_faq")]
    ['faq1_test', 'faq2_test', 'faq3_test', 'faq4_test', 'faq5_test', 'loop_test']
    """
    if assignment != "gradacc_faq":
        return []
    checks = [
        multiple_choice(f"faq{q.faq}_test", f"answer_faq{q.faq}", q.letter) for q in faq_questions()
    ]
    return [*checks, loop_exercise(limits=limits, sandbox=sandbox)]
