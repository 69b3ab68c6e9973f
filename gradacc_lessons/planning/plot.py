"""The plan's figure: the peak of a window against the micro-batch, with the budget line."""

from __future__ import annotations

from gradacc_lessons.figures.plots import axes_for
from gradacc_lessons.planning.presets import GiB


def plot_plan(plan, ax=None, title: str | None = None):
    """Peak (GiB) against micro-batch size, both on log scales, the budget dashed, the plan marked.

    A log scale for the peak too: the whole effective batch can need hundreds of GiB where
    the budget is 24, and on a linear axis the budget line would lie flat on the floor.
    With a reserve, the memory left for training is dotted below the budget.

    >>> from gradacc_lessons.planning.search import Plan
    >>> p = Plan("m", 8, 3 * GiB, 2, 4, 2 * GiB, "backward", {}, GiB, 5 * GiB,
    ...          ((1, GiB), (2, 2 * GiB), (8, 5 * GiB)), (), "test")
    >>> fig, ax = plot_plan(p)
    >>> len(ax.lines)
    3
    """
    from gradacc_lessons.planning.search import Plan

    if not isinstance(plan, Plan):
        raise ValueError(
            f"plan must be a Plan (from gradacc_lessons.planning.search), got {plan!r}"
        )
    fig, ax = axes_for(ax)
    sizes = [size for size, _ in plan.curve]
    peaks = [peak / GiB for _, peak in plan.curve]
    ax.plot(sizes, peaks, "o-", color="tab:blue", label="peak of a window")
    ax.axhline(plan.budget_bytes / GiB, color="tab:red", linestyle="--", label="budget")
    if plan.reserve_bytes:
        ax.axhline(
            plan.usable_bytes / GiB, color="tab:red", linestyle=":", label="budget less reserve"
        )
    if plan.fits:
        ax.plot(
            [plan.micro_batch_size],
            [plan.peak_bytes / GiB],
            "*",
            color="tab:green",
            markersize=14,
            label=f"plan: {plan.micro_batch_size} × N={plan.accumulation_steps}",
        )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("micro-batch size (samples)")
    ax.set_ylabel("peak memory (GiB)")
    ax.set_title(title or f"{plan.model}: effective batch {plan.effective_batch}")
    ax.legend(fontsize="small")
    return fig, ax
