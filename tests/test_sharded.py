"""FSDP2 through a window and clipping sharded gradients, on 2 real gloo processes.

The references are computed here, in one process: the window's gradient as one batch, its
norm, each process's first micro-batch gradient, and the collectives FSDP2's schedule makes
(FULL_SHARD gathers before each forward and again before each backward; SHARD_GRAD_OP only
before each forward; a parameter kept whole is not gathered again).
"""

from __future__ import annotations

import math

import psutil
import pytest
import torch
from torch.nn import functional as F

from gradacc_lessons.compare import relative_error
from gradacc_lessons.demos.distributed import DDPConfig, make_data, make_model, rank_micro_batches
from gradacc_lessons.demos.distributed.launch import run_processes
from gradacc_lessons.demos.distributed.sharded import run_fsdp_window, run_sharded_clipping

pytestmark = [pytest.mark.distributed, pytest.mark.timeout(600)]
CONFIG = DDPConfig()  # 2 processes, micro-batches of 4, N = 4
N = CONFIG.accumulation_steps


def _children():
    """torch.multiprocessing's children still running (not multiprocessing's resource tracker)."""
    alive = []
    for child in psutil.Process().children(recursive=True):
        try:
            if "spawn_main" in " ".join(child.cmdline()):
                alive.append(child)
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            pass
    return alive


def _window_gradient():
    model = make_model(CONFIG)
    x, y = make_data(CONFIG)
    F.cross_entropy(model(x[: CONFIG.effective_batch]), y[: CONFIG.effective_batch]).backward()
    return {name: p.grad for name, p in model.named_parameters()}


@pytest.fixture(scope="module")
def window():
    result = run_fsdp_window(CONFIG)
    assert _children() == [], "run_fsdp_window left processes behind"
    return result


@pytest.fixture(scope="module")
def clipping():
    result = run_sharded_clipping(CONFIG, max_fraction=0.5)
    assert _children() == [], "run_sharded_clipping left processes behind"
    return result


def test_keeping_parameters_whole_saves_the_gathers_fsdp2s_schedule_says(window):
    expected = {  # per layer, one window synced at its end
        ("FULL_SHARD", False): 2 * N,  # before every forward and every backward
        ("FULL_SHARD", True): N + 1,  # the forward still reshards: every backward gathers
        ("SHARD_GRAD_OP", False): N,  # before every forward
        ("SHARD_GRAD_OP", True): 1,  # once, at the window's start
    }
    assert window.all_gathers == expected
    assert set(window.reduce_scatters.values()) == {1}


def test_kept_parameters_cost_a_whole_copy_and_change_no_gradient(window):
    # the MLP 8 -> 16 -> 16 -> 3 in float64: weights and biases, 8 bytes each
    whole = 8 * ((8 * 16 + 16) + (16 * 16 + 16) + (16 * 3 + 3))
    assert window.parameter_bytes == whole
    for (strategy, keep), held in window.unsharded_bytes.items():
        assert held == (whole if keep else 0), (strategy, keep)
    truth = _window_gradient()
    for key, per_rank in window.gradients.items():
        for gradients in per_rank:
            assert relative_error(truth, gradients) < 1e-12, key


def test_own_shards_give_a_local_norm_and_the_dtensor_way_the_whole_one(clipping):
    truth = math.sqrt(sum(float(g.pow(2).sum()) for g in _window_gradient().values()))
    own = [norms["local shards"] for norms in clipping.norms]
    assert all(norm < 0.9 * truth for norm in own)  # each process sees only its slices
    assert math.hypot(*own) == pytest.approx(truth, rel=1e-12)  # the slices make up the whole
    for norms in clipping.norms:
        assert norms["clip_grad_norm_ (DTensor)"] == pytest.approx(truth, rel=1e-12)
        assert norms["all-reduced squares"] == pytest.approx(truth, rel=1e-12)


def test_clipping_inside_no_sync_clips_each_processs_partial_sum(clipping):
    truth = _window_gradient()
    norm = math.sqrt(sum(float(g.pow(2).sum()) for g in truth.values()))
    assert clipping.max_norm == pytest.approx(0.5 * norm)
    for rank in range(CONFIG.world_size):
        # clipped once, after the sync: the true gradient scaled to the limit
        assert clipping.once_norms[rank] == [pytest.approx(norm)]
        scaled = {name: g * 0.5 for name, g in truth.items()}
        # (clip_grad_norm_ divides by the norm + 1e-6: 8e-7 off here)
        assert relative_error(scaled, clipping.once_gradients[rank]) < 1e-5
        # the first clip inside no_sync() saw this process's first micro-batch alone, / N
        model = make_model(CONFIG)
        xb, yb = rank_micro_batches(*make_data(CONFIG), 0, rank, CONFIG)[0]
        (F.cross_entropy(model(xb), yb) / N).backward()
        first = math.sqrt(sum(float(p.grad.pow(2).sum()) for p in model.parameters()))
        assert clipping.inside_norms[rank][0] == pytest.approx(first, rel=1e-12)
    assert clipping.inside_norms[0][:-1] != clipping.inside_norms[1][:-1]  # each its own
    assert clipping.inside_error > 1e-2


def _rank_and_sum(rank, values):
    total = torch.tensor([float(sum(values)) + rank])
    torch.distributed.all_reduce(total)
    return {"rank": rank, "sum": float(total)}


def test_run_processes_runs_a_function_in_each_process_of_one_group():
    ranks = run_processes(_rank_and_sum, [1, 2], world_size=2, timeout_s=120)
    assert ranks == [{"rank": 0, "sum": 7.0}, {"rank": 1, "sum": 7.0}]  # 3 + 0 + 3 + 1
    assert _children() == []


def test_run_processes_refuses_what_the_children_cannot_import():
    with pytest.raises(ValueError, match="top-level"):
        run_processes(lambda rank: rank)
    with pytest.raises(ValueError, match="world_size"):
        run_processes(_rank_and_sum, [1], world_size=1)
