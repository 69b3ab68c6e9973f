"""Mixed precision with accumulation: autocast for the forward, a GradScaler for float16.

bfloat16 keeps float32's exponent range, so small gradients survive and no
scaling is needed: the choice wherever it runs (the CPU, recent GPUs). float16
does not: its gradients can underflow to zero, so a GradScaler multiplies the
loss by a large factor before backward and divides the gradients back
("unscales") before the step. With accumulation the scaled gradients of a window
add up in .grad; they are unscaled once, after the last micro-batch, and before
clipping, because clipping must see the true gradient norm. step() and update()
also run once per window, and so does the scheduler, only after a step that
happened.

Where the window adds up matters too: autocast keeps float32 parameters, so
`.grad` is float32. A model whose parameters are themselves bfloat16 adds its
window in a bfloat16 `.grad`, which rounds every sum (`accumulation_dtype_errors`
measures it); `float32_gradients` adds the window in float32 buffers instead.
"""

from __future__ import annotations

import contextlib
import copy
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import torch
from torch import nn

from gradacc_lessons.accumulate import (
    AUTOCAST_DTYPES,
    Event,
    buffers_kept,
    check_autocast_dtype,
    forward_loss,
    split_batch,
    train_accumulated,
    windows,
)
from gradacc_lessons.checks import as_count, as_counts, as_positive
from gradacc_lessons.compare import relative_error
from gradacc_lessons.display import Result, Table

DTYPES = AUTOCAST_DTYPES  # what autocast computes in


def precision_for(device: torch.device | str) -> tuple[torch.dtype, bool]:
    """(autocast dtype, whether a GradScaler is needed) for a device.

    bfloat16 wherever it runs: the CPU, and CUDA GPUs that support it (NVIDIA's
    Ampere generation and later). It keeps float32's range, so no scaler is needed.
    float16 with a GradScaler only on a CUDA GPU without bfloat16 (a T4, a V100).

    >>> precision_for("cpu")
    (torch.bfloat16, False)
    """
    try:
        device = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(
            f'device must be a torch.device or a name like "cpu", got {device!r}'
        ) from None
    if device.type == "cuda" and not _gpu_computes_bfloat16(device):
        return torch.float16, True
    return torch.bfloat16, False


def _gpu_computes_bfloat16(device: torch.device) -> bool:
    if not torch.cuda.is_available():
        raise ValueError(f"device is {device}, but this machine has no CUDA GPU; pass 'cpu'")
    if torch.version.hip:  # AMD GPUs compute in bfloat16
        return True
    # NVIDIA GPUs compute in bfloat16 from the Ampere generation (compute capability 8) on;
    # older ones only emulate it, slowly.
    return torch.cuda.get_device_capability(device)[0] >= 8


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
    check_autocast_dtype(dtype, none_allowed=True)
    micro_batches = split_batch(inputs, targets, accumulation_steps)
    params = dict(model.named_parameters())
    grads = {name: torch.zeros_like(p) for name, p in params.items()}
    with buffers_kept(model):
        for x, y in micro_batches:
            loss = forward_loss(model, loss_fn, x, y, dtype) * (len(x) / len(inputs))
            for name, g in zip(params, torch.autograd.grad(loss, list(params.values()))):
                grads[name] += g  # the sum over micro-batches that .grad would hold
    return grads


@contextlib.contextmanager
def float32_gradients(model: nn.Module) -> Iterator[dict[str, torch.Tensor]]:
    """Inside the block, each backward adds the gradients to float32 buffers, not to `.grad`.

    For a model whose parameters are 16-bit: `.grad` would add up the window in 16 bits.
    A hook runs right after a backward has written a parameter's `.grad`; it adds that
    gradient to the parameter's float32 buffer and clears `.grad`, so the next backward
    writes a fresh one instead of adding to it. Yields {parameter name: float32 buffer}.

    >>> model = torch.nn.Linear(2, 1).to(torch.bfloat16)
    >>> with float32_gradients(model) as buffers:
    ...     for _ in range(3):
    ...         model(torch.ones(1, 2, dtype=torch.bfloat16)).sum().backward()
    >>> buffers["bias"], model.bias.grad
    (tensor([3.]), None)
    """
    if not isinstance(model, nn.Module):
        raise ValueError(f"model must be a torch.nn.Module, got {model!r}")
    named = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
    buffers = {name: torch.zeros_like(p, dtype=torch.float32) for name, p in named}

    def add_to_buffer(parameter: nn.Parameter, buffer: torch.Tensor) -> None:
        buffer += parameter.grad.float()  # the sum happens in float32
        parameter.grad = None  # so the next backward does not add in 16 bits

    handles = [
        p.register_post_accumulate_grad_hook(lambda p, b=buffers[name]: add_to_buffer(p, b))
        for name, p in named
    ]
    try:
        yield buffers
    finally:
        for handle in handles:
            handle.remove()


@dataclass(frozen=True, repr=False)
class DtypeErrors(Result):
    """For each N, the relative error of a window's gradient added up in a 16-bit `.grad`,
    and in float32 buffers, against the same micro-batch gradients added in float64."""

    accumulation_steps: list[int]
    dtype: str  # the 16-bit dtype of the parameters and of .grad
    grad_errors: list[float]  # added up by autograd in the 16-bit .grad
    buffer_errors: list[float]  # added up in float32 buffers

    def table(self) -> Table:
        rows = [
            (n, f"{grad:.2%}", f"{buffer:.1e}")
            for n, grad, buffer in zip(
                self.accumulation_steps, self.grad_errors, self.buffer_errors
            )
        ]
        headers = ("N", f"window added in a {self.dtype} .grad", "in float32 buffers")
        return Table(headers, rows, "error of the window's gradient")


def accumulation_dtype_errors(
    model: nn.Module,
    loss_fn: Callable,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    accumulation_steps: Sequence[int],
    dtype: torch.dtype = torch.bfloat16,
) -> DtypeErrors:
    """The error that adding up a window in a `dtype` `.grad` adds, for each N in
    `accumulation_steps`.

    A copy of the model is cast to `dtype` (parameters and gradients in 16 bits, as in
    many LLM fine-tunings). For each N the batch runs as N micro-batches; their gradients
    are added up two ways: by autograd in the 16-bit `.grad`, and in float32 buffers
    (`float32_gradients`). Each sum is compared (`relative_error`) with the exact sum
    of the same micro-batch gradients, added in float64.

    >>> model = torch.nn.Linear(8, 3)
    >>> x, y = torch.randn(16, 8), torch.randint(3, (16,))
    >>> errors = accumulation_dtype_errors(model, torch.nn.functional.cross_entropy, x, y, [1, 16])
    >>> errors.grad_errors[0], errors.grad_errors[1] > errors.buffer_errors[1]
    (0.0, True)
    """
    check_autocast_dtype(dtype)
    accumulation_steps = as_counts("accumulation_steps", accumulation_steps)
    grad_errors, buffer_errors = [], []
    for n in accumulation_steps:
        low = copy.deepcopy(model).to(dtype)
        chunks = split_batch(inputs, targets, n)
        arrived, summed = _sum_in_grad(low, loss_fn, chunks, len(inputs), dtype)
        with float32_gradients(low) as buffers:
            _backward_all(low, loss_fn, chunks, len(inputs), dtype)
        exact = {name: torch.stack(parts).double().sum(0) for name, parts in arrived.items()}
        grad_errors.append(relative_error(exact, summed))
        buffer_errors.append(relative_error(exact, buffers))
    return DtypeErrors(
        list(accumulation_steps), str(dtype).removeprefix("torch."), grad_errors, buffer_errors
    )


def _backward_all(model, loss_fn, chunks, batch: int, dtype) -> None:
    for x, y in chunks:
        # Weighted by its share of the batch, as lesson 1 taught.
        loss = loss_fn(model(x.to(dtype)).float(), y) * (len(x) / batch)
        loss.backward()


def _sum_in_grad(model, loss_fn, chunks, batch: int, dtype):
    """Run the window with .grad adding up; record each micro-batch gradient as it arrives."""
    named = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
    arrived: dict[str, list[torch.Tensor]] = {name: [] for name, _ in named}
    handles = [p.register_hook(lambda g, name=name: arrived[name].append(g.detach().clone()))
               for name, p in named]  # fmt: skip
    try:
        _backward_all(model, loss_fn, chunks, batch, dtype)
    finally:
        for handle in handles:
            handle.remove()
    summed = {name: p.grad.detach().clone() for name, p in named}
    model.zero_grad(set_to_none=True)
    return arrived, summed


class AutocastModel(nn.Module):
    """`model` run under `torch.autocast`, so that lesson 4's memory tools can measure it.

    >>> wrapped = AutocastModel(torch.nn.Linear(4, 2), torch.bfloat16)
    >>> wrapped(torch.zeros(3, 4)).dtype  # outputs come back in float32, for the loss
    torch.float32
    """

    def __init__(self, model: nn.Module, dtype: torch.dtype = torch.bfloat16):
        super().__init__()
        self.model = model
        self.dtype = dtype

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        with torch.autocast(device_type=inputs.device.type, dtype=self.dtype):
            outputs = self.model(inputs)
        return outputs.float()


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
    scheduler=None,
    on_event: Callable[[Event], None] | None = None,
) -> list[float]:
    """The course's one loop, `train_accumulated`, under autocast in `dtype` (bfloat16 or
    float16); with a scaler: scale each backward, and once per window unscale, clip, step
    and update. Returns the mean loss of each window.

    When the scaler finds inf/NaN gradients, it skips optimizer.step(); the loop
    then emits Event("skipped") after "update", and does not step the `scheduler`:
    the schedule counts the updates that happened.

    >>> model = torch.nn.Linear(2, 2)
    >>> opt = torch.optim.SGD(model.parameters(), lr=0.1)
    >>> micro_batches = [(torch.ones(4, 2), torch.zeros(4, dtype=torch.long))] * 4
    >>> len(train_mixed_precision(model, opt, torch.nn.functional.cross_entropy, micro_batches, 2))
    2
    """
    check_autocast_dtype(dtype)
    return train_accumulated(
        model, optimizer, loss_fn, micro_batches, accumulation_steps,
        scheduler=scheduler, max_grad_norm=max_grad_norm, on_event=on_event,
        dtype=dtype, scaler=scaler,
    )  # fmt: skip


@dataclass(frozen=True, repr=False)
class SkippedSteps(Result):
    """Per window of a float16 run: whether the GradScaler skipped the step, and the learning
    rate (a fraction of the peak) the next step uses when the scheduler steps after every
    window and when it steps after updates only."""

    skipped: list[bool]
    lr_every_window: list[float]
    lr_after_updates: list[float]

    def table(self) -> Table:
        rows = [
            (window, skipped, f"{every:.3f}", f"{after:.3f}")
            for window, (skipped, every, after) in enumerate(
                zip(self.skipped, self.lr_every_window, self.lr_after_updates)
            )
        ]
        headers = ("window", "step skipped", "lr, scheduler every window", "after updates only")
        return Table(headers, rows)


def compute_skipped_steps(
    model: nn.Module,
    loss_fn: Callable,
    micro_batches: Sequence[tuple[torch.Tensor, torch.Tensor]],
    accumulation_steps: int,
    init_scale: float = 2.0**24,
    warmup_steps: int = 8,
) -> SkippedSteps:
    """float16 windows whose first steps the GradScaler skips, with a linear warm-up schedule.

    Trains two copies of `model` (SGD): one steps its scheduler after every window
    (the common loop), one through `train_mixed_precision(scheduler=...)`, which steps
    it only after an update. Returns, per window: whether the step was skipped, and the
    learning rate (as a fraction of the peak) that each copy's next step would use.

    >>> mbs = [(torch.randn(8, 4), torch.randint(2, (8,)))] * 8
    >>> result = compute_skipped_steps(torch.nn.Linear(4, 2), torch.nn.functional.cross_entropy,
    ...                                mbs, 2, init_scale=2.0**100)
    >>> result.skipped
    [True, True, True, True]
    """
    accumulation_steps = as_count("accumulation_steps", accumulation_steps)
    init_scale = as_positive("init_scale", init_scale, "GradScaler's first scale, e.g. 2**16")
    warmup_steps = as_count("warmup_steps", warmup_steps)
    if not micro_batches:
        raise ValueError("micro_batches must hold at least one (inputs, targets) pair, got none")
    result: dict[str, list] = {"skipped": [], "every window": [], "after updates only": []}
    for label in ("every window", "after updates only"):
        copy_ = copy.deepcopy(model)
        optimizer = torch.optim.SGD(copy_.parameters(), lr=1.0)
        scheduler = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda step: min(1.0, (step + 1) / warmup_steps)
        )
        scaler = torch.amp.GradScaler(_device_type(copy_), init_scale=init_scale)
        for window in windows(micro_batches, accumulation_steps):
            events: list[Event] = []
            train_mixed_precision(
                copy_, optimizer, loss_fn, window, accumulation_steps, dtype=torch.float16,
                scaler=scaler, on_event=events.append,
                scheduler=scheduler if label == "after updates only" else None,
            )  # fmt: skip
            if label == "every window":
                with warnings.catch_warnings():  # PyTorch warns: a scheduler step, no update
                    warnings.simplefilter("ignore", UserWarning)
                    scheduler.step()
                result["skipped"].append(any(e.kind == "skipped" for e in events))
            result[label].append(optimizer.param_groups[0]["lr"])
    return SkippedSteps(result["skipped"], result["every window"], result["after updates only"])


def _device_type(model: nn.Module) -> str:
    return next(model.parameters()).device.type
