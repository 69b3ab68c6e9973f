"""BatchNorm's running statistics under accumulation: N momentum updates instead of one.

Each micro-batch's forward pass updates the running mean and variance, so a window of N
micro-batches moves them N times; `compensating_momentum` gives the momentum whose N
updates weigh new data as one update does.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
from torch import nn

from gradacc_lessons.accumulate import split_batch
from gradacc_lessons.checks import as_count, as_counts, as_fraction
from gradacc_lessons.compare import relative_error
from gradacc_lessons.demos.batchnorm.gradients import digits_problem
from gradacc_lessons.display import Result, Table

BATCHNORMS = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)


def compensating_momentum(momentum: float, accumulation_steps: int) -> float:
    """The BatchNorm momentum whose N updates put the same weight on new data as one update.

    >>> round(compensating_momentum(0.1, 1), 12)
    0.1
    """
    momentum = as_fraction("momentum", momentum, "strictly between 0 and 1")
    if momentum in (0.0, 1.0):
        raise ValueError(f"momentum must be strictly between 0 and 1, got {momentum}")
    accumulation_steps = as_count("accumulation_steps", accumulation_steps)
    return 1.0 - (1.0 - momentum) ** (1.0 / accumulation_steps)


def running_stats_error(accumulation_steps: int, momentum: float = 0.1, samples: int = 64) -> dict:
    """Running mean and variance after N micro-batches vs after one full batch (relative L2).

    >>> running_stats_error(1)["mean"] < 1e-12
    True
    """
    as_count("accumulation_steps", accumulation_steps)
    momentum = as_fraction("momentum", momentum, "PyTorch's default is 0.1")
    if momentum in (0.0, 1.0):
        raise ValueError(f"momentum must be strictly between 0 and 1, got {momentum}")
    model, x, y = digits_problem("mlp", "batch", samples)
    full, acc = copy.deepcopy(model), copy.deepcopy(model)
    for layer in acc.modules():
        if isinstance(layer, nn.BatchNorm1d):
            layer.momentum = momentum
    with torch.no_grad():
        full(x)  # one update with momentum 0.1 (PyTorch's default)
        for xb, _ in split_batch(x, y, accumulation_steps):
            acc(xb)  # N updates
    errors = {}
    for stat in ("mean", "var"):
        reference = {n: b for n, b in full.named_buffers() if n.endswith(f"running_{stat}")}
        errors[stat] = relative_error(
            reference, {n: dict(acc.named_buffers())[n] for n in reference}
        )
    return errors


@dataclass(frozen=True, repr=False)
class RunningStats(Result):
    """Against N: the weight N momentum updates put on new data, and the running-statistics
    errors (relative) with the plain momentum and with the compensating one, m_N."""

    accumulation_steps: list[int]
    momentum: float
    weight_on_new_data: list[float]
    mean_error: list[float]
    var_error: list[float]
    mean_error_compensated: list[float]
    var_error_compensated: list[float]

    def table(self) -> Table:
        headers = ("N", "m_N", "new data", "mean err", "var err", "with m_N: mean", "var")
        rows = [
            (n, f"{compensating_momentum(self.momentum, n):.4f}", *(f"{v:.1%}" for v in values))
            for n, *values in zip(
                self.accumulation_steps,
                self.weight_on_new_data,
                self.mean_error,
                self.var_error,
                self.mean_error_compensated,
                self.var_error_compensated,
            )
        ]
        return Table(headers, rows, f"BatchNorm running statistics, momentum {self.momentum}")


def compute_running_stats(
    accumulation_steps: tuple[int, ...] = (1, 2, 4, 8), momentum: float = 0.1
) -> RunningStats:
    """Against N: weight on new data, and running-statistics errors with plain and compensated
    momentum.

    >>> compute_running_stats(accumulation_steps=(8,)).weight_on_new_data[0] > 0.5
    True
    """
    accumulation_steps = as_counts("accumulation_steps", accumulation_steps)
    plain = [running_stats_error(n, momentum) for n in accumulation_steps]
    fixed = [running_stats_error(n, compensating_momentum(momentum, n)) for n in accumulation_steps]
    return RunningStats(
        list(accumulation_steps),
        momentum,
        [1 - (1 - momentum) ** n for n in accumulation_steps],
        [e["mean"] for e in plain],
        [e["var"] for e in plain],
        [e["mean"] for e in fixed],
        [e["var"] for e in fixed],
    )


def set_batchnorm_momentum(model: nn.Module, momentum: float) -> int:
    """Give every BatchNorm layer of `model` this momentum; return how many layers changed.

    >>> from gradacc_lessons.models import MLP
    >>> set_batchnorm_momentum(MLP(4, 2, norm="batch"), compensating_momentum(0.1, 8))
    2
    """
    if not isinstance(model, nn.Module):
        raise ValueError(f"model must be a torch.nn.Module, got {model!r}")
    momentum = as_fraction("momentum", momentum, "e.g. compensating_momentum(0.1, N)")
    layers = [m for m in model.modules() if isinstance(m, BATCHNORMS)]
    for layer in layers:
        layer.momentum = momentum
    return len(layers)
