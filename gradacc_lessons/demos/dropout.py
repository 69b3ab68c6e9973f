"""Dropout under accumulation: equal in distribution, and how to make a comparison exact.

A full batch draws one dropout mask for all its samples; N micro-batches draw N
smaller masks from the random stream in a different order, so the same seed
gives different masks and different gradients. Both are draws of the same
random gradient, though: their averages over many seeds agree. To compare
exactly, switch dropout off (eval mode) or draw each sample's mask up front
and let it travel with the sample through the split.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from gradacc_lessons.accumulate import accumulated_gradients, full_batch_gradients
from gradacc_lessons.checks import as_count
from gradacc_lessons.compare import relative_error
from gradacc_lessons.data import make_classification
from gradacc_lessons.device import seeded
from gradacc_lessons.display import Result, Table


class DropoutMLP(nn.Module):
    """Linear -> ReLU -> Dropout, twice, then Linear.

    Inputs of `features` columns use PyTorch's dropout (random at every call).
    Inputs with 2 * hidden more columns carry their own keep-masks (1 = keep, 0 = drop),
    drawn by `with_masks`, so a sample is dropped the same way however the batch is split.

    >>> DropoutMLP(3, 2, hidden=4)(torch.zeros(5, 3)).shape
    torch.Size([5, 2])
    """

    def __init__(self, features: int, classes: int, hidden: int = 32, p: float = 0.5):
        super().__init__()
        self.features, self.hidden, self.p = features, hidden, p
        self.layers = nn.ModuleList(
            [nn.Linear(features, hidden), nn.Linear(hidden, hidden), nn.Linear(hidden, classes)]
        )

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        x, masks = self._split(inputs)
        for i, layer in enumerate(self.layers[:-1]):
            x = F.relu(layer(x))
            if masks is None:
                x = F.dropout(x, self.p, training=self.training)
            elif self.training:
                x = x * masks[i] / (1 - self.p)  # the same scaling as F.dropout
        return self.layers[-1](x)

    def _split(self, inputs: torch.Tensor):
        width = inputs.shape[-1]
        if width == self.features:
            return inputs, None
        if width == self.features + 2 * self.hidden:
            x, masks = inputs.split([self.features, 2 * self.hidden], dim=-1)
            return x, masks.split(self.hidden, dim=-1)
        raise ValueError(
            f"inputs must have {self.features} columns, or {self.features + 2 * self.hidden} "
            f"with the masks of with_masks(); got {width}"
        )


def with_masks(x: torch.Tensor, model: DropoutMLP, seed: int) -> torch.Tensor:
    """`x` with each sample's two dropout keep-masks appended, drawn from `seed`.

    >>> with_masks(torch.zeros(5, 3), DropoutMLP(3, 2, hidden=4), seed=0).shape
    torch.Size([5, 11])
    """
    if not isinstance(model, DropoutMLP):
        raise ValueError(f"model must be a DropoutMLP (masks follow its layers), got {model!r}")
    seed = as_count("seed", seed, minimum=0)
    generator = torch.Generator().manual_seed(seed)
    keep = torch.rand(len(x), 2 * model.hidden, generator=generator, dtype=x.dtype) >= model.p
    return torch.cat([x, keep.to(x.dtype)], dim=-1)


def _cosine(a: dict, b: dict) -> float:
    dot = sum(float((a[n] * b[n]).sum()) for n in a)
    norms = sum(float((a[n] ** 2).sum()) for n in a) * sum(float((b[n] ** 2).sum()) for n in b)
    return dot / norms**0.5


@dataclass(frozen=True, repr=False)
class DropoutComparison(Result):
    """Full batch against accumulated with dropout (float64): cosines of the gradients per seed
    and of their averages over the seeds, and the relative errors of the two exact ways."""

    seeds: int
    accumulation_steps: int
    mean_cosine: float  # per seed (the same seed draws other masks), averaged
    cosine_of_averages: float  # of the gradients averaged over the seeds
    masks_with_samples: float  # relative error when each sample's mask travels with it
    eval_mode: float  # relative error with dropout off

    def table(self) -> Table:
        rows = [
            ("mean cosine, same seed", f"{self.mean_cosine:.3g}"),
            (f"cosine of the averages over {self.seeds} seeds", f"{self.cosine_of_averages:.3g}"),
            ("masks travel with the samples", f"{self.masks_with_samples:.3g}"),
            ("eval mode", f"{self.eval_mode:.3g}"),
        ]
        return Table(("full batch vs accumulated", "value"), rows, f"N = {self.accumulation_steps}")


def compute_dropout_comparison(seeds: int = 100, accumulation_steps: int = 4) -> DropoutComparison:
    """Full batch vs accumulated with dropout (float64): per seed, averaged over seeds, and exact.

    >>> result = compute_dropout_comparison(seeds=2)
    >>> result.masks_with_samples < 1e-12 and result.eval_mode < 1e-12
    True
    """
    seeds = as_count("seeds", seeds)
    accumulation_steps = as_count("accumulation_steps", accumulation_steps, 1, 64)
    x, y = make_classification(samples=64, features=20, classes=4, dtype=torch.float64)
    with seeded(0):
        model = DropoutMLP(20, 4).double()
    full_sum, acc_sum, cosines = None, None, []
    for seed in range(seeds):
        with seeded(seed):
            full = full_batch_gradients(model, F.cross_entropy, x, y)
        with seeded(seed):  # the same seed: still other masks
            acc = accumulated_gradients(model, F.cross_entropy, x, y, accumulation_steps)
        cosines.append(_cosine(full, acc))
        full_sum = full if full_sum is None else {n: full_sum[n] + full[n] for n in full}
        acc_sum = acc if acc_sum is None else {n: acc_sum[n] + acc[n] for n in acc}
    masked = with_masks(x, model, seed=0)
    exact = relative_error(
        full_batch_gradients(model, F.cross_entropy, masked, y),
        accumulated_gradients(model, F.cross_entropy, masked, y, accumulation_steps),
    )
    model.eval()
    evaluated = relative_error(
        full_batch_gradients(model, F.cross_entropy, x, y),
        accumulated_gradients(model, F.cross_entropy, x, y, accumulation_steps),
    )
    model.train()
    return DropoutComparison(
        seeds,
        accumulation_steps,
        sum(cosines) / seeds,
        _cosine(full_sum, acc_sum),
        exact,
        evaluated,
    )
