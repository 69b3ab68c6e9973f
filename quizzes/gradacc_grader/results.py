"""One student's grading, kept apart from the course until it is merged in.

Each student is graded in a folder of their own, `<results>/<student>/`, laid out as
an nbgrader course: the course's config, its `source/` (a link), a copy of its
gradebook, and the student's submission, copied with `copy_regular_files`. nbgrader
autogrades there; the result is that folder's `gradebook.db`, `autograded/` and
`outcome.json`. `merge` then writes the student's autograded scores into the
course's gradebook and their `autograded/` folder into the course.

So students can be graded at the same time, on one machine (`--jobs`) or on many
(`--results` on each, then `--merge`), without two processes writing one gradebook.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import warnings
from contextlib import closing
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gradacc_grader.submissions import copy_regular_files
from gradacc_grader.untrusted_output import is_student_id

MAX_NOTEBOOK_BYTES = 20_000_000  # an autograded copy read back to compare hand-graded cells


@dataclass
class Outcome:
    """What happened to one student's submission.

    >>> Outcome("ada", "graded").ok
    True
    """

    student: str
    status: str  # "graded", or why it failed or was refused
    score: float = 0.0
    max_score: float = 0.0
    needs_manual_grade: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "graded"


def prepare(course: Path, assignment: str, student: str, folder: Path) -> str | None:
    """Make `folder` a course of one: config, source, gradebook copy, the submission.

    Returns why the submission is refused (None if it is not); the folder is made
    either way, so that the refusal is recorded like any outcome. `folder` is emptied
    first, so it must be the student's own: named after them.
    """
    if not student.strip() or folder.name != student:
        raise ValueError(
            f"student={student!r} with folder={str(folder)!r}: the folder must be named after "
            "the student, whose id is a plain folder name (not empty, no '/')"
        )
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    if not is_student_id(student):  # formgrader puts a student's id into its pages unescaped
        return "refused: the student id is not a plain name (letters, digits, . _ - @)"
    shutil.copy(course / "nbgrader_config.py", folder)
    (folder / "source").symlink_to(course / "source")
    original = closing(sqlite3.connect(course / "gradebook.db"))
    with original as source, closing(sqlite3.connect(folder / "gradebook.db")) as copy:
        source.backup(copy)  # a consistent copy even while another process reads it
    submitted = course / "submitted" / student / assignment
    problems = copy_regular_files(submitted, folder / "submitted" / student / assignment)
    return f"refused: {'; '.join(problems)}" if problems else None


def save(folder: Path, outcome: Outcome) -> None:
    """Write the outcome beside the student's gradebook, for `merge`."""
    (folder / "outcome.json").write_text(json.dumps(asdict(outcome)), encoding="utf-8")


def load(folder: Path) -> Outcome:
    """The outcome `save` wrote in a student's results folder."""
    return Outcome(**json.loads((folder / "outcome.json").read_text(encoding="utf-8")))


def merge(course: Path, assignment: str, folder: Path) -> Outcome:
    """Write a student's autograded scores and autograded/ folder into the course.

    Only what `nbgrader autograde` writes moves: the submission's timestamp, each
    grade's auto_score and needs_manual_grade, each comment's auto_comment, the late
    penalty. Hand-given scores and comments in the course's gradebook stay as they are,
    and so does their "graded" mark when the submission is the same (see `_hand_graded`).
    """
    from nbgrader.api import Gradebook, MissingEntry
    from sqlalchemy.exc import SAWarning

    outcome = load(folder)
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{folder / 'gradebook.db'}") as result:
        # nbgrader's own session use warns on every new submission, as autograde does
        warnings.simplefilter("ignore", SAWarning)
        try:
            submission = result.find_submission(assignment, outcome.student)
        except MissingEntry:
            return outcome  # refused before nbgrader saw it: nothing to merge
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
            before = course / "autograded" / outcome.student / assignment
            after = folder / "autograded" / outcome.student / assignment
            zeroed = _copy_submission(
                submission, gradebook, assignment, outcome.student, before, after
            )
            total = gradebook.find_submission(assignment, outcome.student)
            outcome.score, outcome.max_score = total.score, total.max_score
            outcome.needs_manual_grade = total.needs_manual_grade
    if zeroed and outcome.ok:  # nbgrader said it graded, yet left a test unscored
        outcome.notes.append(f"{', '.join(zeroed)}: not scored by nbgrader -> 0")
    _replace(
        folder / "autograded" / outcome.student / assignment,
        course / "autograded" / outcome.student / assignment,
    )
    return outcome


def _copy_submission(
    submission, gradebook, assignment: str, student: str, before: Path, after: Path
) -> list[str]:
    """Copy what autograde writes; the autograded tests it left unscored, as 0 (named)."""
    gradebook.update_or_create_student(student)
    gradebook.update_or_create_submission(assignment, student, timestamp=submission.timestamp)
    zeroed = []
    for notebook in submission.notebooks:
        target = gradebook.find_submission_notebook(notebook.name, assignment, student)
        target.late_submission_penalty = notebook.late_submission_penalty
        # the same submission graded again: every cell reads as it did when graded by hand
        graded = _cells(before / f"{notebook.name}.ipynb")
        unchanged = graded is not None and graded == _cells(after / f"{notebook.name}.ipynb")
        for grade in notebook.grades:
            into = gradebook.find_grade(grade.name, notebook.name, assignment, student)
            into.auto_score = grade.auto_score
            if not (unchanged and _hand_graded(into)):
                into.needs_manual_grade = grade.needs_manual_grade
            if grade.auto_score is None and _is_test(gradebook, grade, notebook, assignment):
                # grading failed before nbgrader scored it: 0, never None (a None test
                # stays "needs manual grade" for ever, and certificates wait on it)
                into.auto_score, into.needs_manual_grade = 0.0, False
                zeroed.append(grade.name)
        for comment in notebook.comments:
            into = gradebook.find_comment(comment.name, notebook.name, assignment, student)
            into.auto_comment = comment.auto_comment
    gradebook.db.commit()
    return zeroed


def _hand_graded(grade) -> bool:
    """Whether the instructor scored this cell by hand and confirmed it (as formgrader does).

    nbgrader's autograde marks every cell that has a hand-given score as needing a hand
    grade again (nbgrader 0.9.6, preprocessors/saveautogrades.py, `_add_score`), so each
    re-grade undid the instructor's work; `merge` keeps the confirmation when the
    submission's cells are the same as when it was graded.
    """
    return grade.manual_score is not None and not grade.needs_manual_grade


def _cells(path: Path) -> list[str] | None:
    """The source of every cell of an autograded notebook, in order; None if unreadable."""
    try:
        if path.is_symlink() or path.stat().st_size > MAX_NOTEBOOK_BYTES:
            return None
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        sources = [cell.get("source", "") for cell in cells]
        return ["".join(s) if isinstance(s, list) else str(s) for s in sources]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _is_test(gradebook, grade, notebook, assignment: str) -> bool:
    """Whether a grade cell is an autograded test (not an answer graded by hand)."""
    from nbgrader.api import MissingEntry

    try:
        gradebook.find_solution_cell(grade.name, notebook.name, assignment)
    except MissingEntry:
        return True
    return False


def _replace(source: Path, dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    if source.is_dir():
        shutil.copytree(source, dest, symlinks=True)
