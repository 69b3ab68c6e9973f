"""What accumulation costs in time: one effective batch, split into N micro-batches.

Single wall times are meaningless on a shared machine, so every figure here is a
median over repeats, and the comparisons are ratios measured in the same run, with the
settings interleaved (N=1, 2, 4, …, then again) so that a busy moment of the machine
hits all of them alike.
"""

from __future__ import annotations

import copy
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Callable

import torch
from torch import nn

from gradacc_lessons.accumulate import scalar_loss, split_batch


@dataclass(frozen=True)
class TimingResult:
    """Median seconds per effective batch for each N, accumulated and as N small-batch steps."""

    accumulation_steps: tuple[int, ...]
    accumulated_seconds: tuple[float, ...]  # N micro-batches, one optimizer step
    small_batch_seconds: tuple[float, ...]  # N micro-batches, a step after each (no accumulation)
    effective_batch: int
    repeats: int

    @property
    def slowdown(self) -> list[float]:
        """Time of one accumulated effective batch relative to the first N (usually N=1)."""
        return [t / self.accumulated_seconds[0] for t in self.accumulated_seconds]

    @property
    def saving_over_small_batches(self) -> list[float]:
        """Time of N small-batch steps divided by the accumulated time (> 1: accumulation wins)."""
        return [s / a for s, a in zip(self.small_batch_seconds, self.accumulated_seconds)]

    @property
    def samples_per_second(self) -> list[float]:
        """Throughput of the accumulated runs."""
        return [self.effective_batch / t for t in self.accumulated_seconds]

    def __repr__(self) -> str:
        rows = ", ".join(
            f"N={n}: {t * 1e3:.2f} ms ({r:.2f}x)"
            for n, t, r in zip(self.accumulation_steps, self.accumulated_seconds, self.slowdown)
        )
        return f"TimingResult(effective_batch={self.effective_batch}, {rows})"


def time_effective_batch(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    loss_fn: Callable,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    accumulation_steps: Sequence[int],
    repeats: int = 5,
) -> TimingResult:
    """Median wall time of one effective batch (all of `inputs`) for each N in `accumulation_steps`.

    Each N is timed two ways: accumulated (N micro-batches, one optimizer step) and as
    small-batch training without accumulation (a step after every micro-batch). Runs
    on copies: the model and optimizer are left as they were.

    >>> model = torch.nn.Linear(8, 2)
    >>> opt = torch.optim.SGD(model.parameters(), lr=0.1)
    >>> x, y = torch.randn(16, 8), torch.randint(2, (16,))
    >>> result = time_effective_batch(model, opt, torch.nn.CrossEntropyLoss(), x, y, [1, 4], 3)
    >>> result.accumulation_steps, result.slowdown[0]
    ((1, 4), 1.0)
    """
    if not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be a positive integer, got {repeats!r}")
    steps = tuple(accumulation_steps)
    chunks = {n: split_batch(inputs, targets, n) for n in steps}  # checks every N
    model, optimizer = copy.deepcopy((model, optimizer))
    times: dict[tuple[int, bool], list[float]] = {(n, s): [] for n in steps for s in (0, 1)}
    for repeat in range(repeats + 1):  # the first round warms up and is not kept
        for n in steps:
            for step_each in (False, True):
                seconds = _time_one(model, optimizer, loss_fn, chunks[n], len(inputs), step_each)
                if repeat:
                    times[(n, step_each)].append(seconds)
    return TimingResult(
        accumulation_steps=steps,
        accumulated_seconds=tuple(statistics.median(times[(n, False)]) for n in steps),
        small_batch_seconds=tuple(statistics.median(times[(n, True)]) for n in steps),
        effective_batch=len(inputs),
        repeats=repeats,
    )


def _time_one(model, optimizer, loss_fn, chunks, batch: int, step_each: bool) -> float:
    """Seconds for one pass over `chunks`: accumulated, or stepping after each micro-batch."""
    device = next(model.parameters()).device
    _synchronize(device)
    start = time.perf_counter()
    for x, y in chunks:
        loss = scalar_loss(loss_fn, model(x), y)
        if step_each:  # small-batch training: every micro-batch is its own update
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        else:
            (loss * (len(x) / batch)).backward()
    if not step_each:
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    _synchronize(device)
    return time.perf_counter() - start


def _synchronize(device: torch.device) -> None:
    # GPU kernels run asynchronously: wait for them, or the clock stops too early.
    if device.type == "cuda":
        torch.cuda.synchronize(device)
