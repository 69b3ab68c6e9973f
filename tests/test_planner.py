"""The accumulation planner: a plan fits its budget when the real window is measured."""

import math
import re

import pytest
import torch
from torch import nn

import gradacc_lessons.planner as planner
from gradacc_lessons.accumulate import split_batch
from gradacc_lessons.memory import measure_training_memory
from gradacc_lessons.planner import plan_accumulation


def conv_net(width: int = 8):
    return nn.Sequential(
        nn.Conv2d(3, width, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(width, width, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(width, 4),
    )


def wide_mlp():
    return nn.Sequential(nn.Linear(32, 512), nn.Tanh(), nn.Linear(512, 4))


def samples(model, count: int):
    first = model[0]
    if isinstance(first, nn.Conv2d):
        return torch.randn(count, 3, 10, 10), torch.randint(4, (count,))
    return torch.randn(count, first.in_features), torch.randint(4, (count,))


def measure_plan(model, opt, plan):
    """Peak of the plan's real window: the effective batch split as the plan says."""
    x, y = samples(model, plan.effective_batch)
    return measure_training_memory(
        model, opt, nn.CrossEntropyLoss(), x, y, plan.accumulation_steps
    ).peak_bytes


def full_and_single(model, opt, effective_batch):
    """Peaks of the whole effective batch at once, and of a window of 1-sample micro-batches."""
    x, y = samples(model, effective_batch)
    whole = measure_training_memory(model, opt, nn.CrossEntropyLoss(), x, y).peak_bytes
    single = measure_training_memory(model, opt, nn.CrossEntropyLoss(), x[:2], y[:2], 2)
    return whole, single.peak_bytes


CASES = [
    ("conv-sgd", lambda: conv_net(8), lambda p: torch.optim.SGD(p, lr=0.1), 64),
    ("conv-adam", lambda: conv_net(12), lambda p: torch.optim.Adam(p), 100),
    ("mlp-momentum", wide_mlp, lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9), 96),
]


@pytest.mark.parametrize("name, make, make_opt, effective_batch", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("fraction", [0.15, 0.5, 0.85])
def test_a_plan_fits_its_budget_and_is_the_largest_that_does(
    name, make, make_opt, effective_batch, fraction
):
    model = make()
    opt = make_opt(model.parameters())
    whole, single = full_and_single(model, opt, effective_batch)
    budget = int(single + fraction * (whole - single))
    x, y = samples(model, 3)
    plan = plan_accumulation(model, opt, nn.CrossEntropyLoss(), x, y, effective_batch, budget)

    assert measure_plan(model, opt, plan) <= budget
    assert plan.predicted_peak_bytes <= budget
    assert plan.accumulation_steps > 1  # the whole batch does not fit
    # One step fewer means a larger micro-batch, which must not fit.
    fewer = plan.accumulation_steps - 1
    larger = math.ceil(effective_batch / fewer)
    assert larger > plan.micro_batch_size
    xs, ys = samples(model, 2 * larger)
    assert measure_training_memory(model, opt, nn.CrossEntropyLoss(), xs, ys, 2).peak_bytes > budget


@pytest.mark.parametrize("effective_batch", [10, 37, 100])
def test_the_split_of_an_indivisible_batch_matches_split_batch(effective_batch):
    model = conv_net(4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    whole, single = full_and_single(model, opt, effective_batch)
    x, y = samples(model, 2)
    plan = plan_accumulation(
        model, opt, nn.CrossEntropyLoss(), x, y, effective_batch, (whole + single) // 2
    )
    xs, ys = samples(model, effective_batch)
    sizes = [len(chunk) for chunk, _ in split_batch(xs, ys, plan.accumulation_steps)]
    assert sizes == plan.micro_batch_sizes
    assert max(sizes) == plan.micro_batch_size and sum(sizes) == effective_batch
    assert measure_plan(model, opt, plan) <= plan.memory_budget


def test_a_budget_that_holds_the_whole_batch_needs_no_accumulation():
    model = conv_net(4)
    opt = torch.optim.Adam(model.parameters())
    whole, _ = full_and_single(model, opt, 32)
    x, y = samples(model, 1)
    plan = plan_accumulation(model, opt, nn.CrossEntropyLoss(), x, y, 32, whole + 1)
    assert (plan.micro_batch_size, plan.accumulation_steps) == (32, 1)
    assert plan.predicted_peak_bytes == whole


def test_the_error_when_nothing_fits_says_by_how_much():
    model = wide_mlp()
    opt = torch.optim.Adam(model.parameters())
    floor = 4 * 4 * sum(p.numel() for p in model.parameters())  # params, grads, 2 moments
    budget = floor // 2
    x, y = samples(model, 2)
    with pytest.raises(ValueError) as error:
        plan_accumulation(model, opt, nn.CrossEntropyLoss(), x, y, 64, budget)
    message = str(error.value)
    assert message.startswith(f"memory_budget={budget:,} bytes")
    # the sizes in the unit the lessons print (here 148 KiB), beside the exact bytes
    assert f"({budget / 2**10:.4g} KiB)" in message and "even a micro-batch of 1 sample" in message
    numbers = [int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*\d(?= bytes)", message)]
    stated_budget, peak, short = numbers[:3]
    assert stated_budget == budget and peak > floor and short == peak - budget


@pytest.mark.parametrize(
    "change, match",
    [
        ({"effective_batch": 0}, "effective_batch must be an integer of at least 1"),
        ({"effective_batch": 8.0}, "effective_batch must be an integer of at least 1"),
        ({"memory_budget": -1}, "memory_budget must be a number above 0"),
        ({"sample_targets": torch.zeros(3, dtype=torch.long)}, "same number"),
    ],
)
def test_bad_arguments_are_named(change, match):
    model = conv_net(2)
    x, y = samples(model, 2)
    arguments = dict(
        model=model,
        optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
        loss_fn=nn.CrossEntropyLoss(),
        sample_inputs=x,
        sample_targets=y,
        effective_batch=8,
        memory_budget=2**20,
    )
    with pytest.raises(ValueError, match=match):
        plan_accumulation(**{**arguments, **change})


def test_the_plan_reads_well():
    model = conv_net(2)
    x, y = samples(model, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    plan = plan_accumulation(model, opt, nn.CrossEntropyLoss(), x, y, 16, 2**30)
    assert repr(plan).startswith("AccumulationPlan(micro_batch_size=16, accumulation_steps=1")


@pytest.mark.parametrize("answer", [0, 1, 17, 48, 98])
def test_the_search_finds_the_largest_fitting_size_from_any_guess(answer):
    for guess in range(0, 100, 7):
        probed = []

        def fits(i, probed=probed):
            probed.append(i)
            return i <= answer

        assert planner._largest_fitting(100, fits, guess) == answer
        assert len(probed) <= 3 + math.ceil(math.log2(100)), (guess, probed)


def test_a_size_that_runs_out_of_gpu_memory_does_not_fit(monkeypatch):
    # No GPU here: stand in for one whose memory holds at most 40 samples per window.
    real = planner.measure_training_memory

    def small_gpu(model, optimizer, loss_fn, inputs, targets, accumulation_steps):
        if len(inputs) > 40:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory")
        return real(model, optimizer, loss_fn, inputs, targets, accumulation_steps)

    monkeypatch.setattr(planner, "measure_training_memory", small_gpu)
    model = conv_net(4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = samples(model, 2)
    plan = plan_accumulation(model, opt, nn.CrossEntropyLoss(), x, y, 64, 2**40)
    # Two micro-batches of at most 20 samples fit: 64 = 16 x 4 (22 x 3 would not).
    assert (plan.micro_batch_size, plan.accumulation_steps) == (16, 4)

    def no_gpu_memory(*arguments):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory")

    monkeypatch.setattr(planner, "measure_training_memory", no_gpu_memory)
    with pytest.raises(ValueError, match="runs out of the device's memory"):
        plan_accumulation(model, opt, nn.CrossEntropyLoss(), x, y, 64, 2**40)
