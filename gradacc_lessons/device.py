"""Where to run, and how to make a lesson's numbers repeat.

`make_repeatable` is the course's one function that changes global state on purpose
(seeds and the CPU thread count). Every other function leaves torch's random stream as
it found it: where a demo needs its own random numbers it draws them `seeded`.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator

import numpy as np
import torch

from gradacc_lessons.checks import as_count


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
    seed = as_count("seed", seed, minimum=0)
    threads = as_count("threads", threads, fix="1 makes the numbers repeat exactly")
    random.seed(seed)
    np.random.seed(seed)
    if pick_device().type == "cpu":
        # what torch.manual_seed does here, without queueing seeds for the absent CUDA,
        # XPU and MTIA devices (each recording the caller's stack: 3 ms a call in a test)
        torch.random.default_generator.manual_seed(seed)
    else:
        torch.manual_seed(seed)  # also seeds every CUDA device
    torch.set_num_threads(threads)


@contextlib.contextmanager
def seeded(seed: int) -> Iterator[None]:
    """Run the block with torch's CPU random stream seeded to `seed`, then restore the stream.

    A demo builds its model (`nn.Linear` draws its weights from the stream) and draws its
    random numbers inside; the student's own random stream continues afterwards as if the
    demo had not run.

    >>> before = torch.random.get_rng_state()
    >>> with seeded(3):
    ...     a = torch.rand(1)
    >>> with seeded(3):
    ...     bool(a == torch.rand(1))
    True
    >>> torch.equal(before, torch.random.get_rng_state())
    True
    """
    seed = as_count("seed", seed, minimum=0)
    with torch.random.fork_rng(devices=[]):  # the CPU stream; the course's demos run there
        torch.random.default_generator.manual_seed(seed)
        yield
