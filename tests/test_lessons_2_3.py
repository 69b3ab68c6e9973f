"""Lessons 2 and 3 run top to bottom, and what they compute backs their claims.

The numbers are read from each lesson's kernel after its last cell (`values`), not
scraped from its printed text; the text is checked only where the text is the claim.
"""

import nbformat
import pytest

from tools.setup_cell import SETUP_CELL

from .conftest import NOTEBOOKS, printed
from .lessons import register

LESSONS = {2: "02_scaling_the_loss.ipynb", 3: "03_batchnorm.ipynb"}
CHECK_YOURSELF = """from gradacc_lessons.quiz.questions import questions_for
from gradacc_lessons.quiz.selfcheck import self_check

self_check(questions_for(lesson={}))"""

RANDOM_ORDER = "series['token mean / N, random order']"  # lesson 2's plot, one error per spread
VALUES = {
    2: {
        "reduction": "vars(reduction_errors)",
        "counts in 16": "counts[16]",
        # the summary table: Damage objects
        "pitfalls": "{d.pitfall: [d.broken, d.fixed] for d in summary}",
        "token mean / N": "buggy_error",
        "normalize='tokens'": "fixed_error",
        "random order, spread 0": f"{RANDOM_ORDER}[spreads.index(0.0)]",
        "random order, spread 0.5": f"{RANDOM_ORDER}[spreads.index(0.5)]",
        "after 1 window": "vars(after[1])",
        "after 10": "vars(after[10])",
        "trained": "[vars(run) for run in trained]",
    },
    3: {
        "BatchNorm1d at N = 4": "errors.batchnorm_mlp[errors.accumulation_steps.index(4)]",
        "BatchNorm2d at N = 4": "errors.batchnorm_cnn[errors.accumulation_steps.index(4)]",
        "batch norm outputs": "differences['mlp', 'batch']",
        "layer norm outputs": "differences['mlp', 'layer']",
        "fixes": "vars(fixes)",
        "facts": "vars(facts)",
        "dropout": "vars(comparison)",
        "accuracy": "[[b, run.test_accuracy[-1]] for b, run in runs.items()]",
        "replicas": "vars(replica_errors)",
        "changed": "changed",
        "momenta": "[m.momentum for m in model.modules() if isinstance(m, torch.nn.BatchNorm1d)]",
    },
}


for _n, _name in LESSONS.items():
    register(_name, VALUES[_n].values())


@pytest.fixture(scope="module")
def executed(lesson_runs):
    lessons = {}
    for n, name in LESSONS.items():
        run = lesson_runs.get(name, VALUES[n].values())
        values = {key: run.values[expression] for key, expression in VALUES[n].items()}
        lessons[n] = run.notebook, values
    return lessons


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
    notebook, _ = executed[lesson]
    images = sum(
        "image/png" in output.get("data", {})
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    )
    assert images >= {2: 3, 3: 2}[lesson], f"lesson {lesson} drew {images} figures"


@pytest.mark.slow
def test_lesson_2_numbers(executed):
    _, value = executed[2]
    reduction = value["reduction"]
    assert reduction["mean_divided"] < 1e-12
    assert reduction["mean_not_divided"] == pytest.approx(3.0)
    assert reduction["sum_not_divided"] < 1e-12
    assert value["counts in 16"] == pytest.approx(4 / 3, abs=0.01)
    pitfalls = value["pitfalls"]
    assert set(pitfalls) == {
        "uneven micro-batches",
        "token mean / N (sorted)",
        "last incomplete window",
        "scheduler per micro-batch",
        "clipping per micro-batch",
        "logged loss",
    }
    for pitfall, (broken, fixed) in pitfalls.items():
        assert broken > 1e-2, pitfall
        assert fixed < 1e-12, pitfall
    assert value["normalize='tokens'"] < 1e-12
    # One metric, one setup: spread 0.5 gives the same error in the cell and in the table.
    assert value["random order, spread 0"] < 5e-4  # spread 0 (prints 0.0%): the bug hides
    single = value["token mean / N"]
    assert value["random order, spread 0.5"] == pytest.approx(single, abs=5e-4)


@pytest.mark.slow
def test_lesson_2_loss_scale_and_the_token_bug_trained(executed):
    _, value = executed[2]
    one, ten = value["after 1 window"], value["after 10"]
    assert one["sgd"] == pytest.approx(3.0, rel=1e-3)  # N - 1, by hand
    assert max(one["adamw"], ten["adamw"]) < 1e-3  # only eps sees the scale
    assert ten["adamw_clipped"] > ten["adamw"]  # clipping makes it matter
    # test accuracy as a fraction: 0.20 is 20 points
    runs = {(run["normalize"], run["group_by_length"]): run for run in value["trained"]}
    fixed, grouped, shuffled = runs["tokens", True], runs["naive", True], runs["naive", False]
    # a different model
    assert grouped["test_loss"] > 1.5 * fixed["test_loss"]
    assert grouped["test_accuracy"] < fixed["test_accuracy"] - 0.20
    # well-mixed micro-batches: nearly harmless
    assert shuffled["test_loss"] < 1.1 * fixed["test_loss"]


@pytest.mark.slow
def test_lesson_3_numbers(executed):
    notebook, value = executed[3]
    assert value["BatchNorm1d at N = 4"] > 0.1
    assert value["BatchNorm2d at N = 4"] > 0.01
    assert value["batch norm outputs"] > 1e-2
    assert value["layer norm outputs"] < 1e-12
    fixes = value["fixes"]
    for fix in ("batchnorm_mlp_eval", "layernorm_mlp", "groupnorm_cnn"):
        assert fixes[fix] < 1e-12, fix
    assert fixes["batchnorm_mlp_train"] > 1e-2
    # PyTorch's own error message is the claim: the lesson shows it refusing one sample.
    assert "Expected more than 1 value per channel when training" in printed(notebook)
    assert value["facts"]["output_minus_beta"] == 0.0
    assert value["facts"]["gradient_before"] == 0.0
    assert value["dropout"]["masks_with_samples"] < 1e-12


@pytest.mark.slow
def test_lesson_3_batchnorm_trained_to_the_end_and_the_gpu_equivalence(executed):
    _, value = executed[3]
    accuracy = dict(value["accuracy"])  # {micro-batch: test accuracy in %}
    assert set(accuracy) == {128, 32, 8, 2}
    assert abs(accuracy[32] - accuracy[128]) < 2.0  # 16-32 per BatchNorm: as good as the batch
    assert accuracy[2] < accuracy[128] - 10  # two samples per BatchNorm: much worse
    assert value["replicas"]["plain_batchnorm"] < 1e-12
    assert value["replicas"]["sync_batchnorm"] > 1e-2
    assert value["changed"] == 2
    # m_N = 1 - 0.9 ** (1/8) for N = 8, as the lesson prints it (to 4 places)
    assert value["momenta"] == [pytest.approx(0.0131, abs=5e-5)] * 2
