"""Lesson 1 runs top to bottom, and the numbers it prints back its claims."""

import re

import pytest

from tools.notebooks import execute_notebook

from .conftest import NOTEBOOKS, printed


def number_after(text: str, pattern: str) -> float:
    match = re.search(pattern + r"\s*([0-9.]+e[-+][0-9]+)", text)
    assert match, f"the lesson no longer prints {pattern!r}"
    return float(match.group(1))


@pytest.fixture(scope="module")
def lesson():
    notebook, seconds = execute_notebook(NOTEBOOKS / "01_accumulation_is_a_full_batch.ipynb")
    return printed(notebook), seconds


@pytest.mark.slow
def test_lesson_1_runs_quickly(lesson):
    _, seconds = lesson
    # the issue asks for 20 s on an idle 2-core machine; leave room for a loaded one
    assert seconds < 60, f"lesson 1 took {seconds:.0f} s"


@pytest.mark.slow
def test_lesson_1_shows_equal_gradients(lesson):
    text, _ = lesson
    assert number_after(text, "float32: relative error") < 1e-4
    assert number_after(text, "float64: relative error") < 1e-12
    assert number_after(text, "float32 accumulated vs float64:") < 1e-4


@pytest.mark.slow
def test_lesson_1_shows_the_bugs_and_the_fix(lesson):
    text, _ = lesson
    assert float(re.search(r"window's gradient: ([0-9.]+)", text).group(1)) > 0.1
    assert (
        number_after(text, r"textbook_loop +2 steps, parameters differ from full batch by") < 1e-4
    )
    assert (
        number_after(text, r"off_by_one_loop +2 steps, parameters differ from full batch by") > 1e-2
    )


@pytest.mark.slow
@pytest.mark.parametrize("optimizer", [r"SGD \+ momentum", "AdamW"])
def test_lesson_1_shows_equal_training(lesson, optimizer):
    text, _ = lesson
    prefix = optimizer + r" +{} +after 20 steps: parameters differ by"
    assert number_after(text, prefix.format("float32")) < 1e-4
    assert number_after(text, prefix.format("float64")) < 1e-10


@pytest.mark.slow
def test_lesson_1_shows_activations_growing_with_the_batch(lesson):
    text, _ = lesson
    sizes = [float(m) for m in re.findall(r"activations +([0-9.]+) MiB", text)]
    assert len(sizes) == 3 and sizes[0] < sizes[1] < sizes[2]
    assert sizes[2] / sizes[0] == pytest.approx(256 / 16, rel=0.05)
