"""Lesson 7 runs top to bottom, and what it measures backs each sentence it writes.

tests/test_frameworks.py checks the package against hand computations; this file checks
that the executed notebook's own runs back what its prose says, reading them from the
lesson's kernel after its last cell (`values`), not from the tables it shows.
"""

from __future__ import annotations

import importlib.util
import subprocess

import nbformat
import pytest

from tools.setup_cell import SETUP_CELL, setup_cell_for

from .conftest import NOTEBOOKS
from .lessons import register

LESSON = NOTEBOOKS / "07_frameworks.ipynb"
FLOAT32 = 1e-5  # float32 against float64 over 3 SGD steps: measured <= 7e-7 (test_frameworks)
WRONG = 1e-2  # the smallest wrong recipe the lesson shows is 3e-2


def measured(name: str) -> str:
    """An expression: {way: [optimizer steps, update error]} of the lesson's measurement `name`."""
    steps_and_error = f"[len(run.learning_rates), {name}.errors[way]]"
    return f"{{way: {steps_and_error} for way, run in {name}.runs.items()}}"


FOUR = ["train_accumulated", "Trainer", "Accelerate", "Lightning"]
FIXES = ["Accelerate + token weights", "Lightning + token weights"]
VALUES = {
    "even": measured("even_runs"),
    "tail": measured("tail_runs"),
    "tail, token weights": measured("weighted_runs"),
    "tokens": measured("token_runs"),
    "clipped": measured("clipped_runs"),
    "GPT-2 before": "gpt2_runs.errors['Trainer']",
    "GPT-2 after": "fixed_gpt2_runs.errors['Trainer']",
    "labels": "lines.window_labels()",
    "targets": "lines.window_tokens()",
    "Llama counted": "token_runs.runs['Trainer'].token_counts",
    "GPT-2 counted": "gpt2_runs.runs['Trainer'].token_counts",
    "window loss": "even_runs.reference.logged_losses",
    "last micro-batch loss": "even_runs.runs['train_accumulated'].last_micro_batch_losses",
    "logged": "{way: run.logged_losses for way, run in even_runs.runs.items()}",
    "scheduler steps": "[run.scheduler_steps for run in even_runs.runs.values()]",
    "schedules": "[[run.schedule_length, run.learning_rates[-1]] for run in"
    " (even_runs.runs['Accelerate'], sized_by_micro_batches.runs['Accelerate'])]",
    "defaults": "defaults.rows",
    "plain loop gap": "gap",
    "schedule rows": "[row[0] for row in schedules.rows]",
    "two processes": "[[setup, run.micro_batches, run.optimizer_steps,"
    " run.scheduler_steps, run.learning_rates] for setup, run in two.schedules.items()]",
    "token count errors": "{count: relative_error(token_mean, per_rank[0]) for count, per_rank"
    " in two.token_gradients.items()}",
    "ignore_index": "inspect.signature(F.cross_entropy).parameters['ignore_index'].default",
}


register(LESSON.name, VALUES.values())


@pytest.fixture(scope="module")
def lesson(lesson_runs):
    run = lesson_runs.get(LESSON.name, VALUES.values())
    return {name: run.values[expression] for name, expression in VALUES.items()}


def errors(measurement: dict, *ways) -> dict[str, float]:
    """Each way's update error, once the measurement is known to hold exactly `ways`."""
    assert list(measurement) == list(ways), f"lesson 7 measured {list(measurement)}, not {ways}"
    return {way: error for way, (_, error) in measurement.items()}


@pytest.mark.slow
def test_even_windows_show_four_ways_on_the_full_batch(lesson):
    even = lesson["even"]
    assert all(error < FLOAT32 for error in errors(even, *FOUR).values()), even
    assert all(steps == 3 for steps, _ in even.values()), even


@pytest.mark.slow
def test_the_short_last_window(lesson):
    tail = errors(lesson["tail"], *FOUR, "textbook loop")
    assert tail["Trainer"] < FLOAT32 and tail["train_accumulated"] < FLOAT32, tail
    assert tail["Accelerate"] > WRONG and tail["Lightning"] > WRONG, tail
    steps = {way: steps for way, (steps, _) in lesson["tail"].items()}
    assert steps["textbook loop"] == steps["Trainer"] - 1, "the textbook loop skips a step"
    fixed = errors(lesson["tail, token weights"], *FIXES)
    assert all(error < FLOAT32 for error in fixed.values()), fixed


@pytest.mark.slow
def test_tokens_on_padded_lines(lesson):
    tokens = errors(lesson["tokens"], *FOUR, *FIXES)
    right = ("Trainer", *FIXES)
    assert all(tokens[way] < FLOAT32 for way in right), tokens
    assert all(tokens[way] > WRONG for way in FOUR if way not in right), tokens


@pytest.mark.slow
def test_the_trainers_count_for_llama_and_gpt2(lesson):
    windows = list(
        zip(lesson["labels"], lesson["targets"], lesson["Llama counted"], lesson["GPT-2 counted"])
    )
    assert windows, "the lesson counts no window"
    for labels, targets, llama, gpt2 in windows:
        assert llama == targets and gpt2 == labels and labels > targets, windows
    assert lesson["GPT-2 before"] > WRONG and lesson["GPT-2 after"] < FLOAT32


@pytest.mark.slow
def test_what_each_one_logs(lesson):
    logged = lesson["logged"]
    steps = zip(lesson["window loss"], lesson["last micro-batch loss"], strict=True)
    for step, (window, last) in enumerate(steps):
        assert abs(window - last) > 1e-3, "the two losses must differ for the claim to show"
        for way, expected in (("Trainer", window), ("Lightning", last), ("Accelerate", last)):
            assert abs(logged[way][step] - expected) < 1e-3, (way, step, logged[way])


@pytest.mark.slow
def test_the_scheduler_and_the_defaults(lesson):
    assert lesson["scheduler steps"] == [3] * 4, "3 scheduler steps for 12 micro-batches"
    (_, right_lr), (length, sized_by_micro_batches_lr) = lesson["schedules"]
    assert length == 12 and sized_by_micro_batches_lr > 0.5
    assert right_lr < 0.5
    assert ["Trainer", "max_grad_norm", 1.0] in lesson["defaults"]


@pytest.mark.slow
def test_clipping(lesson):
    clipped = errors(lesson["clipped"], *FOUR, "Accelerate, clip every micro-batch")
    assert all(clipped[way] < FLOAT32 for way in FOUR), clipped
    assert clipped["Accelerate, clip every micro-batch"] > WRONG, clipped


def test_lesson_7_installs_its_extra_in_its_setup_cell():
    notebook = nbformat.read(LESSON, as_version=4)
    first = next(cell for cell in notebook.cells if cell.cell_type == "code")
    assert first.source == setup_cell_for(LESSON.name) != SETUP_CELL


def test_the_setup_cell_installs_the_extra_where_a_framework_is_missing(monkeypatch):
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda command, check: calls.append(command))
    found = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: None if name == "lightning" else found(name)
    )
    install = setup_cell_for(LESSON.name).split("from gradacc_lessons import")[0]
    exec(compile(install, "setup cell", "exec"), {})
    assert [command[-1] for command in calls] == ["gradacc-lessons[frameworks]"]
    assert calls[0][1:5] == ["-m", "pip", "install", "--quiet"]


@pytest.mark.slow
def test_the_plain_accelerate_loop_lands_on_the_runners_weights(lesson):
    # the notebook's own loop and train_accelerate, from the same weights (float32 each)
    assert lesson["plain loop gap"] < 1e-6


@pytest.mark.slow
def test_the_schedule_tables_rows_have_distinct_names_and_logging_defaults_to_500(lesson):
    rows = lesson["schedule rows"]
    assert len(rows) == len(set(rows)) == 2, rows
    assert any(row[:2] == ["Trainer", "logging_steps"] and row[2] == 500 for row in map(
        list, lesson["defaults"])), lesson["defaults"]  # fmt: skip


@pytest.mark.slow
def test_two_processes_step_the_scheduler_twice_unless_the_batches_are_split(lesson):
    # 32 samples in micro-batches of 2 on 2 processes, N = 4: 16 micro-batches, 4 windows
    default, ignored, split = lesson["two processes"]
    for setup, micro_batches, optimizer_steps, scheduler_steps, rates in (default, ignored):
        assert [micro_batches, optimizer_steps, scheduler_steps] == [8, 2, 4], setup
        assert rates == [1.0, 0.5], setup  # a linear schedule over 4 steps, 2 at a time
    assert ignored[0] == "Accelerator(split_batches=True)"
    assert split[1:4] == [16, 4, 4] and split[4] == [1.0, 0.75, 0.5, 0.25]


@pytest.mark.slow
def test_the_window_token_count_gathered_from_all_processes_is_the_token_mean(lesson):
    assert lesson["ignore_index"] == -100
    errors = lesson["token count errors"]
    assert errors["all processes"] < 1e-12 and errors["this process"] > 0.1, errors
