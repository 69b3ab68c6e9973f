"""What every way of training in lesson 7 is given (a `Recipe`) and what it returns (a `Run`),
and the checks of both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from gradacc_lessons.accumulate import (
    count_tokens,
    windows,
)
from gradacc_lessons.demos.frameworks.tiny_lm import (  # noqa: F401 (make_chunks: the doctests)
    _check_token_tensors,
    _is_real,
    _positive,
    make_chunks,
    next_token_targets,
)

SCHEDULES = ("constant", "linear")


# --- what every way is given, and what it returns ---------------------------------------


@dataclass(frozen=True)
class Recipe:
    """What every way of training is given: the data, the micro-batch, N, the optimizer.

    `input_ids` and `labels` are (sequences, length) tensors in the Trainer's
    convention: labels unshifted, IGNORE_INDEX on padding. A micro-batch is
    `micro_batch_size` consecutive sequences (the last may be shorter); a window is
    `accumulation_steps` consecutive micro-batches (the last may be shorter). The
    optimizer is SGD at `lr`; `schedule` "linear" decays it to 0 over `schedule_steps`
    scheduler steps (None: as many as there are windows). `max_grad_norm` clips each
    window's gradient (None: no clipping).
    """

    input_ids: torch.Tensor
    labels: torch.Tensor
    micro_batch_size: int
    accumulation_steps: int
    lr: float = 1.0
    schedule: str = "constant"
    schedule_steps: int | None = None
    max_grad_norm: float | None = None

    def __post_init__(self):
        _check_token_tensors(self.input_ids, self.labels)
        for name in ("micro_batch_size", "accumulation_steps"):
            object.__setattr__(self, name, _positive(name, getattr(self, name)))
        if self.schedule_steps is not None:
            object.__setattr__(
                self, "schedule_steps", _positive("schedule_steps", self.schedule_steps)
            )
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {self.schedule!r}")
        for name in ("lr", "max_grad_norm"):
            value = getattr(self, name)
            if (value is not None or name == "lr") and not (_is_real(value) and value > 0):
                raise ValueError(f"{name} must be a positive number, got {value!r}")

    def micro_batches(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """The (input_ids, labels) micro-batches, in order.

        >>> recipe = Recipe(*make_chunks("abcdefghij", " abcdefghij", 5, 2), 2, 2)
        >>> [len(ids) for ids, labels in recipe.micro_batches()], recipe.window_sizes()
        ([2, 2, 1], [2, 1])
        """
        return list(
            zip(
                self.input_ids.split(self.micro_batch_size),
                self.labels.split(self.micro_batch_size),
            )
        )

    def optimizer_steps(self) -> int:
        """How many windows, so optimizer steps, one epoch takes: ceil(micro-batches / N)."""
        return math.ceil(len(self.micro_batches()) / self.accumulation_steps)

    def window_sizes(self) -> list[int]:
        """How many micro-batches each window holds; the last may hold fewer than N."""
        return [len(window) for window in windows(self.micro_batches(), self.accumulation_steps)]

    def micro_batch_tokens(self) -> list[int]:
        """How many next-token targets each micro-batch holds."""
        return [count_tokens(next_token_targets(y)) for _, y in self.micro_batches()]

    def window_tokens(self) -> list[int]:
        """How many next-token targets each window holds: what a token mean divides by.

        >>> Recipe(*make_chunks("abcdefghij", " abcdefghij", 5, 2), 2, 2).window_tokens()
        [4, 1]
        """
        return self._per_window(lambda labels: count_tokens(next_token_targets(labels)))

    def window_labels(self) -> list[int]:
        """How many labels each window holds before the shift: one a sequence too many.

        >>> Recipe(*make_chunks("abcdefghij", " abcdefghij", 5, 2), 2, 2).window_labels()
        [8, 2]
        """
        return self._per_window(count_tokens)

    def _per_window(self, count):
        return [
            sum(count(labels) for _, labels in window)
            for window in windows(self.micro_batches(), self.accumulation_steps)
        ]


@dataclass
class Run:
    """What one way of training did with a Recipe."""

    way: str
    parameters: dict[str, torch.Tensor]  # after training, as float64 copies
    logged_losses: list[float] = field(default_factory=list)  # the loss it reports each step
    learning_rates: list[float] = field(default_factory=list)  # the lr of each optimizer step
    scheduler_steps: int = 0  # how often the scheduler really advanced
    schedule_length: int = 0  # the scheduler steps its schedule was sized for
    token_counts: list[int] = field(default_factory=list)  # Trainer: what it divided by
    grad_norms: list[float] = field(default_factory=list)  # Trainer: each window's norm
    last_micro_batch_losses: list[float] = field(default_factory=list)  # the course's loops

    def __repr__(self) -> str:
        return (
            f"Run({self.way!r}, optimizer steps={len(self.learning_rates)}, "
            f"scheduler steps={self.scheduler_steps})"
        )


def _check_way(model, recipe) -> None:
    """What every way of training is given: a model and a Recipe."""
    if not isinstance(recipe, Recipe):
        raise ValueError(f"recipe must be a Recipe (the data and settings), got {recipe!r}")
    if not isinstance(model, torch.nn.Module):
        raise ValueError(f"model must be a torch model (tiny_causal_lm), got {model!r}")


def _check_runs(name: str, runs) -> None:
    if not runs or not all(isinstance(run, Run) for run in runs):
        raise ValueError(f"{name} must be one or more Run of the train_* functions, got {runs!r}")
