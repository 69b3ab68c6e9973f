"""Starting the DDP processes of lessons 4 and 6, and collecting what they return.

`run_ddp` is the launcher: it starts `world_size` real CPU processes with
`torch.multiprocessing` (`torchrun` does it on a cluster). They meet through a file, then talk
over gloo's TCP sockets on this machine, each running `workers.run_experiments`, and
`run_ddp` returns what each way of syncing communicated and learned (a `DDPResult`). The
processes are always stopped before it returns, on errors and time-outs too.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass, field
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from gradacc_lessons.checks import as_count, as_positive
from gradacc_lessons.demos.distributed.arithmetic import DDPConfig, _check_config
from gradacc_lessons.demos.distributed.workers import SYNC_MODES, run_experiments
from gradacc_lessons.display import Result, Table


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


@dataclass(repr=False)
class DDPResult(Result):
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

    def table(self) -> Table:
        """One row per mode: all-reduces of each micro-batch in a window (rank 0), and per step."""
        rows = [
            (mode, str(self.allreduces[mode][0][-1]), f"{self.allreduces_per_step(mode):.1f}")
            for mode in SYNC_MODES
        ]
        headers = ("mode", "all-reduces per micro-batch", "per optimizer step")
        return Table(headers, rows, f"{self.config.world_size} processes")


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
        _start_and_wait(_worker, (config, folder, timeout_s), config.world_size, timeout_s)
        ranks = [
            torch.load(os.path.join(folder, f"rank{r}.pt"), weights_only=True)
            for r in range(config.world_size)
        ]
    return _collect(config, ranks, time.perf_counter() - start)


def run_processes(function, *args, world_size: int = 2, timeout_s: float = 60.0) -> list:
    """Run `function(rank, *args)` in `world_size` gloo processes; return what each returned.

    The launcher of the short demos of lessons 6 and 7: the processes join one gloo group
    (through a file, as in `run_ddp`), and are stopped before this returns, on errors and
    time-outs too. `function` must be importable (a module's top-level function), and
    return tensors, numbers, strings, lists or dicts of them.
    """
    if not callable(function) or "<" in getattr(function, "__qualname__", "<"):
        raise ValueError(f"function must be a module's top-level function, got {function!r}")
    world_size = as_count("world_size", world_size, 2, fix="processes to start")
    timeout_s = as_positive("timeout_s", timeout_s, "seconds the processes may take")
    with tempfile.TemporaryDirectory(prefix="gradacc-gloo-") as folder:
        worker_args = (function, args, world_size, folder, timeout_s)
        _start_and_wait(_call, worker_args, world_size, timeout_s)
        return [
            torch.load(os.path.join(folder, f"rank{r}.pt"), weights_only=True)
            for r in range(world_size)
        ]


def _call(rank, function, args, world_size, folder, timeout_s) -> None:
    """One process of `run_processes`: join the group, run `function`, save what it returns."""
    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo",
        init_method=f"file://{os.path.join(folder, 'rendezvous')}",
        rank=rank,
        world_size=world_size,
        timeout=timedelta(seconds=timeout_s),
    )
    try:
        torch.save(function(rank, *args), os.path.join(folder, f"rank{rank}.pt"))
    finally:
        dist.destroy_process_group()


def _start_and_wait(worker, args, world_size: int, timeout_s: float) -> None:
    context = mp.start_processes(worker, args=args, nprocs=world_size, join=False)
    try:  # whatever happens from here on (an error, a time-out, Ctrl-C), stop them all
        _join(context, timeout_s)
    finally:
        _stop(context)


def _join(context, timeout_s: float) -> None:
    # join() returns when one process ends (and raises at once if it failed, which
    # would leave the others waiting for it until their own time-out): wait in turns.
    deadline = time.monotonic() + timeout_s
    while not context.join(timeout=max(0.0, deadline - time.monotonic())):
        if time.monotonic() >= deadline:
            raise TimeoutError(f"the processes ran past timeout_s={timeout_s} s; raise it")


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
