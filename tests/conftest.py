"""Where the lessons live, and their one execution per test run (the fixtures every test gets
are in ../conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # imported by the fixture: make check's xdist controller runs no test
    from .lessons import LessonRuns

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"


@pytest.fixture(scope="session")
def lesson_runs(tmp_path_factory) -> LessonRuns:
    """The lessons executed in this run (tests/lessons.py), shared by the xdist workers."""
    from .lessons import LessonRuns

    run = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):  # each worker's folder is inside the run's
        run = run.parent
    return LessonRuns(run / "executed-lessons")


def printed(notebook) -> str:
    """Everything an executed notebook printed or showed as plain text, in order."""
    return "".join(
        output.get("text", "") + output.get("data", {}).get("text/plain", "")
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
    )
