"""Cases of the FAQ 3 exercise: `train_with_accumulation`, one optimizer step per window.

A plain module (imports only torch): its cases and how to run a student's function on one, and
nothing more: the sandbox's harness runs it, the reference and hints are the grader's
(gradacc_grader/exercises/window_loop.py), never in the sandbox. Every case trains a small
float64 network from the same start with SGD and momentum (momentum remembers every step, so one
step too many or too few shows in the weights); the reference trains it on each window
concatenated into one batch.
"""

import random

import torch

FUNCTION = "train_with_accumulation"
MICRO_BATCH_SIZE = 4  # samples per micro-batch: the exercise promises equal sizes


def cases(seed):
    """[(case name, case)]: whole windows, a shorter last window, stale gradients.

    >>> [name for name, _ in cases(0)]  # doctest: +NORMALIZE_WHITESPACE
    ['whole windows', 'a short last window', 'leftover gradients']
    """
    rng = random.Random(seed)
    accumulation_steps = rng.randint(2, 4)
    shapes = [
        ("whole windows", accumulation_steps * rng.randint(2, 3), False),
        (
            "a short last window",
            accumulation_steps * 2 + rng.randint(1, accumulation_steps - 1),
            False,
        ),
        ("leftover gradients", accumulation_steps * 2, True),
    ]
    return [
        (name, _case(seed * 10 + i, count, accumulation_steps, stale))
        for i, (name, count, stale) in enumerate(shapes)
    ]


def _case(seed, count, accumulation_steps, stale):
    g = torch.Generator().manual_seed(seed)
    start = [0.5 * torch.randn(shape, generator=g, dtype=torch.float64) for shape in _SHAPES]
    leftover = [torch.randn(shape, generator=g, dtype=torch.float64) for shape in _SHAPES]
    batches = [
        (
            torch.randn(MICRO_BATCH_SIZE, 5, generator=g, dtype=torch.float64),
            torch.randn(MICRO_BATCH_SIZE, 2, generator=g, dtype=torch.float64),
        )
        for _ in range(count)
    ]
    return {
        "start": start,
        "leftover": leftover if stale else None,
        "batches": batches,
        "accumulation_steps": accumulation_steps,
    }


_SHAPES = [(6, 5), (6,), (2, 6), (2,)]


def make_model(case):
    model = torch.nn.Sequential(
        torch.nn.Linear(5, 6), torch.nn.Tanh(), torch.nn.Linear(6, 2)
    ).double()
    with torch.no_grad():
        for p, value in zip(model.parameters(), case["start"]):
            p.copy_(value)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return model, optimizer


def run(function, case):
    """Train with the student's function; the weights and the largest forward pass."""
    model, optimizer = make_model(case)
    if case["leftover"] is not None:
        for p, value in zip(model.parameters(), case["leftover"]):
            p.grad = value.clone()
    sizes = []  # samples per forward pass: one micro-batch at a time is the point
    model.register_forward_pre_hook(lambda module, args: sizes.append(len(args[0])))
    batches = [(x.clone(), y.clone()) for x, y in case["batches"]]
    function(model, optimizer, torch.nn.MSELoss(), batches, case["accumulation_steps"])
    weights = [p.detach().tolist() for p in model.parameters()]
    return {"weights": weights, "largest_forward": max(sizes, default=0)}
