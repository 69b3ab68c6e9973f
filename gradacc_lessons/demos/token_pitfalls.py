"""The token pitfalls of lesson 2: a token mean divided by N, and what it does to training.

A micro-batch's loss over padded sequences is a mean over its own tokens; dividing it by
the number of micro-batches (the 2024 Transformers bug) weighs each micro-batch alike,
whatever its tokens. `compute_token_errors` measures the gradient error against the full
batch's token mean; `train_two_rule_model` shows what the bug teaches a model when short
and long sequences follow different rules.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from gradacc_lessons.accumulate import (
    IGNORE_INDEX,
    accumulated_gradients,
    count_tokens,
    full_batch_gradients,
    split_batch,
    token_loss,
)
from gradacc_lessons.checks import as_choice, as_count, as_counts, as_fraction
from gradacc_lessons.compare import compare_tensors, relative_error
from gradacc_lessons.data import make_lengths, make_sequences
from gradacc_lessons.device import seeded
from gradacc_lessons.display import Result, Table
from gradacc_lessons.models import TinySequenceModel


@dataclass(frozen=True, repr=False)
class TokenErrors(Result):
    """Gradient errors (float64, against the full batch's token mean) of each micro-batch's
    token mean divided by N (`broken`, the 2024 Transformers bug) and of normalize="tokens"."""

    tokens_per_micro_batch: list[int]  # real (not padding) tokens in each micro-batch
    broken: float  # L2 relative error of the token mean / N
    fixed: float  # L2 relative error of normalize="tokens"
    max_abs_fixed: float  # the fixed gradient's largest absolute difference

    def table(self) -> Table:
        rows = [
            ("token mean / N", f"{self.broken:.1%}"),
            ("normalize='tokens'", f"{self.fixed:.1e}"),
        ]
        title = f"real tokens per micro-batch {self.tokens_per_micro_batch}"
        return Table(("normalisation", "gradient error"), rows, title)


def compute_token_errors(
    spread: float,
    accumulation_steps: int = 4,
    samples: int = 32,
    mean_length: int = 12,
    sort: bool = False,
    seed: int = 0,
) -> TokenErrors:
    """L2 relative gradient errors of the buggy and the fixed token normalisation (float64).

    Lengths spread over mean_length * (1 ± spread); see `token_errors_for_lengths`.

    >>> errors = compute_token_errors(spread=0.0)
    >>> errors.broken < 1e-12 and errors.fixed < 1e-12
    True
    """
    as_fraction("spread", spread)
    as_count("accumulation_steps", accumulation_steps)
    as_count("samples", samples)
    as_count("mean_length", mean_length)
    lengths = make_lengths(samples, mean_length, spread, seed=seed, sort=sort)
    return token_errors_for_lengths(lengths, accumulation_steps, seed=seed)


def token_errors_for_lengths(
    lengths: torch.Tensor, accumulation_steps: int, seed: int = 0
) -> TokenErrors:
    """Gradient errors on sequences of these lengths, split in order into `accumulation_steps`.

    >>> errors = token_errors_for_lengths(torch.tensor([1, 1, 8, 8]), accumulation_steps=2)
    >>> errors.tokens_per_micro_batch, errors.broken > 0.1, errors.fixed < 1e-12
    ([2, 16], True, True)
    """
    as_count("accumulation_steps", accumulation_steps)
    inputs, targets = make_sequences(lengths, seed=seed)
    with seeded(seed):
        model = TinySequenceModel().double()
    full = full_batch_gradients(model, token_loss, inputs, targets)
    buggy = accumulated_gradients(
        model, token_loss, inputs, targets, accumulation_steps, normalize="naive"
    )
    fixed = accumulated_gradients(
        model, token_loss, inputs, targets, accumulation_steps, normalize="tokens"
    )
    return TokenErrors(
        [count_tokens(y) for _, y in split_batch(inputs, targets, accumulation_steps)],
        relative_error(full, buggy),
        relative_error(full, fixed),
        compare_tensors(full, fixed).max_abs,
    )


def make_two_rule_sequences(
    short: int = 48,
    long: int = 16,
    vocab: int = 8,
    lengths: tuple[int, int] = (2, 22),
    seed: int = 0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """`short` short and `long` long sequences, shuffled, whose targets follow two rules.

    In a short sequence the target of a token is the token itself; in a long one, the
    next token value (token mod (vocab - 1) + 1). A model that sees only the current
    token must compromise between the two rules, weighting them by their tokens: like a
    fine-tuning set of many short answers and a few long documents. Token 0 pads.

    >>> x, y = make_two_rule_sequences(short=1, long=1, lengths=(1, 3))
    >>> (y != -100).sum(dim=1).sort().values.tolist()
    [1, 3]
    """
    short, long = as_count("short", short), as_count("long", long)
    vocab = as_count("vocab", vocab, minimum=3, fix="token 0 pads, two rules need two more")
    lengths = as_counts("lengths", lengths)
    if len(lengths) != 2 or lengths[0] >= lengths[1]:
        raise ValueError(f"lengths must be (short, long) with short < long, got {lengths!r}")
    generator = torch.Generator().manual_seed(as_count("seed", seed, minimum=0))
    sizes = torch.tensor([lengths[0]] * short + [lengths[1]] * long)
    sizes = sizes[torch.randperm(len(sizes), generator=generator)]
    tokens = torch.randint(1, vocab, (len(sizes), lengths[1]), generator=generator)
    real = torch.arange(lengths[1]) < sizes[:, None]
    rule = torch.where(sizes[:, None] == lengths[0], tokens, tokens % (vocab - 1) + 1)
    inputs = torch.where(real, tokens, torch.zeros_like(tokens))
    return inputs, torch.where(real, rule, torch.full_like(tokens, IGNORE_INDEX))


@dataclass(frozen=True, repr=False)
class TwoRuleModel(Result):
    """A two-rule model trained to the end: the weight its windows gave to short-sequence
    tokens, and its test loss and accuracy (token means, accuracy as a fraction)."""

    normalize: str
    group_by_length: bool
    short_token_weight: float
    test_loss: float
    test_accuracy: float

    def table(self) -> Table:
        return two_rule_table([self])


def two_rule_table(models: list[TwoRuleModel]) -> Table:
    """One row per trained model: how it was normalised and ordered, and how it scores."""
    if not models or not all(isinstance(m, TwoRuleModel) for m in models):
        raise ValueError(
            f"models must be a non-empty list of what train_two_rule_model returns, got {models!r}"
        )
    rows = [
        (
            m.normalize,
            "grouped by length" if m.group_by_length else "random order",
            f"{m.short_token_weight:.0%}",
            f"{m.test_loss:.3f}",
            f"{m.test_accuracy:.1%}",
        )
        for m in models
    ]
    headers = ("normalize", "order", "short tokens weigh", "test loss", "test accuracy")
    return Table(headers, rows)


def train_two_rule_model(
    normalize: str,
    group_by_length: bool,
    accumulation_steps: int = 4,
    steps: int = 150,
    short: int = 48,
    long: int = 16,
    lengths: tuple[int, int] = (2, 22),
    vocab: int = 8,
    seed: int = 0,
) -> TwoRuleModel:
    """Train a one-token model (a table of logits) on `make_two_rule_sequences` to the end.

    Each step is one window over the same `short` + `long` sequences in `accumulation_steps`
    micro-batches, normalised as `normalize` says ("tokens" or "naive", the bug),
    with the sequences in random order or grouped by length (as a length-grouping
    sampler does). Returns the weight the step gave to short-sequence tokens, and the
    test loss and accuracy (token means) on fresh sequences of the same mix.

    >>> result = train_two_rule_model("tokens", group_by_length=True, steps=2)
    >>> round(result.short_token_weight, 3)  # 48 x 2 of 448 tokens
    0.214
    """
    normalize = as_choice("normalize", normalize, ("tokens", "naive"))
    steps = as_count("steps", steps)
    x, y = make_two_rule_sequences(short, long, vocab, lengths, seed)
    if group_by_length:
        order = (y != IGNORE_INDEX).sum(dim=1).argsort(stable=True)
        x, y = x[order], y[order]
    with seeded(seed):
        model = torch.nn.Embedding(vocab, vocab)  # logits for the next target, from one token
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    for _ in range(steps):
        gradients = accumulated_gradients(
            model, token_loss, x, y, accumulation_steps, normalize=normalize
        )
        model.weight.grad = gradients["weight"]
        optimizer.step()
    test_x, test_y = make_two_rule_sequences(10 * short, 10 * long, vocab, lengths, seed + 1)
    with torch.no_grad():
        logits = model(test_x)
    real = test_y != IGNORE_INDEX
    return TwoRuleModel(
        normalize,
        group_by_length,
        _short_token_weight(y, accumulation_steps, normalize),
        token_loss(logits, test_y).item(),
        (logits.argmax(-1)[real] == test_y[real]).double().mean().item(),
    )


def _short_token_weight(targets: torch.Tensor, accumulation_steps: int, normalize: str) -> float:
    """The share of a window's gradient that comes from the tokens of the shortest sequences."""
    tokens = (targets != IGNORE_INDEX).sum(dim=1)
    short = tokens == tokens.min()
    total = int(tokens.sum())
    weight = 0.0
    for part, is_short in zip(tokens.tensor_split(accumulation_steps),
                              short.tensor_split(accumulation_steps)):  # fmt: skip
        share = float(part[is_short].sum()) / float(part.sum())  # short tokens in this micro-batch
        micro_batch_weight = (
            1 / accumulation_steps if normalize == "naive" else int(part.sum()) / total
        )
        weight += micro_batch_weight * share
    return weight
