"""Peak memory of one training step, measured on any device, with its breakdown.

(The analytic model is in `memory.analytic`, the peak of each phase in `memory.phases`.)

Four things share the memory of training:

- parameters: the model's weights;
- gradients: one `.grad` per trainable parameter, alive from the first backward to
  `zero_grad`;
- optimizer state: what the optimizer keeps between steps (Adam: two moments per
  weight and a step count per tensor; SGD with momentum: one buffer; plain SGD: none);
- activations: what autograd saves in the forward pass to compute the backward pass.
  Only these grow with the micro-batch, and only these shrink with accumulation.

How the peak is measured:

- on CUDA, the caching allocator's own figures (`torch.cuda.max_memory_allocated`);
- on the CPU, which has no allocator statistics, the profiler's allocation events
  (`torch.autograd.profiler.profile(profile_memory=True)`): every allocation and free inside the
  training step, added up in order; their running sum's maximum is the peak. It is
  deterministic and sees only this step, not what else the process holds.

Activations are counted everywhere the same way, by the tensors autograd saves
(`torch.autograd.graph.saved_tensors_hooks`): de-duplicated, parameters left out,
and counted as `numel() * element_size()`, so a micro-batch (a view of the batch)
counts for its own samples, not for the whole batch it is cut from.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from gradacc_lessons.accumulate import (
    Event,
    accumulated_gradients,
    check_batch,
    split_batch,
    train_accumulated,
)
from gradacc_lessons.checks import as_count, as_counts, as_positive
from gradacc_lessons.display import Result, Table
from gradacc_lessons.memory.instruments import _peak_tracker, _SavedTensorCounter

MiB = 2**20
GiB = 2**30
# A model's parameter count is decimal (7e9), so its parts are counted here in GB = 1e9 bytes.
# Memory chips are binary: a GPU sold as "80GB" (A100, H100) holds 80 GiB = 85.9 GB.
GB = 10**9
LABELS = {  # the parts of the peak, and their names in tables and plots
    "parameter_bytes": "parameters",
    "gradient_bytes": "gradients",
    "optimizer_bytes": "optimizer state",
    "activation_bytes": "activations",
}
PARTS = tuple(LABELS)
ANALYTIC_METHOD = "analytic: parameters + gradients + optimizer state + activations per sample × b"


@dataclass(frozen=True, repr=False)
class MemoryReport(Result):
    """Peak memory of one effective batch and what it is made of, in bytes."""

    peak_bytes: int
    parameter_bytes: int
    gradient_bytes: int
    optimizer_bytes: int
    activation_bytes: int  # saved for backward by the largest micro-batch
    device: str
    method: str
    micro_batch_size: int  # the largest micro-batch
    accumulation_steps: int = 1

    @property
    def floor_bytes(self) -> int:
        """Parameters + gradients + optimizer state: what no micro-batch size removes."""
        return self.parameter_bytes + self.gradient_bytes + self.optimizer_bytes

    @property
    def other_bytes(self) -> int:
        """What the peak holds beyond the four parts: temporaries of backward and the step."""
        return max(0, self.peak_bytes - self.floor_bytes - self.activation_bytes)

    def table(self) -> Table:
        rows = [("peak", self.peak_bytes)]
        rows += [(label, getattr(self, name)) for name, label in LABELS.items()]
        rows.append(("other (temporaries)", self.other_bytes))
        cells = [(part, f"{value:,}", format_bytes(value)) for part, value in rows]
        title = (
            f"memory of one effective batch: {self.accumulation_steps} × micro-batch ≤ "
            f"{self.micro_batch_size} on {self.device} ({self.method})"
        )
        return Table(("part", "bytes", "size"), cells, title)


def measure_training_memory(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    loss_fn: Callable,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    accumulation_steps: int = 1,
) -> MemoryReport:
    """Measure the peak memory of one training step on `inputs` split into `accumulation_steps`.

    The step copies each micro-batch in (as a data loader would hand it over), runs its
    forward and backward, then `optimizer.step()`. The peak comes from the CUDA caching
    allocator on a GPU and from the profiler's allocation events on the CPU (see the
    module's docstring); the batch you pass in, held before the step, is not counted.

    It runs on deep copies of the model and the optimizer, under a forked random state:
    your model, its gradients, the optimizer's state and the random stream are left as
    they were (the copies need room for a second model and optimizer). The step is a
    steady one: an optimizer without state first takes a step with zero gradients on
    the copy, because from the second step of training on its state lives beside the
    activations and gradients.

    >>> model = torch.nn.Linear(10, 2)
    >>> opt = torch.optim.Adam(model.parameters())
    >>> x, y = torch.randn(8, 10), torch.randint(2, (8,))
    >>> report = measure_training_memory(model, opt, torch.nn.CrossEntropyLoss(), x, y)
    >>> report.parameter_bytes, report.gradient_bytes, report.optimizer_bytes
    (88, 88, 184)
    >>> report.peak_bytes >= report.floor_bytes
    True
    """
    _check_optimizer(optimizer)
    micro_batches = split_batch(inputs, targets, accumulation_steps)
    model, optimizer = _training_copy(model, optimizer)
    device = _device_of(model)
    counter = _SavedTensorCounter(model)
    parameter_bytes = _bytes(model.parameters())
    start_bytes = parameter_bytes + optimizer_state_bytes(optimizer)
    peak, gradient_bytes = _tracked_step(model, optimizer, loss_fn, micro_batches, counter)
    floor = parameter_bytes + gradient_bytes + optimizer_state_bytes(optimizer)
    # Without allocator figures (MPS), the peak is the sum of the parts.
    region = peak["bytes"]
    return MemoryReport(
        peak_bytes=floor + counter.largest if region is None else start_bytes + region,
        parameter_bytes=parameter_bytes,
        gradient_bytes=gradient_bytes,
        optimizer_bytes=optimizer_state_bytes(optimizer),
        activation_bytes=counter.largest,
        device=str(device),
        method=peak["method"],
        micro_batch_size=len(micro_batches[0][0]),
        accumulation_steps=len(micro_batches),
    )


def _tracked_step(model, optimizer, loss_fn, micro_batches, counter) -> tuple[dict, int]:
    """One training step under a forked random state, its peak tracked: (peak, gradient bytes).

    The step is the course's one loop, `train_accumulated` with one window; this function
    only listens to its events: it counts what each forward saves for backward (from the
    event before a forward to the forward's own) and reads the gradients' bytes after
    each backward (the last one counts).
    """
    device = _device_of(model)
    gradient_bytes = 0
    with torch.random.fork_rng(devices=_rng_devices(device)), contextlib.ExitStack() as counting:

        def listen(event: Event) -> None:
            nonlocal gradient_bytes
            if event.kind == "forward":
                counting.close()  # this forward's saved tensors are counted
            elif event.kind == "backward":
                gradient_bytes = _bytes(p.grad for p in model.parameters() if p.grad is not None)
            if event.kind in ("zero_grad", "backward"):  # a forward may follow
                counting.enter_context(counter.counting())

        if device.type == "cuda":
            _warm_up(model, loss_fn, *micro_batches[0])
        with _peak_tracker(device) as peak:
            fed_model, fed_loss = _copied_in(model, loss_fn)
            steps = len(micro_batches)
            train_accumulated(fed_model, optimizer, fed_loss, micro_batches, steps, on_event=listen)
    return peak, gradient_bytes


def _warm_up(model: nn.Module, loss_fn: Callable, x: torch.Tensor, y: torch.Tensor) -> None:
    # A GPU library allocates its workspaces (cuBLAS, cuDNN) on first use and keeps them:
    # pay that before measuring, so that every measurement starts from the same state.
    accumulated_gradients(model, loss_fn, x, y, accumulation_steps=1)


class _CopiedIn(nn.Module):
    """The model, fed a fresh copy of each micro-batch's inputs."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.model(inputs.clone())


def _copied_in(model: nn.Module, loss_fn: Callable) -> tuple[nn.Module, Callable]:
    # A data loader hands each micro-batch over as a fresh copy: counted in the peak,
    # freed with its backward (autograd holds what it saved of it until then).
    return _CopiedIn(model), lambda outputs, targets: loss_fn(outputs, targets.clone())


def activation_bytes_per_sample(
    model: nn.Module, loss_fn: Callable, sample_inputs: torch.Tensor, sample_targets: torch.Tensor
) -> float:
    """Bytes autograd saves for backward per sample: the slope between 2 and 4 samples.

    Runs forward passes on a copy of the model (batch statistics stay untouched); two
    samples at least, because a train-mode BatchNorm refuses a batch of one.

    >>> model = torch.nn.Sequential(torch.nn.Linear(10, 20), torch.nn.ReLU())
    >>> x, y = torch.randn(2, 10), torch.randn(2, 20)
    >>> activation_bytes_per_sample(model, torch.nn.MSELoss(), x, y)  # (10 + 20 + 20) × 4
    200.0
    """
    check_batch(sample_inputs, sample_targets, ("sample_inputs", "sample_targets"))
    _device_of(model)
    model = copy.deepcopy(model).train()
    counter = _SavedTensorCounter(model)
    sizes = []
    for b in (2, 4):
        x, y = repeat_samples(sample_inputs, b), repeat_samples(sample_targets, b)
        with torch.random.fork_rng(devices=_rng_devices(_device_of(model))), counter.counting():
            loss_fn(model(x), y)
        sizes.append(counter.last)
    return (sizes[1] - sizes[0]) / 2


def optimizer_state_bytes(optimizer: torch.optim.Optimizer) -> int:
    """Bytes of the tensors the optimizer keeps between steps (empty before its first step).

    >>> model = torch.nn.Linear(2, 1)
    >>> optimizer_state_bytes(torch.optim.Adam(model.parameters()))
    0
    """
    _check_optimizer(optimizer)
    tensors = [t for state in optimizer.state.values() for t in state.values()]
    return _bytes(t for t in tensors if isinstance(t, torch.Tensor))


def _training_copy(model: nn.Module, optimizer: torch.optim.Optimizer):
    """Deep copies of the pair, in train mode, without gradients, with optimizer state."""
    # Copied together, the optimizer copy holds the model copy's parameters.
    model_copy, optimizer_copy = copy.deepcopy((model, optimizer))
    model_copy.train()
    if not optimizer_copy.state:
        # Create the state (Adam's moments, SGD's momentum) as a first step would:
        # zero gradients leave the weights as they are (but for weight decay).
        for p in model_copy.parameters():
            p.grad = torch.zeros_like(p) if p.requires_grad else None
        optimizer_copy.step()
    model_copy.zero_grad(set_to_none=True)
    return model_copy, optimizer_copy


def _device_of(model: nn.Module) -> torch.device:
    first = next(model.parameters(), None)
    if first is None:
        raise ValueError("the model has no parameters: there is no training memory to measure")
    return first.device


def _rng_devices(device: torch.device) -> list:
    return [device] if device.type == "cuda" else []


def repeat_samples(samples: torch.Tensor, size: int) -> torch.Tensor:
    """`size` samples taken round-robin from `samples` (a new tensor, not a view).

    >>> repeat_samples(torch.tensor([1, 2]), 5).tolist()
    [1, 2, 1, 2, 1]
    """
    size = as_count("size", size)
    if not isinstance(samples, torch.Tensor) or samples.dim() == 0 or len(samples) == 0:
        raise ValueError(f"samples must be a tensor of at least one sample, got {samples!r}")
    return samples[torch.arange(size, device=samples.device) % len(samples)]


def _bytes(tensors) -> int:
    """Bytes held by distinct tensors (a tensor listed twice counts once)."""
    seen = {}
    for t in tensors:
        seen[(t.data_ptr(), tuple(t.shape), t.dtype)] = t.numel() * t.element_size()
    return sum(seen.values())


def format_bytes(size: float) -> str:
    """A size in bytes for people: 512 B, 3.5 KiB, 1.25 MiB.

    >>> format_bytes(512), format_bytes(3584), format_bytes(1.25 * 2**20)
    ('512 B', '3.5 KiB', '1.25 MiB')
    """
    size = as_positive("size", size, "a size in bytes", zero_allowed=True)
    for unit, scale in (("GiB", 2**30), ("MiB", MiB), ("KiB", 2**10)):
        if abs(size) >= scale:
            return f"{size / scale:.4g} {unit}"
    return f"{size:.0f} B"


def memory_by_accumulation_steps(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    loss_fn: Callable,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    accumulation_steps: list[int],
) -> list[MemoryReport]:
    """Measured memory of one effective batch (all of `inputs`) split into N micro-batches, for
    each N in `accumulation_steps`.

    >>> model = torch.nn.Linear(4, 2)
    >>> opt = torch.optim.SGD(model.parameters(), lr=0.1)
    >>> x, y = torch.randn(8, 4), torch.randn(8, 2)
    >>> reports = memory_by_accumulation_steps(model, opt, torch.nn.MSELoss(), x, y, [1, 4])
    >>> [r.micro_batch_size for r in reports]
    [8, 2]
    """
    accumulation_steps = as_counts(
        "accumulation_steps", accumulation_steps, maximum=check_batch(inputs, targets)
    )
    return [
        measure_training_memory(model, optimizer, loss_fn, inputs, targets, n)
        for n in accumulation_steps
    ]


def _check_optimizer(optimizer) -> None:
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise ValueError(
            f"optimizer must be a torch.optim.Optimizer (SGD, Adam, ...), got {optimizer!r}"
        )
