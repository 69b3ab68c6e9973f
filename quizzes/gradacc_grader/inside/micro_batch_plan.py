"""Cases of lesson 4's exercise: `plan_micro_batches`, the largest micro-batch that fits.

A plain module (imports only the standard library): its cases and how to run a student's
function on one, and nothing more: the sandbox's harness runs it, the reference and hints are
the grader's (gradacc_grader/exercises/micro_batch_plan.py), never in the sandbox. The analytic
memory model of lesson 4: peak = floor (parameters, gradients, optimizer state)
+ micro_batch_size x activation bytes per sample. The reference tries every micro-batch size
from the largest down.
"""

import random

FUNCTION = "plan_micro_batches"


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
        micro_batch_size, accumulation_steps = plan
        return {"plan": [int(micro_batch_size), int(accumulation_steps)]}
    except (TypeError, ValueError):
        return {"plan": repr(plan)[:100]}
