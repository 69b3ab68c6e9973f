"""The figures of lesson 1: each helper draws on `ax` (or a new figure) and returns (fig, ax)."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator

from gradacc_lessons.accumulate import Event

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
        fig, ax = plt.subplots(figsize=size, layout="constrained")
        return fig, ax
    return ax.figure, ax


def plot_timeline(events: Sequence[Event], ax=None):
    """Draw the events of a training loop in order, one row per kind, windows shaded.

    >>> fig, ax = plot_timeline([Event("zero_grad", 0), Event("forward", 0, 0)])
    >>> ax.get_xlabel()
    'order of events'
    """
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
        if e.kind == "forward":
            ax.annotate(
                f"{e.micro_batch}",
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


def plot_error_vs_n(
    ns: Sequence[int], errors: dict[str, Sequence[float]], current: int | None = None, ax=None
):
    """Relative gradient error against the number of micro-batches, one line per recipe.

    >>> fig, ax = plot_error_vs_n([1, 2], {"samples": [1e-8, 2e-8]})
    >>> ax.get_yscale()
    'log'
    """
    fig, ax = axes_for(ax)
    styles = ["-o", "--s", ":^", "-.d"]
    for style, (label, values) in zip(styles, errors.items()):
        floored = [max(v, 1e-12) for v in values]  # exact zeros cannot be drawn on a log axis
        ax.plot(ns, floored, style, label=label, markersize=4)
    if current is not None:
        ax.axvline(current, color="0.5", linestyle=":", label=f"N = {current}")
    ax.set_yscale("log")
    ax.set_xlabel("micro-batches N")
    ax.set_ylabel("max |Δ grad| / max |grad|")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend()
    return fig, ax
