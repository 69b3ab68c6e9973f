"""BatchNorm breaks exact accumulation: the gradient errors, the fixes, the forward pass.

Train-mode BatchNorm normalises each micro-batch with that micro-batch's own mean
and variance, so N micro-batches compute a different function than one batch:
no loss scaling can repair that. LayerNorm and GroupNorm normalise each sample
on its own and stay exact; so does BatchNorm in eval mode (fixed statistics).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from gradacc_lessons.accumulate import accumulated_gradients, full_batch_gradients, split_batch
from gradacc_lessons.checks import as_choice, as_count, as_counts
from gradacc_lessons.compare import relative_error
from gradacc_lessons.data import load_digits
from gradacc_lessons.device import seeded
from gradacc_lessons.display import Result, Table
from gradacc_lessons.models import MLP, SmallCNN

KINDS = ("mlp", "cnn")


def digits_problem(
    kind: str = "mlp", norm: str = "batch", samples: int = 64, seed: int = 0
) -> tuple[nn.Module, torch.Tensor, torch.Tensor]:
    """An MLP (BatchNorm1d when norm="batch") or a SmallCNN (BatchNorm2d) and `samples` digits,
    all in float64.

    >>> model, x, y = digits_problem("cnn", samples=8)
    >>> type(model[1]).__name__, tuple(x.shape)
    ('BatchNorm2d', (8, 1, 8, 8))
    """
    as_choice("kind", kind, KINDS)
    samples, seed = as_count("samples", samples, 2, 1797), as_count("seed", seed, minimum=0)
    x, y = load_digits(images=kind == "cnn", dtype=torch.float64)
    generator = torch.Generator().manual_seed(seed)
    pick = torch.randperm(len(x), generator=generator)[:samples]
    with seeded(seed):  # the same weights for every N, and the student's stream left alone
        model = MLP(64, 10, norm=norm) if kind == "mlp" else SmallCNN(10, norm=norm)
    return model.double(), x[pick], y[pick]


def biases_before_batchnorm(model: nn.Module) -> set[str]:
    """Names of the biases that feed a BatchNorm directly: BatchNorm subtracts them again,
    so their gradient is zero in train mode (noise over noise in a relative error).

    >>> sorted(biases_before_batchnorm(MLP(4, 2, norm="batch")))
    ['0.bias', '3.bias']
    """
    if not isinstance(model, nn.Module):
        raise ValueError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    children = list(model.named_children())
    return {
        f"{name}.bias"
        for (name, layer), (_, following) in zip(children, children[1:])
        if isinstance(following, nn.modules.batchnorm._BatchNorm)
        and getattr(layer, "bias", None) is not None
    }


def gradient_error(
    kind: str, norm: str, accumulation_steps: int, samples: int = 64, eval_mode: bool = False
) -> float:
    """L2 relative error of the accumulated gradient against the full batch (float64),
    biases feeding a BatchNorm left out.

    >>> gradient_error("mlp", "layer", accumulation_steps=4) < 1e-12
    True
    """
    as_count("accumulation_steps", accumulation_steps)
    model, x, y = digits_problem(kind, norm, samples)
    model.train(not eval_mode)
    full = full_batch_gradients(model, F.cross_entropy, x, y)
    acc = accumulated_gradients(model, F.cross_entropy, x, y, accumulation_steps)
    for name in biases_before_batchnorm(model):
        del full[name], acc[name]
    return relative_error(full, acc)


@dataclass(frozen=True, repr=False)
class NormErrors(Result):
    """Gradient error against N (relative, float64) for four normalisations, one list each."""

    accumulation_steps: list[int]  # the N of each column below
    samples: int  # the batch split into N micro-batches
    batchnorm_mlp: list[float]  # BatchNorm1d in an MLP
    batchnorm_cnn: list[float]  # BatchNorm2d in a CNN
    layernorm_mlp: list[float]
    groupnorm_cnn: list[float]

    def series(self) -> dict[str, list[float]]:
        """The four error lists under their plot labels."""
        return {
            "BatchNorm1d MLP": self.batchnorm_mlp,
            "BatchNorm2d CNN": self.batchnorm_cnn,
            "LayerNorm MLP": self.layernorm_mlp,
            "GroupNorm CNN": self.groupnorm_cnn,
        }

    def table(self) -> Table:
        columns = zip(*self.series().values())
        rows = [
            (n, self.samples // n, *(f"{e:.2e}" for e in errors))
            for n, errors in zip(self.accumulation_steps, columns)
        ]
        return Table(("N", "micro-batch size", *self.series()), rows, "gradient error")


def compute_batchnorm_errors(
    accumulation_steps: tuple[int, ...] = (1, 2, 4, 8, 16), samples: int = 64
) -> NormErrors:
    """Gradient error against N for BatchNorm1d (MLP) and BatchNorm2d (CNN), with LayerNorm beside.

    >>> errors = compute_batchnorm_errors(accumulation_steps=(1, 2), samples=8)
    >>> errors.batchnorm_mlp[0] < 1e-12 < errors.batchnorm_mlp[1]
    True
    """
    accumulation_steps = as_counts("accumulation_steps", accumulation_steps)
    samples = as_count("samples", samples, minimum=2)

    def errors(kind, norm):
        return [gradient_error(kind, norm, n, samples) for n in accumulation_steps]

    return NormErrors(
        list(accumulation_steps),
        samples,
        errors("mlp", "batch"),
        errors("cnn", "batch"),
        errors("mlp", "layer"),
        errors("cnn", "group"),
    )


@dataclass(frozen=True, repr=False)
class FixErrors(Result):
    """Gradient error (relative, float64) of each way around BatchNorm, at one N."""

    accumulation_steps: int
    batchnorm_mlp_train: float  # BatchNorm1d, train mode: the problem
    batchnorm_mlp_eval: float
    layernorm_mlp: float
    groupnorm_mlp: float
    batchnorm_cnn_train: float  # BatchNorm2d, train mode: the problem
    batchnorm_cnn_eval: float
    groupnorm_cnn: float
    layernorm_cnn: float  # LayerNorm = GroupNorm(1)

    def table(self) -> Table:
        rows = [
            (label, f"{error:.1e}")
            for label, error in (
                ("BatchNorm1d, train mode", self.batchnorm_mlp_train),
                ("BatchNorm1d, eval mode", self.batchnorm_mlp_eval),
                ("LayerNorm (MLP)", self.layernorm_mlp),
                ("GroupNorm (MLP)", self.groupnorm_mlp),
                ("BatchNorm2d, train mode", self.batchnorm_cnn_train),
                ("BatchNorm2d, eval mode", self.batchnorm_cnn_eval),
                ("GroupNorm (CNN)", self.groupnorm_cnn),
                ("LayerNorm = GroupNorm(1) (CNN)", self.layernorm_cnn),
            )
        ]
        return Table(("way", "gradient error"), rows, f"N = {self.accumulation_steps}")


def compute_fixes(accumulation_steps: int = 4, samples: int = 64) -> FixErrors:
    """Gradient error of each way around BatchNorm at the same N (float64).

    >>> fixes = compute_fixes(accumulation_steps=2, samples=8)
    >>> fixes.batchnorm_mlp_eval < 1e-12 < fixes.batchnorm_mlp_train
    True
    """
    as_count("accumulation_steps", accumulation_steps)

    def error(kind, norm, eval_mode=False):
        return gradient_error(kind, norm, accumulation_steps, samples, eval_mode)

    return FixErrors(
        accumulation_steps,
        error("mlp", "batch"),
        error("mlp", "batch", eval_mode=True),
        error("mlp", "layer"),
        error("mlp", "group"),
        error("cnn", "batch"),
        error("cnn", "batch", eval_mode=True),
        error("cnn", "group"),
        error("cnn", "layer"),
    )


def forward_difference(kind: str, norm: str, accumulation_steps: int, samples: int = 64) -> float:
    """How far the outputs of N micro-batch forwards are from one full-batch forward (relative).

    >>> forward_difference("mlp", "group", 4) < 1e-12 < forward_difference("mlp", "batch", 4)
    True
    """
    as_count("accumulation_steps", accumulation_steps)
    model, x, _ = digits_problem(kind, norm, samples)
    with torch.no_grad():
        full = model(x)
        pieces = torch.cat([model(xb) for xb, _ in split_batch(x, x, accumulation_steps)])
    return relative_error({"outputs": full}, {"outputs": pieces})
