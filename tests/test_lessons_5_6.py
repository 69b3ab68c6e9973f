"""Lessons 5 and 6 run top to bottom, and what they compute backs their claims.

The numbers are read from each lesson's kernel after its last cell (`values`), not
scraped from its printed text; the text is checked only where the wording is the claim.
"""

from __future__ import annotations

import psutil
import pytest

from .conftest import NOTEBOOKS, printed
from .lessons import register

pytestmark = [pytest.mark.slow, pytest.mark.distributed]  # lesson 6 starts DDP processes

LESSON_5 = {
    "accumulated vs large": "vars(accumulated_vs_large)",
    "small vs large": "vars(small_vs_large)",
    "last lr": "[lrs.by_optimizer_steps[-1], lrs.by_len_dataloader[-1]]",
    "micro-batches per epoch": "len(epoch)",
    "graphs after each epoch": "[counts[len(epoch) - 1], counts[-1]]",
    "graphs with drop_last": "counts_drop_last[-1]",
}
LESSON_6 = {
    "all-reduces": "{mode: [result.allreduces[mode][0][-1], result.allreduces_per_step(mode)]"
    " for mode in SYNC_MODES}",
    "slowdown": "slowdown",
    "unequal micro-batches": "result.unequal_micro_batches",
    "DDP vs one process": "[relative_error(reference, parameters)"
    " for mode in SYNC_MODES for parameters in result.parameters[mode]]",
    "token recipes": "{recipe: relative_error(token_mean, per_rank[0])"
    " for recipe, per_rank in result.token_gradients.items()}",
    "mixed precision": "[full_vs_exact, accumulated_vs_exact, accumulated_vs_full]",
    "window": "[event.kind for event in events if event.window == 0]",
    "levers": "[[r.checkpoint, r.accumulation_steps, r.peak_bytes, r.block_forwards]"
    " for r in rows]",
    "autocast ratios": "list(ratios.values())",
    "bfloat16 windows": "[list(row) for row in"
    " zip(errors.accumulation_steps, errors.grad_errors, errors.buffer_errors)]",
    "skipped": "skips.skipped",
    "FSDP collectives": "result.fsdp_collectives and [[strategy, every, c['all-gather'],"
    " c['reduce-scatter']] for (strategy, every), c in result.fsdp_collectives.items()]",
    "idle with 4 micro-batches": "idle[4]",
    "communication volumes": "[list(row) for row in volumes.rows]",
    "update errors": "updates.errors",
    "kept": "[[s, k, kept.all_gathers[s, k], kept.reduce_scatters[s, k],"
    " kept.unsharded_bytes[s, k]] for s, k in kept.all_gathers]",
    "parameter bytes": "kept.parameter_bytes",
    "clipping norms": "clipping.norms",
    "norms inside no_sync": "clipping.inside_norms",
    "norm once": "clipping.once_norms",
    "clipped inside error": "clipping.inside_error",
    "FSDP bfloat16 windows": "[[*way, sharded_bf16.summing_dtypes[way], *window_errors]"
    " for way, window_errors in sharded_bf16.errors.items()]",
}


LESSON_5_NAME, LESSON_6_NAME = "05_training_curves.ipynb", "06_beyond_one_device.ipynb"
register(LESSON_5_NAME, LESSON_5.values())
register(LESSON_6_NAME, LESSON_6.values())


@pytest.fixture(scope="module")
def lesson5(lesson_runs):
    run = lesson_runs.get(LESSON_5_NAME, LESSON_5.values())
    return run.notebook, {key: run.values[expression] for key, expression in LESSON_5.items()}


@pytest.fixture(scope="module")
def lesson6(lesson_runs):
    run = lesson_runs.get(LESSON_6_NAME, LESSON_6.values())
    values = {key: run.values[expression] for key, expression in LESSON_6.items()}
    return printed(run.notebook), values, run.started  # when the lesson's kernel started


def test_lesson_5_accumulated_run_lies_on_the_large_batch_run(lesson5):
    same, other = lesson5[1]["accumulated vs large"], lesson5[1]["small vs large"]
    # float32 over 120 AdamW steps: measured 3e-7 (loss) and 6e-7 (parameters).
    assert max(same["train_loss"], same["test_loss"], same["parameters"]) < 1e-4, same
    assert same["test_accuracy"] < 0.005, same  # "0.00 points": not one prediction differs
    assert other["parameters"] > 0.1, other
    assert other["test_loss"] > 0.01, other


def test_lesson_5_pitfalls_of_real_scripts(lesson5):
    value = lesson5[1]
    right, wrong = value["last lr"]  # scheduled by optimizer steps; by len(dataloader)
    assert right < 0.05 < 0.5 < wrong  # never decays: N times too long
    assert value["micro-batches per epoch"] == 47
    assert value["graphs after each epoch"] == [2, 2]
    assert value["graphs with drop_last"] == 1


def test_lesson_5_draws_its_three_figures(lesson5):
    notebook = lesson5[0]
    images = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if "image/png" in output.get("data", {})
    ]
    assert len(images) == 3


def test_lesson_6_leaves_no_process(lesson6):
    _, _, start = lesson6
    left = []
    for process in psutil.process_iter(["cmdline", "create_time", "cwd"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        # torch.multiprocessing's children of the lesson's kernel: they work in its folder
        # (another test's DDP processes, running at the same time, work elsewhere)
        ours = process.info["cwd"] == str(NOTEBOOKS) and process.info["create_time"] >= start
        if ours and "spawn_main" in cmdline:
            left.append(process)
    assert left == [], f"the lesson left DDP processes behind: {left}"


def test_lesson_6_counts_all_reduces(lesson6):
    value = lesson6[1]
    # each mode: the all-reduces of a window's micro-batches (rank 0), and per optimizer step
    assert value["all-reduces"] == {
        "no_sync": [[0, 0, 0, 1], 1.0],
        "no_sync_backward_only": [[1, 1, 1, 1], 4.0],
        "always_sync": [[1, 1, 1, 1], 4.0],
        "require_backward_grad_sync": [[0, 0, 0, 1], 1.0],
    }
    assert value["slowdown"] > 0  # timed, not judged
    rank0, rank1 = value["unequal micro-batches"]
    assert rank0.startswith("5 micro-batches: stuck, timed out"), rank0
    assert rank1.startswith("4 micro-batches: stuck, timed out"), rank1


def test_lesson_6_ddp_equals_one_process_and_tokens_need_the_global_count(lesson6):
    value = lesson6[1]
    differences = value["DDP vs one process"]  # 4 modes x 2 ranks
    assert len(differences) == 8 and max(differences) < 1e-12
    assert value["token recipes"]["global_count"] < 1e-12
    assert value["token recipes"]["local_mean"] > 0.1


def test_lesson_6_mixed_precision_and_checkpointing(lesson6):
    value = lesson6[1]
    full, accumulated, between = value["mixed precision"]
    assert between < full and accumulated <= 1.25 * full
    # unscale once, after the last backward and before clipping; then step and update once
    window = ["forward", "backward"] * 4 + ["unscale", "clip", "step", "update"]
    assert value["window"] == ["zero_grad", *window, "zero_grad"]
    rows = value["levers"]
    peaks = {(checkpoint, n): peak for checkpoint, n, peak, _ in rows}
    assert len(rows) == 4 and set(peaks) == {(c, n) for c in (True, False) for n in (1, 4)}
    # each block's forward runs twice per micro-batch when checkpointed: it is recomputed
    assert {forwards for checkpoint, _, _, forwards in rows if checkpoint} == {2}
    assert {forwards for checkpoint, _, _, forwards in rows if not checkpoint} == {1}
    assert peaks[(True, 1)] < peaks[(False, 1)]
    assert peaks[(True, 4)] < peaks[(False, 4)] < peaks[(False, 1)]


def test_lesson_6_precision_memory_and_bfloat16_windows(lesson6):
    value = lesson6[1]
    ratios = value["autocast ratios"]  # the MLP, then the CNN
    assert len(ratios) == 2 and ratios[1] < 0.6 < ratios[0]  # the CNN halves, the MLP does not
    rows = value["bfloat16 windows"]
    sixteen = [bfloat16 for _, bfloat16, _ in rows]
    assert [n for n, _, _ in rows] == [4, 64, 256]
    assert 1e-3 < sixteen[0] < sixteen[2]  # percent level, growing with N
    assert all(float32 < 1e-6 for _, _, float32 in rows)  # float32 buffers: rounding only
    assert True in value["skipped"] and False in value["skipped"]


def test_lesson_6_sharding_volumes_and_the_pipeline(lesson6):
    value = lesson6[1]
    # communication_table's row for FULL_SHARD: 3N and 2N + 1 volumes for N = 4
    assert ["FULL_SHARD", 12, 9, "1.33"] in value["communication volumes"]
    full_shard = [row for row in value["FSDP collectives"] if row[0] == "FULL_SHARD"]
    assert full_shard == [
        ["FULL_SHARD", True, 8, 4],  # sync every micro-batch
        ["FULL_SHARD", False, 8, 1],  # sync the last micro-batch only
    ]
    assert value["idle with 4 micro-batches"] == pytest.approx(3 / 7)  # 43 %


def test_lesson_6_keeps_parameters_whole_through_the_window_for_their_memory(lesson6):
    value, n = lesson6[1], 4
    whole = value["parameter bytes"]
    assert whole == 8 * ((8 * 16 + 16) + (16 * 16 + 16) + (16 * 3 + 3))  # the float64 MLP
    assert value["kept"] == [  # per layer, one window of N = 4 synced at its end
        ["FULL_SHARD", False, 2 * n, 1, 0],
        ["FULL_SHARD", True, n + 1, 1, whole],
        ["SHARD_GRAD_OP", False, n, 1, 0],
        ["SHARD_GRAD_OP", True, 1, 1, whole],
    ]


def test_lesson_6_clips_the_whole_gradient_not_shards_or_partial_sums(lesson6):
    value = lesson6[1]
    norms = value["clipping norms"]
    whole = norms[0]["all-reduced squares"]
    own = [rank["local shards"] for rank in norms]
    assert all(norm < 0.9 * whole for norm in own) and own[0] != own[1]
    assert (own[0] ** 2 + own[1] ** 2) ** 0.5 == pytest.approx(whole, rel=1e-12)
    assert all(rank["clip_grad_norm_ (DTensor)"] == pytest.approx(whole) for rank in norms)
    assert value["norm once"] == [[pytest.approx(whole)]] * 2
    inside = value["norms inside no_sync"]
    assert inside[0][:-1] != inside[1][:-1]  # each process clipped its own partial sums
    assert value["clipped inside error"] > 1e-2


def test_lesson_6_fsdp1_adds_a_bfloat16_window_up_in_bfloat16_fsdp2_in_reduce_dtype(lesson6):
    value = lesson6[1]
    rows = {tuple(row[:3]): row[3:] for row in value["FSDP bfloat16 windows"]}
    end, every = "window's end", "every micro-batch"
    assert {way: row[0] for way, row in rows.items()} == {
        ("FSDP1", "bfloat16", end): "bfloat16",
        ("FSDP1", "float32", end): "bfloat16",  # cast to reduce_dtype only after the sum
        ("FSDP1", "float32", every): "float32",
        ("FSDP2", "bfloat16", end): "bfloat16",
        ("FSDP2", "float32", end): "float32",
    }
    one_process = [bfloat16 for _, bfloat16, _ in value["bfloat16 windows"]]  # N = 4, 64, 256
    assert 3e-3 < one_process[2] < 3e-2  # "about a percent at N = 256"
    in_bfloat16 = [rows["FSDP1", "bfloat16", end], rows["FSDP1", "float32", end],
                   rows["FSDP2", "bfloat16", end]]  # fmt: skip
    for errors in in_bfloat16:
        errors = errors[1:]
        assert errors[0] < errors[1] < errors[2]  # growing with N, like one process's .grad
        assert all(single / 4 < e < 4 * single for e, single in zip(errors, one_process))
    float32 = rows["FSDP2", "float32", end][1:] + rows["FSDP1", "float32", every][1:]
    smallest_bfloat16 = min(min(errors[1:]) for errors in in_bfloat16)
    assert max(float32) < 1e-6 and max(float32) < smallest_bfloat16 / 1000
    assert "one process, bfloat16 .grad (section 6), N = 4, 64, 256:" in lesson6[0]


def test_lesson_6_rounding_the_update_loses_more_than_bfloat16_accumulation(lesson6):
    value = lesson6[1]
    updates = value["update errors"]
    assert updates["bfloat16, rounded"] > 0.5  # most of the training lost
    assert updates["bfloat16, Kahan"] < 1e-3 and updates["bfloat16, stochastic"] < 0.1
    largest_accumulation_error = max(max(row[1], row[2]) for row in value["bfloat16 windows"])
    assert updates["bfloat16, rounded"] > 10 * largest_accumulation_error
