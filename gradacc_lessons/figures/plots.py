"""Every figure of the course: each helper draws on `ax` (or a new figure) and returns (fig, ax).

None saves or shows; none touches matplotlib's global settings. Lines differ by
dash and marker as well as colour, so that they read in grey too.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
from matplotlib.ticker import FixedLocator, MaxNLocator, NullLocator

from gradacc_lessons.accumulate import Event
from gradacc_lessons.checks import as_choice, as_positive
from gradacc_lessons.demos.training import METRICS
from gradacc_lessons.memory import LABELS, MemoryReport, Phase
from gradacc_lessons.timing import TimingResult

TIMELINE_ROWS = (
    "zero_grad",
    "forward",
    "backward",
    "unscale",
    "clip",
    "step",
    "skipped",
    "update",
    "scheduler",
)
_STYLE = {  # kind: (marker, colour)
    "zero_grad": ("x", "tab:gray"),
    "forward": ("o", "tab:blue"),
    "backward": ("s", "tab:orange"),
    "clip": ("D", "tab:purple"),
    "step": ("*", "tab:green"),
    "scheduler": ("^", "tab:red"),
    "unscale": ("v", "tab:brown"),  # mixed precision (lesson 6)
    "skipped": ("X", "tab:pink"),
    "update": ("P", "tab:olive"),
}


def axes_for(ax, size=(5, 3)):
    """The figure and axes to draw on: `ax` itself, or a new figure of `size` inches.

    >>> fig, ax = axes_for(None)
    >>> fig.get_size_inches().tolist()
    [5.0, 3.0]
    """
    if ax is None:
        width, height = (as_positive("size", value, "(width, height) in inches") for value in size)
        fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
        return fig, ax
    if not hasattr(ax, "figure"):
        raise ValueError(f"ax must be a matplotlib Axes or None, got {ax!r}")
    return ax.figure, ax


def plot_timeline(events: Sequence[Event], ax=None):
    """Draw the events of a training loop in order, one row per kind, windows shaded.

    >>> fig, ax = plot_timeline([Event("zero_grad", 0), Event("forward", 0, 0)])
    >>> ax.get_xlabel()
    'order of events'
    """
    _non_empty("events", events)
    fig, ax = axes_for(ax, size=(8, 3))
    rows = [kind for kind in TIMELINE_ROWS if any(e.kind == kind for e in events)]
    for window in sorted({e.window for e in events}):
        places = [i for i, e in enumerate(events) if e.window == window]
        if window % 2 == 1:
            ax.axvspan(min(places) - 0.5, max(places) + 0.5, color="0.92", zorder=0)
        ax.text((min(places) + max(places)) / 2, len(rows) - 0.4, f"window {window}", ha="center")
    for kind in rows:
        marker, colour = _STYLE[kind]
        places = [i for i, e in enumerate(events) if e.kind == kind]
        ax.scatter(places, [rows.index(kind)] * len(places), marker=marker, color=colour, s=60)
    for i, e in enumerate(events):
        if e.kind == "forward":  # micro-batches counted from 1 in the drawing: "the N-th"
            ax.annotate(
                f"{e.position + 1}",
                (i, rows.index("forward")),
                xytext=(0, 7),
                textcoords="offset points",
                ha="center",
                fontsize=8,
            )
    ax.set_yticks(range(len(rows)), rows)
    ax.set_ylim(-0.6, len(rows) - 0.1)
    ax.invert_yaxis()
    ax.set_xlabel("order of events")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    return fig, ax


_STYLES = [("tab:red", "-", "o"), ("tab:blue", "--", "s"), ("tab:green", ":", "^"),
           ("tab:purple", "-.", "D"), ("tab:orange", (0, (5, 1)), "v")]  # fmt: skip
FLOOR = 1e-17  # an exact match (error 0) is drawn here, so that a log axis can show it


def plot_errors(
    x: Sequence[float],
    series: dict[str, Sequence[float]],
    xlabel: str,
    ylabel: str = "gradient error (relative, L2)",
    integer_x: bool = False,
    log2_x: bool = False,
    marker_x: float | None = None,
    yscale: str = "log",
    ax=None,
):
    """One line per entry of `series` against `x`, on a log scale (zeros drawn at FLOOR).

    integer_x puts ticks on whole numbers; log2_x spaces x = 1, 2, 4, 8, ... evenly;
    marker_x draws a dotted vertical line there (the explorer's current N). A log
    axis shows errors of 1e-16 and of 6 side by side but flattens growth: draw a
    second panel with yscale="linear" to show how fast an error grows. Markers
    alternate filled and hollow, so that two lines on the same values both show.

    >>> fig, ax = plot_errors([1, 2], {"naive": [0.0, 0.5]}, "N", integer_x=True)
    >>> ax.get_xlabel(), ax.get_yscale()
    ('N', 'log')
    """
    _non_empty("series", series)
    _non_empty("x", x)
    as_choice("yscale", yscale, ("log", "linear"))
    fig, ax = axes_for(ax)
    for i, ((label, values), (colour, dash, marker)) in enumerate(zip(series.items(), _STYLES * 2)):
        ys = [max(v, FLOOR) for v in values] if yscale == "log" else list(values)
        hollow = i % 2 == 1  # a big hollow marker around a small filled one: both visible
        face = "none" if hollow else colour
        ax.plot(x, ys, color=colour, linestyle=dash, marker=marker, label=label,
                markersize=9 if hollow else 5, markerfacecolor=face)  # fmt: skip
    if marker_x is not None:
        ax.axvline(marker_x, color="0.5", linestyle=":", label=f"{xlabel} = {marker_x:g}")
    ax.set_yscale(yscale)
    if yscale == "linear":
        ax.set_ylim(bottom=0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if log2_x:
        ax.set_xscale("log", base=2)
        ax.set_xticks(list(x), [f"{v:g}" for v in x])
    elif integer_x:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(fontsize="small")
    ax.grid(True, alpha=0.3)
    return fig, ax


def plot_lr_schedules(schedules: dict[str, Sequence[float]], ax=None):
    """Learning rate of each optimizer step against the samples seen, for each loop.

    >>> s = {"samples_seen": [32, 64], "full": [0.5, 1.0], "broken": [1.0, 1.0]}
    >>> fig, ax = plot_lr_schedules(s)
    >>> ax.get_xlabel()
    'samples seen'
    """
    _non_empty("schedules", schedules)
    fig, ax = axes_for(ax)
    labels = {
        "full": "full batch (intended)",
        "broken": "scheduler per micro-batch",
        "fixed": "scheduler per optimizer step",
    }
    lines = [(k, v) for k, v in labels.items() if k in schedules]
    if "samples_seen" not in schedules or not lines:
        raise ValueError(
            f"schedules needs 'samples_seen' and at least one of {sorted(labels)} "
            f"(what lesson 2's scheduler comparison returns), got keys {sorted(schedules)}"
        )
    for (key, label), (colour, dash, marker) in zip(lines, _STYLES):
        ax.step(schedules["samples_seen"], schedules[key], where="post", color=colour,
                linestyle=dash, marker=marker, label=label)  # fmt: skip
    ax.set_xlabel("samples seen")
    ax.set_ylabel("learning rate (× base)")
    ax.legend(fontsize="small")
    ax.grid(True, alpha=0.3)
    return fig, ax


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

    >>> r = MemoryReport(900, 100, 100, 200, 300, "cpu", "test", micro_batch_size=4)
    >>> fig, ax = plot_memory_breakdown([r], [r])
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('micro-batch size (samples)', 'memory (KiB)')
    """
    _non_empty("measured", measured)
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

    >>> rs = [MemoryReport(900, 100, 100, 200, 300 // n, "cpu", "t", 8 // n, n) for n in (1, 2)]
    >>> fig, ax = plot_peak_vs_steps(rs)
    >>> ax.get_xlabel()
    'accumulation steps N'
    """
    _non_empty("reports", reports)
    fig, ax = axes_for(ax)
    unit, scale = _unit(max(r.peak_bytes for r in reports))
    steps = [r.accumulation_steps for r in reports]
    ax.plot(steps, [r.peak_bytes / scale for r in reports], "k-o", label="measured peak")
    ax.plot(steps, [r.activation_bytes / scale for r in reports], ":s", color="tab:red",
            label="activations")  # fmt: skip
    floor = reports[0].floor_bytes / scale
    ax.axhline(floor, color="tab:green", linestyle="--",
               label="floor: parameters + gradients + optimizer")  # fmt: skip
    ax.set_ylim(0, None)
    _integer_log2_axis(ax, steps, "accumulation steps N")
    ax.set_ylabel(f"memory ({unit})")
    effective = reports[0].micro_batch_size * reports[0].accumulation_steps
    ax.set_title(title or f"one effective batch of {effective} samples")
    ax.legend(fontsize="x-small")
    return fig, ax


def plot_phase_peaks(phases: Sequence[Phase], floor_bytes: int | None = None, ax=None, title=None):
    """The peak of each phase of a window as bars, the highest one dark; the floor dashed.

    >>> fig, ax = plot_phase_peaks([Phase("forward 1", 3000), Phase("optimizer step", 5000)], 2000)
    >>> [t.get_text() for t in ax.get_xticklabels()], ax.get_ylabel()
    (['forward 1', 'optimizer step'], 'peak memory (KiB)')
    """
    _non_empty("phases", phases)
    fig, ax = axes_for(ax, size=(7, 3))
    unit, scale = _unit(max(p.peak_bytes for p in phases))
    highest = max(range(len(phases)), key=lambda i: phases[i].peak_bytes)
    colours = ["tab:red" if i == highest else "lightsteelblue" for i in range(len(phases))]
    ax.bar(range(len(phases)), [p.peak_bytes / scale for p in phases], color=colours,
           edgecolor="black", label="peak of the phase (the highest in red)")  # fmt: skip
    if floor_bytes is not None:
        ax.axhline(floor_bytes / scale, color="tab:green", linestyle="--",
                   label="floor: parameters + gradients + optimizer")  # fmt: skip
    ax.set_xticks(range(len(phases)), [p.name for p in phases], rotation=40, ha="right",
                  fontsize="small")  # fmt: skip
    ax.set_ylabel(f"peak memory ({unit})")
    ax.set_ylim(0, None)
    ax.set_title(title or "where the peak of one window happens")
    ax.legend(fontsize="x-small", loc="lower right")
    return fig, ax


def plot_time_vs_steps(result: TimingResult, ax=None):
    """Time of one effective batch against N, relative to the whole batch at once, both ways.

    At the first N (1: the whole batch) both ways are the same computation, timed twice:
    their mean is the baseline, and the gap between the two first points shows the
    timing noise.

    >>> fig, ax = plot_time_vs_steps(TimingResult((1, 4), (1.0, 2.0), (1.5, 4.0), 64, 3))
    >>> ax.get_ylabel(), [round(float(y), 2) for y in ax.get_lines()[0].get_ydata()]
    ('time / time at N = 1', [0.8, 1.6])
    """
    if not isinstance(result, TimingResult):
        raise ValueError(f"result must be a TimingResult (time_effective_batch), got {result!r}")
    fig, ax = axes_for(ax)
    steps = result.accumulation_steps
    base = (result.accumulated_seconds[0] + result.small_batch_seconds[0]) / 2
    ax.plot(steps, [t / base for t in result.accumulated_seconds], "-o", color="tab:blue",
            label="accumulated: N micro-batches, 1 step")  # fmt: skip
    ax.plot(steps, [t / base for t in result.small_batch_seconds], "--s", color="tab:orange",
            label="no accumulation: a step per micro-batch")  # fmt: skip
    ax.axhline(1.0, color="gray", linestyle=":", label="the whole batch at once")
    _integer_log2_axis(ax, steps, "accumulation steps N")
    ax.set_ylabel(f"time / time at N = {steps[0]}")
    ax.set_title(f"one effective batch of {result.effective_batch}, median of {result.repeats}")
    ax.legend(fontsize="x-small")
    return fig, ax


_LINES = {  # run: (colour, dashes): the accumulated run dashed over the solid large batch
    "large batch": ("tab:blue", "-"),
    "accumulated": ("tab:orange", "--"),
    "small batch": ("tab:green", ":"),
}


def plot_curves(runs: Sequence, metric: str = "train_loss", ax=None):
    """Draw one metric of several runs (`demos.training.Curves`) against epochs.

    >>> from gradacc_lessons.demos.training import TrainingConfig, train_run
    >>> run = train_run("small batch", TrainingConfig(epochs=1, train_samples=256))
    >>> fig, ax = plot_curves([run])
    >>> ax.get_xlabel(), ax.get_legend_handles_labels()[1]
    ('epochs', ['small batch'])
    >>> import matplotlib.pyplot as plt; plt.close(fig)
    """
    _non_empty("runs", runs)
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {tuple(METRICS)}, got {metric!r}")
    fig, ax = axes_for(ax)
    for i, run in enumerate(runs):
        colour, dashes = _LINES.get(run.name, (f"C{i}", "-."))
        per_step = metric in ("train_loss", "learning_rate")
        x = run.epoch_of_step if per_step else run.epochs
        width = 1.0 if per_step else 1.5
        ax.plot(x, getattr(run, metric), dashes, color=colour, lw=width, label=run.name)
    ax.set_xlabel("epochs")
    ax.set_ylabel(METRICS[metric])
    ax.legend()
    return fig, ax


def _non_empty(name: str, values) -> None:
    if values is None or len(values) == 0:
        raise ValueError(f"{name} must hold something to draw, got {values!r}")
