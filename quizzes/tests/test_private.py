"""Answers and grades stay the instructor's under the usual umask 022: the guide's commands
(gradacc-build, nbgrader autograde, generate_feedback and export, gradacc-grade --results)
leave no file of them readable by another user."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from gradacc_grader.private import PRIVATE

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

ASSIGNMENT = "lesson1_full_batch"  # the quickest to grade


@pytest.fixture
def usual_umask():
    """The umask of most systems (022) for this test and the commands it starts."""
    before = os.umask(0o022)
    yield
    os.umask(before)


def readable_by_others(folder: Path) -> list[str]:
    """Every entry under `folder` (itself included) that group or others may use, with its mode."""
    found = []
    for path in [folder, *folder.rglob("*")]:
        if path.is_symlink():
            continue
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077 or (path.is_dir() and mode != 0o700):
            found.append(f"{path.relative_to(folder.parent)} {oct(mode)}")
    return found


PLAIN = "--Autograde.exporter_class=nbconvert.exporters.NotebookExporter"


def test_answers_and_grades_are_private_whatever_the_umask(
    usual_umask, course_with_secret, cli, tmp_path
):
    course = course_with_secret(tmp_path / "course")
    (course / "instructor.secret").chmod(0o600)
    build = ["gradacc-build", "--course", str(course), "--assignment", ASSIGNMENT]
    done = cli([*build, "--sample-class"])
    assert done.returncode == 0, done.stdout + done.stderr
    for command in (
        # plain autograde is refused in the course; what it writes, set back, must be private
        ["nbgrader", "autograde", ASSIGNMENT, "--student", "sample-honest", PLAIN],
        ["nbgrader", "generate_feedback", ASSIGNMENT],
        ["nbgrader", "export"],
    ):
        done = cli(command, cwd=course)
        assert done.returncode == 0, done.stdout + done.stderr
    results = tmp_path / "results" / ASSIGNMENT
    grade = ["gradacc-grade", "--course", str(course), ASSIGNMENT, "--student", "sample-blank"]
    done = cli([*grade, "--results", str(results)])
    assert done.returncode == 0, done.stdout + done.stderr

    made = sorted(name for name in PRIVATE if (course / name).exists())
    assert made == sorted(
        ["instructor.secret", "keys", "source", "submitted", "autograded", "feedback"]
        + ["exports", "gradebook.db", "sample_class_expected.csv"]
    )
    leaks = [leak for name in made for leak in readable_by_others(course / name)]
    assert leaks == []
    assert readable_by_others(results.parent) == []
    # what students get is not secret, and nbgrader still makes it readable
    release = course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert stat.S_IMODE(release.stat().st_mode) == 0o644

    # a course made before (or copied with a loose umask) is repaired by the next build
    (course / "source").chmod(0o755)
    (course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").chmod(0o644)
    (course / "gradebook.db").chmod(0o644)
    done = cli(build)
    assert done.returncode == 0 and "up to date" in done.stdout, done.stdout + done.stderr
    assert readable_by_others(course / "source") == []
    assert readable_by_others(course / "gradebook.db") == []
