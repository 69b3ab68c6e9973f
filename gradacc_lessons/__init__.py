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

import importlib

# Imported when first used (PEP 562): `gradacc-plan --help` and its argument errors answer
# before torch loads; `from gradacc_lessons import train_accumulated` works as always.
_HOMES = {
    "Event": "gradacc_lessons.accumulate",
    "IGNORE_INDEX": "gradacc_lessons.accumulate",
    "accumulated_gradients": "gradacc_lessons.accumulate",
    "count_tokens": "gradacc_lessons.accumulate",
    "full_batch_gradients": "gradacc_lessons.accumulate",
    "split_batch": "gradacc_lessons.accumulate",
    "token_loss": "gradacc_lessons.accumulate",
    "train_accumulated": "gradacc_lessons.accumulate",
    "Comparison": "gradacc_lessons.compare",
    "accumulation_errors": "gradacc_lessons.compare",
    "compare_tensors": "gradacc_lessons.compare",
    "parameters_of": "gradacc_lessons.compare",
    "relative_error": "gradacc_lessons.compare",
    "load_digits": "gradacc_lessons.data",
    "make_classification": "gradacc_lessons.data",
    "make_sequences": "gradacc_lessons.data",
    "make_repeatable": "gradacc_lessons.device",
    "pick_device": "gradacc_lessons.device",
    "MemoryReport": "gradacc_lessons.memory",
    "estimate_training_memory": "gradacc_lessons.memory",
    "measure_training_memory": "gradacc_lessons.memory",
    "MLP": "gradacc_lessons.models",
    "SmallCNN": "gradacc_lessons.models",
    "TinySequenceModel": "gradacc_lessons.models",
    "AccumulationPlan": "gradacc_lessons.planner",
    "plan_accumulation": "gradacc_lessons.planner",
    "time_effective_batch": "gradacc_lessons.timing",
}


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


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'gradacc_lessons' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
