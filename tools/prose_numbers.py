"""Numbers in the prose that a computation gives: each is followed by the expression that gives it.

A lesson's markdown writes a computed figure, then an HTML comment naming the expression, read
in the lesson's kernel after its last cell, whose value (a string) the figure must be:

    was off by 8.3 %<!--= f"{100 * summary[0].broken:.1f} %" -->

Jupyter and the site hide the comment; `tests/test_prose_numbers.py` executes every lesson
once, evaluates every expression, and fails where the text before a comment does not end with
the expression's value. A page outside the lessons (docs/measurements.md) names the lesson too:

    | 0.22<!--= lesson 3: f"{errors.batchnorm_mlp[1]:.2f}" --> |

`unmarked_numbers` finds the figures of a markdown cell that follows a code cell (prose that
reads a computation) and carry no such comment, so a test can list each one with its reason.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

MARK = re.compile(r"<!--=\s*(?:lesson (\d+):\s*)?(.+?)\s*-->", re.DOTALL)
# a decimal, a percentage or a multiple (8.3, 12.5 %, 1.4×), not inside a word or a version
FIGURE = re.compile(
    r"(?<![\w.,$^{/-])(?:\d[\d,]*\.\d+(?:e-?\d+)?\s?%?|\d+\s?%|\d+(?:\.\d+)?\s?×)(?![\w.])"
)
UNIT_THEN_MARK = re.compile(r"(?: ?[A-Za-z]+)?<!--=")  # 8.3 %<!--=, 27.0 GiB<!--=
HIDDEN = re.compile(r"`[^`]*`|\$[^$]*\$|\]\([^)]*\)|<!--.*?-->", re.DOTALL)


@dataclass(frozen=True)
class Mark:
    """One figure of the prose and the expression that must give it."""

    where: str  # "notebooks/02_scaling_the_loss.ipynb, cell 16" or "docs/measurements.md"
    lesson: int  # the lesson whose kernel evaluates the expression
    before: str  # the text just before the comment
    expression: str


def lesson_number(path: Path) -> int:
    """The lesson number of a notebook file named like 02_scaling_the_loss.ipynb."""
    return int(path.name.split("_", 1)[0])


def markdown_cells(path: Path) -> list[tuple[int, str, bool]]:
    """(index, text, follows a code cell) of each markdown cell of a notebook."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [
        (i, "".join(cell["source"]), i > 0 and cells[i - 1]["cell_type"] == "code")
        for i, cell in enumerate(cells)
        if cell["cell_type"] == "markdown"
    ]


def marks_in(text: str, where: str, lesson: int | None) -> list[Mark]:
    """The marks of one text; `lesson` is the lesson of a notebook, None for a page of docs/."""
    found = []
    for match in MARK.finditer(text):
        named = int(match.group(1)) if match.group(1) else None
        if lesson is None and named is None:
            raise ValueError(f"{where}: a mark outside a lesson must name one: <!--= lesson N: …")
        before = text[: match.start()]
        found.append(Mark(where, named or lesson, before, match.group(2)))
    return found


def notebook_marks(path: Path) -> list[Mark]:
    """Every mark of a lesson's markdown cells."""
    number = lesson_number(path)
    return [
        mark
        for index, text, _ in markdown_cells(path)
        for mark in marks_in(text, f"{path.name}, cell {index}", number)
    ]


def page_marks(path: Path) -> list[Mark]:
    """Every mark of a markdown page outside the lessons (each names its lesson)."""
    return marks_in(path.read_text(encoding="utf-8"), path.name, None)


def mismatch(mark: Mark, value: object) -> str | None:
    """What is wrong with a mark whose expression gave `value`, or None when the text agrees."""
    if not isinstance(value, str):
        return f"{mark.where}: {mark.expression} gave {value!r}, not a string"
    if not mark.before.endswith(value):
        said = mark.before[-max(len(value), 12) :].split("\n")[-1]
        return f"{mark.where}: the prose says {said!r}, the computation {value!r}"
    return None


def unmarked_numbers(text: str) -> list[str]:
    """The figures of a markdown text that no mark follows (code, math and links left out)."""
    masked = HIDDEN.sub(lambda m: " " * len(m.group()), text)  # positions kept
    return [
        match.group().strip()
        for match in FIGURE.finditer(masked)
        if not UNIT_THEN_MARK.match(text, match.start() + len(match.group().rstrip()))
    ]
