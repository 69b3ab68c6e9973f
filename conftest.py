"""Fixtures for every test, the package's doctests included."""

import pytest
import torch

from gradacc_lessons.device import make_repeatable


@pytest.fixture(autouse=True)
def _repeatable():
    # What every lesson does first (the course's one place for seeds and threads): 1 vs 2
    # threads changes float32 CNN gradients by up to 4e-7. The thread count is put back.
    threads = torch.get_num_threads()
    make_repeatable(seed=0)
    yield
    torch.set_num_threads(threads)
