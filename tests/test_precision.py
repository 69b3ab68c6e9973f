"""Mixed precision with accumulation: bf16 accuracy, and the GradScaler's order per window."""

from __future__ import annotations

import pytest
import torch
from torch.nn import functional as F

from gradacc_lessons.data import load_digits
from gradacc_lessons.models import MLP
from gradacc_lessons.precision import (
    mixed_precision_gradients,
    precision_for,
    train_mixed_precision,
)


def _l2(a: dict, b: dict) -> float:
    """L2 norm of a - b over all tensors, relative to the norm of b."""
    diff = sum(((a[k].double() - b[k].double()) ** 2).sum() for k in b) ** 0.5
    return (diff / sum((v.double() ** 2).sum() for v in b.values()) ** 0.5).item()


def _digits_batch(seed: int, size: int = 128):
    x, y = load_digits()
    rows = torch.randperm(len(x), generator=torch.Generator().manual_seed(seed))[:size]
    return x[rows], y[rows]


def _float64_gradients(model, x, y) -> dict:
    """The reference: full batch, float64, no autocast, plain autograd."""
    model64 = MLP(64, 10).double()
    model64.load_state_dict(model.state_dict())
    loss = F.cross_entropy(model64(x.double()), y)
    grads = torch.autograd.grad(loss, list(model64.parameters()))
    return {name: g for (name, _), g in zip(model64.named_parameters(), grads)}


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("micro_batches", [2, 8])
def test_bf16_accumulated_gradients_match_bf16_full_batch(seed, micro_batches):
    torch.manual_seed(seed)
    model = MLP(64, 10)
    x, y = _digits_batch(seed)
    full = mixed_precision_gradients(model, F.cross_entropy, x, y, 1, torch.bfloat16)
    accumulated = mixed_precision_gradients(model, F.cross_entropy, x, y, micro_batches)
    reference = _float64_gradients(model, x, y)
    # Measured here (5 seeds, N = 2, 4, 8, B = 128): accumulated vs full bf16 differ by
    # 1.7e-3 to 2.3e-3 (L2 relative), while bf16 itself is 1e-2 to 3e-2 from float64. bf16
    # keeps 8 significant bits (unit roundoff 2^-8 = 3.9e-3): a new rounding order moves the
    # result by about one unit. 1e-2 is 4x the worst case measured, and a wrong loss scaling
    # (no / N) is off by N - 1 >= 1.
    assert _l2(accumulated, full) <= 1e-2
    naive = {name: g * micro_batches for name, g in accumulated.items()}
    assert _l2(naive, full) > 0.5
    # Accumulation costs no accuracy: both are as far from float64 as bf16 makes them.
    assert _l2(accumulated, reference) <= 1.25 * _l2(full, reference)
    assert _l2(full, reference) > _l2(accumulated, full)  # bf16 itself costs more than the split


class _RecordingScaler(torch.amp.GradScaler):
    """A GradScaler that writes each call into a shared log."""

    def __init__(self, log: list, **kwargs):
        super().__init__("cpu", **kwargs)
        self.log = log

    def scale(self, outputs):
        self.log.append("scale")
        return super().scale(outputs)

    def unscale_(self, optimizer):
        self.log.append("unscale_")
        return super().unscale_(optimizer)

    def step(self, optimizer, *args, **kwargs):
        self.log.append("step")
        return super().step(optimizer, *args, **kwargs)

    def update(self, new_scale=None):
        self.log.append("update")
        return super().update(new_scale)


def _fp16_training(windows: int, steps: int, max_grad_norm=1.0, init_scale=2.0**16):
    torch.manual_seed(0)
    model = MLP(64, 10)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = _digits_batch(0, size=16 * steps * windows)
    batches = list(zip(x.split(16), y.split(16)))
    log: list[str] = []
    scaler = _RecordingScaler(log, init_scale=init_scale)
    events = []

    def on_event(event):
        events.append(event)
        if event.kind == "clip":
            log.append("clip")

    train_mixed_precision(
        model, optimizer, F.cross_entropy, batches, steps,
        dtype=torch.float16, scaler=scaler, max_grad_norm=max_grad_norm, on_event=on_event,
    )  # fmt: skip
    return model, log, events


@pytest.mark.parametrize("steps", [1, 3, 4])
def test_grad_scaler_unscales_once_before_clipping_and_steps_once_per_window(steps):
    _, log, _ = _fp16_training(windows=3, steps=steps)
    window = ["scale"] * steps + ["unscale_", "clip", "step", "update"]
    assert log == window * 3


def _one_window_update(order: str) -> dict:
    """Parameters after one fp16 window with clipping, the scaler used in `order`."""
    torch.manual_seed(0)
    model = MLP(64, 10)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    x, y = _digits_batch(3, size=64)
    if order == "float32":  # the reference: full batch, float32, no scaler, clip
        F.cross_entropy(model(x), y).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()
    elif order == "package":
        scaler = torch.amp.GradScaler("cpu")
        batches = list(zip(x.split(16), y.split(16)))
        train_mixed_precision(
            model, optimizer, F.cross_entropy, batches, 4,
            dtype=torch.float16, scaler=scaler, max_grad_norm=0.1,
        )  # fmt: skip
    else:  # the bug: clip the scaled gradients, and let scaler.step unscale afterwards
        scaler = torch.amp.GradScaler("cpu")
        for xb, yb in zip(x.split(16), y.split(16)):
            with torch.autocast("cpu", dtype=torch.float16):
                out = model(xb)
            scaler.scale(F.cross_entropy(out.float(), yb) / 4).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        scaler.step(optimizer)
        scaler.update()
    return {name: p.detach().clone() for name, p in model.named_parameters()}


def test_clipping_sees_the_true_gradient_norm():
    torch.manual_seed(0)
    start = {name: p.detach().clone() for name, p in MLP(64, 10).named_parameters()}
    step = {k: _one_window_update("float32")[k] - start[k] for k in start}
    right = {k: _one_window_update("package")[k] - start[k] for k in start}
    wrong = {k: _one_window_update("clip_before_unscale")[k] - start[k] for k in start}
    # fp16 rounds to 2^-11 relative; over a whole update 2e-2 is ample and the bug,
    # which clips 65,536-times-too-large gradients, shrinks the update ~1e4-fold.
    assert _l2(right, step) < 2e-2
    assert _l2(wrong, step) > 0.9


def test_an_overflowing_window_is_skipped_and_reported():
    torch.manual_seed(0)
    before = {name: p.detach().clone() for name, p in MLP(64, 10).named_parameters()}
    model, log, events = _fp16_training(windows=1, steps=2, init_scale=2.0**40)
    assert [e.kind for e in events if e.kind in ("step", "update", "skipped")] == [
        "step", "update", "skipped",
    ]  # fmt: skip
    for name, p in model.named_parameters():
        assert torch.equal(p, before[name]), f"{name} changed although the step was skipped"


def test_training_without_scaler_in_bf16_learns():
    torch.manual_seed(0)
    model = MLP(64, 10)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    x, y = _digits_batch(0, size=512)
    batches = list(zip(x.split(32), y.split(32))) * 3
    losses = train_mixed_precision(model, optimizer, F.cross_entropy, batches, 4, max_grad_norm=1.0)
    assert len(losses) == 12
    assert losses[-1] < 0.5 * losses[0], losses


def test_precision_for_devices():
    assert precision_for(torch.device("cpu")) == (torch.bfloat16, False)
    assert precision_for("cuda:0") == (torch.float16, True)


def test_zero_accumulation_steps_is_a_value_error():
    model = MLP(64, 10)
    with pytest.raises(ValueError, match="accumulation_steps"):
        train_mixed_precision(model, torch.optim.SGD(model.parameters()), F.cross_entropy, [], 0)
