"""The planner at a practitioner's edges: downloaded config.json files, GPU budgets as CUDA
reports them, a reserve, exit codes, JSON, and argument errors answered before torch loads."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from gradacc_lessons.planning.cli import main
from gradacc_lessons.planning.presets import DEFAULT_RESERVE_GIB, GPUS, PRESETS, budget_bytes

GiB = 2**30

# A tiny Llama as a released config.json reads: its weights' dtype, where it came from, rope.
DOWNLOADED = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "vocab_size": 256,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 128,
    "rope_theta": 10000.0,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "transformers_version": "4.43.0",
}


def llama_parameters(c: dict) -> int:
    """Count a Llama's parameters by hand: embeddings, attention, MLP, norms, output layer."""
    h, i, v, layers = (
        c["hidden_size"],
        c["intermediate_size"],
        c["vocab_size"],
        c["num_hidden_layers"],
    )
    head = h // c["num_attention_heads"]
    kv = c["num_key_value_heads"] * head
    attention = h * h + 2 * h * kv + h * h  # q, k, v, o; no biases
    mlp = 3 * h * i  # gate, up, down
    return v * h + layers * (attention + mlp + 2 * h) + h + v * h


def write_config(tmp_path, **changes) -> str:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**DOWNLOADED, **changes}, indent=2))
    return str(path)


def test_a_bfloat16_config_is_planned_in_the_precision_asked_for(tmp_path):
    from gradacc_lessons.planning import plan

    path = write_config(tmp_path)
    result = plan(path, 8, 1, sequence_length=16, foreach=False, allocator="cpu")
    # float32 weights (and the rotary embedding's two buffers of 8 values: 64 bytes)
    assert 0 <= result.at_peak["parameters"] - 4 * llama_parameters(DOWNLOADED) <= 64
    # and gradients and AdamW's two moments as large (a few bytes of step counters beside)
    assert 0 <= result.floor_bytes - 16 * llama_parameters(DOWNLOADED) < 1024
    assert result.notes == (
        "the config says bfloat16; planning 32-true (float32 weights) as asked",
    )
    true_bf16 = plan(path, 8, 1, sequence_length=16, precision="bf16-true", allocator="cpu")
    assert 0 <= true_bf16.at_peak["parameters"] - 2 * llama_parameters(DOWNLOADED) <= 64
    assert true_bf16.notes == ()


def test_a_misspelled_key_names_the_key_and_the_closest_field(tmp_path):
    from gradacc_lessons.planning import plan

    fields = dict(DOWNLOADED)
    fields["intermediat_size"] = fields.pop("intermediate_size")
    path = tmp_path / "config.json"
    path.write_text(json.dumps(fields))
    with pytest.raises(ValueError, match="'intermediat_size' .* did you mean 'intermediate_size'"):
        plan(str(path), 8, 1, sequence_length=16)


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"model_type": "llama",\n "hidden_size": 64,,\n}', r"config\.json, line 2, column"),
        ("[1, 2]", "holds one JSON object"),
    ],
)
def test_a_broken_config_names_the_file_and_the_line(tmp_path, capsys, text, message):
    path = tmp_path / "config.json"
    path.write_text(text)
    arguments = [str(path), "--budget", "24", "--effective-batch", "8", "--sequence-length", "16"]
    assert main(arguments) == 2
    assert re.search(message, capsys.readouterr().err), message


def test_a_missing_file_and_an_unknown_preset_say_which(capsys):
    assert main(["/no/config.json", "--budget", "24", "--effective-batch", "8"]) == 2
    assert "no config file '/no/config.json'" in capsys.readouterr().err
    assert main(["lama-3.1-8b", "--budget", "24", "--effective-batch", "8"]) == 2
    assert "did you mean 'llama-3.1-8b'" in capsys.readouterr().err


def test_a_model_type_that_does_not_exist_suggests_a_few_not_all(tmp_path, capsys):
    path = write_config(tmp_path, model_type="lama")
    assert main([path, "--budget", "24", "--effective-batch", "8", "--sequence-length", "16"]) == 2
    error = capsys.readouterr().err
    assert "'lama' is not one transformers knows; did you mean 'llama'" in error
    assert error.count("'") < 12, "a few suggestions, not every model transformers knows"


@pytest.mark.parametrize(
    "spelling", ["rtx-4090", "RTX 4090", "rtx4090", "Rtx_4090"], ids=lambda s: s.replace(" ", "_")
)
def test_gpu_names_are_understood_in_common_spellings(spelling):
    assert budget_bytes(spelling) == budget_bytes("rtx-4090") == int(GPUS["rtx-4090"] * GiB)


@pytest.mark.parametrize("budget, message", [
    ("24GB", "give GiB as a number"),
    ("rtx-4900", "did you mean 'rtx-4090'"),
])  # fmt: skip
def test_a_budget_spelled_otherwise_is_answered_with_the_right_spelling(budget, message):
    with pytest.raises(ValueError, match=message):
        budget_bytes(budget)


def test_cards_hold_what_cuda_reports_not_their_marketing_gigabytes():
    # nvidia-smi's memory.total: an "80 GB" H100 is under 80 GiB, a "24 GB" L4 under 23 GiB
    assert 79 < GPUS["h100-80gb"] < 80 and 22 < GPUS["l4"] < 23 and 22 < GPUS["a10g"] < 23
    assert 39 < GPUS["a100-40gb"] < 40 and 140 < GPUS["h200"] < 141
    assert all(size <= 24 for name, size in GPUS.items() if "4090" in name or "3090" in name)


def test_a_plan_keeps_its_reserve_free_and_says_so(tmp_path):
    from gradacc_lessons.planning import plan

    path = write_config(tmp_path)
    kept = plan(path, 64, "rtx-4090", sequence_length=64, alternatives=False)
    assert kept.reserve_bytes == DEFAULT_RESERVE_GIB * GiB
    assert kept.usable_bytes == kept.budget_bytes - kept.reserve_bytes
    assert kept.peak_bytes <= kept.usable_bytes
    assert "less a reserve of 1.000 GiB" in repr(kept)
    none_kept = plan(path, 64, "rtx-4090", sequence_length=64, alternatives=False, reserve=0)
    assert none_kept.usable_bytes == none_kept.budget_bytes
    assert none_kept.micro_batch_size >= kept.micro_batch_size
    with pytest.raises(ValueError, match="reserve"):
        plan(path, 64, 2, sequence_length=64, reserve=2)


def test_the_exit_status_says_whether_it_fits_and_json_reads_back(tmp_path, capsys):
    path = write_config(tmp_path)
    common = [path, "--effective-batch", "8", "--sequence-length", "16", "--json"]
    assert main([*common, "--budget", "1"]) == 0
    fits = json.loads(capsys.readouterr().out)
    assert fits["fits"] and fits["micro_batch_size"] * fits["accumulation_steps"] >= 8
    assert (
        fits["peak_bytes"] <= fits["usable_bytes"] == fits["budget_bytes"] - fits["reserve_bytes"]
    )
    # above the floor, but not even a micro-batch of one sequence fits: exit 1
    floor = fits["floor_bytes"]
    tight = (floor + 1024) / GiB
    common += ["--checkpointing", "--fused"]  # fewer alternatives to search: faster
    assert main([*common, "--budget", str(tight), "--margin", "0"]) == 1
    assert json.loads(capsys.readouterr().out)["fits"] is False
    # below the floor: refused, exit 2, with the alternatives in the command's own flags
    assert main([path, "--effective-batch", "8", "--sequence-length", "16", "--checkpointing",
                 "--fused", "--budget", str(0.9 * floor / GiB)]) == 2  # fmt: skip
    error = capsys.readouterr().err
    assert "below the floor" in error and "--precision bf16-true" in error
    assert "lora_rank=" not in error and "precision=" not in error


def test_the_command_prints_budget_reserve_and_what_is_left(capsys):
    assert main(["gpt2", "--budget", "l4", "--effective-batch", "32", "--sequence-length",
                 "128"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    for line in ("budget:", "reserve (--margin):", "left for training:"):
        assert line in out, out
    assert f"{GPUS['l4']:8.3f} GiB" in out


def test_argument_errors_are_answered_before_torch_loads():
    # Measured without a clock: the error comes back, and torch was never imported.
    code = (
        "import sys\nfrom gradacc_lessons.planning.cli import main\n"
        "codes = [main(['gpt2', '--budget', 'rtx-9090', '--effective-batch', '8']),\n"
        "         main(['gpt2', '--budget', '24', '--effective-batch', '8']),\n"
        "         main(['/no/config.json', '--budget', '24', '--effective-batch', '8'])]\n"
        "print(codes, 'torch' in sys.modules, 'transformers' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["[2,", "2,", "2]", "False", "False"], done.stdout
    assert "unknown GPU" in done.stderr and "--sequence-length" in done.stderr


@pytest.mark.parametrize("name", ["llama-3-8b", "qwen2.5-7b", "gemma-2-2b"])
def test_the_new_presets_have_their_published_parameter_counts(name):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    published = {"llama-3-8b": 8.03e9, "qwen2.5-7b": 7.62e9, "gemma-2-2b": 2.61e9}[name]
    fields = dict(PRESETS[name])
    config = AutoConfig.for_model(fields.pop("model_type"), **fields)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    count = sum(p.numel() for p in model.parameters())
    assert abs(count - published) / published < 0.005, count


def test_measuring_a_large_model_on_the_cpu_asks_first(capsys):
    arguments = ["gpt2", "--budget", "24", "--effective-batch", "8", "--sequence-length", "64"]
    assert main([*arguments, "--measure"]) == 2
    error = capsys.readouterr().err
    assert "124M-parameter" in error and "--measure-on-cpu" in error


def test_each_measurement_is_reported_as_it_is_made():
    from torch import nn

    from gradacc_lessons.planning import plan

    def small():
        return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 2, 1))

    seen = []
    result = plan(small, 8, 0.01, input_shape=(3, 16, 16), optimizer="sgd", foreach=False,
                  measure=True, on_measure=lambda *args: seen.append(args))  # fmt: skip
    assert seen, "no measurement reported"
    assert len({(size, steps) for size, steps, _ in seen}) == len(seen), "each one once"
    chosen = (result.micro_batch_size, 1 if result.micro_batch_size >= 8 else 2)
    assert (*chosen, result.peak_bytes) in seen


def test_the_alternatives_search_combinations_best_first(tmp_path):
    from gradacc_lessons.planning import plan

    path = write_config(tmp_path)
    floor = plan(path, 4, 1, sequence_length=64, allocator="cpu").floor_bytes
    # above the floor, below a micro-batch of one sequence: nothing fits, alternatives are found
    result = plan(path, 4, (floor + 2**12) / GiB, sequence_length=64, allocator="cpu")
    found = result.alternatives
    assert not result.fits and found
    fitting = [a for a in found if a.micro_batch_size]
    assert fitting and list(found[: len(fitting)]) == fitting, "those that fit come first"
    changes = [a.change.count(",") for a in fitting]
    assert changes == sorted(changes), "then the fewest changes"
    assert any("," in a.change for a in found), "combinations are searched"
    for a in fitting:  # a combination is listed only when it fits more than its parts
        for b in fitting:
            fewer = set(b.change.split(", ")) < set(a.change.split(", "))
            assert not (fewer and b.micro_batch_size >= a.micro_batch_size), (a, b)


def test_fused_adamw_keeps_no_temporary_of_all_weights():
    from gradacc_lessons.planning import plan

    kwargs = dict(sequence_length=64, alternatives=False, reserve=0)
    foreach = plan("gpt2", 8, 80, **kwargs)
    fused = plan("gpt2", 8, 80, fused=True, **kwargs)
    assert fused.floor_bytes == foreach.floor_bytes
    # foreach's step makes one temporary as large as the weights (float32, 124M): it holds
    # the peak; fused makes none, and its peak is elsewhere, lower
    assert foreach.peak_phase == "optimizer step"
    assert foreach.at_peak["temporaries"] >= foreach.at_peak["parameters"]
    assert fused.peak_phase != "optimizer step" and fused.peak_bytes < foreach.peak_bytes


def test_attention_dropout_is_traced_as_a_gpu_runs_it(tmp_path, monkeypatch):
    from gradacc_lessons.planning import plan, setup
    from gradacc_lessons.planning.predict import traced_peak

    path = tmp_path / "config.json"
    layers, heads, length, batch = 2, 2, 256, 4
    path.write_text(json.dumps({
        "model_type": "gpt2", "n_layer": layers, "n_head": heads, "n_embd": 64,
        "n_positions": length, "vocab_size": 128,
        "attn_pdrop": 0.1, "resid_pdrop": 0.0, "embd_pdrop": 0.0,
    }))  # fmt: skip
    as_on_a_gpu = traced_peak(
        setup.TrainingSetup(str(path), sequence_length=length), batch, 1, "cpu"
    )
    monkeypatch.setattr(setup, "ATTENTION_DROPOUTS", ())  # what the CPU's own kernels keep
    on_the_cpu = traced_peak(
        setup.TrainingSetup(str(path), sequence_length=length), batch, 1, "cpu"
    )
    # by hand: the math path saves each layer's attention matrix (batch x heads x length^2,
    # float32) beside its dropout mask; flash attention saves neither
    matrices = layers * batch * heads * length**2 * 4
    assert on_the_cpu.activation_bytes - as_on_a_gpu.activation_bytes >= matrices
    monkeypatch.undo()
    notes = plan(str(path), 8, 1, sequence_length=length, allocator="cpu").notes
    assert any("attention dropout 0.1 planned as a GPU runs it" in note for note in notes)


def test_the_budget_line_stands_clear_of_the_floor_when_the_whole_batch_is_huge():
    import matplotlib

    matplotlib.use("Agg")
    from gradacc_lessons.planning.plot import plot_plan
    from gradacc_lessons.planning.search import Plan

    curve = ((1, 18 * GiB), (2, 19 * GiB), (16, 30 * GiB), (256, 900 * GiB))
    plan = Plan("m", 256, 24 * GiB, 2, 128, 19 * GiB, "backward", {}, 17 * GiB, 900 * GiB,
                curve, (), "test", reserve_bytes=GiB)  # fmt: skip
    fig, ax = plot_plan(plan)
    # where the line is drawn, from 0 (bottom) to 1 (top) of the axes
    budget = ax.transAxes.inverted().transform(ax.transData.transform((1, 24)))[1]
    assert 0.1 < budget < 0.9, budget
    assert "budget less reserve" in [line.get_label() for line in ax.lines]
    matplotlib.pyplot.close(fig)
