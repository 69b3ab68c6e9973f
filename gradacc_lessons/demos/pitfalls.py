"""The measured damage of each scaling pitfall: its broken loop and its fix against the full batch.

Each loop of `gradacc_lessons.demos.loops` runs with a `StepRecorder` in place of the
optimizer: the recorder keeps the gradient (and learning rate) every step() sees
and leaves the parameters alone, so each window can be compared with one batch
of the same samples, computed independently by `full_batch_gradients`.

The token pitfalls (a token mean divided by N) are in `gradacc_lessons.demos.token_pitfalls`,
what a loss N times too large does to SGD and AdamW in `gradacc_lessons.demos.loss_scale`,
and what each loss weighting does to one batch's gradient (mean or sum, uneven micro-batches)
in `gradacc_lessons.demos.loss_weighting`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import torch

from gradacc_lessons.accumulate import (
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
