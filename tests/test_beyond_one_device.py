"""Lesson 6's arithmetic without processes: communication volumes, GPipe's bubble, N per device
count, DistributedSampler's padding. (FSDP's real collectives: tests/test_distributed.py.)"""

from __future__ import annotations

from fractions import Fraction

import pytest

from gradacc_lessons.demos.distributed import accumulation_steps_for, sampler_shares
from gradacc_lessons.demos.pipeline import bubble_fraction, gpipe_schedule
from gradacc_lessons.demos.sharding import (
    collectives_per_window,
    communication_table,
    communication_volumes,
)


@pytest.mark.parametrize("n", [1, 2, 4, 16])
def test_communication_volumes_by_hand(n):
    # DDP: an all-reduce (2 volumes) per sync; SHARD_GRAD_OP: a gather per forward and a
    # reduce-scatter per sync; FULL_SHARD: a gather per forward and per backward as well.
    assert communication_volumes("DDP", n, True) == 2 * n
    assert communication_volumes("DDP", n, False) == 2
    assert communication_volumes("SHARD_GRAD_OP", n, True) == 2 * n
    assert communication_volumes("SHARD_GRAD_OP", n, False) == n + 1
    assert communication_volumes("FULL_SHARD", n, True) == 3 * n
    assert communication_volumes("FULL_SHARD", n, False) == 2 * n + 1


def test_skipping_the_sync_saves_n_times_under_ddp_but_at_most_1_5_times_fully_sharded():
    big = 10_000
    ratio = communication_volumes("FULL_SHARD", big, True) / communication_volumes(
        "FULL_SHARD", big, False
    )
    assert ratio == pytest.approx(1.5, abs=1e-4)
    table = repr(communication_table(4))
    assert table.splitlines()[4].split() == ["FULL_SHARD", "12", "9", "1.33"]
    with pytest.raises(ValueError, match="strategy"):
        collectives_per_window("ZeRO-4", 2, True)


@pytest.mark.parametrize("stages, micro_batches", [(1, 1), (2, 3), (4, 4), (4, 32), (8, 5)])
def test_gpipe_bubble_is_the_fill_and_drain(stages, micro_batches):
    # By hand (Huang et al.): (S - 1) idle slots per stage on each pass of M + S - 1 slots.
    expected = Fraction(stages - 1, micro_batches + stages - 1)
    assert bubble_fraction(stages, micro_batches) == pytest.approx(float(expected), abs=1e-12)
    schedule = gpipe_schedule(stages, micro_batches)
    for stage, row in enumerate(schedule):  # every stage runs every micro-batch both ways
        assert sorted(s for s in row if s != "--") == sorted(
            [f"F{m}" for m in range(1, micro_batches + 1)]
            + [f"B{m}" for m in range(1, micro_batches + 1)]
        ), stage
    # A micro-batch reaches stage s + 1 one slot after stage s.
    assert all(schedule[s].index("F1") == s for s in range(stages))


def test_re_derive_n_when_the_device_count_changes():
    assert [accumulation_steps_for(1024, w, 16) for w in (8, 4, 2, 1)] == [8, 16, 32, 64]
    with pytest.raises(ValueError, match="micro_batch_size"):
        accumulation_steps_for(1000, 8, 16)


@pytest.mark.parametrize("size, world", [(10, 4), (12, 4), (1001, 8), (5, 8)])
def test_distributed_sampler_pads_with_repeats(size, world):
    shares = sampler_shares(size, world)
    per_rank = -(-size // world)  # ceil, by hand
    assert [len(s) for s in shares] == [per_rank] * world
    everything = [i for share in shares for i in share]
    assert set(everything) == set(range(size))  # every sample once...
    assert len(everything) - size == per_rank * world - size  # ...and this many twice
