"""Lesson 9's exercise: read a plan: N for an effective batch, and whether its window fits."""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers

from torch import nn

from gradacc_lessons.exercises.runner import Exercise, Failed, _Crashed, call_learner
from gradacc_lessons.memory import format_bytes

GiB = 2**30


def _small_cnn() -> nn.Module:
    """A two-convolution network: the planner traces it in a fraction of a second."""
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 2, 1))


def _planned(budget_gib: float, reserve_gib: float):
    """The planner's own plan for 64 images of 3 × 32 × 32 (the CPU's allocator: no rounding)."""
    from gradacc_lessons.planning import plan  # the planner loads torch's tracing when used

    return plan(_small_cnn, 64, budget_gib, input_shape=(3, 32, 32), foreach=False,
                allocator="cpu", reserve=reserve_gib, alternatives=False)  # fmt: skip


@functools.cache
def _cases() -> tuple:
    """(what the case is, plan, effective batch): real plans, and the same window on other cards.

    The same plan read with another budget or reserve is a colleague's card: the window
    traced is the same, what the card leaves for it is not.
    """
    roomy = _planned(3 / 1024, 1 / 1024)  # 3 MiB less 1 MiB: micro-batches of 13, N = 5
    floor = roomy.floor_bytes
    nothing = _planned((floor + 2**10) / GiB, 0)  # above the floor, below one image's window
    smaller_card = dataclasses.replace(roomy, budget_bytes=roomy.peak_bytes - 2**16)
    larger_reserve = dataclasses.replace(
        roomy, reserve_bytes=roomy.budget_bytes - roomy.peak_bytes + 2**16
    )
    return (
        ("the plan's own effective batch", roomy, roomy.effective_batch),
        ("another effective batch", roomy, 100),
        ("a smaller card", smaller_card, roomy.effective_batch),
        ("a larger reserve", larger_reserve, roomy.effective_batch),
        ("nothing fits", nothing, 64),
    )


def _diagnose_plan(function) -> None:
    """Give the learner's function each case's plan; Failed naming the first mistake."""
    for _, plan, batch in _cases():
        right = accumulation_for(plan, batch)
        try:
            got = call_learner(function, plan, batch)
        except _Crashed as crashed:
            if plan.micro_batch_size is None:
                raise Failed("nothing_fits", error=crashed.text) from None
            raise
        if not isinstance(got, tuple) or len(got) != 2:
            raise Failed("not_a_pair", got=type(got).__name__)
        if plan.micro_batch_size is None:
            if got != right:
                raise Failed("nothing_fits", error=f"it returned {got!r}")
            continue
        _check_steps(got[0], plan, batch, right[0])
        _check_fits(got[1], plan, right[1])


def _check_steps(n, plan, batch: int, right: int) -> None:
    micro = plan.micro_batch_size
    said = dict(got=n, right=right, batch=batch, micro=micro)
    if isinstance(n, bool) or not isinstance(n, numbers.Real):
        raise Failed("steps_not_a_number", got=type(n).__name__)
    if n == right:
        if not isinstance(n, numbers.Integral):
            raise Failed("steps_not_whole", **said)
        return
    if n == batch // micro:
        raise Failed("steps_rounded_down", **said, covered=micro * n)
    if n == plan.accumulation_steps and batch != plan.effective_batch:
        raise Failed("plan_steps_reused", **said, planned=plan.effective_batch)
    if n == batch / micro:
        raise Failed("steps_not_whole", **{**said, "got": f"{n:.3g}"})
    raise Failed("plan_steps_differ", **said)


def _check_fits(fits, plan, right: bool) -> None:
    if fits is not True and fits is not False:
        raise Failed("fits_not_bool", got=type(fits).__name__)
    if fits == right:
        return
    said = dict(
        peak=format_bytes(plan.peak_bytes), budget=format_bytes(plan.budget_bytes),
        reserve=format_bytes(plan.reserve_bytes), usable=format_bytes(plan.usable_bytes),
        whole=format_bytes(plan.no_accumulation_bytes), floor=format_bytes(plan.floor_bytes),
    )  # fmt: skip
    if fits == (plan.peak_bytes <= plan.budget_bytes):
        raise Failed("reserve_forgotten", **said)
    if fits == (plan.no_accumulation_bytes <= plan.usable_bytes):
        raise Failed("whole_batch_compared", **said)
    if fits == (plan.floor_bytes <= plan.usable_bytes):
        raise Failed("floor_compared", **said)
    raise Failed("fits_differs", **said, fits_said=fits)


def accumulation_for(plan, effective_batch):
    if plan.micro_batch_size is None:  # not one sample fits: no N helps
        return None, False
    steps = math.ceil(effective_batch / plan.micro_batch_size)  # a short last micro-batch
    fits = plan.peak_bytes <= plan.usable_bytes  # the budget less the reserve
    return steps, fits


READ_A_PLAN = Exercise("l9_plan", 9, _diagnose_plan, accumulation_for, "hint_l9_plan")
