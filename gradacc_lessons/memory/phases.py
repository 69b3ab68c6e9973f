"""The peak memory of each phase of a training step: each forward, each backward, the step."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch
from torch import nn

from gradacc_lessons.accumulate import Event, split_batch, train_accumulated
from gradacc_lessons.memory.instruments import _cpu_memory_events, _trace_events
from gradacc_lessons.memory.measured import (
    _bytes,
    _check_optimizer,
    _copied_in,
    _device_of,
    _rng_devices,
    _training_copy,
    optimizer_state_bytes,
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
    fed_model, fed_loss = _copied_in(model, loss_fn)  # handed over by a data loader
    with torch.random.fork_rng(devices=_rng_devices(device)), _phase_tracker(device) as marks:
        # The course's one loop runs the step; each of its events ends a phase.
        listen = _phase_listener(marks, len(chunks))
        train_accumulated(fed_model, optimizer, fed_loss, chunks, len(chunks), on_event=listen)
    return [Phase(name, start + peak) for name, peak in marks.peaks.items()]


def _phase_listener(marks: _PhaseMarks, count: int) -> Callable[[Event], None]:
    """Turn the loop's events into phases: a forward ends where its event comes, and so on."""

    def listen(event: Event) -> None:
        if event.kind == "zero_grad" and not marks.peaks:
            marks.begin("forward 1")  # the first zero_grad comes before any forward
        elif event.kind == "forward":
            marks.end()
            marks.begin(f"backward {event.position + 1}")
        elif event.kind == "backward":
            marks.end()
            more = event.position + 1 < count
            marks.begin(f"forward {event.position + 2}" if more else "optimizer step")
        elif event.kind == "step":
            marks.end()

    return listen


class _PhaseMarks:
    """Names the phases of a step; after the block, `peaks` maps each name to its peak."""

    def __init__(self, device: torch.device):
        self.device = device
        self.peaks: dict[str, int] = {}
        self.start = 0

    def begin(self, name: str) -> None:
        """A phase starts here (`end` closes it)."""
        self.name = name
        self.peaks[name] = 0  # on the CPU, filled in from the trace when the profiler stops
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
        else:
            self.range = torch.autograd.profiler.record_function(name)
            self.range.__enter__()

    def end(self) -> None:
        """The phase begun last ends here."""
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            self.peaks[self.name] = torch.cuda.max_memory_allocated(self.device) - self.start
        else:
            self.range.__exit__(None, None, None)


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
    events = _trace_events(profiler)
    ranges = [
        (e["name"], float(e["ts"]), float(e["ts"]) + float(e["dur"]))
        for e in events
        if e.get("ph") == "X" and e.get("cat") == "user_annotation" and e["name"] in names
    ]
    totals, running = [], 0  # (time, bytes held after the event)
    for event in _cpu_memory_events(events):
        running += event["args"]["Bytes"]
        totals.append((float(event["ts"]), running))
    peaks = dict.fromkeys(names, 0)
    for name, begin, end in ranges:
        before = [held for time, held in totals if time < begin]
        inside = [held for time, held in totals if begin <= time <= end]
        # what was held when the phase began, or more if it allocated
        peaks[name] = max([before[-1] if before else 0, *inside])
    return peaks
