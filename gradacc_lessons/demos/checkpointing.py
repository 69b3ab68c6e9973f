"""Activation checkpointing: the other memory lever, which trades compute for activations.

Accumulation shrinks activations by shrinking the micro-batch. Checkpointing
shrinks them inside the model: a checkpointed block keeps only its input in the
forward pass and runs its forward a second time during backward to get the rest
back. The two combine: the same effective batch, less memory, more compute.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.checkpoint import checkpoint

from gradacc_lessons.checks import as_count, as_counts
from gradacc_lessons.device import seeded
from gradacc_lessons.display import Table


class Block(nn.Module):
    """Linear -> ReLU -> Linear -> ReLU, counting how often its forward runs."""

    def __init__(self, width: int):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU()
        )
        self.forward_calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.forward_calls += 1
        return self.layers(x)


class DeepMLP(nn.Module):
    """An input layer, `depth` blocks and a classifier; each block checkpointed if asked.

    >>> DeepMLP(64, 10, depth=2, checkpoint=True)(torch.zeros(3, 64)).shape
    torch.Size([3, 10])
    """

    def __init__(
        self,
        in_features: int,
        classes: int,
        width: int = 128,
        depth: int = 8,
        checkpoint: bool = False,
    ):
        super().__init__()
        self.input = nn.Linear(in_features, width)
        self.blocks = nn.ModuleList(Block(width) for _ in range(depth))
        self.head = nn.Linear(width, classes)
        self.checkpoint = checkpoint

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.input(x)
        for block in self.blocks:
            if self.checkpoint and torch.is_grad_enabled():
                # use_reentrant=False is the recommended variant: it works with
                # inputs that do not require grad and with torch.autograd.grad.
                x = checkpoint(block, x, use_reentrant=False)
            else:
                x = block(x)
        return self.head(x)


def block_forwards_per_step(
    model: DeepMLP, inputs: torch.Tensor, targets: torch.Tensor, loss_fn: Callable = F.cross_entropy
) -> float:
    """How many times each block's forward runs in one forward and backward pass.

    The pass leaves no gradients behind: the model's .grad buffers are cleared after it.

    >>> model = DeepMLP(4, 2, width=8, depth=2, checkpoint=True)
    >>> block_forwards_per_step(model, torch.zeros(3, 4), torch.zeros(3, dtype=torch.long))
    2.0
    """
    if not isinstance(model, DeepMLP):
        raise ValueError(
            f"model must be a DeepMLP (its blocks count their forwards), got {model!r}"
        )
    before = [block.forward_calls for block in model.blocks]
    loss_fn(model(inputs), targets).backward()
    model.zero_grad(set_to_none=True)
    calls = [block.forward_calls - b for block, b in zip(model.blocks, before)]
    return sum(calls) / len(calls)


@dataclass(frozen=True)
class LeverRow:
    """Memory and compute of one training step with one combination of the two levers."""

    checkpoint: bool
    accumulation_steps: int
    peak_bytes: int  # measured by gradacc_lessons.memory.measure_training_memory
    activation_bytes: int  # saved for backward by one micro-batch
    block_forwards: float  # forward runs of each block per micro-batch: 2 means recomputed


def compare_memory_levers(
    inputs: torch.Tensor,
    targets: torch.Tensor,
    accumulation_steps: tuple[int, ...] = (1, 4),
    width: int = 128,
    depth: int = 8,
    seed: int = 0,
) -> list[LeverRow]:
    """Measure one training step (AdamW) with and without checkpointing, for each N.

    >>> x, y = torch.randn(8, 4), torch.zeros(8, dtype=torch.long)
    >>> [row.block_forwards for row in compare_memory_levers(x, y, (1,), width=8, depth=1)]
    [1.0, 2.0]
    """
    accumulation_steps = as_counts("accumulation_steps", accumulation_steps)
    width, depth = as_count("width", width), as_count("depth", depth)
    seed = as_count("seed", seed, minimum=0)
    from gradacc_lessons.memory import measure_training_memory

    rows = []
    for n in accumulation_steps:
        for use_checkpoint in (False, True):
            with seeded(seed):
                model = DeepMLP(
                    inputs.shape[1], int(targets.max()) + 1, width, depth, use_checkpoint
                )
            optimizer = torch.optim.AdamW(model.parameters())
            report = measure_training_memory(model, optimizer, F.cross_entropy, inputs, targets, n)
            first = inputs[: -(-len(inputs) // n)], targets[: -(-len(inputs) // n)]
            forwards = block_forwards_per_step(model, *first)
            rows.append(
                LeverRow(use_checkpoint, n, report.peak_bytes, report.activation_bytes, forwards)
            )
    return rows


def levers_table(rows: list[LeverRow]) -> Table:
    """The rows of `compare_memory_levers` as a table, sizes in MiB."""
    if not rows or not all(isinstance(r, LeverRow) for r in rows):
        raise ValueError(
            f"rows must be a non-empty list of LeverRow (compare_memory_levers), got {rows!r}"
        )
    cells = [
        (r.checkpoint, r.accumulation_steps, f"{r.peak_bytes / 2**20:.2f}",
         f"{r.activation_bytes / 2**20:.2f}", f"{r.block_forwards:.0f}")
        for r in rows
    ]  # fmt: skip
    headers = ("checkpoint", "N", "peak MiB", "activations MiB", "block fwd")
    return Table(headers, cells)
