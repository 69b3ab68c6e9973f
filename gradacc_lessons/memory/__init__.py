"""Peak memory of training: measured on any device, and the analytic model beside it.

One module per idea: `measured` (the peak of one step and its four parts: parameters,
gradients, optimizer state, activations), `instruments` (how the peak and the saved
activations are read), `analytic` (the same parts computed from the model and the
optimizer, and the temporaries), `phases` (the peak of each phase of a step). Every public
name is re-exported here: `from gradacc_lessons.memory import ...`.
"""

from __future__ import annotations

from gradacc_lessons.memory.analytic import (
    RECIPES,
    estimate_temporaries,
    estimate_training_memory,
    floor_for,
    memory_by_micro_batch_size,
    optimizer_state_multiplier,
    transformer_activation_bytes,
)
from gradacc_lessons.memory.instruments import CPU_METHOD, CUDA_METHOD, peak_bytes_of
from gradacc_lessons.memory.measured import (
    ANALYTIC_METHOD,
    GB,
    LABELS,
    PARTS,
    GiB,
    MemoryReport,
    MiB,
    activation_bytes_per_sample,
    format_bytes,
    measure_training_memory,
    memory_by_accumulation_steps,
    optimizer_state_bytes,
    repeat_samples,
)
from gradacc_lessons.memory.phases import Phase, measure_phase_peaks

__all__ = [
    "ANALYTIC_METHOD",
    "CPU_METHOD",
    "CUDA_METHOD",
    "GB",
    "GiB",
    "LABELS",
    "MemoryReport",
    "MiB",
    "PARTS",
    "Phase",
    "RECIPES",
    "activation_bytes_per_sample",
    "estimate_temporaries",
    "estimate_training_memory",
    "floor_for",
    "format_bytes",
    "measure_phase_peaks",
    "measure_training_memory",
    "memory_by_accumulation_steps",
    "memory_by_micro_batch_size",
    "optimizer_state_bytes",
    "peak_bytes_of",
    "optimizer_state_multiplier",
    "repeat_samples",
    "transformer_activation_bytes",
]
