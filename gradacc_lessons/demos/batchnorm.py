"""Where accumulation stops being exact: BatchNorm (and Dropout), measured.

Train-mode BatchNorm normalises each micro-batch with that micro-batch's own mean
and variance, so N micro-batches compute a different function than one batch:
no loss scaling can repair that. LayerNorm and GroupNorm normalise each sample
on its own and stay exact; so does BatchNorm in eval mode (fixed statistics).
"""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import nn

from gradacc_lessons.accumulate import accumulated_gradients, full_batch_gradients, split_batch
from gradacc_lessons.checks import as_choice, as_count, as_counts, as_fraction
from gradacc_lessons.compare import relative_error
from gradacc_lessons.data import load_digits
from gradacc_lessons.device import seeded
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


def compute_batchnorm_errors(
    ns: tuple[int, ...] = (1, 2, 4, 8, 16), samples: int = 64
) -> dict[str, list[float]]:
    """Gradient error against N for BatchNorm1d (MLP) and BatchNorm2d (CNN), with LayerNorm beside.

    >>> errors = compute_batchnorm_errors(ns=(1, 2), samples=8)
    >>> errors["BatchNorm1d MLP"][0] < 1e-12 < errors["BatchNorm1d MLP"][1]
    True
    """
    ns, samples = as_counts("ns", ns), as_count("samples", samples, minimum=2)
    rows = {
        "BatchNorm1d MLP": ("mlp", "batch"),
        "BatchNorm2d CNN": ("cnn", "batch"),
        "LayerNorm MLP": ("mlp", "layer"),
        "GroupNorm CNN": ("cnn", "group"),
    }
    errors = {
        label: [gradient_error(k, n, N, samples) for N in ns] for label, (k, n) in rows.items()
    }
    return {"n": list(ns), **errors}


def compute_fixes(accumulation_steps: int = 4, samples: int = 64) -> dict[str, float]:
    """Gradient error of each way around BatchNorm at the same N (float64).

    >>> fixes = compute_fixes(accumulation_steps=2, samples=8)
    >>> fixes["BatchNorm1d, eval mode"] < 1e-12 < fixes["BatchNorm1d, train mode"]
    True
    """
    as_count("accumulation_steps", accumulation_steps)
    return {
        "BatchNorm1d, train mode": gradient_error("mlp", "batch", accumulation_steps, samples),
        "BatchNorm1d, eval mode": gradient_error("mlp", "batch", accumulation_steps, samples, True),
        "LayerNorm (MLP)": gradient_error("mlp", "layer", accumulation_steps, samples),
        "GroupNorm (MLP)": gradient_error("mlp", "group", accumulation_steps, samples),
        "BatchNorm2d, train mode": gradient_error("cnn", "batch", accumulation_steps, samples),
        "BatchNorm2d, eval mode": gradient_error("cnn", "batch", accumulation_steps, samples, True),
        "GroupNorm (CNN)": gradient_error("cnn", "group", accumulation_steps, samples),
        "LayerNorm = GroupNorm(1) (CNN)": gradient_error(
            "cnn", "layer", accumulation_steps, samples
        ),
    }


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


def compute_running_stats(ns: tuple[int, ...] = (1, 2, 4, 8), momentum: float = 0.1) -> dict:
    """Against N: weight on new data, and running-statistics errors with plain and compensated
    momentum.

    >>> compute_running_stats(ns=(8,))["weight_on_new_data"][0] > 0.5
    True
    """
    ns = as_counts("ns", ns)
    plain = [running_stats_error(n, momentum) for n in ns]
    fixed = [running_stats_error(n, compensating_momentum(momentum, n)) for n in ns]
    return {
        "n": list(ns),
        "weight_on_new_data": [1 - (1 - momentum) ** n for n in ns],
        "mean_error": [e["mean"] for e in plain],
        "var_error": [e["var"] for e in plain],
        "mean_error_compensated": [e["mean"] for e in fixed],
        "var_error_compensated": [e["var"] for e in fixed],
    }


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


def single_sample_facts(channels: int = 4, length: int = 5, seed: int = 0) -> dict[str, object]:
    """What train-mode BatchNorm does with a micro-batch of one sample, measured.

    - With one value per channel ((1, C) inputs), x - mean is exactly 0: computed by
      hand, the output is beta whatever the sample, and the gradient reaching the layer
      before is exactly 0. PyTorch refuses this case with a ValueError.
    - With several values per channel ((1, C, L): a sequence, or an image's pixels),
      BatchNorm1d/2d train: the statistics are then those of the one sample.

    >>> facts = single_sample_facts()
    >>> facts["largest |output - beta|, by hand"], facts["gradient before the layer, by hand"]
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
    return {
        "largest |output - beta|, by hand": float((by_hand - layer.bias).detach().abs().max()),
        "gradient before the layer, by hand": float(x.grad.abs().max()),
        "PyTorch, (1, C) input": _error_of(layer, x.detach()),
        "PyTorch, (1, C, L) input": f"trains: output shape {tuple(layer(sequence).shape)}",
    }


def _error_of(layer: nn.Module, x: torch.Tensor) -> str:
    try:
        layer(x)
    except ValueError as error:
        return f"ValueError: {error}"
    return "no error"


def replicas_vs_accumulation(replicas: int = 8, micro_batch: int = 32, kind: str = "mlp") -> dict:
    """N devices with plain BatchNorm against one device accumulating the same N micro-batches.

    Under DDP each device normalises its own micro-batch with plain BatchNorm, and the
    devices' gradients are averaged; accumulating the same micro-batches on one device
    computes exactly that. SyncBatchNorm instead normalises with all devices' samples
    together: the full batch. Returns the relative error of the accumulated gradient
    against each (float64, biases feeding a BatchNorm left out).

    >>> errors = replicas_vs_accumulation(replicas=2, micro_batch=8)
    >>> errors["devices with plain BatchNorm"] < 1e-12 < errors["one batch (SyncBatchNorm)"]
    True
    """
    replicas = as_count("replicas", replicas)
    micro_batch = as_count("micro_batch", micro_batch, minimum=2, fix="BatchNorm needs two samples")
    model, x, y = digits_problem(kind, "batch", replicas * micro_batch)
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
    return {
        "devices with plain BatchNorm": relative_error(averaged, accumulated),
        "one batch (SyncBatchNorm)": relative_error(full, accumulated),
    }
