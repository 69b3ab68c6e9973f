"""What each way of weighting the loss does to one batch's gradient, measured in float64.

A mean-reduced loss needs dividing by N and a sum-reduced one does not (`compute_reduction_errors`);
on micro-batches of uneven sizes, loss / N is off where weighting each loss by its share of the
samples is exact, more so the more the sizes differ and the larger N (`compute_uneven_curves`).
The loops that make these mistakes, and their damage in training, are in `pitfalls`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from gradacc_lessons.accumulate import (
    accumulated_gradients,
    full_batch_gradients,
)
from gradacc_lessons.checks import as_count, as_counts, as_fraction
from gradacc_lessons.compare import relative_error
from gradacc_lessons.demos.pitfalls import classification_problem, uneven_sizes
from gradacc_lessons.display import Result, Table


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
