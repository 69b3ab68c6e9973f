"""Lesson 4's exercises: predict a window's peak; choose the largest micro-batch for a budget."""

from __future__ import annotations

import math
import numbers

from gradacc_lessons.exercises.runner import Exercise, Failed, call_learner
from gradacc_lessons.memory import format_bytes

MiB = 2**20
# (floor, activation bytes per sample, effective batch, N): even splits, an uneven one, N = 1
PEAK_CASES = (
    (300 * MiB, 2 * MiB, 256, 4),
    (40 * MiB, 3 * MiB, 100, 3),
    (5 * MiB, MiB // 2, 64, 1),
)
# (budget, floor, activation bytes per sample): room for some samples, for none, an exact fit
BUDGET_CASES = (
    (1024 * MiB, 300 * MiB, 3 * MiB),
    (200 * MiB, 250 * MiB, MiB),
    (100 * MiB, 40 * MiB, 6 * MiB),
    (64 * MiB, 10 * MiB, 5 * MiB),
)


def _whole(got, name: str) -> int:
    if isinstance(got, bool) or not isinstance(got, numbers.Real):
        raise Failed("not_bytes", got=type(got).__name__, name=name)
    if got != int(got):
        raise Failed("not_whole", got=got, name=name)
    return int(got)


def _diagnose_peak(function) -> None:
    for floor, per_sample, batch, n in PEAK_CASES:
        got = _whole(call_learner(function, floor, per_sample, batch, n), "bytes")
        right = predict_peak(floor, per_sample, batch, n)
        if got == right:
            continue
        largest = math.ceil(batch / n)
        said = dict(batch=batch, n=n, got=format_bytes(got), right=format_bytes(right))
        if got == floor + batch * per_sample and n > 1:
            raise Failed("whole_batch_activations", **said)
        if got == largest * per_sample or got == batch * per_sample // n:
            raise Failed("no_floor", **said, floor=format_bytes(floor))
        if got == floor + batch * per_sample // n or got == floor + batch // n * per_sample:
            raise Failed("smallest_micro_batch", **said, largest=largest)
        if got == (floor + batch * per_sample) // n:
            raise Failed("floor_divided", **said)
        raise Failed("peak_differs", **said)


def predict_peak(floor_bytes, activation_bytes_per_sample, effective_batch, accumulation_steps):
    largest = math.ceil(effective_batch / accumulation_steps)  # the split's largest micro-batch
    return floor_bytes + largest * activation_bytes_per_sample  # only one micro-batch is held


def _diagnose_budget(function) -> None:
    for budget, floor, per_sample in BUDGET_CASES:
        got = _whole(call_learner(function, budget, floor, per_sample), "samples")
        right = largest_micro_batch(budget, floor, per_sample)
        if got == right:
            continue
        said = dict(
            budget=format_bytes(budget), floor=format_bytes(floor), got=got, right=right,
            per_sample=format_bytes(per_sample),
        )  # fmt: skip
        if got == budget // per_sample:
            raise Failed("budget_without_floor", **said)
        if got == right + 1 and floor + got * per_sample > budget:
            raise Failed("one_too_many", **said, peak=format_bytes(floor + got * per_sample))
        if right == 0 and got < 0:
            raise Failed("negative_samples", **said)
        raise Failed("micro_batch_differs", **said)


def largest_micro_batch(budget_bytes, floor_bytes, activation_bytes_per_sample):
    room = budget_bytes - floor_bytes  # what the activations may use
    return max(0, room // activation_bytes_per_sample)  # 0: not even one sample fits


PREDICT_PEAK = Exercise("l4_peak", 4, _diagnose_peak, predict_peak, "hint_l4_peak")
LARGEST_MICRO_BATCH = Exercise(
    "l4_budget", 4, _diagnose_budget, largest_micro_batch, "hint_l4_budget"
)
