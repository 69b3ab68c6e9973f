"""The first code cell of every lesson: install the course where it is missing (Colab).

The repository URL is defined here, once. Each notebook carries a copy of
SETUP_CELL (a test checks that the copies are identical), because on Colab the
notebook arrives alone and must install this package before importing it.
"""

COURSE_URL = "git+https://github.com/gradacc/gradacc.git"
URL_VARIABLE = "GRADACC_INSTALL_URL"  # set it to install from elsewhere (a fork, a local checkout)

SETUP_CELL = f"""\
# Setup: install the course's support package if it is missing (on Colab, for instance).
import importlib.util, os, subprocess, sys

if importlib.util.find_spec("gradacc_lessons") is None:
    url = os.environ.get("{URL_VARIABLE}", "{COURSE_URL}")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", url], check=True)

from gradacc_lessons import pick_device, seed_everything

device = pick_device()  # the GPU when there is one
print("running on", device)"""
