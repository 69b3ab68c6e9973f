"""Lesson 1's last two measurements: which loop trains like the full batch, and for how long.

`compare_loops` trains copies of one model with each printed loop (the textbook loop and its
off-by-one twin) and a third copy on the full batches the windows stand for, then says how many
optimizer steps each took and how far its parameters end from the full batch's.
`same_training` does the same for many steps with real optimizers (SGD with momentum, AdamW),
in float32 and float64: accumulation against full batches, step after step.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from gradacc_lessons.accumulate import merge_windows, split_batch, train_accumulated
from gradacc_lessons.checks import as_count, as_positive
from gradacc_lessons.compare import parameters_of, relative_error
from gradacc_lessons.demos.loops import count_steps, full_batch_loop, off_by_one_loop, textbook_loop
from gradacc_lessons.display import Result, Table

# The two optimizers lesson 1 trains with, as functions of the parameters.
OPTIMIZERS: dict[str, Callable] = {
    "SGD + momentum": lambda params: torch.optim.SGD(params, lr=0.1, momentum=0.9),
    "AdamW": lambda params: torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01),
}


@dataclass(frozen=True)
class LoopRun:
    """One loop's training: its optimizer steps and its distance to the full batch."""

    loop: str  # the loop's name
    steps: int  # optimizer.step() calls
    relative_error: float  # of its parameters against the full-batch copy's


@dataclass(frozen=True, repr=False)
class LoopComparison(Result):
    """Each loop's run, and the steps of the full-batch reference."""

    runs: tuple[LoopRun, ...]
    full_batch_steps: int

    def run(self, loop: str) -> LoopRun:
        """The run of the loop named `loop` (e.g. "off_by_one_loop")."""
        for run in self.runs:
            if run.loop == loop:
                return run
        raise ValueError(f"loop={loop!r} was not compared; compared: {[r.loop for r in self.runs]}")

    def table(self) -> Table:
        rows = [(run.loop, run.steps, f"{run.relative_error:.1e}") for run in self.runs]
        rows.append(("full batch", self.full_batch_steps, "(the reference)"))
        return Table(("loop", "optimizer steps", "parameters vs full batch (relative)"), rows)


def compare_loops(
    model: torch.nn.Module,
    loss_fn: Callable,
    micro_batches: Sequence[tuple[torch.Tensor, torch.Tensor]],
    accumulation_steps: int,
    loops: Sequence[Callable] = (textbook_loop, off_by_one_loop),
    lr: float = 0.5,
) -> LoopComparison:
    """Train a copy of `model` with each loop, and one on the merged windows; `model` is kept.

    Every copy uses plain SGD with learning rate `lr`, so a difference comes from the loop.
    """
    as_count("accumulation_steps", accumulation_steps)
    as_positive("lr", lr)
    _check_model(model)

    def train_copy(loop, *args):
        trained = copy.deepcopy(model)
        steps = _train(loop, trained, torch.optim.SGD(trained.parameters(), lr=lr), loss_fn, *args)
        return parameters_of(trained), steps

    reference, reference_steps = train_copy(
        full_batch_loop, merge_windows(micro_batches, accumulation_steps)
    )
    runs = []
    for loop in loops:
        params, steps = train_copy(loop, list(micro_batches), accumulation_steps)
        runs.append(LoopRun(loop.__name__, steps, relative_error(reference, params)))
    return LoopComparison(tuple(runs), reference_steps)


@dataclass(frozen=True)
class TrainingGap:
    """How far accumulated training ends from full-batch training, for one optimizer and dtype."""

    optimizer: str
    dtype: str  # "float32" or "float64"
    steps: int  # optimizer steps each run took
    relative_error: float  # of the accumulated run's parameters against the full batch's


@dataclass(frozen=True, repr=False)
class SameTraining(Result):
    """The gap after training, for each optimizer in each dtype."""

    gaps: tuple[TrainingGap, ...]

    def gap(self, optimizer: str, dtype: str) -> float:
        """The relative error for `optimizer` (a key of OPTIMIZERS) in `dtype` ("float64")."""
        for gap in self.gaps:
            if (gap.optimizer, gap.dtype) == (optimizer, dtype):
                return gap.relative_error
        raise ValueError(
            f"no run for optimizer={optimizer!r}, dtype={dtype!r}; "
            f"runs: {[(g.optimizer, g.dtype) for g in self.gaps]}"
        )

    def table(self) -> Table:
        rows = [(g.optimizer, g.dtype, g.steps, f"{g.relative_error:.1e}") for g in self.gaps]
        return Table(("optimizer", "dtype", "steps", "parameters differ by (relative)"), rows)


def same_training(
    model: torch.nn.Module,
    loss_fn: Callable,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    micro_batches: int,
    accumulation_steps: int,
    optimizers: dict[str, Callable] | None = None,
    dtypes: Sequence[torch.dtype] = (torch.float32, torch.float64),
) -> SameTraining:
    """Train copies of `model` on `inputs` split into `micro_batches`: full batches against
    windows of `accumulation_steps` micro-batches, with each optimizer, in each dtype.

    `optimizers` maps a name to a function of the parameters (default: `OPTIMIZERS`).
    `model` is left as it is.
    """
    as_count("micro_batches", micro_batches)
    as_count("accumulation_steps", accumulation_steps)
    _check_model(model)
    optimizers = OPTIMIZERS if optimizers is None else optimizers
    if not isinstance(optimizers, dict) or not optimizers:
        raise ValueError(
            f"optimizers must be a dict name -> function of the parameters, got {optimizers!r}"
        )
    gaps = []
    for dtype in dtypes:
        split = split_batch(inputs.to(dtype), targets, micro_batches)
        for name, make_optimizer in optimizers.items():
            full, accumulated = copy.deepcopy(model).to(dtype), copy.deepcopy(model).to(dtype)
            batches = merge_windows(split, accumulation_steps)
            steps = _train(
                full_batch_loop, full, make_optimizer(full.parameters()), loss_fn, batches
            )
            train_accumulated(
                accumulated,
                make_optimizer(accumulated.parameters()),
                loss_fn,
                split,
                accumulation_steps=accumulation_steps,
            )
            difference = relative_error(parameters_of(full), parameters_of(accumulated))
            gaps.append(TrainingGap(name, str(dtype).removeprefix("torch."), steps, difference))
    return SameTraining(tuple(gaps))


def _train(loop: Callable, model: torch.nn.Module, optimizer, loss_fn, *args) -> int:
    """Train `model` with `loop`; the number of optimizer steps it took."""
    return count_steps(optimizer, lambda: loop(model, optimizer, loss_fn, *args))


def _check_model(model) -> None:
    if not isinstance(model, torch.nn.Module):
        raise ValueError(f"model must be a torch.nn.Module, got {type(model).__name__}")
