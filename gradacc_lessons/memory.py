"""Peak memory of one training step, measured on any device, with its breakdown.

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
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch
from torch import nn

from gradacc_lessons.accumulate import check_batch, scalar_loss, split_batch
from gradacc_lessons.checks import as_choice, as_count, as_counts, as_positive

MiB = 2**20
GB = 10**9  # real models are counted in (decimal) gigabytes, as GPU makers do
LABELS = {  # the parts of the peak, and their names in tables and plots
    "parameter_bytes": "parameters",
    "gradient_bytes": "gradients",
    "optimizer_bytes": "optimizer state",
    "activation_bytes": "activations",
}
PARTS = tuple(LABELS)
CPU_METHOD = "CPU: profiler allocation events (peak), saved-tensor hooks (activations)"
CUDA_METHOD = "CUDA: allocator's max_memory_allocated (peak), saved-tensor hooks (activations)"
ANALYTIC_METHOD = "analytic: parameters + gradients + optimizer state + activations per sample × b"


@dataclass(frozen=True)
class MemoryReport:
    """Peak memory of one effective batch and what it is made of, in bytes."""

    peak_bytes: int
    parameter_bytes: int
    gradient_bytes: int
    optimizer_bytes: int
    activation_bytes: int  # saved for backward by the largest micro-batch
    device: str
    method: str
    micro_batch: int  # the largest micro-batch
    accumulation_steps: int = 1

    @property
    def floor_bytes(self) -> int:
        """Parameters + gradients + optimizer state: what no micro-batch size removes."""
        return self.parameter_bytes + self.gradient_bytes + self.optimizer_bytes

    @property
    def other_bytes(self) -> int:
        """What the peak holds beyond the four parts: temporaries of backward and the step."""
        return max(0, self.peak_bytes - self.floor_bytes - self.activation_bytes)

    def __repr__(self) -> str:
        parts = ", ".join(f"{name}={format_bytes(getattr(self, name))}" for name in PARTS)
        return (
            f"MemoryReport(peak={format_bytes(self.peak_bytes)}, {parts}, "
            f"micro_batch={self.micro_batch}, accumulation_steps={self.accumulation_steps}, "
            f"device={self.device!r}, method={self.method!r})"
        )

    def _repr_html_(self) -> str:
        rows = [("peak", self.peak_bytes)]
        rows += [(label, getattr(self, name)) for name, label in LABELS.items()]
        rows.append(("other (temporaries)", self.other_bytes))
        body = "".join(
            f"<tr><td>{name}</td><td style='text-align:right'>{value:,}</td>"
            f"<td style='text-align:right'>{value / MiB:.3f}</td></tr>"
            for name, value in rows
        )
        return (
            f"<table><caption>memory of one effective batch: {self.accumulation_steps} × "
            f"micro-batch ≤ {self.micro_batch} on {self.device}<br>"
            f"<small>{self.method}</small></caption>"
            f"<tr><th>part</th><th>bytes</th><th>MiB</th></tr>{body}</table>"
        )


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
    with torch.random.fork_rng(devices=_rng_devices(device)):
        if device.type == "cuda":
            _warm_up(model, loss_fn, *micro_batches[0])
        with _peak_tracker(device) as peak:
            for x, y in micro_batches:
                _forward_backward(model, loss_fn, x, y, len(x) / len(inputs), counter)
            gradient_bytes = _bytes(p.grad for p in model.parameters() if p.grad is not None)
            optimizer.step()
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
        micro_batch=len(micro_batches[0][0]),
        accumulation_steps=len(micro_batches),
    )


def _warm_up(model: nn.Module, loss_fn: Callable, x: torch.Tensor, y: torch.Tensor) -> None:
    # A GPU library allocates its workspaces (cuBLAS, cuDNN) on first use and keeps them:
    # pay that before measuring, so that every measurement starts from the same state.
    scalar_loss(loss_fn, model(x), y).backward()
    model.zero_grad(set_to_none=True)


def _forward_backward(model, loss_fn, x, y, weight: float, counter) -> None:
    """One micro-batch: copied in (as a data loader hands it over), forward, backward."""
    x, y = x.clone(), y.clone()  # counted in the peak; freed when this function returns
    with counter.counting():
        loss = scalar_loss(loss_fn, model(x), y)
    # Weigh each mean loss by its share of the batch: the sum is the batch mean.
    (loss * weight).backward()


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


def estimate_training_memory(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    micro_batch: int,
    activation_bytes_per_sample: float,
) -> MemoryReport:
    """The analytic model: parameters + gradients + optimizer state + activations × b.

    Gradients take as much as the trainable parameters; the optimizer state follows its
    type (`optimizer_state_multiplier`); activations grow linearly with the micro-batch.

    >>> model = torch.nn.Linear(10, 2)
    >>> opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    >>> estimate_training_memory(model, opt, 8, 100.0).peak_bytes  # 3 × 88 + 800
    1064
    """
    micro_batch = as_count("micro_batch", micro_batch)
    activation_bytes_per_sample = as_positive(
        "activation_bytes_per_sample", activation_bytes_per_sample, zero_allowed=True
    )
    trainable = [p for p in model.parameters() if p.requires_grad]
    owned = [p for group in optimizer.param_groups for p in group["params"] if p.requires_grad]
    moments, per_tensor = optimizer_state_multiplier(optimizer)
    parameter_bytes = _bytes(model.parameters())
    gradient_bytes = _bytes(trainable)
    optimizer_bytes = round(moments * _bytes(owned)) + per_tensor * len(owned)
    activation_bytes = round(activation_bytes_per_sample * micro_batch)
    return MemoryReport(
        peak_bytes=parameter_bytes + gradient_bytes + optimizer_bytes + activation_bytes,
        parameter_bytes=parameter_bytes,
        gradient_bytes=gradient_bytes,
        optimizer_bytes=optimizer_bytes,
        activation_bytes=activation_bytes,
        device=str(_device_of(model)),
        method=ANALYTIC_METHOD,
        micro_batch=micro_batch,
    )


def optimizer_state_multiplier(optimizer: torch.optim.Optimizer) -> tuple[float, int]:
    """(state bytes per parameter byte, bytes per parameter tensor) that `optimizer` keeps.

    SGD keeps nothing, SGD with momentum one buffer, Adam and AdamW two moments (three
    with amsgrad) plus one scalar step count per parameter tensor.

    >>> model = torch.nn.Linear(2, 1)
    >>> optimizer_state_multiplier(torch.optim.Adam(model.parameters()))
    (2.0, 4)
    """
    _check_optimizer(optimizer)
    groups = optimizer.param_groups
    if type(optimizer) is torch.optim.SGD:
        return (1.0 if any(g["momentum"] != 0 for g in groups) else 0.0), 0
    if type(optimizer) in (torch.optim.Adam, torch.optim.AdamW):
        step_bytes = torch.zeros(()).element_size()  # the step count: a default-dtype scalar
        return (3.0 if any(g["amsgrad"] for g in groups) else 2.0), step_bytes
    raise ValueError(
        f"optimizer must be SGD, Adam or AdamW for the analytic model, got "
        f"{type(optimizer).__name__}; measure it with measure_training_memory instead"
    )


def optimizer_state_bytes(optimizer: torch.optim.Optimizer) -> int:
    """Bytes of the tensors the optimizer keeps between steps (empty before its first step).

    >>> model = torch.nn.Linear(2, 1)
    >>> optimizer_state_bytes(torch.optim.Adam(model.parameters()))
    0
    """
    _check_optimizer(optimizer)
    tensors = [t for state in optimizer.state.values() for t in state.values()]
    return _bytes(t for t in tensors if isinstance(t, torch.Tensor))


class _SavedTensorCounter:
    """Counts the bytes autograd saves for backward, per forward pass, parameters excluded."""

    def __init__(self, model: nn.Module):
        # Parameters and buffers (and views of them, like a Linear's weight.t()) are
        # not activations: they exist whatever the micro-batch.
        self._skip = {_storage(t) for t in [*model.parameters(), *model.buffers()]}
        self.last = 0
        self.largest = 0

    @contextlib.contextmanager
    def counting(self) -> Iterator[None]:
        """Count what autograd saves inside the block; the result lands in `last`."""
        saved: dict[tuple[int, int], set] = {}  # storage -> byte ranges or strided views

        def pack(tensor: torch.Tensor) -> torch.Tensor:
            storage = _storage(tensor)
            if storage not in self._skip:
                saved.setdefault(storage, set()).add(_extent(tensor))
            return tensor

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
            yield
        self.last = sum(_covered_bytes(extents, size) for (_, size), extents in saved.items())
        self.largest = max(self.largest, self.last)


def _extent(tensor: torch.Tensor) -> tuple:
    """What a saved tensor covers of its storage: a byte range, or (for strided views) itself."""
    start = tensor.storage_offset() * tensor.element_size()
    size = tensor.numel() * tensor.element_size()
    if tensor.is_contiguous():
        return ("range", start, start + size)
    return ("view", start, tuple(tensor.shape), tensor.stride(), size)


def _covered_bytes(extents: set, storage_bytes: int) -> int:
    """Bytes of one storage that saved tensors cover: overlapping ranges count once.

    A tensor saved twice, or saved once whole and once reshaped, counts once; a
    micro-batch cut from a batch counts its own samples, not the batch's storage.

    >>> _covered_bytes({("range", 0, 40), ("range", 20, 60), ("range", 100, 110)}, 1000)
    70
    """
    ranges = sorted(e[1:] for e in extents if e[0] == "range")
    covered, end = 0, 0
    for start, stop in ranges:
        covered += max(0, stop - max(start, end))
        end = max(end, stop)
    strided = sum(e[-1] for e in extents if e[0] == "view")
    return min(covered + strided, storage_bytes)


def _storage(tensor: torch.Tensor) -> tuple[int, int]:
    storage = tensor.untyped_storage()
    return storage.data_ptr(), storage.nbytes()


@contextlib.contextmanager
def _peak_tracker(device: torch.device) -> Iterator[dict]:
    """Yield a dict that holds, on exit, the peak bytes allocated inside the block."""
    result: dict = {"bytes": None, "method": "saved-tensor hooks; no peak statistics here"}
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        start = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        yield result
        torch.cuda.synchronize(device)
        result.update(bytes=torch.cuda.max_memory_allocated(device) - start, method=CUDA_METHOD)
    elif device.type == "cpu":
        # torch.autograd.profiler rather than torch.profiler: the same events, but its
        # first use does not import the compiler stack (seconds on a laptop). Its C++ side
        # prints two "profiler_start/stop" lines to stderr; silencing them would mean
        # redirecting the whole process's stderr, which could swallow anyone's errors.
        with torch.autograd.profiler.profile(profile_memory=True) as profiler:
            yield result
        result.update(bytes=_profiler_peak(profiler), method=CPU_METHOD)
    else:  # MPS and others: no peak statistics, the report sums its parts
        yield result


def _profiler_peak(prof) -> int:
    """The largest running sum of the CPU allocation events (+) and frees (-) of a trace."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "trace.json")
        prof.export_chrome_trace(path)
        with open(path, encoding="utf-8") as file:
            events = json.load(file)["traceEvents"]
    memory = [
        e for e in events if e.get("name") == "[memory]" and e["args"].get("Device Type") == 0
    ]
    if not memory:
        # A change of the trace format would otherwise report peak = floor, silently.
        raise RuntimeError(
            f"the profiler recorded no CPU allocation event in the training step; torch "
            f"{torch.__version__} may write its trace differently from what "
            f"gradacc_lessons.memory reads ('[memory]' events with 'Device Type' 0)"
        )
    memory.sort(key=lambda e: (float(e["ts"]), e["args"].get("Ev Idx", 0)))
    running = peak = 0
    for event in memory:
        running += event["args"]["Bytes"]
        peak = max(peak, running)
    return peak


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


def memory_by_micro_batch(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    loss_fn: Callable,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    sizes: list[int],
) -> tuple[list[MemoryReport], list[MemoryReport]]:
    """Measured and modelled memory of one step for each micro-batch size (no accumulation).

    Micro-batches are the first `size` samples of `inputs`; the model's activations per
    sample come from the first two samples.

    >>> model = torch.nn.Linear(4, 2)
    >>> opt = torch.optim.SGD(model.parameters(), lr=0.1)
    >>> x, y = torch.randn(8, 4), torch.randn(8, 2)
    >>> measured, modelled = memory_by_micro_batch(model, opt, torch.nn.MSELoss(), x, y, [2, 8])
    >>> [r.activation_bytes for r in measured] == [r.activation_bytes for r in modelled]
    True
    """
    sizes = as_counts("sizes", sizes, maximum=check_batch(inputs, targets))
    per_sample = activation_bytes_per_sample(model, loss_fn, inputs[:2], targets[:2])
    measured = [
        measure_training_memory(model, optimizer, loss_fn, inputs[:b], targets[:b]) for b in sizes
    ]
    modelled = [estimate_training_memory(model, optimizer, b, per_sample) for b in sizes]
    return measured, modelled


def memory_by_accumulation_steps(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    loss_fn: Callable,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    steps: list[int],
) -> list[MemoryReport]:
    """Measured memory of one effective batch (all of `inputs`) split into N micro-batches.

    >>> model = torch.nn.Linear(4, 2)
    >>> opt = torch.optim.SGD(model.parameters(), lr=0.1)
    >>> x, y = torch.randn(8, 4), torch.randn(8, 2)
    >>> reports = memory_by_accumulation_steps(model, opt, torch.nn.MSELoss(), x, y, [1, 4])
    >>> [r.micro_batch for r in reports]
    [8, 2]
    """
    steps = as_counts("steps", steps, maximum=check_batch(inputs, targets))
    return [measure_training_memory(model, optimizer, loss_fn, inputs, targets, n) for n in steps]


def _check_optimizer(optimizer) -> None:
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise ValueError(
            f"optimizer must be a torch.optim.Optimizer (SGD, Adam, ...), got {optimizer!r}"
        )


@dataclass(frozen=True)
class Phase:
    """The peak memory of one phase of a training step."""

    name: str  # "forward 1", "backward 1", ..., "optimizer step"
    peak_bytes: int


def measure_phase_peaks(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    loss_fn: Callable,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    accumulation_steps: int = 1,
) -> list[Phase]:
    """The peak memory of each phase of one window: every forward, every backward, the step.

    Measured like `measure_training_memory` (the CUDA allocator, or the profiler's
    allocation events on the CPU), on copies of the model and optimizer; micro-batches
    are numbered from 1.

    >>> model = torch.nn.Linear(10, 2)
    >>> opt = torch.optim.Adam(model.parameters())
    >>> x, y = torch.randn(8, 10), torch.randint(2, (8,))
    >>> phases = measure_phase_peaks(model, opt, torch.nn.CrossEntropyLoss(), x, y, 2)
    >>> [phase.name for phase in phases]
    ['forward 1', 'backward 1', 'forward 2', 'backward 2', 'optimizer step']
    """
    _check_optimizer(optimizer)
    chunks = split_batch(inputs, targets, accumulation_steps)
    model, optimizer = _training_copy(model, optimizer)
    device = _device_of(model)
    start = _bytes(model.parameters()) + optimizer_state_bytes(optimizer)
    with torch.random.fork_rng(devices=_rng_devices(device)), _phase_tracker(device) as mark:
        for i, (x, y) in enumerate(chunks, start=1):
            with mark(f"forward {i}"):
                x, y = x.clone(), y.clone()  # handed over by a data loader, as in a real step
                loss = scalar_loss(loss_fn, model(x), y) * (len(x) / len(inputs))
            with mark(f"backward {i}"):
                loss.backward()
            del loss, x, y
        with mark("optimizer step"):
            optimizer.step()
    return [Phase(name, start + peak) for name, peak in mark.peaks.items()]


class _PhaseMarks:
    """Names the phases of a step; after the block, `peaks` maps each name to its peak."""

    def __init__(self, device: torch.device):
        self.device = device
        self.peaks: dict[str, int] = {}
        self.start = 0

    @contextlib.contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
            yield
            torch.cuda.synchronize(self.device)
            self.peaks[name] = torch.cuda.max_memory_allocated(self.device) - self.start
        else:
            with torch.autograd.profiler.record_function(name):
                yield
            self.peaks[name] = 0  # filled in from the trace when the profiler stops


@contextlib.contextmanager
def _phase_tracker(device: torch.device) -> Iterator[_PhaseMarks]:
    marks = _PhaseMarks(device)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        marks.start = torch.cuda.memory_allocated(device)
        yield marks
        return
    if device.type != "cpu":
        raise ValueError(f"phase peaks need a CUDA or CPU device, got {device.type}")
    with torch.autograd.profiler.profile(profile_memory=True) as profiler:
        yield marks
    marks.peaks.update(_peaks_by_range(profiler, list(marks.peaks)))


def _peaks_by_range(profiler, names: list[str]) -> dict[str, int]:
    """The largest running allocation total inside each named range of the trace."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "trace.json")
        profiler.export_chrome_trace(path)
        with open(path, encoding="utf-8") as file:
            events = json.load(file)["traceEvents"]
    ranges = [
        (e["name"], float(e["ts"]), float(e["ts"]) + float(e["dur"]))
        for e in events
        if e.get("ph") == "X" and e.get("cat") == "user_annotation" and e["name"] in names
    ]
    memory = [
        e for e in events if e.get("name") == "[memory]" and e["args"].get("Device Type") == 0
    ]
    memory.sort(key=lambda e: (float(e["ts"]), e["args"].get("Ev Idx", 0)))
    totals, running = [], 0  # (time, bytes held after the event)
    for event in memory:
        running += event["args"]["Bytes"]
        totals.append((float(event["ts"]), running))
    peaks = dict.fromkeys(names, 0)
    for name, begin, end in ranges:
        before = [held for time, held in totals if time < begin]
        inside = [held for time, held in totals if begin <= time <= end]
        # what was held when the phase began, or more if it allocated
        peaks[name] = max([before[-1] if before else 0, *inside])
    return peaks


def estimate_temporaries(
    model: nn.Module, optimizer: torch.optim.Optimizer, accumulation_steps: int = 1
) -> dict[str, int]:
    """The rule for the short-lived buffers on top of parameters, gradients, state and activations.

    - a window of N >= 2 micro-batches: from the second backward on, each new gradient is
      made beside the filled `.grad` and then added to it: one more tensor the size of the
      largest parameter;
    - the optimizer step: Adam and AdamW written as a loop over tensors (the CPU default)
      hold two temporaries the size of the largest parameter (three for Adam's weight
      decay), plus the previous tensor's result; their `foreach` form (the CUDA default)
      one copy of all parameters; `fused=True` none. SGD holds none, or one largest
      tensor (loop) / all parameters (foreach) with weight decay.

    >>> model = torch.nn.Sequential(torch.nn.Linear(100, 50), torch.nn.Linear(50, 2))
    >>> estimate_temporaries(model, torch.optim.Adam(model.parameters()), accumulation_steps=2)
    {'accumulating into .grad': 20000, 'optimizer step': 40000}
    """
    _check_optimizer(optimizer)
    accumulation_steps = as_count("accumulation_steps", accumulation_steps)
    trainable = [p for p in model.parameters() if p.requires_grad]
    if not trainable:
        raise ValueError("the model has no parameter that requires grad: no gradient to hold")
    largest = max(p.numel() * p.element_size() for p in trainable)
    return {
        "accumulating into .grad": largest if accumulation_steps >= 2 else 0,
        "optimizer step": _step_temporaries(optimizer, largest),
    }


def _step_temporaries(optimizer: torch.optim.Optimizer, largest: int) -> int:
    group = optimizer.param_groups[0]
    params = [p for g in optimizer.param_groups for p in g["params"] if p.requires_grad]
    sizes = [p.numel() * p.element_size() for p in params]
    if group.get("fused"):
        return 0
    foreach = group.get("foreach")
    if foreach is None:  # PyTorch's default: foreach when every tensor is on a GPU
        foreach = all(p.is_cuda for p in params)
    decay = group.get("weight_decay", 0) != 0
    if type(optimizer) in (torch.optim.Adam, torch.optim.AdamW):
        if foreach:  # one temporary per parameter, all at once
            return sum(sizes)
        # A loop over tensors: sqrt(v) and its quotient (two temporaries), plus grad + wd * p
        # for Adam's weight decay; the previous tensor's result is still referenced.
        per_tensor = 3 if type(optimizer) is torch.optim.Adam and decay else 2
        return max(per_tensor * size + before for size, before in zip(sizes, [0, *sizes]))
    if type(optimizer) is torch.optim.SGD:
        return (sum(sizes) if foreach else largest) if decay else 0  # grad + wd * p
    raise ValueError(
        f"optimizer must be SGD, Adam or AdamW for the rule, got {type(optimizer).__name__}; "
        f"measure it with measure_phase_peaks instead"
    )


# Bytes per parameter of full fine-tuning recipes (ZeRO paper's accounting, Rajbhandari et al.
# 2020): what stays in memory for the whole run, before any activation.
RECIPES = {
    "float32, Adam": {"parameters": 4, "gradients": 4, "optimizer state": 8},
    "mixed precision, AdamW": {  # 16-bit weights and gradients, float32 master copy and moments
        "parameters": 2,
        "gradients": 2,
        "optimizer state": 4 + 8,
    },
    "16-bit weights, float32 gradient buffers, AdamW": {
        "parameters": 2,
        "gradients": 4,
        "optimizer state": 4 + 8,
    },
}


def floor_for(parameters: int, recipe: str = "mixed precision, AdamW") -> dict[str, float]:
    """The floor of training `parameters` weights with a recipe, in bytes per part.

    >>> floor_for(7_000_000_000)["total"] / 1e9  # a 7B model: 16 bytes per parameter
    112.0
    """
    parameters = as_count("parameters", parameters)
    as_choice("recipe", recipe, RECIPES)
    parts = {part: float(parameters * size) for part, size in RECIPES[recipe].items()}
    return {**parts, "total": sum(parts.values())}


def transformer_activation_bytes(
    tokens: int,
    hidden: int,
    layers: int,
    checkpointing: bool = False,
) -> float:
    """An estimate of what a GPT-style transformer saves for backward, for `tokens` tokens.

    Korthikanti et al. (2022) count 34 x hidden bytes per token and layer with 16-bit
    activations, when the attention scores are not stored (as with FlashAttention);
    checkpointing every layer keeps only each layer's 16-bit input: 2 x hidden bytes.
    An estimate to plan with, not a measurement: measure your own model.

    >>> transformer_activation_bytes(4096, hidden=4096, layers=32) / 1e9  # a 7B model
    18.253611008
    """
    tokens, hidden, layers = (as_count(n, v) for n, v in (("tokens", tokens), ("hidden", hidden),
                                                         ("layers", layers)))  # fmt: skip
    per_token_and_layer = 2 * hidden if checkpointing else 34 * hidden
    return float(tokens * layers * per_token_and_layer)
