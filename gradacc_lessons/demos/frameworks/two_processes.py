"""Accelerate on two gloo processes: how often its prepared scheduler steps, and the window's
token count summed over processes before the first backward.

`run_accelerate_processes` starts two CPU processes (`distributed.run_processes`); in each,
Accelerate finds the gloo group and the RANK / WORLD_SIZE variables a launcher
(`accelerate launch`, `torchrun`) would set. Each process runs `_scheduler_runs` (three ways
to build the Accelerator, each with a linear schedule sized two ways) and `token_window`
(the loop that counts a window's tokens across processes, and the one that counts its own).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import torch
from torch.nn import functional as F

from gradacc_lessons.accumulate import IGNORE_INDEX
from gradacc_lessons.checks import as_count
from gradacc_lessons.demos.distributed import DDPConfig, make_model, make_token_data, run_processes
from gradacc_lessons.demos.frameworks.process import _quiet_and_restored
from gradacc_lessons.display import Result, Table

SETUPS = (  # how the Accelerator is built; the second passes an argument 1.15 no longer reads
    "Accelerator()",
    "Accelerator(split_batches=True)",
    "DataLoaderConfiguration(split_batches=True)",
)


def _accelerator(accelerate, setup: str, accumulation_steps: int):
    n = accumulation_steps
    if setup == SETUPS[0]:
        return accelerate.Accelerator(cpu=True, gradient_accumulation_steps=n)
    if setup == SETUPS[1]:
        return accelerate.Accelerator(cpu=True, gradient_accumulation_steps=n, split_batches=True)
    config = accelerate.DataLoaderConfiguration(split_batches=True)
    return accelerate.Accelerator(cpu=True, gradient_accumulation_steps=n, dataloader_config=config)


@dataclass(frozen=True)
class SchedulerRun:
    """One process's epoch with a prepared linear schedule: what stepped, and each step's lr."""

    micro_batches: int  # the micro-batches this process drew from the prepared loader
    optimizer_steps: int
    scheduler_steps: int
    learning_rates: list[float]  # the learning rate at each optimizer step


def _scheduler_run(accelerate, setup, samples, micro_batch_size, accumulation_steps, sized_by):
    """One epoch of a linear schedule over `sized_by` steps; what stepped, and each step's lr."""
    accelerator = _accelerator(accelerate, setup, accumulation_steps)
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    rates = []
    optimizer.register_step_pre_hook(lambda opt, *_: rates.append(opt.param_groups[0]["lr"]))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: max(0.0, 1.0 - step / sized_by)
    )
    loader = torch.utils.data.DataLoader(torch.randn(samples, 3), batch_size=micro_batch_size)
    model, optimizer, scheduler, loader = accelerator.prepare(model, optimizer, scheduler, loader)
    for x in loader:
        with accelerator.accumulate(model):
            accelerator.backward(model(x).sum())
            optimizer.step()  # does nothing until the window is complete
            scheduler.step()
            optimizer.zero_grad()
    # plain values: what comes back from a process is loaded with torch.load(weights_only=True)
    return len(loader), len(rates), scheduler.scheduler.last_epoch, rates


def _scheduler_runs(
    accelerate, samples: int, micro_batch_size: int, accumulation_steps: int
) -> tuple[int, dict[str, tuple]]:
    # the optimizer steps of one process on the whole loader: what you count before prepare()
    counted = math.ceil(math.ceil(samples / micro_batch_size) / accumulation_steps)
    runs = {}
    for setup in SETUPS:
        runs[setup] = _scheduler_run(
            accelerate, setup, samples, micro_batch_size, accumulation_steps, counted
        )
        accelerate.state.AcceleratorState._reset_state()  # the next one reads its own settings
    return counted, runs


COUNTS = ("all processes", "this process")  # whose tokens divide the window's loss


def token_window(accelerate, config: DDPConfig, count: str) -> dict[str, torch.Tensor]:
    """One window, each micro-batch's summed loss divided by the window's tokens, in Accelerate.

    Run in each process of a launched job (`accelerate` is the imported module).
    count="all processes": the count gathered from every process (right);
    count="this process": each process's own count (the mean of the processes' means).
    """
    if count not in COUNTS:
        raise ValueError(f"count must be one of {COUNTS}, got {count!r}")
    n, world = config.accumulation_steps, config.world_size
    accelerator = accelerate.Accelerator(cpu=True, gradient_accumulation_steps=n)
    model = accelerator.prepare(make_model(config))
    window = make_token_data(config, accelerator.process_index)  # fetched before any backward
    tokens = torch.tensor([sum(int((labels != IGNORE_INDEX).sum()) for _, labels in window)])
    if count == "all processes":
        tokens = accelerator.gather(tokens).sum()  # every process's count, added up
    for inputs, labels in window:
        with accelerator.accumulate(model):
            logits = model(inputs)
            loss_sum = F.cross_entropy(
                logits.flatten(0, 1), labels.flatten(), ignore_index=IGNORE_INDEX, reduction="sum"
            )
            # backward divides by N and DDP averages over the processes: undo both
            accelerator.backward(loss_sum / tokens * n * world)
    return {name: p.grad.detach().clone() for name, p in model.module.named_parameters()}


def _worker(rank, config, samples, micro_batch_size) -> tuple:
    world = str(config.world_size)
    variables = {"RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": world,
                 "LOCAL_WORLD_SIZE": world}  # fmt: skip
    with _quiet_and_restored("accelerate") as [accelerate]:
        os.environ.update(variables)  # what a launcher sets (restored on the way out)
        schedules = _scheduler_runs(
            accelerate, samples, micro_batch_size, config.accumulation_steps
        )
        accelerate.state.AcceleratorState._reset_state()
        tokens = {count: token_window(accelerate, config, count) for count in COUNTS}
    return schedules, tokens


@dataclass(frozen=True, repr=False)
class AccelerateProcesses(Result):
    """What Accelerate did on two processes: its scheduler, and a window's token count."""

    world_size: int
    accumulation_steps: int
    counted_steps: int  # ceil(len(dataloader) / N), counted on the loader before prepare()
    schedules: dict[str, SchedulerRun]  # one per way to build the Accelerator (SETUPS)
    token_gradients: dict  # "all processes" / "this process" -> rank -> gradients

    def scheduler_steps_per_optimizer_step(self, setup: str) -> float:
        run = self.schedules[setup]
        return run.scheduler_steps / run.optimizer_steps

    def table(self) -> Table:
        rows = [
            (setup, run.micro_batches, run.optimizer_steps, run.scheduler_steps,
             f"{run.learning_rates[-1]:.2f}")
            for setup, run in self.schedules.items()
        ]  # fmt: skip
        headers = ("built with", "micro-batches", "optimizer steps", "scheduler steps", "last lr")
        title = (
            f"{self.world_size} processes, N = {self.accumulation_steps}, a linear schedule "
            f"sized for {self.counted_steps} steps (counted before prepare)"
        )
        return Table(headers, rows, title)


def run_accelerate_processes(
    config: DDPConfig | None = None, samples: int = 32, micro_batch_size: int = 2, timeout_s=120.0
) -> AccelerateProcesses:
    """Start 2 gloo processes running Accelerate; return what its scheduler and loops did.

    The scheduler runs train one epoch of `samples` samples in micro-batches of
    `micro_batch_size` (per process, or split between them); the token window is lesson 6's.
    """
    config = DDPConfig() if config is None else config
    if not isinstance(config, DDPConfig):
        raise ValueError(f"config must be a DDPConfig, got {config!r}")
    samples = as_count("samples", samples)
    micro_batch_size = as_count("micro_batch_size", micro_batch_size)
    if micro_batch_size % config.world_size:
        raise ValueError(
            f"micro_batch_size={micro_batch_size} must split evenly between "
            f"{config.world_size} processes "
            "(split_batches=True splits each micro-batch)"
        )
    ranks = run_processes(
        _worker,
        config,
        samples,
        micro_batch_size,
        world_size=config.world_size,
        timeout_s=timeout_s,
    )
    (counted, runs), _ = ranks[0]  # each rank sends ((counted, runs), token gradients)
    return AccelerateProcesses(
        world_size=config.world_size,
        accumulation_steps=config.accumulation_steps,
        counted_steps=counted,
        schedules={setup: SchedulerRun(*run) for setup, run in runs.items()},
        token_gradients={count: [tokens[count] for _, tokens in ranks] for count in COUNTS},
    )
