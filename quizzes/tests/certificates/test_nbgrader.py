"""Certificates from real grading runs: a class autograded by nbgrader, and a self-learner
graded in the sandbox by gradacc-grade, each with a written answer graded by hand."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import nbformat
import pytest

pytestmark = pytest.mark.slow

ASSIGNMENT = "tiny"
CLASS = {  # student -> (their code, their written answer or None)
    "ada": ("answer = 42", "Because gradients add up in .grad."),  # 7 + hand-graded 3
    "bob": ("answer = 41", None),  # 0
    "cyd": ("answer = 6 * 7", None),  # 7 of 10: exactly the pass mark
}
LEARNER = "learner-0042"


def _cell(kind: str, source: str, **nbgrader) -> nbformat.NotebookNode:
    new = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
    cell = new(source)
    if nbgrader:
        flags = {"schema_version": 3, "grade": False, "solution": False, "locked": False}
        cell.metadata["nbgrader"] = {**flags, **nbgrader}
    return cell


def tiny_assignment() -> nbformat.NotebookNode:
    """One autograded answer (7 points) and one written answer graded by hand (3 points)."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    solution = "### BEGIN SOLUTION\n{}\n### END SOLUTION"
    notebook.cells = [
        _cell("markdown", "Set `answer` to 42."),
        _cell("code", solution.format("answer = 42"), solution=True, grade_id="answer"),
        _cell("code", "assert answer == 42", grade=True, locked=True, grade_id="test", points=7),
        _cell("markdown", "Why?"),
        _cell("markdown", solution.format("It adds up."), grade=True, solution=True,
              grade_id="written", points=3),
    ]  # fmt: skip
    return notebook


def run(course: Path, *command: str) -> str:
    """Run an instructor's command in the course folder, with the venv's tools on PATH."""
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(command, cwd=course, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


def new_course(folder: Path, answers: dict) -> Path:
    """A course folder with the tiny assignment released and ``answers`` submitted."""
    folder.mkdir()
    (folder / "nbgrader_config.py").write_text('c.CourseDirectory.course_id = "tinycourse"\n')
    (folder / "source" / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(tiny_assignment(), folder / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    run(folder, sys.executable, "-m", "nbgrader", "generate_assignment", ASSIGNMENT)
    release = nbformat.read(folder / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    for student, (code, written) in answers.items():
        submission = nbformat.from_dict(json.loads(nbformat.writes(release)))
        submission.cells[1].source = code
        if written:
            submission.cells[4].source = written
        (folder / "submitted" / student / ASSIGNMENT).mkdir(parents=True)
        nbformat.write(
            submission, folder / "submitted" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        )
    return folder


def grade_by_hand(course: Path, student: str, points: float) -> None:
    """Score the written answer, as formgrader's Manual Grading does."""
    from nbgrader.api import Gradebook

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
            grade = gradebook.find_grade("written", ASSIGNMENT, ASSIGNMENT, student)
            grade.manual_score, grade.needs_manual_grade = points, False
            gradebook.db.commit()


@pytest.fixture
def keys(tmp_path, certify):
    assert certify("keygen", "--out", tmp_path / "keys")[0] == 0
    return tmp_path / "keys"


def verified(certify, folder: Path, keys: Path, course: Path) -> str:
    """What ``verify`` says of the one credential in ``folder``, against the verification
    folder ``publish`` writes for ``course``."""
    www = course.parent / "www"
    assert (
        certify("publish", "--course", course, "--key", keys / "issuer.key", "--out", www)[0] == 0
    )
    (credential,) = folder.glob("gradacc-credential-*.jwt")
    status, out, _ = certify("verify", credential, "--published", www)
    assert status == 0, out
    return out


def test_a_class_autograded_by_nbgrader_gets_certificates_once_hand_grading_is_done(
    tmp_path, keys, certify, give_settings
):
    course = new_course(tmp_path / "course", CLASS)
    give_settings(course, ASSIGNMENT)
    run(course, sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT)
    out = tmp_path / "out"
    issue = ("issue", ASSIGNMENT, "--course", course, "--key", keys / "issuer.key", "--out", out)
    status, _, err = certify(*issue)
    assert status == 1 and "pending for ada:" in err
    assert not out.exists()

    grade_by_hand(course, "ada", 3.0)
    assert certify(*issue)[0] == 0
    assert sorted(p.name for p in out.iterdir()) == ["ada", "cyd"]
    for student, score in (("ada", "10 of 10"), ("cyd", "7 of 10")):
        shown = verified(certify, out / student, keys, course)
        assert score in shown and f"achievement     the final exam of {ASSIGNMENT}" in shown


def test_a_self_learner_is_graded_alone_and_issued_alone(tmp_path, keys, certify, give_settings):
    # the course's host, as CERTIFICATES.md says: a course that already graded a class (Ada,
    # hand-graded), then one learner's notebook graded like the class, alone, and issued alone.
    # The tiny assignment is nbgrader's own (no answer key from gradacc-build), so nbgrader
    # grades it: gradacc-grade scores only what a gradacc-build key knows (GRADING.md).
    course = new_course(tmp_path / "course", {"ada": CLASS["ada"]})
    give_settings(course, ASSIGNMENT)
    run(course, sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT)
    grade_by_hand(course, "ada", 3.0)
    learner = course / "submitted" / LEARNER / ASSIGNMENT
    learner.mkdir(parents=True)
    ada = course / "submitted" / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    notebook = nbformat.read(ada, 4)
    notebook.cells[4].source = "Sums of gradients."
    nbformat.write(notebook, learner / f"{ASSIGNMENT}.ipynb")
    name = ("--first-name", "Ada", "--last-name", "Lovelace")
    run(course, sys.executable, "-m", "nbgrader", "db", "student", "add", LEARNER, *name)
    run(course, sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT, "--student", LEARNER)
    out = tmp_path / "out"
    issue = ("issue", ASSIGNMENT, "--course", course, "--key", keys / "issuer.key", "--out", out)
    status, _, err = certify(*issue, "--student", LEARNER)
    assert status == 1 and f"pending for {LEARNER}:" in err  # only the learner's grading counts

    grade_by_hand(course, LEARNER, 2.0)
    assert certify(*issue, "--student", LEARNER)[0] == 0
    assert [p.name for p in out.iterdir()] == [LEARNER]
    shown = verified(certify, out / LEARNER, keys, course)
    assert "Ada Lovelace" in shown and "9 of 10" in shown
    # Ada's hand-graded total is still there: the learner's grading left the class alone
    assert certify(*issue)[0] == 0
    assert sorted(p.name for p in out.iterdir()) == ["ada", LEARNER]
