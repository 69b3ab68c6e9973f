"""The arithmetic of accumulation across processes, and the data and model every rank starts from.

The effective batch is world_size × micro_batch_size × N (`effective_batch`,
`accumulation_steps_for`);
a DistributedSampler deals the samples round-robin (`sampler_shares`); each rank's micro-batches,
and the full-batch and token-mean gradients the processes are checked against, are computed
here in one process.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from gradacc_lessons.accumulate import IGNORE_INDEX
from gradacc_lessons.checks import as_count
from gradacc_lessons.data import make_classification
from gradacc_lessons.device import seeded
from gradacc_lessons.models import MLP


@dataclass(frozen=True)
class DDPConfig:
    """What the distributed experiment trains: sizes, steps and seed (float64 throughout)."""

    world_size: int = 2
    micro_batch_size: int = 4
    accumulation_steps: int = 4
    windows: int = 3  # optimizer steps
    features: int = 8
    classes: int = 3
    hidden: int = 16
    lr: float = 0.1
    seed: int = 0

    @property
    def effective_batch(self) -> int:
        """Samples behind one optimizer step: world size x micro-batch x accumulation steps."""
        return effective_batch(self.world_size, self.micro_batch_size, self.accumulation_steps)


def effective_batch(world_size: int, micro_batch_size: int, accumulation_steps: int) -> int:
    """The global batch one optimizer step stands for, across all processes.

    >>> effective_batch(world_size=8, micro_batch_size=16, accumulation_steps=4)
    512
    """
    world_size, micro_batch_size = (
        as_count("world_size", world_size),
        as_count("micro_batch_size", micro_batch_size),
    )
    return world_size * micro_batch_size * as_count("accumulation_steps", accumulation_steps)


def accumulation_steps_for(effective_batch: int, world_size: int, micro_batch_size: int) -> int:
    """N that keeps `effective_batch` on `world_size` devices with this micro-batch.

    Re-derive it whenever the number of devices changes: with N unchanged, 4 GPUs
    instead of 8 silently halve the effective batch (and change what the learning
    rate was tuned for).

    >>> accumulation_steps_for(512, world_size=8, micro_batch_size=16), accumulation_steps_for(
    ...     512, world_size=4, micro_batch_size=16)
    (4, 8)
    """
    effective_batch = as_count("effective_batch", effective_batch)
    world_size = as_count("world_size", world_size)
    micro_batch_size = as_count("micro_batch_size", micro_batch_size)
    per_step = world_size * micro_batch_size
    if effective_batch % per_step:
        raise ValueError(
            f"effective_batch={effective_batch} is not a multiple of "
            f"world_size x micro_batch_size = {per_step}; "
            f"pick a micro_batch_size that divides {effective_batch // world_size}"
        )
    return effective_batch // per_step


def sampler_shares(dataset_size: int, world_size: int) -> list[list[int]]:
    """The sample indices `DistributedSampler` hands each process (no shuffling).

    It pads the dataset to a multiple of `world_size` by repeating its first samples,
    so every process gets as many samples, and a few samples count twice per epoch.

    >>> sampler_shares(10, world_size=4)
    [[0, 4, 8], [1, 5, 9], [2, 6, 0], [3, 7, 1]]
    """
    dataset_size = as_count("dataset_size", dataset_size)
    world_size = as_count("world_size", world_size)
    from torch.utils.data import DistributedSampler

    return [
        list(DistributedSampler(range(dataset_size), world_size, rank, shuffle=False))
        for rank in range(world_size)
    ]


def make_model(config: DDPConfig) -> nn.Module:
    """The model every process (and the single-process reference) starts from, in float64.

    >>> make_model(DDPConfig())(torch.zeros(2, 8, dtype=torch.float64)).shape
    torch.Size([2, 3])
    """
    _check_config(config)
    with seeded(config.seed):
        return MLP(config.features, config.classes, hidden=config.hidden).double()


def make_data(config: DDPConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """All samples of all windows, in float64: window w is rows w*E ... (w+1)*E - 1.

    >>> x, y = make_data(DDPConfig(windows=2))
    >>> tuple(x.shape)
    (64, 8)
    """
    _check_config(config)
    samples = config.windows * config.effective_batch
    return make_classification(
        samples, config.features, config.classes, seed=config.seed, dtype=torch.float64
    )


def rank_micro_batches(
    x: torch.Tensor, y: torch.Tensor, window: int, rank: int, config: DDPConfig
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The micro-batches of process `rank` in `window`: its contiguous share, cut in N pieces.

    >>> x, y = make_data(DDPConfig())
    >>> [tuple(xb.shape) for xb, _ in rank_micro_batches(x, y, 0, 1, DDPConfig())][:2]
    [(4, 8), (4, 8)]
    """
    _check_rank(rank, _check_config(config))
    as_count("window", window, 0, config.windows - 1)
    share = config.micro_batch_size * config.accumulation_steps
    start = window * config.effective_batch + rank * share
    xs, ys = x[start : start + share], y[start : start + share]
    return list(zip(xs.split(config.micro_batch_size), ys.split(config.micro_batch_size)))


def train_full_batch(config: DDPConfig) -> dict[str, torch.Tensor]:
    """The single-process reference: one step per window on all its samples at once.

    >>> sorted(train_full_batch(DDPConfig(windows=1)))[:2]
    ['0.bias', '0.weight']
    """
    _check_config(config)
    model = make_model(config)
    optimizer = torch.optim.SGD(model.parameters(), lr=config.lr, momentum=0.9)
    x, y = make_data(config)
    for xw, yw in zip(x.split(config.effective_batch), y.split(config.effective_batch)):
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(model(xw), yw).backward()
        optimizer.step()
    return {n: p.detach().clone() for n, p in model.named_parameters()}


def token_mean_gradients(config: DDPConfig) -> dict[str, torch.Tensor]:
    """The single-process reference: gradient of the mean loss over all valid tokens of all ranks.

    >>> sorted(token_mean_gradients(DDPConfig()))[:2]
    ['0.bias', '0.weight']
    """
    _check_config(config)
    model = make_model(config)
    batches = [b for rank in range(config.world_size) for b in make_token_data(config, rank)]
    logits = torch.cat([model(x).reshape(-1, config.classes) for x, _ in batches])
    labels = torch.cat([y.reshape(-1) for _, y in batches])
    F.cross_entropy(logits, labels, ignore_index=IGNORE_INDEX).backward()
    return {n: p.grad.detach().clone() for n, p in model.named_parameters()}


def make_token_data(config: DDPConfig, rank: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Padded sequences of process `rank`, as N micro-batches of (inputs, labels).

    Rank 0 holds short sequences and rank 1 long ones, so the processes see very
    different numbers of valid tokens. Padding positions carry IGNORE_INDEX.

    >>> [tuple(t.shape) for t in make_token_data(DDPConfig(), rank=0)[0]]
    [(4, 12, 8), (4, 12)]
    """
    _check_rank(rank, _check_config(config))
    generator = torch.Generator().manual_seed(config.seed + 1000 + rank)
    seq_len, batches = 12, []
    for _ in range(config.accumulation_steps):
        shape = (config.micro_batch_size, seq_len)
        x = torch.randn(*shape, config.features, generator=generator, dtype=torch.float64)
        y = torch.randint(config.classes, shape, generator=generator)
        low, high = (1, 4) if rank % 2 == 0 else (8, seq_len + 1)
        lengths = torch.randint(low, high, (config.micro_batch_size,), generator=generator)
        y[torch.arange(seq_len) >= lengths[:, None]] = IGNORE_INDEX
        batches.append((x, y))
    return batches


def _check_config(config) -> DDPConfig:
    if not isinstance(config, DDPConfig):
        raise ValueError(f"config must be a DDPConfig, got {config!r}")
    return config


def _check_rank(rank, config: DDPConfig) -> int:
    return as_count("rank", rank, 0, config.world_size - 1, "a process's number in the world")
