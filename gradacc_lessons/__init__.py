"""gradacc_lessons: the support package of the gradacc course on gradient accumulation.

Every number and plot in the lessons is computed by these functions; the tests
check them against independent computations.
"""

from gradacc_lessons.accumulate import (
    Event,
    accumulated_gradients,
    full_batch_gradients,
    split_batch,
    train_accumulated,
)
from gradacc_lessons.compare import Comparison, compare_gradients, parameters_of
from gradacc_lessons.data import load_digits, make_classification
from gradacc_lessons.device import pick_device, seed_everything
from gradacc_lessons.models import MLP, SmallCNN

__all__ = [
    "MLP",
    "Comparison",
    "Event",
    "SmallCNN",
    "accumulated_gradients",
    "compare_gradients",
    "full_batch_gradients",
    "load_digits",
    "make_classification",
    "parameters_of",
    "pick_device",
    "seed_everything",
    "split_batch",
    "train_accumulated",
]
