"""One list of lessons (gradacc_lessons/lessons.py): everything that lists lessons reads it.

The main test adds a made-up lesson 10 to a copy of the repository, as CONTRIBUTING.md says
(write the notebook, declare it), and shows that the site, the catalogues, the setup cells,
the README's tables and the tests' parametrisation pick it up with no other edit.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from gradacc_lessons.lessons import LESSONS, lesson
from tools.setup_cell import setup_cell_for

from .conftest import ROOT

MADE_UP = """\
    Lesson(
        10,
        "10_made_up.ipynb",
        "A made-up lesson",
        "Ẹ̀kọ́ àfarawé",
        "nothing: it shows that one entry is all a new lesson needs",
        extra="frameworks",
        extra_modules=("transformers",),
        questions=False,
        predicts=False,
    ),
"""

# What the copy reports of itself: each place that lists lessons, asked as that place asks.
REPORT = """\
import json
from tools.catalogues import CATALOGUED
from tools.setup_cell import EXTRAS
from tools.site import lesson_paths
print(json.dumps({
    "site": [path.name for path in lesson_paths()],
    "catalogues": list(CATALOGUED),
    "extras": sorted(EXTRAS),
}))
"""


def test_every_notebook_is_declared_and_every_declared_lesson_exists():
    declared = {each.notebook for each in LESSONS}
    on_disk = {path.name for path in (ROOT / "notebooks").glob("*.ipynb")}
    assert declared == on_disk, "declare each notebook in gradacc_lessons/lessons.py, once"
    assert [each.number for each in LESSONS] == sorted({each.number for each in LESSONS})
    for each in LESSONS:
        assert each.notebook.startswith(f"{each.number:02d}_"), each.notebook


def test_each_lesson_with_questions_has_its_module_and_no_module_is_undeclared():
    folder = ROOT / "gradacc_lessons" / "quiz" / "questions"
    modules = {
        int(m[1]) for p in folder.glob("lesson*.py") if (m := re.match(r"lesson(\d+)", p.stem))
    }
    assert modules == {each.number for each in LESSONS if each.questions}


def test_an_unknown_lesson_number_names_the_lessons():
    with pytest.raises(ValueError, match=r"no lesson 42: the lessons are 1, 2, .*9"):
        lesson(42)


def _copy_repository(to: Path) -> Path:
    files = (
        subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True)
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (to / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, to / name)
    return to


def _add_made_up_lesson(copy: Path) -> None:
    cells = [
        nbformat.v4.new_code_cell(setup_cell_for("01_accumulation_is_a_full_batch.ipynb")),
        nbformat.v4.new_markdown_cell("# Lesson 10 — A made-up lesson\n\nOne idea."),
        nbformat.v4.new_code_cell("print(1 + 1)"),
    ]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), copy / "notebooks" / "10_made_up.ipynb")
    listing = copy / "gradacc_lessons" / "lessons.py"
    text = listing.read_text(encoding="utf-8")
    end = text.index(")\n\n\ndef lesson(")  # the closing parenthesis of LESSONS
    listing.write_text(text[:end] + MADE_UP + text[end:], encoding="utf-8")


def _run(copy: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": f"{copy}{os.pathsep}{copy / 'quizzes'}"}
    done = subprocess.run(
        [sys.executable, *args], cwd=copy, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_made_up_lesson_is_picked_up_everywhere_from_one_entry(tmp_path):
    copy = _copy_repository(tmp_path / "course")
    _add_made_up_lesson(copy)

    report = json.loads(_run(copy, "-c", REPORT))
    assert report["site"][-1] == "10_made_up.ipynb"
    assert "notebooks/10_made_up" in report["catalogues"]
    assert "10_made_up.ipynb" in report["extras"]

    # The README's tables and the new notebook's setup cell (its extra) are written from it.
    _run(copy, "-m", "tools.repository")
    readme = (copy / "README.md").read_text(encoding="utf-8")
    assert "| 10 | `10_made_up` | nothing: it shows" in readme
    assert "blob/main/notebooks/10_made_up.ipynb" in readme
    setup = nbformat.read(copy / "notebooks" / "10_made_up.ipynb", as_version=4).cells[0].source
    assert "gradacc-lessons[frameworks]" in setup

    # The tests that go lesson by lesson collect it.
    collected = _run(
        copy, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
        "tests/test_notebook_files.py", "tests/test_repository.py",
    )  # fmt: skip
    assert re.search(r"test_notebook_files\.py::\w+\[10\]", collected), collected[-2000:]
