"""`gradacc-build --roster students.csv`: the class's students into the gradebook, checked first.

The file has nbgrader's columns (`nbgrader db student import`): `id` (required), and any of
`first_name`, `last_name`, `email`, `lms_user_id`. A roster often comes from what students
typed into a sign-up form, so every row is checked before any is written: an id must be a plain
folder name (it names the student's folders in submitted/ and the exchange), and no field may
hold markup or a control character (gradacc_grader.names). One bad row refuses the whole file,
with a line per problem naming the row, the student and the character; nothing is imported.
"""

from __future__ import annotations

import csv
from pathlib import Path

from gradacc_grader.names import FIELDS, check_student
from gradacc_grader.terminal_text import visible
from gradacc_grader.untrusted_output import is_student_id


def read_roster(path: Path) -> list[dict]:
    """The roster's rows as {field: value or None}; ValueError naming every bad row."""
    with Path(path).open(newline="", encoding="utf-8-sig") as file:
        reader = csv.DictReader(file)
        if "id" not in (reader.fieldnames or []):
            raise ValueError(
                f"{path}: the roster needs a column `id` (and may have {', '.join(FIELDS[1:])})"
            )
        rows, problems = [], []
        for line, row in enumerate(reader, start=2):
            student = {k: (v or None) for k, v in row.items() if k in FIELDS}
            problems += [f"{path} line {line}: {why}" for why in _problems(student)]
            rows.append(student)
    if problems:
        raise ValueError("roster refused, nothing imported:\n" + "\n".join(problems))
    return rows


def _problems(student: dict) -> list[str]:
    student_id = student.get("id") or ""
    fields = {k: v for k, v in student.items() if k != "id"}
    problems = check_student(student_id, fields)
    if not is_student_id(student_id):
        problems.insert(
            0,
            f"student {visible(student_id)!r}: the id must be a plain name (letters, digits, "
            ". _ - @; it names the student's folders)",
        )
    return problems


def import_roster(course: Path, path: Path) -> str:
    """Add or update every student of the roster in the course's gradebook; a line to print."""
    from nbgrader.api import Gradebook

    rows = read_roster(path)
    with Gradebook(f"sqlite:///{Path(course) / 'gradebook.db'}", "gradacc") as gradebook:
        for row in rows:
            fields = {k: v for k, v in row.items() if k != "id"}
            gradebook.update_or_create_student(row["id"], **fields)
    return f"roster: {len(rows)} students in the gradebook from {path}"
