"""Lesson 5's exercise: the length of a learning-rate schedule, in optimizer steps."""

from __future__ import annotations

import math
import numbers

from gradacc_lessons.exercises.runner import Exercise, Failed, call_learner

# (micro-batches per epoch, N, epochs): even and short last windows, N = 1, N above the epoch
CASES = ((100, 4, 3), (10, 4, 2), (7, 1, 5), (5, 8, 1), (46, 3, 4))


def _diagnose_steps(function) -> None:
    """Compare the learner's count with the reference on each _case; Failed naming the mistake."""
    for batches, n, epochs in CASES:
        got = call_learner(function, batches, n, epochs)
        right = optimizer_steps(batches, n, epochs)
        if isinstance(got, bool) or not isinstance(got, numbers.Real):
            raise Failed("not_a_number", got=type(got).__name__)
        if got == right:
            if not isinstance(got, numbers.Integral):
                raise Failed("not_an_int", got=got)
            continue
        _case = dict(batches=batches, n=n, epochs=epochs, got=got, right=right)
        if got == batches * epochs:
            raise Failed("counted_micro_batches", **_case)
        if got == batches // n * epochs:
            raise Failed("dropped_last_window", **_case, last=batches % n)
        if got == math.ceil(batches * epochs / n):
            raise Failed("windows_across_epochs", **_case)
        raise Failed("steps_differ", **_case)


def optimizer_steps(batches_per_epoch, accumulation_steps, epochs):
    windows = math.ceil(batches_per_epoch / accumulation_steps)  # the last one may be short
    return windows * epochs  # one optimizer step per window, every epoch


SCHEDULE_LENGTH = Exercise("l5_steps", 5, _diagnose_steps, optimizer_steps, "hint_l5_steps")
