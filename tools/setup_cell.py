"""The first code cell of every notebook: install the course where it is missing, fix seeds.

Each notebook carries a copy of SETUP_CELL (a test checks that the copies are
identical), because on Colab a notebook arrives alone and must install the course's
package before importing it. The cell is collapsed in JupyterLab and Colab (its
metadata), so that a lesson opens with its idea. After changing it, or the repository in
pyproject.toml's `[tool.gradacc]`, run `python -m tools.repository` to update every copy.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

from gradacc_lessons.lessons import LESSONS
from tools.course_config import course_repository

COURSE_URL = course_repository().install_url  # what Colab installs: pyproject's [tool.gradacc]
URL_VARIABLE = "GRADACC_INSTALL_URL"  # set it to install from elsewhere (a fork, a checkout)

_INSTALL = f"""\
# @title Setup: installs the course's package where it is missing (Colab), then fixes the seeds
import importlib.util
import os
import subprocess
import sys

if importlib.util.find_spec("gradacc_lessons") is None:
    url = os.environ.get("{URL_VARIABLE}", "{COURSE_URL}")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", url], check=True)
"""
_SEEDS = """
os.environ.setdefault("KINETO_LOG_LEVEL", "6")  # torch's profiler (memory measurements): quiet
from gradacc_lessons import make_repeatable

make_repeatable(seed=0)  # seeds, and one CPU thread: results repeat on every run (times vary)"""
SETUP_CELL = _INSTALL + _SEEDS

# Lessons that need one of the course's optional extras (pyproject.toml): the extra, and
# the modules it brings, as gradacc_lessons.lessons declares them. Their setup cell also
# installs the extra where one is missing.
EXTRAS = {
    lesson.notebook: (lesson.extra, lesson.extra_modules) for lesson in LESSONS if lesson.extra
}


def setup_cell_for(notebook: str) -> str:
    """The setup cell of the notebook named `notebook`: SETUP_CELL, plus the lesson's extra.

    >>> setup_cell_for("01_accumulation_is_a_full_batch.ipynb") == SETUP_CELL
    True
    >>> "gradacc-lessons[frameworks]" in setup_cell_for("07_frameworks.ipynb")
    True
    """
    if notebook not in EXTRAS:
        return SETUP_CELL
    extra, modules = EXTRAS[notebook]
    names = ", ".join(f'"{name}"' for name in modules)  # as ruff formats a tuple of strings
    names += "," if len(modules) == 1 else ""  # a tuple of one needs its comma
    install_extra = f"""
needed = ({names})  # this lesson's optional extra
if any(importlib.util.find_spec(name) is None for name in needed):
    extra = "gradacc-lessons[{extra}]"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", extra], check=True)
"""
    return _INSTALL + install_extra + _SEEDS


# Collapsed in JupyterLab (source_hidden) and shown as a titled form in Colab (cellView).
SETUP_METADATA = {"jupyter": {"source_hidden": True}, "cellView": "form"}


def update_setup_cell(path: Path) -> bool:
    """Make the first code cell of the notebook at `path` the setup cell; True if it changed."""
    notebook = nbformat.read(path, as_version=4)
    first = next(cell for cell in notebook.cells if cell.cell_type == "code")
    wanted = {**first.metadata, **SETUP_METADATA}
    source = setup_cell_for(path.name)
    if first.source == source and first.metadata == wanted:
        return False
    first.source = source
    first.metadata = nbformat.from_dict(wanted)
    nbformat.write(notebook, path)
    return True


def main(argv: list[str] | None = None) -> int:
    """Update the setup cell of each notebook named on the command line."""
    from tools.notebooks import notebook_paths  # nbclient and zmq: only for the command line

    description = (
        "Make each notebook's first code cell the course's setup cell "
        "(python -m tools.repository updates every lesson at once)."
    )
    for path in notebook_paths(argv, "tools.setup_cell", description):
        print(path, "updated" if update_setup_cell(path) else "already up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
