"""Pure-bfloat16 weights: what rounding does to the optimizer's update, and two ways to keep it.

A bfloat16 weight near 1 has neighbours 2⁻⁷ ≈ 0.008 apart: an update smaller than half that
gap rounds back to the weight, step after step, and is lost. Kahan summation keeps what the
rounding dropped in a second bfloat16 buffer and adds it back next step; stochastic rounding
rounds up or down at random, in proportion to the distance, so the lost parts average out.
`update_rounding_errors` applies the same small updates to the same weights each way and
measures how far each lands from the exact (float64) result.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from gradacc_lessons.checks import as_count, as_positive
from gradacc_lessons.display import Result, Table

WAYS = ("float32 weights", "bfloat16, rounded", "bfloat16, Kahan", "bfloat16, stochastic")


def stochastic_round(x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """float32 -> bfloat16, rounding up or down at random in proportion to the distance.

    bfloat16 is float32's upper 16 bits: add random low bits, then drop them.

    >>> x = torch.full((10_000,), 1 + 2**-9)  # a quarter of the way from 1 to the next bfloat16
    >>> round(stochastic_round(x, torch.Generator().manual_seed(0)).float().mean().item(), 3)
    1.002
    """
    if x.dtype != torch.float32:
        raise ValueError(f"x must be float32 (the value before rounding), got {x.dtype}")
    noise = torch.randint(0, 1 << 16, x.shape, dtype=torch.int32, generator=generator)
    bits = (x.view(torch.int32) + noise) & -65536  # keep the upper 16 bits
    return bits.view(torch.float32).to(torch.bfloat16)  # exact: the low bits are zero


def _apply(way, start, updates, generator):
    if way == "float32 weights":
        weights = start.float()
        for update in updates:
            weights = weights + update
        return weights.double()
    weights, lost = start.clone(), torch.zeros_like(start)  # both bfloat16
    for update in updates:
        exact = weights.float() + update
        if way == "bfloat16, rounded":
            weights = exact.to(torch.bfloat16)
        elif way == "bfloat16, stochastic":
            weights = stochastic_round(exact, generator)
        else:  # Kahan: add back what the last rounding dropped, keep what this one drops
            exact = exact + lost.float()
            rounded = exact.to(torch.bfloat16)
            lost, weights = (exact - rounded.float()).to(torch.bfloat16), rounded
    return weights.double()


@dataclass(frozen=True, repr=False)
class UpdateErrors(Result):
    """How far each way's total update lands from the exact one, relative to its size."""

    steps: int
    lr: float
    errors: dict  # way -> ‖update − exact update‖ / ‖exact update‖

    def table(self) -> Table:
        rows = [(way, self.errors[way]) for way in WAYS]
        title = f"{self.steps} SGD steps of lr {self.lr:g} on weights near 1"
        return Table(("weights", "update error vs exact"), rows, title)


def update_rounding_errors(
    steps: int = 1000, lr: float = 1e-3, size: int = 1000, seed: int = 0
) -> UpdateErrors:
    """`steps` updates of lr × a gradient near 1, applied to `size` weights near 1, each way.

    >>> result = update_rounding_errors(steps=100, size=100)
    >>> result.errors["bfloat16, rounded"] > 0.5 > 0.1 > result.errors["bfloat16, Kahan"]
    True
    """
    steps, size = as_count("steps", steps), as_count("size", size)
    lr = as_positive("lr", lr, "the learning rate")
    generator = torch.Generator().manual_seed(as_count("seed", seed, minimum=0))
    start = (1 + 0.1 * torch.randn(size, generator=generator)).to(torch.bfloat16)
    gradients = [1 + 0.5 * torch.randn(size, generator=generator) for _ in range(steps)]
    updates = [-lr * g for g in gradients]  # float32, each far below half a bfloat16 gap
    exact = -lr * torch.stack(gradients).double().sum(0)
    errors = {}
    for way in WAYS:
        change = _apply(way, start, updates, generator) - start.double()
        errors[way] = float((change - exact).norm() / exact.norm())
    return UpdateErrors(steps, lr, errors)
