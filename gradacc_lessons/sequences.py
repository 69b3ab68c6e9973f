"""Variable-length token sequences with padding, and a tiny sequence model; nothing downloads.

The targets of padded positions hold `ignore_index` (-100, PyTorch's default),
so a cross-entropy loss averages over the real tokens only. That average is
what goes wrong when micro-batches hold different numbers of real tokens.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from gradacc_lessons.accumulate import accumulated_gradients, count_tokens, full_batch_gradients
from gradacc_lessons.compare import compare_gradients

PAD = 0  # the padding token of the inputs; the targets are padded with ignore_index
IGNORE_INDEX = -100


def make_lengths(
    samples: int, mean_length: int, spread: float, seed: int = 0, sort: bool = False
) -> torch.Tensor:
    """Sequence lengths spread uniformly over mean_length * (1 ± spread), at least 1.

    spread=0 gives sequences of the same length; spread=1 lengths from 1 to 2 * mean_length.

    >>> make_lengths(4, 10, spread=0.0).tolist()
    [10, 10, 10, 10]
    """
    if not 0.0 <= spread <= 1.0:
        raise ValueError(
            f"spread must be between 0 and 1 (a fraction of mean_length), got {spread}"
        )
    if not isinstance(mean_length, int) or mean_length < 1:
        raise ValueError(f"mean_length must be a positive integer, got {mean_length!r}")
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
    if vocab < 2:
        raise ValueError(f"vocab must be at least 2 (token 0 is the padding), got {vocab}")
    generator = torch.Generator().manual_seed(seed)
    longest = int(lengths.max())
    tokens = torch.randint(1, vocab, (len(lengths), longest), generator=generator)
    real = torch.arange(longest) < lengths[:, None]
    inputs = torch.where(real, tokens, torch.full_like(tokens, PAD))
    targets = torch.where(real, inputs.cumsum(dim=1) % vocab, torch.full_like(tokens, ignore_index))
    return inputs, targets


class TinySequenceModel(nn.Module):
    """Embedding -> one-layer GRU -> linear head: logits of shape (batch, length, vocab).

    >>> TinySequenceModel(vocab=12)(torch.zeros(2, 5, dtype=torch.long)).shape
    torch.Size([2, 5, 12])
    """

    def __init__(self, vocab: int = 12, dim: int = 16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.gru = nn.GRU(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        hidden, _ = self.gru(self.embed(tokens))
        return self.head(hidden)


def token_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Cross-entropy averaged over the real (not ignore_index) tokens of the batch.

    >>> token_loss(torch.zeros(1, 2, 4), torch.tensor([[1, -100]])).item() == torch.log(
    ...     torch.tensor(4.0)).item()
    True
    """
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE_INDEX)


def l2_error(reference: dict, other: dict) -> float:
    """‖other − reference‖ / ‖reference‖ over all tensors together.

    >>> l2_error({"w": torch.tensor([3.0, 4.0])}, {"w": torch.tensor([3.0, 4.5])})
    0.1
    """
    diff = sum(float(((other[n] - reference[n]) ** 2).sum()) for n in reference)
    norm = sum(float((reference[n] ** 2).sum()) for n in reference)
    return (diff / norm) ** 0.5


def compute_token_errors(
    spread: float,
    micro_batches: int = 4,
    samples: int = 32,
    mean_length: int = 12,
    sort: bool = False,
    seed: int = 0,
) -> dict:
    """L2 relative gradient errors of the buggy and the fixed token normalisation (float64).

    Lengths spread over mean_length * (1 ± spread); see `token_errors_for_lengths`.

    >>> errors = compute_token_errors(spread=0.0)
    >>> errors["buggy"] < 1e-12 and errors["fixed"] < 1e-12
    True
    """
    lengths = make_lengths(samples, mean_length, spread, seed=seed, sort=sort)
    return token_errors_for_lengths(lengths, micro_batches, seed=seed)


def token_errors_for_lengths(lengths: torch.Tensor, micro_batches: int, seed: int = 0) -> dict:
    """Gradient errors on sequences of these lengths, split in order into `micro_batches`.

    "buggy": each micro-batch's token mean divided by the number of micro-batches
    (the 2024 Transformers bug); "fixed": normalize="tokens". Both are compared
    with the full batch's token mean: "buggy" and "fixed" are L2 relative errors,
    "max_rel_fixed" the fixed one's largest difference over the largest gradient.

    >>> errors = token_errors_for_lengths(torch.tensor([1, 1, 8, 8]), micro_batches=2)
    >>> errors["tokens_per_micro_batch"], errors["buggy"] > 0.1, errors["fixed"] < 1e-12
    ([2, 16], True, True)
    """
    inputs, targets = make_sequences(lengths, seed=seed)
    torch.manual_seed(seed)
    model = TinySequenceModel().double()
    full = full_batch_gradients(model, token_loss, inputs, targets)
    buggy = accumulated_gradients(model, token_loss, inputs, targets, micro_batches, "naive")
    fixed = accumulated_gradients(model, token_loss, inputs, targets, micro_batches, "tokens")
    return {
        "buggy": l2_error(full, buggy),
        "fixed": l2_error(full, fixed),
        "max_rel_fixed": compare_gradients(full, fixed).max_rel,
        "tokens_per_micro_batch": [
            count_tokens(y) for y in torch.tensor_split(targets, micro_batches)
        ],
    }
