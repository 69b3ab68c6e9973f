"""Lesson 4 runs top to bottom, and what it computes backs its claims.

The numbers are read from the lesson's kernel after its last cell (`values`), not
scraped from its printed text; the text is checked only where the wording is the claim.
"""

import re

import pytest
import torch

from .conftest import NOTEBOOKS
from .lessons import register

LESSON = NOTEBOOKS / "04_peak_memory.ipynb"
LAST_CELL = """from gradacc_lessons.quiz.questions import questions_for
from gradacc_lessons.quiz.selfcheck import self_check

self_check(questions_for(lesson=4))"""
VALUES = {
    "method": "report.method",
    "Adam's state": "[model_says.optimizer_bytes, report.optimizer_bytes]",
    "activations": "[model_says.activation_bytes, report.activation_bytes]",
    "CNN peaks": "[[r.accumulation_steps, r.peak_bytes] for r in cnn_by_n]",
    "MLP peaks": "[[r.accumulation_steps, r.peak_bytes] for r in mlp_by_n]",
    "last timing": "[timing.accumulation_steps[-1], timing.slowdown[-1],"
    " timing.saving_over_small_batches[-1]]",
    "fits": "fits",
    "step and rule": "[step_extra, rule.step_bytes]",
    "CNN peak phase": "highest.name",
    "7B floor": "floor_7b",
    "sequence": "[sequence, checkpointed]",
    "floor over one GPU": "floor_over_gpu",
    "per micro-batch and N": "[per_micro_batch, n_7b]",
    "plan peak": "[plan.predicted_peak_bytes, plan.memory_budget, plan.report.floor_bytes]",
}


def outputs(notebook, name):
    return "".join(
        output.get("text", "")
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "stream" and output.get("name") == name
    )


def shares(peaks: list[list[int]]) -> dict[int, float]:
    """Each N's peak as a share of the peak at N = 1 (the lesson's table)."""
    return {n: peak / peaks[0][1] for n, peak in peaks}


register(LESSON.name, VALUES.values())


@pytest.fixture(scope="module")
def lesson(lesson_runs):
    run = lesson_runs.get(LESSON.name, VALUES.values())
    values = {name: run.values[expression] for name, expression in VALUES.items()}
    return run.notebook, outputs(run.notebook, "stdout"), values


@pytest.mark.slow
def test_lesson_4_runs_quietly(lesson):
    notebook, _, _ = lesson
    # The profiler's C++ side logs a "profiler_start" and a "profiler_stop" line per
    # measurement unless KINETO_LOG_LEVEL is 6 or more before its first use: the setup
    # cell sets it, so nothing reaches stderr.
    assert outputs(notebook, "stderr") == "", "the lesson writes to stderr"


@pytest.mark.slow
def test_lesson_4_says_which_method_it_used(lesson):
    _, _, value = lesson
    expected = "CUDA: allocator" if torch.cuda.is_available() else "CPU: profiler allocation"
    assert expected in value["method"]


@pytest.mark.slow
def test_lesson_4_model_and_measurement_agree_on_the_parts(lesson):
    _, _, value = lesson
    modelled, measured = value["Adam's state"]
    assert modelled == measured
    modelled, measured = value["activations"]
    assert abs(modelled - measured) <= 0.1 * measured


@pytest.mark.slow
def test_lesson_4_shows_where_accumulation_stops_helping(lesson):
    _, _, value = lesson
    cnn, mlp = shares(value["CNN peaks"]), shares(value["MLP peaks"])
    assert cnn[16] < 0.2  # activations dominate: splitting pays all the way
    assert mlp[16] > 0.7  # parameters, gradients and Adam's state dominate: a floor
    assert mlp[16] == mlp[8]  # the peak has stopped falling


@pytest.mark.slow
@pytest.mark.benchmark  # ratios of times: make bench, not make test
def test_lesson_4_reconciles_the_two_claims_about_time(lesson):
    _, _, value = lesson
    n, slower, faster = value["last timing"]
    assert n == 64
    assert slower > 1.0  # no throughput gain over the whole batch
    assert faster > 1.0  # but faster than 64 small batches with a step each


@pytest.mark.slow
def test_lesson_4_plan_fits_and_the_error_says_by_how_much(lesson):
    _, text, value = lesson
    assert value["fits"] is True
    # The wording is the claim: one unit for the plan and its check (format_bytes),
    # "880.3 KiB <= budget 1 MiB"; and the planner's error, caught and printed, says
    # by how much the budget is short.
    assert re.search(r"measured peak [\d.]+ [KM]iB <= budget [\d.]+ [KM]iB", text)
    assert re.search(r"too small: .* over the budget", text)


@pytest.mark.slow
def test_lesson_4_finds_the_peak_and_the_rule_matches(lesson):
    _, _, value = lesson
    step, rule = value["step and rule"]
    # Adam's loop temporaries: equal to the 4 digits the lesson prints (measured 12 B apart)
    assert step == pytest.approx(rule, rel=1e-3)
    assert value["CNN peak phase"].startswith("backward ")
    # The real model, traced by the planner, against arithmetic by hand. Mistral-7B's
    # published dimensions: 32 layers of q, k, v, o (8 KV heads of 128), a SwiGLU MLP of
    # 14,336 and two RMSNorms; embeddings and an untied output layer of 32,000 x 4,096.
    weights = 32 * (4096 * 4096 * 2 + 4096 * 1024 * 2 + 4096 * 14336 * 3 + 2 * 4096)
    weights += 32000 * 4096 * 2 + 4096
    assert weights == 7_241_732_096
    # float32 weights, float32 gradients, two float32 moments, each tensor rounded up to the
    # CUDA allocator's 512 bytes: 291 tensors x 4 copies x < 512 B is under 0.6 MB of 116 GB,
    # 5.1e-6 relative at most; 1e-5 allows that and fails a floor missing any 7B-sized part
    assert value["7B floor"] == pytest.approx(16 * weights, rel=1e-5)
    sequence, checkpointed = value["sequence"]
    # checkpointing keeps at least each layer's bfloat16 input, far less than everything
    assert 32 * 4096 * 4096 * 2 <= checkpointed < sequence / 4
    gpu = 80 * 2**30
    assert value["floor over one GPU"] == pytest.approx(16 * weights / gpu, rel=1e-5)  # as above
    per_micro_batch = int((gpu - value["7B floor"] / 8) // sequence)
    assert value["per micro-batch and N"] == [per_micro_batch, -(-192 // (8 * per_micro_batch))]


def test_lesson_4_ends_with_the_self_check():
    import nbformat

    notebook = nbformat.read(LESSON, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code[-1].source == LAST_CELL
    assert all(len(cell.source.splitlines()) <= 15 for cell in code[1:]), "keep cells short"


@pytest.mark.slow
def test_lesson_4_shows_one_peak_in_one_unit(lesson):
    notebook, text, value = lesson
    peak, budget, floor = value["plan peak"]
    in_kib = f"{peak / 2**10:.4g} KiB"  # the lesson's unit for sizes under 1 MiB
    assert peak < 2**20 and f"measured peak {in_kib}" in text  # the check after the plan
    slider = next(
        output["data"]["text/html"]
        for cell in notebook.cells
        if "budget_slider(" in cell.source
        for output in cell.outputs
        if "text/html" in output.get("data", {})
    )
    assert f"measured peak {in_kib}" in slider  # the slider, at the same budget, says the same
    # no size under 1 MiB written in MiB ("0.860 MiB"), in the prints or the slider
    assert not re.search(r"\b0\.\d+ MiB", text + slider.split("measured peak")[1])
    # The slider's "no plan" starts above the floor: a one-sample window peaks higher.
    assert floor < peak <= budget
    match = re.search(r"one window of the CNN on \w+: ([\d.]+) (KiB|MiB)", text)
    assert match and float(match.group(1)) > 0  # the package's peak recipe, on this device
