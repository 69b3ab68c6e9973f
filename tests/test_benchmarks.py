"""Timings, printed by `make bench` as ratios measured in one run; never part of `make test`.

A shared machine makes seconds meaningless from one run to the next: each benchmark
prints what it measured next to a reference measured in the same run. `make bench` also
writes them to build/bench-report.md, with the machine and the date: the one place the
course's timings live (the README points there instead of quoting seconds that go stale).
"""

from __future__ import annotations

import datetime
import os
import platform
import time

import nbformat
import pytest
import torch
from nbclient import NotebookClient

from gradacc_lessons.data import make_classification
from gradacc_lessons.device import seeded
from gradacc_lessons.models import MLP
from gradacc_lessons.timing import time_effective_batch
from tools.notebooks import execute_notebook

from .conftest import NOTEBOOKS, ROOT

pytestmark = pytest.mark.benchmark

REPORT = ROOT / "build" / "bench-report.md"


@pytest.fixture(scope="module")
def report():
    """Lines of the report; written to build/bench-report.md once the benchmarks have run."""
    lines: list[str] = []
    yield lines
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    machine = f"{platform.machine()}, {os.cpu_count()} CPU cores, torch {torch.__version__}"
    header = ["# Benchmarks", "", f"Written by `make bench` on {now} ({machine}).", ""]
    REPORT.parent.mkdir(exist_ok=True)
    REPORT.write_text("\n".join(header + lines) + "\n", encoding="utf-8")


def _say(report: list[str], line: str) -> None:
    print(line)
    report.append(f"- {line}")


def test_lessons_time_against_the_first(report):
    # The lessons aim at <= 30 s each on an idle 2-core machine.
    seconds = {}
    for path in sorted(NOTEBOOKS.glob("0[1-9]_*.ipynb")):
        seconds[path.stem] = execute_notebook(path).seconds
    first = next(iter(seconds.values()))
    for name, value in seconds.items():
        _say(report, f"{name}: {value:.1f} s ({value / first:.2f}x lesson 1)")
    assert len(seconds) >= 7


def test_accumulation_costs_time_as_n_grows(report):
    x, y = make_classification(samples=256, features=256, classes=10)
    with seeded(0):
        model = MLP(256, 10, hidden=1024)
    optimizer = torch.optim.Adam(model.parameters())
    result = time_effective_batch(
        model, optimizer, torch.nn.functional.cross_entropy, x, y, [1, 4, 16], 5
    )
    ratios = ", ".join(f"{r:.2f}x" for r in result.slowdown)
    _say(report, f"effective batch 256, N = 1, 4, 16: slowdown against N=1 {ratios}")
    saving = ", ".join(f"{r:.2f}x" for r in result.saving_over_small_batches)
    _say(report, f"small batches / accumulated, N = 1, 4, 16: {saving}")
    # 16 passes of 16 samples cannot beat one pass of 256 by much, even on a busy machine
    assert result.slowdown[2] > 1.0


OUTPUT_WIDGET = """import ipywidgets as widgets
from IPython.display import HTML, display
out = widgets.Output()
for i in range(20):
    with out:
        out.clear_output(wait=True)
        display(HTML(f"<b>{i}</b>"))
out"""


def test_output_widgets_no_longer_wait_for_the_cell_timeout(tmp_path, report):
    """The lesson 1 stall: nbclient's plain client against tools/notebooks.py, same cells."""
    timeout, cells = 10, 20
    path = tmp_path / "widgets.ipynb"
    nbformat.write(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(OUTPUT_WIDGET)] * cells), path
    )

    def late_cells(run) -> int:  # cells that waited for (nearly) the whole cell timeout
        durations = []
        for cell in run.cells:
            start = time.monotonic()
            run.execute_cell(cell, run.nb.cells.index(cell))
            durations.append(time.monotonic() - start)
        return sum(d > 0.8 * timeout for d in durations)

    plain = NotebookClient(
        nbformat.read(path, as_version=4), timeout=timeout, kernel_name="python3"
    )
    plain.cells = plain.nb.cells
    with plain.setup_kernel():
        late_plain = late_cells(plain)
    start = time.monotonic()
    execute_notebook(path, cell_timeout=timeout)
    helper_seconds = time.monotonic() - start
    _say(
        report,
        f"cells that waited for the {timeout}-s timeout: nbclient's client {late_plain}/{cells}, "
        f"tools/notebooks.py: {helper_seconds:.1f} s for all {cells} cells",
    )
    assert helper_seconds < 0.8 * timeout * cells
