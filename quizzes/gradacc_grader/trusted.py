"""The grader's own re-check of autograded answers, where student code cannot reach it.

Hidden tests run in the student's kernel, next to the student's code, which can
patch anything there (torch, builtins, IPython's input transformers). So after
nbgrader, the grader checks again from outside:

- a multiple-choice answer is read from the notebook's code cells with `ast`
  (only one plain string literal assigned to the answer variable counts) and
  compared with the question bank's letter;
- the coding exercise is run again in a fresh sandboxed process that executes
  only the student's solution cell, on cases drawn from a secret seed
  (gradacc_grader.sandbox.run_exercise), and its outcomes are compared case by case
  with references computed here.
"""

from __future__ import annotations

import ast
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gradacc_grader.inside import scoring, window_loop
from gradacc_grader.sandbox import Sandbox, run_exercise
from gradacc_lessons.quiz.questions import faq_questions

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
    """Check, by reading the code cells, that the notebook sets `variable` to `letter`."""

    def run(cells: Cells, sources: dict[str, list[str]]) -> tuple[float, str]:
        given = literal_answer([text for texts in sources.values() for text in texts], variable)
        if given is None:
            return 0.0, f"{variable} is not set once to a plain string literal"
        if given.strip().upper() != letter:
            return 0.0, f"{variable} = {given!r} is not the right answer"
        return points, "right answer"

    return Check(grade_id, run)


def loop_exercise(
    sandbox: Sandbox,
    answer_cell: str = "loop_answer",
    grade_id: str = "loop_test",
    points: float = 3.0,
) -> Check:
    """Re-run the student's training loop in the sandbox, case by case, against references."""
    exercise = vars(window_loop)

    def run(cells: Cells, sources: dict[str, list[str]]) -> tuple[float, str]:
        if len(sources.get(answer_cell, [])) != 1 or answer_cell not in cells:
            return 0.0, f"no single code cell {answer_cell}"
        seed = secrets.randbelow(2**31)
        outcomes = run_exercise(cells[answer_cell], "window_loop", seed, sandbox)
        if "error" in outcomes:
            return 0.0, f"the loop did not run: {str(outcomes['error']).strip()[-200:]}"
        built = window_loop.cases(seed)
        found = scoring.verdicts(exercise, outcomes, {n: window_loop.expected(c) for n, c in built})
        wrong = [f"{name}: {reason}" for name, reason in found.items() if reason]
        return scoring.points_for(found, points), "; ".join(wrong) or "matches the references"

    return Check(grade_id, run)


def checks_for(assignment: str, course: Path, sandbox: Sandbox) -> list[Check]:
    """The trusted checks of an assignment; empty for an assignment this module does not know.

    >>> [c.grade_id for c in checks_for("gradacc_faq", Path("course"), Sandbox(hidden=()))]
    ['faq1_test', 'faq2_test', 'faq3_test', 'faq4_test', 'faq5_test', 'loop_test']
    """
    if assignment != "gradacc_faq":
        return []
    checks = [
        multiple_choice(f"faq{q.faq}_test", f"answer_faq{q.faq}", q.letter) for q in faq_questions()
    ]
    return [*checks, loop_exercise(sandbox)]
