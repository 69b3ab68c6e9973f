"""Fixtures for every test, the package's doctests included."""

import pytest
import torch


@pytest.fixture(autouse=True)
def _repeatable():
    # 1 vs 2 threads changes float32 CNN gradients by up to 4e-7, and one thread is faster
    # for the course's tiny models: fix it, and the seed.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    yield
    torch.set_num_threads(threads)
