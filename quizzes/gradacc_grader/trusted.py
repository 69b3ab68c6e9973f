"""The grader's scoring, outside the sandbox: the only scores that reach the gradebook.

Nothing secret goes into the student's kernel or harness: no letter, no explanation, no seed,
no reference. They only report what the student's code produced, as data; this module, in
the grader's own process, compares that with the answer key that gradacc-build wrote
(`keys/<assignment>.json`, which no sandbox sees) and scores:

- a multiple-choice answer: the value the notebook gave `answer_<q>` when its test cell ran,
  as that *report* cell printed it (`gradacc-report answer_<q> 'B'`, gradacc_grader.notebook).
  Exactly one such line in the test cell's own output counts: none or several score 0. The
  line is read with `ast.literal_eval` and must be a string; it is the student's choice,
  however the notebook made it (a helper, another variable, a copied cell);
- a coding exercise: the notebook's code cells up to the exercise's test cell run again, in a
  fresh sandboxed harness (gradacc_grader.inside.loop_harness), then the function they define
  on cases drawn from a fresh seed; the harness sends back the outcomes; the references are
  computed here (gradacc_grader.exercises) and scoring grades case by case.

Code in the sandbox can print or send anything; what it cannot do is learn what would score,
so anything it makes up scores what a guess scores.
"""

from __future__ import annotations

import ast
import datetime
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gradacc_grader import feedback_text, scoring
from gradacc_grader.notebook import REPORT

if TYPE_CHECKING:
    from gradacc_grader.sandbox import Sandbox

MESSAGES = feedback_text.MESSAGES  # every language's sentences: one catalogue
TIMED_OUT = (
    "CellTimeoutError"  # the error nbgrader writes into a cell the kernel ran out of time on
)


@dataclass(frozen=True)
class Scored:
    """The grader's score of one grade cell: points, why (the instructor's table), message
    (what the test cell shows the student in the feedback)."""

    points: float
    why: str
    message: str


@dataclass(frozen=True)
class Check:
    """How the grader scores one grade cell: a function of the autograded notebook's cells."""

    grade_id: str
    points: float
    run: Callable[[list[dict]], Scored]


def _meta(cell: dict) -> dict:
    meta = (cell.get("metadata") or {}).get("nbgrader") or {}
    return meta if isinstance(meta, dict) else {}


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def notebook_cells(notebook: dict) -> list[dict]:
    """The notebook's cells that are dicts (a corrupt notebook may hold anything).

    >>> notebook_cells({"cells": [{"cell_type": "code"}, 3]})
    [{'cell_type': 'code'}]
    """
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    return [cell for cell in cells or [] if isinstance(cell, dict)]


def grade_cell_index(cells: list[dict], grade_id: str) -> int | None:
    """Where the grade cell `grade_id` is (nbgrader's DeduplicateIds left one of each)."""
    for index, cell in enumerate(cells):
        if cell.get("cell_type") == "code" and _meta(cell).get("grade_id") == grade_id:
            return index
    return None


def reported(cells: list[dict], grade_id: str, variable: str) -> list[str]:
    """The values the test cell `grade_id` reported for `variable`, one per report line.

    >>> cell = {"cell_type": "code", "metadata": {"nbgrader": {"grade_id": "q_test"}},
    ...         "outputs": [{"output_type": "stream", "name": "stdout",
    ...                      "text": "hello\\ngradacc-report answer_q 'B'\\n"}]}
    >>> reported([cell], "q_test", "answer_q")
    ["'B'"]
    >>> halves = ("gradacc-report an", "swer_q 'B'")  # one line in two messages
    >>> cell["outputs"] = [{**cell["outputs"][0], "text": half} for half in halves]
    >>> reported([cell], "q_test", "answer_q")
    ["'B'"]
    """
    index = grade_cell_index(cells, grade_id)
    if index is None:
        return []
    prefix = f"{REPORT} {variable} "
    streams: dict[str, str] = {}  # a busy kernel may send one line in several messages
    for output in cells[index].get("outputs") or []:
        if isinstance(output, dict) and output.get("output_type") == "stream":
            name = str(output.get("name"))
            streams[name] = streams.get(name, "") + _text(output.get("text", ""))
    values = []
    for text in streams.values():
        for line in text.splitlines():
            if REPORT in line:  # a line that only mentions the report counts too
                values.append(line[len(prefix) :] if line.startswith(prefix) else "")
    return values


def chosen_letter(value: str) -> str | None:
    """The string a report line holds (a Python literal), or None when it holds none.

    >>> chosen_letter("' b '"), chosen_letter("_Yes()"), chosen_letter("3")
    (' b ', None, None)
    """
    try:
        found = ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return found if type(found) is str else None


def multiple_choice(
    grade_id: str,
    variable: str,
    letter: str,
    whys: dict[str, str],
    points: float = 1.0,
    explain: bool = False,
    lang: str = "en",
    due: datetime.datetime | None = None,
) -> Check:
    """Score the value the test cell reported for `variable` against the right `letter`.

    A wrong choice's message says what that choice gets wrong when `explain` (never which
    choice is right); otherwise when it will: once the due date `due` (UTC) has passed, or
    once the assignment has one.

    >>> whys = {"A": "adds", "B": "replaces", "C": "averages", "D": "clears"}
    >>> check = multiple_choice("q_test", "answer_q", "A", whys)
    >>> out = [{"output_type": "stream", "name": "stdout", "text": "gradacc-report answer_q 'a'"}]
    >>> cell = {"cell_type": "code", "metadata": {"nbgrader": {"grade_id": "q_test"}}}
    >>> check.run([{**cell, "outputs": out}])
    Scored(points=1.0, why='right answer', message='Right (1 / 1): adds')
    >>> check.run([{**cell, "outputs": out * 2}]).points
    0.0
    """
    words = MESSAGES[lang]

    def run(cells: list[dict]) -> Scored:
        values = reported(cells, grade_id, variable)
        if len(values) > 1:
            text = words["several"].format(variable=variable, count=len(values), max=points)
            return Scored(0.0, f"{variable} reported {len(values)} times", text)
        given = chosen_letter(values[0]) if values else None
        if given is None:
            text = words["unset"].format(variable=variable, max=points)
            return Scored(0.0, f"{variable} is not set to a string", text)
        shown = repr(given[:20])
        choice = given.strip().upper()
        if choice not in whys:
            text = words["unknown"].format(variable=variable, value=shown, max=points)
            return Scored(0.0, f"{variable} = {shown} is not a letter", text)
        if choice == letter:
            text = words["right"].format(points=points, max=points, why=whys[letter])
            return Scored(float(points), "right answer", text)
        text = words["wrong"].format(variable=variable, value=shown, max=points)
        later = words["why"].format(why=whys[choice]) if explain else _when_explained(words, due)
        return Scored(0.0, f"{variable} = {shown} is not the right answer", f"{text} {later}")

    return Check(grade_id, float(points), run)


def _when_explained(words: dict[str, str], due: datetime.datetime | None) -> str:
    """The sentence a wrong choice's message ends with when it is not explained yet."""
    if due is None:
        return words["undated"]
    return words["later"].format(due=due.strftime("%Y-%m-%d %H:%M"))


def cells_before(cells: list[dict], grade_id: str) -> list[str]:
    """The code cells that ran before the test cell `grade_id`, as the harness runs them again.

    The student's cells (answers, helpers, extra cells, copies) and the setup cell; not the
    test cells nor the locked quick checks, which only print; nor a cell that ran out of time
    in the kernel (nbgrader's CellTimeoutError): a hanging cell costs the class the kernel's
    timeout once, never again in the re-check (where it would hang up to its CPU limit).

    >>> def cell(source, **meta):
    ...     return {"cell_type": "code", "source": source, "metadata": {"nbgrader": meta}}
    >>> cells = [cell("import torch", grade_id="setup", locked=True), cell("def f(): pass"),
    ...          cell("f()", grade_id="e_check", locked=True), cell("", grade_id="e_test",
    ...          grade=True, locked=True), cell("x = 1")]
    >>> cells_before(cells, "e_test")
    ['import torch', 'def f(): pass']
    >>> hung = {**cell("while True: pass"), "outputs": [{"output_type": "error",
    ...         "ename": "CellTimeoutError", "evalue": "", "traceback": []}]}
    >>> cells_before([hung, *cells], "e_test")
    ['import torch', 'def f(): pass']
    """
    index = grade_cell_index(cells, grade_id)
    kept = []
    for cell in cells[: index if index is not None else 0]:
        meta = _meta(cell)
        if cell.get("cell_type") != "code" or meta.get("grade"):
            continue
        if meta.get("locked") and meta.get("grade_id") != "setup":
            continue
        if timed_out(cell):
            continue
        kept.append(_text(cell.get("source", "")))
    return kept


def timed_out(cell: dict) -> bool:
    """Whether the kernel gave up on this cell: nbgrader's CellTimeoutError among its outputs.

    A cell that writes such an error itself is only skipped in the re-check: its own loss.
    """
    outputs = cell.get("outputs")
    return isinstance(outputs, list) and any(
        isinstance(o, dict) and o.get("output_type") == "error" and o.get("ename") == TIMED_OUT
        for o in outputs
    )


def exercise(
    grade_id: str, module: str, points: float, sandbox: Sandbox, lang: str = "en"
) -> Check:
    """Run the student's cells, then their function, on fresh cases in the sandbox; score."""
    parts = scoring.exercise(module)

    def run(cells: list[dict]) -> Scored:
        from gradacc_grader.sandbox import run_exercise

        if grade_cell_index(cells, grade_id) is None:
            why = f"no test cell {grade_id}"
            text = _not_run(parts, points, why, lang)
            return Scored(0.0, why, text)
        seed = secrets.randbelow(2**31)  # cases no kernel ever saw
        outcomes = run_exercise(cells_before(cells, grade_id), module, seed, sandbox)
        if "error" in outcomes:
            why = f"the cells did not run: {str(outcomes['error']).strip()[-200:]}"
            text = _not_run(parts, points, why, lang)
            return Scored(0.0, why, text)
        references = {name: parts["expected"](case) for name, case in parts["cases"](seed)}
        found = scoring.verdicts(parts, outcomes, references)
        wrong = "; ".join(f"{name}: {why}" for name, why in found.items() if why)
        text = scoring.report(parts, found, points, lang)
        return Scored(scoring.points_for(found, points), wrong or "every case right", text)

    return Check(grade_id, float(points), run)


def _not_run(parts: dict, points: float, why: str, lang: str) -> str:
    """The message of an exercise that could not be graded, `why` in the student's language."""
    why = feedback_text.reason(why, lang)
    return MESSAGES[lang]["not_run"].format(function=parts["FUNCTION"], max=points, why=why)


def key_language(course: Path, assignment: str) -> str:
    """The language the course's answer key says `assignment` was built in ("en" without one).

    >>> key_language(Path("/nonexistent"), "gradacc_faq")
    'en'
    """
    lang = (read_key(course, assignment) or {}).get("lang", "en")
    return lang if lang in MESSAGES else "en"


def read_key(course: Path, assignment: str) -> dict | None:
    """The answer key gradacc-build wrote for `assignment`, or None when it has none.

    >>> read_key(Path("/nonexistent"), "gradacc_faq") is None
    True
    """
    path = Path(course) / "keys" / f"{assignment}.json"
    if path.is_symlink() or not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def checks_for(
    assignment: str,
    course: Path,
    sandbox: Sandbox,
    explain: bool = False,
    due: datetime.datetime | None = None,
) -> list[Check]:
    """The grader's checks of an assignment, from the course's answer key (none without one).

    `explain`: whether a wrong choice's message says what it gets wrong (the course's
    setting, gradacc_grader.settings: now, or after the deadline); `due`: the assignment's
    due date (UTC), which the message names when it does not explain yet.

    >>> checks_for("gradacc_faq", Path("/nonexistent"), sandbox=None)
    []
    """
    key = read_key(course, assignment) or {}
    lang = key.get("lang") if key.get("lang") in MESSAGES else "en"
    checks = []
    for cell in key.get("cells", []):
        grade_id, points = cell["grade_id"], cell["points"]
        if cell["kind"] == "choice":
            checks.append(
                multiple_choice(
                    grade_id,
                    cell["variable"],
                    cell["letter"],
                    cell["why"],
                    points,
                    explain,
                    lang,
                    due,
                )
            )
        elif cell["kind"] == "exercise":
            checks.append(exercise(grade_id, cell["module"], points, sandbox, lang))
    return checks
