"""Lesson 1 runs top to bottom, and what it computes backs its claims.

The numbers are read from the lesson's kernel after its last cell (`values`), not
scraped from its printed text, wherever the lesson keeps them in a variable.
"""

import re

import pytest

from .conftest import printed
from .lessons import register

VALUES = {
    "float32": "comparison32.relative",
    "float64": "comparison64.relative",
    "by hand": "relative_error(accumulated, by_hand)",
    "steps": "[i for i, e in enumerate(events) if e.kind == 'step']",
    "last micro-batch": "[events[i - 1].position for i in"
    " [i for i, e in enumerate(events) if e.kind == 'step']]",
    "stale": "relative_error(full_batch_gradients(model, loss_fn, x, y), polluted)",
    "loops": "[[r.relative_error, r.steps] for r in loop_comparison.runs]",
    "loop names": "[r.loop for r in loop_comparison.runs]",
    "full batch steps": "loop_comparison.full_batch_steps",
    "training": "[(g.optimizer, g.dtype, g.steps, g.relative_error) for g in training.gaps]",
}


LESSON = "01_accumulation_is_a_full_batch.ipynb"
register(LESSON, VALUES.values())


@pytest.fixture(scope="module")
def lesson(lesson_runs):
    run = lesson_runs.get(LESSON, VALUES.values())
    values = {name: run.values[expression] for name, expression in VALUES.items()}
    return printed(run.notebook), values


@pytest.mark.slow
def test_lesson_1_shows_equal_gradients(lesson):
    _, value = lesson
    # float32: rounding order only, <= 2e-7 measured (docs/measurements.md); float64: <= 6e-16.
    assert value["float32"] < 1e-5
    assert value["float64"] < 1e-12
    # The loop the lesson writes out is the package's loop: the same operations, the same bits.
    assert value["by hand"] == 0.0


@pytest.mark.slow
def test_lesson_1_shows_both_float32_gradients_at_float32_rounding(lesson):
    text, _ = lesson
    pairs = re.findall(r"batch \d: float32 full batch ([0-9.e-]+), accumulated ([0-9.e-]+)", text)
    assert len(pairs) == 5
    # Against float64 both sit at float32 rounding (eps 1.2e-7): measured 1e-7 to 2e-7 on
    # five batches; 1e-6 is 5x that and 1e5x below any scaling error.
    for full, accumulated in pairs:
        assert float(full) < 1e-6 and float(accumulated) < 1e-6


@pytest.mark.slow
def test_lesson_1_steps_after_the_last_micro_batch_of_each_window(lesson):
    _, value = lesson
    assert value["last micro-batch"] == [3, 3]  # 8 micro-batches, windows of 4 (from 0)
    assert len(value["steps"]) == 2


@pytest.mark.slow
def test_lesson_1_names_layers_and_counts_micro_batches_from_one(lesson):
    text, _ = lesson
    assert "(0): Linear(in_features=64" in text and "(6): Linear(" in text
    assert "after micro-batch [4, 4] of 4 in each window" in text


@pytest.mark.slow
def test_lesson_1_shows_the_bugs_and_the_fix(lesson):
    _, value = lesson
    assert value["stale"] > 0.1  # a stale gradient is not rounding: it is another update
    (textbook, textbook_steps), (off_by_one, off_by_one_steps) = value["loops"]
    assert textbook_steps == off_by_one_steps == 2  # counting steps does not find the bug
    assert value["loop names"] == ["textbook_loop", "off_by_one_loop"]
    assert value["full batch steps"] == 2
    assert textbook < 1e-5  # float32 rounding after two SGD steps
    assert off_by_one > 1e-2


@pytest.mark.slow
def test_lesson_1_shows_equal_training(lesson):
    _, value = lesson
    runs = {(optimizer, dtype): (steps, gap) for optimizer, dtype, steps, gap in value["training"]}
    assert set(runs) == {
        (optimizer, dtype)
        for optimizer in ("SGD + momentum", "AdamW")
        for dtype in ("float32", "float64")
    }
    # measured after 20-200 steps: <= 4.7e-7 in float32, <= 5.7e-16 in float64
    # (docs/measurements.md)
    for (_, dtype), (steps, gap) in runs.items():
        assert steps == 1280 // (16 * 4)  # 80 micro-batches of 16, windows of 4
        assert gap < (1e-4 if dtype == "float32" else 1e-10)


@pytest.mark.slow
def test_lesson_1_shows_activations_growing_with_the_batch(lesson):
    text, _ = lesson
    sizes = [float(m) for m in re.findall(r"activations +([0-9.]+) MiB", text)]
    assert len(sizes) == 3 and sizes[0] < sizes[1] < sizes[2]
    # activations are linear in the batch (R² = 1.000); 5 % leaves room for the printed rounding
    assert sizes[2] / sizes[0] == pytest.approx(256 / 16, rel=0.05)
