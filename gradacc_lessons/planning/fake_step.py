"""One training step on fake tensors: the bytes PyTorch would hold at every moment, with no memory.

A fake tensor (`torch._subclasses.fake_tensor.FakeTensorMode`) has a shape, a dtype, a
device and a storage size, but no data: every operation computes only the shape of
its result. So one real training step (forward, backward, `optimizer.step()`) of a real
model runs in seconds even for an 8-billion-parameter model, on a laptop.

`_LiveBytes` is a `TorchDispatchMode` that sees every operation PyTorch dispatches, in
the forward, in autograd's backward and in the optimizer, and counts the storages of
their results while they are alive: a storage is counted once when it first appears
and uncounted when Python frees it (a weak reference's callback), as the allocator
would hand its memory back. Views and in-place results share a storage and add nothing.
The running total's maximum is the peak; a CUDA plan rounds each storage up to the
caching allocator's 512-byte blocks (`round_to`), the CPU's allocator does not round, but
some CPU kernels hold buffers of their own while they run (`cpu_kernels`, counted as
temporaries when `cpu_kernels=True`).

The step is the one `gradacc_lessons.memory.measure_training_memory` measures: each
micro-batch copied in (the whole batch it is cut from is not counted, as a data loader
never holds it), forward, loss weighted by its share, backward; then the optimizer step,
whose state already exists (a first step with zero gradients made it). Both run it as the
course's one loop, `gradacc_lessons.accumulate.train_accumulated`, and name its phases
from the loop's events.
"""

from __future__ import annotations

import contextlib
import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import ShapeEnv
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from gradacc_lessons.accumulate import Event, train_accumulated
from gradacc_lessons.checks import as_count
from gradacc_lessons.planning import cpu_kernels

PHASES = ("forward", "backward", "optimizer step")


PARTS = ("parameters", "gradients", "optimizer state", "activations", "temporaries")


@dataclass(frozen=True)
class StepTrace:
    """The bytes held after every allocation and free of one step, and the step's parts."""

    totals: tuple[int, ...]  # bytes held after each allocation or free, in order
    phases: tuple[str, ...]  # the phase of each entry: "forward 1", "backward 1", ...
    at_peak: dict  # part (PARTS) -> bytes it held at the peak moment
    phase_peaks: dict  # phase -> (its peak bytes, {part: bytes at that moment})
    parameter_bytes: int  # model parameters and buffers
    gradient_bytes: int  # every .grad after the last backward
    optimizer_bytes: int  # the optimizer's state
    activation_bytes: int  # what autograd saved in the largest forward (parameters excluded)

    @property
    def peak_bytes(self) -> int:
        return max(self.totals)

    @property
    def peak_phase(self) -> str:
        """ "forward", "backward" or "optimizer step": where the peak happens."""
        return self.phases[self.totals.index(self.peak_bytes)].rstrip(" 0123456789")


class _LiveBytes(TorchDispatchMode):
    """Counts the bytes of live storages by part: + when one appears, - when Python frees it."""

    def __init__(self, round_to: int = 1, cpu_kernels: bool = False):
        super().__init__()
        self.round_to, self.cpu_kernels = round_to, cpu_kernels
        self.live: dict[int, list] = {}  # id(storage) -> [bytes, part, weak reference]
        self.part_bytes = dict.fromkeys(PARTS, 0)
        self.held = 0
        self.totals: list[int] = []
        self.phases: list[str] = []
        self.phase = "start"
        self.at_peak = dict(self.part_bytes)
        self.phase_peaks: dict[str, tuple[int, dict]] = {}

    def track(self, tensor: torch.Tensor, part: str = "temporaries") -> None:
        storage = tensor.untyped_storage()
        key = id(storage)
        if key in self.live:
            return
        size = math.ceil(storage.nbytes() / self.round_to) * self.round_to
        ref = weakref.ref(storage, lambda _, key=key: self._free(key))
        self.live[key] = [size, part, ref]
        self._change(part, size)

    def mark(self, tensor: torch.Tensor, part: str) -> None:
        """Count a live temporary as `part` from now on (a saved activation, a gradient)."""
        entry = self.live.get(id(tensor.untyped_storage()))
        if entry is not None and entry[1] == "temporaries":
            self.part_bytes["temporaries"] -= entry[0]
            self.part_bytes[part] += entry[0]
            entry[1] = part

    def _free(self, key: int) -> None:
        entry = self.live.pop(key, None)
        if entry is not None:
            self._change(entry[1], -entry[0])

    def _change(self, part: str, size: int) -> None:
        self.part_bytes[part] += size
        self.held += size
        self.totals.append(self.held)
        self.phases.append(self.phase)
        if self.held > sum(self.at_peak.values()):
            self.at_peak = dict(self.part_bytes)
        best = self.phase_peaks.get(self.phase)
        if best is None or self.held > best[0]:
            self.phase_peaks[self.phase] = (self.held, dict(self.part_bytes))

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        for value in tree_flatten(out)[0]:
            if isinstance(value, torch.Tensor):
                self.track(value)
        if self.cpu_kernels and cpu_kernels.knows(func):  # held beside the outputs, then freed
            workspace = cpu_kernels.workspace_bytes(func, args, kwargs)
            self._change("temporaries", workspace)
            self._change("temporaries", -workspace)
        return out


def fake_step(
    build_model: Callable[[], nn.Module],
    make_optimizer: Callable[[nn.Module], torch.optim.Optimizer],
    make_batch: Callable[[int], tuple[torch.Tensor, torch.Tensor]],
    loss_fn: Callable,
    micro_batch_size: int,
    accumulation_steps: int = 1,
    autocast_dtype: torch.dtype | None = None,
    round_to: int = 1,
    cpu_kernels: bool = False,
) -> StepTrace:
    """Trace one window of `accumulation_steps` micro-batches of `micro_batch_size` samples.

    `build_model()` is called on the meta device (shapes only, nothing allocated), its
    weights then become fake tensors; `make_optimizer(model)` and `make_batch(size)` (the
    inputs and targets of `size` samples) are called under fake tensors.

    >>> def build():
    ...     return torch.nn.Linear(1000, 1000)
    >>> def optimizer(model):
    ...     return torch.optim.SGD(model.parameters(), lr=0.1)
    >>> def batch(size):
    ...     return torch.zeros(size, 1000), torch.zeros(size, 1000)
    >>> trace = fake_step(build, optimizer, batch, torch.nn.functional.mse_loss, micro_batch_size=8)
    >>> trace.parameter_bytes, trace.gradient_bytes, trace.optimizer_bytes
    (4004000, 4004000, 0)
    >>> trace.peak_phase
    'backward'
    """
    micro_batch_size = as_count("micro_batch_size", micro_batch_size)
    accumulation_steps = as_count("accumulation_steps", accumulation_steps)
    round_to = as_count("round_to", round_to, fix="1 for the CPU, 512 for CUDA's blocks")
    if not callable(loss_fn):
        raise ValueError(f"loss_fn must be a function of (outputs, targets), got {loss_fn!r}")
    with torch.device("meta"):
        model = build_model()
    # A shape environment lets the loop read each loss (`loss.item()`) as a symbol: a fake
    # tensor has no value.
    with FakeTensorMode(shape_env=ShapeEnv()), torch.random.fork_rng(devices=[]):
        _to_fake(model)
        optimizer = make_optimizer(model)
        _create_state(model, optimizer)
        inputs, targets = make_batch(micro_batch_size * accumulation_steps)
        counter = _LiveBytes(round_to, cpu_kernels)
        fixed = {id(t.untyped_storage()) for t in [*model.parameters(), *model.buffers()]}
        saved_bytes: dict[int, int] = {}

        def pack(tensor):
            key = id(tensor.untyped_storage())
            if key not in fixed:
                counter.mark(tensor, "activations")
                saved_bytes[key] = tensor.untyped_storage().nbytes()
            return tensor

        hooks = [
            p.register_post_accumulate_grad_hook(lambda p: counter.mark(p.grad, "gradients"))
            for p in model.parameters()
            if p.requires_grad
        ]
        # cut before counting: a data loader hands over micro-batches, never the whole batch
        pairs = list(zip(inputs.split(micro_batch_size), targets.split(micro_batch_size)))
        found = {"largest_saved": 0, "gradient_bytes": 0}
        with counter, contextlib.ExitStack() as saving:

            def listen(event: Event) -> None:
                # The loop's events name the phases; each forward's saved tensors are counted.
                if event.kind == "forward":
                    saving.close()
                    found["largest_saved"] = max(found["largest_saved"], sum(saved_bytes.values()))
                    counter.phase = f"backward {event.position + 1}"
                elif event.kind == "backward":
                    found["gradient_bytes"] = _bytes(
                        p.grad for p in model.parameters() if p.grad is not None
                    )
                    more = event.position + 1 < accumulation_steps
                    counter.phase = f"forward {event.position + 2}" if more else "optimizer step"
                if event.kind in ("zero_grad", "backward") and counter.phase.startswith("forward"):
                    saved_bytes.clear()
                    saving.enter_context(torch.autograd.graph.saved_tensors_hooks(pack, _same))

            for t in [*model.parameters(), *model.buffers()]:
                counter.track(t, "parameters")
            for t in _state_tensors(optimizer):
                counter.track(t, "optimizer state")
            counter.totals.clear()
            counter.phases.clear()
            counter.phase = "forward 1"
            train_accumulated(
                _Fed(model, autocast_dtype),
                optimizer,
                _fed_loss(loss_fn, autocast_dtype),
                pairs,
                accumulation_steps,
                on_event=listen,
            )
        for hook in hooks:
            hook.remove()
        return StepTrace(
            totals=tuple(counter.totals),
            phases=tuple(counter.phases),
            at_peak=counter.at_peak,
            phase_peaks=counter.phase_peaks,
            parameter_bytes=_bytes([*model.parameters(), *model.buffers()]),
            gradient_bytes=found["gradient_bytes"],
            optimizer_bytes=_bytes(_state_tensors(optimizer)),
            activation_bytes=found["largest_saved"],
        )


def _to_fake(model: nn.Module) -> None:
    """Replace the model's meta weights and buffers by fake ones (on the CPU), ties kept.

    Assigned into the modules' dictionaries: `Module.to` would swap tensors, which
    fake parameters refuse.
    """
    fakes: dict[int, torch.Tensor] = {}

    def fake(t: torch.Tensor) -> torch.Tensor:
        if id(t) not in fakes:
            new = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device="cpu")
            if isinstance(t, nn.Parameter):
                new = nn.Parameter(new, requires_grad=t.requires_grad)
            fakes[id(t)] = new
        return fakes[id(t)]

    for module in model.modules():
        for name, p in module._parameters.items():
            if p is not None:
                module._parameters[name] = fake(p)
        for name, b in module._buffers.items():
            if b is not None:
                module._buffers[name] = fake(b)


class _Fed(nn.Module):
    """The model as a step feeds it: a fresh copy of each micro-batch, under autocast if asked."""

    def __init__(self, model: nn.Module, dtype: torch.dtype | None):
        super().__init__()
        self.model, self.dtype = model, dtype

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        with _autocast(self.dtype):
            return self.model(inputs.clone())  # handed over by a data loader


def _fed_loss(loss_fn: Callable, dtype: torch.dtype | None) -> Callable:
    def loss(outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        with _autocast(dtype):  # the loss too, as a training step under autocast computes it
            return loss_fn(outputs, targets.clone())

    return loss


def _same(tensor: torch.Tensor) -> torch.Tensor:
    return tensor


def _autocast(dtype: torch.dtype | None):
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast("cpu", dtype=dtype)


def _create_state(model: nn.Module, optimizer: torch.optim.Optimizer) -> None:
    """Make the optimizer's state as a first step would (zero gradients), then drop the grads."""
    for p in model.parameters():
        if p.requires_grad:
            p.grad = torch.zeros_like(p)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def _state_tensors(optimizer: torch.optim.Optimizer) -> list[torch.Tensor]:
    return [t for state in optimizer.state.values() for t in state.values() if torch.is_tensor(t)]


def _bytes(tensors) -> int:
    """Bytes of the distinct storages of `tensors`."""
    storages = {id(t.untyped_storage()): t.untyped_storage().nbytes() for t in tensors}
    return sum(storages.values())
