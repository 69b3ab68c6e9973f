"""ZeRO and FSDP in numbers: what each process holds, and sends, when training state is sharded.

Data parallelism (DDP) keeps a full copy of parameters, gradients and optimizer
state in every process. ZeRO stage 1 splits (shards) the optimizer state across
the W processes, stage 2 the gradients too, stage 3 the parameters too. PyTorch's
FSDP offers the last two as SHARD_GRAD_OP (like ZeRO-2) and FULL_SHARD (like ZeRO-3).

Sharded gradients are reduce-scattered after a backward: each process receives the
average over processes of its own 1/W slice and drops the rest. Skipping that sync
inside a window (FSDP's `no_sync()`, or `set_requires_gradient_sync(False)`) means
every process keeps the full, unsharded gradient until the window's last backward:
the memory that sharding was meant to save. In DeepSpeed the stage decides: ZeRO-0 and
ZeRO-1 reduce only at a window's boundary (full gradients until then), ZeRO-2 and ZeRO-3
after every micro-batch (they refuse `no_sync()`); its `coalesce_grad_reduction()` (since 0.19.2)
holds the full gradients through a window under ZeRO-1 to 3. Sources: docs/sources.md.

Communication, counted in parameter volumes (one pass over all parameters per
process): an all-gather or a reduce-scatter moves one volume, an all-reduce two (a
reduce-scatter then an all-gather). These counts are FSDP2's defaults (`fully_shard`;
SHARD_GRAD_OP stands for `reshard_after_forward=False`), which reshard the parameters
after every backward: FULL_SHARD gathers them again in every micro-batch's
forward and backward, so skipping the sync saves less than under DDP, 3N volumes per
window against 2N + 1 (SHARD_GRAD_OP: 2N against N + 1). Both FSDPs can instead keep the
parameters unsharded through the window, for a full copy of them in memory: FSDP2's
`set_reshard_after_backward(False)`, FSDP1's SHARD_GRAD_OP inside `no_sync()`. SHARD_GRAD_OP
then gathers them once per window; FULL_SHARD, which still reshards after every forward, N + 1
times (not counted here: `distributed.run_fsdp_window` measures it).
"""

from __future__ import annotations

from gradacc_lessons.checks import as_choice, as_count
from gradacc_lessons.display import Table

STAGES = {
    0: "DDP (no sharding)",
    1: "ZeRO-1",
    2: "ZeRO-2 / SHARD_GRAD_OP",
    3: "ZeRO-3 / FULL_SHARD",
}
STRATEGIES = ("DDP", "SHARD_GRAD_OP", "FULL_SHARD")


def sharded_bytes(
    parameters: int,
    world_size: int,
    stage: int,
    no_sync: bool = False,
    bytes_per_value: int = 4,
    optimizer_values: int = 2,
) -> dict[str, float]:
    """Bytes per process for parameters, gradients and optimizer state (Adam: 2 values each).

    no_sync=True: the sync is skipped inside the window, so the gradient stays whole.

    >>> sharded_bytes(1000, world_size=4, stage=3)
    {'parameters': 1000.0, 'gradients': 1000.0, 'optimizer state': 2000.0}
    >>> sharded_bytes(1000, world_size=4, stage=3, no_sync=True)["gradients"]
    4000.0
    """
    if isinstance(stage, bool) or stage not in STAGES:
        raise ValueError(f"stage must be one of {sorted(STAGES)}, got {stage!r}")
    world_size, parameters = as_count("world_size", world_size), as_count("parameters", parameters)
    bytes_per_value = as_count("bytes_per_value", bytes_per_value, fix="4 for float32")
    optimizer_values = as_count("optimizer_values", optimizer_values, 0, fix="2 for Adam")
    full = float(parameters * bytes_per_value)
    shard = full / world_size
    gradients_sharded = stage >= 2 and not no_sync  # no_sync keeps the full gradient
    return {
        "parameters": shard if stage >= 3 else full,
        "gradients": shard if gradients_sharded else full,
        "optimizer state": optimizer_values * (shard if stage >= 1 else full),
    }


def sharding_table(parameters: int, world_size: int, bytes_per_value: int = 4) -> Table:
    """Per-process GiB for each stage, synced every micro-batch and with the sync skipped.

    >>> repr(sharding_table(2**30, world_size=4)).splitlines()[2].split()  # 4 GiB of parameters
    ['DDP', '(no', 'sharding)', '4.0', '4.0', '8.0', '16.0', '16.0']
    """
    as_count("bytes_per_value", bytes_per_value, fix="4 for float32")
    rows = []
    for stage, name in STAGES.items():
        parts = sharded_bytes(parameters, world_size, stage, False, bytes_per_value)
        skipped = sum(sharded_bytes(parameters, world_size, stage, True, bytes_per_value).values())
        gib = [v / 2**30 for v in (*parts.values(), sum(parts.values()), skipped)]
        rows.append((name, *(f"{v:.1f}" for v in gib)))
    headers = ("", "params", "grads", "optim", "total", "sync skipped")
    return Table(headers, rows, f"GiB per process, {world_size} processes")


def collectives_per_window(
    strategy: str, accumulation_steps: int, sync_every_micro_batch: bool
) -> dict[str, int]:
    """How many times a window passes all parameters through each collective, per process.

    DDP all-reduces the gradients; SHARD_GRAD_OP all-gathers the parameters before each
    forward and keeps them through the backward; FULL_SHARD frees them after the forward
    and all-gathers them again for the backward. Both reduce-scatter the gradients after
    a backward that syncs: every micro-batch's, or only the window's last. Counted with
    the default resharding after every backward (see the module's docstring for the way
    to keep the parameters through the window).

    >>> collectives_per_window("FULL_SHARD", 4, sync_every_micro_batch=False)
    {'all-gather': 8, 'reduce-scatter': 1, 'all-reduce': 0}
    """
    as_choice("strategy", strategy, STRATEGIES)
    accumulation_steps = as_count("accumulation_steps", accumulation_steps)
    syncs = accumulation_steps if sync_every_micro_batch else 1
    gathers = {"DDP": 0, "SHARD_GRAD_OP": 1, "FULL_SHARD": 2}[strategy]
    return {
        "all-gather": gathers * accumulation_steps,  # resharded after each backward: again
        "reduce-scatter": 0 if strategy == "DDP" else syncs,
        "all-reduce": syncs if strategy == "DDP" else 0,
    }


def communication_volumes(
    strategy: str, accumulation_steps: int, sync_every_micro_batch: bool
) -> int:
    """Parameter volumes a process sends per window: an all-reduce counts two.

    >>> [communication_volumes("FULL_SHARD", 4, sync) for sync in (True, False)]  # 3N, 2N + 1
    [12, 9]
    """
    counts = collectives_per_window(strategy, accumulation_steps, sync_every_micro_batch)
    return counts["all-gather"] + counts["reduce-scatter"] + 2 * counts["all-reduce"]


def communication_table(accumulation_steps: int) -> Table:
    """Parameter volumes per window, synced every micro-batch or once, for each strategy.

    >>> repr(communication_table(4)).splitlines()[2].split()
    ['DDP', '8', '2', '4.00']
    """
    rows = []
    for strategy in STRATEGIES:
        every, once = (
            communication_volumes(strategy, accumulation_steps, s) for s in (True, False)
        )
        rows.append((strategy, every, once, f"{every / once:.2f}"))
    title = f"parameter volumes per window of {accumulation_steps} micro-batches"
    return Table(("", "every micro-batch", "once", "ratio"), rows, title)
