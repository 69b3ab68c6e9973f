"""Lessons 5 and 6 run top to bottom, and the numbers they print back their claims."""

from __future__ import annotations

import re
import time

import psutil
import pytest

from tools.notebooks import execute_notebook

from .conftest import NOTEBOOKS, printed

pytestmark = [pytest.mark.slow, pytest.mark.distributed]  # lesson 6 starts DDP processes


def numbers_after(text: str, pattern: str) -> list[float]:
    found = [float(m) for m in re.findall(pattern + r"\s*([0-9.]+e[-+][0-9]+)", text)]
    assert found, f"the lesson no longer prints {pattern!r}"
    return found


@pytest.fixture(scope="module")
def lesson5():
    notebook = execute_notebook(NOTEBOOKS / "05_training_curves.ipynb").notebook
    return printed(notebook), None, notebook


@pytest.fixture(scope="module")
def lesson6():
    start = time.time()
    notebook = execute_notebook(NOTEBOOKS / "06_beyond_one_device.ipynb").notebook
    return printed(notebook), None, start


def test_lesson_5_accumulated_run_lies_on_the_large_batch_run(lesson5):
    text = lesson5[0]
    same = re.search(r"accumulated vs large batch:(.*)", text).group(1)
    other = re.search(r"small batch vs large batch:(.*)", text).group(1)
    # float32 over 120 AdamW steps: measured 3e-7 (loss) and 6e-7 (parameters).
    assert max(numbers_after(same, "")) < 1e-4, same
    assert "test accuracy: 0.00 points" in same
    assert numbers_after(other, r"final parameters \(relative\):")[0] > 0.1, other
    assert numbers_after(other, r"test loss:")[0] > 0.01, other


def test_lesson_5_pitfalls_of_real_scripts(lesson5):
    text = lesson5[0]
    right = re.search(r"optimizer steps +lr .*?: (.*)", text).group(1).split()
    wrong = re.search(r"len\(dataloader\) +lr .*?: (.*)", text).group(1).split()
    assert float(right[-1]) < 0.05 < 0.5 < float(wrong[-1])  # never decays: N times too long
    assert "47 micro-batches per epoch; graphs compiled after each epoch: 2 2" in text
    assert "with drop_last (the 28 dropped): 1" in text


def test_lesson_5_draws_its_three_figures(lesson5):
    notebook = lesson5[2]
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
    text = lesson6[0]
    assert re.search(r"^no_sync +\[0, 0, 0, 1\] +1\.0$", text, re.M), text
    assert re.search(r"^no_sync_backward_only +\[1, 1, 1, 1\] +4\.0$", text, re.M), text
    assert re.search(r"^always_sync +\[1, 1, 1, 1\] +4\.0$", text, re.M), text
    assert re.search(r"^require_backward_grad_sync +\[0, 0, 0, 1\] +1\.0$", text, re.M), text
    assert re.search(r"the extra all-reduces: [0-9.]+ x the time", text)  # timed, not judged
    assert re.search(r"rank 0: 5 micro-batches: stuck, timed out", text)
    assert re.search(r"rank 1: 4 micro-batches: stuck, timed out", text)


def test_lesson_6_ddp_equals_one_process_and_tokens_need_the_global_count(lesson6):
    text = lesson6[0]
    differences = numbers_after(text, r"rank [01]: relative error")
    assert len(differences) == 8 and max(differences) < 1e-12
    assert numbers_after(text, "global_count  relative error against the token mean:")[0] < 1e-12
    assert numbers_after(text, "local_mean    relative error against the token mean:")[0] > 0.1


def test_lesson_6_mixed_precision_and_checkpointing(lesson6):
    text = lesson6[0]
    full = numbers_after(text, r"full batch  vs float32:")[0]
    accumulated = numbers_after(text, r"accumulated vs float32:")[0]
    between = numbers_after(text, r"accumulated vs full batch:")[0]
    assert between < full and accumulated <= 1.25 * full
    window = "zero_grad → " + "forward → backward → " * 4 + "unscale → clip → step → update"
    assert window in text
    rows = re.findall(r"^(True|False) +([14]) +([0-9.]+) +([0-9.]+) +([12])$", text, re.M)
    peaks = {(c, n): float(p) for c, n, p, _, _ in rows}
    assert len(rows) == 4 and {r[4] for r in rows if r[0] == "True"} == {"2"}
    assert peaks[("True", "1")] < peaks[("False", "1")]
    assert peaks[("True", "4")] < peaks[("False", "4")] < peaks[("False", "1")]


def test_lesson_6_precision_memory_and_bfloat16_windows(lesson6):
    text = lesson6[0]
    ratios = [float(r) for r in re.findall(r"under autocast \(([0-9.]+) x\)", text)]
    assert len(ratios) == 2 and ratios[1] < 0.6 < ratios[0]  # the CNN halves, the MLP does not
    rows = re.findall(
        r"N = +(\d+): window added in a bfloat16 .grad ([0-9.]+)%, in float32 buffers ([0-9.e+-]+)",
        text,
    )
    sixteen = [float(r[1]) / 100 for r in rows]
    assert [int(r[0]) for r in rows] == [4, 64, 256]
    assert 1e-3 < sixteen[0] < sixteen[2]  # percent level, growing with N
    assert all(float(r[2]) < 1e-6 for r in rows)  # float32 buffers: rounding only
    skipped = re.search(r"step skipped: +(.*)", text).group(1).split()
    assert "True" in skipped and "False" in skipped


def test_lesson_6_sharding_volumes_and_the_pipeline(lesson6):
    text = lesson6[0]
    assert re.search(r"^FULL_SHARD +12 +9 +1\.33$", text, re.M)  # 3N and 2N + 1 for N = 4
    assert "FULL_SHARD     sync every micro-batch: all-gathers 8, reduce-scatters 4" in text
    assert "FULL_SHARD     sync last micro-batch : all-gathers 8, reduce-scatters 1" in text
    assert "4 micro-batches: each GPU idle  43% of the time" in text  # 3 / 7
