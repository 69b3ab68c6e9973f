"""`nbgrader export` for gradacc: every question's score, and totals a learning platform imports.

`settings.configure` makes this the plugin of `nbgrader export`, which then writes, under
`exports/` of the course (git-ignored and private, like everything with students' names):

- `grades_by_question.csv`: one row per student and grade cell (a question, an exercise, a
  written answer), with its score, its maximum and whether it still waits for hand grading;
- `grades_for_lms.csv`: one row per enrolled student, one column per assignment handed out,
  in the layout of Canvas's gradebook import (Student, ID, SIS User ID, SIS Login ID,
  Section, then one column per assignment); Moodle's CSV grade import reads the same file,
  mapping "SIS Login ID" to the username. A student who did not submit one gets 0 there;
- `self_learners.csv`: the same layout for the self-learners (ids starting with `learner-`,
  the guide's convention, CERTIFICATES.md), with the assignments they sent: they are not
  in the class's platform, where a class sheet with them would fail to import or enrol
  them.

Every text cell is data in a spreadsheet too: a cell that begins with `=`, `+`, `-`, `@`, a tab
or a carriage return (a name typed as `=HYPERLINK(...)`) is written with a leading `'`, as
OWASP's "CSV Injection" page and the spreadsheets' own documentation advise, so that Excel,
LibreOffice and Google Sheets show it as text and never run it (`spreadsheet_text`).

"Handed out" is what the class was given: each assignment released to the exchange
(`nbgrader release_assignment`) or submitted by an enrolled student. The gradebook knows
every assignment `gradacc-build` generated, seven from the first day; a column for each
would give every student a 0 for lessons not taught yet. `--assignment` chooses others:
`nbgrader export --assignment "['lesson1_full_batch','lesson2_loss_scaling']"`.
"""

from __future__ import annotations

import csv
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import ExportPlugin
from traitlets import Unicode

BY_QUESTION = "grades_by_question.csv"
FOR_LMS = "grades_for_lms.csv"
SELF_LEARNERS = "self_learners.csv"
LMS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_text(value):
    """A CSV cell a spreadsheet shows as text: a leading `'` before a formula's first character.

    Numbers stay numbers (a score is never negative here).

    >>> [spreadsheet_text(v) for v in ("=HYPERLINK(1)", "-2+3", "@SUM(1)", "Ada", 4.25)]
    ["'=HYPERLINK(1)", "'-2+3", "'@SUM(1)", 'Ada', 4.25]
    """
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def late_penalised_total(submission) -> float:
    """A submission's total after its late penalty, never below 0, as the sheets and
    certificates count it (nbgrader's `score` leaves the penalty out)."""
    return round(max(0.0, submission.score - submission.late_submission_penalty), 2)


def question_rows(gradebook: Gradebook, assignments: list[str], students: list[str]) -> list[dict]:
    """One dict per student and grade cell of the chosen assignments (all when empty)."""
    rows = []
    for assignment in gradebook.assignments:
        if assignments and assignment.name not in assignments:
            continue
        for student in gradebook.students:
            if students and student.id not in students:
                continue
            try:
                submission = gradebook.find_submission(assignment.name, student.id)
            except MissingEntry:
                continue
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    rows.append(
                        {
                            "student_id": student.id,
                            "assignment": assignment.name,
                            "notebook": notebook.name,
                            "grade_id": grade.name,
                            "score": grade.score,
                            "max_score": grade.max_score,
                            "needs_manual_grade": grade.needs_manual_grade,
                        }
                    )
    return rows


def handed_out(gradebook: Gradebook, outbound: Path, is_self_learner) -> list[str]:
    """The assignments the class was given: released into `outbound`, or submitted by a student
    who is not a self-learner; in the gradebook's order."""
    chosen = []
    for assignment in gradebook.assignments:
        released = (outbound / assignment.name).is_dir()
        submitted = any(not is_self_learner(s.student.id) for s in assignment.submissions)
        if released or submitted:
            chosen.append(assignment.name)
    return chosen


def lms_rows(gradebook: Gradebook, assignments: list[str], students: list[str]):
    """(header, rows, pending): one row per student of `students`, one column per assignment.

    Each cell is the assignment's total after late penalties, 0 when not submitted;
    `pending` names the submissions whose hand-graded answers are not graded yet.
    """
    chosen = [gradebook.find_assignment(name) for name in assignments]
    header = LMS_COLUMNS + [f"{a.name} ({a.max_score:g} pts)" for a in chosen]
    rows, pending = [], []
    for student in gradebook.students:
        if student.id not in students:
            continue
        name = ", ".join(n for n in (student.last_name, student.first_name) if n) or student.id
        row = [name, "", student.id, student.id, ""]
        for assignment in chosen:
            try:
                submission = gradebook.find_submission(assignment.name, student.id)
            except MissingEntry:
                row.append(0)
                continue
            if submission.needs_manual_grade:
                pending.append(f"{student.id}/{assignment.name}")
            row.append(late_penalised_total(submission))
        rows.append(row)
    return header, rows, pending


def _write(path: Path, header: list[str], rows: list[list]) -> None:
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        for row in [header, *rows]:
            writer.writerow([spreadsheet_text(cell) for cell in row])


class GradesExport(ExportPlugin):
    """Writes exports/grades_by_question.csv, grades_for_lms.csv and self_learners.csv."""

    self_learner_prefix = Unicode(
        "learner-",
        help="Student ids starting with this are self-learners: kept out of the class's "
        "sheet, in self_learners.csv (CERTIFICATES.md: a self-learner's id is learner-NNNN).",
    ).tag(config=True)

    def is_self_learner(self, student_id: str) -> bool:
        return bool(self.self_learner_prefix) and student_id.startswith(self.self_learner_prefix)

    def export(self, gradebook: Gradebook) -> None:
        # relative to the course folder, wherever nbgrader was started
        folder = Path(self.parent.coursedir.root) / (self.to or "exports")
        folder.mkdir(parents=True, exist_ok=True)
        asked = [str(a) for a in self.assignment]
        unknown = sorted(set(asked) - {a.name for a in gradebook.assignments})
        if unknown:
            self.log.error(
                "--assignment %r is not in the gradebook; export some of %s",
                unknown[0],
                ", ".join(a.name for a in gradebook.assignments),
            )
            raise SystemExit(1)
        everyone = [s.id for s in gradebook.students]
        students = [str(s) for s in self.student] or everyone
        rows = question_rows(gradebook, asked, students)
        columns = list(rows[0]) if rows else ["student_id"]
        _write(folder / BY_QUESTION, columns, [[row[c] for c in columns] for row in rows])

        enrolled = [s for s in students if not self.is_self_learner(s)]
        given = asked or handed_out(gradebook, self._outbound(), self.is_self_learner)
        header, totals, pending = lms_rows(gradebook, given, enrolled)
        _write(folder / FOR_LMS, header, totals)
        learners = [s for s in students if self.is_self_learner(s)]
        sent = asked or [
            a.name
            for a in gradebook.assignments
            if any(self.is_self_learner(s.student.id) for s in a.submissions)
        ]
        header, learner_totals, learner_pending = lms_rows(gradebook, sent, learners)
        _write(folder / SELF_LEARNERS, header, learner_totals)
        self.log.info(
            "Wrote %s (%d students; assignments: %s), %s (%d self-learners) and %s",
            folder / FOR_LMS,
            len(totals),
            ", ".join(given) or "none handed out yet",
            folder / SELF_LEARNERS,
            len(learner_totals),
            folder / BY_QUESTION,
        )
        pending += learner_pending
        if pending:
            self.log.warning(
                "%d submissions still wait for hand grading; their totals leave those points "
                "out: %s",
                len(pending),
                ", ".join(pending[:10]) + (" ..." if len(pending) > 10 else ""),
            )

    def _outbound(self) -> Path:
        """Where `nbgrader release_assignment` put this course's assignments (nbgrader 0.9's
        default exchange: <Exchange.root>/<course id>/outbound/<assignment>)."""
        from nbgrader.exchange.default.exchange import Exchange

        config = self.parent.config.Exchange
        root = config.root if "root" in config else Exchange.class_traits()["root"].default_value
        return Path(root) / self.parent.coursedir.course_id / "outbound"
