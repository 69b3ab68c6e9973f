"""Claims an audit found wrong (issue 38) stay corrected: the wrong sentence is gone, the right
one is there, with its source or its mark (the number itself is checked against the lesson's
run by test_prose_numbers.py)."""

from __future__ import annotations

import json
import re

import pytest

from .conftest import NOTEBOOKS, ROOT

SOURCES = (ROOT / "docs" / "sources.md").read_text(encoding="utf-8")


def prose(lesson: int) -> str:
    """A lesson's English markdown, the marks left in, lines joined (a sentence may wrap)."""
    (path,) = NOTEBOOKS.glob(f"{lesson:02d}_*.ipynb")
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    text = "\n".join(
        "".join(c["source"])
        for c in cells
        if c["cell_type"] == "markdown" and 'lang="yo"' not in "".join(c["source"])
    )
    return re.sub(r"\s+", " ", text)


def rows() -> dict[str, str]:
    return {line.split("|")[1].strip(): line for line in SOURCES.splitlines() if line[:2] == "| "}


# (finding, lesson, text that must be gone, texts that must be there)
FINDINGS = [
    (1, 4, "such a GPU holds 80 GiB", ["81,559 MiB (79.6 GiB)", "minus a reserve"]),
    (2, 4, "a micro-batch of a few sequences", ["1<!--= str(per_micro_batch) -->", "no_sync()"]),
    (3, 6, "keeps it to float32's order", ["bfloat16, Kahan']:.2e}", "float32 weights']:.2e}"]),
    (4, 5, "can trigger its own compilation until", ["recompile_limit", "str(static_graphs)"]),
    (5, 2, "within ±20 % of the mean", ["above and", "below their mean"]),
    (6, 3, "reproduces N GPUs with plain BatchNorm exactly", ["not their running statistics"]),
    (8, 4, "If the batch fits in memory, do not accumulate", ["measure before you do"]),
    (
        9,
        7,
        "not epochs: a short last window is not stepped",
        ["Under Accelerate (and so the Trainer)"],
    ),
    (10, 9, "which measures with `torch.cuda.max_memory_allocated`.", ["max_memory_reserved"]),
    (10, 4, None, ["max_memory_reserved", "mem_get_info"]),
    (11, 9, "weights, gradients and Adam's state only", ["Adam's float32 moments alone"]),
    (12, 2, "until clipping, weight decay or a second", ["AdamW's decoupled weight decay"]),
    (13, 7, None, ["L2 penalty computed from `engine.module.parameters()`", "refuses"]),
    (14, 4, "of about 1 to 2 for convolutional networks", ["for this one small CNN"]),
    (15, 9, "gives the peak, byte for byte, without", ["workspaces it does not see"]),
    (16, 4, None, ["adamw_torch_fused"]),
    (19, 2, "A 7.7 % error", ["buggy_error"]),
    ("BatchNorm rule", 3, None, ["Wu and He", "#lesson-3"]),
    ("GPipe bubble", 6, None, ["GPipe's paper", "#lesson-6"]),
]


@pytest.mark.parametrize(("finding", "lesson", "wrong", "right"), FINDINGS)
def test_the_finding_stays_fixed(finding, lesson, wrong, right):
    text = prose(lesson)
    assert wrong is None or wrong not in text, (
        f"finding {finding}: lesson {lesson} says again {wrong!r}"
    )
    for part in right:
        assert part in text, f"finding {finding}: lesson {lesson} lost {part!r}"


def test_finding_7_the_peak_levels_off_above_the_floor():
    from gradacc_lessons.quiz.questions import questions_for

    (question,) = [q for q in questions_for(lesson=4) if q.id == "l4_floor"]
    assert "levels off at them" not in question.explanation
    assert "temporaries" in question.explanation
    assert "1.4<!--=" in prose(4)  # the lesson's own multiple of the floor, marked


def test_the_sources_back_the_corrected_claims():
    cited = rows()
    for claim in (
        "gpu-memory-nvidia-smi",
        "trainer-fused-adamw",
        "cuda-max-reserved",
        "cuda-mem-get-info",
        "ddp-forward-sync-buffers",
        "ddp-rank-0-buffers",
        "wu-he-batch-size",
        "gpipe-bubble",
        "accelerate-ds-boundary",
        "ds-output-hooks",
        "ds-coalesce-refuses-wrappers",
        "accelerate-estimate-max",
    ):
        assert claim in cited, f"docs/sources.md lost the row {claim}"
    # finding 17: Lightning blocks the sync only under DDP, not under its FSDP strategies
    assert "ModelParallelStrategy" in cited["lightning-blocks-sync"]
    assert (
        "only when the model is wrapped in `DistributedDataParallel`"
        in (cited["lightning-blocks-sync"])
    )
    # finding 1: no row says an 80 GB card holds 80 GiB
    assert "holds 80 GiB" not in SOURCES
