"""Gradient accumulation, the core of the course.

One file on purpose, past the ~400 lines of the others: a student reads it top to bottom
(the README sends them here): splitting a batch, its gradients, the one training loop (float32
or mixed precision) and the checks they share.

Glossary (the names used everywhere in the course):

- micro_batch: the small batch that one forward and backward pass sees, an (inputs, targets)
  pair (never a size; its place in its window is its `position`);
- micro_batch_size: the samples in one micro-batch;
- micro_batches: a list of micro-batches, each an (inputs, targets) pair;
- accumulation_steps: how many micro-batches add their gradients before one update (N); a
  list of values of N to try is `accumulation_steps` too (never `ns` or `steps`: a step is
  one optimizer update);
- window: the accumulation_steps micro-batches between two optimizer steps;
- effective_batch: all the samples of one window, the batch the update stands for.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import torch
from torch import nn

from gradacc_lessons.checks import as_choice, as_count, as_counts, as_positive

Gradients = dict[str, torch.Tensor]
NORMALIZATIONS = ("samples", "naive", "tokens", "sum")
# The target of a padding position, which a token loss skips (PyTorch's default).
IGNORE_INDEX = -100
AUTOCAST_DTYPES = (torch.bfloat16, torch.float16)  # what autocast computes in (lesson 6)


def split_batch(
    inputs: torch.Tensor,
    targets: torch.Tensor,
    accumulation_steps: int | None = None,
    *,
    sizes: Sequence[int] | None = None,
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Split a batch into micro-batches: `accumulation_steps` of them, or of the given `sizes`.

    With `accumulation_steps` (N) the sizes differ by at most one; `sizes` gives
    deliberately uneven micro-batches and must add up to the batch size.
    Returns the list of (inputs, targets) micro-batches.

    >>> x, y = torch.zeros(10, 3), torch.zeros(10)
    >>> [len(xb) for xb, yb in split_batch(x, y, 4)]
    [3, 3, 2, 2]
    >>> [len(xb) for xb, yb in split_batch(x, y, sizes=[6, 4])]
    [6, 4]
    """
    size = check_batch(inputs, targets)
    if (accumulation_steps is None) == (sizes is None):
        raise ValueError(
            "give either accumulation_steps (a count) or sizes (a list of micro-batch sizes), "
            f"not both nor neither; got accumulation_steps={accumulation_steps!r}, sizes={sizes!r}"
        )
    if sizes is not None:
        sizes = as_counts("sizes", sizes, fix=f"give micro-batch sizes that add up to {size}")
        if sum(sizes) != size:
            raise ValueError(
                f"sizes must add up to the batch size {size}, got {sizes!r} (sum {sum(sizes)})"
            )
        return list(zip(torch.split(inputs, sizes), torch.split(targets, sizes)))
    accumulation_steps = as_count(
        "accumulation_steps", accumulation_steps, 1, size, f"the batch holds {size} samples"
    )
    return list(
        zip(
            torch.tensor_split(inputs, accumulation_steps),
            torch.tensor_split(targets, accumulation_steps),
        )
    )


def full_batch_gradients(
    model: nn.Module, loss_fn: Callable, inputs: torch.Tensor, targets: torch.Tensor
) -> Gradients:
    """Gradients of the loss of one full batch, as {parameter name: gradient}.

    The model's own `.grad` buffers are left as they were.

    >>> model = torch.nn.Linear(3, 1)
    >>> grads = full_batch_gradients(model, torch.nn.MSELoss(), torch.ones(4, 3), torch.zeros(4, 1))
    >>> sorted(grads)
    ['bias', 'weight']
    """
    check_batch(inputs, targets)
    names, params = _trainable(model)
    with buffers_kept(model):
        loss = scalar_loss(loss_fn, model(inputs), targets)
        grads = torch.autograd.grad(loss, params, allow_unused=True)
    return {
        name: torch.zeros_like(p) if g is None else g.detach().clone()
        for name, p, g in zip(names, params, grads)
    }


def accumulated_gradients(
    model: nn.Module,
    loss_fn: Callable,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    accumulation_steps: int | None = None,
    *,
    sizes: Sequence[int] | None = None,
    normalize: str = "samples",
    ignore_index: int = IGNORE_INDEX,
) -> Gradients:
    """Gradients of the same batch, accumulated in `.grad` over its micro-batches.

    How each micro-batch's loss is weighted before backward() (`normalize`):

    - "samples": the loss is a mean over the micro-batch's samples; weight it by
      its share of the batch's samples. Exact for uneven splits too.
    - "naive": divide every loss by the number of micro-batches (the common bug,
      exact only when every micro-batch has the same size).
    - "tokens": the loss is a mean over the target positions that are not
      `ignore_index` (cross-entropy with padding); weight it by its share of the
      batch's valid targets. Exact against the full batch, however the padding falls.
    - "sum": the loss is a sum over the micro-batch; sums add up as they are,
      so the weight is 1 (the full batch must use the same sum-reduced loss).

    The batch is split into `accumulation_steps` micro-batches, or into micro-batches
    of the given `sizes` (see `split_batch`). The model is left as it was: its `.grad`
    buffers and BatchNorm's running statistics are restored afterwards.

    >>> model = torch.nn.Linear(3, 1)
    >>> x, y = torch.randn(8, 3), torch.randn(8, 1)
    >>> acc = accumulated_gradients(model, torch.nn.MSELoss(), x, y, accumulation_steps=4)
    >>> full = full_batch_gradients(model, torch.nn.MSELoss(), x, y)
    >>> torch.allclose(acc["weight"], full["weight"], atol=1e-6)
    True
    """
    as_choice("normalize", normalize, NORMALIZATIONS)
    micro_batches = split_batch(inputs, targets, accumulation_steps, sizes=sizes)
    weights = _micro_batch_weights(micro_batches, normalize, ignore_index)
    names, params = _trainable(model)
    saved = [p.grad for p in params]
    for p in params:
        p.grad = None
    try:
        with buffers_kept(model):
            for (x, y), weight in zip(micro_batches, weights):
                if weight == 0.0:
                    continue  # only padding: its mean loss is 0/0, and it adds nothing
                loss = scalar_loss(loss_fn, model(x), y)
                # Gradients add up in .grad: a SUM over micro-batches. Each micro-batch's
                # loss is a mean over its own samples (or tokens), so weigh it by its share
                # of the batch to make the sum the mean over the whole batch.
                (loss * weight).backward()
        return {
            name: torch.zeros_like(p) if p.grad is None else p.grad.detach().clone()
            for name, p in zip(names, params)
        }
    finally:
        for p, g in zip(params, saved):
            p.grad = g


def count_tokens(targets: torch.Tensor, ignore_index: int = IGNORE_INDEX) -> int:
    """How many target positions a loss with `ignore_index` averages over.

    >>> count_tokens(torch.tensor([[5, 2, -100], [7, -100, -100]]))
    3
    """
    as_count("ignore_index", ignore_index, minimum=-(2**63), fix="PyTorch's default is -100")
    if not isinstance(targets, torch.Tensor):
        raise ValueError(f"targets must be a tensor of class indices, got {type(targets).__name__}")
    if targets.is_floating_point() or targets.is_complex():
        raise ValueError(
            f'normalize="tokens" needs integer class targets (padding = ignore_index), '
            f'got targets of dtype {targets.dtype}; use normalize="samples" for other losses'
        )
    return int((targets != ignore_index).sum().item())


def token_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Cross-entropy averaged over the real tokens (targets not IGNORE_INDEX) of a batch.

    `logits` has shape (batch, length, vocab), `targets` (batch, length).

    >>> token_loss(torch.zeros(1, 2, 4), torch.tensor([[1, -100]])).item() == torch.log(
    ...     torch.tensor(4.0)).item()
    True
    """
    if not (isinstance(logits, torch.Tensor) and isinstance(targets, torch.Tensor)):
        raise ValueError("logits and targets must be tensors")
    if logits.dim() != 3 or tuple(targets.shape) != tuple(logits.shape[:2]):
        raise ValueError(
            f"logits must have shape (batch, length, vocab) and targets (batch, length), got "
            f"{tuple(logits.shape)} and {tuple(targets.shape)}"
        )
    return torch.nn.functional.cross_entropy(
        logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE_INDEX
    )


def _micro_batch_weights(micro_batches: list, normalize: str, ignore_index: int) -> list[float]:
    """Python floats, so that a float64 loss stays float64 (an int-tensor ratio is float32)."""
    if normalize == "naive":
        return [1.0 / len(micro_batches)] * len(micro_batches)
    if normalize == "sum":
        return [1.0] * len(micro_batches)
    if normalize == "samples":
        sizes = [len(x) for x, _ in micro_batches]
    else:
        sizes = [count_tokens(y, ignore_index) for _, y in micro_batches]
        if sum(sizes) == 0:
            raise ValueError(
                f"every target equals ignore_index={ignore_index}: there is no token to "
                f"average over; check the padding value of the targets"
            )
    total = sum(sizes)
    return [n / total for n in sizes]


@dataclass(frozen=True)
class Event:
    """One thing that happened in the training loop, for drawing its timeline."""

    # "zero_grad", "forward", "backward", "clip", "step" or "scheduler"; the mixed-precision
    # loop of lesson 6 adds "unscale", "update" and "skipped" (a step the GradScaler skipped)
    kind: str
    window: int  # which window (0, 1, ...); the first zero_grad belongs to window 0
    position: int | None = None  # the micro-batch's place in its window, for forward/backward


def train_accumulated(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    loss_fn: Callable,
    micro_batches: Iterable[tuple[torch.Tensor, torch.Tensor]],
    accumulation_steps: int,
    *,
    scheduler=None,
    max_grad_norm: float | None = None,
    on_event: Callable[[Event], None] | None = None,
    dtype: torch.dtype | None = None,
    scaler: torch.amp.GradScaler | None = None,
) -> list[float]:
    """Train on micro-batches, stepping once per window of `accumulation_steps`.

    Gradients are cleared before the first micro-batch, then after every step.
    Each micro-batch's mean loss is weighted by its share of the window's
    samples, so a window is the same update as one batch of all its samples,
    a shorter last window included. Clipping (when `max_grad_norm` is given)
    happens once per window, after accumulation; `scheduler.step()` once per
    optimizer step. Returns the mean loss of each effective batch.

    Mixed precision (lesson 6) is two options of the same loop: `dtype` runs each
    forward under `torch.autocast` in bfloat16 or float16 (None: float32), and a
    GradScaler `scaler` scales each backward, then once per window unscales (before
    clipping), steps and updates. A step the scaler skips (inf/NaN gradients) emits
    Event("skipped") and does not step the `scheduler`: the schedule counts updates.

    >>> model = torch.nn.Linear(2, 1)
    >>> opt = torch.optim.SGD(model.parameters(), lr=0.1)
    >>> micro_batches = [(torch.ones(4, 2), torch.zeros(4, 1))] * 5
    >>> len(train_accumulated(model, opt, torch.nn.MSELoss(), micro_batches, accumulation_steps=2))
    3
    """
    accumulation_steps = as_count(
        "accumulation_steps", accumulation_steps, fix="1: no accumulation"
    )
    if max_grad_norm is not None:
        # A negative norm would flip every gradient: gradient ascent.
        max_grad_norm = as_positive("max_grad_norm", max_grad_norm, "or None for no clipping")
    check_autocast_dtype(dtype, none_allowed=True)
    if scaler is not None and not isinstance(scaler, torch.amp.GradScaler):
        raise ValueError(f"scaler must be a torch.amp.GradScaler or None, got {scaler!r}")
    micro_batches = _non_empty("micro_batches", micro_batches)
    emit = on_event or (lambda event: None)
    _clear_gradients(model, optimizer)  # whatever an earlier run left in .grad
    emit(Event("zero_grad", 0))
    losses = []
    for index, window in enumerate(windows(micro_batches, accumulation_steps)):
        losses.append(_accumulate_window(model, loss_fn, window, index, dtype, scaler, emit))
        stepped = _step(optimizer, scaler, max_grad_norm, index, emit)
        if scheduler is not None and stepped:
            scheduler.step()
            emit(Event("scheduler", index))
        _clear_gradients(model, optimizer)
        emit(Event("zero_grad", index))
    return losses


def _accumulate_window(model, loss_fn, window, index: int, dtype, scaler, emit) -> float:
    """Forward and backward each micro-batch of a window; returns the window's mean loss."""
    window_samples = sum(len(x) for x, _ in window)
    window_loss = 0.0
    for position, (x, y) in enumerate(window):
        loss = forward_loss(model, loss_fn, x, y, dtype)
        emit(Event("forward", index, position))
        window_loss += loss.item() * len(x) / window_samples
        weighted = loss * (len(x) / window_samples)
        # Scaled gradients add up in .grad; they stay scaled until the window ends.
        (scaler.scale(weighted) if scaler is not None else weighted).backward()
        # Nothing of this micro-batch outlives its backward: the memory instruments
        # (memory/measured.py, memory/phases.py) listen to this loop's events.
        del loss, weighted
        emit(Event("backward", index, position))
    return window_loss


def _step(optimizer, scaler, max_grad_norm, index: int, emit) -> bool:
    """Unscale, clip, step and update once per window; True if optimizer.step() really ran."""
    if scaler is not None:
        scaler.unscale_(optimizer)  # once per window: .grad now holds the true gradients
        emit(Event("unscale", index))
    if max_grad_norm is not None:  # after unscaling, or the norm is the scaled one
        params = [p for group in optimizer.param_groups for p in group["params"]]
        torch.nn.utils.clip_grad_norm_([p for p in params if p.grad is not None], max_grad_norm)
        emit(Event("clip", index))
    if scaler is None:
        optimizer.step()
        emit(Event("step", index))
        return True
    scale = scaler.get_scale()
    scaler.step(optimizer)  # skips optimizer.step() if a gradient is inf or NaN
    emit(Event("step", index))
    scaler.update()  # once per window: lowers the scale after a skip, raises it slowly
    emit(Event("update", index))
    stepped = scaler.get_scale() >= scale  # the scale only drops after a skipped step
    if not stepped:
        emit(Event("skipped", index))
    return stepped


def forward_loss(
    model: nn.Module,
    loss_fn: Callable,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    dtype: torch.dtype | None = None,
) -> torch.Tensor:
    """The scalar loss of one micro-batch; the forward under autocast in `dtype` if given.

    Under autocast the loss itself is computed in float32, as autocast would do.

    >>> model = torch.nn.Linear(2, 1)
    >>> forward_loss(model, torch.nn.MSELoss(), torch.ones(3, 2), torch.zeros(3, 1),
    ...              torch.bfloat16).dtype
    torch.float32
    """
    check_autocast_dtype(dtype, none_allowed=True)
    if dtype is None:
        return scalar_loss(loss_fn, model(inputs), targets)
    with torch.autocast(device_type=inputs.device.type, dtype=dtype):
        outputs = model(inputs)
    return scalar_loss(loss_fn, outputs.float(), targets)


def check_autocast_dtype(dtype, none_allowed: bool = False) -> None:
    """A ValueError unless `dtype` is one autocast computes in (or None, if allowed).

    >>> check_autocast_dtype(torch.float16)
    """
    if dtype not in AUTOCAST_DTYPES and not (none_allowed and dtype is None):
        allowed = (*AUTOCAST_DTYPES, None) if none_allowed else AUTOCAST_DTYPES
        raise ValueError(f"dtype must be one of {allowed}, got {dtype!r}")


def windows(micro_batches: Iterable, accumulation_steps: int):
    """Yield lists of `accumulation_steps` consecutive micro-batches; the last may be shorter.

    >>> [len(w) for w in windows(range(5), 2)]
    [2, 2, 1]
    """
    accumulation_steps = as_count("accumulation_steps", accumulation_steps)
    return _windows(micro_batches, accumulation_steps)


def _windows(micro_batches: Iterable, accumulation_steps: int) -> Iterator[list]:
    window = []
    for item in micro_batches:
        window.append(item)
        if len(window) == accumulation_steps:
            yield window
            window = []
    if window:
        yield window


def merge_windows(
    micro_batches: Iterable[tuple[torch.Tensor, torch.Tensor]], accumulation_steps: int
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Each window's micro-batches concatenated into the one batch it stands for.

    >>> micro_batches = [(torch.zeros(2, 3), torch.zeros(2))] * 5
    >>> [len(x) for x, y in merge_windows(micro_batches, 2)]
    [4, 4, 2]
    """
    micro_batches = _non_empty("micro_batches", micro_batches)
    return [
        (torch.cat([x for x, _ in window]), torch.cat([y for _, y in window]))
        for window in windows(micro_batches, accumulation_steps)
    ]


def check_batch(
    inputs: torch.Tensor, targets: torch.Tensor, names: tuple[str, str] = ("inputs", "targets")
) -> int:
    """The number of samples of a batch, checked: tensors with the same, non-zero, length.

    >>> check_batch(torch.zeros(4, 3), torch.zeros(4))
    4
    """
    for name, value in zip(names, (inputs, targets)):
        if not isinstance(value, torch.Tensor) or value.dim() == 0:
            raise ValueError(f"{name} must be a tensor of samples (one per row), got {value!r}")
    if len(inputs) != len(targets) or len(inputs) == 0:
        raise ValueError(
            f"{names[0]} and {names[1]} must hold the same number of samples (at least 1), "
            f"got {len(inputs)} and {len(targets)}"
        )
    return len(inputs)


def _non_empty(name: str, micro_batches: Iterable) -> list:
    micro_batches = list(micro_batches)
    if not micro_batches:
        raise ValueError(f"{name} must hold at least one (inputs, targets) pair, got none")
    return micro_batches


@contextlib.contextmanager
def buffers_kept(model: nn.Module) -> Iterator[None]:
    """Run the block, then put the model's buffers (BatchNorm's running statistics) back.

    A train-mode forward pass updates BatchNorm's running mean and variance; a function
    that only measures gradients must not train the student's model on the side.

    >>> model = torch.nn.BatchNorm1d(2)
    >>> with buffers_kept(model):
    ...     _ = model(torch.randn(4, 2))
    >>> model.running_mean.tolist(), int(model.num_batches_tracked)
    ([0.0, 0.0], 0)
    """
    if not isinstance(model, nn.Module):
        raise ValueError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    saved = [(buffer, buffer.clone()) for buffer in model.buffers()]
    try:
        yield
    finally:
        with torch.no_grad():
            for buffer, value in saved:
                buffer.copy_(value)


def _clear_gradients(model: nn.Module, optimizer: torch.optim.Optimizer) -> None:
    # optimizer.zero_grad() is the usual call; model.zero_grad() also clears
    # parameters the optimizer does not own, so nothing stale reaches clipping.
    optimizer.zero_grad(set_to_none=True)
    model.zero_grad(set_to_none=True)


def _trainable(model: nn.Module) -> tuple[list[str], list[nn.Parameter]]:
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    if not named:
        raise ValueError("the model has no parameter that requires grad: nothing to differentiate")
    names, params = zip(*named)
    return list(names), list(params)


def scalar_loss(loss_fn: Callable, outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """`loss_fn(outputs, targets)`, checked to be a scalar (a mean over the micro-batch).

    >>> scalar_loss(torch.nn.MSELoss(), torch.ones(2), torch.zeros(2)).item()
    1.0
    """
    if not callable(loss_fn):
        raise ValueError(f"loss_fn must be a function of (outputs, targets), got {loss_fn!r}")
    loss = loss_fn(outputs, targets)
    if not isinstance(loss, torch.Tensor) or loss.dim() != 0:
        shape = tuple(loss.shape) if isinstance(loss, torch.Tensor) else type(loss).__name__
        raise ValueError(
            f"loss_fn must return a scalar (a mean over the micro-batch), got {shape}; "
            f'use reduction="mean" or call .mean() on the per-sample losses'
        )
    return loss
