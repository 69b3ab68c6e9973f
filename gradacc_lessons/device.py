"""Where to run, and how to make a run repeatable."""

from __future__ import annotations

import random

import numpy as np
import torch


def pick_device() -> torch.device:
    """The best device here: a CUDA GPU when there is one, else Apple's MPS, else the CPU.

    >>> pick_device().type in {"cuda", "mps", "cpu"}
    True
    """
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def seed_everything(seed: int = 0) -> None:
    """Seed Python, NumPy and torch so that a notebook run twice prints the same numbers.

    >>> seed_everything(1); a = torch.rand(1)
    >>> seed_everything(1); bool(a == torch.rand(1))
    True
    """
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device
