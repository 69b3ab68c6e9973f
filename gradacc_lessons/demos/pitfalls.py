"""The measured damage of each scaling pitfall: its broken loop and its fix against the full batch.

Each loop of `gradacc_lessons.demos.loops` runs with a `StepRecorder` in place of the
optimizer: the recorder keeps the gradient (and learning rate) every step() sees
and leaves the parameters alone, so each window can be compared with one batch
of the same samples, computed independently by `full_batch_gradients`.

The token pitfalls (a token mean divided by N) are in `gradacc_lessons.demos.token_pitfalls`,
what a loss N times too large does to SGD and AdamW in `gradacc_lessons.demos.loss_scale`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import torch

from gradacc_lessons.accumulate import (
    accumulated_gradients,
    full_batch_gradients,
    merge_windows,
    split_batch,
)
from gradacc_lessons.checks import as_count, as_counts, as_fraction, as_positive
from gradacc_lessons.compare import relative_error
from gradacc_lessons.data import make_classification
from gradacc_lessons.demos.loops import (
    clip_once_loop,
    clip_per_micro_batch_loop,
    divide_by_n_loop,
    last_window_loop,
    log_last_micro_batch_loop,
    log_window_loss_loop,
    scheduler_per_micro_batch_loop,
    scheduler_per_step_loop,
    weight_by_samples_loop,
)
from gradacc_lessons.device import seeded
from gradacc_lessons.display import Result, Table
from gradacc_lessons.models import MLP


class StepRecorder(torch.optim.Optimizer):
    """An optimizer that records the gradients and learning rate each step() sees.

    It leaves the parameters alone, so every window is measured at the same point
    and can be compared with the full batch of that window.

    >>> model = torch.nn.Linear(2, 1)
    >>> recorder = StepRecorder(model)
    >>> model(torch.ones(1, 2)).sum().backward(); recorder.step()
    >>> len(recorder.gradients), recorder.lrs
    (1, [1.0])
    """

    def __init__(self, model: torch.nn.Module, lr: float = 1.0):
        self._named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        super().__init__([p for _, p in self._named], {"lr": lr})
        self.gradients: list[dict[str, torch.Tensor]] = []
        self.lrs: list[float] = []
        self.logged = None  # what the loop returned (the losses it logged), if anything

    @torch.no_grad()
    def step(self, closure=None):
        self.lrs.append(float(self.param_groups[0]["lr"]))
        self.gradients.append(
            {n: torch.zeros_like(p) if p.grad is None else p.grad.clone() for n, p in self._named}
        )

    def __repr__(self) -> str:
        return f"StepRecorder(steps={len(self.gradients)})"


def uneven_sizes(batch: int, accumulation_steps: int, spread: float, seed: int = 0) -> list[int]:
    """`accumulation_steps` micro-batch sizes adding up to `batch`, within ±spread of the mean.

    >>> uneven_sizes(64, 4, spread=0.0)
    [16, 16, 16, 16]
    >>> sum(uneven_sizes(64, 4, spread=0.9))
    64
    """
    batch = as_count("batch", batch)
    accumulation_steps = as_count("accumulation_steps", accumulation_steps, 1, batch)
    spread = as_fraction("spread", spread, one_allowed=False)
    seed = as_count("seed", seed, minimum=0)
    generator = torch.Generator().manual_seed(seed)
    shares = 1 + spread * (
        2 * torch.rand(accumulation_steps, generator=generator, dtype=torch.float64) - 1
    )
    raw = shares / shares.sum() * (batch - accumulation_steps)  # every micro-batch keeps one sample
    sizes = [1 + int(r) for r in raw.floor()]
    for i in (raw - raw.floor()).argsort(descending=True)[: batch - sum(sizes)].tolist():
        sizes[i] += 1  # hand the rounding remainder to the largest fractions
    return sizes


@dataclass(frozen=True, repr=False)
class Damage(Result):
    """How far a broken loop and its fix land from the full batch (relative errors)."""

    pitfall: str
    broken: float
    fixed: float
    details: dict = field(default_factory=dict)

    def table(self) -> Table:
        return damage_table([self])


def damage_table(damages: list) -> Table:
    """One row per pitfall: the broken loop's error and the fix's.

    >>> damage_table([Damage("logged loss", 0.25, 0.0)])
    pitfall      broken    fixed
    logged loss   25.0%  0.0e+00
    """
    if not damages or not all(isinstance(d, Damage) for d in damages):
        raise ValueError(f"damages must be a non-empty list of Damage, got {damages!r}")
    rows = [(d.pitfall, f"{d.broken:.1%}", f"{d.fixed:.1e}") for d in damages]
    return Table(("pitfall", "broken", "fixed"), rows)


def classification_problem(
    samples: int = 64, seed: int = 0, dtype: torch.dtype = torch.float64
) -> tuple[torch.nn.Module, torch.Tensor, torch.Tensor]:
    """A small MLP and a 4-class problem of `samples` points, in `dtype`."""
    samples, seed = as_count("samples", samples), as_count("seed", seed, minimum=0)
    x, y = make_classification(samples=samples, features=20, classes=4, seed=seed, dtype=dtype)
    with seeded(seed):
        model = MLP(20, 4, hidden=32).to(dtype)
    return model, x, y


def record(loop, model, loss_fn, micro_batches, accumulation_steps, **extras) -> StepRecorder:
    """Run `loop` with a StepRecorder as its optimizer; return the recorder."""
    as_count("accumulation_steps", accumulation_steps)
    recorder = StepRecorder(model)
    result = loop(model, recorder, loss_fn, micro_batches, accumulation_steps, **extras)
    recorder.logged = result
    model.zero_grad(set_to_none=True)
    return recorder


def window_errors(recorder: StepRecorder, references: list[dict]) -> list[float]:
    """L2 relative error of each recorded step against its window's reference gradient."""
    if not isinstance(recorder, StepRecorder) or not references:
        raise ValueError(
            "window_errors needs a StepRecorder and references, one gradient dict per window"
        )
    if len(recorder.gradients) != len(references):
        raise ValueError(f"{len(recorder.gradients)} steps recorded, {len(references)} expected")
    return [relative_error(ref, got) for ref, got in zip(references, recorder.gradients)]


def _gradient_damage(
    name, model, loss_fn, micro_batches, accumulation_steps, broken, fixed, **extras
):
    """Worst window error of the broken and the fixed loop against one batch per window."""
    windows = merge_windows(micro_batches, accumulation_steps)
    references = [full_batch_gradients(model, loss_fn, x, y) for x, y in windows]
    errors = {}
    for label, loop in (("broken", broken), ("fixed", fixed)):
        recorder = record(loop, model, loss_fn, micro_batches, accumulation_steps, **extras)
        errors[label] = window_errors(recorder, references)
    return Damage(name, max(errors["broken"]), max(errors["fixed"]), {"per_window": errors})


def compute_uneven_damage(sizes: tuple[int, ...] = (24, 24, 16), seed: int = 0) -> Damage:
    """One window of uneven micro-batches: divide by N vs weight by samples (float64).

    >>> compute_uneven_damage((8, 8)).broken < 1e-12
    True
    """
    as_counts("sizes", sizes)
    model, x, y = classification_problem(sum(sizes), seed)
    micro_batches = split_batch(x, y, sizes=list(sizes))
    return _gradient_damage(
        "uneven micro-batches",
        model,
        torch.nn.functional.cross_entropy,
        micro_batches,
        len(sizes),
        divide_by_n_loop,
        weight_by_samples_loop,
    )


def compute_last_window_damage(
    micro_batch_count: int = 10, accumulation_steps: int = 4, size: int = 8, seed: int = 0
) -> Damage:
    """An epoch whose last window is short: divide by the configured N vs by samples.

    >>> compute_last_window_damage(micro_batch_count=8, accumulation_steps=4).broken < 1e-12
    True
    """
    as_count("micro_batch_count", micro_batch_count)
    as_count("accumulation_steps", accumulation_steps)
    as_count("size", size)
    model, x, y = classification_problem(micro_batch_count * size, seed)
    micro_batches = split_batch(x, y, sizes=[size] * micro_batch_count)
    return _gradient_damage(
        "last incomplete window",
        model,
        torch.nn.functional.cross_entropy,
        micro_batches,
        accumulation_steps,
        last_window_loop,
        weight_by_samples_loop,
    )


def compute_clipping_damage(
    max_norm_fraction: float = 0.2, accumulation_steps: int = 4, size: int = 16, seed: int = 0
) -> Damage:
    """Clipping inside the window vs once per window, against the clipped full-batch gradient.

    max_norm is `max_norm_fraction` times the full batch's gradient norm, so clipping acts.

    >>> compute_clipping_damage().broken > 0.01
    True
    """
    as_positive("max_norm_fraction", max_norm_fraction)
    as_count("accumulation_steps", accumulation_steps)
    as_count("size", size)
    model, x, y = classification_problem(accumulation_steps * size, seed)
    loss_fn = torch.nn.functional.cross_entropy
    full = full_batch_gradients(model, loss_fn, x, y)
    norm = sum(float((g**2).sum()) for g in full.values()) ** 0.5
    max_norm = max_norm_fraction * norm
    clipped = {n: g * min(1.0, max_norm / (norm + 1e-6)) for n, g in full.items()}  # by hand
    micro_batches = split_batch(x, y, sizes=[size] * accumulation_steps)
    errors = {}
    for label, loop in (("broken", clip_per_micro_batch_loop), ("fixed", clip_once_loop)):
        recorder = record(
            loop, model, loss_fn, micro_batches, accumulation_steps, max_norm=max_norm
        )
        errors[label] = window_errors(recorder, [clipped])[0]
    return Damage(
        "clipping per micro-batch", errors["broken"], errors["fixed"], {"max_norm": max_norm}
    )


def compute_logging_damage(
    micro_batch_count: int = 8, accumulation_steps: int = 4, size: int = 16, seed: int = 0
) -> Damage:
    """The logged loss of each window against the mean loss of its samples in one batch.

    >>> compute_logging_damage().fixed < 1e-12
    True
    """
    as_count("micro_batch_count", micro_batch_count)
    as_count("accumulation_steps", accumulation_steps)
    as_count("size", size)
    model, x, y = classification_problem(micro_batch_count * size, seed)
    loss_fn = torch.nn.functional.cross_entropy
    micro_batches = split_batch(x, y, sizes=[size] * micro_batch_count)
    with torch.no_grad():
        truth = [
            loss_fn(model(wx), wy).item()
            for wx, wy in merge_windows(micro_batches, accumulation_steps)
        ]
    logged = {}
    for label, loop in (("broken", log_last_micro_batch_loop), ("fixed", log_window_loss_loop)):
        logged[label] = record(loop, model, loss_fn, micro_batches, accumulation_steps).logged
    worst = {k: max(abs(a - t) / t for a, t in zip(v, truth)) for k, v in logged.items()}
    return Damage("logged loss", worst["broken"], worst["fixed"], {"truth": truth, **logged})


def warmup(warmup_steps: int):
    """A linear warm-up over `warmup_steps` scheduler steps, for LambdaLR."""
    warmup_steps = as_count("warmup_steps", warmup_steps)
    return lambda step: min(1.0, (step + 1) / warmup_steps)


def compute_schedules(
    windows: int = 12, accumulation_steps: int = 4, size: int = 8, warmup_steps: int = 8
) -> dict:
    """Learning rate at each optimizer step against samples seen: full batch, broken, fixed.

    The full-batch run steps its scheduler once per batch of accumulation_steps * size.

    >>> s = compute_schedules(windows=3, accumulation_steps=2, warmup_steps=4)
    >>> s["full"], s["fixed"]
    ([0.25, 0.5, 0.75], [0.25, 0.5, 0.75])
    """
    as_count("windows", windows)
    as_count("accumulation_steps", accumulation_steps)
    as_count("size", size)
    as_count("warmup_steps", warmup_steps)
    model, x, y = classification_problem(windows * accumulation_steps * size, seed=0)
    loss_fn = torch.nn.functional.cross_entropy
    micro_batches = split_batch(x, y, sizes=[size] * (windows * accumulation_steps))
    lrs = {}
    for label, loop, data, n in (
        ("full", scheduler_per_step_loop, merge_windows(micro_batches, accumulation_steps), 1),
        ("broken", scheduler_per_micro_batch_loop, micro_batches, accumulation_steps),
        ("fixed", scheduler_per_step_loop, micro_batches, accumulation_steps),
    ):
        recorder = StepRecorder(model)
        scheduler = torch.optim.lr_scheduler.LambdaLR(recorder, warmup(warmup_steps))
        with warnings.catch_warnings():  # the broken loop steps the scheduler before the optimizer
            warnings.simplefilter("ignore", UserWarning)
            loop(model, recorder, loss_fn, data, n, scheduler=scheduler)
        lrs[label] = recorder.lrs
    model.zero_grad(set_to_none=True)
    lrs["samples_seen"] = [(k + 1) * accumulation_steps * size for k in range(windows)]
    return lrs


def schedule_damage(schedules: dict) -> Damage:
    """Worst relative learning-rate error of the broken and the fixed loop against the full batch.

    >>> schedule_damage({"full": [0.5, 1.0], "broken": [1.0, 1.0], "fixed": [0.5, 1.0]}).broken
    1.0
    """
    if not isinstance(schedules, dict) or not schedules:
        raise ValueError(f"schedules must be what compute_schedules returns, got {schedules!r}")

    def worst(lrs):
        return max(abs(a - b) / b for a, b in zip(lrs, schedules["full"]))

    return Damage(
        "scheduler per micro-batch", worst(schedules["broken"]), worst(schedules["fixed"])
    )


@dataclass(frozen=True, repr=False)
class ReductionErrors(Result):
    """Gradient error (relative, float64) of a mean- and a sum-reduced loss, each divided by N
    or not, against the full batch with the same reduction."""

    accumulation_steps: int
    mean_divided: float  # mean loss, divided by N: right
    mean_not_divided: float  # N times the gradient
    sum_not_divided: float  # sum loss, no scaling: right
    sum_divided: float  # 1/N of the gradient

    def table(self) -> Table:
        rows = [
            ("mean loss, divided by N", self.mean_divided),
            ("mean loss, no scaling", self.mean_not_divided),
            ("sum loss, no scaling", self.sum_not_divided),
            ("sum loss, divided by N", self.sum_divided),
        ]
        rows = [(recipe, f"{error:.1e}") for recipe, error in rows]
        return Table(("recipe", "gradient error"), rows, f"N = {self.accumulation_steps}")


def compute_reduction_errors(accumulation_steps: int = 4, samples: int = 64) -> ReductionErrors:
    """What a mean-reduced and a sum-reduced loss each need when accumulating (float64 errors).

    >>> errors = compute_reduction_errors()
    >>> errors.sum_not_divided < 1e-12 < errors.sum_divided
    True
    """
    as_count("accumulation_steps", accumulation_steps)
    as_count("samples", samples)
    model, x, y = classification_problem(samples)
    mean_loss = torch.nn.functional.cross_entropy

    def sum_loss(logits, targets):
        return torch.nn.functional.cross_entropy(logits, targets, reduction="sum")

    full_mean = full_batch_gradients(model, mean_loss, x, y)
    full_sum = full_batch_gradients(model, sum_loss, x, y)

    def error(loss_fn, normalize, reference):
        acc = accumulated_gradients(model, loss_fn, x, y, accumulation_steps, normalize=normalize)
        return relative_error(reference, acc)

    return ReductionErrors(
        accumulation_steps,
        error(mean_loss, "naive", full_mean),
        error(mean_loss, "sum", full_mean),
        error(sum_loss, "sum", full_sum),
        error(sum_loss, "naive", full_sum),
    )


def uneven_errors(sizes: list[int], seed: int = 0) -> dict[str, float]:
    """Gradient error of naive /N and of weighting by samples on micro-batches of these sizes.

    >>> uneven_errors([24, 24, 16])["naive"] > 0.01
    True
    """
    sizes = as_counts("sizes", sizes)
    model, x, y = classification_problem(sum(sizes), seed)
    loss_fn = torch.nn.functional.cross_entropy
    full = full_batch_gradients(model, loss_fn, x, y)
    return {
        normalize: relative_error(
            full, accumulated_gradients(model, loss_fn, x, y, sizes=sizes, normalize=normalize)
        )
        for normalize in ("naive", "samples")
    }


@dataclass(frozen=True, repr=False)
class UnevenCurves(Result):
    """Gradient errors of loss / N (`naive`) and of weighting by samples on uneven
    micro-batches: against N at one spread of sizes, and against the spread at one N."""

    accumulation_steps: list[int]  # the N of each error "by_n"
    spread: float  # the spread of sizes at which N varies
    naive_by_n: list[float]
    samples_by_n: list[float]
    spreads: list[float]  # the spread of each error "by_spread"
    accumulation_steps_for_spreads: int  # the N at which the spread varies
    naive_by_spread: list[float]
    samples_by_spread: list[float]

    def table(self) -> Table:
        rows = [
            (label, f"{naive:.1%}", f"{samples:.1e}")
            for label, naive, samples in (
                *zip((f"N = {n}" for n in self.accumulation_steps), self.naive_by_n,
                     self.samples_by_n),
                *zip((f"spread {s:g}" for s in self.spreads), self.naive_by_spread,
                     self.samples_by_spread),
            )
        ]  # fmt: skip
        at_n = self.accumulation_steps_for_spreads
        title = f"N varies at spread {self.spread:g}; the spread varies at N = {at_n}"
        return Table(("micro-batches", "loss / N", "weighted by samples"), rows, title)


def compute_uneven_curves(
    accumulation_steps: tuple[int, ...] = (2, 3, 4, 6, 8, 12, 16),
    spreads: tuple[float, ...] = (0.0, 0.2, 0.4, 0.6, 0.8, 0.95),
    spread: float = 0.6,
    accumulation_steps_for_spreads: int = 4,
    batch: int = 64,
) -> UnevenCurves:
    """Errors of naive /N and of weighting by samples, against N (at `spread`) and against
    the spread of sizes (at N = `accumulation_steps_for_spreads`), on batches of `batch` samples.

    >>> curves = compute_uneven_curves(accumulation_steps=(2,), spreads=(0.0,))
    >>> curves.naive_by_spread[0] < 1e-12
    True
    """
    accumulation_steps = as_counts("accumulation_steps", accumulation_steps)
    if not spreads:
        raise ValueError("spreads must hold at least one spread from 0 to below 1")
    for value in (*spreads, spread):
        as_fraction("spreads", value, one_allowed=False)
    as_count("accumulation_steps_for_spreads", accumulation_steps_for_spreads)
    as_count("batch", batch)
    by_n = [uneven_errors(uneven_sizes(batch, n, spread)) for n in accumulation_steps]
    by_spread = [
        uneven_errors(uneven_sizes(batch, accumulation_steps_for_spreads, s)) for s in spreads
    ]
    return UnevenCurves(
        list(accumulation_steps),
        spread,
        [e["naive"] for e in by_n],
        [e["samples"] for e in by_n],
        list(spreads),
        accumulation_steps_for_spreads,
        [e["naive"] for e in by_spread],
        [e["samples"] for e in by_spread],
    )
