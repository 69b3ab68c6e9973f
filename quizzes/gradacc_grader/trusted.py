"""The grader's own re-check of autograded answers, where student code cannot reach it.

Hidden tests run in the student's kernel, next to the student's code, which can patch anything
there (torch, builtins, IPython's input transformers). So after nbgrader, the grader checks
again from outside, against the answer key that gradacc-build wrote (`keys/<assignment>.json`):

- a multiple-choice answer is read from the notebook's code cells with `ast` (only one plain
  string literal assigned to the answer variable counts) and compared with the key's letter;
- a coding exercise is run again in a fresh sandboxed process that executes only the student's
  answer cell, on new cases drawn from a fresh seed (gradacc_grader.sandbox.run_exercise); the
  exercise's module (inside/) computes the references here and scoring grades case by case,
  with the same share of the points per case as the hidden test.
"""

from __future__ import annotations

import ast
import importlib
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gradacc_grader.inside import scoring

if TYPE_CHECKING:
    from gradacc_grader.sandbox import Sandbox

Cells = dict[str, str]  # grade_id -> source of the submitted cell


@dataclass(frozen=True)
class Check:
    """A trusted check of one grade cell: a function of the submitted cells -> (points, why)."""

    grade_id: str
    run: Callable[[Cells, dict[str, list[str]]], tuple[float, str]]


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


def multiple_choice(grade_id: str, variable: str, letter: str, points: float = 1.0) -> Check:
    """Check, by reading the code cells, that the notebook sets `variable` to `letter`.

    >>> check = multiple_choice("q_test", "answer_q", "B")
    >>> check.run({}, {"q_answer": ['answer_q = "B"']})
    (1.0, 'right answer')
    >>> check.run({}, {"q_answer": ['answer_q = "b" if True else "A"']})[0]
    0.0
    """

    def run(cells: Cells, sources: dict[str, list[str]]) -> tuple[float, str]:
        given = literal_answer([text for texts in sources.values() for text in texts], variable)
        if given is None:
            return 0.0, f"{variable} is not set once to a plain string literal"
        if given.strip().upper() != letter:
            return 0.0, f"{variable} = {given!r} is not the right answer"
        return float(points), "right answer"

    return Check(grade_id, run)


def exercise(
    grade_id: str, answer_cell: str, module: str, points: float, sandbox: Sandbox
) -> Check:
    """Re-run the student's function on fresh cases in the sandbox; score it case by case."""
    cases = vars(importlib.import_module(f"gradacc_grader.inside.{module}"))

    def run(cells: Cells, sources: dict[str, list[str]]) -> tuple[float, str]:
        from gradacc_grader.sandbox import run_exercise

        if len(sources.get(answer_cell, [])) != 1 or answer_cell not in cells:
            return 0.0, f"no single code cell {answer_cell}"
        seed = secrets.randbelow(2**31)  # cases the student's kernel never saw
        outcomes = run_exercise(cells[answer_cell], module, seed, sandbox)
        if "error" in outcomes:
            return 0.0, f"the cell did not run: {str(outcomes['error']).strip()[-200:]}"
        references = {name: cases["expected"](case) for name, case in cases["cases"](seed)}
        found = scoring.verdicts(cases, outcomes, references)
        wrong = "; ".join(f"{name}: {why}" for name, why in found.items() if why)
        return scoring.points_for(found, points), wrong or "every case right"

    return Check(grade_id, run)


def read_key(course: Path, assignment: str) -> dict | None:
    """The answer key gradacc-build wrote for `assignment`, or None when it has none.

    >>> read_key(Path("/nonexistent"), "gradacc_faq") is None
    True
    """
    path = Path(course) / "keys" / f"{assignment}.json"
    if path.is_symlink() or not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def checks_for(assignment: str, course: Path, sandbox: Sandbox) -> list[Check]:
    """The trusted checks of an assignment, from the course's answer key (none without one).

    >>> checks_for("gradacc_faq", Path("/nonexistent"), sandbox=None)
    []
    """
    checks = []
    for cell in (read_key(course, assignment) or {}).get("cells", []):
        grade_id, points = cell["grade_id"], cell["points"]
        if cell["kind"] == "choice":
            checks.append(multiple_choice(grade_id, cell["variable"], cell["letter"], points))
        elif cell["kind"] == "exercise":
            answer_cell, module = cell["answer_cell"], cell["module"]
            checks.append(exercise(grade_id, answer_cell, module, points, sandbox))
    return checks
