"""The peak of one window at any micro-batch, from a few fake-tensor traces.

Two facts keep a plan to a handful of traces, each checked by a test against the full
trace (tests/test_planning.py):

- in b: every tensor of a step is either fixed (weights, gradients, optimizer state) or
  proportional to the micro-batch b, and the step runs the same operations whatever b.
  So the bytes held after the i-th allocation are a_i + c_i × b, two traces (b = 1 and
  b = 2) give every a_i and c_i, and the peak at any b is the largest of those lines;
- in the layers: a transformer's layers are identical, so every part of the step grows
  by the same amount with each layer. Two traces with 1 and 2 layers give that amount,
  and a 32-layer model is the 1-layer trace plus 31 times the difference.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass

from gradacc_lessons.planning.cpu_kernels import without_onednn
from gradacc_lessons.planning.fake_step import PARTS, StepTrace, fake_step
from gradacc_lessons.planning.setup import TrainingSetup

CUDA_BLOCK = 512  # the CUDA caching allocator rounds every block up to 512 bytes


@dataclass(frozen=True)
class Peak:
    """The peak of one window: its bytes, its phase, and what it holds, part by part."""

    peak_bytes: int
    phase: str  # "forward", "backward" or "optimizer step"
    at_peak: dict  # part -> bytes held at the peak
    floor_bytes: int  # parameters + gradients + optimizer state of the whole step
    activation_bytes: int  # what the largest forward saved for backward
    phase_peaks: dict = dataclasses.field(default_factory=dict, repr=False)  # see StepTrace


def trace(
    setup: TrainingSetup,
    micro_batch_size: int,
    accumulation_steps: int,
    allocator: str,
    cache: dict | None = None,
) -> StepTrace:
    """One fake-tensor trace of a window of `accumulation_steps` micro-batches.

    `cache`: a dict that keeps the traces already made (a plan asks for some twice).
    `allocator="cpu"` traces the kernels a CPU measurement runs: PyTorch's own, with
    oneDNN off (`cpu_kernels.without_onednn`).
    """
    _check(setup, allocator)
    key = (repr(setup), micro_batch_size, accumulation_steps, allocator)
    if cache is not None and key in cache:
        return cache[key]
    round_to = CUDA_BLOCK if allocator == "cuda" else 1
    kernels = without_onednn() if allocator == "cpu" else contextlib.nullcontext()
    with setup.tracing(), kernels:
        step = fake_step(
            setup.build_model,
            setup.optimizer_for,
            setup.batch,
            setup.loss_fn,
            micro_batch_size,
            accumulation_steps,
            autocast_dtype=setup.autocast_dtype,
            round_to=round_to,
            cpu_kernels=allocator == "cpu",
        )
    if cache is not None:
        cache[key] = step
    return step


class PeakModel:
    """Predicts the peak of a window at any micro-batch from four small traces (see above)."""

    def __init__(
        self,
        setup: TrainingSetup,
        accumulation_steps: int,
        allocator: str = "cuda",
        cache: dict | None = None,
    ):
        self.setup, self.accumulation_steps = setup, accumulation_steps
        self.allocator, self.cache = allocator, cache
        layers = setup.layer_count
        self.layers = layers
        self.extrapolate = layers is not None and layers > 2
        counts = (1, 2) if self.extrapolate else (None,)
        self.lines = {n: self._lines(setup.replace(layers=n)) for n in counts}

    def _lines(self, setup: TrainingSetup):
        one, two = (self._trace(setup, b) for b in (1, 2))
        if len(one.totals) != len(two.totals):  # a different sequence of operations
            return None, setup
        slopes = [b - a for a, b in zip(one.totals, two.totals)]
        return (one.totals, slopes, one.phases), setup

    def peak_bytes(self, micro_batch_size: int) -> int:
        """The predicted peak of a window of micro-batches of `micro_batch_size` samples."""
        values = {n: self._peak_at(lines, micro_batch_size) for n, lines in self.lines.items()}
        if not self.extrapolate:
            return max(values[None].values())
        # each phase's peak grows by its own amount per layer: extrapolate, then take the max
        one, two = values[1], values[2]
        return max(one[p] + (self.layers - 1) * (two[p] - one[p]) for p in one.keys() & two.keys())

    def _peak_at(self, lines, micro_batch_size: int) -> dict:
        """{phase: its peak} at `micro_batch_size`."""
        line, setup = lines
        if line is None:  # fall back on a trace at this micro-batch
            step = self._trace(setup, micro_batch_size)
            return {phase: peak for phase, (peak, _) in step.phase_peaks.items()}
        peaks: dict[str, int] = {}
        for a, c, phase in zip(*line):
            peaks[phase] = max(peaks.get(phase, a), a + c * (micro_batch_size - 1))
        return peaks

    def _trace(self, setup, micro_batch_size):
        return trace(setup, micro_batch_size, self.accumulation_steps, self.allocator, self.cache)


def traced_peak(
    setup: TrainingSetup,
    micro_batch_size: int,
    accumulation_steps: int,
    allocator: str,
    cache: dict | None = None,
) -> Peak:
    """The peak at `micro_batch_size` and its parts, from traces at this micro-batch."""
    _check(setup, allocator)
    layers = setup.layer_count
    if layers is None or layers <= 2:
        return _as_peak(trace(setup, micro_batch_size, accumulation_steps, allocator, cache))
    one, two = (
        _as_peak(
            trace(setup.replace(layers=n), micro_batch_size, accumulation_steps, allocator, cache)
        )
        for n in (1, 2)
    )
    return _extrapolate(one, two, layers - 1)


def _check(setup, allocator: str) -> None:
    if not isinstance(setup, TrainingSetup):
        raise ValueError(f"setup must be a TrainingSetup, got {setup!r}")
    if allocator not in ("cuda", "cpu"):
        raise ValueError(f"allocator must be 'cuda' (512-byte blocks) or 'cpu', got {allocator!r}")


def _as_peak(step: StepTrace) -> Peak:
    return Peak(
        peak_bytes=step.peak_bytes,
        phase=step.peak_phase,
        at_peak=dict(step.at_peak),
        floor_bytes=step.parameter_bytes + step.gradient_bytes + step.optimizer_bytes,
        activation_bytes=step.activation_bytes,
        phase_peaks=dict(step.phase_peaks),
    )


def _extrapolate(one: Peak, two: Peak, extra_layers: int) -> Peak:
    """The peak of a model with `extra_layers` more layers than the 1-layer trace `one`.

    Each phase's peak (and what it holds) grows by its own amount per layer, so each is
    extrapolated alone, and the largest wins: the forward of a second micro-batch can
    overtake the first backward as layers are added.

    >>> a = Peak(10, "backward", {"activations": 4}, 5, 4, {"backward 1": (10, {"activations": 4})})
    >>> b = Peak(13, "backward", {"activations": 6}, 6, 6, {"backward 1": (13, {"activations": 6})})
    >>> _extrapolate(a, b, 30)
    Peak(peak_bytes=100, phase='backward', at_peak={'activations': 64}, floor_bytes=35, \
activation_bytes=64)
    """

    def line(x: int, y: int) -> int:
        return x + extra_layers * (y - x)

    phases = {}
    for name in one.phase_peaks.keys() & two.phase_peaks.keys():
        (x, x_parts), (y, y_parts) = one.phase_peaks[name], two.phase_peaks[name]
        phases[name] = (line(x, y), {part: line(x_parts[part], y_parts[part]) for part in x_parts})
    name = max(phases, key=lambda phase: phases[phase][0])
    return Peak(
        peak_bytes=phases[name][0],
        phase=name.rstrip(" 0123456789"),
        at_peak=phases[name][1],
        floor_bytes=line(one.floor_bytes, two.floor_bytes),
        activation_bytes=line(one.activation_bytes, two.activation_bytes),
        phase_peaks=phases,
    )


__all__ = ["PARTS", "Peak", "PeakModel", "trace", "traced_peak"]
