"""A number in the prose comes from the computation (tools/prose_numbers.py).

Every lesson's markdown, and docs/measurements.md, writes each computed figure followed by the
expression that gives it. The slow test executes every lesson once (the session's shared runs,
tests/lessons.py), evaluates every expression in its kernel, and fails where the prose and the
value differ: change a computation and the sentence that quotes it fails until it is rewritten.
The fast tests check that the marks are well formed, and that every other figure of a markdown
cell that reads a computation (one that follows a code cell) is listed below with its reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tools.prose_numbers import (
    Mark,
    lesson_number,
    markdown_cells,
    mismatch,
    notebook_marks,
    page_marks,
    unmarked_numbers,
)

from .conftest import NOTEBOOKS, ROOT
from .lessons import register

LESSONS = sorted(NOTEBOOKS.glob("0*.ipynb"))
PAGES = [ROOT / "docs" / "measurements.md"]
MARKS = [mark for path in LESSONS for mark in notebook_marks(path)] + [
    mark for path in PAGES for mark in page_marks(path)
]
BY_LESSON = {path.name: [m for m in MARKS if m.lesson == lesson_number(path)] for path in LESSONS}
for _name, _marks in BY_LESSON.items():
    register(_name, [m.expression for m in _marks])

# Figures of markdown that reads a computation which are not computed there, and why.
NOT_COMPUTED = {
    2: {
        "60 %": "the spread the next cell is given (spread=0.6)",
        "4.46": "a Transformers version",
        "0.5": "the slider's starting spread, an input",
    },
    4: {
        "1.07": "2³⁰ bytes in units of 10⁹, arithmetic",
        "79.6": "nvidia-smi's figure, cited (docs/sources.md, gpu-memory-nvidia-smi)",
        "22.5": "nvidia-smi's figure, cited (docs/sources.md, gpu-memory-nvidia-smi)",
        "39.5": "CUDA's figure for an A100 40GB, cited (docs/sources.md, gpu-memory-binary)",
        "2.8": "a torch version",
    },
    6: {
        "1.0": "the number whose gap eps is, in torch.finfo's definition",
        "0.008": "2⁻⁷, the gap between bfloat16 numbers near 1: arithmetic",
        "1.5": "the limit of 3N/(2N+1), arithmetic",
        "2.3": "a section of GPipe's paper",
    },
    7: {
        "1.0": "a learning rate the cell is given",
        "0.5": "a learning rate the cell is given",
        "1.15": "an Accelerate version",
        "0.3": "the clipping threshold the cell is given (max_grad_norm=0.3)",
    },
    9: {
        "2.13": "a torch version",
        "4 ×": "Accelerate's rule in float32, cited (docs/sources.md, accelerate-estimate-max)",
        "2 ×": "Accelerate's rule in 16-bit, cited (docs/sources.md, accelerate-estimate-max)",
    },
}


def test_every_lesson_and_the_measurements_page_have_marks():
    lessons_with_marks = {m.lesson for m in MARKS if "ipynb" in m.where}
    assert {2, 3, 4, 5, 6} <= lessons_with_marks
    assert any(m.where == "measurements.md" for m in MARKS)


@pytest.mark.parametrize("mark", MARKS, ids=lambda m: f"{m.where}: {m.expression}")
def test_each_mark_is_an_expression_after_a_figure(mark: Mark):
    ast.parse(mark.expression, mode="eval")  # a SyntaxError names the expression
    assert mark.before[-1:].strip(), f"{mark.where}: a mark must follow its figure directly"
    assert mark.before.rstrip()[-1:].isdigit() or mark.before.rstrip()[-1] in "%×B", (
        f"{mark.where}: {mark.before[-20:]!r} does not end with a figure"
    )


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_every_figure_next_to_a_computation_is_marked_or_explained(path: Path):
    explained = NOT_COMPUTED.get(lesson_number(path), {})
    for index, text, follows_code in markdown_cells(path):
        if not follows_code or 'lang="yo"' in text:  # the Yorùbá summaries repeat no figure
            continue
        for figure in unmarked_numbers(text):
            assert figure in explained, (
                f"{path.name}, cell {index}: {figure!r} is next to a computation: mark it with "
                "the expression that gives it (<!--= ... -->), or list it in NOT_COMPUTED"
            )


def test_the_checks_catch_a_figure_that_disagrees_and_one_left_unmarked():
    (mark,) = notebook_marks_of("was off by 8.3 %<!--= f'{x:.1%}' -->")
    assert mismatch(mark, "8.3 %") is None
    assert "8.4 %" in mismatch(mark, "8.4 %")
    assert "not a string" in mismatch(mark, 0.083)
    assert unmarked_numbers("off by 8.3 % and 27.0 GiB<!--= g --> in `x = 2.5`") == ["8.3 %"]


def notebook_marks_of(text: str) -> list[Mark]:
    from tools.prose_numbers import marks_in

    return marks_in(text, "a cell", 2)


QUOTED = [path for path in LESSONS if BY_LESSON[path.name]]


@pytest.mark.slow
@pytest.mark.parametrize("path", QUOTED, ids=lambda p: p.name)
def test_the_prose_says_what_the_lesson_computes(lesson_runs, path: Path):
    marks = BY_LESSON[path.name]
    run = lesson_runs.get(path.name, [m.expression for m in marks])
    problems = [p for m in marks if (p := mismatch(m, run.values[m.expression]))]
    assert problems == []
