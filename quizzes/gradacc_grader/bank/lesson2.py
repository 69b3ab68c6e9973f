"""Lesson 2, scaling the loss: graded questions and the token-loop exercise (5 points)."""

from __future__ import annotations

from .core import Assignment, Choice, Drawn, Exercise, MultipleChoice, distinct, fraction, pick


def draw_uneven_weight(rng, lang="en") -> Drawn:
    """Which weight does one micro-batch of an uneven window need?"""
    while True:
        sizes = [pick(rng, range(8, 41, 4)) for _ in range(3)]
        k = rng.randrange(3)
        total, size = sum(sizes), sizes[k]
        drawn = _uneven_weight(sizes, k, total, size)
        if len(set(sizes)) == 3 and distinct(drawn) and 3 * size != total:
            return drawn


def _uneven_weight(sizes, k, total, size) -> Drawn:
    ordinal = ("first", "second", "third")[k]
    prompt = (
        f"A window holds three micro-batches of {sizes[0]}, {sizes[1]} and {sizes[2]} samples. "
        "Each micro-batch loss is the mean over its own samples. By which factor must the "
        f"**{ordinal}** micro-batch's loss be multiplied before `backward()`, so that the "
        "window's gradient equals the gradient of one batch of all its samples?"
    )
    right = Choice(
        fraction(size, total),
        "The batch's mean loss divides a sum over all samples by their count; a micro-batch's "
        "mean times its share of the samples is exactly its part of that sum.",
    )
    wrong = (
        Choice(
            "1/3",
            "1/N is right only when all micro-batches have the same size; here it gives the "
            "samples of the smaller micro-batches too much weight.",
        ),
        Choice(
            fraction(1, size),
            "Dividing a mean by its own size again weighs each sample by 1/n²; the weight "
            "must turn the micro-batch's mean into its part of the batch's mean.",
        ),
        Choice(
            fraction(size, 3 * total),
            "That also divides by N: the shares of the samples already add up to 1 over the "
            "window, so no further 1/N is needed.",
        ),
        Choice(
            fraction(total, 3 * size),
            "That is how many times a sample of this micro-batch counts when every loss is "
            "divided by N: the size of the error, not the weight that fixes it.",
        ),
    )
    return Drawn(prompt, right, wrong)


def draw_token_weight(rng, lang="en") -> Drawn:
    """How much too much does a token of the shorter micro-batch count with mean / N?"""
    while True:
        short = pick(rng, range(20, 120, 10))
        long = short * pick(rng, (2, 3, 4)) + pick(rng, (0, 10, 20))
        total = short + long
        values = {
            "right": total / (2 * short),
            "ratio": long / short,
            "long": total / (2 * long),
            "undivided": total / short,
            "inverse": 2 * short / total,
        }
        if len({f"{v:.2f}" for v in values.values()} | {"1.00"}) == 6:
            break
    prompt = (
        "A window of two micro-batches of padded sequences: the first holds "
        f"**{short}** real tokens, the second **{long}**. Each micro-batch loss is the "
        "cross-entropy averaged over its own real tokens, then divided by 2. Compared with one "
        f"batch of all {total} real tokens (the mean over all of them), how many times its "
        "right weight does one token of the **first** micro-batch get?"
    )
    right = Choice(
        f"{values['right']:.2f}",
        f"Each token of the first micro-batch gets 1/(2 × {short}) instead of 1/{total}: "
        "the window's token count must divide every token's loss.",
    )
    wrong = (
        Choice(
            "1.00",
            "Only if both micro-batches held the same number of real tokens; a mean over fewer "
            "tokens gives each of them more weight.",
        ),
        Choice(
            f"{values['ratio']:.2f}",
            "That compares a token of the first micro-batch with one of the second. The "
            "question compares it with the weight the whole batch gives it.",
        ),
        Choice(
            f"{values['long']:.2f}",
            "That is the factor of a token of the second, longer micro-batch, which gets "
            "less than its right weight.",
        ),
        Choice(
            f"{values['undivided']:.2f}",
            "That leaves out the division by 2: each micro-batch's mean is divided by N before "
            "backward, which halves the over-weighting.",
        ),
        Choice(
            f"{values['inverse']:.2f}",
            "That is the inverse: a token averaged over fewer tokens gets *more* weight than "
            "the whole batch's mean gives it, not less.",
        ),
    )
    return Drawn(prompt, right, wrong)


TOKEN_PROMPT = """\
### Exercise: fix a token-weighted loop ({points})

This loop trains a language model on padded sequences (`targets` holds `-100` at padded
positions), one optimizer step per window of `accumulation_steps` micro-batches. It has the bug
that Hugging Face Transformers' `Trainer` had until 2024:

```python
def train_token_weighted(model, optimizer, micro_batches, accumulation_steps):
    optimizer.zero_grad()
    for start in range(0, len(micro_batches), accumulation_steps):
        window = micro_batches[start : start + accumulation_steps]
        for tokens, targets in window:
            logits = model(tokens)
            loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-100)
            (loss / accumulation_steps).backward()
        optimizer.step()
        optimizer.zero_grad()
```

Write a fixed `train_token_weighted` below: every window must make the update of one batch of all
its sequences, whose loss is the mean cross-entropy over **all the real tokens of the window**,
also for a last window holding fewer micro-batches. Keep one micro-batch per forward pass, and
clear the gradients before the first micro-batch (the model may hold leftover gradients). The
grader trains models case by case and gives part of the points for each case it passes."""

TOKEN_STARTER = '''\
from torch.nn import functional as F


def train_token_weighted(model, optimizer, micro_batches, accumulation_steps):
    """One optimizer step per window; each window's loss is the mean over its real tokens."""'''

TOKEN_SOLUTION = """\
    optimizer.zero_grad()  # leftover gradients would join the first step
    for start in range(0, len(micro_batches), accumulation_steps):
        window = micro_batches[start : start + accumulation_steps]
        # the real tokens of the whole window: every token's loss is divided by this count
        real = sum(int((targets != -100).sum()) for _, targets in window)
        for tokens, targets in window:
            logits = model(tokens)
            loss = F.cross_entropy(
                logits.flatten(0, 1), targets.flatten(), ignore_index=-100, reduction="sum"
            )
            (loss / real).backward()
        optimizer.step()
        optimizer.zero_grad()"""

TOKEN_PARTIAL = TOKEN_SOLUTION.replace(
    "    optimizer.zero_grad()  # leftover gradients would join the first step\n", ""
)

TOKEN_CHECK = """\
import torch


def _quick_check():
    g = torch.Generator().manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(5, 3), torch.nn.Linear(3, 5)).double()
    start = [p.detach().clone() for p in model.parameters()]
    tokens = torch.randint(1, 5, (4, 4), generator=g)
    targets = tokens.clone()
    targets[:2, 1:] = -100  # the first micro-batch has 2 real tokens, the second 8
    batches = [(tokens[:2], targets[:2]), (tokens[2:], targets[2:])]
    train_token_weighted(model, torch.optim.SGD(model.parameters(), lr=1.0), batches, 2)
    moved = [p.detach() - s for p, s in zip(model.parameters(), start)]

    def update(weights):  # one SGD step of lr 1 from the start, weights per micro-batch
        for p, s in zip(model.parameters(), start):
            p.data.copy_(s)
            p.grad = None
        for (x, y), w in zip(batches, weights):
            loss = torch.nn.functional.cross_entropy(
                model(x).flatten(0, 1), y.flatten(), ignore_index=-100, reduction="sum"
            )
            (loss * w).backward()
        return [-p.grad for p in model.parameters()]

    def same(a, b):
        return all(torch.allclose(x, y, atol=1e-12) for x, y in zip(a, b))

    assert not same(moved, update([1 / 2 / 2, 1 / 8 / 2])), (
        "each micro-batch's mean is divided by accumulation_steps: a token of the micro-batch "
        "with fewer real tokens weighs more than one of the other"
    )
    assert same(moved, update([1 / 10, 1 / 10])), (
        "the update is not the mean over the 10 real tokens of the window"
    )
    print("Quick check passed: one window of 2 + 8 real tokens. The grader tries more.")


_quick_check()"""

TOKEN_LOOP = Exercise(
    id="l2_token_loop",
    module="token_loop",
    goal="fix a token-weighted loop (uneven tokens, short last window, leftover gradients)",
    prompt={"en": TOKEN_PROMPT},
    starter=TOKEN_STARTER,
    solution=TOKEN_SOLUTION,
    check={"en": TOKEN_CHECK},
    partial=TOKEN_PARTIAL,
    partial_fails=("leftover gradients",),
)

LESSON2 = Assignment(
    name="lesson2_loss_scaling",
    lesson="2",
    title={"en": "Lesson 2 quiz: scaling the loss"},
    intro={
        "en": "Two questions and one exercise on lesson 2: the weight each micro-batch's loss "
        "needs when micro-batches differ in samples or in real tokens."
    },
    items=(
        MultipleChoice(
            "l2_uneven_weight", "compute", "weight of an uneven micro-batch", draw_uneven_weight
        ),
        MultipleChoice("l2_token_weight", "compute", "over-weighted tokens", draw_token_weight),
        TOKEN_LOOP,
    ),
)
