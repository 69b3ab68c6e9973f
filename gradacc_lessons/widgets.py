"""Lesson 1's explorer: move N, watch the comparison table and the error curve."""

from __future__ import annotations

import copy
import io

import ipywidgets as widgets
import matplotlib.pyplot as plt
import torch
from IPython.display import Image, display

from gradacc_lessons.accumulate import accumulated_gradients, full_batch_gradients
from gradacc_lessons.compare import accumulation_errors, compare_gradients
from gradacc_lessons.plots import plot_error_vs_n


def accumulation_explorer(model, loss_fn, inputs, targets, max_n: int = 16) -> widgets.VBox:
    """A slider for N: the per-parameter table and the error against N, for both recipes.

    The numbers come from `accumulation_errors` and `compare_gradients`, tested on their
    own; the browser tests move the slider.
    """
    # A snapshot: later cells of the lesson train `model`; the explorer must not follow it.
    model = copy.deepcopy(model)
    inputs, targets = inputs.clone(), targets.clone()
    ns = list(range(1, max_n + 1))
    curves = {
        "weighted by samples": accumulation_errors(model, loss_fn, inputs, targets, ns, "samples"),
        "naive: loss / N": accumulation_errors(model, loss_fn, inputs, targets, ns, "naive"),
    }
    full = full_batch_gradients(model, loss_fn, inputs, targets)
    slider = widgets.IntSlider(value=4, min=1, max=max_n, description="N")
    recipe = widgets.ToggleButtons(options=[("by samples", "samples"), ("naive", "naive")])
    output = widgets.Output()
    slider.add_class("gradacc-n-slider")
    recipe.add_class("gradacc-recipe")
    output.add_class("gradacc-explorer-output")

    def show(_=None):
        n, normalize = slider.value, recipe.value  # read both now: the latest state wins
        sizes = [len(chunk) for chunk in torch.tensor_split(inputs, n)]
        table = compare_gradients(
            full, accumulated_gradients(model, loss_fn, inputs, targets, n, normalize)
        )
        fig, _ = plot_error_vs_n(ns, curves, current=n)
        png = io.BytesIO()
        fig.savefig(png, format="png", bbox_inches="tight")  # display(fig) in a callback drew blank
        plt.close(fig)
        with output:
            output.clear_output(wait=True)
            print(f"N = {n}, micro-batch sizes {sizes}, recipe: {normalize}")
            display(table)
            display(Image(data=png.getvalue(), format="png"))

    slider.observe(show, names="value")
    recipe.observe(show, names="value")
    show()
    return widgets.VBox([widgets.HBox([slider, recipe]), output])
