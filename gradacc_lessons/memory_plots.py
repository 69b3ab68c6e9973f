"""The figures of lesson 4: memory against the micro-batch and against N, time against N.

Each helper draws on `ax` (or a new figure) and returns (fig, ax); none saves or shows.
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.ticker import FixedLocator, NullLocator

from gradacc_lessons.memory import LABELS, MemoryReport
from gradacc_lessons.plots import axes_for
from gradacc_lessons.timing import TimingResult

_PART_STYLE = {  # part: (colour, hatch) -- hatches tell the parts apart without colour
    "parameter_bytes": ("tab:blue", ""),
    "gradient_bytes": ("tab:orange", "//"),
    "optimizer_bytes": ("tab:green", "\\\\"),
    "activation_bytes": ("tab:red", ".."),
}


def _unit(largest: float) -> tuple[str, int]:
    return ("MiB", 2**20) if largest >= 2**20 else ("KiB", 2**10)


def _integer_log2_axis(ax, values: Sequence[int], label: str) -> None:
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(list(values)))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([str(v) for v in values])
    ax.set_xlabel(label)


def plot_memory_breakdown(
    measured: Sequence[MemoryReport],
    modelled: Sequence[MemoryReport] | None = None,
    ax=None,
    title: str | None = None,
):
    """Stacked bars of the measured parts per micro-batch size, the measured peak, the model.

    The grey part on top is what the peak holds beyond the four parts (temporaries).

    >>> from gradacc_lessons.memory import MemoryReport
    >>> r = MemoryReport(900, 100, 100, 200, 300, "cpu", "test", micro_batch_size=4)
    >>> fig, ax = plot_memory_breakdown([r], [r])
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('micro-batch size (samples)', 'memory (KiB)')
    """
    fig, ax = axes_for(ax)
    unit, scale = _unit(
        max(max(r.peak_bytes, r.floor_bytes + r.activation_bytes) for r in measured)
    )
    places = range(len(measured))
    bottom = [0.0] * len(measured)
    for part, (colour, hatch) in _PART_STYLE.items():
        heights = [getattr(r, part) / scale for r in measured]
        ax.bar(places, heights, 0.6, bottom=bottom, color=colour, hatch=hatch, label=LABELS[part])
        bottom = [b + h for b, h in zip(bottom, heights)]
    others = [r.other_bytes / scale for r in measured]  # what the peak holds beyond the parts
    ax.bar(places, others, 0.6, bottom=bottom, color="lightgray", hatch="xx",
           label="temporaries")  # fmt: skip
    peaks = [r.peak_bytes / scale for r in measured]
    ax.plot(places, peaks, "k-o", label="measured peak")
    if modelled is not None:
        ax.plot(places, [r.peak_bytes / scale for r in modelled], "--x", color="tab:purple",
                label="model: sum of the parts")  # fmt: skip
    ax.set_xticks(list(places), [str(r.micro_batch_size) for r in measured])
    ax.set_xlabel("micro-batch size (samples)")
    ax.set_ylabel(f"memory ({unit})")
    ax.set_title(title or f"{measured[0].device}: memory of one training step")
    ax.legend(fontsize="x-small", loc="upper left")
    return fig, ax


def plot_peak_vs_steps(reports: Sequence[MemoryReport], ax=None, title: str | None = None):
    """Measured peak and activations against N for one effective batch, with the floor drawn.

    >>> from gradacc_lessons.memory import MemoryReport
    >>> rs = [MemoryReport(900, 100, 100, 200, 300 // n, "cpu", "t", 8 // n, n) for n in (1, 2)]
    >>> fig, ax = plot_peak_vs_steps(rs)
    >>> ax.get_xlabel()
    'accumulation steps N'
    """
    fig, ax = axes_for(ax)
    unit, scale = _unit(max(r.peak_bytes for r in reports))
    steps = [r.micro_batches for r in reports]
    ax.plot(steps, [r.peak_bytes / scale for r in reports], "k-o", label="measured peak")
    ax.plot(steps, [r.activation_bytes / scale for r in reports], ":s", color="tab:red",
            label="activations")  # fmt: skip
    floor = reports[0].floor_bytes / scale
    ax.axhline(floor, color="tab:green", linestyle="--",
               label="floor: parameters + gradients + optimizer")  # fmt: skip
    ax.set_ylim(0, None)
    _integer_log2_axis(ax, steps, "accumulation steps N")
    ax.set_ylabel(f"memory ({unit})")
    effective = reports[0].micro_batch_size * reports[0].micro_batches
    ax.set_title(title or f"one effective batch of {effective} samples")
    ax.legend(fontsize="x-small")
    return fig, ax


def plot_time_vs_steps(result: TimingResult, ax=None):
    """Time of one effective batch against N, relative to the first N, both ways of training.

    >>> from gradacc_lessons.timing import TimingResult
    >>> fig, ax = plot_time_vs_steps(TimingResult((1, 4), (1.0, 2.0), (1.5, 4.0), 64, 3))
    >>> ax.get_ylabel()
    'time / time at N = 1'
    """
    fig, ax = axes_for(ax)
    steps, base = result.accumulation_steps, result.accumulated_seconds[0]
    ax.plot(steps, result.slowdown, "-o", color="tab:blue",
            label="accumulated: N micro-batches, 1 step")  # fmt: skip
    ax.plot(steps, [t / base for t in result.small_batch_seconds], "--s", color="tab:orange",
            label="no accumulation: a step per micro-batch")  # fmt: skip
    ax.axhline(1.0, color="gray", linestyle=":", label="the whole batch at once")
    _integer_log2_axis(ax, steps, "accumulation steps N")
    ax.set_ylabel(f"time / time at N = {steps[0]}")
    ax.set_title(f"one effective batch of {result.effective_batch}, median of {result.repeats}")
    ax.legend(fontsize="x-small")
    return fig, ax
