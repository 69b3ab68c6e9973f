"""Lesson 7: accumulation in Transformers' Trainer, Accelerate and Lightning, measured.

One tiny causal language model, built from a `transformers` config, learns the Zen of
Python character by character. Each way of training (`WAYS`) trains a copy of it on the
same micro-batches, in order, with plain SGD, and returns a `Run`: the parameters it
ends with and what it logged on the way. The truth every way is measured against is
`train_full_batch`: each window as one batch, in float64. `measure` does both and
shows the table.

The frameworks are an optional extra (`pip install "gradacc-lessons[frameworks]"`,
Python >= 3.11). They are imported inside the functions that use them, so the rest of
the course works without them. A run leaves the process as it found it: the global
random generators, the thread count, the environment and the frameworks' log levels
are restored, and nothing is written outside a temporary folder.

The lesson is cut at its seams, one module per idea: `tiny_lm` (the text and the model),
`recipe` (what every way is given and returns), `runs` (the ways of training and `measure`),
`tables` (what the lesson shows), `two_processes` (Accelerate on two gloo processes) and
`process` (importing the frameworks, leaving the process as it was). Every public name is
re-exported here: `frameworks.measure(...)`.
"""

from __future__ import annotations

from gradacc_lessons.demos.frameworks.process import FRAMEWORKS, LOGGERS, versions
from gradacc_lessons.demos.frameworks.recipe import SCHEDULES, Recipe, Run
from gradacc_lessons.demos.frameworks.runs import (
    FOUR_WAYS,
    WAYS,
    Measurement,
    measure,
    train_accelerate,
    train_course,
    train_full_batch,
    train_hf_trainer,
    train_lightning,
    train_textbook,
)
from gradacc_lessons.demos.frameworks.tables import (
    DEFAULTS,
    framework_defaults,
    logged_loss_table,
    schedule_table,
    token_count_table,
)
from gradacc_lessons.demos.frameworks.tiny_lm import (
    KINDS,
    causal_loss,
    describe,
    encode,
    make_chunks,
    make_padded_lines,
    make_vocabulary,
    next_token_targets,
    tiny_causal_lm,
    zen_of_python,
)
from gradacc_lessons.demos.frameworks.two_processes import (
    SETUPS,
    AccelerateProcesses,
    run_accelerate_processes,
)
from gradacc_lessons.display import Table

__all__ = [
    "AccelerateProcesses",
    "DEFAULTS",
    "FOUR_WAYS",
    "FRAMEWORKS",
    "KINDS",
    "LOGGERS",
    "Measurement",
    "Recipe",
    "Run",
    "SCHEDULES",
    "SETUPS",
    "Table",
    "WAYS",
    "causal_loss",
    "describe",
    "encode",
    "framework_defaults",
    "logged_loss_table",
    "make_chunks",
    "make_padded_lines",
    "make_vocabulary",
    "measure",
    "next_token_targets",
    "run_accelerate_processes",
    "schedule_table",
    "tiny_causal_lm",
    "token_count_table",
    "train_accelerate",
    "train_course",
    "train_full_batch",
    "train_hf_trainer",
    "train_lightning",
    "train_textbook",
    "versions",
    "zen_of_python",
]
