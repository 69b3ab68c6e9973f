"""nbgrader's own autograde on a course gradacc-build made: refused in one line, nothing run.

Its test cells only report values, so plain nbgrader gave every answered question full marks
and ran the students' code with the instructor's rights. The command and formgrader's
Autograde button (nbgrader's API, in the server's process) must refuse before any cell runs,
any score is written or any earlier autograded copy is removed; gradacc-grade still grades.
"""

from __future__ import annotations

import csv
import sqlite3
from contextlib import closing
from pathlib import Path

import nbformat
import pytest
from gradacc_grader.plain_autograde import MESSAGE
from nbformat.v4 import new_code_cell

pytestmark = pytest.mark.slow
NAME = "lesson5_training"  # three choices, no exercise: the quickest to grade


def _scores(course: Path) -> list[tuple]:
    """(student, assignment, score) of every graded cell in the gradebook."""
    query = """SELECT submitted_assignment.student_id, assignment.name, grade.auto_score
               FROM grade JOIN submitted_notebook ON grade.notebook_id = submitted_notebook.id
               JOIN submitted_assignment ON submitted_notebook.assignment_id =
                    submitted_assignment.id
               JOIN assignment ON submitted_assignment.assignment_id = assignment.id"""
    with closing(sqlite3.connect(course / "gradebook.db")) as db:
        return db.execute(query).fetchall()


@pytest.fixture
def course(course_copy, tmp_path) -> Path:
    """The built course with mallory: an honest notebook with a cell that leaves a mark."""
    honest = course_copy / "submitted" / "sample-honest" / NAME / f"{NAME}.ipynb"
    notebook = nbformat.read(honest, as_version=4)
    mark = tmp_path / "student-code-ran-here"
    notebook.cells.insert(1, new_code_cell(f"open({str(mark)!r}, 'w').write('ran')"))
    del notebook.cells[1]["id"]  # the course's notebooks are nbformat 4.4: no cell ids
    (course_copy / "submitted" / "mallory" / NAME).mkdir(parents=True)
    nbformat.write(notebook, course_copy / "submitted" / "mallory" / NAME / f"{NAME}.ipynb")
    return course_copy


def test_nbgrader_autograde_refuses_in_one_line_and_runs_nothing(course, cli, tmp_path):
    earlier = course / "autograded" / "sample-honest" / NAME
    earlier.mkdir(parents=True)
    (earlier / f"{NAME}.ipynb").write_text("graded before by gradacc-grade", encoding="utf-8")
    for command in (["nbgrader", "autograde", NAME], ["nbgrader", "autograde", NAME, "--force"]):
        done = cli(command, cwd=course)
        assert done.returncode == 1, done.stdout + done.stderr
        errors = [line for line in done.stderr.splitlines() if "ERROR" in line]
        assert len(errors) == 1 and errors[0].endswith(MESSAGE), done.stderr
        assert "Traceback" not in done.stderr
    assert "run `gradacc-grade --course <this folder> <assignment>` instead" in MESSAGE
    assert not (tmp_path / "student-code-ran-here").exists()  # no student code ran
    assert _scores(course) == []  # no score, and no submission, for anyone
    assert sorted(p.name for p in (course / "autograded").iterdir()) == ["sample-honest"]
    assert (earlier / f"{NAME}.ipynb").read_text() == "graded before by gradacc-grade"


def test_formgraders_autograde_button_is_refused_with_the_message(course, tmp_path):
    """The button calls NbGraderAPI.autograde in the server's process, with the course's config."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    config.CourseDirectory.root = str(course)
    api = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)
    result = api.autograde(NAME, "mallory", force=True, create=True)
    assert result["success"] is False
    assert MESSAGE in result["log"]
    assert not (tmp_path / "student-code-ran-here").exists()
    assert _scores(course) == []


def test_gradacc_grade_still_grades_the_course(course, cli, tmp_path):
    students = ["--student", "sample-honest", "--student", "sample-partly", "--student", "mallory"]
    done = cli(["gradacc-grade", "--course", str(course), NAME, *students, "--jobs", "2"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"gradacc-grade: warning: {NAME} has no due date" in done.stderr  # item 6
    with (course / "sample_class_expected.csv").open(newline="", encoding="utf-8") as file:
        expected = {
            (row["student"], row["grade_id"]): float(row["expected_points"])
            for row in csv.DictReader(file)
            if row["assignment"] == NAME
        }
    graded = {(s, a) for s, a, _ in _scores(course)}
    assert graded == {(s, NAME) for s in ("sample-honest", "sample-partly", "mallory")}
    totals = {}
    for student, _, score in _scores(course):
        totals[student] = totals.get(student, 0.0) + score
    for student in ("sample-honest", "sample-partly"):
        deserved = sum(p for (s, _), p in expected.items() if s == student)
        assert totals[student] == pytest.approx(deserved), (student, totals)
    assert totals["mallory"] == pytest.approx(totals["sample-honest"])
    assert not (tmp_path / "student-code-ran-here").exists()  # her cell ran in the sandbox
