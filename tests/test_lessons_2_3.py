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
    # One metric, one setup: spread 0.5 gives the same error in the cell and in the table.
    random_order = re.search(r"token mean / N, random order +(.*)", text).group(1).split()
    assert random_order[0] == "0.0%"  # spread 0: the bug hides
    single = number_after(text, "token mean / N: +relative error")
    assert float(random_order[2].rstrip("%")) / 100 == pytest.approx(single, abs=5e-4)


@pytest.mark.slow
def test_lesson_2_loss_scale_and_the_token_bug_trained(executed):
    text = printed(executed[2])
    sgd = re.search(r"SGD +after 1 window +([0-9.e+-]+), after 10 +([0-9.e+-]+)", text)
    adam = re.search(r"AdamW +after 1 window +([0-9.e+-]+), after 10 +([0-9.e+-]+)", text)
    clipped = re.search(
        r"AdamW, clipped +after 1 window +([0-9.e+-]+), after 10 +([0-9.e+-]+)", text
    )
    assert float(sgd.group(1)) == pytest.approx(3.0, rel=1e-3)  # N - 1, by hand
    assert max(map(float, adam.groups())) < 1e-3  # only eps sees the scale
    assert float(clipped.group(2)) > float(adam.group(2))  # clipping makes it matter
    runs = dict(
        (name, (float(loss), float(accuracy)))
        for name, loss, accuracy in re.findall(
            r"^(.+?) +short tokens weigh +\d+%: test loss ([0-9.]+), accuracy ([0-9.]+)%",
            text,
            re.M,
        )
    )
    fixed = runs["normalize='tokens' (any order)"]
    grouped = runs["token mean / N, grouped by length"]
    shuffled = runs["token mean / N, random order"]
    assert grouped[0] > 1.5 * fixed[0] and grouped[1] < fixed[1] - 20  # a different model
    assert shuffled[0] < 1.1 * fixed[0]  # well-mixed micro-batches: nearly harmless


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
    assert number_after(text, "largest \\|output - beta\\|, by hand") == 0.0
    assert number_after(text, "gradient before the layer, by hand") == 0.0
    assert number_after(text, "masks travel with the samples") < 1e-12


@pytest.mark.slow
def test_lesson_3_batchnorm_trained_to_the_end_and_the_gpu_equivalence(executed):
    text = printed(executed[3])
    accuracy = {
        int(b): float(a)
        for b, a in re.findall(
            r"micro-batches of +(\d+) \(N = +\d+\): test accuracy ([0-9.]+)", text
        )
    }
    assert set(accuracy) == {128, 32, 8, 2}
    assert abs(accuracy[32] - accuracy[128]) < 2.0  # 16-32 per BatchNorm: as good as the batch
    assert accuracy[2] < accuracy[128] - 10  # two samples per BatchNorm: much worse
    assert number_after(text, "accumulated vs devices with plain BatchNorm +relative error") < 1e-12
    assert number_after(text, r"accumulated vs one batch \(SyncBatchNorm\) +relative error") > 1e-2
    assert "2 BatchNorm layers now have momentum 0.0131 (N = 8)" in text
