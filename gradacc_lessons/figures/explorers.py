"""Every interactive explorer of the course: a control wired to tested computations.

Each explorer only wires widgets to functions tested on their own (the numbers)
and to `figures.plots` (the drawings); the browser tests move its controls.

- lesson 1: `accumulation_explorer`, N against the gradient error;
- lesson 2: `spread_explorer`, the spread of sequence lengths against the token bug;
- lesson 4: `budget_slider`, a memory budget against the plan that fits it.

Each returns an `Explorer`: shown live where a kernel runs, and as a snapshot (its current
text and figure, `static_view`) on a page rendered without one, such as the course site.
"""

from __future__ import annotations

import base64
import copy
import html
import io
from collections.abc import Callable

import ipywidgets as widgets
import matplotlib.pyplot as plt
import torch
from IPython.display import Image, display
from torch import nn

from gradacc_lessons.accumulate import (
    accumulated_gradients,
    check_batch,
    full_batch_gradients,
    split_batch,
)
from gradacc_lessons.checks import as_count, as_fraction, as_positive
from gradacc_lessons.compare import accumulation_errors, compare_tensors
from gradacc_lessons.demos.token_pitfalls import TokenErrors, compute_token_errors
from gradacc_lessons.display import show_widget
from gradacc_lessons.figures.plots import plot_errors
from gradacc_lessons.memory import MiB, format_bytes
from gradacc_lessons.planner import plan_accumulation


class Explorer(widgets.VBox):
    """An explorer's controls and output; `snapshot_html` is its current state as static HTML.

    Displayed through `display.show_widget`: JupyterLab and Colab draw the live controls, a
    page without a kernel shows the snapshot that the explorer's last update wrote.
    """

    snapshot_html = ""  # each explorer rewrites it whenever it redraws

    def _ipython_display_(self):
        show_widget(self, self.snapshot_html)


def static_view(text: str = "", html_part: str = "", png: bytes | None = None) -> str:
    """An explorer's state as HTML for a page without a kernel: text, then HTML, then figure.

    >>> view = static_view("N = 4", png=b"png")
    >>> "<pre>N = 4</pre>" in view, 'src="data:image/png;base64,cG5n"' in view
    (True, True)
    """
    for name, value in (("text", text), ("html_part", html_part)):
        if not isinstance(value, str):
            raise ValueError(f"{name} must be a string (may be empty), got {value!r}")
    if png is not None and not isinstance(png, bytes):
        raise ValueError(f"png must be the figure's PNG bytes or None, got {type(png).__name__}")
    parts = ['<div class="gradacc-explorer-static">']
    parts.append(
        '<p class="gradacc-explorer-note"><em>A snapshot of an interactive explorer: run this '
        "lesson in JupyterLab or Colab to move its controls.</em></p>"
    )
    if text:
        parts.append(f"<pre>{html.escape(text)}</pre>")
    parts.append(html_part)
    if png is not None:
        data = base64.b64encode(png).decode("ascii")
        parts.append(f'<img alt="the explorer\'s figure" src="data:image/png;base64,{data}">')
    return "".join(parts) + "</div>"


def _png(figure) -> bytes:
    """The figure as PNG bytes; the figure is closed (it is drawn, not kept)."""
    png = io.BytesIO()
    figure.savefig(png, format="png", bbox_inches="tight")
    plt.close(figure)
    return png.getvalue()


def accumulation_explorer(model, loss_fn, inputs, targets, max_n: int = 16) -> Explorer:
    """A slider for N: the per-parameter table and the error against N, for both recipes.

    The numbers come from `accumulation_errors` and `compare_tensors`, tested on their
    own; the browser tests move the slider.
    """
    max_n = as_count("max_n", max_n, 1, check_batch(inputs, targets), "N up to the batch size")
    # A snapshot: later cells of the lesson train `model`; the explorer must not follow it.
    model = copy.deepcopy(model)
    inputs, targets = inputs.clone(), targets.clone()
    accumulation_steps = list(range(1, max_n + 1))

    def errors(normalize):
        return accumulation_errors(model, loss_fn, inputs, targets, accumulation_steps, normalize)

    curves = {"weighted by samples": errors("samples"), "naive: loss / N": errors("naive")}
    full = full_batch_gradients(model, loss_fn, inputs, targets)
    slider = widgets.IntSlider(value=4, min=1, max=max_n, description="N")
    recipe = widgets.ToggleButtons(options=[("by samples", "samples"), ("naive", "naive")])
    output = widgets.Output()
    slider.add_class("gradacc-n-slider")
    recipe.add_class("gradacc-recipe")
    output.add_class("gradacc-explorer-output")
    explorer = Explorer([widgets.HBox([slider, recipe]), output])

    def show(_=None):
        n, normalize = slider.value, recipe.value  # read both now: the latest state wins
        sizes = [len(x) for x, _ in split_batch(inputs, targets, n)]
        table = compare_tensors(
            full, accumulated_gradients(model, loss_fn, inputs, targets, n, normalize=normalize)
        )
        # a PNG, not display(fig): a figure displayed in a callback drew blank
        png = _png(
            plot_errors(accumulation_steps, curves, "micro-batches N", integer_x=True, marker_x=n)[
                0
            ]
        )
        text = f"N = {n}, micro-batch sizes {sizes}, recipe: {normalize}"
        explorer.snapshot_html = static_view(text, table._repr_html_(), png)
        with output:
            output.clear_output(wait=True)
            print(text)
            display(table)
            display(Image(data=png, format="png"))

    slider.observe(show, names="value")
    recipe.observe(show, names="value")
    show()
    return explorer


def spread_report(spread: float, errors: TokenErrors) -> str:
    """The text the explorer shows for one spread of lengths.

    >>> print(spread_report(0.5, TokenErrors([100, 90], broken=0.07, fixed=5e-16, max_abs_fixed=0)))
    spread of lengths 0.50: real tokens per micro-batch [100, 90]
      token mean / N (buggy):       7.00% gradient error
      weighted by tokens (fixed):   5.0e-16 gradient error
    """
    as_fraction("spread", spread)
    if not isinstance(errors, TokenErrors):
        raise ValueError(f"errors must be what compute_token_errors returns, got {errors!r}")
    return (
        f"spread of lengths {spread:.2f}: real tokens per micro-batch "
        f"{errors.tokens_per_micro_batch}\n"
        f"  token mean / N (buggy):     {errors.broken:7.2%} gradient error\n"
        f"  weighted by tokens (fixed): {errors.fixed:9.1e} gradient error"
    )


def spread_explorer(accumulation_steps: int = 4, sort: bool = False) -> Explorer:
    """A slider for the spread of sequence lengths; below it the buggy and the fixed errors."""
    as_count("accumulation_steps", accumulation_steps, 1, 32)
    slider = widgets.FloatSlider(
        value=0.5, min=0.0, max=1.0, step=0.1, description="spread", continuous_update=False
    )
    output = widgets.Output()
    slider.add_class("gradacc-spread-slider")
    output.add_class("gradacc-spread-output")
    explorer = Explorer([slider, output])

    def show(_=None):
        spread = slider.value  # read it now: when the slider moves fast, the latest value wins
        errors = compute_token_errors(spread, accumulation_steps=accumulation_steps, sort=sort)
        report = spread_report(spread, errors)
        explorer.snapshot_html = static_view(report)
        with output:
            output.clear_output(wait=True)
            print(report)

    slider.observe(show, names="value")
    show()
    return explorer


def describe_plan(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    loss_fn: Callable,
    sample_inputs: torch.Tensor,
    sample_targets: torch.Tensor,
    effective_batch: int,
    budget_mib: float,
) -> str:
    """The plan for a budget of `budget_mib` MiB as a short HTML text, or why none fits.

    >>> model = torch.nn.Linear(8, 2)
    >>> opt = torch.optim.SGD(model.parameters(), lr=0.1)
    >>> x, y = torch.randn(2, 8), torch.randint(2, (2,))
    >>> "1 step" in describe_plan(model, opt, torch.nn.CrossEntropyLoss(), x, y, 16, 1.0)
    True
    """
    as_count("effective_batch", effective_batch)
    as_positive("budget_mib", budget_mib, "a memory budget in MiB")
    budget = round(budget_mib * MiB)
    try:
        plan = plan_accumulation(
            model, optimizer, loss_fn, sample_inputs, sample_targets, effective_batch, budget
        )
    except ValueError as error:
        return f"<b>budget {budget_mib:.3f} MiB: no plan.</b> {html.escape(str(error))}"
    accumulation_steps = plan.accumulation_steps
    sizes = sorted(set(plan.micro_batch_sizes), reverse=True)
    return (
        f"<b>budget {budget_mib:.3f} MiB:</b> micro-batches of "
        f"{' or '.join(map(str, sizes))} samples, {accumulation_steps} "
        f"step{'s' if accumulation_steps > 1 else ''} of accumulation for an effective batch "
        f"of {plan.effective_batch}; measured peak "
        f"{format_bytes(plan.predicted_peak_bytes)} "
        f"(floor {format_bytes(plan.report.floor_bytes)}, "
        f"activations {format_bytes(plan.report.activation_bytes)})"
    )


def budget_slider(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    loss_fn: Callable,
    sample_inputs: torch.Tensor,
    sample_targets: torch.Tensor,
    effective_batch: int,
    budgets_mib: tuple[float, float, float],
    value_mib: float | None = None,
) -> Explorer:
    """A slider over (low, high, step) MiB of budget, and the plan that fits each value."""
    if len(budgets_mib) != 3 or not 0 < budgets_mib[0] < budgets_mib[1]:
        raise ValueError(
            f"budgets_mib must be (low, high, step) in MiB with 0 < low < high, got {budgets_mib!r}"
        )
    as_positive("budgets_mib", budgets_mib[2])
    if (
        value_mib is not None
        and not budgets_mib[0] <= as_positive("value_mib", value_mib) <= budgets_mib[1]
    ):
        raise ValueError(
            f"value_mib must lie between low and high of budgets_mib, got {value_mib!r}"
        )
    low, high, step = budgets_mib
    slider = widgets.FloatSlider(
        value=value_mib if value_mib is not None else (low + high) / 2,
        min=low,
        max=high,
        step=step,
        readout_format=".2f",
        description="budget (MiB)",
        continuous_update=False,  # plan when the handle is released, not on every pixel
        style={"description_width": "initial"},
        layout=widgets.Layout(width="420px"),
    )
    output = widgets.HTML()
    slider.add_class("gradacc-budget-slider")
    output.add_class("gradacc-budget-output")
    explorer = Explorer([slider, output])
    plans: dict[float, str] = {}  # each budget is planned once

    def show(_=None):
        # Read the slider now, not the event: after quick moves the latest value wins,
        # and the text always describes the value the slider shows.
        budget = slider.value
        if budget not in plans:
            plans[budget] = describe_plan(
                model, optimizer, loss_fn, sample_inputs, sample_targets, effective_batch, budget
            )
        if budget == slider.value:
            output.value = plans[budget]
            explorer.snapshot_html = static_view(html_part=f"<p>{plans[budget]}</p>")

    slider.observe(show, names="value")
    show()
    return explorer
