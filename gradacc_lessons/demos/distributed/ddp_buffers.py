"""DDP with plain BatchNorm against accumulation: the same gradient, not the same statistics.

`DistributedDataParallel` copies rank 0's buffers to every process at the start of each forward
(`forward_sync_buffers`, on by default in torch 2.13), so after training every process holds
the running statistics of rank 0's micro-batches alone. Accumulating the same micro-batches on
one device updates them with every micro-batch. The parameters agree; the statistics do not.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

from gradacc_lessons.checks import as_count
from gradacc_lessons.demos.distributed.launch import run_processes
from gradacc_lessons.display import Result, Table

FEATURES = 8


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(FEATURES, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 2))


def _micro_batches(world_size: int, steps: int, size: int) -> list[list[tuple]]:
    """[step][rank] -> (inputs, targets); the same on every process (a seeded generator)."""
    generator = torch.Generator().manual_seed(1)
    return [
        [
            (
                torch.randn(size, FEATURES, generator=generator) * (1 + rank),  # ranks differ
                torch.randint(2, (size,), generator=generator),
            )
            for rank in range(world_size)
        ]
        for _ in range(steps)
    ]


def _state(model: nn.Module) -> dict:
    return {name: tensor.detach().clone() for name, tensor in model.state_dict().items()}


def _ddp_worker(rank: int, steps: int, size: int) -> dict:
    """One process: train a DDP model on this rank's micro-batch of every step."""
    world_size = dist.get_world_size()
    model = nn.parallel.DistributedDataParallel(_model())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in _micro_batches(world_size, steps, size):
        x, y = step[rank]
        F.cross_entropy(model(x), y).backward()  # DDP averages the gradients over the ranks
        optimizer.step()
        optimizer.zero_grad()
    return _state(model.module)


def _accumulated(world_size: int, steps: int, size: int) -> dict:
    """The same micro-batches accumulated on one device, one optimizer step per window."""
    model = _model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in _micro_batches(world_size, steps, size):
        for x, y in step:
            (F.cross_entropy(model(x), y) / world_size).backward()
        optimizer.step()
        optimizer.zero_grad()
    return _state(model)


def _relative(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).norm() / b.norm())


@dataclass(frozen=True, repr=False)
class BufferComparison(Result):
    """DDP (rank 0's model) against accumulation: relative differences after training."""

    world_size: int
    steps: int
    parameters: float  # the largest relative difference of a weight or bias
    running_mean: float
    running_var: float

    def table(self) -> Table:
        rows = [
            ("parameters (the gradient's work)", f"{self.parameters:.1e}"),
            ("running mean", f"{self.running_mean:.1%}"),
            ("running variance", f"{self.running_var:.1%}"),
        ]
        title = f"{self.world_size} processes with DDP against accumulation, {self.steps} steps"
        return Table(("after training", "relative difference"), rows, title)


def ddp_buffers_vs_accumulation(
    world_size: int = 2, steps: int = 5, micro_batch_size: int = 16, timeout_s: float = 120.0
) -> BufferComparison:
    """Train with DDP on `world_size` gloo processes and with accumulation; compare the models."""
    world_size = as_count("world_size", world_size, 2, fix="processes to start")
    steps = as_count("steps", steps)
    size = as_count("micro_batch_size", micro_batch_size, 2, fix="samples (BatchNorm needs 2)")
    ranks = run_processes(_ddp_worker, steps, size, world_size=world_size, timeout_s=timeout_s)
    accumulated = _accumulated(world_size, steps, size)
    ddp = ranks[0]
    buffers = ("running_mean", "running_var", "num_batches_tracked")
    parameters = max(
        _relative(ddp[name], accumulated[name]) for name in ddp if not name.endswith(buffers)
    )
    return BufferComparison(
        world_size,
        steps,
        parameters,
        _relative(ddp["1.running_mean"], accumulated["1.running_mean"]),
        _relative(ddp["1.running_var"], accumulated["1.running_var"]),
    )
