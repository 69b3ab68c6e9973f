"""Run a notebook headless, top to bottom, in its own folder: the course's one execution helper.

The site builder (`tools.site`) and every notebook test call `execute_notebook`.
"""

from __future__ import annotations

import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def execute_notebook(path: Path, timeout: int = 600, kernel: str = "python3"):
    """Run the notebook at `path` in its own folder; return (executed notebook, seconds)."""
    path = Path(path)
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook, timeout=timeout, kernel_name=kernel, resources={"metadata": {"path": path.parent}}
    )
    start = time.perf_counter()
    client.execute()
    return notebook, time.perf_counter() - start
