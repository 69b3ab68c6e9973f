"""DDP with accumulation, run for real: 2 gloo processes started by torch.multiprocessing.

Every test that starts processes checks afterwards, with psutil, that none of
them survived. The references (counts, parameters, token gradients) are
computed here, in one process, without the package's own loops.
"""

from __future__ import annotations

import psutil
import pytest
import torch
from torch.nn import functional as F

from gradacc_lessons.accumulate import IGNORE_INDEX, accumulated_gradients
from gradacc_lessons.compare import relative_error
from gradacc_lessons.demos.distributed import (
    SYNC_MODES,
    DDPConfig,
    effective_batch,
    launch,
    make_data,
    make_model,
    make_token_data,
    rank_micro_batches,
    run_ddp,
)
from gradacc_lessons.demos.sharding import collectives_per_window, communication_volumes
from gradacc_lessons.models import MLP

pytestmark = [pytest.mark.distributed, pytest.mark.timeout(600)]
CONFIG = DDPConfig(world_size=2, micro_batch_size=4, accumulation_steps=4, windows=3)


def _ddp_children() -> list[psutil.Process]:
    children = psutil.Process().children(recursive=True)
    alive = []
    for child in children:
        try:
            if "spawn_main" in " ".join(child.cmdline()):  # torch.multiprocessing's children
                alive.append(child)
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            pass
    return alive


@pytest.fixture(scope="module")
def result():
    assert _ddp_children() == [], "DDP processes were running before the test"
    try:
        yield run_ddp(CONFIG, timeout_s=240)
    finally:
        survivors = _ddp_children()
        for child in survivors:  # clean up even if the assertion below fails
            child.kill()
        assert survivors == [], f"DDP processes survived run_ddp: {survivors}"


def test_no_process_survives_a_finished_run(result):
    assert _ddp_children() == []
    assert len(result.allreduces["no_sync"]) == CONFIG.world_size


@pytest.mark.timeout(120)
def test_a_run_past_its_timeout_is_killed_and_reported():
    with pytest.raises(TimeoutError, match="timeout_s"):
        run_ddp(CONFIG, timeout_s=0.3)  # importing torch alone takes longer
    assert _ddp_children() == [], "run_ddp left processes behind after a time-out"


def _rank_0_fails(rank, config, folder, timeout_s):
    """A worker whose rank 0 fails at once while rank 1 waits for it at the rendezvous."""
    if rank == 0:
        raise RuntimeError("rank 0 fails on purpose")
    launch._worker(rank, config, folder, timeout_s)


def test_a_failing_process_stops_the_run_and_the_others_are_killed(monkeypatch):
    # The children import this module to find the worker: they run it, not a copy.
    monkeypatch.setattr(launch, "_worker", _rank_0_fails)
    with pytest.raises(torch.multiprocessing.ProcessRaisedException, match="on purpose"):
        run_ddp(CONFIG, timeout_s=120)
    assert _ddp_children() == [], "run_ddp left processes behind after a failure"


@pytest.mark.parametrize("mode", ["no_sync", "require_backward_grad_sync"])
@pytest.mark.parametrize("rank", [0, 1])
def test_no_sync_around_forward_and_backward_syncs_once_per_step(result, mode, rank):
    # no_sync() around forward and backward, or nanoGPT's flag set before the forward.
    n = CONFIG.accumulation_steps
    for window, counts in enumerate(result.allreduces[mode][rank]):
        # The model is far smaller than DDP's 25 MB bucket: one bucket, one all-reduce.
        assert counts == [0] * (n - 1) + [1], f"{mode}, window {window}: {counts}"


@pytest.mark.parametrize("mode", ["no_sync_backward_only", "always_sync"])
@pytest.mark.parametrize("rank", [0, 1])
def test_syncing_in_forward_all_reduces_every_micro_batch(result, mode, rank):
    for window, counts in enumerate(result.allreduces[mode][rank]):
        assert counts == [1] * CONFIG.accumulation_steps, f"{mode}, window {window}: {counts}"


def test_each_all_reduce_carries_every_gradient_entry(result):
    entries = sum(p.numel() for p in make_model(CONFIG).parameters())
    rounds = {"no_sync": 1, "no_sync_backward_only": 4, "always_sync": 4,
              "require_backward_grad_sync": 1}  # fmt: skip
    for mode in SYNC_MODES:
        expected = entries * rounds[mode] * CONFIG.windows
        assert result.elements[mode] == [expected] * CONFIG.world_size, mode


def _full_batch_parameters() -> dict[str, torch.Tensor]:
    """One process, one full batch per optimizer step: the reference, written out here."""
    model = make_model(CONFIG)
    optimizer = torch.optim.SGD(model.parameters(), lr=CONFIG.lr, momentum=0.9)
    x, y = make_data(CONFIG)
    per_step = CONFIG.world_size * CONFIG.micro_batch_size * CONFIG.accumulation_steps
    for step in range(CONFIG.windows):
        rows = slice(step * per_step, (step + 1) * per_step)
        optimizer.zero_grad()
        F.cross_entropy(model(x[rows]), y[rows]).backward()
        optimizer.step()
    return dict(model.named_parameters())


@pytest.mark.parametrize("mode", SYNC_MODES)
def test_ddp_parameters_equal_a_single_process_full_batch_run(result, mode):
    reference = _full_batch_parameters()
    start = make_model(CONFIG)
    for rank in range(CONFIG.world_size):
        trained = result.parameters[mode][rank]
        for name, p in reference.items():
            assert trained[name].dtype == torch.float64
            torch.testing.assert_close(trained[name], p.detach(), rtol=1e-10, atol=1e-12)
            # ...and training moved them: equality is not "nothing happened".
            moved = (trained[name] - start.get_parameter(name)).abs().max().item()
            assert moved > 1e-3, f"{mode}, rank {rank}, {name} barely moved: {moved}"


def test_the_ranks_saw_disjoint_shares_that_make_up_the_effective_batch():
    x, y = make_data(CONFIG)
    rows = {tuple(row.tolist()): i for i, row in enumerate(x)}
    for window in range(CONFIG.windows):
        seen = []
        for rank in range(CONFIG.world_size):
            for xb, _ in rank_micro_batches(x, y, window, rank, CONFIG):
                assert len(xb) == CONFIG.micro_batch_size
                seen += [rows[tuple(row.tolist())] for row in xb]
        assert len(seen) == len(set(seen)) == effective_batch(2, 4, 4) == 32
        assert sorted(seen) == list(range(window * 32, (window + 1) * 32))


def _token_mean_gradients() -> dict[str, torch.Tensor]:
    """Mean loss over every valid token of both ranks, by hand (log-softmax, mask, sum / count)."""
    model = make_model(CONFIG)
    total, count = 0.0, 0
    for rank in range(CONFIG.world_size):
        for x, y in make_token_data(CONFIG, rank):
            log_probs = model(x).log_softmax(-1)
            valid = y != IGNORE_INDEX
            picked = log_probs.gather(-1, y.clamp(min=0).unsqueeze(-1)).squeeze(-1)
            total = total - (picked * valid).sum()
            count += int(valid.sum())
    (total / count).backward()
    return {n: p.grad for n, p in model.named_parameters()}


def test_token_counts_differ_between_ranks():
    counts = [
        sum(int((y != IGNORE_INDEX).sum()) for _, y in make_token_data(CONFIG, rank))
        for rank in range(2)
    ]
    assert counts[1] > 2 * counts[0], counts


@pytest.mark.parametrize("rank", [0, 1])
def test_global_token_count_gives_the_token_mean_of_all_ranks(result, rank):
    reference = _token_mean_gradients()
    right = result.token_gradients["global_count"][rank]
    wrong = result.token_gradients["local_mean"][rank]
    for name, g in reference.items():
        torch.testing.assert_close(right[name], g, rtol=1e-10, atol=1e-12)
    errors = [(wrong[n] - g).norm() / g.norm() for n, g in reference.items()]
    assert max(errors) > 0.05, f"the per-rank mean should be visibly wrong, got {errors}"


def test_effective_batch_rejects_zero():
    with pytest.raises(ValueError, match="accumulation_steps"):
        effective_batch(2, 4, 0)


def test_fsdp_collectives_match_the_volumes_of_the_lesson(result):
    # FSDP2 (fully_shard) on 2 gloo processes, counted by wrapping torch.distributed's
    # collectives: the independent measurement of sharding.collectives_per_window.
    assert result.fsdp_collectives is not None, "torch >= 2.6 has fully_shard"
    for (strategy, every), counted in result.fsdp_collectives.items():
        rule = collectives_per_window(strategy, CONFIG.accumulation_steps, every)
        assert counted == {
            "all-gather": rule["all-gather"],
            "reduce-scatter": rule["reduce-scatter"],
        }
    full = {every: communication_volumes("FULL_SHARD", 4, every) for every in (True, False)}
    assert full == {True: 3 * 4, False: 2 * 4 + 1}  # 3N against 2N + 1


def test_ddp_with_plain_batchnorm_is_accumulation_on_one_device(result):
    # The DDP gradient (each process normalising its own micro-batch, averaged) against
    # one process accumulating the same micro-batches: the same number.
    x, y = make_data(CONFIG)
    micro_batches = [rank_micro_batches(x, y, 0, r, CONFIG)[0] for r in range(CONFIG.world_size)]
    torch.manual_seed(CONFIG.seed)
    model = MLP(CONFIG.features, CONFIG.classes, CONFIG.hidden, norm="batch").double()
    xs, ys = torch.cat([xb for xb, _ in micro_batches]), torch.cat([yb for _, yb in micro_batches])
    accumulated = accumulated_gradients(model, F.cross_entropy, xs, ys, CONFIG.world_size)
    full = accumulated_gradients(model, F.cross_entropy, xs, ys, 1)
    for rank in range(CONFIG.world_size):
        ddp = result.batchnorm_gradients[rank]
        assert relative_error(accumulated, ddp) < 1e-12, rank
        assert relative_error(full, ddp) > 1e-3  # not SyncBatchNorm's full batch


def test_one_micro_batch_too_many_on_one_rank_hangs_until_the_timeout(result):
    rank0, rank1 = result.unequal_micro_batches
    assert rank0.startswith("5 micro-batches: stuck") and "timed out" in rank0
    assert rank1.startswith("4 micro-batches: stuck") and "timed out" in rank1


def test_sync_modes_are_timed(result):
    # Ratios belong to benchmarks; here only that both modes were timed in the same run.
    assert set(result.seconds_per_step) == {"no_sync", "always_sync"}
    assert all(seconds > 0 for seconds in result.seconds_per_step.values())
