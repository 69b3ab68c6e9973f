"""Where to run, and how to make a lesson's numbers repeat."""

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


def make_repeatable(seed: int = 0, threads: int = 1) -> None:
    """Make every number of a lesson repeat: seed Python, NumPy and torch; fix the CPU threads.

    This is the course's one place that changes global state on purpose; every lesson
    calls it in its setup cell. One thread, because the order in which threads add up
    a sum changes its last bits (1 vs 2 threads moved a CNN's float32 gradients by up
    to 4e-7), and because the course's tiny models run fastest on one thread anyway.
    Times still vary from run to run: the machine does other work too.

    >>> make_repeatable(1); a = torch.rand(1)
    >>> make_repeatable(1); bool(a == torch.rand(1)), torch.get_num_threads()
    (True, 1)
    """
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device
    torch.set_num_threads(threads)
