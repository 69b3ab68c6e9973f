"""Shared fixtures: fixed threads and seeds, and a notebook runner."""

from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"


@pytest.fixture(autouse=True)
def _repeatable():
    # 1 vs 2 threads changes float32 CNN gradients by up to 4e-7: fix it.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    yield
    torch.set_num_threads(threads)
