"""The two instruments of the memory measurement: the peak, and what autograd saves.

- `_peak_tracker`: the peak of a block, from the CUDA caching allocator on a GPU and from
  the profiler's allocation events on the CPU (`_profiler_peak`); `peak_bytes_of(step)` is
  the same measurement of one function, for a lesson's own code;
- `_SavedTensorCounter`: the bytes of the tensors autograd saves for backward
  (`saved_tensors_hooks`), de-duplicated by storage and extent, parameters left out.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator

import torch
from torch import nn

CPU_METHOD = "CPU: profiler allocation events (peak), saved-tensor hooks (activations)"
CUDA_METHOD = "CUDA: allocator's max_memory_allocated (peak), saved-tensor hooks (activations)"


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


def peak_bytes_of(step: Callable[[], object], device: torch.device | str) -> int:
    """The most memory allocated on `device` while `step()` ran, beyond what was held before.

    On a GPU: synchronise, read what is allocated, reset the allocator's peak, run `step`,
    synchronise, read the peak. On the CPU: the profiler's allocation events.

    >>> peak_bytes_of(lambda: torch.ones(2**18).sum(), "cpu") >= 2**20  # 1 MiB of float32
    True
    """
    if not callable(step):
        raise ValueError(f"step must be a function of no argument, got {step!r}")
    device = torch.device(device)
    with _peak_tracker(device) as peak:
        step()
    if peak["bytes"] is None:
        raise ValueError(f"device={device} has no peak statistics; measure on 'cuda' or 'cpu'")
    return peak["bytes"]


def _trace_events(profiler) -> list[dict]:
    """The events of a finished profiler's trace, as its Chrome trace JSON lists them."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "trace.json")
        profiler.export_chrome_trace(path)
        with open(path, encoding="utf-8") as file:
            return json.load(file)["traceEvents"]


def _cpu_memory_events(events: list[dict]) -> list[dict]:
    """A trace's CPU allocations (+ bytes) and frees (- bytes), in the order they happened."""
    memory = [
        e for e in events if e.get("name") == "[memory]" and e["args"].get("Device Type") == 0
    ]
    return sorted(memory, key=lambda e: (float(e["ts"]), e["args"].get("Ev Idx", 0)))


def _profiler_peak(prof) -> int:
    """The largest running sum of the CPU allocation events (+) and frees (-) of a trace."""
    memory = _cpu_memory_events(_trace_events(prof))
    if not memory:
        # A change of the trace format would otherwise report peak = floor, silently.
        raise RuntimeError(
            f"the profiler recorded no CPU allocation event in the training step; torch "
            f"{torch.__version__} may write its trace differently from what "
            f"gradacc_lessons.memory reads ('[memory]' events with 'Device Type' 0)"
        )
    running = peak = 0
    for event in memory:
        running += event["args"]["Bytes"]
        peak = max(peak, running)
    return peak
