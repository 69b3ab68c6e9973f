"""Gradient accumulation under DistributedDataParallel, on CPU processes (gloo backend).

DDP all-reduces (averages) the gradients across processes during every backward
pass, unless the model is inside `no_sync()`. With accumulation, only the last
micro-batch of a window needs that all-reduce. The catch: DDP decides whether
to sync in the *forward* pass, so `no_sync()` must wrap forward and backward.

`run_ddp` starts `world_size` real processes with `torch.multiprocessing` (they talk
over gloo on this machine), trains the same model three ways and returns what each
way communicated and learned. The processes are always stopped before it returns, on
errors and time-outs too.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from dataclasses import dataclass, field
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn import functional as F

from gradacc_lessons.accumulate import IGNORE_INDEX
from gradacc_lessons.checks import as_choice, as_count, as_positive
from gradacc_lessons.data import make_classification
from gradacc_lessons.device import seeded
from gradacc_lessons.models import MLP

# How each micro-batch but the last of a window runs:
SYNC_MODES = (
    "no_sync",  # forward and backward inside no_sync(): the right way
    "no_sync_backward_only",  # only backward inside no_sync(): the bug, it still syncs
    "always_sync",  # no no_sync() at all
)


@dataclass(frozen=True)
class DDPConfig:
    """What the distributed experiment trains: sizes, steps and seed (float64 throughout)."""

    world_size: int = 2
    micro_batch: int = 4
    accumulation_steps: int = 4
    windows: int = 3  # optimizer steps
    features: int = 8
    classes: int = 3
    hidden: int = 16
    lr: float = 0.1
    seed: int = 0

    @property
    def effective_batch(self) -> int:
        """Samples behind one optimizer step: world size x micro-batch x accumulation steps."""
        return effective_batch(self.world_size, self.micro_batch, self.accumulation_steps)


def effective_batch(world_size: int, micro_batch: int, accumulation_steps: int) -> int:
    """The global batch one optimizer step stands for, across all processes.

    >>> effective_batch(world_size=8, micro_batch=16, accumulation_steps=4)
    512
    """
    world_size, micro_batch = (
        as_count("world_size", world_size),
        as_count("micro_batch", micro_batch),
    )
    return world_size * micro_batch * as_count("accumulation_steps", accumulation_steps)


def make_model(config: DDPConfig) -> nn.Module:
    """The model every process (and the single-process reference) starts from, in float64.

    >>> make_model(DDPConfig())(torch.zeros(2, 8, dtype=torch.float64)).shape
    torch.Size([2, 3])
    """
    _check_config(config)
    with seeded(config.seed):
        return MLP(config.features, config.classes, hidden=config.hidden).double()


def make_data(config: DDPConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """All samples of all windows, in float64: window w is rows w*E ... (w+1)*E - 1.

    >>> x, y = make_data(DDPConfig(windows=2))
    >>> tuple(x.shape)
    (64, 8)
    """
    _check_config(config)
    samples = config.windows * config.effective_batch
    return make_classification(
        samples, config.features, config.classes, seed=config.seed, dtype=torch.float64
    )


def rank_micro_batches(
    x: torch.Tensor, y: torch.Tensor, window: int, rank: int, config: DDPConfig
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The micro-batches of process `rank` in `window`: its contiguous share, cut in N pieces.

    >>> x, y = make_data(DDPConfig())
    >>> [tuple(xb.shape) for xb, _ in rank_micro_batches(x, y, 0, 1, DDPConfig())][:2]
    [(4, 8), (4, 8)]
    """
    _check_rank(rank, _check_config(config))
    as_count("window", window, 0, config.windows - 1)
    share = config.micro_batch * config.accumulation_steps
    start = window * config.effective_batch + rank * share
    xs, ys = x[start : start + share], y[start : start + share]
    return list(zip(xs.split(config.micro_batch), ys.split(config.micro_batch)))


def train_full_batch(config: DDPConfig) -> dict[str, torch.Tensor]:
    """The single-process reference: one step per window on all its samples at once.

    >>> sorted(train_full_batch(DDPConfig(windows=1)))[:2]
    ['0.bias', '0.weight']
    """
    _check_config(config)
    model = make_model(config)
    optimizer = torch.optim.SGD(model.parameters(), lr=config.lr, momentum=0.9)
    x, y = make_data(config)
    for xw, yw in zip(x.split(config.effective_batch), y.split(config.effective_batch)):
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(model(xw), yw).backward()
        optimizer.step()
    return {n: p.detach().clone() for n, p in model.named_parameters()}


def token_mean_gradients(config: DDPConfig) -> dict[str, torch.Tensor]:
    """The single-process reference: gradient of the mean loss over all valid tokens of all ranks.

    >>> sorted(token_mean_gradients(DDPConfig()))[:2]
    ['0.bias', '0.weight']
    """
    _check_config(config)
    model = make_model(config)
    batches = [b for rank in range(config.world_size) for b in make_token_data(config, rank)]
    logits = torch.cat([model(x).reshape(-1, config.classes) for x, _ in batches])
    labels = torch.cat([y.reshape(-1) for _, y in batches])
    F.cross_entropy(logits, labels, ignore_index=IGNORE_INDEX).backward()
    return {n: p.grad.detach().clone() for n, p in model.named_parameters()}


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


def micro_batch_step(ddp_model, x, y, weight: float, mode: str, last: bool) -> torch.Tensor:
    """Forward and backward of one micro-batch, with `no_sync()` placed as `mode` says.

    >>> micro_batch_step(None, None, None, 1.0, mode="sometimes", last=False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: mode must be one of (...), got 'sometimes'
    """
    if mode not in SYNC_MODES:
        raise ValueError(f"mode must be one of {SYNC_MODES}, got {mode!r}")
    skip_sync = not last and mode != "always_sync"
    wrap_forward = (
        ddp_model.no_sync() if skip_sync and mode == "no_sync" else contextlib.nullcontext()
    )
    wrap_backward = ddp_model.no_sync() if skip_sync else contextlib.nullcontext()
    with wrap_forward:  # DDP decides here, in forward, whether this backward syncs
        loss = F.cross_entropy(ddp_model(x), y)
    with wrap_backward:
        (loss * weight).backward()
    return loss.detach()


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


def make_token_data(config: DDPConfig, rank: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Padded sequences of process `rank`, as N micro-batches of (inputs, labels).

    Rank 0 holds short sequences and rank 1 long ones, so the processes see very
    different numbers of valid tokens. Padding positions carry IGNORE_INDEX.

    >>> [tuple(t.shape) for t in make_token_data(DDPConfig(), rank=0)[0]]
    [(4, 12, 8), (4, 12)]
    """
    _check_rank(rank, _check_config(config))
    generator = torch.Generator().manual_seed(config.seed + 1000 + rank)
    seq_len, batches = 12, []
    for _ in range(config.accumulation_steps):
        shape = (config.micro_batch, seq_len)
        x = torch.randn(*shape, config.features, generator=generator, dtype=torch.float64)
        y = torch.randint(config.classes, shape, generator=generator)
        low, high = (1, 4) if rank % 2 == 0 else (8, seq_len + 1)
        lengths = torch.randint(low, high, (config.micro_batch,), generator=generator)
        y[torch.arange(seq_len) >= lengths[:, None]] = IGNORE_INDEX
        batches.append((x, y))
    return batches


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


def _worker(rank: int, config: DDPConfig, folder: str, timeout_s: float) -> None:
    """One process of the experiment (torch.multiprocessing calls it with its rank first)."""
    torch.set_num_threads(1)  # one core per process (this process's own setting)
    dist.init_process_group(
        "gloo",
        # A file both processes can see: no port to pick, so none that another run can take.
        init_method=f"file://{os.path.join(folder, 'rendezvous')}",
        rank=rank,
        world_size=config.world_size,
        timeout=timedelta(seconds=timeout_s),
    )
    try:
        result = {mode: train_ddp(config, rank, mode) for mode in SYNC_MODES}
        result["token_gradients"] = {
            recipe: token_gradients(config, rank, recipe)
            for recipe in ("local_mean", "global_count")
        }
        torch.save(result, os.path.join(folder, f"rank{rank}.pt"))
    finally:
        dist.destroy_process_group()


# --- what runs in the notebook's (or the test's) process ----------------------------------


@dataclass
class DDPResult:
    """What each sync mode communicated and learned, as seen by every process."""

    config: DDPConfig
    allreduces: dict[str, list[list[list[int]]]]  # mode -> rank -> window -> micro-batch
    elements: dict[str, list[int]]  # mode -> rank -> gradient entries all-reduced in total
    parameters: dict[str, list[dict[str, torch.Tensor]]]  # mode -> rank -> trained parameters
    token_gradients: dict[str, list[dict[str, torch.Tensor]]]  # recipe -> rank -> gradients
    seconds: float = field(default=0.0)

    def allreduces_per_step(self, mode: str, rank: int = 0) -> float:
        """Mean number of all-reduces per optimizer step for `mode`."""
        windows = self.allreduces[mode][rank]
        return sum(map(sum, windows)) / len(windows)

    def table(self) -> str:
        """One line per mode: all-reduces of each micro-batch in a window, and per step."""
        lines = [f"{'mode':<22} {'all-reduces per micro-batch':<28} {'per optimizer step':>18}"]
        for mode in SYNC_MODES:
            pattern = str(self.allreduces[mode][0][-1])
            lines.append(f"{mode:<22} {pattern:<28} {self.allreduces_per_step(mode):>18.1f}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        steps = ", ".join(f"{m}={self.allreduces_per_step(m):g}" for m in SYNC_MODES)
        return f"DDPResult(world_size={self.config.world_size}, all-reduces per step: {steps})"


def run_ddp(config: DDPConfig | None = None, timeout_s: float = 120.0) -> DDPResult:
    """Start `config.world_size` gloo processes, run the experiment, collect what they measured.

    The processes are started by `torch.multiprocessing.start_processes` and meet through
    a file in a temporary folder. They are stopped before this returns, whether they
    finished, failed (the first error is raised here) or ran past `timeout_s`.
    """
    config = DDPConfig() if config is None else config
    _check_config(config)
    timeout_s = as_positive("timeout_s", timeout_s, "seconds the processes may take")
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gradacc-ddp-") as folder:
        context = mp.start_processes(
            _worker, args=(config, folder, timeout_s), nprocs=config.world_size, join=False
        )
        try:  # whatever happens from here on (an error, a time-out, Ctrl-C), stop them all
            _join(context, timeout_s)
        finally:
            _stop(context)
        ranks = [
            torch.load(os.path.join(folder, f"rank{r}.pt"), weights_only=True)
            for r in range(config.world_size)
        ]
    return _collect(config, ranks, time.perf_counter() - start)


def _join(context, timeout_s: float) -> None:
    # join() returns when one process ends (and raises at once if it failed, which
    # would leave the others waiting for it until their own time-out): wait in turns.
    deadline = time.monotonic() + timeout_s
    while not context.join(timeout=max(0.0, deadline - time.monotonic())):
        if time.monotonic() >= deadline:
            raise TimeoutError(f"the DDP processes ran past timeout_s={timeout_s} s; raise it")


def _stop(context) -> None:
    for process in context.processes:
        if process.is_alive():
            process.kill()
        process.join()


def _collect(config: DDPConfig, ranks: list[dict], seconds: float) -> DDPResult:
    return DDPResult(
        config=config,
        allreduces={m: [r[m]["allreduces"] for r in ranks] for m in SYNC_MODES},
        elements={m: [r[m]["elements"] for r in ranks] for m in SYNC_MODES},
        parameters={m: [r[m]["parameters"] for r in ranks] for m in SYNC_MODES},
        token_gradients={
            recipe: [r["token_gradients"][recipe] for r in ranks]
            for recipe in ("local_mean", "global_count")
        },
        seconds=seconds,
    )


def _check_config(config) -> DDPConfig:
    if not isinstance(config, DDPConfig):
        raise ValueError(f"config must be a DDPConfig, got {config!r}")
    return config


def _check_rank(rank, config: DDPConfig) -> int:
    return as_count("rank", rank, 0, config.world_size - 1, "a process's number in the world")
