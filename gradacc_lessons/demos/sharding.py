"""ZeRO and FSDP in numbers: what each process holds when training state is sharded.

Data parallelism (DDP) keeps a full copy of parameters, gradients and optimizer
state in every process. ZeRO stage 1 splits (shards) the optimizer state across
the W processes, stage 2 the gradients too, stage 3 (= FSDP's full sharding)
the parameters too. Sharded gradients are reduce-scattered after each backward,
so each process keeps only its 1/W. Under `no_sync()` that cannot happen: every
process keeps the full, unsharded gradient for the whole window, which is the
memory that `no_sync` costs under FSDP.
"""

from __future__ import annotations

from gradacc_lessons.checks import as_count

STAGES = {0: "DDP (no sharding)", 1: "ZeRO-1", 2: "ZeRO-2", 3: "ZeRO-3 / FSDP"}


def sharded_bytes(
    parameters: int,
    world_size: int,
    stage: int,
    no_sync: bool = False,
    bytes_per_value: int = 4,
    optimizer_values: int = 2,
) -> dict[str, float]:
    """Bytes per process for parameters, gradients and optimizer state (Adam: 2 values each).

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


def sharding_table(parameters: int, world_size: int, bytes_per_value: int = 4) -> str:
    """Per-process GiB for each stage, with and without no_sync, as a text table.

    >>> sharding_table(10**9, 8).splitlines()[0].split()
    ['params', 'grads', 'optim', 'total', 'no_sync']
    """
    as_count("bytes_per_value", bytes_per_value, fix="4 for float32")
    lines = [f"{'':<18}{'params':>8}{'grads':>8}{'optim':>8}{'total':>8}{'no_sync':>9}"]
    for stage, name in STAGES.items():
        parts = sharded_bytes(parameters, world_size, stage, False, bytes_per_value)
        no_sync_total = sum(
            sharded_bytes(parameters, world_size, stage, True, bytes_per_value).values()
        )
        cells = "".join(f"{v / 2**30:>8.1f}" for v in parts.values())
        lines.append(
            f"{name:<18}{cells}{sum(parts.values()) / 2**30:>8.1f}{no_sync_total / 2**30:>9.1f}"
        )
    return "\n".join(lines)
