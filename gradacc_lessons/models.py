"""Tiny models: an MLP and a CNN with a pluggable normalisation layer, a sequence model.

Like every torch layer, a model draws its first weights from torch's random stream:
`make_repeatable(seed)` before building it gives the same weights on every run.
"""

from __future__ import annotations

import torch
from torch import nn

from gradacc_lessons.checks import as_count

NORMS = ("none", "batch", "layer", "group")


def _norm_1d(norm: str, width: int) -> nn.Module:
    layers = {
        "none": nn.Identity,
        "batch": lambda: nn.BatchNorm1d(width),
        "layer": lambda: nn.LayerNorm(width),
        "group": lambda: nn.GroupNorm(_groups(width), width),
    }
    return layers[_check_norm(norm)]()


def _norm_2d(norm: str, channels: int) -> nn.Module:
    layers = {
        "none": nn.Identity,
        "batch": lambda: nn.BatchNorm2d(channels),
        # LayerNorm over (C, H, W) of each sample is GroupNorm with a single group.
        "layer": lambda: nn.GroupNorm(1, channels),
        "group": lambda: nn.GroupNorm(_groups(channels), channels),
    }
    return layers[_check_norm(norm)]()


def _groups(width: int) -> int:
    return 4 if width % 4 == 0 else 1


def _check_norm(norm: str) -> str:
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
    return norm


class MLP(nn.Sequential):
    """A two-hidden-layer perceptron: Linear -> norm -> ReLU, twice, then Linear.

    >>> import torch
    >>> MLP(64, 10, norm="layer")(torch.zeros(5, 64)).shape
    torch.Size([5, 10])
    """

    def __init__(self, in_features: int, classes: int, hidden: int = 64, norm: str = "none"):
        in_features, classes = as_count("in_features", in_features), as_count("classes", classes)
        hidden = as_count("hidden", hidden)
        super().__init__(
            nn.Linear(in_features, hidden),
            _norm_1d(norm, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            _norm_1d(norm, hidden),
            nn.ReLU(),
            nn.Linear(hidden, classes),
        )


class SmallCNN(nn.Sequential):
    """Two convolutions with normalisation, then a linear classifier; for 1-channel images.

    >>> SmallCNN(10, norm="group")(torch.zeros(5, 1, 8, 8)).shape
    torch.Size([5, 10])
    """

    def __init__(self, classes: int, channels: int = 8, norm: str = "none", in_channels: int = 1):
        classes, channels = as_count("classes", classes), as_count("channels", channels)
        in_channels = as_count("in_channels", in_channels)
        super().__init__(
            nn.Conv2d(in_channels, channels, 3, padding=1),
            _norm_2d(norm, channels),
            nn.ReLU(),
            nn.Conv2d(channels, 2 * channels, 3, padding=1, stride=2),
            _norm_2d(norm, 2 * channels),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(2),
            nn.Flatten(),
            nn.Linear(8 * channels, classes),
        )


class TinySequenceModel(nn.Module):
    """Embedding -> one-layer GRU -> linear head: logits of shape (batch, length, vocab).

    >>> TinySequenceModel(vocab=12)(torch.zeros(2, 5, dtype=torch.long)).shape
    torch.Size([2, 5, 12])
    """

    def __init__(self, vocab: int = 12, dim: int = 16):
        vocab, dim = as_count("vocab", vocab, minimum=2), as_count("dim", dim)
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.gru = nn.GRU(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        hidden, _ = self.gru(self.embed(tokens))
        return self.head(hidden)
