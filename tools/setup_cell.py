"""The first code cell of every notebook: install the course where it is missing, fix seeds.

Each notebook carries a copy of SETUP_CELL (a test checks that the copies are
identical), because on Colab a notebook arrives alone and must install the course's
package before importing it. The cell is collapsed in JupyterLab and Colab (its
metadata), so that a lesson opens with its idea. After changing it, run
`python -m tools.setup_cell notebooks/*.ipynb` to update every copy.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

COURSE_URL = "git+https://github.com/gradacc/gradacc.git"  # what Colab installs
URL_VARIABLE = "GRADACC_INSTALL_URL"  # set it to install from elsewhere (a fork, a checkout)

SETUP_CELL = f"""\
# @title Setup: installs the course's package where it is missing (Colab), then fixes the seeds
import importlib.util
import os
import subprocess
import sys

if importlib.util.find_spec("gradacc_lessons") is None:
    url = os.environ.get("{URL_VARIABLE}", "{COURSE_URL}")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", url], check=True)

from gradacc_lessons import make_repeatable

make_repeatable(seed=0)  # seeds, and one CPU thread: the numbers below repeat on every run"""

# Collapsed in JupyterLab (source_hidden) and shown as a titled form in Colab (cellView).
SETUP_METADATA = {"jupyter": {"source_hidden": True}, "cellView": "form"}


def update_setup_cell(path: Path) -> bool:
    """Make the first code cell of the notebook at `path` the setup cell; True if it changed."""
    notebook = nbformat.read(path, as_version=4)
    first = next(cell for cell in notebook.cells if cell.cell_type == "code")
    wanted = {**first.metadata, **SETUP_METADATA}
    if first.source == SETUP_CELL and first.metadata == wanted:
        return False
    first.source = SETUP_CELL
    first.metadata = nbformat.from_dict(wanted)
    nbformat.write(notebook, path)
    return True


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print(name, "updated" if update_setup_cell(Path(name)) else "already up to date")
