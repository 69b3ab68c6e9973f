"""What runs inside each DDP process: the ways to step a micro-batch (`STEPS`), and the
experiments one rank runs (`run_experiments`) with the counters they read.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from unittest import mock

import torch
import torch.distributed as dist
from torch import nn
from torch.nn import functional as F

from gradacc_lessons.accumulate import IGNORE_INDEX
from gradacc_lessons.checks import as_choice, as_count, as_positive
from gradacc_lessons.demos.distributed.arithmetic import (
    DDPConfig,
    _check_config,
    _check_rank,
    make_data,
    make_model,
    make_token_data,
    rank_micro_batches,
)
from gradacc_lessons.device import seeded
from gradacc_lessons.models import MLP

# --- what runs inside each process -------------------------------------------------------


@dataclass
class AllReduceCounter:
    """Counts the gradient all-reduces that DDP launches (one per bucket of gradients).

    >>> AllReduceCounter()
    AllReduceCounter(calls=0, elements=0)
    """

    calls: int = 0
    elements: int = 0


def counting_allreduce_hook(counter: AllReduceCounter, bucket):
    """A DDP communication hook: count the all-reduce, then average the bucket as DDP does."""
    if not isinstance(counter, AllReduceCounter):
        raise ValueError(f"counter must be an AllReduceCounter, got {counter!r}")
    # No return annotation: DDP checks it against Future[Tensor], which a string fails.
    counter.calls += 1
    counter.elements += bucket.buffer().numel()
    tensor = bucket.buffer().div_(dist.get_world_size())
    future = dist.all_reduce(tensor, async_op=True).get_future()
    return future.then(lambda fut: fut.value()[0])


def no_sync_step(ddp_model, x, y, weight: float, last: bool) -> torch.Tensor:
    """One micro-batch, the right way: forward and backward inside no_sync(), but the last.

    >>> model = torch.nn.Linear(3, 2)  # outside DDP, the last micro-batch is a plain step
    >>> no_sync_step(model, torch.ones(4, 3), torch.zeros(4, dtype=torch.long), 0.25, True).ndim
    0
    """
    weight = as_positive("weight", weight, "the micro-batch's share of the window")
    context = ddp_model.no_sync() if not last else contextlib.nullcontext()
    with context:  # DDP decides in the forward pass whether this backward all-reduces
        loss = F.cross_entropy(ddp_model(x), y)
        (loss * weight).backward()
    return loss.detach()


def backward_only_no_sync_step(ddp_model, x, y, weight: float, last: bool) -> torch.Tensor:
    """The bug: only backward inside no_sync(). The forward already chose to all-reduce.

    >>> model = torch.nn.Linear(3, 2)
    >>> x, y = torch.ones(4, 3), torch.zeros(4, dtype=torch.long)
    >>> backward_only_no_sync_step(model, x, y, 0.25, True).ndim
    0
    """
    weight = as_positive("weight", weight, "the micro-batch's share of the window")
    loss = F.cross_entropy(ddp_model(x), y)  # outside no_sync(): this backward will sync
    context = ddp_model.no_sync() if not last else contextlib.nullcontext()
    with context:
        (loss * weight).backward()
    return loss.detach()


def always_sync_step(ddp_model, x, y, weight: float, last: bool) -> torch.Tensor:
    """No no_sync() at all: every micro-batch's backward all-reduces.

    >>> model = torch.nn.Linear(3, 2)
    >>> always_sync_step(model, torch.ones(4, 3), torch.zeros(4, dtype=torch.long), 1.0, False).ndim
    0
    """
    weight = as_positive("weight", weight, "the micro-batch's share of the window")
    loss = F.cross_entropy(ddp_model(x), y)
    (loss * weight).backward()
    return loss.detach()


def flag_step(ddp_model, x, y, weight: float, last: bool) -> torch.Tensor:
    """nanoGPT's way: set the flag that no_sync() sets, before the forward pass.

    >>> model = torch.nn.Linear(3, 2)
    >>> _ = flag_step(model, torch.ones(4, 3), torch.zeros(4, dtype=torch.long), 0.25, False)
    >>> model.require_backward_grad_sync  # DDP reads it in its next forward
    False
    """
    weight = as_positive("weight", weight, "the micro-batch's share of the window")
    ddp_model.require_backward_grad_sync = last  # sync only in the window's last backward
    loss = F.cross_entropy(ddp_model(x), y)
    (loss * weight).backward()
    return loss.detach()


# How each micro-batch runs, by mode; the last micro-batch of a window always syncs.
STEPS = {
    "no_sync": no_sync_step,
    "no_sync_backward_only": backward_only_no_sync_step,
    "always_sync": always_sync_step,
    "require_backward_grad_sync": flag_step,
}
SYNC_MODES = tuple(STEPS)


def micro_batch_step(ddp_model, x, y, weight: float, mode: str, last: bool) -> torch.Tensor:
    """Forward and backward of one micro-batch, with the sync placed as `mode` says.

    >>> model = torch.nn.Linear(3, 2)
    >>> x, y = torch.ones(4, 3), torch.zeros(4, dtype=torch.long)
    >>> micro_batch_step(model, x, y, 1.0, mode="always_sync", last=True).ndim
    0
    """
    return STEPS[as_choice("mode", mode, SYNC_MODES)](ddp_model, x, y, weight, last)


def train_ddp(config: DDPConfig, rank: int, mode: str) -> dict:
    """Train under DDP in this process; return all-reduces per micro-batch and final parameters."""
    _check_rank(rank, _check_config(config))
    as_choice("mode", mode, SYNC_MODES)
    from torch.nn.parallel import DistributedDataParallel as DDP

    model = DDP(make_model(config))
    counter = AllReduceCounter()
    model.register_comm_hook(counter, counting_allreduce_hook)
    optimizer = torch.optim.SGD(model.parameters(), lr=config.lr, momentum=0.9)
    x, y = make_data(config)
    allreduces = []  # per window, the all-reduces each micro-batch's backward launched
    for window in range(config.windows):
        micro_batches = rank_micro_batches(x, y, window, rank, config)
        per_micro_batch = []
        for i, (xb, yb) in enumerate(micro_batches):
            before = counter.calls
            last = i == len(micro_batches) - 1
            micro_batch_step(model, xb, yb, 1 / len(micro_batches), mode, last)
            per_micro_batch.append(counter.calls - before)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        allreduces.append(per_micro_batch)
    parameters = {n: p.detach().clone() for n, p in model.module.named_parameters()}
    return {"allreduces": allreduces, "elements": counter.elements, "parameters": parameters}


def global_token_count(valid_tokens: int) -> int:
    """The number of valid (non-padding) tokens summed over all processes: one all-reduce."""
    as_count("valid_tokens", valid_tokens, minimum=0)
    count = torch.tensor([valid_tokens], dtype=torch.int64)
    dist.all_reduce(count)
    return int(count.item())


def token_gradients(config: DDPConfig, rank: int, recipe: str) -> dict[str, torch.Tensor]:
    """One window's DDP gradient of a token-level loss, normalised as `recipe` says.

    recipe="local_mean": each process divides by its own valid-token count (the bug);
    recipe="global_count": by the count all-reduced over processes, times the world
    size because DDP averages over processes. Only the second is the global token mean.
    """
    _check_rank(rank, _check_config(config))
    as_choice("recipe", recipe, ("local_mean", "global_count"))
    from torch.nn.parallel import DistributedDataParallel as DDP

    model = DDP(make_model(config))
    batches = make_token_data(config, rank)
    local = sum(int((y != IGNORE_INDEX).sum()) for _, y in batches)
    if recipe == "local_mean":
        scale = 1.0 / local
    elif recipe == "global_count":
        scale = dist.get_world_size() / global_token_count(local)
    else:
        raise ValueError(f"recipe must be 'local_mean' or 'global_count', got {recipe!r}")
    for i, (x, y) in enumerate(batches):
        sync = contextlib.nullcontext() if i == len(batches) - 1 else model.no_sync()
        with sync:
            logits = model(x).reshape(-1, config.classes)
            loss_sum = F.cross_entropy(
                logits, y.reshape(-1), ignore_index=IGNORE_INDEX, reduction="sum"
            )
            (loss_sum * scale).backward()
    return {n: p.grad.detach().clone() for n, p in model.module.named_parameters()}


def time_sync_modes(
    rank: int, modes=("no_sync", "always_sync"), accumulation_steps: int = 8, repeats: int = 5
) -> dict[str, float]:
    """Median seconds per optimizer step of each mode, on a model large enough to time.

    An MLP of 85,002 float32 parameters, micro-batches of 16 samples; the modes take
    turns in every repeat, so that a busy moment of the machine hits them alike.
    """
    modes = [as_choice("modes", mode, SYNC_MODES) for mode in modes]
    accumulation_steps = as_count("accumulation_steps", accumulation_steps)
    repeats = as_count("repeats", repeats)
    from torch.nn.parallel import DistributedDataParallel as DDP

    generator = torch.Generator().manual_seed(as_count("rank", rank, minimum=0))
    x, y = torch.randn(16, 64, generator=generator), torch.randint(10, (16,), generator=generator)
    with seeded(0):  # the same initial weights in every process
        model = DDP(MLP(64, 10, hidden=256))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    seconds: dict[str, list[float]] = {mode: [] for mode in modes}
    for repeat in range(repeats + 1):  # the first round warms up and is not kept
        for mode in modes:
            dist.barrier()  # start together: the all-reduces wait for the slowest process
            start = time.perf_counter()
            for i in range(accumulation_steps):
                micro_batch_step(model, x, y, 1 / accumulation_steps, mode,
                                 last=i == accumulation_steps - 1)  # fmt: skip
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if repeat:
                seconds[mode].append(time.perf_counter() - start)
    return {mode: statistics.median(times) for mode, times in seconds.items()}


COLLECTIVES = {  # the torch.distributed functions FSDP calls, by what they do
    "all-gather": ("all_gather_into_tensor", "all_gather_single"),
    "reduce-scatter": ("reduce_scatter_tensor", "reduce_scatter_single"),
}


@contextlib.contextmanager
def counting_collectives() -> Iterator[dict[str, int]]:
    """Count the all-gathers and reduce-scatters launched inside the block (FSDP's).

    >>> with counting_collectives() as counts:
    ...     pass  # here: fully_shard's forward and backward
    >>> counts
    {'all-gather': 0, 'reduce-scatter': 0}
    """
    counts = dict.fromkeys(COLLECTIVES, 0)
    with contextlib.ExitStack() as stack:
        for kind, names in COLLECTIVES.items():
            for name in names:
                if hasattr(dist, name):
                    original = getattr(dist, name)

                    def counted(*args, kind=kind, original=original, **kwargs):
                        counts[kind] += 1
                        return original(*args, **kwargs)

                    stack.enter_context(mock.patch.object(dist, name, counted))
        yield counts


def fsdp_collectives(accumulation_steps: int = 4) -> dict | None:
    """Collectives per window of FSDP2 (`fully_shard`) on a 3-layer MLP, each layer a unit.

    For reshard_after_forward=True (FULL_SHARD) and False (SHARD_GRAD_OP), syncing every
    micro-batch or only the last (`set_requires_gradient_sync`). Counted per layer
    group; divided by the 3 layers, they are parameter volumes. None before torch 2.6.
    """
    accumulation_steps = as_count("accumulation_steps", accumulation_steps)
    try:
        from torch.distributed.fsdp import fully_shard
    except ImportError:
        return None
    counts = {}
    x, y = torch.randn(8, 16), torch.randint(4, (8,))
    for strategy, reshard in (("FULL_SHARD", True), ("SHARD_GRAD_OP", False)):
        with seeded(0):
            model = MLP(16, 4, hidden=32)
        for layer in model:
            if isinstance(layer, nn.Linear):
                fully_shard(layer, reshard_after_forward=reshard)
        fully_shard(model, reshard_after_forward=reshard)
        for every in (True, False):
            with counting_collectives() as window:
                for i in range(accumulation_steps):
                    model.set_requires_gradient_sync(every or i == accumulation_steps - 1)
                    (F.cross_entropy(model(x), y) / accumulation_steps).backward()
            counts[(strategy, every)] = {kind: n / 3 for kind, n in window.items()}
            model.zero_grad(set_to_none=True)
    return counts


def batchnorm_gradients(config: DDPConfig, rank: int) -> dict[str, torch.Tensor]:
    """DDP gradient of an MLP with plain BatchNorm, each process on its own micro-batch."""
    _check_rank(rank, _check_config(config))
    from torch.nn.parallel import DistributedDataParallel as DDP

    with seeded(config.seed):
        model = DDP(MLP(config.features, config.classes, config.hidden, norm="batch").double())
    x, y = make_data(config)
    xb, yb = rank_micro_batches(x, y, 0, rank, config)[0]
    F.cross_entropy(model(xb), yb).backward()  # DDP averages the processes' gradients
    return {n: p.grad.detach().clone() for n, p in model.module.named_parameters()}


def unequal_micro_batches(rank: int, accumulation_steps: int = 4, timeout_s: float = 2.0) -> str:
    """Rank 0 has one micro-batch more than the others: what its extra window runs into.

    Its extra window's backward all-reduces; the other processes are done with their
    windows and wait elsewhere (here, in a barrier). Nothing matches: on a real job
    everything waits until the time-out (NCCL's default: 10 minutes, or forever).
    Here a group with a `timeout_s` time-out reports it. Returns what this process saw.
    """
    accumulation_steps = as_count("accumulation_steps", accumulation_steps)
    timeout_s = as_positive("timeout_s", timeout_s, "seconds before a stuck collective fails")
    rank = as_count("rank", rank, minimum=0)
    from torch.nn.parallel import DistributedDataParallel as DDP

    group = dist.new_group(backend="gloo", timeout=timedelta(seconds=timeout_s))
    model = DDP(nn.Linear(4, 2), process_group=group)
    micro_batches = accumulation_steps + (1 if rank == 0 else 0)
    start = time.perf_counter()
    try:
        for i in range(micro_batches):
            last = (i + 1) % accumulation_steps == 0 or i == micro_batches - 1
            no_sync_step(model, torch.randn(2, 4), torch.zeros(2, dtype=torch.long), 1.0, last)
        dist.barrier(group=group)  # the next thing a real loop would wait on
    except RuntimeError as error:
        waited = time.perf_counter() - start
        return f"{micro_batches} micro-batches: stuck, timed out after {waited:.1f} s ({error})"
    return f"{micro_batches} micro-batches: finished"


def run_experiments(config: DDPConfig, rank: int) -> dict:
    """Everything one process measures, in order; the hang demonstration comes last."""
    _check_rank(rank, _check_config(config))
    result = {mode: train_ddp(config, rank, mode) for mode in SYNC_MODES}
    result["token_gradients"] = {
        recipe: token_gradients(config, rank, recipe) for recipe in ("local_mean", "global_count")
    }
    result["seconds_per_step"] = time_sync_modes(rank)
    result["fsdp_collectives"] = fsdp_collectives(config.accumulation_steps)
    result["batchnorm_gradients"] = batchnorm_gradients(config, rank)
    result["unequal_micro_batches"] = unequal_micro_batches(rank, config.accumulation_steps)
    return result
