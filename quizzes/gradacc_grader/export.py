"""`nbgrader export` for gradacc: every question's score, and totals a learning platform imports.

`settings.configure` makes this the plugin of `nbgrader export`, which then writes, under
`exports/` of the course (git-ignored, like everything with students' names):

- `grades_by_question.csv`: one row per student and grade cell (a question, an exercise, a
  written answer), with its score, its maximum and whether it still waits for hand grading;
- `grades_for_lms.csv`: one row per student, one column per assignment, in the layout of
  Canvas's gradebook import (Student, ID, SIS User ID, SIS Login ID, Section, then one column
  per assignment); Moodle's CSV grade import reads the same file, mapping "SIS Login ID" to
  the username. A student who submitted nothing gets 0 there.
"""

from __future__ import annotations

import csv
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import ExportPlugin

BY_QUESTION = "grades_by_question.csv"
FOR_LMS = "grades_for_lms.csv"
LMS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


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


def lms_rows(gradebook: Gradebook, assignments: list[str], students: list[str]):
    """(header, rows): one row per student with each assignment's total after late penalties."""
    chosen = [a for a in gradebook.assignments if not assignments or a.name in assignments]
    header = LMS_COLUMNS + [f"{a.name} ({a.max_score:g} pts)" for a in chosen]
    rows, pending = [], []
    for student in gradebook.students:
        if students and student.id not in students:
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
            row.append(round(max(0.0, submission.score - submission.late_submission_penalty), 2))
        rows.append(row)
    return header, rows, pending


class GradesExport(ExportPlugin):
    """Writes exports/grades_by_question.csv and exports/grades_for_lms.csv (see the module)."""

    def export(self, gradebook: Gradebook) -> None:
        # relative to the course folder, wherever nbgrader was started
        folder = Path(self.parent.coursedir.root) / (self.to or "exports")
        folder.mkdir(parents=True, exist_ok=True)
        assignments = [str(a) for a in self.assignment]
        students = [str(s) for s in self.student]
        rows = question_rows(gradebook, assignments, students)
        with (folder / BY_QUESTION).open("w", newline="", encoding="utf-8") as file:
            writer = csv.DictWriter(file, fieldnames=list(rows[0]) if rows else ["student_id"])
            writer.writeheader()
            writer.writerows(rows)
        header, totals, pending = lms_rows(gradebook, assignments, students)
        with (folder / FOR_LMS).open("w", newline="", encoding="utf-8") as file:
            writer = csv.writer(file)
            writer.writerow(header)
            writer.writerows(totals)
        self.log.info("Wrote %s and %s", folder / BY_QUESTION, folder / FOR_LMS)
        if pending:
            self.log.warning(
                "%d submissions still wait for hand grading; their totals leave those points "
                "out: %s",
                len(pending),
                ", ".join(pending[:10]) + (" ..." if len(pending) > 10 else ""),
            )
