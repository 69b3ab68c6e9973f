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
import statistics
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from unittest import mock

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


def accumulation_steps_for(effective_batch: int, world_size: int, micro_batch: int) -> int:
    """N that keeps `effective_batch` on `world_size` devices with this micro-batch.

    Re-derive it whenever the number of devices changes: with N unchanged, 4 GPUs
    instead of 8 silently halve the effective batch (and change what the learning
    rate was tuned for).

    >>> accumulation_steps_for(512, world_size=8, micro_batch=16), accumulation_steps_for(
    ...     512, world_size=4, micro_batch=16)
    (4, 8)
    """
    effective_batch = as_count("effective_batch", effective_batch)
    world_size = as_count("world_size", world_size)
    micro_batch = as_count("micro_batch", micro_batch)
    per_step = world_size * micro_batch
    if effective_batch % per_step:
        raise ValueError(
            f"effective_batch={effective_batch} is not a multiple of world_size x micro_batch = "
            f"{per_step}; pick a micro_batch that divides {effective_batch // world_size}"
        )
    return effective_batch // per_step


def sampler_shares(dataset_size: int, world_size: int) -> list[list[int]]:
    """The sample indices `DistributedSampler` hands each process (no shuffling).

    It pads the dataset to a multiple of `world_size` by repeating its first samples,
    so every process gets as many samples, and a few samples count twice per epoch.

    >>> sampler_shares(10, world_size=4)
    [[0, 4, 8], [1, 5, 9], [2, 6, 0], [3, 7, 1]]
    """
    dataset_size = as_count("dataset_size", dataset_size)
    world_size = as_count("world_size", world_size)
    from torch.utils.data import DistributedSampler

    return [
        list(DistributedSampler(range(dataset_size), world_size, rank, shuffle=False))
        for rank in range(world_size)
    ]


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
        torch.save(run_experiments(config, rank), os.path.join(folder, f"rank{rank}.pt"))
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
    seconds_per_step: dict[str, float]  # mode -> median seconds per optimizer step (rank 0)
    fsdp_collectives: dict | None  # (strategy, sync every micro-batch) -> volumes (rank 0)
    batchnorm_gradients: list[dict[str, torch.Tensor]]  # rank -> DDP gradient, plain BatchNorm
    unequal_micro_batches: list[str]  # rank -> what it saw with one micro-batch too many
    seconds: float = field(default=0.0)

    def allreduces_per_step(self, mode: str, rank: int = 0) -> float:
        """Mean number of all-reduces per optimizer step for `mode`."""
        windows = self.allreduces[mode][rank]
        return sum(map(sum, windows)) / len(windows)

    def table(self) -> str:
        """One line per mode: all-reduces of each micro-batch in a window, and per step."""
        lines = [f"{'mode':<28} {'all-reduces per micro-batch':<28} {'per optimizer step':>18}"]
        for mode in SYNC_MODES:
            pattern = str(self.allreduces[mode][0][-1])
            lines.append(f"{mode:<28} {pattern:<28} {self.allreduces_per_step(mode):>18.1f}")
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
        seconds_per_step=ranks[0]["seconds_per_step"],
        fsdp_collectives=ranks[0]["fsdp_collectives"],
        batchnorm_gradients=[r["batchnorm_gradients"] for r in ranks],
        unequal_micro_batches=[r["unequal_micro_batches"] for r in ranks],
        seconds=seconds,
    )


def _check_config(config) -> DDPConfig:
    if not isinstance(config, DDPConfig):
        raise ValueError(f"config must be a DDPConfig, got {config!r}")
    return config


def _check_rank(rank, config: DDPConfig) -> int:
    return as_count("rank", rank, 0, config.world_size - 1, "a process's number in the world")
