"""The inputs the trusted re-check of the loop exercise trains on, built from a seed.

Imported both by the grader and, as a plain module, by the harness in the sandbox,
so that both build the very same models, optimizers and micro-batches.
"""

from __future__ import annotations

import random

import torch
from torch import nn

MICRO_BATCH = 4  # samples per micro-batch (the exercise promises equal sizes)


def case_shapes(seed: int) -> list[tuple[int, int]]:
    """(number of micro-batches, accumulation_steps) of each case; one per kind of window.

    >>> [(n % s == 0) for n, s in case_shapes(0)][:3]
    [True, False, True]
    """
    rng = random.Random(seed)
    steps = rng.randint(2, 4)
    return [
        (steps * rng.randint(2, 3), steps),  # whole windows only
        (steps * 2 + rng.randint(1, steps - 1), steps),  # a shorter last window
        (rng.randint(3, 5), 1),  # no accumulation at all
    ]


def build_case(seed: int, index: int):
    """(model, optimizer, loss_fn, micro_batches, accumulation_steps) of case `index`.

    The model's .grad buffers hold stale values: a loop must clear them first.

    >>> model, optimizer, loss_fn, batches, steps = build_case(0, 1)
    >>> len(batches) % steps != 0
    True
    """
    count, steps = case_shapes(seed)[index]
    g = torch.Generator().manual_seed(seed * 10 + index)
    model = nn.Sequential(nn.Linear(5, 6), nn.Tanh(), nn.Linear(6, 2)).double()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(0.5 * torch.randn(p.shape, generator=g, dtype=torch.float64))
            p.grad = torch.randn(p.shape, generator=g, dtype=torch.float64)
    batches = [
        (
            torch.randn(MICRO_BATCH, 5, generator=g, dtype=torch.float64),
            torch.randn(MICRO_BATCH, 2, generator=g, dtype=torch.float64),
        )
        for _ in range(count)
    ]
    # Momentum remembers every step: one step too many or too few shows in the weights.
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return model, optimizer, nn.MSELoss(), batches, steps
