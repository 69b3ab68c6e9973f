"""Importing the frameworks of lesson 7, and leaving the process as it was.

The frameworks are an optional extra, imported only inside the functions that use them.
A run hides their log chatter and restores the global random generators, the thread count,
the environment and their log levels.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import logging
import os
import random
import warnings

import numpy as np
import torch

FRAMEWORKS = ("transformers", "accelerate", "lightning")
LOGGERS = ("transformers", "accelerate", "lightning.pytorch", "lightning.fabric")


# --- leaving the process as it was --------------------------------------------------------


def versions() -> str:
    """The versions of torch and of the three frameworks this lesson runs.

    >>> versions().startswith("torch ")
    True
    """
    with _quiet_and_restored(*FRAMEWORKS) as modules:
        found = [f"{module.__name__} {module.__version__}" for module in modules]
    return ", ".join([f"torch {torch.__version__}", *found])


def _framework(name):
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise ImportError(
            f"lesson 7 needs {name}: pip install 'gradacc-lessons[frameworks]' "
            f"(or `make lab`), with Python 3.11 or newer"
        ) from error


@contextlib.contextmanager
def _quiet_and_restored(*names):
    """Import the named frameworks, hide their chatter, and restore what they change.

    Importing Lightning draws from Python's random generator and sets an environment
    variable; the Trainer seeds every global generator. The Trainer also ends with a full
    garbage collection, which walks every object the frameworks created on import (most
    of a second here): frozen objects are skipped.
    """
    generators = random.getstate(), np.random.get_state(), torch.random.get_rng_state()
    gpus = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None
    threads, environment = torch.get_num_threads(), dict(os.environ)
    gc.freeze()
    try:
        modules = [_framework(name) for name in names]
        loggers = [logging.getLogger(name) for name in LOGGERS]  # after the imports set them
        levels = [logger.level for logger in loggers]
        for logger in loggers:
            logger.setLevel(logging.ERROR)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                yield modules
        finally:
            for logger, level in zip(loggers, levels):
                logger.setLevel(level)
    finally:
        gc.unfreeze()
        random.setstate(generators[0])
        np.random.set_state(generators[1])
        torch.random.set_rng_state(generators[2])
        if gpus is not None:  # the Trainer seeds the GPUs' generators too
            torch.cuda.set_rng_state_all(gpus)
        torch.set_num_threads(threads)
        os.environ.clear()
        os.environ.update(environment)
