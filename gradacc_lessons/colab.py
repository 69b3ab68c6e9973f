"""The first code cell of every lesson: install the course where it is missing (Colab).

The repository URL is defined here, once. Each notebook carries a copy of
SETUP_CELL (a test checks that the copies are identical), because on Colab the
notebook arrives alone and must install this package before importing it.
After changing it, `python -m gradacc_lessons.colab notebooks/*.ipynb` updates the copies.
"""

import sys
from pathlib import Path

COURSE_URL = "git+https://github.com/gradacc/gradacc.git"
URL_VARIABLE = "GRADACC_INSTALL_URL"  # set it to install from elsewhere (a fork, a local checkout)

SETUP_CELL = f"""\
# Setup: install the course's support package if it is missing (on Colab, for instance).
import importlib.util
import os
import subprocess
import sys

if importlib.util.find_spec("gradacc_lessons") is None:
    url = os.environ.get("{URL_VARIABLE}", "{COURSE_URL}")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", url], check=True)
if "google.colab" in sys.modules:  # Colab draws ipywidgets 8 with its custom widget manager
    from google.colab import output

    output.enable_custom_widget_manager()

from gradacc_lessons import pick_device, seed_everything

device = pick_device()  # the GPU when there is one
print("running on", device)"""


def update_setup_cell(path: Path) -> bool:
    """Make the first code cell of the notebook at `path` SETUP_CELL; True if it changed."""
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    first = next(cell for cell in notebook.cells if cell.cell_type == "code")
    if first.source == SETUP_CELL:
        return False
    first.source = SETUP_CELL
    nbformat.write(notebook, path)
    return True


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print(name, "updated" if update_setup_cell(Path(name)) else "already up to date")
