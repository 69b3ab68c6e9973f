"""N devices with plain BatchNorm, or SyncBatchNorm, against accumulation on one device."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch.nn.functional as F

from gradacc_lessons.accumulate import accumulated_gradients, full_batch_gradients, split_batch
from gradacc_lessons.checks import as_count
from gradacc_lessons.compare import relative_error
from gradacc_lessons.demos.batchnorm.gradients import biases_before_batchnorm, digits_problem
from gradacc_lessons.display import Result, Table


@dataclass(frozen=True, repr=False)
class ReplicaErrors(Result):
    """The gradient of `replicas` micro-batches accumulated on one device, against N devices
    with plain BatchNorm and against one batch (SyncBatchNorm): relative errors, float64."""

    replicas: int
    micro_batch_size: int
    plain_batchnorm: float  # against N devices with plain BatchNorm, gradients averaged
    sync_batchnorm: float  # against one batch of all the samples (SyncBatchNorm)

    def table(self) -> Table:
        rows = [
            ("devices with plain BatchNorm", f"{self.plain_batchnorm:.1e}"),
            ("one batch (SyncBatchNorm)", f"{self.sync_batchnorm:.1e}"),
        ]
        title = (
            f"{self.replicas} micro-batches of {self.micro_batch_size} accumulated, "
            "relative error against"
        )
        return Table(("reference", "relative error"), rows, title)


def replicas_vs_accumulation(
    replicas: int = 8, micro_batch_size: int = 32, kind: str = "mlp"
) -> ReplicaErrors:
    """N devices with plain BatchNorm against one device accumulating the same N micro-batches.

    Under DDP each device normalises its own micro-batch with plain BatchNorm, and the
    devices' gradients are averaged; accumulating the same micro-batches on one device
    computes exactly that. SyncBatchNorm instead normalises with all devices' samples
    together: the full batch. Returns the relative error of the accumulated gradient
    against each (float64, biases feeding a BatchNorm left out).

    >>> errors = replicas_vs_accumulation(replicas=2, micro_batch_size=8)
    >>> errors.plain_batchnorm < 1e-12 < errors.sync_batchnorm
    True
    """
    replicas = as_count("replicas", replicas)
    micro_batch_size = as_count(
        "micro_batch_size", micro_batch_size, minimum=2, fix="BatchNorm needs two samples"
    )
    model, x, y = digits_problem(kind, "batch", replicas * micro_batch_size)
    accumulated = accumulated_gradients(model, F.cross_entropy, x, y, replicas)
    per_device = [
        full_batch_gradients(copy.deepcopy(model), F.cross_entropy, xb, yb)
        for xb, yb in split_batch(x, y, replicas)
    ]
    averaged = {name: sum(g[name] for g in per_device) / replicas for name in accumulated}
    full = full_batch_gradients(model, F.cross_entropy, x, y)
    for name in biases_before_batchnorm(model):
        for gradients in (accumulated, averaged, full):
            del gradients[name]
    return ReplicaErrors(
        replicas,
        micro_batch_size,
        relative_error(averaged, accumulated),
        relative_error(full, accumulated),
    )
