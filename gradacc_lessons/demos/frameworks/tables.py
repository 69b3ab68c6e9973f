"""The tables lesson 7 shows: the frameworks' defaults, the token counts, the logged losses
and the schedules, each drawn by the course's one table (`display.Table`).
"""

from __future__ import annotations

import inspect

import torch

from gradacc_lessons.demos.frameworks.process import FRAMEWORKS, _quiet_and_restored
from gradacc_lessons.demos.frameworks.recipe import Recipe, Run, _check_runs, _check_way
from gradacc_lessons.demos.frameworks.runs import Measurement
from gradacc_lessons.display import Table

DEFAULTS = {  # the settings of this lesson, by the class whose signature sets their default
    "Trainer": (
        "gradient_accumulation_steps", "max_grad_norm", "lr_scheduler_type", "logging_steps",
        "average_tokens_across_devices", "train_sampling_strategy",
    ),
    "Accelerator": ("gradient_accumulation_steps",),
    "Lightning Trainer": ("accumulate_grad_batches", "gradient_clip_val", "log_every_n_steps"),
}  # fmt: skip


def framework_defaults() -> Table:
    """What a run inherits unless it says otherwise, read from the frameworks' signatures.

    A None that the class replaces when it is built shows what it means.

    >>> ("Trainer", "max_grad_norm", 1.0) in framework_defaults().rows
    True
    >>> ("Lightning Trainer", "log_every_n_steps", "None (means 50)") in framework_defaults().rows
    True
    """
    with _quiet_and_restored(*FRAMEWORKS) as [transformers, accelerate, lightning]:
        classes = {
            "Trainer": transformers.TrainingArguments,
            "Accelerator": accelerate.Accelerator,
            "Lightning Trainer": lightning.Trainer,
        }
        rows = [
            (name, setting, _default(name, classes[name], setting))
            for name, settings in DEFAULTS.items()
            for setting in settings
        ]
    return Table(("class", "setting", "default"), rows)


def _default(name, cls, setting):
    value = inspect.signature(cls).parameters[setting].default
    if value is None and (name, setting) in NONE_MEANS:
        return f"None (means {NONE_MEANS[name, setting](cls)})"
    return getattr(value, "value", value)  # an enum member shows as its value


def _built_log_every_n_steps(trainer_class) -> int:
    """What Lightning's Trainer sets `log_every_n_steps=None` to: built quiet, nothing written."""
    trainer = trainer_class(
        logger=False, enable_checkpointing=False, enable_progress_bar=False,
        enable_model_summary=False, accelerator="cpu", devices=1,
    )  # fmt: skip
    return trainer.log_every_n_steps


# Settings whose signature says None for a value the class fills in when it is built.
NONE_MEANS = {("Lightning Trainer", "log_every_n_steps"): _built_log_every_n_steps}


def token_count_table(recipe: Recipe, runs: dict[str, Run]) -> Table:
    """Per window: its labels, its next-token targets, and the count each run divided by."""
    _check_way(torch.nn.Module(), recipe)
    _check_runs("runs", list(runs.values()) if isinstance(runs, dict) else runs)
    headers = ("window", "labels", "next-token targets", *(f"{name} counted" for name in runs))
    counts = [run.token_counts for run in runs.values()]
    columns = [recipe.window_labels(), recipe.window_tokens(), *counts]
    return Table(headers, [(i + 1, *row) for i, row in enumerate(zip(*columns))])


def logged_loss_table(measurement: Measurement) -> Table:
    """Per optimizer step: the window's loss, its last micro-batch's, and what each way logged.

    The window's loss is the float64 full batch's; the last micro-batch's comes from
    the course's loop, `train_accumulated`, which must be among the measured ways.
    """
    if not isinstance(measurement, Measurement):
        raise ValueError(f"measurement must be what measure() returns, got {measurement!r}")
    if "train_accumulated" not in measurement.runs:
        raise ValueError(
            "logged_loss_table needs a measurement of train_accumulated among its ways"
        )
    course = measurement.runs["train_accumulated"]
    runs = [run for run in measurement.runs.values() if run.logged_losses]
    headers = ("step", "window loss", "its last micro-batch", *(run.way for run in runs))
    columns = [measurement.reference.logged_losses, course.last_micro_batch_losses]
    columns += [run.logged_losses for run in runs]
    return Table(headers, [(i + 1, *row) for i, row in enumerate(zip(*columns))])


def schedule_table(*runs: Run) -> Table:
    """Per run: its schedule's length, the scheduler steps it took, the lr of its last step."""
    _check_runs("runs", runs)
    rows = [(r.way, r.schedule_length, r.scheduler_steps, r.learning_rates[-1]) for r in runs]
    headers = ("way", "schedule length", "scheduler steps taken", "lr of the last step")
    return Table(headers, rows)
