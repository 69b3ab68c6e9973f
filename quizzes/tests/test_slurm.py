"""The Slurm recipe of GRADING.md, run as the script it is (quizzes/slurm/grade_array.sh) with
SLURM_ARRAY_TASK_ID set as Slurm sets it, then `gradacc-grade --merge`; and hand grades kept
through a re-grade."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]

BIN = Path(sys.executable).parent
SCRIPT = Path(__file__).resolve().parents[1] / "slurm" / "grade_array.sh"
ASSIGNMENT = "gradacc_faq"
WRITTEN = "faq5_written"  # the answer graded by hand, out of 2
CLASS = ["sample-blank", "sample-honest"]  # who submitted gradacc_faq in the course below


@pytest.fixture(scope="module")
def built(tmp_path_factory, course_with_secret, cli) -> Path:
    """gradacc_faq and lesson 1 with the sample class; only two of them handed in gradacc_faq."""
    course = course_with_secret(tmp_path_factory.mktemp("slurm") / "course")
    build = ["gradacc-build", "--course", str(course), "--sample-class"]
    done = cli([*build, "--assignment", ASSIGNMENT, "--assignment", "lesson1_full_batch"])
    assert done.returncode == 0, done.stdout + done.stderr
    for student in ("sample-partly", "sample-cheater"):  # they keep their lesson 1
        shutil.rmtree(course / "submitted" / student / ASSIGNMENT)
    return course


@pytest.fixture
def course(built, tmp_path) -> Path:
    return Path(shutil.copytree(built, tmp_path / "repo" / "course", symlinks=True))


def task(course: Path, index: str | None, students: str = "students.txt"):
    """One array task, as Slurm starts it: from the submit folder, SLURM_ARRAY_TASK_ID set."""
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}", COURSE=str(course))
    env.update(GRADE=str(BIN / "gradacc-grade"), RESULTS=str(course.parent / "results"))
    env.pop("SLURM_ARRAY_TASK_ID", None)
    if index is not None:
        env["SLURM_ARRAY_TASK_ID"] = index
    command = ["bash", str(SCRIPT), ASSIGNMENT, students]
    return subprocess.run(command, cwd=course.parent, env=env, capture_output=True, text=True)


def grade(course: Path, *args: str):
    command = [str(BIN / "gradacc-grade"), "--course", str(course), ASSIGNMENT, *args]
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}")
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)


def written(course: Path, student: str):
    """(manual score, needs a hand grade) of the written answer, as the gradebook holds it;
    None before the student's grades are merged into the course."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        try:
            cell = gradebook.find_grade(WRITTEN, ASSIGNMENT, ASSIGNMENT, student)
        except MissingEntry:
            return None
        return cell.manual_score, cell.needs_manual_grade


def hand_grade(course: Path, student: str, score: float) -> None:
    """What formgrader does when the instructor enters a score."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        cell = gradebook.find_grade(WRITTEN, ASSIGNMENT, ASSIGNMENT, student)
        cell.manual_score, cell.needs_manual_grade = score, False
        gradebook.db.commit()


def test_the_list_names_only_this_assignments_submissions(course):
    done = task(course, None, "--list")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == CLASS  # not sample-partly: it handed in lesson 1 only
    assert (course / "submitted" / "sample-partly" / "lesson1_full_batch").is_dir()


def test_tasks_that_name_nobody_grade_nobody(course):
    (course.parent / "students.txt").write_text("sample-honest\n\n", encoding="utf-8")
    results = course.parent / "results"
    (results / "sample-honest").mkdir(parents=True)
    (results / "sample-honest" / "outcome.json").write_text("{}", encoding="utf-8")
    for index in ("2", "3", "40", ""):  # a blank line, past the end, far past it, empty
        done = task(course, index)
        assert done.returncode == 0, done.stderr
        assert "nothing to grade" in done.stderr
    assert (results / "sample-honest" / "outcome.json").read_text(encoding="utf-8") == "{}"
    done = task(course, None)  # not an array task at all: a mistake, said as such
    assert done.returncode == 2 and "SLURM_ARRAY_TASK_ID is not set" in done.stderr


def test_gradacc_grade_refuses_a_student_it_cannot_grade(course, tmp_path):
    results = tmp_path / "results"
    (results / "ada").mkdir(parents=True)
    for student, why in (
        ("", "is not a student id"),
        ("..", "is not a student id"),
        ("sample-partly", f"has no submission of {ASSIGNMENT}"),
    ):
        done = grade(course, "--student", student, "--results", str(results))
        assert done.returncode == 2 and why in done.stderr, done.stderr
        assert "nothing graded" in done.stderr
    assert (results / "ada").is_dir()  # the results folder is left alone


def test_results_and_merge_take_one_assignment_at_a_time(course, tmp_path):
    results = tmp_path / "results"
    for option in ("--results", "--merge"):
        done = grade(course, "lesson1_full_batch", option, str(results))
        assert done.returncode == 2, done.stdout + done.stderr
        why = "take one assignment at a time (got 2: gradacc_faq lesson1_full_batch)"
        assert why in done.stderr, done.stderr
        assert "nothing graded" in done.stderr and not results.exists()


def test_an_array_graded_class_merges_and_keeps_hand_grades_through_a_regrade(course):
    listed = task(course, None, "--list")
    (course.parent / "students.txt").write_text(listed.stdout, encoding="utf-8")
    for index in ("1", "2", "3"):  # --array=1-3 for a class of 2: the last one grades nobody
        done = task(course, index)
        assert done.returncode == 0, done.stdout + done.stderr
    results = course.parent / "results"
    assert sorted(p.parent.name for p in results.glob("*/outcome.json")) == CLASS
    # graded apart, nothing is in the course yet: no grade, no autograded notebook
    assert written(course, "sample-honest") is None and not (course / "autograded").exists()
    done = grade(course, "--merge", str(results))
    assert done.returncode == 0, done.stdout + done.stderr
    students = [line.split()[0] for line in done.stdout.splitlines()[1:] if line[:1] != " "]
    assert students == CLASS  # (indented lines under a student say why points were lost)
    assert written(course, "sample-honest") == (None, True)  # waits for the instructor
    assert (course / "autograded" / "sample-honest" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").is_file()

    hand_grade(course, "sample-honest", 2.0)
    assert task(course, "2").returncode == 0  # sample-honest graded again, the same answer
    done = grade(course, "--merge", str(results))
    assert done.returncode == 0, done.stdout + done.stderr
    assert written(course, "sample-honest") == (2.0, False)
    assert "sample-honest     10     10  done" in done.stdout

    # a new written answer: the old hand grade stays, but waits to be confirmed
    path = course / "submitted" / "sample-honest" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    notebook = nbformat.read(path, 4)
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in notebook.cells]
    cell = notebook.cells[ids.index(WRITTEN)]
    cell.source = "An answer written after the hand grading."
    nbformat.write(notebook, path)
    done = grade(course, "--student", "sample-honest")  # a class run merges the same way
    assert done.returncode == 0, done.stdout + done.stderr
    assert written(course, "sample-honest") == (2.0, True)
