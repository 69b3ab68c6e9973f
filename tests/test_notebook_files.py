"""The lessons as files: committed in the form JupyterLab saves, and kept clean by git's filter.

Opening a lesson in JupyterLab must not change it, and running it must not show in
`git status`. JupyterLab saves through jupyter_server's contents manager, which writes
`nbformat.write(nb, version=NO_CONVERT)` (jupyter_server 2.x,
services/contents/fileio.py, `_save_notebook`): nbformat's JSON (indent 1, sorted keys,
no ASCII escapes) and a final newline. On connecting, it writes the kernel's spec and the
kernel's `language_info` into the metadata. The committed lessons hold exactly that, but the
Python version (the one part that differs between machines), which the nbstripout filter
(`make git-filter`, .gitattributes) strips along with outputs, counts and widget state.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from ipykernel.ipkernel import IPythonKernel
from jupyter_client.kernelspec import KernelSpecManager

from tools.site import lesson_paths

from .conftest import ROOT

LESSONS = lesson_paths()


@pytest.mark.parametrize("path", LESSONS, ids=lambda path: path.name[:2])
def test_a_lesson_is_committed_as_jupyterlab_saves_it(path):
    committed = path.read_text(encoding="utf-8")
    notebook = nbformat.reads(committed, as_version=nbformat.NO_CONVERT)
    # what JupyterLab writes when it saves the notebook unchanged
    assert committed == nbformat.writes(notebook, version=nbformat.NO_CONVERT) + "\n"
    assert (notebook.nbformat, notebook.nbformat_minor) == (4, nbformat.current_nbformat_minor)
    assert all(cell.get("id") for cell in notebook.cells), "every cell has an id"
    # what JupyterLab writes into the metadata when the kernel connects
    spec = KernelSpecManager().get_kernel_spec("python3")
    assert notebook.metadata.kernelspec == {
        "display_name": spec.display_name,
        "language": spec.language,
        "name": "python3",
    }
    language_info = dict(IPythonKernel.language_info)
    del language_info["version"]  # the filter strips it: it names this machine's Python
    assert notebook.metadata.language_info == language_info


def git(folder, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=folder, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow  # git, make and nbstripout in processes (20 s)
def test_a_lesson_run_and_saved_shows_no_change_and_stages_clean(tmp_path):
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.email", "test@example.org")
    git(tmp_path, "config", "user.name", "test")
    # the Makefile's own target, with this venv's nbstripout
    bin_folder = Path(sys.executable).parent
    subprocess.run(
        ["make", "-s", "-f", str(ROOT / "Makefile"), "git-filter", f"BIN={bin_folder}"],
        cwd=tmp_path,
        check=True,
    )
    shutil.copy(ROOT / ".gitattributes", tmp_path)
    lesson = tmp_path / LESSONS[0].name
    shutil.copy(LESSONS[0], lesson)
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "lesson")
    committed = lesson.read_bytes()

    # What JupyterLab saves after a run: outputs, counts, widget state, timings, the version.
    notebook = nbformat.read(lesson, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    for count, cell in enumerate(code, start=1):
        cell.execution_count = count
        cell.outputs = [nbformat.v4.new_output("stream", text=f"output {count}\n")]
        cell.metadata["execution"] = {"iopub.status.busy": "2026-12-01T17:00:00.000Z"}
    notebook.metadata.widgets = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    notebook.metadata.language_info["version"] = "3.12.1"
    nbformat.write(notebook, lesson)
    assert lesson.read_bytes() != committed

    # No diff. (`git status` still lists the file until it is added: git takes a file whose
    # size changed for a changed file without reading it through the filter.)
    assert git(tmp_path, "diff", "--stat") == ""
    git(tmp_path, "add", lesson.name)
    assert git(tmp_path, "status", "--porcelain") == ""
    assert git(tmp_path, "show", f":{lesson.name}").encode() == committed
