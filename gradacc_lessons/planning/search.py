"""Plan a fine-tune for a memory budget: the largest micro-batch that fits, and N.

`plan` traces the real training step on fake tensors (`predict`): the peak of a window
at any micro-batch, where in the step it happens and what it holds. A window of N >= 2
micro-batches holds more than one step (each new gradient is made beside the filled
`.grad`), so windows are traced as two micro-batches, as `plan_accumulation` measures
them; a micro-batch of the whole effective batch is one step without accumulation.

With `measure=True` the planner runs the step for real on the device you have and
measures it (`gradacc_lessons.memory.measure_training_memory`: the CUDA allocator's
peak on a GPU, the profiler's allocation events on the CPU), and returns the same `Plan`.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass

import torch
from torch import nn

from gradacc_lessons.checks import as_count
from gradacc_lessons.device import pick_device, seeded
from gradacc_lessons.display import Table
from gradacc_lessons.memory import format_bytes, measure_phase_peaks, measure_training_memory
from gradacc_lessons.planner import _micro_batch_sizes
from gradacc_lessons.planning.config_files import requested_dtype
from gradacc_lessons.planning.cpu_kernels import without_onednn
from gradacc_lessons.planning.fake_step import PARTS
from gradacc_lessons.planning.predict import Peak, PeakModel, traced_peak
from gradacc_lessons.planning.presets import DEFAULT_RESERVE_GIB, GiB, budget_bytes
from gradacc_lessons.planning.setup import TrainingSetup

FAKE_METHOD = "predicted: one training step traced on fake tensors"
DEFAULT_LORA_RANK = 16


@dataclass(frozen=True)
class Alternative:
    """Another recipe, when the one asked for does not fit: its peak and its plan."""

    change: str  # what to change, e.g. "checkpointing=True"
    smallest_peak_bytes: int  # the peak of a window of micro-batches of 1 sample
    micro_batch_size: int | None  # None: this one does not fit either
    accumulation_steps: int | None


@dataclass(frozen=True)
class Plan:
    """How to train `effective_batch` samples per optimizer step within `budget_bytes`."""

    model: str
    effective_batch: int  # samples (sequences, images) per optimizer step
    budget_bytes: int
    micro_batch_size: int | None  # the largest micro-batch that fits; None when none does
    accumulation_steps: int | None  # N = ceil(effective_batch / micro_batch_size)
    peak_bytes: int  # of a window of this plan (of 1-sample micro-batches when none fits)
    peak_phase: str  # "forward", "backward" or "optimizer step"
    at_peak: dict  # part -> bytes held at the peak: parameters, gradients, ...
    floor_bytes: int  # parameters + gradients + optimizer state: no micro-batch removes them
    no_accumulation_bytes: int  # the peak of the whole effective batch in one step
    curve: tuple  # (micro-batch, peak bytes) pairs, for the plot
    alternatives: tuple  # Alternative recipes, when nothing fits
    method: str
    optimizer_steps: int | None = None  # per epoch of `dataset_samples`
    reserve_bytes: int = 0  # kept free of the budget: CUDA context, workspaces, fragmentation
    notes: tuple = ()  # what the planner decided for you, in a sentence each

    @property
    def usable_bytes(self) -> int:
        """What the training window may use: the budget less the reserve."""
        return self.budget_bytes - self.reserve_bytes

    @property
    def fits(self) -> bool:
        return self.micro_batch_size is not None

    def __repr__(self) -> str:
        if not self.fits:
            options = "; ".join(
                f"{a.change}: {_gib(a.smallest_peak_bytes)}"
                + (
                    f" (micro-batch {a.micro_batch_size}, N={a.accumulation_steps})"
                    if a.micro_batch_size
                    else ""
                )
                for a in self.alternatives
            )
            return (
                f"Plan({self.model}: does not fit {self._room()}; a micro-batch of 1 "
                f"peaks at {_gib(self.peak_bytes)} in the {self.peak_phase}; alternatives: "
                f"{options or 'none'})"
            )
        return (
            f"Plan({self.model}: micro_batch_size={self.micro_batch_size}, "
            f"accumulation_steps={self.accumulation_steps} for an effective batch of "
            f"{self.effective_batch}; peak {_gib(self.peak_bytes)} in the {self.peak_phase} "
            f"of {self._room()}; without accumulation "
            f"{_gib(self.no_accumulation_bytes)})"
        )

    def _room(self) -> str:
        if not self.reserve_bytes:
            return _gib(self.budget_bytes)
        return (
            f"{_gib(self.usable_bytes)} ({_gib(self.budget_bytes)} less a reserve of "
            f"{_gib(self.reserve_bytes)})"
        )

    def _repr_html_(self) -> str:
        rows = [
            ["micro-batch", self.micro_batch_size or "none fits"],
            ["accumulation steps N", self.accumulation_steps or "-"],
            ["effective batch", self.effective_batch],
            ["budget (GiB)", round(self.budget_bytes / GiB, 3)],
            ["reserve: CUDA context, workspaces (GiB)", round(self.reserve_bytes / GiB, 3)],
            [f"peak (GiB), in the {self.peak_phase}", round(self.peak_bytes / GiB, 3)],
        ]
        rows += [[f"  {part} at the peak", round(self.at_peak[part] / GiB, 3)] for part in PARTS]
        rows.append(["without accumulation (GiB)", round(self.no_accumulation_bytes / GiB, 3)])
        rows += [
            [f"alternative: {a.change}", round(a.smallest_peak_bytes / GiB, 3)]
            for a in self.alternatives
        ]
        table = Table(headers=(f"{self.model}", self.method), rows=rows)._repr_html_()
        return table


def plan(
    model,
    effective_batch: int,
    budget: float | str,
    *,
    sequence_length: int | None = None,
    input_shape: tuple[int, ...] | None = None,
    effective_tokens: int | None = None,
    precision: str = "32-true",
    optimizer: str = "adamw",
    foreach: bool = True,
    fused: bool = False,
    checkpointing: bool = False,
    lora_rank: int | None = None,
    lora_targets="all-linear",
    allocator: str = "cuda",
    measure: bool = False,
    dataset_samples: int | None = None,
    alternatives: bool = True,
    reserve: float | None = None,
    on_measure=None,
) -> Plan:
    """The largest micro-batch whose window fits `budget`, and N for `effective_batch`.

    `model`: a preset name (`presets.PRESETS`), a config.json path or a Transformers
    config (then give `sequence_length`), or a function returning an nn.Module (then
    give `input_shape`, one sample's shape). `budget`: GiB, or a GPU name (`GPUS`).
    `effective_tokens` (instead of samples) is turned into whole sequences. `allocator`:
    "cuda" rounds each block up to 512 bytes as PyTorch's GPU allocator does, "cpu" not.
    `fused`: the optimizer's fused form (`torch.optim.AdamW(fused=True)`), which keeps no
    temporary of all weights in its step, as Transformers' Trainer uses by default
    (`adamw_torch_fused`); `foreach` (the default form on a GPU) keeps one.
    `reserve`: GiB kept free of the budget for what the allocator's peak does not count
    (the CUDA context, cuBLAS/cuDNN workspaces, fragmentation); by default
    `presets.DEFAULT_RESERVE_GIB` when planning for a GPU (`allocator="cuda"`, a budget
    of 4 GiB or more), else 0. The weights' dtype follows `precision`, whatever a
    config.json asks for (the plan's `notes` say so). `on_measure(micro_batch_size,
    accumulation_steps, peak_bytes)`, with `measure=True`, is called after each measurement
    (each runs a real training window: minutes for a large model on a CPU).
    Raises ValueError when the budget is below the floor (weights, gradients and
    optimizer state), naming the alternatives that fit (`alternatives=False`: none are
    traced, which is faster).
    """
    setup = TrainingSetup(
        model,
        sequence_length=sequence_length,
        input_shape=tuple(input_shape) if input_shape else None,
        precision=precision,
        optimizer=optimizer,
        foreach=foreach,
        fused=fused,
        checkpointing=checkpointing,
        lora_rank=lora_rank,
        lora_targets=lora_targets,
    )
    effective_batch = _effective_batch(effective_batch, effective_tokens, sequence_length)
    total = budget_bytes(budget)
    if allocator not in ("cuda", "cpu"):
        raise ValueError(f"allocator must be 'cuda' or 'cpu', got {allocator!r}")
    kept = _reserve_bytes(reserve, allocator, total)
    usable = total - kept
    search = _Search(setup, effective_batch, usable, allocator, measure, on_measure)
    result = search.run()
    if not result.fits and alternatives and not measure:
        options = tuple(_alternatives(setup, effective_batch, usable, allocator))
        result = _replace(result, alternatives=options)
    result = _replace(result, budget_bytes=total, reserve_bytes=kept, notes=_notes(setup))
    if usable < result.floor_bytes:
        raise ValueError(_below_floor(result))
    if dataset_samples is not None:
        result = _replace(result, optimizer_steps=math.ceil(dataset_samples / effective_batch))
    return result


class _Search:
    """The largest micro-batch under the budget, for one recipe."""

    def __init__(self, setup, effective_batch, budget, allocator, measure, on_measure=None):
        self.setup, self.effective_batch, self.budget = setup, effective_batch, budget
        self.allocator, self.measure, self.on_measure = allocator, measure, on_measure
        self.windows = None  # the model of windows of two micro-batches, made when needed
        self.known: dict = {}  # (size, accumulation_steps) -> Peak, traced or measured once
        self.traces: dict = {}  # the fake traces made, shared by both kinds of prediction

    def run(self) -> Plan:
        smallest = self.peak(1)
        if self.budget < smallest.floor_bytes:  # nothing fits: no need to trace more
            return self._plan(None, smallest, None)
        whole = self.peak(self.effective_batch) if self.effective_batch > 1 else smallest
        if whole.peak_bytes <= self.budget:
            return self._plan(self.effective_batch, whole, whole)
        sizes = [s for s in _micro_batch_sizes(self.effective_batch) if s < self.effective_batch]
        fitting = [s for s in sizes if self.line(s) <= self.budget]
        while fitting:  # confirm with the micro-batch's own trace
            size = fitting.pop()
            chosen = smallest if size == 1 else self.peak(size)
            if chosen.peak_bytes <= self.budget:
                return self._plan(size, chosen, whole)
        return self._plan(None, smallest, whole)

    def line(self, size: int) -> int:
        """The predicted peak of a window of two micro-batches of `size` samples.

        Measuring: the straight line through the measured peaks at 1 and 2 samples (each
        proposal is then confirmed by a measurement of its own).
        """
        if self.measure:
            one, two = (self.peak(s).peak_bytes for s in (1, 2))
            return one + (two - one) * (size - 1)
        if self.windows is None:
            self.windows = PeakModel(self.setup, 2, self.allocator, self.traces)
        return self.windows.peak_bytes(size)

    def peak(self, size: int) -> Peak:
        accumulation_steps = 1 if size >= self.effective_batch else 2
        if (size, accumulation_steps) not in self.known:
            if self.measure:
                peak = measured_peak(self.setup, size, accumulation_steps)
                self.known[size, accumulation_steps] = peak
                if self.on_measure is not None:
                    self.on_measure(size, accumulation_steps, peak.peak_bytes)
            else:
                self.known[size, accumulation_steps] = traced_peak(
                    self.setup, size, accumulation_steps, self.allocator, self.traces
                )
        return self.known[size, accumulation_steps]

    def _plan(self, size, chosen: Peak, whole: Peak | None) -> Plan:
        """The plan; `whole` None: below the floor, nothing more was traced."""
        curve = []
        if whole is not None:
            sizes = [2**i for i in range(20) if 2**i < self.effective_batch]
            curve = [(s, self.line(s)) for s in sizes] + [(self.effective_batch, whole.peak_bytes)]
        return Plan(
            model=self.setup.name,
            effective_batch=self.effective_batch,
            budget_bytes=self.budget,
            micro_batch_size=size,
            accumulation_steps=None if size is None else math.ceil(self.effective_batch / size),
            peak_bytes=chosen.peak_bytes,
            peak_phase=chosen.phase,
            at_peak=chosen.at_peak,
            floor_bytes=chosen.floor_bytes,
            no_accumulation_bytes=(whole or chosen).peak_bytes,
            curve=tuple(curve),
            alternatives=(),
            method=self.method,
        )

    @property
    def method(self) -> str:
        if not self.measure:
            return f"{FAKE_METHOD} ({self.allocator} allocator)"
        return "measured: " + ("CUDA allocator" if torch.cuda.is_available() else "CPU profiler")


def measured_peak(setup: TrainingSetup, micro_batch_size: int, accumulation_steps: int) -> Peak:
    """The peak of a window measured for real on the device here (the course's measurement).

    On the CPU, with PyTorch's own kernels: oneDNN's buffers depend on the CPU, and a
    trace with `allocator="cpu"` counts PyTorch's (`cpu_kernels.without_onednn`).
    """
    if not isinstance(setup, TrainingSetup):
        raise ValueError(f"setup must be a TrainingSetup, got {setup!r}")
    size = as_count("micro_batch_size", micro_batch_size)
    accumulation_steps = as_count("accumulation_steps", accumulation_steps)
    device = pick_device()
    with seeded(0):
        model = setup.build_model().to(device)
    if setup.autocast_dtype is not None:
        model = _Autocast(model, device.type, setup.autocast_dtype)
    optimizer = setup.optimizer_for(model)
    inputs, targets = (t.to(device) for t in setup.batch(size * accumulation_steps))
    with without_onednn():
        report = measure_training_memory(
            model, optimizer, setup.loss_fn, inputs, targets, accumulation_steps
        )
        phases = measure_phase_peaks(
            model, optimizer, setup.loss_fn, inputs, targets, accumulation_steps
        )
    highest = max(phases, key=lambda phase: phase.peak_bytes)
    return Peak(
        peak_bytes=report.peak_bytes,
        phase=highest.name.rstrip(" 0123456789"),
        at_peak={  # the step's parts: the measurement does not say what the peak holds
            "parameters": report.parameter_bytes,
            "gradients": report.gradient_bytes,
            "optimizer state": report.optimizer_bytes,
            "activations": report.activation_bytes,
            "temporaries": report.other_bytes,
        },
        floor_bytes=report.floor_bytes,
        activation_bytes=report.activation_bytes,
    )


class _Autocast(nn.Module):
    """Runs a model's forward under torch.autocast (the "bf16-mixed" precision)."""

    def __init__(self, model, device_type: str, dtype):
        super().__init__()
        self.model, self.device_type, self.dtype = model, device_type, dtype

    def forward(self, inputs):
        with torch.autocast(self.device_type, dtype=self.dtype):
            return self.model(inputs)


def _reserve_bytes(reserve, allocator: str, total: int) -> int:
    """The bytes kept free; by default the GPU's reserve, none for the CPU or a toy budget."""
    if reserve is None:
        on_a_card = allocator == "cuda" and total >= 4 * DEFAULT_RESERVE_GIB * GiB
        reserve = DEFAULT_RESERVE_GIB if on_a_card else 0.0
    if isinstance(reserve, bool) or not isinstance(reserve, int | float) or reserve < 0:
        raise ValueError(f"reserve must be a number of GiB >= 0, got {reserve!r}")
    kept = int(reserve * GiB)
    if kept >= total:
        raise ValueError(
            f"reserve {reserve} GiB leaves nothing of the budget {_gib(total)}: pass a smaller "
            f"reserve (the default is {DEFAULT_RESERVE_GIB} GiB on a GPU)"
        )
    return kept


def _notes(setup: TrainingSetup) -> tuple:
    """What the plan decided that the recipe did not say, a sentence each."""
    notes = []
    asked = requested_dtype(setup.model)
    weights = "bfloat16" if setup.precision == "bf16-true" else "float32"
    if asked is not None and asked != weights:
        notes.append(
            f"the config says {asked}; planning {setup.precision} ({weights} weights) as asked"
        )
    if setup.attention_dropout:
        notes.append(
            f"attention dropout {setup.attention_dropout:g} planned as a GPU runs it, inside flash "
            "attention (no attention matrix saved); PyTorch's CPU kernels would save one"
        )
    return tuple(notes)


def _effective_batch(samples, tokens, sequence_length) -> int:
    if tokens is not None:
        if not sequence_length:
            raise ValueError("effective_tokens needs sequence_length, to count whole sequences")
        return math.ceil(as_count("effective_tokens", tokens) / sequence_length)
    return as_count("effective_batch", samples, fix="samples per optimizer step")


def _alternatives(setup: TrainingSetup, effective_batch: int, budget: int, allocator: str):
    """Every combination of the recipe's changes that could help, the best first.

    The changes: activation checkpointing, LoRA (Transformers models), bfloat16 weights and
    a fused optimizer (no temporary of all weights in its step). Best: those that fit
    first, with the fewest changes, then the largest micro-batch.
    """
    found = [_try(setup, fields, effective_batch, budget, allocator) for fields in _changes(setup)]
    useful = [a for a in found if not any(_better(b, a) for b in found)]
    return sorted(useful, key=lambda a: (a.micro_batch_size is None, a.change.count(","),
                                         -(a.micro_batch_size or 0)))  # fmt: skip


def _better(b: Alternative, a: Alternative) -> bool:
    """b asks for fewer changes than a (a subset of them) and fits a micro-batch as large."""
    fewer = set(b.change.split(", ")) < set(a.change.split(", "))
    return fewer and (b.micro_batch_size or 0) >= (a.micro_batch_size or 0)


def _changes(setup: TrainingSetup) -> list[dict]:
    """Each non-empty combination of the changes the recipe does not already have."""
    options = []
    if not setup.checkpointing:
        options.append({"checkpointing": True})
    if setup.lora_rank is None and setup.is_transformer:
        options.append({"lora_rank": DEFAULT_LORA_RANK})
    if setup.precision != "bf16-true":
        options.append({"precision": "bf16-true"})
    if not setup.fused:
        options.append({"fused": True})
    combos = []
    for picked in itertools.product((False, True), repeat=len(options)):
        fields = {k: v for take, option in zip(picked, options) if take for k, v in option.items()}
        if fields:
            combos.append(fields)
    return combos


def _try(setup, fields: dict, effective_batch: int, budget: int, allocator: str) -> Alternative:
    result = _Search(setup.replace(**fields), effective_batch, budget, allocator, measure=False)
    smallest = result.peak(1).peak_bytes
    found = result.run() if smallest <= budget else None
    return Alternative(
        change=", ".join(f"{key}={value!r}" for key, value in fields.items()).replace("'", '"'),
        smallest_peak_bytes=smallest,
        micro_batch_size=found.micro_batch_size if found else None,
        accumulation_steps=found.accumulation_steps if found else None,
    )


def _below_floor(result: Plan) -> str:
    fitting = [a for a in result.alternatives if a.micro_batch_size is not None]
    if not result.alternatives:
        return (
            f"budget {result._room()} is below the floor of "
            f"{_gib(result.floor_bytes)}: weights, gradients and optimizer state alone do not "
            f"fit, whatever the micro-batch. Try LoRA (lora_rank=16), precision='bf16-true', "
            f"or plan(..., alternatives=True) to see which of them fit"
        )
    advice = (
        "; ".join(
            f"{a.change} fits (micro-batch {a.micro_batch_size}, N={a.accumulation_steps}; a "
            f"micro-batch of 1 peaks at {_gib(a.smallest_peak_bytes)})"
            for a in fitting[:3]
        )
        or "no alternative fits either: a larger GPU, or sharding over several (lesson 6)"
    )
    return (
        f"budget {result._room()} is below the floor of {_gib(result.floor_bytes)}: "
        f"weights, gradients and optimizer state alone do not fit, whatever the micro-batch. "
        f"Try: {advice}"
    )


def _replace(result: Plan, **changes) -> Plan:
    return dataclasses.replace(result, **changes)


def _option(alternative: Alternative) -> str:
    text = f"{alternative.change}: {_gib(alternative.smallest_peak_bytes)}"
    if alternative.micro_batch_size is None:
        return text + " (does not fit)"
    return (
        text + f" (micro-batch {alternative.micro_batch_size}, N={alternative.accumulation_steps})"
    )


def _gib(size: int) -> str:
    return f"{size / GiB:.3f} GiB" if size >= GiB / 10 else format_bytes(size)
