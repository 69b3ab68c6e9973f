"""Activation checkpointing: the same gradients, fewer saved activations, twice the block forwards;
and the sharding arithmetic of ZeRO/FSDP, by hand."""

from __future__ import annotations

import pytest
import torch
from torch.nn import functional as F

from gradacc_lessons.demos.checkpointing import (
    DeepMLP,
    block_forwards_per_step,
    compare_memory_levers,
    levers_table,
)
from gradacc_lessons.demos.sharding import sharded_bytes, sharding_table


def _gradients(use_checkpoint: bool, x, y) -> dict:
    torch.manual_seed(0)
    model = DeepMLP(16, 5, width=32, depth=3, checkpoint=use_checkpoint).double()
    F.cross_entropy(model(x), y).backward()
    return {name: p.grad for name, p in model.named_parameters()}


def test_checkpointing_leaves_the_gradients_unchanged_float64():
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(24, 16, generator=generator, dtype=torch.float64)
    y = torch.randint(5, (24,), generator=generator)
    plain, checkpointed = _gradients(False, x, y), _gradients(True, x, y)
    for name, g in plain.items():
        assert g.abs().max() > 0, name
        torch.testing.assert_close(checkpointed[name], g, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(("use_checkpoint", "expected"), [(False, 1.0), (True, 2.0)])
def test_checkpointed_blocks_run_their_forward_twice(use_checkpoint, expected):
    model = DeepMLP(16, 5, width=32, depth=3, checkpoint=use_checkpoint)
    x, y = torch.randn(8, 16), torch.randint(5, (8,))
    assert block_forwards_per_step(model, x, y) == expected
    with torch.no_grad():  # no backward coming: nothing to recompute, no checkpoint
        model(x)
    assert [b.forward_calls for b in model.blocks] == [int(expected) + 1] * 3


@pytest.fixture(scope="module")
def rows():
    generator = torch.Generator().manual_seed(0)
    x, y = torch.randn(256, 64, generator=generator), torch.randint(10, (256,), generator=generator)
    return compare_memory_levers(x, y, accumulation_steps=(1, 4), width=64, depth=4)


def test_checkpointing_saves_one_block_activation_per_block(rows):
    by = {(r.checkpoint, r.accumulation_steps): r for r in rows}
    # By hand: each block saves the outputs of its two ReLUs (its Linears save the same
    # tensors as their inputs); checkpointed, it saves only its input, which is the previous
    # block's output: one tensor of b x 64 float32 less per block.
    for n, b in [(1, 256), (4, 64)]:
        saved = by[(False, n)].activation_bytes - by[(True, n)].activation_bytes
        assert saved == 4 * b * 64 * 4, (n, saved)
    # Activations follow the micro-batch: a quarter of the samples, a quarter of the bytes
    # (up to a few bytes of per-pass scalars that the loss saves).
    assert by[(False, 4)].activation_bytes * 4 == pytest.approx(
        by[(False, 1)].activation_bytes, rel=1e-3
    )


def test_both_levers_lower_the_measured_peak(rows):
    peak = {(r.checkpoint, r.accumulation_steps): r.peak_bytes for r in rows}
    assert peak[(True, 1)] < peak[(False, 1)]
    assert peak[(False, 4)] < peak[(False, 1)]
    assert peak[(True, 4)] < min(peak[(True, 1)], peak[(False, 4)])
    assert [r.block_forwards for r in rows] == [1.0, 2.0, 1.0, 2.0]
    table = levers_table(rows)
    assert len(repr(table).splitlines()) == 5 and len(table.rows) == 4
    assert (
        table.rows[1][:2] == (True, 1) and table.rows[1][2] == f"{rows[1].peak_bytes / 2**20:.2f}"
    )


@pytest.mark.parametrize(
    ("stage", "no_sync", "expected"),
    [  # 1,000 float32 parameters on 4 processes, Adam (2 values per weight), by hand
        (0, False, (4000, 4000, 8000)),
        (1, False, (4000, 4000, 2000)),
        (2, False, (4000, 1000, 2000)),
        (2, True, (4000, 4000, 2000)),
        (3, False, (1000, 1000, 2000)),
        (3, True, (1000, 4000, 2000)),
        (0, True, (4000, 4000, 8000)),
    ],
)
def test_sharded_bytes_by_hand(stage, no_sync, expected):
    parts = sharded_bytes(1000, world_size=4, stage=stage, no_sync=no_sync)
    assert tuple(parts.values()) == expected


def test_sharding_table_and_errors():
    table = repr(sharding_table(2**30, world_size=8))  # 4 GiB of float32 parameters
    assert table.splitlines()[2].split()[-2:] == ["16.0", "16.0"]  # DDP: 4 + 4 + 8 GiB
    assert table.splitlines()[-1].split()[-2:] == ["2.0", "5.5"]  # FSDP; no_sync keeps 4 GiB
    with pytest.raises(ValueError, match="stage"):
        sharded_bytes(10, 2, stage=4)
    with pytest.raises(ValueError, match="world_size"):
        sharded_bytes(10, 0, stage=1)
