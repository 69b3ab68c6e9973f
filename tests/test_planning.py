"""The planner against the course's measurements, the full trace, and bad input.

Exactness: the fake-tensor trace of one training step is compared, part by part, with
`measure_training_memory` (the CPU profiler's allocation events) of the same step of the
same model, for several precisions, with and without checkpointing and LoRA. The
shortcuts (a line in the micro-batch, a line in the layer count) are compared with the
full trace they stand for.
"""

from __future__ import annotations

import math
import sys

import pytest
import torch

from gradacc_lessons.memory import measure_training_memory
from gradacc_lessons.planning import UNet, plan
from gradacc_lessons.planning.cli import main
from gradacc_lessons.planning.cpu_kernels import without_onednn
from gradacc_lessons.planning.predict import PeakModel, trace, traced_peak
from gradacc_lessons.planning.search import Plan, measured_peak
from gradacc_lessons.planning.setup import TrainingSetup

# Nothing the planner calls may be deprecated: a deprecation or future warning fails a test.
pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning", "error::FutureWarning")

# Tracing a real Transformers model is an integration test (`make test`, marked slow): the
# first one in a process imports and initialises transformers (10 s or more here), each
# trace takes seconds. `make check` keeps the same checks on a U-Net of a few thousand
# weights, which exercises the same planner without transformers. Configs are built inside
# the tests, so collecting this file does not import transformers either.
slow = pytest.mark.slow


def tiny_llama(layers: int = 2):
    from transformers import LlamaConfig

    return LlamaConfig(
        vocab_size=1000,
        hidden_size=128,
        intermediate_size=344,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
    )


def tiny_gpt2(positions: int = 128, layers: int = 2):
    from transformers import GPT2Config

    return GPT2Config(vocab_size=500, n_positions=positions, n_embd=64, n_layer=layers, n_head=4)


def small_unet():
    return UNet(classes=4, width=8, depth=2)


def tiny_unet():
    return UNet(classes=2, width=4, depth=1)


def group_norm_unet():
    return UNet(classes=4, width=8, depth=2, norm="group")


def llama(**options):
    return TrainingSetup(tiny_llama(), sequence_length=64, foreach=False, **options)


def gpt2(**options):
    return TrainingSetup(tiny_gpt2(), sequence_length=128, **options)


def unet(factory=small_unet, **options):
    return TrainingSetup(factory, input_shape=(3, 64, 64), **options)


CASES = {  # name: (setup, micro-batch, accumulation steps); setups made when a test runs
    "llama float32": (lambda: llama(), 8, 1),
    "llama bf16-mixed, N=2": (lambda: llama(precision="bf16-mixed"), 4, 2),
    "llama bf16-true, checkpointing": (
        lambda: llama(precision="bf16-true", checkpointing=True),
        8,
        1,
    ),
    "llama LoRA, checkpointing": (lambda: llama(lora_rank=8, checkpointing=True), 8, 1),
    # a float32 LoRA output added to a bfloat16 activation: TensorIterator's copy
    "llama LoRA, checkpointing, bf16-true": (
        lambda: llama(lora_rank=8, checkpointing=True, precision="bf16-true"),
        8,
        1,
    ),
    "llama LoRA, checkpointing, bf16-mixed": (
        lambda: llama(lora_rank=8, checkpointing=True, precision="bf16-mixed"),
        8,
        1,
    ),
    "gpt2 float32, foreach": (lambda: gpt2(), 4, 1),
    "gpt2 bf16-mixed, checkpointing": (
        lambda: gpt2(precision="bf16-mixed", checkpointing=True),
        4,
        1,
    ),
    "gpt2 LoRA, bf16-true": (lambda: gpt2(precision="bf16-true", lora_rank=4), 4, 1),
    "unet batchnorm, SGD": (lambda: unet(optimizer="sgd", foreach=False), 4, 1),
    "unet groupnorm, AdamW": (lambda: unet(group_norm_unet, foreach=False), 4, 1),
    # with oneDNN off (as a CPU trace and measurement run), convolutions take PyTorch's slow
    # path: the input unfolded into columns, for bfloat16 as for float32
    "unet batchnorm, bf16-mixed": (lambda: unet(precision="bf16-mixed", optimizer="sgd"), 4, 1),
    "unet batchnorm, bf16-true": (lambda: unet(precision="bf16-true", foreach=False), 4, 1),
    "unet batchnorm, checkpointing, N=2": (
        lambda: unet(checkpointing=True, optimizer="sgd"),
        4,
        2,
    ),
    # a float32 micro-batch of 1 takes the slow path too
    "unet groupnorm, micro-batch 1, N=2": (lambda: unet(group_norm_unet), 1, 2),
    "unet groupnorm, bf16-mixed, checkpointing, N=2": (
        lambda: unet(group_norm_unet, precision="bf16-mixed", checkpointing=True),
        2,
        2,
    ),
}
# `make check` compares one recipe with the CPU's measurement (accumulation, checkpointing,
# BatchNorm's buffers); `make test` compares them all.
QUICK_CASES = {"unet batchnorm, checkpointing, N=2"}


@pytest.mark.parametrize(
    "name", [pytest.param(name, marks=() if name in QUICK_CASES else slow) for name in CASES]
)
def test_the_fake_step_counts_what_the_cpu_measures(name):
    torch.set_num_threads(1)  # as every lesson runs (make_repeatable)
    make_setup, micro_batch_size, accumulation_steps = CASES[name]
    setup = make_setup()
    fake = trace(setup, micro_batch_size, accumulation_steps, allocator="cpu")
    model, optimizer = setup.build()
    model = _autocast(model, setup)
    inputs, targets = setup.batch(micro_batch_size * accumulation_steps)
    with without_onednn():  # the kernels the CPU trace counts (see cpu_kernels)
        measured = measure_training_memory(
            model, optimizer, setup.loss_fn, inputs, targets, accumulation_steps
        )
    buffers = sum(b.numel() * b.element_size() for b in model.buffers())
    predicted = {
        "peak": fake.peak_bytes - buffers,  # the measurement starts with the buffers in place
        "parameters": fake.parameter_bytes - buffers,
        "gradients": fake.gradient_bytes,
        "optimizer state": fake.optimizer_bytes,
        "activations": fake.activation_bytes,
    }
    actual = {
        "peak": measured.peak_bytes,
        "parameters": measured.parameter_bytes,
        "gradients": measured.gradient_bytes,
        "optimizer state": measured.optimizer_bytes,
        "activations": measured.activation_bytes,
    }
    # each part, and the total, within 1 % (on a Xeon with AVX-512 and AMX: 0.6 % at most)
    for part, value in actual.items():
        assert predicted[part] == pytest.approx(value, rel=0.01), part
    # The temporaries are what the peak holds beyond the four parts: their error is the
    # total's, so it is bounded by 1 % of the peak (a small part has a larger share).
    temporaries = predicted["peak"] - sum(list(predicted.values())[1:])
    assert temporaries == pytest.approx(measured.other_bytes, abs=0.01 * measured.peak_bytes)


def _autocast(model, setup):
    if setup.autocast_dtype is None:
        return model
    from gradacc_lessons.planning.search import _Autocast

    return _Autocast(model, "cpu", setup.autocast_dtype)


@slow
def test_the_first_try_of_the_issue_27_7_mib():
    # one AdamW step of a 2-layer Llama-style config at 8 x 64 tokens (the issue's figures)
    setup = TrainingSetup(tiny_llama(), sequence_length=64, foreach=False)
    fake = trace(setup, 8, 1, allocator="cpu")
    measured = measured_peak(setup, 8, 1)
    assert fake.peak_bytes == pytest.approx(measured.peak_bytes, rel=0.001)
    assert fake.peak_phase == measured.phase == "backward"


@slow
@pytest.mark.parametrize(
    "make_setup",
    [
        lambda: TrainingSetup(tiny_llama(4), sequence_length=32),
        lambda: TrainingSetup(
            tiny_llama(5),
            sequence_length=32,
            lora_rank=4,
            checkpointing=True,
            precision="bf16-true",
        ),
        lambda: TrainingSetup(
            tiny_gpt2(positions=64, layers=4), sequence_length=64, precision="bf16-mixed"
        ),
    ],
    ids=["llama", "llama LoRA, checkpointing, bf16-true", "gpt2 bf16-mixed"],
)
def test_layers_traced_twice_and_extrapolated_equal_the_full_trace(make_setup):
    setup = make_setup()
    full = trace(setup, 3, 2, allocator="cuda")
    shortcut = traced_peak(setup, 3, 2, allocator="cuda")
    assert shortcut.peak_bytes == full.peak_bytes
    assert shortcut.phase == full.peak_phase
    assert shortcut.at_peak == full.at_peak
    assert shortcut.activation_bytes == full.activation_bytes


@pytest.mark.parametrize(
    "make_setup",
    [
        pytest.param(
            lambda: TrainingSetup(tiny_unet, input_shape=(3, 16, 16), checkpointing=True),
            id="unet",
        ),
        pytest.param(
            lambda: TrainingSetup(tiny_llama(3), sequence_length=32, checkpointing=True),
            id="llama, 3 layers extrapolated",
            marks=slow,
        ),
    ],
)
def test_the_line_in_the_micro_batch_equals_the_trace_at_that_micro_batch(make_setup):
    setup = make_setup()
    model = PeakModel(setup, accumulation_steps=2, allocator="cpu")
    # the lines were drawn, not replaced by a trace at each micro-batch (their fallback)
    assert all(line is not None for line, _ in model.lines.values())
    for size in (3, 7):
        assert model.peak_bytes(size) == trace(setup, size, 2, allocator="cpu").peak_bytes


@pytest.mark.parametrize(
    "model, options, budget",  # budget in GiB: above one sample, below the whole batch
    [
        pytest.param(tiny_unet, {"input_shape": (3, 16, 16)}, 1 / 1024, id="unet"),
        pytest.param(lambda: tiny_llama(3), {"sequence_length": 32}, 0.03, id="llama", marks=slow),
    ],
)
def test_the_plan_fits_and_the_next_micro_batch_does_not(model, options, budget):
    if model is not tiny_unet:  # a Transformers config, made now
        model = model()
    setup = TrainingSetup(model, foreach=False, **options)
    result = plan(model, 48, budget, foreach=False, allocator="cpu", **options)
    assert isinstance(result, Plan) and result.fits
    assert result.accumulation_steps == math.ceil(48 / result.micro_batch_size)
    fitting = trace(setup, result.micro_batch_size, 2, allocator="cpu").peak_bytes
    sizes = sorted({math.ceil(48 / n) for n in range(1, 49)})
    larger = sizes[sizes.index(result.micro_batch_size) + 1]
    steps = 1 if larger == 48 else 2
    too_big = trace(setup, larger, steps, allocator="cpu").peak_bytes
    assert fitting <= budget * 2**30 < too_big
    assert result.peak_bytes == fitting
    assert sum(result.at_peak.values()) == result.peak_bytes
    assert result.no_accumulation_bytes == trace(setup, 48, 1, allocator="cpu").peak_bytes
    assert "micro_batch_size=" in repr(result) and "<table>" in result._repr_html_()


@slow
def test_measuring_on_this_device_returns_the_same_plan():
    kwargs = dict(sequence_length=32, foreach=False, allocator="cpu")
    predicted = plan(tiny_llama(2), 16, 0.02, **kwargs)
    measured = plan(tiny_llama(2), 16, 0.02, measure=True, **kwargs)
    assert measured.method.startswith("measured")
    assert (measured.micro_batch_size, measured.accumulation_steps) == (
        predicted.micro_batch_size,
        predicted.accumulation_steps,
    )
    assert measured.peak_bytes == pytest.approx(predicted.peak_bytes, rel=0.01)


@slow
def test_tokens_become_whole_sequences():
    result = plan(tiny_llama(2), None, 1, effective_tokens=1000, sequence_length=64)
    assert result.effective_batch == 16  # ceil(1000 / 64)


@slow
def test_a_budget_below_the_floor_names_the_alternatives():
    # 2 layers of float32 AdamW: 4 x 4 bytes per weight (about 620,000 weights), above 4 MiB
    with pytest.raises(ValueError, match="below the floor") as error:
        plan(tiny_llama(2), 8, 4 / 1024, sequence_length=32, fused=True)  # fewer to search
    assert "lora_rank=16" in str(error.value)


def group_norm_tiny_unet():  # no buffers: the floor is the weights' 4 x 4 bytes (AdamW)
    return UNet(classes=2, width=8, depth=1, norm="group")


@slow  # traces each alternative
def test_a_budget_below_the_floor_of_a_unet_names_bf16():
    floor = 4 * 4 * sum(p.numel() for p in group_norm_tiny_unet().parameters())
    with pytest.raises(ValueError, match="below the floor") as error:
        plan(group_norm_tiny_unet, 8, 0.9 * floor / 2**30, input_shape=(3, 8, 8), allocator="cpu")
    # bfloat16 halves the floor; checkpointing, which keeps it, does not fit
    assert 'Try: precision="bf16-true" fits' in str(error.value)
    assert "checkpointing" not in str(error.value)


def test_a_budget_below_the_floor_without_alternatives_says_how_to_see_them():
    floor = 4 * 4 * sum(p.numel() for p in group_norm_tiny_unet().parameters())
    with pytest.raises(ValueError, match="below the floor") as error:
        plan(group_norm_tiny_unet, 8, 0.9 * floor / 2**30, input_shape=(3, 8, 8),
             allocator="cpu", alternatives=False)  # fmt: skip
    assert "plan(..., alternatives=True)" in str(error.value)


@slow
def test_a_budget_above_the_floor_that_fits_nothing_does_not_say_floor():
    setup = TrainingSetup(tiny_llama(2), sequence_length=256)
    floor = traced_peak(setup, 1, 2, "cuda").floor_bytes
    result = plan(tiny_llama(2), 8, (floor + 2**18) / 2**30, sequence_length=256, fused=True)
    assert not result.fits and result.alternatives
    assert "floor" not in repr(result)
    assert any(a.change.startswith("checkpointing") for a in result.alternatives)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"model": "llama-9b", "sequence_length": 8}, "unknown model 'llama-9b'"),
        ({"model": "gpt2", "sequence_length": 4096}, "sequence_length <= 1024"),
        ({"model": "gpt2", "sequence_length": 8, "budget": "rtx-9090"}, "unknown GPU"),
        ({"model": small_unet}, "needs input_shape"),
        ({"model": "gpt2", "sequence_length": 8, "precision": "fp8"}, "precision"),
    ],
)
def test_bad_input_says_what_to_do(kwargs, message):
    arguments = {"effective_batch": 8, "budget": 24, **kwargs}
    with pytest.raises(ValueError, match=message):
        plan(**arguments)


def test_lora_without_peft_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "peft", None)  # import peft now fails
    with pytest.raises(ValueError, match="pip install 'peft=="):
        plan("gpt2", 8, 24, sequence_length=64, lora_rank=8)


@slow  # traces the command's full-size U-Net
def test_the_command_prints_a_plan(capsys):
    assert main(["unet", "--input-shape", "3,32,32", "--effective-batch", "8", "--budget",
                 "1", "--optimizer", "sgd"]) == 0  # fmt: skip
    assert "micro_batch_size=" in capsys.readouterr().out


def test_the_command_refuses_bad_input(capsys):
    assert main(["llama-9b", "--sequence-length", "8", "--effective-batch", "8",
                 "--budget", "24"]) == 2  # fmt: skip
    assert "unknown model" in capsys.readouterr().err


@pytest.mark.benchmark
def test_a_plan_for_the_8b_preset_takes_seconds():
    """`make bench`: the 8B LoRA plan of lesson 9, as a time and a ratio to one tiny forward."""
    import os
    import statistics
    import time

    from transformers import LlamaForCausalLM

    model = LlamaForCausalLM(tiny_llama())
    tokens = torch.zeros(8, 64, dtype=torch.long)
    forwards = []
    with torch.no_grad():
        model(tokens)  # the first call pays for lazy initialisation
        for _ in range(5):
            start = time.perf_counter()
            model(tokens)
            forwards.append(time.perf_counter() - start)
    forward = statistics.median(forwards)
    start = time.perf_counter()
    result = plan(
        "llama-3.1-8b",
        256,
        "rtx-4090",
        sequence_length=2048,
        precision="bf16-true",
        lora_rank=16,
        checkpointing=True,
    )
    seconds = time.perf_counter() - start
    load = ", ".join(f"{n:.1f}" for n in os.getloadavg())
    print(
        f"8B plan: {seconds:.1f} s = {seconds / forward:,.0f} x one forward of the tiny Llama "
        f"(8 x 64 tokens, {forward * 1e3:.1f} ms); load average {load}"
    )
    assert result.fits and result.accumulation_steps == math.ceil(256 / result.micro_batch_size)
