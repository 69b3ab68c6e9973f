"""How far two sets of tensors (gradients or parameters) are apart: one metric, and a table.

The course measures every difference with one number, `relative_error`: the L2
norm of the difference over all tensors together, relative to the L2 norm of the
reference. Element-wise relative differences blow up on entries near zero, which
are plentiful in gradients; a norm over the whole set does not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import torch

from gradacc_lessons.checks import as_choice, as_counts
from gradacc_lessons.display import Result, Table


def relative_error(reference: dict[str, torch.Tensor], other: dict[str, torch.Tensor]) -> float:
    """‖other − reference‖ / ‖reference‖, with L2 norms over all tensors together.

    >>> relative_error({"w": torch.tensor([3.0, 4.0])}, {"w": torch.tensor([3.0, 4.5])})
    0.1
    """
    _check_same_names(reference, other)
    diff = sum(float(((other[n].double() - reference[n].double()) ** 2).sum()) for n in reference)
    norm = sum(float((reference[n].double() ** 2).sum()) for n in reference)
    if norm == 0.0:
        return 0.0 if diff == 0.0 else float("inf")
    return (diff / norm) ** 0.5


@dataclass(frozen=True)
class Difference:
    """How far one tensor of `other` is from the same tensor of `reference`."""

    name: str
    max_abs: float  # largest |other - reference| over the tensor's entries
    relative: float  # relative_error of this tensor alone


class Comparison(Result):
    """Per-tensor differences between two {name: tensor} dicts, and the overall relative error."""

    def __init__(self, rows: list[Difference], reference: dict, other: dict):
        self.rows = rows
        self.relative = relative_error(reference, other)

    @property
    def max_abs(self) -> float:
        """The largest absolute difference over all tensors."""
        return max(row.max_abs for row in self.rows)

    def table(self) -> Table:
        rows = [(row.name, row.max_abs, row.relative) for row in self.rows]
        rows.append(("all", self.max_abs, self.relative))
        cells = [(name, f"{max_abs:.3e}", f"{relative:.3e}") for name, max_abs, relative in rows]
        return Table(("parameter", "max abs diff", "relative error"), cells)


def compare_tensors(
    reference: dict[str, torch.Tensor], other: dict[str, torch.Tensor]
) -> Comparison:
    """Compare two {name: tensor} dicts (gradients or parameters) tensor by tensor.

    >>> c = compare_tensors({"w": torch.tensor([3.0, 4.0])}, {"w": torch.tensor([3.0, 4.5])})
    >>> c.max_abs, c.relative
    (0.5, 0.1)
    """
    _check_same_names(reference, other)
    rows = []
    for name in reference:
        if reference[name].shape != other[name].shape:
            raise ValueError(
                f"{name} has shape {tuple(reference[name].shape)} in the reference and "
                f"{tuple(other[name].shape)} in the other: compare the same model's tensors"
            )
        diff = (reference[name].detach() - other[name].detach()).abs().max().item()
        one = {name: reference[name].detach()}
        rows.append(Difference(name, diff, relative_error(one, {name: other[name].detach()})))
    return Comparison(rows, reference, other)


def parameters_of(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """A detached copy of the model's parameters, for comparing two trained models.

    >>> sorted(parameters_of(torch.nn.Linear(2, 1)))
    ['bias', 'weight']
    """
    if not isinstance(model, torch.nn.Module):
        raise ValueError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    return {name: p.detach().clone() for name, p in model.named_parameters()}


def accumulation_errors(
    model: torch.nn.Module,
    loss_fn,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    accumulation_steps: list[int],
    normalize: str = "samples",
) -> list[float]:
    """The relative error of accumulated against full-batch gradients, for each N in
    `accumulation_steps`.

    >>> model = torch.nn.Linear(3, 2)
    >>> x, y = torch.randn(10, 3), torch.randint(2, (10,))
    >>> errors = accumulation_errors(model, torch.nn.CrossEntropyLoss(), x, y, [1, 3])
    >>> all(e < 1e-5 for e in errors)
    True
    """
    from gradacc_lessons.accumulate import (
        NORMALIZATIONS,
        accumulated_gradients,
        full_batch_gradients,
    )

    accumulation_steps = as_counts(
        "accumulation_steps", accumulation_steps, fix="each N is a number of micro-batches"
    )
    as_choice("normalize", normalize, NORMALIZATIONS)
    full = full_batch_gradients(model, loss_fn, inputs, targets)
    return [
        relative_error(
            full,
            accumulated_gradients(model, loss_fn, inputs, targets, n, normalize=normalize),
        )
        for n in accumulation_steps
    ]


def _check_same_names(reference: dict, other: dict) -> None:
    for name, value in (("reference", reference), ("other", other)):
        if not isinstance(value, Mapping) or not all(
            isinstance(t, torch.Tensor) for t in value.values()
        ):
            raise ValueError(
                f"{name} must be a dict of tensors {{name: tensor}}, as full_batch_gradients "
                f"or parameters_of return, got {type(value).__name__}"
            )
    if reference.keys() != other.keys():
        raise ValueError(
            "both sides must name the same tensors; "
            f"only in the reference: {sorted(reference.keys() - other.keys())}, "
            f"only in the other: {sorted(other.keys() - reference.keys())}"
        )
    if not reference:
        raise ValueError("there is nothing to compare: both dicts are empty")
