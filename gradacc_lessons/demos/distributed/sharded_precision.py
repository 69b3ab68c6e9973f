"""Where FSDP adds up a window's gradient under bfloat16 mixed precision, on two gloo processes.

With `param_dtype=torch.bfloat16` both FSDPs compute each micro-batch's gradient in bfloat16.
Skipping the sync inside the window, they differ in where the micro-batches are added up:
FSDP1 (`FullyShardedDataParallel` under `no_sync()`) leaves them in the unsharded bfloat16
`.grad`, as autograd adds them, and casts to `reduce_dtype` only at the sync; FSDP2
(`fully_shard` with `set_requires_gradient_sync(False)`) moves them into a buffer of
`reduce_dtype` after every backward (docs/sources.md, lesson 6, cites both).

`run_sharded_accumulation` runs one window per FSDP, `reduce_dtype` and N on two processes
(and FSDP1 synced on every micro-batch, which adds the reduced shards up in float32),
and compares each window's gradient with the same bfloat16 micro-batch gradients added up in
float64 by this process (`exact_window_gradient`), as lesson 6's `accumulation_dtype_errors`
does on one process.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from gradacc_lessons.accumulate import split_batch
from gradacc_lessons.checks import as_count, as_counts, as_positive
from gradacc_lessons.compare import relative_error
from gradacc_lessons.data import make_classification
from gradacc_lessons.demos.distributed.launch import run_processes
from gradacc_lessons.device import seeded
from gradacc_lessons.display import Result, Table
from gradacc_lessons.models import MLP

REDUCE_DTYPES = {"bfloat16": torch.bfloat16, "float32": torch.float32}
LAST, EVERY = "window's end", "every micro-batch"  # when a window syncs
WAYS = (  # (FSDP, reduce_dtype, when it syncs); FSDP1 synced every micro-batch is its way out
    ("FSDP1", "bfloat16", LAST),
    ("FSDP1", "float32", LAST),
    ("FSDP1", "float32", EVERY),
    ("FSDP2", "bfloat16", LAST),
    ("FSDP2", "float32", LAST),
)
FEATURES, CLASSES = 64, 10  # lesson 6's batch: 10 classes, 64 features


def _check_steps(accumulation_steps, samples_per_process: int, minimum: int) -> list[int]:
    """Each N from `minimum` up, dividing `samples_per_process` (micro-batches of one size)."""
    fix = f"micro-batches per window, from {minimum} to samples_per_process"
    accumulation_steps = as_counts(
        "accumulation_steps", accumulation_steps, minimum, samples_per_process, fix
    )
    for n in accumulation_steps:
        if samples_per_process % n:
            raise ValueError(
                f"accumulation_steps {n} does not divide samples_per_process="
                f"{samples_per_process}; pick divisors, so that micro-batches are equal"
            )
    return accumulation_steps


def _model(seed: int) -> nn.Module:
    """Lesson 6's MLP, in float32: the weights FSDP keeps (and shards)."""
    with seeded(seed):
        return MLP(FEATURES, CLASSES)


def _data(samples_per_process: int, world_size: int, seed: int):
    """Every process's samples: rank r holds rows r*S ... (r+1)*S - 1 (S per process)."""
    return make_classification(world_size * samples_per_process, FEATURES, CLASSES, seed=seed)


def _micro_batches(x, y, rank: int, samples_per_process: int, n: int):
    """This rank's samples cut into n micro-batches (of equal size: n divides them)."""
    mine = slice(rank * samples_per_process, (rank + 1) * samples_per_process)
    return split_batch(x[mine], y[mine], n)


def _loss(model, x, y, samples_per_process: int) -> torch.Tensor:
    # weighted by its share of the process's window, as lesson 1 taught
    return F.cross_entropy(model(x).float(), y) * (len(x) / samples_per_process)


def _wrap(api: str, reduce_dtype: torch.dtype, seed: int) -> nn.Module:
    """The model under FSDP1 or FSDP2, parameters in bfloat16 for compute."""
    model = _model(seed)
    if api == "FSDP1":
        from torch.distributed.fsdp import FullyShardedDataParallel, MixedPrecision

        policy = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=reduce_dtype)
        return FullyShardedDataParallel(
            model, device_id=torch.device("cpu"), mixed_precision=policy, use_orig_params=True
        )
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=reduce_dtype)
    return fully_shard(model, mp_policy=policy)


def _summing_dtype(model: nn.Module, api: str) -> str:
    """The dtype of the window's running sum after an unsynced backward (FSDP internals)."""
    if api == "FSDP1":  # the unsharded gradient no_sync() keeps, or the synced shard's sum
        grad = model._flat_param.grad
    else:
        fsdp_param = model._get_fsdp_state()._fsdp_param_group.fsdp_params[0]
        grad = fsdp_param.unsharded_accumulated_grad  # a buffer of reduce_dtype, if it differs
        if grad is None:  # reduce_dtype equals param_dtype: the unsharded parameter's .grad
            grad = fsdp_param._unsharded_param.grad
    return str(grad.dtype).removeprefix("torch.")


def _window(rank: int, way: tuple, n: int, samples_per_process: int, seed: int) -> dict:
    """One window of n micro-batches, synced as `way` says; its dtype and its whole gradient."""
    api, reduce, sync = way
    model = _wrap(api, REDUCE_DTYPES[reduce], seed)
    x, y = _data(samples_per_process, 2, seed)
    micro_batches = _micro_batches(x, y, rank, samples_per_process, n)
    for i, (xb, yb) in enumerate(micro_batches):
        last = i == n - 1 or sync == EVERY
        if api == "FSDP1":
            with contextlib.nullcontext() if last else model.no_sync():
                _loss(model, xb, yb, samples_per_process).backward()
        else:
            model.set_requires_gradient_sync(last)
            _loss(model, xb, yb, samples_per_process).backward()
        if i == n - 2:
            dtype = _summing_dtype(model, api)
    if api == "FSDP1":
        from torch.distributed.fsdp import FullyShardedDataParallel

        with FullyShardedDataParallel.summon_full_params(model, with_grads=True):
            gradients = {
                name.replace("_fsdp_wrapped_module.", ""): p.grad.detach().clone()
                for name, p in model.named_parameters()
            }
    else:
        gradients = {name: p.grad.full_tensor() for name, p in model.named_parameters()}
    return {"dtype": dtype, "gradients": gradients}


def _worker(rank: int, accumulation_steps: list[int], samples_per_process: int, seed: int) -> dict:
    return {
        (*way, n): _window(rank, way, n, samples_per_process, seed)
        for way in WAYS
        for n in accumulation_steps
    }


def exact_window_gradient(
    accumulation_steps: int, samples_per_process: int = 256, world_size: int = 2, seed: int = 0
) -> dict[str, torch.Tensor]:
    """The window's gradient as FSDP should deliver it, computed in this one process.

    Each process's micro-batch gradients are computed as FSDP computes them (the model in
    bfloat16), then added up and averaged over the processes in float64.

    >>> sorted(exact_window_gradient(2, samples_per_process=4))[:2]
    ['0.bias', '0.weight']
    """
    samples_per_process = as_count("samples_per_process", samples_per_process)
    [accumulation_steps] = _check_steps([accumulation_steps], samples_per_process, minimum=1)
    world_size = as_count("world_size", world_size, fix="processes whose windows to add up")
    seed = as_count("seed", seed, 0)
    model = _model(seed).to(torch.bfloat16)
    x, y = _data(samples_per_process, world_size, seed)
    total = {name: torch.zeros_like(p, dtype=torch.float64) for name, p in model.named_parameters()}
    for rank in range(world_size):
        for xb, yb in _micro_batches(x, y, rank, samples_per_process, accumulation_steps):
            model.zero_grad(set_to_none=True)
            _loss(model, xb.to(torch.bfloat16), yb, samples_per_process).backward()
            for name, p in model.named_parameters():
                total[name] += p.grad.double() / world_size
    return total


@dataclass(frozen=True, repr=False)
class ShardedAccumulation(Result):
    """Per FSDP, `reduce_dtype` and sync (parameters in bfloat16): the dtype a window adds up
    in, and the relative error of the window's gradient against the float64 sum, for each N."""

    accumulation_steps: list[int]
    samples_per_process: int
    world_size: int
    summing_dtypes: dict  # (api, reduce_dtype, sync) -> dtype of the window's running sum
    errors: dict  # (api, reduce_dtype, sync) -> one relative error per N (rank 0's gradient)
    gradients: dict  # (api, reduce_dtype, sync, N) -> rank 0's window gradient, after the sync

    def table(self) -> Table:
        rows = [
            (*way, self.summing_dtypes[way], *(f"{e:.1e}" for e in errors))
            for way, errors in self.errors.items()
        ]
        headers = ("FSDP", "reduce_dtype", "syncs at", "adds up in",
                   *(f"N = {n}" for n in self.accumulation_steps))  # fmt: skip
        title = (
            f"relative error of the window's gradient (param_dtype bfloat16, "
            f"{self.world_size} processes, {self.samples_per_process} samples each per window)"
        )
        return Table(headers, rows, title)


def run_sharded_accumulation(
    accumulation_steps: Sequence[int] = (4, 64, 256),
    samples_per_process: int = 256,
    seed: int = 0,
    timeout_s: float = 300.0,
) -> ShardedAccumulation:
    """Start 2 gloo processes; run one window per FSDP, `reduce_dtype` and N; measure.

    Every N must divide `samples_per_process` (equal micro-batches) and be at least 2 (a
    window of one micro-batch adds nothing up).
    """
    samples_per_process = as_count("samples_per_process", samples_per_process, 2)
    accumulation_steps = _check_steps(accumulation_steps, samples_per_process, minimum=2)
    seed = as_count("seed", seed, 0)
    timeout_s = as_positive("timeout_s", timeout_s, "seconds the processes may take")
    ranks = run_processes(
        _worker, accumulation_steps, samples_per_process, seed, timeout_s=timeout_s
    )
    exact = {n: exact_window_gradient(n, samples_per_process, 2, seed) for n in accumulation_steps}
    return ShardedAccumulation(
        accumulation_steps=accumulation_steps,
        samples_per_process=samples_per_process,
        world_size=2,
        summing_dtypes={w: ranks[0][(*w, accumulation_steps[0])]["dtype"] for w in WAYS},
        errors={
            w: [
                relative_error(exact[n], ranks[0][(*w, n)]["gradients"]) for n in accumulation_steps
            ]
            for w in WAYS
        },
        gradients={key: window["gradients"] for key, window in ranks[0].items()},
    )
