"""Lesson 4's budget slider: move the memory budget, read the accumulation plan that fits it."""

from __future__ import annotations

import html
from typing import Callable

import ipywidgets as widgets
import torch
from torch import nn

from gradacc_lessons.memory import MiB
from gradacc_lessons.planner import plan_accumulation


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
    budget = round(budget_mib * MiB)
    try:
        plan = plan_accumulation(
            model, optimizer, loss_fn, sample_inputs, sample_targets, effective_batch, budget
        )
    except ValueError as error:
        return f"<b>budget {budget_mib:.3f} MiB: no plan.</b> {html.escape(str(error))}"
    steps = plan.accumulation_steps
    sizes = sorted(set(plan.micro_batch_sizes), reverse=True)
    return (
        f"<b>budget {budget_mib:.3f} MiB:</b> micro-batches of "
        f"{' or '.join(map(str, sizes))} samples, {steps} step{'s' if steps > 1 else ''} "
        f"of accumulation for an effective batch of {plan.effective_batch}; measured peak "
        f"{plan.predicted_peak_bytes / MiB:.3f} MiB "
        f"(floor {plan.report.floor_bytes / MiB:.3f} MiB, "
        f"activations {plan.report.activation_bytes / MiB:.3f} MiB)"
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
) -> widgets.VBox:
    """A slider over (low, high, step) MiB of budget, and the plan that fits each value."""
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

    slider.observe(show, names="value")
    show()
    return widgets.VBox([slider, output])
