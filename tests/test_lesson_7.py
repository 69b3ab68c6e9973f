"""Lesson 7 runs top to bottom, and the tables it shows back each sentence it writes.

tests/test_frameworks.py checks the package against hand computations; this file checks
that the executed notebook shows what its prose says, reading the tables it printed.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess

import nbformat
import pytest

from tools.notebooks import execute_notebook
from tools.setup_cell import SETUP_CELL, setup_cell_for

from .conftest import NOTEBOOKS

LESSON = NOTEBOOKS / "07_frameworks.ipynb"
FLOAT32 = 1e-5  # float32 against float64 over 3 SGD steps: measured <= 7e-7 (test_frameworks)
WRONG = 1e-2  # the smallest wrong recipe the lesson shows is 3e-2


@pytest.fixture(scope="module")
def tables():
    notebook = execute_notebook(LESSON).notebook
    shown = [
        output.get("text", "") + output.get("data", {}).get("text/plain", "")
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    ]
    return [table for text in shown for table in read_tables(text)]


def read_tables(text: str) -> list[list[list[str]]]:
    """Every table the lesson printed: lists of rows of cells (header first)."""
    found, rows = [], []
    for line in text.splitlines() + [""]:
        cells = re.split(r"\s{2,}", line.strip())
        if rows and len(cells) == len(rows[0]):
            rows.append(cells)
            continue
        if len(rows) > 1:
            found.append(rows)
        rows = [cells] if line.startswith(("way ", "window ", "step ", "class ")) else []
    return found


def measurement(tables, *ways):
    """The measurement table whose ways are exactly `ways` (the full batch aside)."""
    for table in tables:
        if table[0][0] == "way" and "update error vs full batch" in table[0]:
            found = {row[0]: (int(row[1]), float(row[2])) for row in table[1:]}
            if list(found)[1:] == list(ways):
                return found
    raise AssertionError(f"lesson 7 no longer shows a measurement of exactly {ways}")


FOUR = ("train_accumulated", "Trainer", "Accelerate", "Lightning")
FIXES = ("Accelerate + token weights", "Lightning + token weights")


@pytest.mark.slow
def test_even_windows_show_four_ways_on_the_full_batch(tables):
    even = measurement(tables, *FOUR)
    assert all(error < FLOAT32 and steps == 3 for steps, error in list(even.values())[1:]), even


@pytest.mark.slow
def test_the_short_last_window(tables):
    tail = measurement(tables, *FOUR, "textbook loop")
    assert tail["Trainer"][1] < FLOAT32 and tail["train_accumulated"][1] < FLOAT32, tail
    assert tail["Accelerate"][1] > WRONG and tail["Lightning"][1] > WRONG, tail
    assert tail["textbook loop"][0] == tail["Trainer"][0] - 1, "the textbook loop skips a step"
    fixed = measurement(tables, *FIXES)
    assert all(error < FLOAT32 for _, error in list(fixed.values())[1:]), fixed


@pytest.mark.slow
def test_tokens_on_padded_lines(tables):
    tokens = measurement(tables, *FOUR, *FIXES)
    right = ("Trainer", *FIXES)
    assert all(tokens[way][1] < FLOAT32 for way in right), tokens
    assert all(tokens[way][1] > WRONG for way in FOUR if way not in right), tokens


@pytest.mark.slow
def test_the_trainers_count_for_llama_and_gpt2(tables):
    counts = next(t for t in tables if t[0][:3] == ["window", "labels", "next-token targets"])
    for row in counts[1:]:
        labels, targets, llama, gpt2 = (int(cell) for cell in row[1:])
        assert llama == targets and gpt2 == labels and labels > targets, counts
    gpt2_before, gpt2_after = [
        t
        for t in tables
        if t[0][0] == "way" and [row[0] for row in t[1:]] == ["float64 full batch", "Trainer"]
    ]
    assert float(gpt2_before[2][2]) > WRONG and float(gpt2_after[2][2]) < FLOAT32


@pytest.mark.slow
def test_what_each_one_logs(tables):
    losses = next(t for t in tables if t[0][:3] == ["step", "window loss", "its last micro-batch"])
    column = {name: i for i, name in enumerate(losses[0])}
    for row in losses[1:]:
        window, last = float(row[1]), float(row[2])
        assert abs(window - last) > 1e-3, "the two losses must differ for the claim to show"
        for way, expected in (("Trainer", window), ("Lightning", last), ("Accelerate", last)):
            assert abs(float(row[column[way]]) - expected) < 1e-3, (way, row)


@pytest.mark.slow
def test_the_scheduler_and_the_defaults(tables):
    schedules = [t for t in tables if t[0][:2] == ["way", "schedule length"]]
    assert all(row[2] == "3" for row in schedules[0][1:]), "3 scheduler steps for 12 micro-batches"
    right, sized_by_micro_batches = schedules[1][1:]
    assert sized_by_micro_batches[1] == "12" and float(sized_by_micro_batches[3]) > 0.5
    assert float(right[3]) < 0.5
    defaults = next(t for t in tables if t[0][0] == "class")
    assert ["Trainer", "max_grad_norm", "1.0"] in defaults


@pytest.mark.slow
def test_clipping(tables):
    clipped = measurement(tables, *FOUR, "Accelerate, clip every micro-batch")
    assert all(clipped[way][1] < FLOAT32 for way in FOUR), clipped
    assert clipped["Accelerate, clip every micro-batch"][1] > WRONG, clipped


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
