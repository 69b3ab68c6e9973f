"""Small datasets: one that ships with scikit-learn, and generated ones. Nothing downloads."""

from __future__ import annotations

import torch


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
    from sklearn.datasets import load_digits as sklearn_digits

    digits = sklearn_digits()  # ships inside scikit-learn's wheel
    x = torch.tensor(digits.data, dtype=dtype) / 16.0
    y = torch.tensor(digits.target, dtype=torch.long)
    return (x.reshape(-1, 1, 8, 8) if images else x), y


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
    generator = torch.Generator().manual_seed(seed)
    centers = 2 * torch.randn(classes, features, generator=generator, dtype=dtype)
    y = torch.randint(classes, (samples,), generator=generator)
    x = centers[y] + torch.randn(samples, features, generator=generator, dtype=dtype)
    return x, y
