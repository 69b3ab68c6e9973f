"""Where the peak of a window is: phase peaks against the whole step's peak and the rule."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.nn import functional as F

from gradacc_lessons.memory import (
    GB,
    estimate_temporaries,
    floor_for,
    measure_phase_peaks,
    measure_training_memory,
    transformer_activation_bytes,
)
from gradacc_lessons.models import SmallCNN

OPTIMIZERS = {
    "Adam (for-loop, the CPU default)": lambda p: torch.optim.Adam(p),
    "Adam, weight decay": lambda p: torch.optim.Adam(p, weight_decay=0.1),
    "AdamW, weight decay": lambda p: torch.optim.AdamW(p, weight_decay=0.1),
    "Adam foreach (the CUDA default)": lambda p: torch.optim.Adam(p, foreach=True),
    "AdamW foreach, weight decay": lambda p: torch.optim.AdamW(p, foreach=True, weight_decay=0.1),
    "Adam fused": lambda p: torch.optim.Adam(p, fused=True),
    "SGD": lambda p: torch.optim.SGD(p, lr=0.1),
    "SGD momentum, weight decay": lambda p: torch.optim.SGD(
        p, lr=0.1, momentum=0.9, weight_decay=0.1
    ),
    "SGD foreach, weight decay": lambda p: torch.optim.SGD(
        p, lr=0.1, weight_decay=0.1, foreach=True
    ),
}


def _mlp(widths):
    layers = []
    for a, b in zip(widths, widths[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


def _problem(kind: str):
    generator = torch.Generator().manual_seed(0)
    if kind == "cnn":
        x = torch.randn(32, 1, 16, 16, generator=generator)
        return SmallCNN(10, channels=8), x, torch.randint(10, (32,), generator=generator)
    widths = {"wide": (100, 800, 10), "deep": (64, 256, 256, 256, 10)}[kind]
    x = torch.randn(32, widths[0], generator=generator)
    return _mlp(widths), x, torch.randint(10, (32,), generator=generator)


@pytest.mark.parametrize("kind", ["wide", "deep", "cnn"])
@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_phase_peaks_and_the_rule_for_the_step(kind, optimizer):
    model, x, y = _problem(kind)
    opt = OPTIMIZERS[optimizer](model.parameters())
    phases = measure_phase_peaks(model, opt, F.cross_entropy, x, y, 2)
    whole = measure_training_memory(model, opt, F.cross_entropy, x, y, 2)
    names = [p.name for p in phases]
    assert names == ["forward 1", "backward 1", "forward 2", "backward 2", "optimizer step"]
    # Two independent measurements of the same peak: the whole step's and its phases'.
    # They differ by the loss, a scalar (4 bytes), that one keeps a moment longer.
    assert abs(max(p.peak_bytes for p in phases) - whole.peak_bytes) <= 8
    # The optimizer step holds the floor plus its temporaries, as the rule says; within
    # 16 bytes (the scalars an optimizer keeps per step: measured 0 to 12).
    step = phases[-1].peak_bytes - whole.floor_bytes
    rule = estimate_temporaries(model, opt, 2).step_bytes
    assert abs(step - rule) <= 16, (step, rule)


@pytest.mark.parametrize("kind", ["wide", "deep", "cnn"])
def test_a_second_micro_batch_adds_about_one_largest_gradient(kind):
    model, x, y = _problem(kind)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    peaks = {
        p.name: p.peak_bytes for p in measure_phase_peaks(model, opt, F.cross_entropy, x, y, 2)
    }
    extra = peaks["backward 2"] - peaks["backward 1"]
    largest = estimate_temporaries(model, opt, 2).accumulating_bytes
    # The second backward makes each gradient beside the filled .grad before adding it:
    # one largest-parameter-sized temporary more than the first. Measured 1.00 to 1.27 x
    # the largest tensor (the rest: a different moment of backward's own temporaries).
    assert largest <= extra <= 1.3 * largest, (extra, largest)
    assert estimate_temporaries(model, opt, 1).accumulating_bytes == 0
    assert f"accumulating into .grad {largest:,}" in " ".join(
        repr(estimate_temporaries(model, opt, 2)).split()
    )


def test_with_adam_the_peak_sits_in_the_step_flat_in_the_micro_batch():
    model = _mlp((300, 1200, 1200, 10))
    opt = torch.optim.Adam(model.parameters())
    steps = []
    for size in (8, 64):
        x, y = torch.randn(size, 300), torch.randint(10, (size,))
        phases = measure_phase_peaks(model, opt, F.cross_entropy, x, y, 1)
        assert max(phases, key=lambda p: p.peak_bytes).name == "optimizer step"
        steps.append(phases[-1].peak_bytes)
    assert steps[0] == steps[1]  # the step does not see the micro-batch


def test_real_model_floors_and_activations_by_hand():
    # 7e9 parameters: 2 + 2 bytes of 16-bit weights and gradients, 4 + 8 of float32
    # master weights and Adam moments (ZeRO paper's 16 bytes per parameter).
    floor = floor_for(7_000_000_000)
    assert floor["total"] == 112 * GB and floor["optimizer state"] == 84 * GB
    assert floor_for(10**6, "float32, Adam")["total"] == 16 * 10**6
    with pytest.raises(ValueError, match="recipe"):
        floor_for(10, "bfloat16, Lion")
    # 34 bytes x hidden per token and layer (Korthikanti et al.), 2 x hidden checkpointed.
    assert transformer_activation_bytes(10, hidden=8, layers=3) == 10 * 3 * 34 * 8
    assert transformer_activation_bytes(10, hidden=8, layers=3, checkpointing=True) == 480
    with pytest.raises(ValueError, match="tokens"):
        transformer_activation_bytes(0, hidden=8, layers=3)
