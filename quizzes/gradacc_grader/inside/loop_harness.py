"""Run a student's `train_with_accumulation` on the grader's cases; runs inside the sandbox.

    python -I loop_harness.py SEED CASES   (in a folder holding student.py)

Writes result.json: {case index: {"parameters": {name: nested lists}, "max_forward":
samples in the largest forward pass}} for the cases that ran, and {"error": ...}
entries for those that raised. Only the student's
solution cell runs here, in a fresh process the grader does not trust.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path


def main(seed: int, cases: int) -> None:
    """Build the cases, run the student's cell, train each case, write result.json."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import loop_cases  # a plain module next to this file: no package import in the sandbox
    import torch

    built = [loop_cases.build_case(seed, i) for i in range(cases)]  # before student code runs
    namespace = {"__name__": "__main__", "torch": torch, "nn": torch.nn}
    results: dict = {}
    try:
        exec(compile(Path("student.py").read_text(), "loop_answer", "exec"), namespace)
        train = namespace["train_with_accumulation"]
    except BaseException:
        results["error"] = traceback.format_exc(limit=3)
        train = None
    for index, (model, optimizer, loss_fn, batches, steps) in enumerate(built):
        if train is None:
            break
        sizes: list[int] = []  # samples per forward pass: one micro-batch at a time is the point
        model.register_forward_pre_hook(
            lambda module, args, sizes=sizes: sizes.append(len(args[0]))
        )
        try:
            train(model, optimizer, loss_fn, batches, steps)
            parameters = {n: p.detach().tolist() for n, p in model.named_parameters()}
            results[str(index)] = {"parameters": parameters, "max_forward": max(sizes, default=0)}
        except BaseException:
            results[str(index)] = {"error": traceback.format_exc(limit=3)}
    Path("result.json").write_text(json.dumps(results))


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
