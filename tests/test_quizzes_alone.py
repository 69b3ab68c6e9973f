"""The instructor's package stands on its own, and what it writes stays out of git.

`pip install ./quizzes` (the instructor's package) is tested by `quizzes/tests` alone: they
need neither this repository's `tools/` nor its `tests/`. The git-ignore checks live here,
with the repository they are about.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools.system_tools import CHROMIUM, CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parent.parent
QUIZZES = ROOT / "quizzes"


def _ignored(path: str) -> bool:
    done = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", path])
    return done.returncode == 0


def test_generated_files_and_exports_stay_out_of_git():
    for path in (
        "instructor.secret",
        "keys/gradacc_faq.json",
        "source/gradacc_faq/x.ipynb",
        "release/gradacc_faq/x.ipynb",
        "submitted/ada/x.ipynb",
        "autograded/a/b",
        "feedback/a/b.html",
        "gradebook.db",
        "certificates.sqlite",
        "exports/grades_for_lms.csv",
        "exports/self_learners.csv",
        "results/gradacc_faq/ada/gradebook.db",
        "grades.csv",
        ".nbgrader.log",
        "sample_class_expected.csv",
    ):
        assert _ignored(f"quizzes/course/{path}"), path
    # what the guides' commands write from the repository's root: the Slurm recipe's list and
    # results (GRADING.md), the certificates issued (CERTIFICATES.md)
    for path in ("results/gradacc_faq/ada/outcome.json", "certificates/ada/x.pdf", "students.txt"):
        assert _ignored(path), path
    tracked = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "quizzes"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert not [p for p in tracked if p.endswith(".ipynb")], tracked


def test_the_instructors_tests_start_chromium_as_the_repositorys_do():
    spec = importlib.util.spec_from_file_location("quizzes_conftest", QUIZZES / "tests/conftest.py")
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)
    assert (conftest.CHROMIUM, conftest.CHROMIUM_ARGS) == (CHROMIUM, CHROMIUM_ARGS)


@pytest.mark.slow
def test_the_instructors_tests_run_from_a_copy_of_quizzes_alone(tmp_path):
    # the files of quizzes/ that git has or would have (not a course built in it)
    listed = ["git", "-C", str(ROOT), "ls-files", "--cached", "--others", "--exclude-standard"]
    files = subprocess.run([*listed, "quizzes"], capture_output=True, text=True, check=True)
    copy = tmp_path / "alone"
    for name in files.stdout.splitlines():
        if (ROOT / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, copy / name)
    # as in an activated venv: its programs on PATH (nbgrader runs `alembic`), no PYTHONPATH
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    # Every test module is imported (collected), so none may import tools/ or tests/; the fast
    # tests run, and only here when this test is in the run (../conftest.py leaves them out of
    # it). The slow ones (classes graded, sandboxes waiting on timeouts) run in the whole run,
    # from the repository: here they would double the cost of this check.
    command = [sys.executable, "-m", "pytest", "quizzes/tests", "-m", "not slow and not browser"]
    done = subprocess.run(
        [*command, "-q", "-p", "no:cacheprovider"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=3000,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "error" not in done.stdout.splitlines()[-1]
    assert not (copy / "tools").exists() and not (copy / "tests").exists()
