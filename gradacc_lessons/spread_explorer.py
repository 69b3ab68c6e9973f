"""Lesson 2's slider: the spread of sequence lengths against the error of the 2024 bug."""

from __future__ import annotations

import ipywidgets as widgets

from gradacc_lessons.sequences import compute_token_errors


def spread_report(spread: float, errors: dict) -> str:
    """The text the explorer shows for one spread of lengths.

    >>> print(spread_report(0.5, {"buggy": 0.07, "fixed": 5e-16,
    ...                           "tokens_per_micro_batch": [100, 90]}))
    spread of lengths 0.50: real tokens per micro-batch [100, 90]
      token mean / N (buggy):       7.00% gradient error
      weighted by tokens (fixed):   5.0e-16 gradient error
    """
    return (
        f"spread of lengths {spread:.2f}: real tokens per micro-batch "
        f"{errors['tokens_per_micro_batch']}\n"
        f"  token mean / N (buggy):     {errors['buggy']:7.2%} gradient error\n"
        f"  weighted by tokens (fixed): {errors['fixed']:9.1e} gradient error"
    )


def spread_explorer(micro_batches: int = 4, sort: bool = False) -> widgets.VBox:
    """A slider for the spread of sequence lengths; below it the buggy and the fixed errors."""
    slider = widgets.FloatSlider(
        value=0.5, min=0.0, max=1.0, step=0.1, description="spread", continuous_update=False
    )
    output = widgets.Output()
    slider.add_class("gradacc-spread-slider")
    output.add_class("gradacc-spread-output")

    def show(_=None):
        spread = slider.value  # read it now: when the slider moves fast, the latest value wins
        errors = compute_token_errors(spread, micro_batches=micro_batches, sort=sort)
        with output:
            output.clear_output(wait=True)
            print(spread_report(spread, errors))

    slider.observe(show, names="value")
    show()
    return widgets.VBox([slider, output])
