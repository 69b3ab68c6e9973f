"""Run a student's cell on an exercise's cases; runs INSIDE the sandbox, in a fresh process.

    python -I -B loop_harness.py [--ahead] FD

It imports torch first (started --ahead of its request, also torch._dynamo, which a
torch optimizer imports on first use: the grader is busy meanwhile), then reads its request on
stdin, {"module": an exercise module of this folder, "seed": int, "source": the student's
cell}, builds the module's cases from the seed BEFORE any student code runs, executes
the cell, and runs the function it defines on every case (scoring.outcome_of). It sends
one JSON object, {case name: outcome} or {"error": ...}, on file descriptor FD: the write
end of a pipe the grader created and reads. Never a file: this folder is the student's
code's to fill with links.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import traceback
from pathlib import Path


def main(result_fd: int, ahead: bool) -> None:
    """Import torch, read the request, grade the cell on every case, send the outcomes."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # -I left the script's folder off
    import scoring
    import torch  # the notebook's setup cell imported it: the student's cell may use it

    if ahead:
        importlib.import_module("torch._dynamo")

    request = json.load(sys.stdin)
    exercise = importlib.import_module(request["module"])
    built = exercise.cases(request["seed"])  # before the student's code can touch anything
    outcomes = run_cell(vars(exercise), scoring, built, request["source"], torch)
    with os.fdopen(result_fd, "w") as result:
        json.dump(outcomes, result)


def run_cell(exercise: dict, scoring, built: list, source: str, torch) -> dict:
    """Execute the student's cell, then its function on each case: {case name: outcome}."""
    namespace = {"__name__": "__main__", "torch": torch, "nn": torch.nn}
    try:
        exec(compile(source, "answer", "exec"), namespace)
        function = namespace[exercise["FUNCTION"]]
    except BaseException:  # noqa: BLE001 (SystemExit too: the cell must define the function)
        return {"error": traceback.format_exc(limit=3)}
    return {name: scoring.outcome_of(exercise, function, case) for name, case in built}


if __name__ == "__main__":
    main(int(sys.argv[-1]), "--ahead" in sys.argv)
