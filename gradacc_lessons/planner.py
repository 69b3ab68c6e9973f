"""Plan gradient accumulation for a memory budget: the largest micro-batch that fits.

How an effective batch is split: into `accumulation_steps` micro-batches whose sizes
differ by at most one (`split_batch`, with each loss weighted by its share of the
samples, so an uneven split is still exact). `micro_batch_size` is the largest of
them: 10 samples in 4 steps are micro-batches of 3, 3, 2 and 2. Every micro-batch size
from 1 to the effective batch is therefore possible, not only its divisors.

How the plan is found: the peak of one window is measured (`measure_training_memory`)
for a micro-batch of 1 sample and for the whole effective batch; a straight line
between them proposes the largest micro-batch under the budget; measurements then
confirm it (it fits, and the next larger micro-batch does not) or, when the line was
wrong, halve the interval until they do. On a GPU, a micro-batch that runs out of
device memory counts as one that does not fit.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from gradacc_lessons.accumulate import check_batch
from gradacc_lessons.checks import as_count, as_positive
from gradacc_lessons.memory import (
    MemoryReport,
    format_bytes,
    measure_training_memory,
    repeat_samples,
)


@dataclass(frozen=True)
class AccumulationPlan:
    """How to reach `effective_batch` within `memory_budget` bytes, and the peak measured."""

    micro_batch_size: int  # the largest micro-batch of the split
    accumulation_steps: int
    predicted_peak_bytes: int  # measured on one window of this plan
    effective_batch: int
    memory_budget: int
    report: MemoryReport  # the measurement that validated the plan

    @property
    def micro_batch_sizes(self) -> list[int]:
        """The sizes of the micro-batches of one window, largest first."""
        base, extra = divmod(self.effective_batch, self.accumulation_steps)
        return [base + 1] * extra + [base] * (self.accumulation_steps - extra)

    def __repr__(self) -> str:
        return (
            f"AccumulationPlan(micro_batch_size={self.micro_batch_size}, "
            f"accumulation_steps={self.accumulation_steps}, "
            f"predicted_peak={format_bytes(self.predicted_peak_bytes)}, "
            f"memory_budget={format_bytes(self.memory_budget)}, "
            f"effective_batch={self.effective_batch})"
        )


def plan_accumulation(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    loss_fn: Callable,
    sample_inputs: torch.Tensor,
    sample_targets: torch.Tensor,
    effective_batch: int,
    memory_budget: int,
) -> AccumulationPlan:
    """The fewest accumulation steps (largest micro-batch) whose measured peak fits the budget.

    `sample_inputs` and `sample_targets` are a few samples (one is enough); they are
    repeated to build micro-batches of any size. Raises ValueError when even a
    micro-batch of one sample does not fit, saying by how much.

    >>> from torch.nn import Linear, ReLU, Sequential
    >>> model = Sequential(Linear(64, 256), ReLU(), Linear(256, 10))
    >>> opt = torch.optim.SGD(model.parameters(), lr=0.1)
    >>> x, y = torch.randn(4, 64), torch.randint(10, (4,))
    >>> plan = plan_accumulation(model, opt, torch.nn.CrossEntropyLoss(), x, y, 256, 400_000)
    >>> plan.predicted_peak_bytes <= 400_000, plan.accumulation_steps > 1
    (True, True)
    """
    check_batch(sample_inputs, sample_targets, ("sample_inputs", "sample_targets"))
    effective_batch = as_count("effective_batch", effective_batch)
    memory_budget = as_positive(
        "memory_budget", memory_budget, "in bytes: for 2 MiB pass 2 * 2**20"
    )

    known: dict[int, MemoryReport | None] = {}  # None: the device ran out of memory

    def peak(size: int) -> float:
        if size not in known:
            known[size] = _measure_window(
                model, optimizer, loss_fn, sample_inputs, sample_targets, size, effective_batch
            )
        report = known[size]
        return math.inf if report is None else report.peak_bytes

    if peak(1) > memory_budget:
        raise ValueError(_too_small_message(memory_budget, known[1]))
    sizes = _micro_batch_sizes(effective_batch)  # ascending
    if peak(effective_batch) <= memory_budget:
        size = effective_batch
    else:
        guess = _first_guess(sizes, peak(1), peak(effective_batch), memory_budget)
        size = sizes[_largest_fitting(len(sizes), lambda i: peak(sizes[i]) <= memory_budget, guess)]
    report = known[size]
    return AccumulationPlan(
        micro_batch_size=size,
        accumulation_steps=math.ceil(effective_batch / size),
        predicted_peak_bytes=report.peak_bytes,
        effective_batch=effective_batch,
        memory_budget=int(memory_budget),
        report=report,
    )


def _first_guess(sizes: list[int], peak_one: float, peak_all: float, budget: float) -> int:
    """Index of the largest size under the budget on the line through the two measured peaks."""
    if math.isinf(peak_all):  # the whole batch ran out of memory: no line, halve instead
        return len(sizes) // 2
    slope = (peak_all - peak_one) / max(sizes[-1] - 1, 1)
    guess = sizes[-1] if slope <= 0 else 1 + (budget - peak_one) / slope
    return max(i for i, s in enumerate(sizes) if s <= max(1, guess))


def _largest_fitting(count: int, fits: Callable[[int], bool], guess: int) -> int:
    """The largest index that fits, knowing that index 0 fits and index count - 1 does not.

    Tries the guess and its neighbours first, then halves the interval.

    >>> _largest_fitting(100, lambda i: i <= 41, guess=40)
    41
    """
    low, high = 0, count - 1  # low fits, high does not
    probes = [guess, guess + 1, guess - 1]
    while high - low > 1:
        probe = probes.pop(0) if probes else (low + high) // 2
        if low < probe < high:
            low, high = (probe, high) if fits(probe) else (low, probe)
    return low


def _micro_batch_sizes(effective_batch: int) -> list[int]:
    """Every largest micro-batch an even split can have: ceil(E / N) for N = 1 … E, ascending.

    >>> _micro_batch_sizes(10)
    [1, 2, 3, 4, 5, 10]
    """
    return sorted({math.ceil(effective_batch / n) for n in range(1, effective_batch + 1)})


def _measure_window(
    model, optimizer, loss_fn, sample_inputs, sample_targets, size: int, effective_batch: int
) -> MemoryReport | None:
    """The peak of a window's first two micro-batches of `size` samples (one if that is all).

    None when the device runs out of memory.

    Later micro-batches repeat the second one's pattern (gradients already exist and
    the new ones are added to them), so two stand for a window of any length.
    """
    steps = min(2, math.ceil(effective_batch / size))
    inputs = repeat_samples(sample_inputs, steps * size)
    targets = repeat_samples(sample_targets, steps * size)
    try:
        return measure_training_memory(model, optimizer, loss_fn, inputs, targets, steps)
    except torch.cuda.OutOfMemoryError:
        # On a GPU, the whole effective batch often does not fit at all: that is a
        # measurement too ("does not fit"), not a failure of the planner.
        return None


def _too_small_message(memory_budget: float, smallest: MemoryReport | None) -> str:
    def size(n: float) -> str:
        return f"{int(n):,} bytes ({format_bytes(n)})"

    if smallest is None:
        return (
            f"memory_budget={size(memory_budget)} cannot be planned: even a micro-batch of 1 "
            f"sample runs out of the device's memory; use a smaller model or a larger device"
        )

    return (
        f"memory_budget={size(memory_budget)} is too small: even a micro-batch of 1 sample "
        f"peaks at {size(smallest.peak_bytes)}, {size(smallest.peak_bytes - memory_budget)} "
        f"over the budget. Parameters, gradients and optimizer state alone take "
        f"{size(smallest.floor_bytes)}; raise memory_budget to at least "
        f"{smallest.peak_bytes:,}, or use a smaller model or an optimizer with less state"
    )
