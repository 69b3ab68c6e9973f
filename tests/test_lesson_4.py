"""Lesson 4 runs top to bottom, and the numbers it prints back its claims."""

import re

import pytest
import torch

from tools.notebooks import execute_notebook

from .conftest import NOTEBOOKS

LESSON = NOTEBOOKS / "04_peak_memory.ipynb"
LAST_CELL = """from gradacc_lessons.quiz.questions import questions_for
from gradacc_lessons.quiz.selfcheck import self_check

self_check(questions_for(lesson=4))"""


def outputs(notebook, name):
    return "".join(
        output.get("text", "")
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "stream" and output.get("name") == name
    )


def ratios(text: str, model: str) -> dict[int, float]:
    line = next(line for line in text.splitlines() if line.startswith(model + " N=1:"))
    return {int(n): float(r) for n, r in re.findall(r"N=(\d+): ([0-9.]+)", line)}


@pytest.fixture(scope="module")
def lesson():
    notebook = execute_notebook(LESSON).notebook
    return notebook, outputs(notebook, "stdout")


@pytest.mark.slow
def test_lesson_4_runs_quietly(lesson):
    notebook, _ = lesson
    # The profiler's C++ side logs a "profiler_start" and a "profiler_stop" line per
    # measurement unless KINETO_LOG_LEVEL is 6 or more before its first use: the setup
    # cell sets it, so nothing reaches stderr.
    assert outputs(notebook, "stderr") == "", "the lesson writes to stderr"


@pytest.mark.slow
def test_lesson_4_says_which_method_it_used(lesson):
    _, text = lesson
    expected = "CUDA: allocator" if torch.cuda.is_available() else "CPU: profiler allocation"
    assert expected in text


@pytest.mark.slow
def test_lesson_4_model_and_measurement_agree_on_the_parts(lesson):
    _, text = lesson
    modelled, measured = re.search(
        r"Adam's state: ([\d,]+) bytes \(measured ([\d,]+)\)", text
    ).groups()
    assert modelled == measured
    modelled, measured = re.search(r"= ([\d,]+) \(measured ([\d,]+)\)", text).groups()
    modelled, measured = (int(v.replace(",", "")) for v in (modelled, measured))
    assert abs(modelled - measured) <= 0.1 * measured


@pytest.mark.slow
def test_lesson_4_shows_where_accumulation_stops_helping(lesson):
    _, text = lesson
    cnn, mlp = ratios(text, "CNN"), ratios(text, "MLP")
    assert cnn[16] < 0.2  # activations dominate: splitting pays all the way
    assert mlp[16] > 0.7  # parameters, gradients and Adam's state dominate: a floor
    assert mlp[16] == mlp[8]  # the peak has stopped falling


@pytest.mark.slow
@pytest.mark.benchmark  # ratios of times: make bench, not make test
def test_lesson_4_reconciles_the_two_claims_about_time(lesson):
    _, text = lesson
    row = re.search(r"N=64: +([0-9.]+)x the time .*?, +([0-9.]+)x faster", text)
    slower, faster = map(float, row.groups())
    assert slower > 1.0  # no throughput gain over the whole batch
    assert faster > 1.0  # but faster than 64 small batches with a step each


@pytest.mark.slow
def test_lesson_4_plan_fits_and_the_error_says_by_how_much(lesson):
    _, text = lesson
    # One unit for the plan and its check (format_bytes): "880.3 KiB <= budget 1 MiB".
    assert re.search(r"measured peak [\d.]+ [KM]iB <= budget [\d.]+ [KM]iB: True", text)
    assert re.search(r"too small: .* over the budget", text)


@pytest.mark.slow
def test_lesson_4_finds_the_peak_and_the_rule_matches(lesson):
    _, text = lesson
    step, rule = re.search(
        r"optimizer step: floor \+ ([\d.]+ \w+) \(rule: ([\d.]+ \w+)\)", text
    ).groups()
    assert step == rule  # to the printed digits: Adam's loop temporaries
    assert re.search(r"CNN, N = 4: peak [\d.]+ [KM]iB in backward \d", text)
    # The real-model arithmetic, by hand: 16 bytes x 7e9, 34 x 4096 x 32 x 4096 bytes.
    assert "total 112 GB" in text and "one 4,096-token sequence: 18.3 GB" in text
    assert "the floor alone is 1.4 x its memory" in text
    assert "3 sequences per micro-batch; 192 sequences per step: N = 8" in text


def test_lesson_4_ends_with_the_self_check():
    import nbformat

    notebook = nbformat.read(LESSON, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code[-1].source == LAST_CELL
    assert all(len(cell.source.splitlines()) <= 15 for cell in code[1:]), "keep cells short"
