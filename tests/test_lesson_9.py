"""Lesson 9 runs top to bottom, and its plans agree with independent arithmetic and measurement.

The numbers are read from the lesson's kernel after its last cell (`values`), as in
tests/test_lesson_4.py; the floors are recomputed here by hand from the published
dimensions of Llama-3.1-8B.
"""

import math
import re

import pytest

from .conftest import NOTEBOOKS
from .lessons import register

LESSON = NOTEBOOKS / "09_plan_a_real_fine_tune.ipynb"
GiB = 2**30
VALUES = {
    "first": "[fake.peak_bytes, real.peak_bytes, fake.phase, real.phase]",
    "full fine-tune": "full_fine_tune_error",
    "lora": "[lora_plan.micro_batch_size, lora_plan.accumulation_steps, lora_plan.peak_bytes,"
    " lora_plan.budget_bytes, lora_plan.floor_bytes, lora_plan.no_accumulation_bytes,"
    " lora_plan.reserve_bytes]",
    "segmentation": "[segmentation_plan.micro_batch_size, segmentation_plan.accumulation_steps]",
    "group": "[group_plan.micro_batch_size, group_plan.accumulation_steps]",
    "group answer": "[same, gn.peak_bytes, bn.peak_bytes]",
    "small": "[[p.micro_batch_size, p.peak_bytes] for p in (small_lm_predicted, small_lm_measured,"
    " small_unet_predicted, small_unet_measured)]",
    "estimates": "estimates",
}
# Llama-3.1-8B (its published config.json): 32 layers, hidden 4096, MLP 14336, 8 KV heads
# of 128, a vocabulary of 128,256 with an untied output layer.
LLAMA_8B_WEIGHTS = (
    32
    * (
        4096 * 4096 * 2  # q, o
        + 4096 * 1024 * 2  # k, v
        + 4096 * 14336 * 3  # gate, up, down
        + 4096 * 2  # the two RMSNorms
    )
    + 128256 * 4096 * 2
    + 4096
)
# LoRA of rank 16 on every linear layer of the 32 blocks: r x (inputs + outputs) each
LORA_WEIGHTS = 32 * 16 * ((4096 + 4096) * 2 + (4096 + 1024) * 2 + (4096 + 14336) * 3)


register(LESSON.name, VALUES.values())


@pytest.fixture(scope="module")
def value(lesson_runs):
    run = lesson_runs.get(LESSON.name, VALUES.values())  # the run's one execution of the lesson
    return {name: run.values[expression] for name, expression in VALUES.items()}


@pytest.mark.slow
def test_the_fake_step_matches_the_measured_step(value):
    fake, real, fake_phase, real_phase = value["first"]
    assert fake == pytest.approx(real, rel=0.001)
    assert fake_phase == real_phase == "backward"


@pytest.mark.slow
def test_full_fine_tuning_of_8b_is_below_the_floor_by_hand(value):
    message = value["full fine-tune"]
    assert "below the floor" in message
    floor = float(re.search(r"floor of ([\d.]+) GiB", message).group(1)) * GiB
    # bf16-mixed AdamW: float32 weights, float32 gradients, two float32 moments
    assert LLAMA_8B_WEIGHTS == 8_030_261_248
    assert floor == pytest.approx(16 * LLAMA_8B_WEIGHTS, rel=0.001)


@pytest.mark.slow
def test_lora_with_checkpointing_fits_24_gib_with_accumulation(value):
    micro_batch_size, steps, peak, budget, floor, whole, reserve = value["lora"]
    # the card's total as CUDA reports it (24,564 MiB), less the reserve for the CUDA context
    assert budget == 24_564 * 2**20 and reserve == 1 * GiB
    assert peak <= budget - reserve < whole
    assert steps == math.ceil(256 / micro_batch_size) and steps > 1
    # frozen bfloat16 weights; peft keeps the adapters in float32 over a bfloat16 model
    # (get_peft_model's autocast_adapter_dtype=True, peft 0.21.2): LoRA weights, gradients
    # and AdamW's two moments, 4 + 4 + 8 bytes each
    by_hand = 2 * LLAMA_8B_WEIGHTS + 16 * LORA_WEIGHTS
    assert floor == pytest.approx(by_hand, rel=0.01)


@pytest.mark.slow
def test_the_segmentation_model_fits_2_and_needs_16_steps(value):
    assert value["segmentation"] == [2, 16]
    assert value["group"][1] == math.ceil(32 / value["group"][0])


@pytest.mark.slow
def test_the_groupnorm_question_is_answered_from_both_plans(value):
    same, group_peak, batch_peak = value["group answer"]
    assert same == (value["group"] == value["segmentation"])
    assert group_peak > 0 and batch_peak > 0


@pytest.mark.slow
def test_small_versions_trained_here_match_their_plans(value):
    lm_predicted, lm_measured, unet_predicted, unet_measured = value["small"]
    assert lm_predicted[0] == lm_measured[0]
    # within 1 %: LoRA's float32 output added to bfloat16 activations costs a float32 copy,
    # which the planner counts on the CPU (planning/cpu_kernels.py)
    assert lm_predicted[1] == pytest.approx(lm_measured[1], rel=0.01)
    assert unet_predicted[0] == unet_measured[0]
    # within 1 %: the columns of PyTorch's slow convolution path (a CPU plan and measurement
    # run with oneDNN off) are counted (tests/test_planning.py: -0.6 % at most)
    assert unet_predicted[1] == pytest.approx(unet_measured[1], rel=0.01)


@pytest.mark.slow
def test_the_planner_is_closest_and_accelerate_leaves_out_activations(value):
    for name, estimate in value["estimates"].items():
        assert estimate["planner"] == pytest.approx(estimate["measured"], rel=0.01), name
        assert estimate["Accelerate"] < estimate["measured"] or "LoRA" in name, name
