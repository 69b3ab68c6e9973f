"""gradacc_lessons: the support package of the gradacc course on gradient accumulation.

Every number and plot in the lessons is computed by these functions; the tests
check them against independent computations. Where things live:

- the core, at the top: `accumulate` (split, gradients, the training loop), `compare`
  (the one error metric), `data`, `models`, `device`, `memory`, `planner`, `timing`,
  `precision`, `display`;
- `demos`: what one lesson demonstrates (the printed loops, the pitfalls' damage,
  BatchNorm, dropout, training curves, checkpointing, sharding, DDP);
- `figures`: every plot (`figures.plots`) and every interactive explorer (`figures.explorers`);
- `quiz`: the self-check question bank and the self-check widgets.

The names below are the ones a student calls most; the rest are imported from their
module: `from gradacc_lessons.demos.batchnorm import compute_batchnorm_errors`.
"""

from gradacc_lessons.accumulate import (
    IGNORE_INDEX,
    Event,
    accumulated_gradients,
    count_tokens,
    full_batch_gradients,
    split_batch,
    token_loss,
    train_accumulated,
)
from gradacc_lessons.compare import (
    Comparison,
    accumulation_errors,
    compare_tensors,
    parameters_of,
    relative_error,
)
from gradacc_lessons.data import load_digits, make_classification, make_sequences
from gradacc_lessons.device import make_repeatable, pick_device
from gradacc_lessons.memory import (
    MemoryReport,
    estimate_training_memory,
    measure_training_memory,
)
from gradacc_lessons.models import MLP, SmallCNN, TinySequenceModel
from gradacc_lessons.planner import AccumulationPlan, plan_accumulation
from gradacc_lessons.timing import time_effective_batch

__all__ = [
    "IGNORE_INDEX",
    "MLP",
    "AccumulationPlan",
    "Comparison",
    "Event",
    "MemoryReport",
    "SmallCNN",
    "TinySequenceModel",
    "accumulated_gradients",
    "accumulation_errors",
    "compare_tensors",
    "count_tokens",
    "estimate_training_memory",
    "full_batch_gradients",
    "load_digits",
    "make_classification",
    "make_repeatable",
    "make_sequences",
    "measure_training_memory",
    "parameters_of",
    "pick_device",
    "plan_accumulation",
    "relative_error",
    "split_batch",
    "time_effective_batch",
    "token_loss",
    "train_accumulated",
]
