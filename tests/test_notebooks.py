"""The one execution helper (tools/notebooks.py): values from the kernel, and failures that
name the notebook and the cell instead of hanging; and the tests' one execution of each lesson
per run (tests/lessons.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import nbformat
import pytest

from tools import notebooks, setup_cell
from tools.notebooks import NotebookError, execute_notebook

from .conftest import ROOT
from .lessons import LessonRuns

pytestmark = pytest.mark.slow  # each test starts a kernel


def notebook(folder, name: str, *sources: str):
    path = folder / name
    nbformat.write(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources]), path
    )
    return path


def test_values_come_from_the_kernel_and_the_notebook_keeps_its_cells(tmp_path, capfd):
    path = notebook(tmp_path, "sum.ipynb", "x = 41 + 1", "print('done')")
    run = execute_notebook(path, values=["x", "[x, x / 2]"])
    assert run.values == {"x": 42, "[x, x / 2]": [42, 21.0]}
    assert [c.source for c in run.notebook.cells] == ["x = 41 + 1", "print('done')"]
    assert run.notebook.cells[1].outputs[0]["text"] == "done\n"
    # The kernel talks over IPC: ipykernel warns on stderr about TCP only.
    assert "without encryption" not in capfd.readouterr().err


def test_a_cell_past_its_timeout_names_the_notebook_and_the_cell(tmp_path):
    path = notebook(tmp_path, "slow.ipynb", "import time", "time.sleep(60)")
    with pytest.raises(
        NotebookError, match=r"slow\.ipynb, cell 1 \('time\.sleep\(60\)'\), ran past 3 s"
    ):
        execute_notebook(path, cell_timeout=3)


def test_a_failing_cell_names_the_notebook_the_cell_and_the_error(tmp_path):
    path = notebook(tmp_path, "error.ipynb", "1 / 0")
    with pytest.raises(NotebookError, match=r"error\.ipynb, cell 0 .* raised ZeroDivisionError"):
        execute_notebook(path)


def test_a_kernel_that_never_answers_fails_at_start_up(tmp_path, monkeypatch):
    spec = tmp_path / "kernels" / "mute"
    spec.mkdir(parents=True)
    argv = ["python3", "-c", "import time; time.sleep(60)", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "mute"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    path = notebook(tmp_path, "any.ipynb", "1")
    with pytest.raises(NotebookError, match=r"any\.ipynb: the kernel did not start within 2 s"):
        execute_notebook(path, startup_timeout=2, kernel="mute")


@pytest.mark.parametrize("main", [notebooks.main, setup_cell.main])
def test_the_command_lines_name_a_missing_notebook(main, tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        main([str(tmp_path / "lesson_99.ipynb")])
    assert stopped.value.code == 2
    said = capsys.readouterr().err
    assert "no such notebook:" in said and "lesson_99.ipynb" in said


def test_a_lesson_is_executed_once_per_run_by_whichever_worker_asks_first(tmp_path):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    notebook(folder, "a.ipynb", "import os\nx = os.getpid()")
    runs = tmp_path / "run"
    # Two workers ask at once, for different values: the lesson runs once, with both (the
    # registry of the run, which every worker fills at collection, names both).
    ask = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from tests.lessons import LessonRuns, register\n"
        "register('a.ipynb', ['x', 'x + 1'])\n"
        "run = LessonRuns(Path(sys.argv[1]), Path(sys.argv[2])).get('a.ipynb', [sys.argv[3]])\n"
        "print(json.dumps([run.started, run.values]))"
    )
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", ask, str(runs), str(folder), expression],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        for expression in ("x", "x + 1")
    ]
    (started, values), (started_too, values_too) = [
        json.loads(worker.communicate(timeout=300)[0]) for worker in workers
    ]
    assert started == started_too and values == values_too
    assert values["x + 1"] == values["x"] + 1 and values["x"] != os.getpid()
    # Asked again in this process for what it holds: read back, not run again.
    again = LessonRuns(runs, folder).get("a.ipynb", ["x"])
    assert again.started == started and again.values["x"] == values["x"]
    assert again.notebook.cells[0].source.startswith("import os")
    # A lesson that fails: its error is kept and raised to every test that asks.
    notebook(folder, "b.ipynb", "1 / 0")
    for _ in range(2):
        with pytest.raises(NotebookError, match=r"b\.ipynb, cell 0 .* raised ZeroDivisionError"):
            LessonRuns(runs, folder).get("b.ipynb")
    assert len(list(runs.glob("b-*.json"))) == 1


def test_a_lesson_edited_during_the_run_is_executed_again(tmp_path):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    notebook(folder, "a.ipynb", "x = 1")
    runs = LessonRuns(tmp_path / "run", folder)
    assert runs.get("a.ipynb", ["x"]).values == {"x": 1}
    notebook(folder, "a.ipynb", "x = 2")
    assert runs.get("a.ipynb", ["x"]).values == {"x": 2}
