"""Cases of lesson 4's exercise: `plan_micro_batches`, the largest micro-batch that fits.

A plain module (imports only the standard library): pasted into the hidden test, imported by
the sandbox's harness and by the grader's re-check. The analytic memory model of lesson 4:
peak = floor (parameters, gradients, optimizer state) + micro_batch x activation bytes per
sample. The reference tries every micro-batch size from the largest down.
"""

import random

FUNCTION = "plan_micro_batches"
HINTS = {
    "en": {
        "the whole batch fits": "if the effective batch itself fits, no accumulation is needed",
        "a split is needed": "only sizes that divide the effective batch make equal windows; "
        "among those that fit, the largest wastes the least time",
        "an exact fit": "a plan whose peak equals the budget still fits",
        "a budget below the floor": "when not even one sample fits, no plan exists: say so "
        "with a ValueError instead of returning one",
    },
    "yo": {
        "the whole batch fits": "bí ipele tó munadoko fúnra rẹ̀ bá baamu, kò sí ìkójọpọ̀ tó yẹ",
        "a split is needed": "àwọn ìwọ̀n tó pín ipele tó munadoko nìkan ló ń ṣe fèrèsé dọ́gba",
        "an exact fit": "ètò tí tente rẹ̀ dọ́gba pẹ̀lú ìsúná ṣì baamu",
        "a budget below the floor": "bí àpẹẹrẹ kan kò bá baamu, kò sí ètò: sọ ọ́ pẹ̀lú ValueError",
    },
}


def cases(seed):
    """[(case name, case)]: fits whole, needs a split, fits exactly, cannot fit.

    >>> [name for name, _ in cases(0)]  # doctest: +NORMALIZE_WHITESPACE
    ['the whole batch fits', 'a split is needed', 'an exact fit', 'a budget below the floor']
    """
    rng = random.Random(seed)
    batch = rng.choice([48, 72, 96, 120, 144])
    floor = rng.randint(200, 900) * 2**20
    per_sample = rng.randint(3, 40) * 2**20
    divisors = [b for b in range(1, batch + 1) if batch % b == 0]
    # a divisor in the middle, with a gap to the next one: the budget ends inside that gap
    middle = rng.choice([b for b, c in zip(divisors[2:-2], divisors[3:-1]) if c - b > 1])
    gap = divisors[divisors.index(middle) + 1] - middle
    room = middle + rng.randint(1, gap - 1)
    return [
        ("the whole batch fits", _case(batch, floor, per_sample, floor + batch * per_sample * 2)),
        ("a split is needed", _case(batch, floor, per_sample, floor + room * per_sample)),
        ("an exact fit", _case(batch, floor, per_sample, floor + middle * per_sample)),
        ("a budget below the floor", _case(batch, floor, per_sample, floor - per_sample)),
    ]


def _case(batch, floor, per_sample, budget):
    return {
        "effective_batch": batch,
        "floor_bytes": floor,
        "bytes_per_sample": per_sample,
        "budget_bytes": budget,
    }


def run(function, case):
    """The student's plan, or the exception it raised."""
    try:
        plan = function(**case)
    except ValueError:
        return {"raised": "ValueError"}
    try:
        micro_batch, steps = plan
        return {"plan": [int(micro_batch), int(steps)]}
    except (TypeError, ValueError):
        return {"plan": repr(plan)[:100]}


def expected(case):
    """The largest micro-batch dividing the effective batch whose peak fits, and N."""
    batch = case["effective_batch"]
    for size in range(batch, 0, -1):
        peak = case["floor_bytes"] + size * case["bytes_per_sample"]
        if batch % size == 0 and peak <= case["budget_bytes"]:
            return {"plan": [size, batch // size]}
    return {"raised": "ValueError"}


def disagrees(outcome, reference):
    """None if the student's plan (or refusal) is the reference's."""
    if outcome == reference:
        return None
    if "raised" in reference:
        return f"this budget cannot fit one sample, yet the function returned {outcome.get('plan')}"
    if "raised" in outcome:
        return "the function raised ValueError, though a plan fits"
    return f"the plan (micro_batch, accumulation_steps) is {outcome.get('plan')}, not the best one"
