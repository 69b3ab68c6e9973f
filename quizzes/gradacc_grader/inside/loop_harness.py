"""Run a student's notebook cells, then its function on an exercise's cases; runs INSIDE the
sandbox, in a fresh process.

    python -I -B loop_harness.py [--ahead] FD

It imports torch first (started --ahead of its request, also torch._dynamo, which a
torch optimizer imports on first use: the grader is busy meanwhile), then reads its request on
stdin, {"module": an exercise module of this folder, "seed": int, "cells": [the notebook's
code cells, in order, up to the exercise's test cell]}, builds the module's cases from the
seed BEFORE any student code runs, executes the cells in one namespace as the kernel did, in an
IPython shell (a cell that raises is skipped, as nbgrader goes on), and runs the function they
define on every case. It sends one JSON object, {case name: outcome} or {"error": ...}, on file
descriptor FD: the write end of a pipe the grader created and reads. Never a file: this folder
is the student's code's to fill with links.

Nothing here knows what a case should produce: the reference is the grader's, outside. Code
in this process can send anything; the grader compares it with references it computes itself.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import traceback
from pathlib import Path


def main(result_fd: int, ahead: bool) -> None:
    """Import torch, read the request, run the cells and the function, send the outcomes."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # -I left the script's folder off
    import torch  # the notebook's setup cell imported it: the student's cells may use it

    if ahead:
        importlib.import_module("torch._dynamo")

    request = json.load(sys.stdin)
    exercise = importlib.import_module(request["module"])
    built = exercise.cases(request["seed"])  # before the student's code can touch anything
    outcomes = run_cells(exercise, built, request["cells"], torch)
    with os.fdopen(result_fd, "w") as result:
        json.dump(outcomes, result)


def run_cells(exercise, built: list, cells: list[str], torch) -> dict:
    """Execute the cells in order, then the function on each case: {case name: outcome}."""
    namespace = {"__name__": "__main__", "torch": torch, "nn": torch.nn}
    run = _cell_runner(namespace)
    last = "no cell ran"
    for cell in cells:
        last = run(cell) or last
    function = namespace.get(exercise.FUNCTION)
    if not callable(function):
        return {"error": f"{exercise.FUNCTION} is not defined: {last.strip()[-2000:]}"}
    return {name: outcome_of(exercise, function, case) for name, case in built}


def _cell_runner(namespace: dict):
    """A function that runs one cell in `namespace` as the kernel did; returns its error or None.

    An IPython shell, as in the kernel, so that magics (`%%time`, `%matplotlib inline`) and
    `display` work as they did there; plain `exec` where IPython is missing.
    """
    try:
        from IPython.core.interactiveshell import InteractiveShell
        from traitlets.config import Config
    except ImportError:
        return lambda cell: _exec(cell, namespace)
    config = Config()
    config.HistoryManager.enabled = False  # nothing written to the sandbox's home
    shell = InteractiveShell(user_ns=namespace, config=config)

    def run(cell: str) -> str | None:
        result = shell.run_cell(cell, silent=True, store_history=False)
        error = result.error_before_exec or result.error_in_exec
        return None if error is None else "".join(traceback.format_exception(error, limit=3))

    return run


def _exec(cell: str, namespace: dict) -> str | None:
    try:
        exec(compile(cell, "answer", "exec"), namespace)
    except BaseException:  # noqa: BLE001 (a cell's bug or exit skips that cell, as in the kernel)
        return traceback.format_exc(limit=3)
    return None


def outcome_of(exercise, function, case) -> dict:
    """The outcome of the student's function on one case, or {"error": ...} if it raised."""
    try:
        return exercise.run(function, case)
    except Exception as error:  # any bug of the student's is a failed case, not a crash
        return {"error": f"{type(error).__name__}: {error}"[:300]}


if __name__ == "__main__":
    main(int(sys.argv[-1]), "--ahead" in sys.argv)
