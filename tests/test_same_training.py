"""Lesson 1's loop comparison and same-training runs, against SGD written out by hand here.

The reference trajectories use autograd directly on the merged batches (no loop, no helper
of the package), so a loop that stepped at the wrong time, or a run on other data, shows.
"""

import pytest
import torch

from gradacc_lessons.demos.same_training import compare_loops, same_training


def problem(samples=32, seed=0, dtype=torch.float64):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(samples, 5, generator=generator, dtype=dtype)
    y = torch.randint(3, (samples,), generator=generator)
    torch.manual_seed(seed)
    return torch.nn.Linear(5, 3).to(dtype), x, y


def sgd_by_hand(model, batches, lr):
    """Plain SGD, one step per (inputs, targets, weight) group of micro-batches."""
    params = [p.detach().clone().requires_grad_() for p in model.parameters()]
    for group in batches:
        if group is None:
            continue
        total = [torch.zeros_like(p) for p in params]
        for x, y, weight in group:
            logits = torch.nn.functional.linear(x, params[0], params[1])
            loss = torch.nn.functional.cross_entropy(logits, y) * weight
            total = [t + g for t, g in zip(total, torch.autograd.grad(loss, params))]
        params = [(p - lr * g).detach().requires_grad_() for p, g in zip(params, total)]
    return torch.cat([p.detach().flatten() for p in params])


def relative(a, b):
    return float((a - b).norm() / b.norm())


def test_compare_loops_matches_sgd_by_hand_for_both_loops():
    model, x, y = problem()
    micro = [(x[i : i + 4], y[i : i + 4]) for i in range(0, 32, 4)]  # 8 micro-batches of 4
    before = [p.clone() for p in model.parameters()]
    result = compare_loops(model, torch.nn.CrossEntropyLoss(), micro, 4, lr=0.5)
    # the full batch: one step per window of 4 micro-batches (16 samples)
    full = sgd_by_hand(model, [[(x[:16], y[:16], 1.0)], [(x[16:], y[16:], 1.0)]], 0.5)
    # off by one: steps after micro-batch 0, then after micro-batches 1-4; 5-7 never step
    off = sgd_by_hand(model, [[(*micro[0], 0.25)], [(*m, 0.25) for m in micro[1:5]]], 0.5)
    assert result.full_batch_steps == 2
    assert result.run("textbook_loop").steps == result.run("off_by_one_loop").steps == 2
    assert result.run("textbook_loop").relative_error < 1e-12
    assert result.run("off_by_one_loop").relative_error == pytest.approx(
        relative(off, full), rel=1e-9
    )
    assert relative(off, full) > 1e-2
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))  # model kept
    assert "off_by_one_loop" in repr(result) and "<table>" in result._repr_html_()


def test_same_training_agrees_with_full_batch_sgd_and_counts_steps():
    model, x, y = problem(samples=48, dtype=torch.float32)
    sgd = {"SGD": lambda params: torch.optim.SGD(params, lr=0.1)}
    result = same_training(model, torch.nn.CrossEntropyLoss(), x, y, 12, 3, optimizers=sgd)
    assert [(g.optimizer, g.dtype, g.steps) for g in result.gaps] == [
        ("SGD", "float32", 4),
        ("SGD", "float64", 4),
    ]
    assert result.gap("SGD", "float64") < 1e-12
    assert 0 <= result.gap("SGD", "float32") < 1e-5


def test_same_training_runs_the_windows_it_is_given():
    """A different window (3 micro-batches of 4 vs 2) must not look like the full batch."""
    model, x, y = problem(samples=48)
    sgd = {"SGD": lambda params: torch.optim.SGD(params, lr=0.5)}
    result = same_training(
        model, torch.nn.CrossEntropyLoss(), x, y, 12, 3, optimizers=sgd, dtypes=[torch.float64]
    )
    windows = [[(x[i : i + 12], y[i : i + 12], 1.0)] for i in range(0, 48, 12)]
    wrong = [[(x[i : i + 8], y[i : i + 8], 1.0)] for i in range(0, 48, 8)]
    assert result.gap("SGD", "float64") < 1e-12
    assert relative(sgd_by_hand(model, wrong, 0.5), sgd_by_hand(model, windows, 0.5)) > 1e-3


@pytest.mark.parametrize(
    "call",
    [
        lambda m, x, y: compare_loops(m, torch.nn.MSELoss(), [(x, y)], 0),
        lambda m, x, y: compare_loops("model", torch.nn.MSELoss(), [(x, y)], 2),
        lambda m, x, y: same_training(m, torch.nn.MSELoss(), x, y, 0, 2),
        lambda m, x, y: same_training(m, torch.nn.MSELoss(), x, y, 4, 2, optimizers={}),
    ],
)
def test_bad_arguments_are_refused(call):
    model, x, y = problem()
    with pytest.raises(ValueError):
        call(model, x, y)
