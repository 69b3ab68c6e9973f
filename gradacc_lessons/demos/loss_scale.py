"""What forgetting `/N` does: a loss N times too large, under SGD and under AdamW (lesson 2).

SGD's update grows N-fold with the loss; Adam's normalised update barely moves, until
gradient clipping turns the larger gradient into a different update. `update_difference`
trains two copies, on the loss and on N times the loss, and compares what they learn.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch

from gradacc_lessons.accumulate import (
    full_batch_gradients,
    split_batch,
    train_accumulated,
)
from gradacc_lessons.checks import as_count, as_positive
from gradacc_lessons.compare import parameters_of, relative_error
from gradacc_lessons.demos.pitfalls import classification_problem
from gradacc_lessons.display import Result, Table


def update_difference(
    make_optimizer,
    model: torch.nn.Module,
    loss_fn,
    micro_batches: list,
    accumulation_steps: int,
    scale: float,
    epochs: int = 1,
    max_grad_norm: float | None = None,
) -> float:
    """How much multiplying the loss by `scale` changes what training does (relative error).

    Two copies of `model` train `epochs` passes over `micro_batches` with
    `train_accumulated` and an optimizer from `make_optimizer(parameters)`: one on the
    loss, one on the loss times `scale` (scale=N: each micro-batch's loss was not divided
    by N). Returns the relative error between their parameter changes.

    >>> model = torch.nn.Linear(3, 2)
    >>> mbs = [(torch.randn(4, 3), torch.randint(2, (4,)))] * 2
    >>> sgd = lambda parameters: torch.optim.SGD(parameters, lr=0.1)
    >>> round(update_difference(sgd, model, torch.nn.functional.cross_entropy, mbs, 2, 4.0), 4)
    3.0
    """
    scale = as_positive("scale", scale, "N for a loss not divided by N")
    epochs = as_count("epochs", epochs)
    if not callable(make_optimizer):
        raise ValueError(
            f"make_optimizer must make an optimizer from parameters, got {make_optimizer!r}"
        )
    start = parameters_of(model)
    changes = []
    for factor in (1.0, scale):
        trained = copy.deepcopy(model)
        optimizer = make_optimizer(trained.parameters())

        def scaled_loss(outputs, targets, factor=factor):
            return loss_fn(outputs, targets) * factor

        for _ in range(epochs):
            train_accumulated(trained, optimizer, scaled_loss, micro_batches, accumulation_steps,
                              max_grad_norm=max_grad_norm)  # fmt: skip
        changes.append({name: p - start[name] for name, p in parameters_of(trained).items()})
    return relative_error(changes[0], changes[1])


OPTIMIZERS = {  # name: how to make it, the settings of lessons 1 and 5
    "SGD": lambda parameters: torch.optim.SGD(parameters, lr=0.1),
    "AdamW": lambda parameters: torch.optim.AdamW(parameters, lr=1e-3, weight_decay=0.01),
}


@dataclass(frozen=True, repr=False)
class LossScaleEffects(Result):
    """How far the parameter changes of a loss N times too large land from the right ones
    (relative), for SGD and AdamW, without and with gradient clipping."""

    accumulation_steps: int
    windows: int  # optimizer steps trained
    sgd: float
    sgd_clipped: float
    adamw: float
    adamw_clipped: float

    def table(self) -> Table:
        rows = [
            ("SGD", self.sgd),
            ("SGD, clipped", self.sgd_clipped),
            ("AdamW", self.adamw),
            ("AdamW, clipped", self.adamw_clipped),
        ]
        windows = f"{self.windows} window" + "s" * (self.windows != 1)
        headers = ("optimizer", f"update error after {windows}")
        return Table(headers, [(name, f"{error:.1e}") for name, error in rows])


def compute_loss_scale_effects(
    accumulation_steps: int = 4, epochs: int = 30, clip_factor: float = 2.0, seed: int = 0
) -> LossScaleEffects:
    """What forgetting `/N` does to SGD and to AdamW, without and with gradient clipping.

    Each optimizer trains a small classifier (float64) for `epochs` windows of N
    micro-batches, with the right loss and with each loss N times too large; clipping
    uses max_norm = `clip_factor` x the first window's gradient norm. Returns the
    relative difference of the parameter changes (see `update_difference`).

    >>> effects = compute_loss_scale_effects(epochs=1)
    >>> round(effects.sgd, 6), effects.adamw < 1e-3
    (3.0, True)
    """
    accumulation_steps = as_count("accumulation_steps", accumulation_steps)
    clip_factor = as_positive("clip_factor", clip_factor, "max_norm over the first gradient's norm")
    model, x, y = classification_problem(16 * accumulation_steps, seed)
    loss_fn = torch.nn.functional.cross_entropy
    micro_batches = split_batch(x, y, accumulation_steps)
    gradient = full_batch_gradients(model, loss_fn, x, y)
    max_norm = clip_factor * sum(float((g**2).sum()) for g in gradient.values()) ** 0.5
    effects = [
        update_difference(
            make_optimizer, model, loss_fn, micro_batches, accumulation_steps,
            scale=float(accumulation_steps), epochs=epochs, max_grad_norm=clip,
        )
        for make_optimizer in OPTIMIZERS.values()
        for clip in (None, max_norm)
    ]  # fmt: skip
    return LossScaleEffects(accumulation_steps, epochs, *effects)
