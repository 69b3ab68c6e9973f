"""Gradient accumulation under DistributedDataParallel, on CPU processes (gloo backend).

DDP all-reduces (averages) the gradients across processes during every backward
pass, unless the model is inside `no_sync()`. With accumulation, only the last
micro-batch of a window needs that all-reduce. The catch: DDP decides whether
to sync in the *forward* pass, so `no_sync()` must wrap forward and backward.

DDP does not start processes: a launcher does (`torchrun` on a cluster; here `run_ddp`,
with `torch.multiprocessing`). `run_ddp` starts `world_size` real processes that talk over
gloo (TCP sockets, which stay on this machine), trains the same model four ways (the four
`SYNC_MODES`) and returns what each way communicated and learned. The processes are always
stopped before it returns, on errors and time-outs too.

One module per idea: `arithmetic` (the effective batch, each rank's data, the one-process
references), `workers` (what runs inside each process), `launch` (`run_ddp`: starting the
processes and collecting their results; `run_processes` for the short demos), `sharded`
(FSDP2 through a window, and clipping sharded gradients), `sharded_precision` (where FSDP1 and
FSDP2 add up a window under bfloat16). Every public name is re-exported here.
"""

from __future__ import annotations

from gradacc_lessons.demos.distributed.arithmetic import (
    DDPConfig,
    accumulation_steps_for,
    effective_batch,
    make_data,
    make_model,
    make_token_data,
    rank_micro_batches,
    sampler_shares,
    token_mean_gradients,
    train_full_batch,
)
from gradacc_lessons.demos.distributed.launch import DDPResult, run_ddp, run_processes
from gradacc_lessons.demos.distributed.sharded import (
    FSDPWindow,
    ShardedClipping,
    run_fsdp_window,
    run_sharded_clipping,
)
from gradacc_lessons.demos.distributed.sharded_precision import (
    ShardedAccumulation,
    exact_window_gradient,
    run_sharded_accumulation,
)
from gradacc_lessons.demos.distributed.workers import (
    COLLECTIVES,
    STEPS,
    SYNC_MODES,
    AllReduceCounter,
    always_sync_step,
    backward_only_no_sync_step,
    batchnorm_gradients,
    counting_allreduce_hook,
    counting_collectives,
    flag_step,
    fsdp_collectives,
    global_token_count,
    micro_batch_step,
    no_sync_step,
    run_experiments,
    time_sync_modes,
    token_gradients,
    train_ddp,
    unequal_micro_batches,
)

__all__ = [
    "AllReduceCounter",
    "COLLECTIVES",
    "DDPConfig",
    "DDPResult",
    "FSDPWindow",
    "STEPS",
    "ShardedAccumulation",
    "ShardedClipping",
    "SYNC_MODES",
    "accumulation_steps_for",
    "always_sync_step",
    "backward_only_no_sync_step",
    "batchnorm_gradients",
    "counting_allreduce_hook",
    "counting_collectives",
    "effective_batch",
    "exact_window_gradient",
    "flag_step",
    "fsdp_collectives",
    "global_token_count",
    "make_data",
    "make_model",
    "make_token_data",
    "micro_batch_step",
    "no_sync_step",
    "rank_micro_batches",
    "run_ddp",
    "run_experiments",
    "run_fsdp_window",
    "run_processes",
    "run_sharded_accumulation",
    "run_sharded_clipping",
    "sampler_shares",
    "time_sync_modes",
    "token_gradients",
    "token_mean_gradients",
    "train_ddp",
    "train_full_batch",
    "unequal_micro_batches",
]
