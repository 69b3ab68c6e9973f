"""Certificates from a class graded by real nbgrader runs: autograde, hand grading, issue."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import nbformat
import pytest
from gradacc_grader.certify import main

pytestmark = pytest.mark.slow

ASSIGNMENT = "tiny"
ANSWERS = {  # student -> (their code, their written answer or None)
    "ada": ("answer = 42", "Because gradients add up in .grad."),  # 7 + hand-graded 3
    "bob": ("answer = 41", None),  # 0
    "cyd": ("answer = 6 * 7", None),  # 7 of 10: exactly the pass mark
}


def _cell(kind: str, source: str, **nbgrader) -> nbformat.NotebookNode:
    cell = (
        nbformat.v4.new_code_cell(source)
        if kind == "code"
        else nbformat.v4.new_markdown_cell(source)
    )
    if nbgrader:
        cell.metadata["nbgrader"] = {
            "schema_version": 3,
            "grade": False,
            "solution": False,
            "locked": False,
            **nbgrader,
        }
    return cell


def tiny_assignment() -> nbformat.NotebookNode:
    """One autograded answer (7 points) and one written answer graded by hand (3 points)."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    notebook.cells = [
        _cell("markdown", "Set `answer` to 42."),
        _cell(
            "code",
            "### BEGIN SOLUTION\nanswer = 42\n### END SOLUTION",
            solution=True,
            grade_id="answer",
        ),
        _cell(
            "code", "assert answer == 42", grade=True, locked=True, grade_id="answer_test", points=7
        ),
        _cell(
            "markdown",
            "### BEGIN SOLUTION\nIt adds up.\n### END SOLUTION",
            grade=True,
            solution=True,
            grade_id="written",
            points=3,
        ),
    ]
    return notebook


def nbgrader(course: Path, *args: str) -> None:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Path:
    """A course folder whose class was autograded by nbgrader, Ada's written answer pending."""
    course = tmp_path_factory.mktemp("course")
    (course / "nbgrader_config.py").write_text('c.CourseDirectory.course_id = "tinycourse"\n')
    (course / "source" / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(tiny_assignment(), course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    nbgrader(course, "generate_assignment", ASSIGNMENT)
    release = nbformat.read(course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    for student, (code, written) in ANSWERS.items():
        submission = nbformat.from_dict(json.loads(nbformat.writes(release)))
        submission.cells[1].source = code
        if written:
            submission.cells[3].source = written
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(submission, folder / f"{ASSIGNMENT}.ipynb")
    nbgrader(course, "autograde", ASSIGNMENT)
    return course


def certify(capsys, *args):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def test_a_class_graded_by_nbgrader_gets_certificates_once_hand_grading_is_done(
    graded, tmp_path, capsys
):
    key = tmp_path / "keys/issuer.key"
    assert certify(capsys, "keygen", "--out", tmp_path / "keys")[0] == 0
    issue = ("issue", ASSIGNMENT, "--course", graded, "--key", key, "--out", tmp_path / "out")
    status, _, err = certify(capsys, *issue)
    assert status == 1 and "pending for ada:" in err
    assert not (tmp_path / "out").exists()

    _grade_by_hand(graded, "ada", "written", 3.0)  # what formgrader's Manual Grading does
    status, out, _ = certify(capsys, *issue)
    assert status == 0, out
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["ada", "cyd"]
    for student, score in (("ada", "10 of 10"), ("cyd", "7 of 10")):
        (path,) = (tmp_path / "out" / student).glob("*.json")
        status, out, _ = certify(
            capsys,
            "verify",
            path,
            "--public-key",
            tmp_path / "keys/issuer.pub",
            "--registry",
            graded / "certificates.sqlite",
        )
        assert status == 0 and score in out and "tinycourse" in out


def _grade_by_hand(course: Path, student: str, cell: str, points: float) -> None:
    from nbgrader.api import Gradebook

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
            grade = gradebook.find_grade(cell, ASSIGNMENT, ASSIGNMENT, student)
            grade.manual_score, grade.needs_manual_grade = points, False
            gradebook.db.commit()
