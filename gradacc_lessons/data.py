"""Small datasets: one that ships with scikit-learn, and generated ones. Nothing downloads."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import torch

from gradacc_lessons.accumulate import IGNORE_INDEX
from gradacc_lessons.checks import as_count, as_fraction

PAD = 0  # the padding token of the inputs; the targets are padded with IGNORE_INDEX


def load_digits(
    images: bool = False, dtype: torch.dtype = torch.float32
) -> tuple[torch.Tensor, torch.Tensor]:
    """scikit-learn's 1,797 handwritten 8x8 digits, scaled to [0, 1], with their labels.

    With images=False the inputs are flat vectors of 64 pixels; with images=True
    they have the shape (samples, 1, 8, 8) that a convolution expects.

    >>> x, y = load_digits()
    >>> tuple(x.shape), tuple(y.shape), int(y.max())
    ((1797, 64), (1797,), 9)
    """
    _check_dtype(dtype)
    pixels, labels = _digits()
    x = torch.tensor(pixels, dtype=dtype) / 16.0
    y = torch.tensor(labels, dtype=torch.long)
    return (x.reshape(-1, 1, 8, 8) if images else x), y


@functools.cache
def _digits():
    """The digits' pixels and labels, read once per process from the file scikit-learn ships.

    `sklearn.datasets.load_digits` reads the same file, `sklearn/datasets/data/digits.csv.gz`
    (64 pixel columns, then the label; scikit-learn 1.x), but importing scikit-learn takes 2 s
    here, paid by every lesson and test process; reading the file takes 30 ms.
    tests/test_data.py checks that both give the same digits.
    """
    import numpy as np

    spec = importlib.util.find_spec("sklearn")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("the digits ship with scikit-learn: pip install scikit-learn")
    path = Path(spec.submodule_search_locations[0]) / "datasets" / "data" / "digits.csv.gz"
    if not path.is_file():  # a scikit-learn that keeps its digits elsewhere
        raise FileNotFoundError(f"no {path}: install a scikit-learn 1.x, which ships it")
    table = np.loadtxt(path, delimiter=",")
    pixels, labels = table[:, :-1], table[:, -1].astype(np.int64)
    pixels.flags.writeable = labels.flags.writeable = False
    return pixels, labels


def make_classification(
    samples: int = 256,
    features: int = 20,
    classes: int = 4,
    seed: int = 0,
    dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Gaussian blobs, one per class: a quick synthetic classification problem.

    >>> x, y = make_classification(samples=10, features=3, classes=2)
    >>> tuple(x.shape), tuple(y.shape)
    ((10, 3), (10,))
    """
    samples, features = as_count("samples", samples), as_count("features", features)
    classes, seed = as_count("classes", classes), as_count("seed", seed, minimum=0)
    _check_dtype(dtype)
    generator = torch.Generator().manual_seed(seed)
    centers = 2 * torch.randn(classes, features, generator=generator, dtype=dtype)
    y = torch.randint(classes, (samples,), generator=generator)
    x = centers[y] + torch.randn(samples, features, generator=generator, dtype=dtype)
    return x, y


def make_lengths(
    samples: int, mean_length: int, spread: float, seed: int = 0, sort: bool = False
) -> torch.Tensor:
    """Sequence lengths spread uniformly over mean_length * (1 ± spread), at least 1.

    spread=0 gives sequences of the same length; spread=1 lengths from 1 to 2 * mean_length.

    >>> make_lengths(4, 10, spread=0.0).tolist()
    [10, 10, 10, 10]
    """
    samples, seed = as_count("samples", samples), as_count("seed", seed, minimum=0)
    spread = as_fraction("spread", spread, "a fraction of mean_length")
    mean_length = as_count("mean_length", mean_length)
    generator = torch.Generator().manual_seed(seed)
    u = 2 * torch.rand(samples, generator=generator, dtype=torch.float64) - 1
    lengths = torch.round(mean_length * (1 + spread * u)).long().clamp(min=1)
    return lengths.sort().values if sort else lengths


def make_sequences(
    lengths: torch.Tensor, vocab: int = 12, seed: int = 0, ignore_index: int = IGNORE_INDEX
) -> tuple[torch.Tensor, torch.Tensor]:
    """Random token sequences of the given lengths, padded to the longest; with their targets.

    The task: at each position, predict the running sum of the tokens so far, modulo
    `vocab` (a recurrent model can learn it). Inputs are padded with PAD, targets
    with `ignore_index`.

    >>> x, y = make_sequences(torch.tensor([3, 1]))
    >>> x.shape, (y == -100).sum().item()
    (torch.Size([2, 3]), 2)
    """
    vocab = as_count("vocab", vocab, minimum=2, fix="token 0 is the padding")
    seed = as_count("seed", seed, minimum=0)
    as_count("ignore_index", ignore_index, minimum=-(2**63))
    if (
        not isinstance(lengths, torch.Tensor)
        or lengths.dim() != 1
        or len(lengths) == 0
        or lengths.is_floating_point()
        or bool((lengths < 1).any())
    ):
        raise ValueError(
            f"lengths must be a 1-d integer tensor of lengths of at least 1, such as "
            f"make_lengths returns, got {lengths!r}"
        )
    generator = torch.Generator().manual_seed(seed)
    longest = int(lengths.max())
    tokens = torch.randint(1, vocab, (len(lengths), longest), generator=generator)
    real = torch.arange(longest) < lengths[:, None]
    inputs = torch.where(real, tokens, torch.full_like(tokens, PAD))
    targets = torch.where(real, inputs.cumsum(dim=1) % vocab, torch.full_like(tokens, ignore_index))
    return inputs, targets


def _check_dtype(dtype) -> None:
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise ValueError(f"dtype must be a floating-point torch dtype, got {dtype!r}")
