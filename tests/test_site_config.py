"""The site's Sphinx configuration (docs/conf.py) on a notebook made for it: fast, no browser."""

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow  # a Sphinx build in a process
def test_a_print_split_over_two_stream_messages_is_one_output(tmp_path):
    """A busy kernel can send a print's text and its newline apart; the page shows one output,
    not a second, empty one (the site test's "empty output areas" once caught that in lesson 1)."""
    cell = nbformat.v4.new_code_cell("print(f'x = {1}')")
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="x = 1"),
        nbformat.v4.new_output("stream", name="stdout", text="\n"),
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Lesson"), cell])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    source = tmp_path / "source"
    source.mkdir()
    nbformat.write(notebook, source / "index.ipynb")
    build = [sys.executable, "-m", "sphinx", "-q", "-c", ROOT / "docs", source, tmp_path / "html"]
    done = subprocess.run(build, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "html" / "index.html").read_text(encoding="utf-8")
    assert page.count('class="output stream') == 1
    assert "x = 1" in page
