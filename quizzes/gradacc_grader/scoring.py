"""Score a student's function case by case, in the grader's process: partial credit, feedback.

An exercise has two halves. `inside/<module>.py` goes into the sandbox and holds nothing
secret: `FUNCTION` (the name the student writes), `cases(seed)` ([(case name, case)], all drawn
from the seed) and `run(function, case)` (the student's function on a case -> a JSON-able
outcome). `exercises/<module>.py` never goes into the sandbox: `HINTS` ({language: {case
name: a hint}}), `expected(case)` (the reference outcome) and `disagrees(outcome,
reference)` (None when they agree, else the reason in a few words). `exercise(module)`
joins them into one namespace for the grader.

Outcomes holding "weights" (lists of trained parameters) are also compared here, in float64.
"""

import importlib

import torch

from gradacc_grader.feedback_text import REPORT, case_name, reason

MARKS = {True: "\u2713", False: "\u2717"}


def exercise(module):
    """Both halves of an exercise as one namespace (a dict), for the grader and the tests.

    >>> sorted(k for k in exercise("micro_batch_plan") if k.isupper())
    ['FUNCTION', 'HINTS']
    """
    cases = importlib.import_module(f"gradacc_grader.inside.{module}")
    grader = importlib.import_module(f"gradacc_grader.exercises.{module}")
    return {**vars(cases), **vars(grader)}


def outcome_of(exercise, function, case):
    """The outcome of a function on one case, or {"error": ...} if it raised (tests only)."""
    try:
        return exercise["run"](function, case)
    except Exception as error:  # any bug of the student's is a failed case, not a crash
        return {"error": f"{type(error).__name__}: {error}"[:300]}


def verdicts(exercise, outcomes, references):
    """{case name: None if right, else the reason}, for outcomes and references by case."""
    found = {}
    for name, reference in references.items():
        outcome = outcomes.get(name) if isinstance(outcomes, dict) else None
        if not isinstance(outcome, dict):
            found[name] = "no result"
        elif "error" in outcome:
            found[name] = str(outcome["error"])[:300]
        else:
            found[name] = exercise["disagrees"](outcome, reference)
            if found[name] is None and "weights" in reference:
                found[name] = weights_differ(outcome.get("weights"), reference["weights"])
    return found


def weights_differ(got, want):
    """None if two lists of weights agree, else by how much they differ.

    >>> weights_differ([[1.0, 2.0]], [[1.0, 2.0]]) is None
    True
    >>> weights_differ([[1.0, 2.5]], [[1.0, 2.0]])
    'the weights differ from one full-batch step per window by 0.5'
    >>> weights_differ([[1.0], [float("nan")]], [[1.0], [2.0]])
    'the weights are not all finite numbers (NaN or infinity)'
    """
    try:
        got = [torch.tensor(w, dtype=torch.float64) for w in got]
    except (TypeError, ValueError, RuntimeError):
        return "no weights came back"
    want = [torch.tensor(w, dtype=torch.float64) for w in want]
    if len(got) != len(want) or any(a.shape != b.shape for a, b in zip(got, want)):
        return "the weights have the wrong shapes"
    # NaN compares false with everything: Python's max() of [0.0, nan] is 0.0, and a NaN
    # weight once passed as "right". Only finite numbers can agree.
    if not all(bool(torch.isfinite(a).all()) for a in got):
        return "the weights are not all finite numbers (NaN or infinity)"
    error = max(float((a - b).abs().max()) for a, b in zip(got, want))
    scale = max(float(b.abs().max()) for b in want)
    # float64 throughout: a right loop agrees to ~1e-15 relative, every wrong recipe is off by
    # more than 1e-3 (docs/measurements.md); 1e-9 leaves room for any summation order
    if error <= 1e-9 * max(scale, 1.0):
        return None
    return f"the weights differ from one full-batch step per window by {error:.2g}"


def points_for(found, points):
    """The partial credit: the same share of the points for every case, rounded to 0.01.

    >>> points_for({"a": None, "b": "wrong", "c": None}, 3)
    2.0
    """
    right = sum(1 for reason in found.values() if reason is None)
    return round(points * right / len(found), 2)


def report(exercise, found, points, lang="en"):
    """The lines a student reads in the feedback: one per case, a hint for each failed one."""
    words, hints = REPORT[lang], exercise["HINTS"][lang]
    lines = []
    for name, why in found.items():
        shown = case_name(name, lang)
        if why is None:
            lines.append(f"{MARKS[True]} {shown}")
        else:
            why = reason(why, lang)
            lines.append(f"{MARKS[False]} {shown}: {why}. {words['hint']}: {hints[name]}")
    lines.append(f"{points_for(found, points):g} / {points} {words['total']}")
    return "\n".join(lines)


def grade(exercise, function, seed, points, lang="en"):
    """Grade a function in this process and print the report (the bank's tests; never a
    student's code, which runs only in the sandbox)."""
    built = exercise["cases"](seed)
    references = {name: exercise["expected"](case) for name, case in built}
    outcomes = {name: outcome_of(exercise, function, case) for name, case in built}
    found = verdicts(exercise, outcomes, references)
    print(report(exercise, found, points, lang))
    return points_for(found, points)
