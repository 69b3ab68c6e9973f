"""Lessons 2 and 3 run top to bottom, and the numbers they print back their claims."""

import re

import nbformat
import pytest

from tools.notebooks import execute_notebook
from tools.setup_cell import SETUP_CELL

from .conftest import NOTEBOOKS, printed

LESSONS = {2: "02_scaling_the_loss.ipynb", 3: "03_batchnorm.ipynb"}
CHECK_YOURSELF = """from gradacc_lessons.quiz.questions import questions_for
from gradacc_lessons.quiz.selfcheck import self_check

self_check(questions_for(lesson={}))"""


def number_after(text: str, pattern: str) -> float:
    match = re.search(pattern + r"\s*([0-9.]+(?:e[-+][0-9]+)?)(%?)", text)
    assert match, f"the lesson no longer prints {pattern!r}"
    return float(match.group(1)) / (100 if match.group(2) else 1)


@pytest.fixture(scope="module")
def executed():
    return {n: execute_notebook(NOTEBOOKS / name).notebook for n, name in LESSONS.items()}


@pytest.mark.parametrize("lesson", LESSONS)
def test_committed_clean_with_setup_and_check_yourself(lesson):
    notebook = nbformat.read(NOTEBOOKS / LESSONS[lesson], as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code[0].source == SETUP_CELL
    assert code[-1].source == CHECK_YOURSELF.format(lesson)
    assert all(not c.outputs and c.execution_count is None for c in code), "clear the outputs"


@pytest.mark.slow
@pytest.mark.parametrize("lesson", LESSONS)
def test_runs_without_errors_and_draws_its_figures(executed, lesson):
    notebook = executed[lesson]
    images = sum(
        "image/png" in output.get("data", {})
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    )
    assert images >= {2: 3, 3: 2}[lesson], f"lesson {lesson} drew {images} figures"


@pytest.mark.slow
def test_lesson_2_numbers(executed):
    text = printed(executed[2])
    assert number_after(text, "mean loss, divided by N") < 1e-12
    assert number_after(text, "mean loss, no scaling") == pytest.approx(3.0)
    assert number_after(text, "sum loss, no scaling") < 1e-12
    assert number_after(text, "micro-batch of 16: counts") == pytest.approx(4 / 3, abs=0.01)
    for pitfall in (
        "uneven micro-batches",
        "token mean / N \\(sorted\\)",
        "last incomplete window",
        "scheduler per micro-batch",
        "clipping per micro-batch",
        "logged loss",
    ):
        assert number_after(text, pitfall + " +broken") > 1e-2, pitfall
        assert number_after(text, pitfall + r" +broken +[0-9.]+% +fixed") < 1e-12, pitfall
    assert number_after(text, "normalize='tokens': relative error") < 1e-12
    assert number_after(text, "at spread 0 the bug is invisible: error") < 1e-12


@pytest.mark.slow
def test_lesson_3_numbers(executed):
    text = printed(executed[3])
    assert number_after(text, "BatchNorm1d MLP: gradient error") > 0.1
    assert number_after(text, "BatchNorm2d CNN: gradient error") > 0.01
    assert number_after(text, "mlp with batch norm: outputs differ by") > 1e-2
    assert number_after(text, "mlp with layer norm: outputs differ by") < 1e-12
    for fix in ("BatchNorm1d, eval mode", "LayerNorm \\(MLP\\)", "GroupNorm \\(CNN\\)"):
        assert number_after(text, fix) < 1e-12, fix
    assert number_after(text, "BatchNorm1d, train mode") > 1e-2
    assert "Expected more than 1 value per channel when training" in text
    assert number_after(text, "masks travel with the samples") < 1e-12
