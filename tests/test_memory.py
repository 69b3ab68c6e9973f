"""Peak memory measurement: the breakdown against hand counts, activations against the micro-batch.

The models here are not the lessons' models: Linear+ReLU stacks and conv nets of several
widths whose saved tensors are counted by hand, and a small transformer encoder layer.
Allocator figures are checked with bounds and orderings, never exact bytes.
"""

import numpy as np
import pytest
import torch
from torch import nn

import gradacc_lessons.memory.instruments as memory
from gradacc_lessons.memory import (
    activation_bytes_per_sample,
    estimate_training_memory,
    measure_training_memory,
    optimizer_state_bytes,
)

F32 = 4  # bytes per float32
I64 = 8  # bytes per int64 target


def linear_relu_stack(widths=(12, 32, 24, 5)):
    layers = []
    for a, b in zip(widths[:-1], widths[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers[:-1])  # no ReLU after the last layer


def stack_saved_bytes_per_sample(widths=(12, 32, 24, 5)) -> int:
    # By hand: each Linear saves its input (the first one the micro-batch itself, the others
    # the previous ReLU's output, which that ReLU saved too: counted once); MSELoss saves
    # its input (the last Linear's output) and its target.
    return F32 * (widths[0] + sum(widths[1:-1]) + 2 * widths[-1])


def conv_net(width: int):
    return nn.Sequential(
        nn.Conv2d(3, width, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(width, 2 * width, 3, padding=1, stride=2),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(2 * width * 6 * 6, 5),
    )


def conv_saved_bytes_per_sample(width: int) -> int:
    # By hand, 3x12x12 images: conv1 saves the image, conv2 saves ReLU1's output
    # (width x 12 x 12), the Linear saves ReLU2's output (2 width x 6 x 6, flattened: the
    # same memory), MSELoss saves the 5 outputs and the 5 targets.
    return F32 * (3 * 144 + width * 144 + 2 * width * 36 + 5 + 5)


def conv_data(samples: int):
    return torch.randn(samples, 3, 12, 12), torch.randn(samples, 5)


def stack_data(samples: int):
    return torch.randn(samples, 12), torch.randn(samples, 5)


class Encoder(nn.Module):
    """One transformer encoder layer and a linear head on the mean token."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(
            d_model=16, nhead=2, dim_feedforward=32, dropout=0.0, batch_first=True
        )
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.layer(x).mean(dim=1))


def encoder_data(samples: int):
    return torch.randn(samples, 6, 16), torch.randint(3, (samples,))


def parameter_count(model):
    return sum(p.numel() for p in model.parameters())


def r_squared(x, y) -> float:
    slope, intercept = np.polyfit(x, y, 1)
    residual = np.asarray(y) - (slope * np.asarray(x) + intercept)
    return 1 - residual.var() / np.var(y)


# --- activations -------------------------------------------------------------------------


@pytest.mark.parametrize("widths", [(12, 32, 24, 5), (12, 64, 64, 64, 5)])
@pytest.mark.parametrize("size", [1, 7, 32])
def test_stack_activations_match_the_hand_count(widths, size):
    model = linear_relu_stack(widths)
    x = torch.randn(size, widths[0])
    y = torch.randn(size, widths[-1])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    report = measure_training_memory(model, opt, nn.MSELoss(), x, y)
    expected = size * stack_saved_bytes_per_sample(widths)
    # saved_tensors_hooks count exactly what autograd keeps: measured 0 bytes off the hand count
    # on every case here (torch 2.13, CPU; docs/measurements.md)
    assert report.activation_bytes == expected, (report, expected)


@pytest.mark.parametrize("width", [2, 8, 24])
def test_conv_activations_match_the_hand_count(width):
    model = conv_net(width)
    x, y = conv_data(16)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    report = measure_training_memory(model, opt, nn.MSELoss(), x, y)
    expected = 16 * conv_saved_bytes_per_sample(width)
    assert report.activation_bytes == expected, (report, expected)  # exact, as above


@pytest.mark.parametrize("accumulation_steps", [2, 4, 8])
def test_micro_batches_count_their_own_samples_not_the_batch(accumulation_steps):
    # The micro-batches are views of one 64-sample batch: each must count 64/N samples.
    model = conv_net(4)
    x, y = conv_data(64)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    report = measure_training_memory(model, opt, nn.MSELoss(), x, y, accumulation_steps)
    expected = (64 // accumulation_steps) * conv_saved_bytes_per_sample(4)
    assert report.activation_bytes == expected  # exact: the hand count of 64/N samples


def test_a_tensor_saved_whole_and_reshaped_counts_once():
    counter = memory._SavedTensorCounter(nn.Linear(1, 1))
    batch = torch.randn(64, 10, requires_grad=True)
    with counter.counting():
        part = batch[:16]  # a view of the batch: counts 16 rows, not 64
        (part.exp() * part.reshape(16, 10)).sum()
    # exp saves its result (16x10), mul saves both operands: the view and its reshape
    # are the same memory and count once.
    assert counter.last == 2 * 16 * 10 * F32


@pytest.mark.parametrize(
    "make, data",
    [(Encoder, encoder_data), (lambda: conv_net(6), conv_data), (linear_relu_stack, stack_data)],
    ids=["encoder", "conv", "mlp"],
)
def test_activations_grow_linearly_with_the_micro_batch(make, data):
    model = make()
    opt = torch.optim.Adam(model.parameters())
    loss = nn.CrossEntropyLoss() if make is Encoder else nn.MSELoss()
    sizes = [1, 2, 4, 8, 16, 32]
    measured = [measure_training_memory(model, opt, loss, *data(b)).activation_bytes for b in sizes]
    assert r_squared(sizes, measured) >= 0.99, measured
    # linear in the samples: measured 32.0x from 1 to 32 (the encoder 31.97x); 16x fails a
    # growth half as steep, or a fixed part as large as the per-sample one
    assert measured == sorted(measured) and measured[-1] > 16 * measured[0]


@pytest.mark.parametrize(
    "make, data",
    [(Encoder, encoder_data), (lambda: conv_net(6), conv_data)],
    ids=["encoder", "conv"],
)
@pytest.mark.parametrize("steps", [2, 4, 8, 16])
def test_activations_shrink_with_accumulation(make, data, steps):
    model = make()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss = nn.CrossEntropyLoss() if make is Encoder else nn.MSELoss()
    x, y = data(64)
    whole = measure_training_memory(model, opt, loss, x, y)
    split = measure_training_memory(model, opt, loss, x, y, accumulation_steps=steps)
    # measured: whole / (N x split) >= 0.9997 (the encoder's micro-batch keeps a few bytes that
    # do not scale with its samples; the CNN's ratio is 1); 0.99 still fails a split that
    # counts the whole batch (ratio 1/N) or half of it
    assert whole.activation_bytes >= 0.99 * steps * split.activation_bytes
    assert split.floor_bytes == whole.floor_bytes


def test_activation_bytes_per_sample_matches_the_hand_count():
    model = conv_net(5)
    x, y = conv_data(3)
    # exact: measured 0 bytes off the hand count (docs/measurements.md)
    assert activation_bytes_per_sample(model, nn.MSELoss(), x, y) == conv_saved_bytes_per_sample(5)


# --- parameters, gradients, optimizer state --------------------------------------------


def hand_optimizer_bytes(name: str, params: int, tensors: int) -> int:
    # SGD keeps nothing, momentum one buffer, Adam(W) two moments and a float32 step
    # count per parameter tensor.
    return {
        "sgd": 0,
        "momentum": params * F32,
        "adam": 2 * params * F32 + tensors * F32,
        "adamw": 2 * params * F32 + tensors * F32,
    }[name]


OPTIMIZERS = {
    "sgd": lambda p: torch.optim.SGD(p, lr=0.1),
    "momentum": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
    "adam": lambda p: torch.optim.Adam(p),
    "adamw": lambda p: torch.optim.AdamW(p, weight_decay=0.1),
}


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_parts_equal_hand_counts_and_stay_constant(name):
    model = conv_net(4)
    opt = OPTIMIZERS[name](model.parameters())
    params, tensors = parameter_count(model), len(list(model.parameters()))
    for size, steps in [(1, 1), (8, 1), (32, 1), (32, 4), (30, 7)]:
        report = measure_training_memory(model, opt, nn.MSELoss(), *conv_data(size), steps)
        assert report.parameter_bytes == params * F32, (size, steps)
        assert report.gradient_bytes == params * F32, (size, steps)
        assert report.optimizer_bytes == hand_optimizer_bytes(name, params, tensors), (size, steps)
        assert report.micro_batch_size == -(-size // steps)


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_the_estimate_agrees_with_the_measurement(name):
    model = conv_net(4)
    opt = OPTIMIZERS[name](model.parameters())
    x, y = conv_data(24)
    per_sample = activation_bytes_per_sample(model, nn.MSELoss(), x[:2], y[:2])
    estimate = estimate_training_memory(model, opt, 24, per_sample)
    measured = measure_training_memory(model, opt, nn.MSELoss(), x, y)
    assert estimate.floor_bytes == measured.floor_bytes
    # per-sample bytes x samples: activations are linear in the micro-batch, measured exact
    assert estimate.activation_bytes == measured.activation_bytes
    assert estimate.method.startswith("analytic")


def test_frozen_parameters_have_no_gradient_or_state():
    model = conv_net(4)
    model[0].requires_grad_(False)
    opt = torch.optim.Adam(p for p in model.parameters() if p.requires_grad)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    report = measure_training_memory(model, opt, nn.MSELoss(), *conv_data(4))
    assert report.parameter_bytes == parameter_count(model) * F32
    assert report.gradient_bytes == trainable * F32
    assert estimate_training_memory(model, opt, 4, 0.0).floor_bytes == report.floor_bytes


def test_the_estimate_rejects_optimizers_it_does_not_model():
    model = conv_net(2)
    with pytest.raises(ValueError, match="SGD, Adam or AdamW.*RMSprop"):
        estimate_training_memory(model, torch.optim.RMSprop(model.parameters()), 4, 10.0)
    with pytest.raises(ValueError, match="micro_batch_size"):
        estimate_training_memory(model, torch.optim.SGD(model.parameters(), lr=0.1), 0, 10.0)


# --- the peak ------------------------------------------------------------------------------


def test_the_peak_holds_every_part_it_must():
    model = conv_net(8)
    opt = torch.optim.Adam(model.parameters())
    for size in (1, 16, 64):
        report = measure_training_memory(model, opt, nn.MSELoss(), *conv_data(size))
        # After the step, parameters, gradients and state all exist; at the end of the
        # forward pass, parameters, state and every saved activation.
        assert report.peak_bytes >= report.floor_bytes
        assert report.peak_bytes >= (
            report.parameter_bytes + report.optimizer_bytes + report.activation_bytes
        )
        assert report.method.startswith("CPU: profiler")


def test_the_peak_is_deterministic_and_grows_with_the_micro_batch():
    model = conv_net(8)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    peaks = [
        measure_training_memory(model, opt, nn.MSELoss(), *conv_data(b)).peak_bytes
        for b in (1, 4, 16, 64)
    ]
    again = measure_training_memory(model, opt, nn.MSELoss(), *conv_data(64)).peak_bytes
    assert peaks[-1] == again
    # measured 25.8x from 1 to 64 samples (the floor of SGD's weights and gradients stays); 8x
    # fails a peak that the activations do not dominate
    assert peaks == sorted(peaks) and peaks[-1] > 8 * peaks[0]


def test_accumulation_lowers_the_peak_down_to_the_floor():
    model = conv_net(8)
    opt = torch.optim.Adam(model.parameters())
    x, y = conv_data(64)
    reports = [measure_training_memory(model, opt, nn.MSELoss(), x, y, n) for n in (1, 4, 16)]
    peaks = [r.peak_bytes for r in reports]
    # measured: N = 1 is 3.5x the peak of N = 4, which is 6.3x the floor; 2x each way fails a
    # run whose activations are not split by N
    assert peaks[0] > 2 * peaks[1] > 2 * reports[1].floor_bytes
    assert peaks[1] > peaks[2] >= reports[2].floor_bytes


def test_the_peak_does_not_count_what_the_process_held_before():
    model = conv_net(4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = conv_data(16)
    before = measure_training_memory(model, opt, nn.MSELoss(), x, y).peak_bytes
    ballast = torch.ones(2**22)  # 16 MiB that stay allocated during the next measurement
    after = measure_training_memory(model, opt, nn.MSELoss(), x, y).peak_bytes
    assert before == after and ballast.sum() > 0


def test_measuring_leaves_model_optimizer_and_random_stream_alone():
    model = nn.Sequential(conv_net(4), nn.Dropout(0.5))
    opt = torch.optim.Adam(model.parameters())
    x, y = conv_data(8)
    nn.MSELoss()(model(x), y).backward()
    opt.step()  # a used optimizer with state, and gradients left in .grad
    model.eval()
    weights = {k: v.clone() for k, v in model.state_dict().items()}
    grads = [p.grad.clone() for p in model.parameters()]
    state = optimizer_state_bytes(opt), opt.state_dict()["state"][0]["exp_avg"].clone()
    rng = torch.get_rng_state()
    measure_training_memory(model, opt, nn.MSELoss(), x, y, accumulation_steps=2)
    assert not model.training
    assert all(torch.equal(v, weights[k]) for k, v in model.state_dict().items())
    assert all(torch.equal(p.grad, g) for p, g in zip(model.parameters(), grads))
    assert optimizer_state_bytes(opt) == state[0]
    assert torch.equal(opt.state_dict()["state"][0]["exp_avg"], state[1])
    assert torch.equal(torch.get_rng_state(), rng)


def test_learner_errors_name_the_argument():
    model = conv_net(2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(ValueError, match="accumulation_steps must be"):
        measure_training_memory(model, opt, nn.MSELoss(), *conv_data(4), accumulation_steps=5)
    with pytest.raises(ValueError, match="loss_fn must return a scalar"):
        measure_training_memory(model, opt, nn.MSELoss(reduction="none"), *conv_data(4))


def test_the_cuda_branch_reads_the_allocator(monkeypatch):
    # No GPU here: stand in for the allocator to check the arithmetic of the CUDA branch.
    calls = []
    fake = {"allocated": 1000, "peak": 5000}
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: calls.append("sync"))
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda device=None: fake["allocated"])
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda device=None: fake["peak"])
    monkeypatch.setattr(
        torch.cuda, "reset_peak_memory_stats", lambda device=None: calls.append("reset")
    )
    with memory._peak_tracker(torch.device("cuda")) as peak:
        assert calls == ["sync", "reset"]
    assert peak == {"bytes": 4000, "method": memory.CUDA_METHOD}


def test_reports_read_well():
    model = conv_net(2)
    opt = torch.optim.Adam(model.parameters())
    report = measure_training_memory(model, opt, nn.MSELoss(), *conv_data(4))
    text, html = repr(report), report._repr_html_()
    assert text.startswith("memory of one effective batch: 1 × micro-batch ≤ 4 on cpu")
    for word in ("peak", "parameters", "gradients", "optimizer", "activations", "profiler"):
        assert word in html and word in text
    assert f"<td>{report.peak_bytes:,}</td>" in html
    part, exact, size, unit = text.splitlines()[2].split()
    assert (part, exact) == ("peak", f"{report.peak_bytes:,}")
    scale = {"B": 1, "KiB": 2**10, "MiB": 2**20}[unit]  # the size in one unit, 4 digits
    assert 1 <= float(size) < 1024
    assert float(size) * scale == pytest.approx(report.peak_bytes, rel=5e-4)


def test_devices_without_peak_statistics_fall_back_to_the_sum_of_the_parts():
    # Apple's MPS has no peak statistics: the tracker reports none, and the report's peak
    # is then parameters + gradients + optimizer state + activations.
    with memory._peak_tracker(torch.device("mps")) as peak:
        pass
    assert peak["bytes"] is None and "no peak statistics" in peak["method"]


def test_peak_bytes_of_a_function_counts_what_it_allocates_at_once():
    # 3 tensors of 1 MiB alive together, then freed: the peak is 3 MiB (plus the sum's
    # few bytes), whatever the process held before.
    ballast = torch.ones(2**20)

    def step():
        held = [torch.ones(2**18) for _ in range(3)]  # 3 x 2**18 float32 = 3 MiB
        return sum(t.sum() for t in held)

    peak = memory.peak_bytes_of(step, "cpu")
    assert 3 * 2**20 <= peak < 3 * 2**20 + 2**12
    assert ballast.sum() > 0
    with pytest.raises(ValueError, match="no peak statistics"):
        memory.peak_bytes_of(step, "meta")
    with pytest.raises(ValueError, match="step must be a function"):
        memory.peak_bytes_of(3, "cpu")


def test_peak_bytes_of_on_a_gpu_is_the_allocators_recipe(monkeypatch):
    # No GPU here: the CUDA calls, in their order, on a stand-in allocator.
    calls = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: calls.append("sync"))
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda device=None: 1000)
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda device=None: 7000)
    monkeypatch.setattr(
        torch.cuda, "reset_peak_memory_stats", lambda device=None: calls.append("reset")
    )
    assert memory.peak_bytes_of(lambda: calls.append("step"), "cuda") == 6000
    assert calls == ["sync", "reset", "step", "sync"]
