"""What accumulation costs in time: one effective batch, split into N micro-batches.

Times are taken with `torch.utils.benchmark.Timer` (which waits for a GPU before it
reads the clock). Single wall times are meaningless on a shared machine, so every
figure here is a median over repeats, and the comparisons are ratios measured in the
same run, with the settings interleaved (N=1, 2, 4, …, then again) so that a busy
moment of the machine hits all of them alike.
"""

from __future__ import annotations

import copy
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from torch import nn

from gradacc_lessons.accumulate import check_batch, split_batch, train_accumulated
from gradacc_lessons.checks import as_count, as_counts

if TYPE_CHECKING:
    from torch.utils.benchmark import Timer


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
    batch = check_batch(inputs, targets)
    repeats = as_count("repeats", repeats)
    steps = tuple(as_counts("accumulation_steps", accumulation_steps, maximum=batch))
    model, optimizer = copy.deepcopy((model, optimizer))
    timers = {
        (n, each): _timer(model, optimizer, loss_fn, split_batch(inputs, targets, n), each)
        for n in steps
        for each in (False, True)
    }
    times: dict[tuple[int, bool], list[float]] = {key: [] for key in timers}
    with torch.random.fork_rng(devices=[]):  # a model with dropout draws random numbers
        for repeat in range(repeats + 1):  # the first round warms up and is not kept
            for key, timer in timers.items():  # interleaved: a busy moment hits every N
                seconds = timer.timeit(number=1).median
                if repeat:
                    times[key].append(seconds)
    return TimingResult(
        accumulation_steps=steps,
        accumulated_seconds=tuple(statistics.median(times[(n, False)]) for n in steps),
        small_batch_seconds=tuple(statistics.median(times[(n, True)]) for n in steps),
        effective_batch=batch,
        repeats=repeats,
    )


def _timer(model, optimizer, loss_fn, micro_batches, step_each: bool) -> Timer:
    """A torch.utils.benchmark Timer of one pass over `micro_batches`.

    The Timer waits for a GPU to finish before it reads the clock, and runs with the
    thread count of the caller (`make_repeatable` sets one thread).
    """
    # imported here: torch.utils.benchmark imports setuptools (a second or two), which
    # `import gradacc_lessons` need not pay
    from torch.utils.benchmark import Timer

    # The course's one loop, as a learner runs it: one window of all the micro-batches,
    # or (small-batch training) every micro-batch its own window and its own update.
    steps = 1 if step_each else len(micro_batches)

    def one_pass() -> None:
        train_accumulated(model, optimizer, loss_fn, micro_batches, accumulation_steps=steps)

    return Timer("one_pass()", globals={"one_pass": one_pass}, num_threads=torch.get_num_threads())
