"""Where accumulation stops being exact: BatchNorm (and Dropout), measured.

Train-mode BatchNorm normalises each micro-batch with that micro-batch's own mean
and variance, so N micro-batches compute a different function than one batch:
no loss scaling can repair that. LayerNorm and GroupNorm normalise each sample
on its own and stay exact; so does BatchNorm in eval mode (fixed statistics).

One module per idea: `gradients` (the gradient errors, the fixes, the forward pass),
`running_stats` (N momentum updates per window, and the compensating momentum),
`single_sample` (a micro-batch of one sample), `replicas` (N devices with plain BatchNorm
or SyncBatchNorm). Every public name is re-exported here.
"""

from __future__ import annotations

from gradacc_lessons.demos.batchnorm.gradients import (
    KINDS,
    FixErrors,
    NormErrors,
    biases_before_batchnorm,
    compute_batchnorm_errors,
    compute_fixes,
    digits_problem,
    forward_difference,
    gradient_error,
)
from gradacc_lessons.demos.batchnorm.replicas import ReplicaErrors, replicas_vs_accumulation
from gradacc_lessons.demos.batchnorm.running_stats import (
    BATCHNORMS,
    RunningStats,
    compensating_momentum,
    compute_running_stats,
    running_stats_error,
    set_batchnorm_momentum,
)
from gradacc_lessons.demos.batchnorm.single_sample import (
    SingleSampleFacts,
    single_sample_error,
    single_sample_facts,
)

__all__ = [
    "BATCHNORMS",
    "KINDS",
    "FixErrors",
    "NormErrors",
    "ReplicaErrors",
    "RunningStats",
    "SingleSampleFacts",
    "biases_before_batchnorm",
    "compensating_momentum",
    "compute_batchnorm_errors",
    "compute_fixes",
    "compute_running_stats",
    "digits_problem",
    "forward_difference",
    "gradient_error",
    "replicas_vs_accumulation",
    "running_stats_error",
    "set_batchnorm_momentum",
    "single_sample_error",
    "single_sample_facts",
]
