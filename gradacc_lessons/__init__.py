"""gradacc_lessons: the support package of the gradacc course on gradient accumulation.

Every number and plot in the lessons is computed by these functions; the tests
check them against independent computations. The names below are the ones a
student calls most; every module (one idea each) has more, imported from it directly:
`from gradacc_lessons.batchnorm import compute_batchnorm_errors`.
"""

from gradacc_lessons.accumulate import (
    Event,
    accumulated_gradients,
    count_tokens,
    full_batch_gradients,
    split_batch,
    train_accumulated,
)
from gradacc_lessons.compare import (
    Comparison,
    accumulation_errors,
    compare_gradients,
    parameters_of,
)
from gradacc_lessons.data import load_digits, make_classification
from gradacc_lessons.device import pick_device, seed_everything
from gradacc_lessons.memory import (
    MemoryReport,
    estimate_training_memory,
    measure_training_memory,
)
from gradacc_lessons.models import MLP, SmallCNN
from gradacc_lessons.planner import AccumulationPlan, plan_accumulation
from gradacc_lessons.questions import Question, faq_questions, questions_for
from gradacc_lessons.sequences import TinySequenceModel, make_sequences, token_loss
from gradacc_lessons.timing import time_effective_batch

__all__ = [
    "MLP",
    "AccumulationPlan",
    "Comparison",
    "Event",
    "MemoryReport",
    "Question",
    "SmallCNN",
    "TinySequenceModel",
    "accumulated_gradients",
    "accumulation_errors",
    "compare_gradients",
    "count_tokens",
    "estimate_training_memory",
    "faq_questions",
    "full_batch_gradients",
    "load_digits",
    "make_classification",
    "make_sequences",
    "measure_training_memory",
    "parameters_of",
    "pick_device",
    "plan_accumulation",
    "questions_for",
    "seed_everything",
    "split_batch",
    "time_effective_batch",
    "token_loss",
    "train_accumulated",
]
