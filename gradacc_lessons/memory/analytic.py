"""The analytic model of training memory: what a step should take, computed, not measured.

Parameters + gradients + optimizer state + activations per sample × micro-batch
(`estimate_training_memory`, set beside the measurement by `memory_by_micro_batch_size`), the
short-lived buffers of accumulation and of the optimizer step (`estimate_temporaries`), and
the floor and activations of large models from published accounting (`floor_for`,
`transformer_activation_bytes`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from gradacc_lessons.accumulate import check_batch
from gradacc_lessons.checks import as_choice, as_count, as_counts, as_positive
from gradacc_lessons.display import Result, Table
from gradacc_lessons.memory.measured import (
    ANALYTIC_METHOD,
    MemoryReport,
    _bytes,
    _check_optimizer,
    _device_of,
    activation_bytes_per_sample,
    measure_training_memory,
)


def estimate_training_memory(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    micro_batch_size: int,
    activation_bytes_per_sample: float,
) -> MemoryReport:
    """The analytic model: parameters + gradients + optimizer state + activations × b.

    Gradients take as much as the trainable parameters; the optimizer state follows its
    type (`optimizer_state_multiplier`); activations grow linearly with the micro-batch.

    >>> model = torch.nn.Linear(10, 2)
    >>> opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    >>> estimate_training_memory(model, opt, 8, 100.0).peak_bytes  # 3 × 88 + 800
    1064
    """
    micro_batch_size = as_count("micro_batch_size", micro_batch_size)
    activation_bytes_per_sample = as_positive(
        "activation_bytes_per_sample", activation_bytes_per_sample, zero_allowed=True
    )
    trainable = [p for p in model.parameters() if p.requires_grad]
    owned = [p for group in optimizer.param_groups for p in group["params"] if p.requires_grad]
    moments, per_tensor = optimizer_state_multiplier(optimizer)
    parameter_bytes = _bytes(model.parameters())
    gradient_bytes = _bytes(trainable)
    optimizer_bytes = round(moments * _bytes(owned)) + per_tensor * len(owned)
    activation_bytes = round(activation_bytes_per_sample * micro_batch_size)
    return MemoryReport(
        peak_bytes=parameter_bytes + gradient_bytes + optimizer_bytes + activation_bytes,
        parameter_bytes=parameter_bytes,
        gradient_bytes=gradient_bytes,
        optimizer_bytes=optimizer_bytes,
        activation_bytes=activation_bytes,
        device=str(_device_of(model)),
        method=ANALYTIC_METHOD,
        micro_batch_size=micro_batch_size,
    )


def optimizer_state_multiplier(optimizer: torch.optim.Optimizer) -> tuple[float, int]:
    """(state bytes per parameter byte, bytes per parameter tensor) that `optimizer` keeps.

    SGD keeps nothing, SGD with momentum one buffer, Adam and AdamW two moments (three
    with amsgrad) plus one scalar step count per parameter tensor.

    >>> model = torch.nn.Linear(2, 1)
    >>> optimizer_state_multiplier(torch.optim.Adam(model.parameters()))
    (2.0, 4)
    """
    _check_optimizer(optimizer)
    groups = optimizer.param_groups
    if type(optimizer) is torch.optim.SGD:
        return (1.0 if any(g["momentum"] != 0 for g in groups) else 0.0), 0
    if type(optimizer) in (torch.optim.Adam, torch.optim.AdamW):
        step_bytes = torch.zeros(()).element_size()  # the step count: a default-dtype scalar
        return (3.0 if any(g["amsgrad"] for g in groups) else 2.0), step_bytes
    raise ValueError(
        f"optimizer must be SGD, Adam or AdamW for the analytic model, got "
        f"{type(optimizer).__name__}; measure it with measure_training_memory instead"
    )


def memory_by_micro_batch_size(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    loss_fn: Callable,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    sizes: list[int],
) -> tuple[list[MemoryReport], list[MemoryReport]]:
    """Measured and modelled memory of one step for each micro-batch size (no accumulation).

    Micro-batches are the first `size` samples of `inputs`; the model's activations per
    sample come from the first two samples.

    >>> model = torch.nn.Linear(4, 2)
    >>> opt = torch.optim.SGD(model.parameters(), lr=0.1)
    >>> x, y = torch.randn(8, 4), torch.randn(8, 2)
    >>> loss_fn = torch.nn.MSELoss()
    >>> measured, modelled = memory_by_micro_batch_size(model, opt, loss_fn, x, y, [2, 8])
    >>> [r.activation_bytes for r in measured] == [r.activation_bytes for r in modelled]
    True
    """
    sizes = as_counts("sizes", sizes, maximum=check_batch(inputs, targets))
    per_sample = activation_bytes_per_sample(model, loss_fn, inputs[:2], targets[:2])
    measured = [
        measure_training_memory(model, optimizer, loss_fn, inputs[:b], targets[:b]) for b in sizes
    ]
    modelled = [estimate_training_memory(model, optimizer, b, per_sample) for b in sizes]
    return measured, modelled


@dataclass(frozen=True, repr=False)
class Temporaries(Result):
    """The short-lived buffers (bytes) on top of parameters, gradients, state and activations."""

    accumulation_steps: int
    accumulating_bytes: int  # a new gradient made beside the filled .grad (N >= 2)
    step_bytes: int  # the optimizer step's temporaries

    def table(self) -> Table:
        rows = [
            ("accumulating into .grad", f"{self.accumulating_bytes:,}"),
            ("optimizer step", f"{self.step_bytes:,}"),
        ]
        return Table(("temporary", "bytes"), rows, f"N = {self.accumulation_steps}")


def estimate_temporaries(
    model: nn.Module, optimizer: torch.optim.Optimizer, accumulation_steps: int = 1
) -> Temporaries:
    """The rule for the short-lived buffers on top of parameters, gradients, state and activations.

    - a window of N >= 2 micro-batches: from the second backward on, each new gradient is
      made beside the filled `.grad` and then added to it: one more tensor the size of the
      largest parameter;
    - the optimizer step: Adam and AdamW written as a loop over tensors (the CPU default)
      hold two temporaries the size of the largest parameter (three for Adam's weight
      decay), plus the previous tensor's result; their `foreach` form (the CUDA default)
      one copy of all parameters; `fused=True` none. SGD holds none, or one largest
      tensor (loop) / all parameters (foreach) with weight decay.

    >>> model = torch.nn.Sequential(torch.nn.Linear(100, 50), torch.nn.Linear(50, 2))
    >>> rule = estimate_temporaries(model, torch.optim.Adam(model.parameters()), 2)
    >>> rule.accumulating_bytes, rule.step_bytes
    (20000, 40000)
    """
    _check_optimizer(optimizer)
    accumulation_steps = as_count("accumulation_steps", accumulation_steps)
    trainable = [p for p in model.parameters() if p.requires_grad]
    if not trainable:
        raise ValueError("the model has no parameter that requires grad: no gradient to hold")
    largest = max(p.numel() * p.element_size() for p in trainable)
    return Temporaries(
        accumulation_steps,
        largest if accumulation_steps >= 2 else 0,
        _step_temporaries(optimizer, largest),
    )


def _step_temporaries(optimizer: torch.optim.Optimizer, largest: int) -> int:
    group = optimizer.param_groups[0]
    params = [p for g in optimizer.param_groups for p in g["params"] if p.requires_grad]
    sizes = [p.numel() * p.element_size() for p in params]
    if group.get("fused"):
        return 0
    foreach = group.get("foreach")
    if foreach is None:  # PyTorch's default: foreach when every tensor is on a GPU
        foreach = all(p.is_cuda for p in params)
    decay = group.get("weight_decay", 0) != 0
    if type(optimizer) in (torch.optim.Adam, torch.optim.AdamW):
        if foreach:  # one temporary per parameter, all at once
            return sum(sizes)
        # A loop over tensors: sqrt(v) and its quotient (two temporaries), plus grad + wd * p
        # for Adam's weight decay; the previous tensor's result is still referenced.
        per_tensor = 3 if type(optimizer) is torch.optim.Adam and decay else 2
        return max(per_tensor * size + before for size, before in zip(sizes, [0, *sizes]))
    if type(optimizer) is torch.optim.SGD:
        return (sum(sizes) if foreach else largest) if decay else 0  # grad + wd * p
    raise ValueError(
        f"optimizer must be SGD, Adam or AdamW for the rule, got {type(optimizer).__name__}; "
        f"measure it with measure_phase_peaks instead"
    )


# Bytes per parameter of full fine-tuning recipes (ZeRO paper's accounting, Rajbhandari et al.
# 2020): what stays in memory for the whole run, before any activation.
RECIPES = {
    "float32, Adam": {"parameters": 4, "gradients": 4, "optimizer state": 8},
    "mixed precision, AdamW": {  # 16-bit weights and gradients, float32 master copy and moments
        "parameters": 2,
        "gradients": 2,
        "optimizer state": 4 + 8,
    },
    "16-bit weights, float32 gradient buffers, AdamW": {
        "parameters": 2,
        "gradients": 4,
        "optimizer state": 4 + 8,
    },
}


def floor_for(parameters: int, recipe: str = "mixed precision, AdamW") -> dict[str, float]:
    """The floor of training `parameters` weights with a recipe, in bytes per part.

    >>> floor_for(7_000_000_000)["total"] / 1e9  # a 7B model: 16 bytes per parameter
    112.0
    """
    parameters = as_count("parameters", parameters)
    as_choice("recipe", recipe, RECIPES)
    parts = {part: float(parameters * size) for part, size in RECIPES[recipe].items()}
    return {**parts, "total": sum(parts.values())}


def transformer_activation_bytes(
    tokens: int,
    hidden: int,
    layers: int,
    checkpointing: bool = False,
) -> float:
    """An estimate of what a GPT-style transformer saves for backward, for `tokens` tokens.

    Korthikanti et al. (2022) count 34 x hidden bytes per token and layer with 16-bit
    activations, when the attention scores are not stored (as with FlashAttention);
    checkpointing every layer keeps only each layer's 16-bit input: 2 x hidden bytes.
    An estimate to plan with, not a measurement: measure your own model.

    >>> transformer_activation_bytes(4096, hidden=4096, layers=32) / 1e9  # a 7B model
    18.253611008
    """
    tokens, hidden, layers = (as_count(n, v) for n, v in (("tokens", tokens), ("hidden", hidden),
                                                         ("layers", layers)))  # fmt: skip
    per_token_and_layer = 2 * hidden if checkpointing else 34 * hidden
    return float(tokens * layers * per_token_and_layer)
