"""Accelerate on 2 real gloo processes: its scheduler's steps and a window's token count.

The references are computed here: the micro-batches and steps from the sizes, the linear
schedule's rates, and the token mean of both processes' labels in one process.
"""

from __future__ import annotations

import math

import pytest
import torch
from torch.nn import functional as F

from gradacc_lessons.compare import relative_error
from gradacc_lessons.demos.distributed import DDPConfig, make_model, make_token_data
from gradacc_lessons.demos.frameworks import SETUPS, run_accelerate_processes

pytestmark = [pytest.mark.distributed, pytest.mark.timeout(600)]
CONFIG = DDPConfig()  # 2 processes, N = 4
SAMPLES, MICRO_BATCH_SIZE, W, N = 32, 2, CONFIG.world_size, CONFIG.accumulation_steps


@pytest.fixture(scope="module")
def result():
    return run_accelerate_processes(CONFIG, samples=SAMPLES, micro_batch_size=MICRO_BATCH_SIZE)


def test_the_prepared_scheduler_steps_w_times_unless_the_batches_are_split(result):
    counted = math.ceil(SAMPLES / MICRO_BATCH_SIZE / N)  # one process on the whole loader: 4
    assert result.counted_steps == counted
    default, ignored, split = (result.schedules[setup] for setup in SETUPS)
    for run in (default, ignored):  # each process gets every W-th micro-batch
        assert run.micro_batches == SAMPLES // MICRO_BATCH_SIZE // W
        assert run.optimizer_steps == SAMPLES // MICRO_BATCH_SIZE // W // N
        assert run.scheduler_steps == W * run.optimizer_steps
        # the schedule over `counted` steps, W steps at a time
        assert run.learning_rates == [1 - W * k / counted for k in range(counted // W)]
    assert split.micro_batches == SAMPLES // MICRO_BATCH_SIZE  # each takes 1/W of every one
    assert split.optimizer_steps == split.scheduler_steps == counted
    assert split.learning_rates == [1 - k / counted for k in range(counted)]
    assert result.scheduler_steps_per_optimizer_step(SETUPS[0]) == W


def test_the_window_count_gathered_from_every_process_gives_the_token_mean(result):
    model = make_model(CONFIG)
    batches = [b for rank in range(W) for b in make_token_data(CONFIG, rank)]
    logits = torch.cat([model(x).flatten(0, 1) for x, _ in batches])
    labels = torch.cat([y.flatten() for _, y in batches])
    F.cross_entropy(logits, labels, ignore_index=-100).backward()  # the mean over real tokens
    truth = {name: p.grad for name, p in model.named_parameters()}
    for gradients in result.token_gradients["all processes"]:
        assert relative_error(truth, gradients) < 1e-12
    for gradients in result.token_gradients["this process"]:
        assert relative_error(truth, gradients) > 0.1  # rank 0's few tokens weigh far more


def test_ddp_keeps_the_gradient_of_accumulation_but_not_its_running_statistics():
    from gradacc_lessons.demos.distributed.ddp_buffers import ddp_buffers_vs_accumulation

    result = ddp_buffers_vs_accumulation(world_size=2, steps=5, micro_batch_size=16)
    assert result.parameters < 1e-6  # the same gradient: SGD's steps agree to float32 rounding
    # DDP copies rank 0's buffers before each forward: the statistics follow rank 0 alone
    assert result.running_mean > 0.1
    assert result.running_var > 0.05
