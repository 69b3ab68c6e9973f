"""Where FSDP1 and FSDP2 add up a bfloat16 window, on 2 real gloo processes.

The references are computed here, in one process, without the module's helpers: each
process's micro-batch gradients from a bfloat16 copy of the model, added up by autograd in a
bfloat16 `.grad` (what FSDP1 under `no_sync()` should match) and in float64 (the exact sum).
"""

from __future__ import annotations

import psutil
import pytest
import torch
from torch.nn import functional as F

from gradacc_lessons.compare import relative_error
from gradacc_lessons.data import make_classification
from gradacc_lessons.demos.distributed import run_sharded_accumulation
from gradacc_lessons.demos.distributed.sharded_precision import EVERY, LAST
from gradacc_lessons.device import seeded
from gradacc_lessons.models import MLP
from gradacc_lessons.precision import accumulation_dtype_errors

pytestmark = [pytest.mark.distributed, pytest.mark.timeout(900)]
STEPS, SAMPLES = (4, 64), 256  # N, and samples per process in one window


@pytest.fixture(scope="module")
def result():
    measured = run_sharded_accumulation(STEPS, samples_per_process=SAMPLES)
    alive = [p for p in psutil.Process().children(recursive=True) if _spawned(p)]
    assert alive == [], "run_sharded_accumulation left processes behind"
    return measured


def _spawned(process) -> bool:
    """A torch.multiprocessing child (not multiprocessing's resource tracker)."""
    try:
        return "spawn_main" in " ".join(process.cmdline())
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return False


def _windows(n: int):
    """Per process: its micro-batch gradients added up in bfloat16 (as a bfloat16 .grad adds
    them), and the same gradients added up in float64."""
    with seeded(0):
        model = MLP(64, 10).to(torch.bfloat16)
    x, y = make_classification(2 * SAMPLES, 64, 10, seed=0)
    size = SAMPLES // n
    in_bf16, exact = [], []
    for rank in range(2):
        low = high = None
        for i in range(n):
            rows = slice(rank * SAMPLES + i * size, rank * SAMPLES + (i + 1) * size)
            loss = F.cross_entropy(model(x[rows].to(torch.bfloat16)).float(), y[rows])
            grads = torch.autograd.grad(loss * (size / SAMPLES), list(model.parameters()))
            low = grads if low is None else [a + g for a, g in zip(low, grads)]
            high = [g.double() if h is None else h + g.double()
                    for h, g in zip(high or [None] * len(grads), grads)]  # fmt: skip
        names = [name for name, _ in model.named_parameters()]
        in_bf16.append(dict(zip(names, low)))
        exact.append(dict(zip(names, high)))
    return _mean(in_bf16), _mean(exact)


def _mean(per_rank):
    """The average over the two processes, as the sync takes it (in float64)."""
    return {name: (per_rank[0][name].double() + per_rank[1][name].double()) / 2
            for name in per_rank[0]}  # fmt: skip


def test_each_fsdp_adds_up_where_its_source_says(result):
    assert result.summing_dtypes == {
        ("FSDP1", "bfloat16", LAST): "bfloat16",
        ("FSDP1", "float32", LAST): "bfloat16",  # reduce_dtype is applied only at the sync
        ("FSDP1", "float32", EVERY): "float32",  # the reduced shards, in the weights' dtype
        ("FSDP2", "bfloat16", LAST): "bfloat16",
        ("FSDP2", "float32", LAST): "float32",  # unsharded_accumulated_grad, of reduce_dtype
    }


@pytest.mark.parametrize("n", STEPS)
def test_fsdp1_under_no_sync_is_a_bfloat16_grad(result, n):
    in_bf16, exact = _windows(n)
    # with reduce_dtype float32, only the bfloat16 sum differs from the exact one
    assert relative_error(in_bf16, result.gradients["FSDP1", "float32", LAST, n]) < 1e-6
    expected = relative_error(exact, in_bf16)
    error = result.errors["FSDP1", "float32", LAST][STEPS.index(n)]
    assert error == pytest.approx(expected, rel=1e-3)
    assert error > 1e-3


@pytest.mark.parametrize("n", STEPS)
@pytest.mark.parametrize("way", [("FSDP2", "float32", LAST), ("FSDP1", "float32", EVERY)])
def test_float32_sums_are_exact_to_float32(result, n, way):
    _, exact = _windows(n)
    error = relative_error(exact, result.gradients[(*way, n)])
    assert error == pytest.approx(result.errors[way][STEPS.index(n)])
    assert error < 1e-6


def test_bfloat16_sums_cost_what_one_process_bfloat16_grad_costs(result):
    x, y = make_classification(samples=SAMPLES, features=64, classes=10)
    with seeded(0):
        model = MLP(64, 10)
    one_process = accumulation_dtype_errors(model, F.cross_entropy, x, y, STEPS).grad_errors
    for way in [("FSDP1", "bfloat16", LAST), ("FSDP1", "float32", LAST),
                ("FSDP2", "bfloat16", LAST)]:  # fmt: skip
        errors = result.errors[way]
        assert errors[1] > errors[0], f"{way}: the error grows with N"
        for error, single in zip(errors, one_process):
            assert single / 4 < error < single * 4, (way, errors, one_process)
    float32 = result.errors["FSDP2", "float32", LAST]
    assert max(float32) < min(result.errors["FSDP1", "float32", LAST]) / 1000


def test_the_table_shows_every_way_and_n(result):
    text = repr(result)
    assert "N = 64" in text and text.count("FSDP1") == 3 and text.count("FSDP2") == 2


@pytest.mark.parametrize(
    "kwargs, argument",
    [
        ({"accumulation_steps": [1, 4]}, "accumulation_steps"),
        ({"accumulation_steps": [3]}, "accumulation_steps"),
        ({"accumulation_steps": [512]}, "accumulation_steps"),
        ({"samples_per_process": 1}, "samples_per_process"),
        ({"seed": -1}, "seed"),
        ({"timeout_s": 0}, "timeout_s"),
    ],
)
def test_bad_arguments_say_what_to_fix(kwargs, argument):
    with pytest.raises(ValueError, match=argument):
        run_sharded_accumulation(**kwargs)
