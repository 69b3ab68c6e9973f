"""The grader's own scores: written into a student's gradebook, and as the test cells' outputs.

nbgrader's auto scores are never kept: its test cells only report values. Here every
autograded cell is scored outside the sandbox (gradacc_grader.trusted) from the answer key,
and its message replaces what the test cell printed.
"""

from __future__ import annotations

import datetime
import json
import os
import stat
from pathlib import Path

from gradacc_grader.results import MAX_NOTEBOOK_BYTES, Outcome
from gradacc_grader.untrusted_output import sanitize_autograded


def sanitize(folder: Path, assignment: str) -> None:
    """Make the student's autograded notebooks data before formgrader or feedback shows them."""
    student = folder / "autograded" / folder.name / assignment
    sanitize_autograded(student, folder / "source" / assignment)


def record(
    folder: Path, assignment: str, student: str, status: str, course=None, sandbox=None
) -> Outcome:
    """Score every autograded cell outside the sandbox and write it into the student's
    gradebook, and each score's message into the test cells; zeros (and why) after a failure.

    nbgrader's own auto scores are never kept: its test cells only report values.
    """
    from nbgrader.api import Gradebook, MissingEntry

    from gradacc_grader.trusted import checks_for, key_language

    outcome = Outcome(student, status)
    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}") as gradebook:
        try:
            submission = gradebook.find_submission(assignment, student)
        except MissingEntry:
            if outcome.ok:
                outcome.status = "failed: nbgrader recorded no submission"
            return outcome
        due = submission.assignment.duedate
        explain = explain_wrong_choices(folder, due)
        checks = checks_for(assignment, course, sandbox, explain, due) if outcome.ok else []
        lang = key_language(course, assignment) if course is not None else "en"
        pending = {}
        for notebook in submission.notebooks:
            # nbgrader's autograded copy holds the cells as they ran: locked and test cells
            # put back from the source, the student's own cells as submitted.
            path = folder / "autograded" / student / assignment / f"{notebook.name}.ipynb"
            pending[path] = _score(notebook, _read_cells(path), checks, outcome, lang)
        # Between the scoring (which reads the report lines) and the grader's messages (kept as
        # written): the student's notebooks become data, test cells' outputs cleared.
        sanitize(folder, assignment)
        for path, messages in pending.items():
            write_messages(path, messages)
        gradebook.db.commit()
        submission = gradebook.find_submission(assignment, student)
        outcome.score, outcome.max_score = submission.score, submission.max_score
        outcome.needs_manual_grade = submission.needs_manual_grade
    return outcome


def explain_wrong_choices(folder: Path, duedate) -> bool:
    """Does a wrong choice's message say what it gets wrong? The course's setting says when:

    `c.GradaccFeedback.explain_wrong_choices = "now"` (self-paced, no resubmission) or
    `"after_deadline"` (the default: only once the assignment's due date has passed).
    """
    if explanations_when(folder) == "now":
        return True
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)  # as nbgrader's
    return duedate is not None and now > duedate


def explanations_when(course: Path) -> str:
    """The course's `GradaccFeedback.explain_wrong_choices`: "now" or "after_deadline"."""
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    when = config.GradaccFeedback.get("explain_wrong_choices", "after_deadline")
    if when not in ("now", "after_deadline"):
        raise ValueError(
            f"GradaccFeedback.explain_wrong_choices = {when!r}: set it to 'now' or "
            "'after_deadline' in nbgrader_config.py"
        )
    return when


def no_due_date_warning(course: Path, assignment: str) -> str | None:
    """What to tell the instructor when wrong choices wait for a due date that is not set."""
    from nbgrader.api import Gradebook, MissingEntry

    if explanations_when(course) == "now":
        return None
    with Gradebook(f"sqlite:///{Path(course) / 'gradebook.db'}") as gradebook:
        try:
            if gradebook.find_assignment(assignment).duedate is not None:
                return None
        except MissingEntry:
            return None
    return (
        f"{assignment} has no due date, so the feedback of a wrong choice says it is wrong, "
        "not why (it waits for a due date): set one with `nbgrader db assignment add "
        f'{assignment} --duedate "2026-12-18 17:00 UTC"` and grade again after it, or set '
        'c.GradaccFeedback.explain_wrong_choices = "now" in nbgrader_config.py'
    )


def _score(notebook, cells: list[dict], checks, outcome: Outcome, lang: str) -> dict[str, str]:
    """Set every autograded code cell's score from the grader's checks; {grade id: message}
    (in the assignment's language, `lang`)."""
    from gradacc_grader.feedback_text import MESSAGES, reason

    messages = {}
    for grade in notebook.grades:
        if grade.cell.cell_type != "code":
            continue
        check = next((c for c in checks if c.grade_id == grade.name), None)
        if not outcome.ok:
            points, why = 0.0, "submission not graded"
            message = MESSAGES[lang]["not_graded"].format(why=reason(outcome.status, lang))
        elif check is None:
            points, why = 0.0, "no answer key for this cell"
            message = MESSAGES[lang]["no_key"]
        else:
            scored = check.run(cells)
            points, why, message = scored.points, scored.why, scored.message
        if points < grade.max_score and outcome.ok:
            outcome.notes.append(f"{grade.name}: {points:g} / {grade.max_score:g} ({why})")
        grade.auto_score, grade.needs_manual_grade = points, False
        messages[grade.name] = message
    return messages


def write_messages(path: Path, messages: dict[str, str]) -> None:
    """Replace each scored test cell's outputs by the grader's own message (plain text)."""
    if not messages or path.is_symlink() or not path.is_file():
        return
    notebook = json.loads(path.read_text(encoding="utf-8"))
    for cell in notebook.get("cells", []):
        grade_id = ((cell.get("metadata") or {}).get("nbgrader") or {}).get("grade_id")
        if cell.get("cell_type") == "code" and grade_id in messages:
            text = messages[grade_id] + "\n"
            cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": text}]
    # nbgrader leaves the autograded copy read-only (0444 less the umask): a grader that is not
    # root cannot open it for writing, so a new file replaces it, with the same mode.
    mode = stat.S_IMODE(path.stat().st_mode)
    temporary = path.with_name(f".{path.name}.scored")
    temporary.unlink(missing_ok=True)
    with open(temporary, "x", encoding="utf-8") as file:
        file.write(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")
    os.chmod(temporary, mode)
    os.replace(temporary, path)


def _read_cells(path: Path) -> list[dict]:
    from gradacc_grader.trusted import notebook_cells

    try:
        if path.is_symlink() or path.stat().st_size > MAX_NOTEBOOK_BYTES:
            return []
        return notebook_cells(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, AttributeError, TypeError):
        return []  # a corrupt notebook: every check scores 0
