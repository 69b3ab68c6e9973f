"""Mixed precision with accumulation: bf16 accuracy, and the GradScaler's order per window."""

from __future__ import annotations

import pytest
import torch
from torch.nn import functional as F

from gradacc_lessons.data import load_digits
from gradacc_lessons.memory import activation_bytes_per_sample
from gradacc_lessons.models import MLP, SmallCNN
from gradacc_lessons.precision import (
    AutocastModel,
    accumulation_dtype_errors,
    compute_skipped_steps,
    float32_gradients,
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
    # Accumulation costs no accuracy: both are as far from float64 as bf16 makes them
    # (measured: the ratio is 0.995 to 1.001 over 5 seeds and N = 2, 4, 8; 1.25 leaves room).
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
    # measured: the last loss is 0.43-0.47 of the first (seeds 0-2, 12 AdamW steps); a model
    # that does not learn, or diverges without a scaler, stays at 1 or above
    assert losses[-1] < 0.5 * losses[0], losses


def test_precision_for_devices(monkeypatch):
    assert precision_for(torch.device("cpu")) == (torch.bfloat16, False)
    # A GPU is described by its compute capability: bf16 from Ampere (8.x) on.
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.version, "hip", None)
    for capability, expected in [((7, 5), (torch.float16, True)), ((8, 0), (torch.bfloat16, False)),
                                 ((9, 0), (torch.bfloat16, False))]:  # fmt: skip
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device, c=capability: c)
        assert precision_for("cuda:0") == expected, capability


def test_precision_for_cuda_without_a_gpu_says_so(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="no CUDA GPU"):
        precision_for("cuda")


def test_zero_accumulation_steps_is_a_value_error():
    model = MLP(64, 10)
    with pytest.raises(ValueError, match="accumulation_steps"):
        train_mixed_precision(model, torch.optim.SGD(model.parameters()), F.cross_entropy, [], 0)


def test_a_per_sample_loss_is_the_courses_value_error():
    # The mixed-precision loop is train_accumulated: the same scalar-loss check.
    model = MLP(64, 10)
    x, y = _digits_batch(0, size=32)

    def per_sample(outputs, targets):
        return F.cross_entropy(outputs, targets, reduction="none")

    with pytest.raises(ValueError, match='reduction="mean"'):
        train_mixed_precision(
            model,
            torch.optim.SGD(model.parameters()),
            per_sample,
            list(zip(x.split(8), y.split(8))),
            2,
        )


def test_a_bfloat16_grad_stops_adding_where_float32_buffers_go_on():
    # By hand: bfloat16 keeps 8 significant bits, so from 256 on its spacing is 2 and
    # 256 + 1 rounds back to 256 (ties to even). 300 backwards of a bias gradient of 1.
    model = torch.nn.Linear(2, 1).to(torch.bfloat16)
    for _ in range(300):
        model(torch.zeros(1, 2, dtype=torch.bfloat16)).sum().backward()
    assert model.bias.grad.item() == 256.0
    model.zero_grad(set_to_none=True)
    with float32_gradients(model) as buffers:
        for _ in range(300):
            model(torch.zeros(1, 2, dtype=torch.bfloat16)).sum().backward()
    assert buffers["bias"].item() == 300.0 and buffers["bias"].dtype == torch.float32
    assert model.bias.grad is None
    # The hooks are gone after the block: .grad adds up again.
    model(torch.zeros(1, 2, dtype=torch.bfloat16)).sum().backward()
    assert model.bias.grad.item() == 1.0 and buffers["bias"].item() == 300.0


def _sum_by_hand(model, x, y, n, dtype):
    """Each micro-batch's gradient by autograd.grad, added in `dtype` and, exactly, in float64."""
    low = MLP(64, 10).to(dtype) if isinstance(model, MLP) else SmallCNN(10).to(dtype)
    low.load_state_dict(model.state_dict())
    params = list(low.parameters())
    sums = [torch.zeros_like(p) for p in params]
    exact = [torch.zeros_like(p, dtype=torch.float64) for p in params]
    for xb, yb in zip(x.tensor_split(n), y.tensor_split(n)):
        loss = F.cross_entropy(low(xb.to(dtype)).float(), yb) * (len(xb) / len(x))
        for s, e, g in zip(sums, exact, torch.autograd.grad(loss, params)):
            s += g  # in dtype, as .grad does
            e += g.double()
    diff = sum(float(((s.double() - e) ** 2).sum()) for s, e in zip(sums, exact))
    return (diff / sum(float((e**2).sum()) for e in exact)) ** 0.5


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_accumulation_dtype_errors_against_sums_by_hand(kind):
    torch.manual_seed(1)
    if kind == "mlp":
        model, (x, y) = MLP(64, 10), _digits_batch(1, size=256)
    else:
        x, y = _digits_batch(2, size=128)
        model, x = SmallCNN(10), x.reshape(-1, 1, 8, 8)
    steps = [1, 4, 32, len(x)]
    errors = accumulation_dtype_errors(model, F.cross_entropy, x, y, steps)
    assert errors.accumulation_steps == steps and errors.dtype == "bfloat16"
    for n, grad, buffer in zip(steps, errors.grad_errors, errors.buffer_errors):
        by_hand = _sum_by_hand(model, x, y, n, torch.bfloat16)
        # The same additions in the same order: equal but for float64's last bits.
        assert grad == pytest.approx(by_hand, rel=1e-9, abs=1e-12), n
        # float32 buffers: rounding of float32 sums, measured <= 2e-8 here; 1e-6 leaves room
        # and is 1,000x below the 16-bit error of any N >= 4.
        assert buffer <= 1e-6, n
    assert errors.grad_errors[0] == 0.0  # one micro-batch: nothing is added
    # Many small additions in 8 bits: the error grows with N, to the percent level (measured
    # at N = every sample: 4.1e-2 for the MLP, 3.6e-2 for the CNN; 3e-3 is 10x below both, and
    # 10^5 x above the float32 buffers' 2e-8).
    assert errors.grad_errors[1] < errors.grad_errors[-1]
    assert errors.grad_errors[-1] > 3e-3
    last = repr(errors).splitlines()[-1].split()
    assert last[:2] == [str(len(x)), f"{errors.grad_errors[-1]:.2%}"]


def test_autocast_saves_16_bit_inputs_and_16_bit_weight_copies():
    # By hand for one Linear(8, 3) layer and an MSE loss, per sample: autocast saves the
    # input cast to bfloat16 (8 x 2 bytes); the loss saves its float32 input and target
    # (3 x 4 bytes each). The bfloat16 copy of the weight is saved once, not per sample.
    layer, x, y = torch.nn.Linear(8, 3), torch.randn(2, 8), torch.randn(2, 3)
    loss_fn = torch.nn.MSELoss()
    plain = activation_bytes_per_sample(layer, loss_fn, x, y)
    cast = activation_bytes_per_sample(AutocastModel(layer, torch.bfloat16), loss_fn, x, y)
    assert plain == 8 * 4 + 3 * 4 + 3 * 4
    assert cast == 8 * 2 + 3 * 4 + 3 * 4


def test_skipped_steps_do_not_advance_a_scheduler_stepped_after_updates():
    x, y = _digits_batch(3, size=256)
    torch.manual_seed(3)
    micro_batches = list(zip(x.split(16), y.split(16)))
    result = compute_skipped_steps(MLP(64, 10), F.cross_entropy, micro_batches, 2, 2.0**24, 8)
    skipped = result.skipped
    assert any(skipped) and not all(skipped), skipped  # the scale falls until steps happen
    # By hand, from the warm-up factor min(1, (step + 1) / 8): the common loop steps its
    # scheduler every window; the fixed one only after real updates.
    updates = [sum(not s for s in skipped[: i + 1]) for i in range(len(skipped))]
    assert result.lr_every_window == [min(1.0, (i + 2) / 8) for i in range(len(skipped))]
    assert result.lr_after_updates == [min(1.0, (u + 1) / 8) for u in updates]
    assert repr(result).splitlines()[1].split()[:2] == ["0", str(skipped[0])]
