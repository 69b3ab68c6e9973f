"""A micro-batch of one sample under train-mode BatchNorm: what PyTorch does, and why."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from gradacc_lessons.accumulate import accumulated_gradients
from gradacc_lessons.checks import as_count
from gradacc_lessons.demos.batchnorm.gradients import digits_problem
from gradacc_lessons.display import Result, Table


def single_sample_error() -> str:
    """The error PyTorch raises when a train-mode BatchNorm1d sees a micro-batch of one sample.

    >>> "more than 1 value per channel" in single_sample_error()
    True
    """
    model, x, y = digits_problem("mlp", "batch", samples=4)
    try:
        accumulated_gradients(model, F.cross_entropy, x, y, accumulation_steps=4)
    except ValueError as error:
        return f"ValueError: {error}"
    raise AssertionError("BatchNorm1d accepted a micro-batch of one sample")


@dataclass(frozen=True, repr=False)
class SingleSampleFacts(Result):
    """What train-mode BatchNorm does with a micro-batch of one sample."""

    output_minus_beta: float  # largest |output - beta|, computed by hand on a (1, C) input
    gradient_before: float  # largest gradient reaching the layer before, by hand
    one_value_per_channel: str  # what PyTorch does with a (1, C) input
    several_values_per_channel: str  # ... and with a (1, C, L) input

    def table(self) -> Table:
        rows = [
            ("largest |output - beta|, by hand", self.output_minus_beta),
            ("gradient before the layer, by hand", self.gradient_before),
            ("PyTorch, (1, C) input", self.one_value_per_channel),
            ("PyTorch, (1, C, L) input", self.several_values_per_channel),
        ]
        return Table(("a micro-batch of one sample", "measured"), rows)


def single_sample_facts(channels: int = 4, length: int = 5, seed: int = 0) -> SingleSampleFacts:
    """What train-mode BatchNorm does with a micro-batch of one sample, measured.

    - With one value per channel ((1, C) inputs), x - mean is exactly 0: computed by
      hand, the output is beta whatever the sample, and the gradient reaching the layer
      before is exactly 0. PyTorch refuses this case with a ValueError.
    - With several values per channel ((1, C, L): a sequence, or an image's pixels),
      BatchNorm1d/2d train: the statistics are then those of the one sample.

    >>> facts = single_sample_facts()
    >>> facts.output_minus_beta, facts.gradient_before
    (0.0, 0.0)
    """
    channels = as_count("channels", channels)
    length = as_count("length", length, minimum=2, fix="several values per channel")
    generator = torch.Generator().manual_seed(as_count("seed", seed, minimum=0))
    layer = nn.BatchNorm1d(channels).train()
    with torch.no_grad():
        layer.weight.uniform_(0.5, 1.5, generator=generator)  # gamma and beta away from 1 and 0
        layer.bias.uniform_(-1.0, 1.0, generator=generator)
    x = torch.randn(1, channels, generator=generator, requires_grad=True)
    mean = x.mean(dim=0, keepdim=True)
    variance = x.var(dim=0, unbiased=False, keepdim=True)
    by_hand = (x - mean) / torch.sqrt(variance + layer.eps) * layer.weight + layer.bias
    (by_hand * torch.randn(1, channels, generator=generator)).sum().backward()
    sequence = torch.randn(1, channels, length, generator=generator)
    return SingleSampleFacts(
        float((by_hand - layer.bias).detach().abs().max()),
        float(x.grad.abs().max()),
        _error_of(layer, x.detach()),
        f"trains: output shape {tuple(layer(sequence).shape)}",
    )


def _error_of(layer: nn.Module, x: torch.Tensor) -> str:
    try:
        layer(x)
    except ValueError as error:
        return f"ValueError: {error}"
    return "no error"
