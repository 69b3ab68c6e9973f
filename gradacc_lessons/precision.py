"""Mixed precision with accumulation: autocast for the forward, a GradScaler for float16.

bfloat16 keeps float32's exponent range, so small gradients survive and no
scaling is needed (the CPU's choice). float16 does not: its gradients can
underflow to zero, so a GradScaler multiplies the loss by a large factor before
backward and divides the gradients back ("unscales") before the step. With
accumulation the scaled gradients of a window add up in .grad; they are
unscaled once, after the last micro-batch, and before clipping, because
clipping must see the true gradient norm. step() and update() also run once
per window.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import torch
from torch import nn

from gradacc_lessons.accumulate import Event, buffers_kept, split_batch, windows
from gradacc_lessons.checks import as_count, as_positive

DTYPES = (torch.bfloat16, torch.float16)  # what autocast computes in


def precision_for(device: torch.device | str) -> tuple[torch.dtype, bool]:
    """(autocast dtype, whether a GradScaler is needed) for a device.

    >>> precision_for("cpu")
    (torch.bfloat16, False)
    >>> precision_for("cuda")
    (torch.float16, True)
    """
    try:
        kind = torch.device(device).type
    except (RuntimeError, TypeError):
        raise ValueError(
            f'device must be a torch.device or a name like "cpu", got {device!r}'
        ) from None
    return (torch.float16, True) if kind == "cuda" else (torch.bfloat16, False)


def mixed_precision_gradients(
    model: nn.Module,
    loss_fn: Callable,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    accumulation_steps: int = 1,
    dtype: torch.dtype | None = torch.bfloat16,
) -> dict[str, torch.Tensor]:
    """Gradients of the batch's mean loss, accumulated over N micro-batches under autocast.

    dtype=None runs without autocast (the float32 reference); accumulation_steps=1
    is the full batch. The model's .grad buffers are left as they were.

    >>> model = torch.nn.Linear(4, 2)
    >>> x, y = torch.randn(8, 4), torch.tensor([0, 1] * 4)
    >>> g = mixed_precision_gradients(model, torch.nn.functional.cross_entropy, x, y, 2)
    >>> g["weight"].dtype
    torch.float32
    """
    _check_dtype(dtype, none_allowed=True)
    micro_batches = split_batch(inputs, targets, accumulation_steps)
    params = dict(model.named_parameters())
    grads = {name: torch.zeros_like(p) for name, p in params.items()}
    with buffers_kept(model):
        for x, y in micro_batches:
            loss = _loss(model, loss_fn, x, y, dtype) * (len(x) / len(inputs))
            for name, g in zip(params, torch.autograd.grad(loss, list(params.values()))):
                grads[name] += g  # the sum over micro-batches that .grad would hold
    return grads


def _check_dtype(dtype, none_allowed: bool = False) -> None:
    if dtype not in DTYPES and not (none_allowed and dtype is None):
        allowed = (*DTYPES, None) if none_allowed else DTYPES
        raise ValueError(f"dtype must be one of {allowed}, got {dtype!r}")


def _loss(model, loss_fn, x, y, dtype):
    if dtype is None:
        return loss_fn(model(x), y)
    with torch.autocast(device_type=x.device.type, dtype=dtype):
        outputs = model(x)
    return loss_fn(outputs.float(), y)  # the loss itself in float32, as autocast would do


def train_mixed_precision(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    loss_fn: Callable,
    micro_batches: Iterable[tuple[torch.Tensor, torch.Tensor]],
    accumulation_steps: int,
    *,
    dtype: torch.dtype = torch.bfloat16,
    scaler: torch.amp.GradScaler | None = None,
    max_grad_norm: float | None = None,
    on_event: Callable[[Event], None] | None = None,
) -> list[float]:
    """Accumulate under autocast; with a scaler: scale each backward, and once per window
    unscale, clip, step and update. Returns the mean loss of each window.

    When the scaler finds inf/NaN gradients, it skips optimizer.step(); the loop
    then emits Event("skipped") after "step".

    >>> model = torch.nn.Linear(2, 2)
    >>> opt = torch.optim.SGD(model.parameters(), lr=0.1)
    >>> micro_batches = [(torch.ones(4, 2), torch.zeros(4, dtype=torch.long))] * 4
    >>> len(train_mixed_precision(model, opt, torch.nn.functional.cross_entropy, micro_batches, 2))
    2
    """
    accumulation_steps = as_count("accumulation_steps", accumulation_steps)
    _check_dtype(dtype)
    if max_grad_norm is not None:
        max_grad_norm = as_positive("max_grad_norm", max_grad_norm, "or None for no clipping")
    micro_batches = list(micro_batches)
    if not micro_batches:
        raise ValueError("micro_batches must hold at least one (inputs, targets) pair, got none")
    emit = on_event or (lambda event: None)
    optimizer.zero_grad(set_to_none=True)
    emit(Event("zero_grad", 0))
    losses = []
    for index, window in enumerate(windows(micro_batches, accumulation_steps)):
        samples = sum(len(x) for x, _ in window)
        window_loss = 0.0
        for i, (x, y) in enumerate(window):
            loss = _loss(model, loss_fn, x, y, dtype)
            emit(Event("forward", index, i))
            weighted = loss * (len(x) / samples)
            # Scaled gradients add up in .grad; they stay scaled until the window ends.
            (scaler.scale(weighted) if scaler else weighted).backward()
            emit(Event("backward", index, i))
            window_loss += loss.item() * len(x) / samples
        _finish_window(model, optimizer, scaler, max_grad_norm, index, emit)
        losses.append(window_loss)
    return losses


def _finish_window(model, optimizer, scaler, max_grad_norm, window, emit) -> None:
    if scaler is not None:
        scaler.unscale_(optimizer)  # once per window: .grad now holds the true gradients
        emit(Event("unscale", window))
    if max_grad_norm is not None:  # after unscaling, or the norm is the scaled one
        params = [p for group in optimizer.param_groups for p in group["params"]]
        torch.nn.utils.clip_grad_norm_([p for p in params if p.grad is not None], max_grad_norm)
        emit(Event("clip", window))
    if scaler is None:
        optimizer.step()
        emit(Event("step", window))
    else:
        scale = scaler.get_scale()
        scaler.step(optimizer)  # skips optimizer.step() if a gradient is inf or NaN
        emit(Event("step", window))
        scaler.update()  # once per window: lowers the scale after a skip, raises it slowly
        emit(Event("update", window))
        if scaler.get_scale() < scale:
            emit(Event("skipped", window))
    optimizer.zero_grad(set_to_none=True)
    model.zero_grad(set_to_none=True)
    emit(Event("zero_grad", window))
