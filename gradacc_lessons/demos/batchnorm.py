"""Where accumulation stops being exact: BatchNorm (and Dropout), measured.

Train-mode BatchNorm normalises each micro-batch with that micro-batch's own mean
and variance, so N micro-batches compute a different function than one batch:
no loss scaling can repair that. LayerNorm and GroupNorm normalise each sample
on its own and stay exact; so does BatchNorm in eval mode (fixed statistics).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from gradacc_lessons.accumulate import accumulated_gradients, full_batch_gradients, split_batch
from gradacc_lessons.checks import as_choice, as_count, as_counts, as_fraction
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


def set_batchnorm_momentum(model: nn.Module, momentum: float) -> int:
    """Give every BatchNorm layer of `model` this momentum; return how many layers changed.

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


BATCHNORMS = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)


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


@dataclass(frozen=True, repr=False)
class ReplicaErrors(Result):
    """The gradient of `replicas` micro-batches accumulated on one device, against N devices
    with plain BatchNorm and against one batch (SyncBatchNorm): relative errors, float64."""

    replicas: int
    micro_batch_size: int
    plain_batchnorm: float  # against N devices with plain BatchNorm, gradients averaged
    sync_batchnorm: float  # against one batch of all the samples (SyncBatchNorm)

    def table(self) -> Table:
        rows = [
            ("devices with plain BatchNorm", f"{self.plain_batchnorm:.1e}"),
            ("one batch (SyncBatchNorm)", f"{self.sync_batchnorm:.1e}"),
        ]
        title = (
            f"{self.replicas} micro-batches of {self.micro_batch_size} accumulated, "
            "relative error against"
        )
        return Table(("reference", "relative error"), rows, title)


def replicas_vs_accumulation(
    replicas: int = 8, micro_batch_size: int = 32, kind: str = "mlp"
) -> ReplicaErrors:
    """N devices with plain BatchNorm against one device accumulating the same N micro-batches.

    Under DDP each device normalises its own micro-batch with plain BatchNorm, and the
    devices' gradients are averaged; accumulating the same micro-batches on one device
    computes exactly that. SyncBatchNorm instead normalises with all devices' samples
    together: the full batch. Returns the relative error of the accumulated gradient
    against each (float64, biases feeding a BatchNorm left out).

    >>> errors = replicas_vs_accumulation(replicas=2, micro_batch_size=8)
    >>> errors.plain_batchnorm < 1e-12 < errors.sync_batchnorm
    True
    """
    replicas = as_count("replicas", replicas)
    micro_batch_size = as_count(
        "micro_batch_size", micro_batch_size, minimum=2, fix="BatchNorm needs two samples"
    )
    model, x, y = digits_problem(kind, "batch", replicas * micro_batch_size)
    accumulated = accumulated_gradients(model, F.cross_entropy, x, y, replicas)
    per_device = [
        full_batch_gradients(copy.deepcopy(model), F.cross_entropy, xb, yb)
        for xb, yb in split_batch(x, y, replicas)
    ]
    averaged = {name: sum(g[name] for g in per_device) / replicas for name in accumulated}
    full = full_batch_gradients(model, F.cross_entropy, x, y)
    for name in biases_before_batchnorm(model):
        for gradients in (accumulated, averaged, full):
            del gradients[name]
    return ReplicaErrors(
        replicas,
        micro_batch_size,
        relative_error(averaged, accumulated),
        relative_error(full, accumulated),
    )
