"""Lesson 5's three runs, against a plain large-batch loop written out here."""

from __future__ import annotations

import math

import matplotlib
import pytest
import torch
from torch.nn import functional as F

from gradacc_lessons.demos.training import (
    RUNS,
    TrainingConfig,
    lr_factor,
    run_difference,
    split_digits,
    train_run,
)
from gradacc_lessons.figures.plots import plot_curves
from gradacc_lessons.models import MLP

matplotlib.use("Agg")
CONFIG64 = TrainingConfig(epochs=2, dtype=torch.float64)


def _plain_large_batch_run(config: TrainingConfig) -> tuple[list[float], dict]:
    """AdamW on whole batches of B, clipping and the warm-up/cosine schedule, by hand."""
    x, y, _, _ = split_digits(config.train_samples, config.seed, config.dtype)
    torch.manual_seed(config.seed)
    model = MLP(64, 10, hidden=config.hidden).to(config.dtype)
    opt = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    total = config.epochs * math.ceil(len(x) / config.batch)
    warmup_steps = round(config.warmup * total)
    losses, step = [], 0
    for epoch in range(1, config.epochs + 1):
        order = torch.randperm(len(x), generator=torch.Generator().manual_seed(epoch))
        for xb, yb in zip(x[order].split(config.batch), y[order].split(config.batch)):
            if step < warmup_steps:
                factor = (step + 1) / warmup_steps
            else:
                done = (step - warmup_steps) / (total - warmup_steps)
                factor = 0.5 * (1 + math.cos(math.pi * done))
            for group in opt.param_groups:
                group["lr"] = config.lr * factor
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm)
            opt.step()
            losses.append(loss.item())
            step += 1
    return losses, dict(model.named_parameters())


@pytest.fixture(scope="module")
def reference64():
    return _plain_large_batch_run(CONFIG64)


@pytest.mark.parametrize("name", ["large batch", "accumulated"])
def test_large_batch_and_accumulated_runs_equal_a_plain_loop_in_float64(reference64, name):
    losses, parameters = reference64
    run = train_run(name, CONFIG64)
    assert len(run.train_loss) == len(losses) == 2 * 12
    torch.testing.assert_close(
        torch.tensor(run.train_loss), torch.tensor(losses), rtol=1e-10, atol=1e-12
    )
    for n, p in parameters.items():
        torch.testing.assert_close(run.parameters[n], p.detach(), rtol=1e-10, atol=1e-12)


def test_small_batch_run_follows_other_updates(reference64):
    losses, parameters = reference64
    run = train_run("small batch", CONFIG64)
    assert len(run.train_loss) == 4 * len(losses)  # four times as many optimizer steps
    moved = max(
        ((run.parameters[n] - p).abs().max() / p.abs().max()).item() for n, p in parameters.items()
    )
    assert moved > 0.05, f"the small-batch run should end elsewhere, relative distance {moved}"


def test_float32_accumulated_run_stays_on_the_large_batch_run():
    config = TrainingConfig(epochs=3)
    runs = {name: train_run(name, config) for name in RUNS}
    same = run_difference(runs["large batch"], runs["accumulated"])
    other = run_difference(runs["large batch"], runs["small batch"])
    # float32 parameters after 200 Adam steps agree to <= 4.7e-7 relative (measured-facts.md);
    # 1e-4 leaves room for rounding and fails any wrong update (differences of order 1).
    assert same.parameters <= 1e-4, same
    assert same.train_loss <= 1e-4 and same.test_loss <= 1e-4, same
    assert other.parameters > 0.1 and other.test_loss > 0.01, other
    assert other.train_loss is None  # different numbers of steps: no step-by-step comparison


def test_learning_rates_follow_the_same_schedule_over_epochs():
    config = TrainingConfig(epochs=2)
    large, small = train_run("large batch", config), train_run("small batch", config)
    assert max(large.learning_rate) == pytest.approx(config.lr)
    assert large.learning_rate[0] == pytest.approx(config.lr / 2)  # 2 warm-up steps of 24
    # Step k of the large run and step 4k+3 of the small run end at the same epoch.
    assert large.epoch_of_step == pytest.approx(small.epoch_of_step[3::4])
    assert abs(large.learning_rate[-1] - small.learning_rate[-1]) < 0.02 * config.lr


@pytest.mark.parametrize(
    ("step", "expected"), [(0, 0.25), (3, 1.0), (4, 1.0), (10, 0.5), (16, 0.0), (20, 0.0)]
)
def test_lr_factor_by_hand(step, expected):
    # 4 warm-up steps of 16: linear to 1, then half a cosine over the 12 steps left.
    assert lr_factor(step, 16, warmup=0.25) == pytest.approx(expected, abs=1e-12)


def test_split_is_disjoint_and_complete():
    x_train, y_train, x_test, y_test = split_digits(1536)
    assert len(x_train) + len(x_test) == 1797
    rows = {tuple(r.tolist()) for r in x_train}
    assert not any(tuple(r.tolist()) in rows for r in x_test[:50])  # digits has few duplicates
    assert set(y_test.tolist()) == set(range(10))


def test_bad_micro_batch_is_a_value_error():
    with pytest.raises(ValueError, match="micro_batch must divide batch 128"):
        train_run("accumulated", TrainingConfig(micro_batch=48))
    with pytest.raises(ValueError, match="name must be one of"):
        train_run("medium batch")


@pytest.mark.parametrize("metric", ["train_loss", "test_accuracy"])
def test_plot_curves_draws_one_labelled_line_per_run(metric):
    runs = [train_run(name, TrainingConfig(epochs=1)) for name in ("large batch", "small batch")]
    fig, ax = plot_curves(runs, metric)
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["large batch", "small batch"]
    assert lines[0].get_linestyle() != lines[1].get_linestyle()
    assert ax.get_xlabel() == "epochs" and ax.get_ylabel()
    assert len(lines[1].get_xdata()) == (4 * 12 if metric == "train_loss" else 1)
    with pytest.raises(ValueError, match="metric"):
        plot_curves(runs, "speed")
    matplotlib.pyplot.close(fig)
