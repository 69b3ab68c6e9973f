"""Gradebooks for the certificate tests, filled through nbgrader's own API (no kernel runs)."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pytest

AUTO_POINTS, WRITTEN_POINTS = 7.0, 3.0
# What the test courses' certificates state (gradacc-certify settings): not the defaults of
# anything, so that a test finds them only where they were set.
SETTINGS = {
    "course_title": "Gradient accumulation in PyTorch",
    "issuer": "Ọ̀ṣun Open School",
    "verify_url": "https://certificates.example.org/gradacc/verify/",
}


def settle(course: Path, assignment: str, language: str = "en") -> None:
    """Give ``course`` its certificate settings, as an instructor does once."""
    from gradacc_grader.certify import main

    options = [f"--{name.replace('_', '-')}={value}" for name, value in SETTINGS.items()]
    title = ["--assignment-title", assignment, f"the final exam of {assignment}"]
    command = ["settings", "--course", str(course), *options, *title, "--language", language]
    assert main(command) == 0


@pytest.fixture(scope="session")
def give_settings():
    """``give_settings(course, assignment, language="en")``: the course's certificate settings."""
    return settle


@pytest.fixture
def certify(capsys):
    """``certify(*args)``: gradacc-certify run in this process: (exit status, stdout, stderr)."""
    from gradacc_grader.certify import main

    def run(*args):
        status = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return status, out, err

    return run


@pytest.fixture
def certify_output(certify):
    """``certify_output(*args)``: as ``certify``, with stdout and stderr as one text."""

    def run(*args):
        status, out, err = certify(*args)
        return status, out + err

    return run


@pytest.fixture(autouse=True)
def verifier_state(tmp_path, monkeypatch):
    """Where ``verify`` remembers the status lists it has seen: a folder of each test's own."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state" / "gradacc"


@pytest.fixture(scope="session")
def fill_gradebook(tmp_path_factory):
    """A function making a course folder whose gradebook holds one graded assignment.

    ``fill_gradebook(course, assignment, students)``, where ``students`` maps a student id to
    (autograded points of 7, hand-graded points of 3 or None while pending, display name).
    """
    empty = _empty_gradebook(tmp_path_factory.mktemp("gradebook") / "gradebook.db")

    def fill(course: Path, assignment: str, students: dict, course_id: str = "testcourse"):
        course.mkdir(parents=True, exist_ok=True)
        (course / "nbgrader_config.py").write_text(f"c.CourseDirectory.course_id = {course_id!r}\n")
        shutil.copy(empty, course / "gradebook.db")  # a new one per test would take seconds
        _fill(course / "gradebook.db", assignment, students, course_id)
        settle(course, assignment)
        return course

    return fill


def _empty_gradebook(path: Path) -> Path:
    from nbgrader.api import Gradebook

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SQLAlchemy's SAWarnings about nbgrader's models
        with Gradebook(f"sqlite:///{path}"):
            pass
    return path


def _fill(database: Path, assignment: str, students: dict, course_id: str) -> None:
    from nbgrader.api import Gradebook

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Gradebook(f"sqlite:///{database}", course_id=course_id) as gradebook:
            gradebook.add_assignment(assignment)
            gradebook.add_notebook("quiz", assignment)
            for cell, points, kind in (
                ("auto", AUTO_POINTS, "code"),
                ("written", WRITTEN_POINTS, "markdown"),
            ):
                gradebook.add_grade_cell(cell, "quiz", assignment, max_score=points, cell_type=kind)
            for student, (auto, hand, name) in students.items():
                first, _, last = name.partition(" ")
                gradebook.add_student(student, first_name=first or None, last_name=last or None)
                gradebook.add_submission(assignment, student)
                grade = gradebook.find_grade("auto", "quiz", assignment, student)
                grade.auto_score, grade.needs_manual_grade = auto, False
                grade = gradebook.find_grade("written", "quiz", assignment, student)
                grade.manual_score, grade.needs_manual_grade = hand, hand is None
            gradebook.db.commit()


def write_older_format(course: Path, key_path: Path, out: Path, students: dict) -> dict:
    """Older-format certificates, as ``issue`` wrote them before Open Badges: a signed JSON
    record per student in ``out/<student>/``, registered in the course's SQLite registry.

    ``students`` maps a student id to (name, score of 10). Made with the older format's own
    signing code (``records``, ``signing``), which ``issue`` no longer calls; returns the
    files by student.
    """
    from datetime import date

    from gradacc_grader.certificates.ids import new_id
    from gradacc_grader.certificates.records import (
        certificate_file,
        certificate_record,
        write_certificate,
    )
    from gradacc_grader.certificates.registry import Registry
    from gradacc_grader.certificates.signing import load_private_key, public_key_text, sign_record

    key = load_private_key(key_path)
    files = {}
    with Registry(course / "certificates.sqlite", create=True) as registry:
        registry.claim_issuer(public_key_text(key.public_key()))
        for student, (name, score) in students.items():
            record = certificate_record(
                new_id(),
                course="testcourse",
                assignment="final",
                name=name,
                score=score,
                max_score=10.0,
                day=date(2026, 5, 1),
                course_version="0.1.0",
                course_title=SETTINGS["course_title"],
                issuer=SETTINGS["issuer"],
                assignment_title="the final exam of final",
            )
            entry = sign_record(record, key)
            registry.add(record["id"], "testcourse", "final", student, entry)
            files[student] = out / student / f"gradacc-certificate-{record['id']}.json"
            files[student].parent.mkdir(parents=True, exist_ok=True)
            write_certificate(certificate_file(entry), files[student])
    return files


@pytest.fixture(scope="session")
def older_format():
    """``older_format(course, key_path, out, students)``: see ``write_older_format``."""
    return write_older_format
