"""FSDP2 (`fully_shard`) through a window, on two gloo processes: what it gathers, what it holds,
and how to clip a gradient that no process holds whole.

`_fsdp_window` keeps the parameters sharded between micro-batches (the default) or unsharded
through the window (`set_reshard_after_backward(False)` on every micro-batch but the last),
and counts the collectives and the unsharded parameter bytes each process holds in between.
`clipping_norms` measures the gradient norm three ways under FSDP2 (each process's own shards,
FSDP2's DTensor-aware `clip_grad_norm_`, local squares all-reduced) and what clipping inside
DDP's `no_sync()` does. `run_fsdp_window` and `run_sharded_clipping` start the processes
(`launch.run_processes`) and return small result objects.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch import nn
from torch.nn import functional as F

from gradacc_lessons.checks import as_count, as_fraction
from gradacc_lessons.compare import relative_error
from gradacc_lessons.demos.distributed.arithmetic import (
    DDPConfig,
    _check_config,
    make_data,
    make_model,
    rank_micro_batches,
)
from gradacc_lessons.demos.distributed.launch import run_processes
from gradacc_lessons.demos.distributed.workers import counting_collectives
from gradacc_lessons.display import Result, Table

STRATEGIES = {"FULL_SHARD": True, "SHARD_GRAD_OP": False}  # name -> reshard_after_forward


def _sharded_model(config: DDPConfig, reshard_after_forward: bool) -> nn.Module:
    """The experiment's MLP, each Linear layer its own FSDP2 unit (and the whole model too)."""
    from torch.distributed.fsdp import fully_shard

    model = make_model(config)
    for layer in model:
        if isinstance(layer, nn.Linear):
            fully_shard(layer, reshard_after_forward=reshard_after_forward)
    return fully_shard(model, reshard_after_forward=reshard_after_forward)


def _unsharded_bytes(model: nn.Module) -> int:
    """Bytes of the parameters this process holds whole: FSDP2 shows a sharded one as a DTensor."""
    from torch.distributed.tensor import DTensor

    return sum(
        p.numel() * p.element_size() for p in model.parameters() if not isinstance(p, DTensor)
    )


def _fsdp_window(rank: int, config: DDPConfig, strategy: str, keep_parameters: bool) -> dict:
    """One window of `config.accumulation_steps` micro-batches under FSDP2, synced at its end.

    keep_parameters=True: `set_reshard_after_backward(False)` for every micro-batch but the
    last, so the parameters stay gathered between micro-batches. Returns the collectives of
    the window per layer (3 layers), the most unsharded parameter bytes held between two
    micro-batches, and the window's full gradient (for checking it did not change).
    """
    as_count("rank", rank, 0, config.world_size - 1)
    model = _sharded_model(config, STRATEGIES[strategy])
    x, y = make_data(config)
    micro_batches = rank_micro_batches(x, y, 0, rank, config)
    held = []
    with counting_collectives() as counts:
        for i, (xb, yb) in enumerate(micro_batches):
            last = i == len(micro_batches) - 1
            model.set_requires_gradient_sync(last)  # reduce-scatter only at the window's end
            model.set_reshard_after_backward(last or not keep_parameters)
            (F.cross_entropy(model(xb), yb) / len(micro_batches)).backward()
            if not last:
                held.append(_unsharded_bytes(model))
    gradients = {n: p.grad.full_tensor() for n, p in model.named_parameters()}
    return {
        "all-gather": counts["all-gather"] / 3,
        "reduce-scatter": counts["reduce-scatter"] / 3,
        "held": max(held, default=0),
        "gradients": gradients,
    }


def _fsdp_window_worker(rank: int, config: DDPConfig) -> dict:
    return {
        (strategy, keep): _fsdp_window(rank, config, strategy, keep)
        for strategy in STRATEGIES
        for keep in (False, True)
    }


@dataclass(frozen=True, repr=False)
class FSDPWindow(Result):
    """Per strategy and choice: collectives per window (per layer) and the bytes held whole."""

    accumulation_steps: int
    parameter_bytes: int  # the whole model's parameters, in bytes
    all_gathers: dict  # (strategy, keep_parameters) -> all-gathers per layer in one window
    reduce_scatters: dict  # (strategy, keep_parameters) -> reduce-scatters per layer
    unsharded_bytes: dict  # (strategy, keep_parameters) -> bytes held whole between micro-batches
    gradients: dict  # (strategy, keep_parameters) -> rank -> the window's full gradient

    def table(self) -> Table:
        rows = [
            (strategy, "kept" if keep else "resharded", self.all_gathers[strategy, keep],
             self.reduce_scatters[strategy, keep], f"{self.unsharded_bytes[strategy, keep]:,}")
            for strategy, keep in self.all_gathers
        ]  # fmt: skip
        headers = ("strategy", "parameters", "all-gathers", "reduce-scatters", "bytes held whole")
        title = (
            f"FSDP2, one window of N = {self.accumulation_steps}, synced at its end "
            f"(model: {self.parameter_bytes:,} parameter bytes)"
        )
        return Table(headers, rows, title)


def run_fsdp_window(config: DDPConfig | None = None, timeout_s: float = 120.0) -> FSDPWindow:
    """Start 2 gloo processes, run `_fsdp_window` for each strategy and choice, collect."""
    config = _check_config(DDPConfig() if config is None else config)
    ranks = run_processes(
        _fsdp_window_worker, config, world_size=config.world_size, timeout_s=timeout_s
    )
    keys = list(ranks[0])
    return FSDPWindow(
        accumulation_steps=config.accumulation_steps,
        parameter_bytes=sum(p.numel() * p.element_size() for p in make_model(config).parameters()),
        all_gathers={k: ranks[0][k]["all-gather"] for k in keys},
        reduce_scatters={k: ranks[0][k]["reduce-scatter"] for k in keys},
        unsharded_bytes={k: ranks[0][k]["held"] for k in keys},
        gradients={k: [r[k]["gradients"] for r in ranks] for k in keys},
    )


# --- clipping -------------------------------------------------------------------------------


def _norm(tensors) -> float:
    return math.sqrt(sum(float(t.double().pow(2).sum()) for t in tensors))


def _sharded_norms(rank: int, config: DDPConfig) -> dict:
    """The window's gradient norm under FULL_SHARD, measured three ways in this process."""
    as_count("rank", rank, 0, config.world_size - 1)
    model = _sharded_model(config, reshard_after_forward=True)
    x, y = make_data(config)
    micro_batches = rank_micro_batches(x, y, 0, rank, config)
    for i, (xb, yb) in enumerate(micro_batches):
        model.set_requires_gradient_sync(i == len(micro_batches) - 1)
        (F.cross_entropy(model(xb), yb) / len(micro_batches)).backward()
    shards = [p.grad.to_local() for p in model.parameters()]
    squares = torch.tensor([_norm(shards) ** 2], dtype=torch.float64)
    dist.all_reduce(squares)  # the sum of every process's squares: the whole gradient's
    # FSDP2's parameters are DTensors: torch's clip_grad_norm_ then reduces across processes
    total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=math.inf)
    return {
        "local shards": _norm(shards),
        "clip_grad_norm_ (DTensor)": float(total.full_tensor()),
        "all-reduced squares": math.sqrt(float(squares)),
    }


def _no_sync_clipping(rank: int, config: DDPConfig, max_norm: float, inside: bool) -> dict:
    """A DDP window clipped once after the sync (inside=False) or after every backward (True).

    Returns the norms each clip call measured and the window's final gradient.
    """
    from torch.nn.parallel import DistributedDataParallel as DDP

    model = DDP(make_model(config))
    x, y = make_data(config)
    micro_batches = rank_micro_batches(x, y, 0, rank, config)
    seen = []
    for i, (xb, yb) in enumerate(micro_batches):
        last = i == len(micro_batches) - 1
        with contextlib.nullcontext() if last else model.no_sync():
            (F.cross_entropy(model(xb), yb) / len(micro_batches)).backward()
        if inside or last:  # inside: every micro-batch clips its process's partial sum
            seen.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)))
    gradients = {n: p.grad.detach().clone() for n, p in model.module.named_parameters()}
    return {"norms seen": seen, "gradients": gradients}


def _clipping_worker(rank: int, config: DDPConfig, max_norm: float) -> dict:
    return {
        "norms": _sharded_norms(rank, config),
        "once": _no_sync_clipping(rank, config, max_norm, inside=False),
        "inside": _no_sync_clipping(rank, config, max_norm, inside=True),
    }


@dataclass(frozen=True, repr=False)
class ShardedClipping(Result):
    """Gradient norms under FSDP2, and clipping inside `no_sync()` against clipping once."""

    max_norm: float
    norms: list  # rank -> {way: the window's gradient norm measured that way}
    once_norms: list  # rank -> the norm clipping measured once, after the sync
    inside_norms: list  # rank -> the norms measured inside no_sync() (partial sums), then synced
    once_gradients: list  # rank -> the window's clipped gradient, clipped once
    inside_gradients: list  # rank -> the window's gradient, clipped after every backward

    @property
    def inside_error(self) -> float:
        """How far clipping inside no_sync() lands from clipping once (rank 0)."""
        return relative_error(self.once_gradients[0], self.inside_gradients[0])

    def table(self) -> Table:
        rows = [
            (f"rank {rank}", round(norms["local shards"], 4),
             round(norms["clip_grad_norm_ (DTensor)"], 4), round(norms["all-reduced squares"], 4))
            for rank, norms in enumerate(self.norms)
        ]  # fmt: skip
        headers = ("process", "own shards", "clip_grad_norm_ (DTensor)", "all-reduced squares")
        return Table(headers, rows, "the window's gradient norm under FSDP2, measured three ways")


def run_sharded_clipping(
    config: DDPConfig | None = None, max_fraction: float = 0.5, timeout_s: float = 120.0
) -> ShardedClipping:
    """Start 2 gloo processes; measure norms under FSDP2 and clipping inside `no_sync()`.

    The clipping limit is `max_fraction` of the window's true gradient norm, so clipping once
    scales the window's gradient by exactly that fraction.
    """
    config = _check_config(DDPConfig() if config is None else config)
    max_fraction = as_fraction("max_fraction", max_fraction, "of the true norm to clip to")
    full = _window_gradient_norm(config)
    max_norm = max_fraction * full
    ranks = run_processes(
        _clipping_worker, config, max_norm, world_size=config.world_size, timeout_s=timeout_s
    )
    return ShardedClipping(
        max_norm=max_norm,
        norms=[r["norms"] for r in ranks],
        once_norms=[r["once"]["norms seen"] for r in ranks],
        inside_norms=[r["inside"]["norms seen"] for r in ranks],
        once_gradients=[r["once"]["gradients"] for r in ranks],
        inside_gradients=[r["inside"]["gradients"] for r in ranks],
    )


def _window_gradient_norm(config: DDPConfig) -> float:
    """The first window's gradient norm, as one batch in this process (sets the clip limit)."""
    model = make_model(config)
    x, y = make_data(config)
    F.cross_entropy(model(x[: config.effective_batch]), y[: config.effective_batch]).backward()
    return _norm(p.grad for p in model.parameters())
