"""Grade a student's function case by case: one line per named case, partial credit.

A plain module (it imports nothing of the package): the builder pastes it into the hidden
test of each coding exercise, and the grader's trusted re-check imports it. An exercise is a
module (a namespace here) defining:

- `FUNCTION`: the name of the function the student writes;
- `HINTS`: {language: {case name: a hint that points at the idea}};
- `cases(seed)`: [(case name, case)], everything drawn from `seed`;
- `run(function, case)`: the student's function on a case -> a JSON-able outcome;
- `expected(case)`: the reference outcome, computed without the student's code;
- `disagrees(outcome, reference)`: None when they agree, else the reason in a few words.

Outcomes holding "weights" (lists of trained parameters) are also compared here, in float64.
"""

import torch

MARKS = {True: "\u2713", False: "\u2717"}
WORDS = {
    "en": {"hint": "Hint", "total": "points", "reasons": {}},
    "yo": {
        "hint": "Ìtọ́sọ́nà",
        "total": "máàkì",
        "reasons": {  # the reasons an exercise module gives, in Yoruba where it has them
            "the model must see one micro-batch at a time": "àwòṣe náà gbọ́dọ̀ rí micro-batch "
            "kan ní ẹ̀ẹ̀kan",
            "the weights differ from one full-batch step per window by": "àwọn ìwọ̀n yàtọ̀ sí "
            "igbesẹ ipele kíkún kan fún fèrèsé kọ̀ọ̀kan ní",
        },
    },
}


def outcome_of(exercise, function, case):
    """The outcome of the student's function on one case, or {"error": ...} if it raised."""
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
    """
    try:
        got = [torch.tensor(w, dtype=torch.float64) for w in got]
    except (TypeError, ValueError, RuntimeError):
        return "no weights came back"
    want = [torch.tensor(w, dtype=torch.float64) for w in want]
    if len(got) != len(want) or any(a.shape != b.shape for a, b in zip(got, want)):
        return "the weights have the wrong shapes"
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
    words, hints = WORDS[lang], exercise["HINTS"][lang]
    lines = []
    for name, reason in found.items():
        if reason is None:
            lines.append(f"{MARKS[True]} {name}")
        else:
            for english, translated in words["reasons"].items():
                reason = reason.replace(english, translated)
            lines.append(f"{MARKS[False]} {name}: {reason}. {words['hint']}: {hints[name]}")
    lines.append(f"{points_for(found, points):g} / {points} {words['total']}")
    return "\n".join(lines)


def grade(exercise, function, seed, points, lang="en"):
    """Grade in the student's kernel: references first, then the student's function; print."""
    built = exercise["cases"](seed)
    references = {name: exercise["expected"](case) for name, case in built}
    outcomes = {name: outcome_of(exercise, function, case) for name, case in built}
    found = verdicts(exercise, outcomes, references)
    print(report(exercise, found, points, lang))
    return points_for(found, points)
