"""Lesson 5: whole training runs on real data, with and without accumulation.

Three runs share everything (model initialisation, data order, AdamW, the
learning-rate schedule over the run, gradient clipping) except how the data
reaches the optimizer:

- "large batch": one step per batch of B samples;
- "accumulated": B/b micro-batches of b samples per step (the same updates);
- "small batch": one step per b samples, without accumulation (other updates).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch.nn import functional as F

from gradacc_lessons.accumulate import Event, check_batch, train_accumulated
from gradacc_lessons.checks import as_choice, as_count, as_fraction
from gradacc_lessons.compare import parameters_of, relative_error
from gradacc_lessons.data import load_digits
from gradacc_lessons.device import seeded
from gradacc_lessons.display import Result, Table
from gradacc_lessons.models import MLP

RUNS = ("large batch", "accumulated", "small batch")
METRICS = {  # metric: y-axis label
    "train_loss": "training loss (cross-entropy)",
    "test_loss": "test loss (cross-entropy)",
    "test_accuracy": "test accuracy (%)",
    "learning_rate": "learning rate",
}


@dataclass(frozen=True)
class TrainingConfig:
    """The settings the three runs share."""

    batch: int = 128  # B: the samples behind one step of the large-batch and accumulated runs
    micro_batch_size: int = 32  # b: what one forward pass sees in the other two runs
    epochs: int = 10
    lr: float = 1e-2  # peak learning rate, reached after the warm-up
    warmup: float = 0.1  # fraction of the run spent warming up
    weight_decay: float = 0.01
    max_grad_norm: float = 1.0
    hidden: int = 64
    norm: str = "none"  # the MLP's normalisation layers: "none", "batch", "layer" or "group"
    train_samples: int = 1536  # of digits' 1,797; the other 261 are the test set
    seed: int = 0
    dtype: torch.dtype = torch.float32

    @property
    def accumulation_steps(self) -> int:
        """N = B / b, the micro-batches per step of the accumulated run."""
        if self.micro_batch_size < 1 or self.batch % self.micro_batch_size:
            raise ValueError(
                f"micro_batch_size must divide batch {self.batch}, "
                f"got micro_batch_size={self.micro_batch_size}; "
                f"pick a divisor such as {self.batch // 4}"
            )
        return self.batch // self.micro_batch_size


@dataclass
class Curves:
    """What one run measured: per optimizer step, and per epoch on the test set."""

    name: str
    epoch_of_step: list[float] = field(default_factory=list)  # epochs done after each step
    train_loss: list[float] = field(default_factory=list)  # mean loss of each step's batch
    learning_rate: list[float] = field(default_factory=list)  # used by each step
    epochs: list[int] = field(default_factory=list)
    test_loss: list[float] = field(default_factory=list)
    test_accuracy: list[float] = field(default_factory=list)  # in percent
    parameters: dict[str, torch.Tensor] = field(default_factory=dict)  # after training

    def __repr__(self) -> str:
        return (
            f"Curves({self.name!r}, steps={len(self.train_loss)}, "
            f"final test accuracy={self.test_accuracy[-1]:.1f} %)"
        )


def split_digits(
    train_samples: int = 1536, seed: int = 0, dtype: torch.dtype = torch.float32
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Digits shuffled once and split into (x_train, y_train, x_test, y_test).

    >>> x_train, y_train, x_test, y_test = split_digits(1500)
    >>> len(x_train), len(x_test)
    (1500, 297)
    """
    x, y = load_digits(dtype=dtype)
    train_samples = as_count("train_samples", train_samples, 1, len(x) - 1, "the rest is tested")
    seed = as_count("seed", seed, minimum=0)
    order = torch.randperm(len(x), generator=torch.Generator().manual_seed(seed))
    train, test = order[:train_samples], order[train_samples:]
    return x[train], y[train], x[test], y[test]


def lr_factor(step: int, total_steps: int, warmup: float = 0.1) -> float:
    """The schedule, as a factor of the peak rate: linear warm-up, then cosine decay to 0.

    It depends on the fraction of the run done, so runs with different numbers
    of steps follow the same schedule over their epochs.

    >>> [round(lr_factor(s, 10, warmup=0.2), 3) for s in (0, 1, 2, 6, 10)]
    [0.5, 1.0, 1.0, 0.5, 0.0]
    """
    step = as_count("step", step, minimum=0)
    total_steps = as_count("total_steps", total_steps)
    warmup = as_fraction("warmup", warmup, "a fraction of the run")
    warmup_steps = max(1, round(warmup * total_steps))
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
    return 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))


def run_shape(name: str, config: TrainingConfig) -> tuple[int, int]:
    """(micro-batch size, accumulation steps) of the run called `name`.

    >>> run_shape("accumulated", TrainingConfig(batch=128, micro_batch_size=32))
    (32, 4)
    """
    as_choice("name", name, RUNS)
    _check_config(config)
    shapes = {
        "large batch": (config.batch, 1),
        "accumulated": (config.micro_batch_size, config.accumulation_steps),
        "small batch": (config.micro_batch_size, 1),
    }
    if name not in shapes:
        raise ValueError(f"name must be one of {RUNS}, got {name!r}")
    return shapes[name]


def train_run(name: str, config: TrainingConfig | None = None) -> Curves:
    """Train the digits MLP the way run `name` does and record its curves.

    >>> run = train_run("accumulated", TrainingConfig(epochs=1, train_samples=256))
    >>> len(run.train_loss), len(run.test_accuracy)  # 256 / 128 steps, one epoch
    (2, 1)
    """
    as_choice("name", name, RUNS)
    if config is not None:
        _check_config(config)
    config = config or TrainingConfig()
    micro_batch_size, accumulation_steps = run_shape(name, config)
    x_train, y_train, x_test, y_test = split_digits(config.train_samples, config.seed, config.dtype)
    with seeded(config.seed):  # the same initial weights in every run
        model = MLP(64, 10, hidden=config.hidden, norm=config.norm).to(config.dtype)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=config.lr, weight_decay=config.weight_decay
    )
    steps_per_epoch = math.ceil(config.train_samples / (micro_batch_size * accumulation_steps))
    total = config.epochs * steps_per_epoch
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: lr_factor(step, total, config.warmup)
    )
    curves = Curves(name)

    def record(event: Event) -> None:  # the rate each step used, read just before the scheduler
        if event.kind == "step":
            curves.learning_rate.append(optimizer.param_groups[0]["lr"])

    for epoch in range(1, config.epochs + 1):
        # Every run sees the samples in the same order in each epoch.
        order = torch.randperm(len(x_train), generator=torch.Generator().manual_seed(epoch))
        batches = list(
            zip(x_train[order].split(micro_batch_size), y_train[order].split(micro_batch_size))
        )
        losses = train_accumulated(
            model, optimizer, F.cross_entropy, batches, accumulation_steps,
            scheduler=scheduler, max_grad_norm=config.max_grad_norm, on_event=record,
        )  # fmt: skip
        done = len(curves.train_loss)
        curves.train_loss += losses
        curves.epoch_of_step += [(done + i + 1) / steps_per_epoch for i in range(len(losses))]
        test_loss, accuracy = evaluate(model, x_test, y_test)
        curves.epochs.append(epoch)
        curves.test_loss.append(test_loss)
        curves.test_accuracy.append(accuracy)
    curves.parameters = parameters_of(model)
    return curves


def evaluate(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
    """(mean cross-entropy, accuracy in percent) of `model` on (x, y), in eval mode.

    Eval mode, so that BatchNorm uses its running statistics, not the test set's;
    the model's mode is restored afterwards.

    >>> model = torch.nn.Linear(2, 2)
    >>> loss, accuracy = evaluate(model, torch.zeros(4, 2), torch.zeros(4, dtype=torch.long))
    >>> accuracy in (0.0, 100.0), model.training
    (True, True)
    """
    check_batch(x, y, ("x", "y"))
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            logits = model(x)
            loss = F.cross_entropy(logits, y).item()
            accuracy = 100.0 * (logits.argmax(-1) == y).double().mean().item()
    finally:
        model.train(was_training)
    return loss, accuracy


@dataclass(frozen=True)
class RunDifference:
    """How far run `b` is from run `a`."""

    train_loss: float | None  # max |Δ| of the per-step training loss; None if step counts differ
    test_loss: float  # max |Δ| of the test loss over epochs
    test_accuracy: float  # max |Δ| of the test accuracy over epochs, in percentage points
    parameters: float  # relative error of the final parameters (compare.relative_error)

    def __str__(self) -> str:
        train = "n/a (other steps)" if self.train_loss is None else f"{self.train_loss:.2e}"
        return (
            f"max |Δ| training loss per step: {train}; test loss: {self.test_loss:.2e}; "
            f"test accuracy: {self.test_accuracy:.2f} points; "
            f"final parameters (relative): {self.parameters:.2e}"
        )


def run_difference(a: Curves, b: Curves) -> RunDifference:
    """The largest differences between two runs' curves and final parameters.

    >>> config = TrainingConfig(epochs=1, train_samples=256, dtype=torch.float64)
    >>> large, accumulated = train_run("large batch", config), train_run("accumulated", config)
    >>> run_difference(large, accumulated).parameters < 1e-12
    True
    """
    _check_curves("a", a), _check_curves("b", b)
    same_steps = len(a.train_loss) == len(b.train_loss)
    return RunDifference(
        train_loss=_max_abs(a.train_loss, b.train_loss) if same_steps else None,
        test_loss=_max_abs(a.test_loss, b.test_loss),
        test_accuracy=_max_abs(a.test_accuracy, b.test_accuracy),
        parameters=relative_error(a.parameters, b.parameters),
    )


def _max_abs(a: Sequence[float], b: Sequence[float]) -> float:
    return max(abs(u - v) for u, v in zip(a, b))


def _check_config(config) -> TrainingConfig:
    if not isinstance(config, TrainingConfig):
        raise ValueError(f"config must be a TrainingConfig, got {config!r}")
    return config


def _check_curves(name: str, curves) -> Curves:
    if not isinstance(curves, Curves):
        raise ValueError(f"{name} must be the Curves of a run (train_run), got {curves!r}")
    return curves


@dataclass(frozen=True, repr=False)
class ScheduleLengths(Result):
    """The learning rate (x peak) of each optimizer step, the schedule sized two ways."""

    accumulation_steps: int
    by_optimizer_steps: list[float]  # sized by the optimizer steps that happen: right
    by_len_dataloader: list[float]  # sized by len(dataloader) x epochs: N times too long

    def table(self) -> Table:
        fractions = (0.05, 0.25, 0.5, 0.75, 1.0)
        last = len(self.by_optimizer_steps) - 1
        rows = [
            (label, *(f"{lrs[round(f * last)]:.2f}" for f in fractions))
            for label, lrs in (
                ("optimizer steps", self.by_optimizer_steps),
                ("len(dataloader)", self.by_len_dataloader),
            )
        ]
        headers = ("schedule sized by", *(f"{f:.0%}" for f in fractions))
        return Table(headers, rows, "lr (x peak) at 5, 25, 50, 75, 100 % of the run")


def schedule_lengths(
    micro_batches_per_epoch: int, accumulation_steps: int, epochs: int, warmup: float = 0.1
) -> ScheduleLengths:
    """The learning rate of each optimizer step when the schedule is given its length two ways.

    By optimizer steps: epochs x ceil(micro-batches per epoch / N), the steps that happen;
    by len(dataloader): epochs x micro-batches per epoch, a common mistake (the data
    loader yields micro-batches). Both follow `lr_factor` over the steps that happen.

    >>> lrs = schedule_lengths(micro_batches_per_epoch=8, accumulation_steps=4, epochs=5)
    >>> round(lrs.by_optimizer_steps[-1], 3), round(lrs.by_len_dataloader[-1], 3)
    (0.03, 0.953)
    """
    micro_batches_per_epoch = as_count("micro_batches_per_epoch", micro_batches_per_epoch)
    accumulation_steps = as_count("accumulation_steps", accumulation_steps)
    epochs = as_count("epochs", epochs)
    warmup = as_fraction("warmup", warmup)
    steps = epochs * math.ceil(micro_batches_per_epoch / accumulation_steps)
    lengths = (steps, epochs * micro_batches_per_epoch)
    return ScheduleLengths(
        accumulation_steps,
        *([lr_factor(step, total, warmup) for step in range(steps)] for total in lengths),
    )


def compile_from_scratch(
    model: torch.nn.Module,
    micro_batches: Sequence[tuple[torch.Tensor, torch.Tensor]],
    loss_fn=F.cross_entropy,
    dynamic: bool | None = None,
) -> list[int]:
    """How many graphs `torch.compile` has built after each micro-batch's forward and backward.

    It first empties torch.compile's caches (`torch.compiler.reset()`, as its name warns):
    compiled code is cached per Python function, so without the reset the count would
    depend on what ran before. The graphs are counted by a backend that runs them as they
    are (no code generation), so this is quick on any machine; `dynamic` is passed on to
    `torch.compile` (None: recompile once for a new size, then treat sizes as dynamic).

    >>> x, y = torch.randn(10, 4), torch.randint(2, (10,))
    >>> compile_from_scratch(torch.nn.Linear(4, 2), list(zip(x.split(4), y.split(4))))
    [1, 1, 2]
    """
    if not isinstance(model, torch.nn.Module):
        raise ValueError(f"model must be a torch.nn.Module, got {model!r}")
    if not micro_batches:
        raise ValueError("micro_batches must hold at least one (inputs, targets) pair, got none")
    graphs = []

    def counting_backend(graph_module, example_inputs):
        graphs.append(graph_module)
        return graph_module.forward  # run the captured graph as it is

    torch.compiler.reset()
    compiled = torch.compile(model, backend=counting_backend, dynamic=dynamic)
    counts = []
    for x, y in micro_batches:
        loss_fn(compiled(x), y).backward()
        counts.append(len(graphs))
    model.zero_grad(set_to_none=True)
    return counts
