"""Figures of lessons 2 and 3: each helper draws on `ax` (or a new figure) and returns (fig, ax)."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.ticker import MaxNLocator

from gradacc_lessons.plots import axes_for

_STYLES = [("tab:red", "-", "o"), ("tab:blue", "--", "s"), ("tab:green", ":", "^"),
           ("tab:purple", "-.", "D"), ("tab:orange", (0, (5, 1)), "v")]  # fmt: skip
FLOOR = 1e-17  # an exact match (error 0) is drawn here, so that a log axis can show it


def plot_errors(
    x: Sequence[float],
    series: dict[str, Sequence[float]],
    xlabel: str,
    ylabel: str = "gradient error (L2, relative)",
    integer_x: bool = False,
    log2_x: bool = False,
    ax=None,
):
    """One line per entry of `series` against `x`, on a log scale (zeros drawn at FLOOR).

    integer_x puts ticks on whole numbers; log2_x spaces x = 1, 2, 4, 8, ... evenly.

    >>> fig, ax = plot_errors([1, 2], {"naive": [0.0, 0.5]}, "N", integer_x=True)
    >>> ax.get_xlabel(), ax.get_yscale()
    ('N', 'log')
    """
    fig, ax = axes_for(ax)
    for (label, values), (colour, dash, marker) in zip(series.items(), _STYLES * 2):
        ys = [max(v, FLOOR) for v in values]
        ax.plot(x, ys, color=colour, linestyle=dash, marker=marker, label=label)
    ax.set_yscale("log")
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
    fig, ax = axes_for(ax)
    labels = {
        "full": "full batch (intended)",
        "broken": "scheduler per micro-batch",
        "fixed": "scheduler per optimizer step",
    }
    lines = [(k, v) for k, v in labels.items() if k in schedules]
    for (key, label), (colour, dash, marker) in zip(lines, _STYLES):
        ax.step(schedules["samples_seen"], schedules[key], where="post", color=colour,
                linestyle=dash, marker=marker, label=label)  # fmt: skip
    ax.set_xlabel("samples seen")
    ax.set_ylabel("learning rate (× base)")
    ax.legend(fontsize="small")
    ax.grid(True, alpha=0.3)
    return fig, ax
