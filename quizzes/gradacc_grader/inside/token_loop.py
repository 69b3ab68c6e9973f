"""Cases of lesson 2's exercise: `train_token_weighted`, the token-level loss weighted right.

A plain module (imports only torch): its cases and how to run a student's function on one, and
nothing more: the sandbox's harness runs it, the reference and hints are the grader's
(gradacc_grader/exercises/token_loop.py), never in the sandbox. A tiny float64 language model
(embedding and linear head) trains on padded sequences whose micro-batches hold different
numbers of real tokens, so the per-micro-batch mean divided by N is always wrong here. The
reference concatenates each window into one batch: the mean over all its real tokens, one
backward, one step.
"""

import random

import torch

FUNCTION = "train_token_weighted"
IGNORE_INDEX = -100
VOCAB, WIDTH, LENGTH, SEQUENCES = 8, 4, 6, 2  # SEQUENCES: sequences per micro-batch


def cases(seed):
    """[(case name, case)]: uneven tokens, a shorter last window, stale gradients.

    >>> [name for name, _ in cases(0)]  # doctest: +NORMALIZE_WHITESPACE
    ['uneven real tokens', 'a short last window', 'leftover gradients']
    """
    rng = random.Random(seed)
    accumulation_steps = rng.randint(2, 3)
    shapes = [
        ("uneven real tokens", accumulation_steps * 2, False),
        (
            "a short last window",
            accumulation_steps * 2 + rng.randint(1, accumulation_steps - 1),
            False,
        ),
        ("leftover gradients", accumulation_steps * 2, True),
    ]
    return [
        (name, _case(seed * 10 + i, count, accumulation_steps, stale))
        for i, (name, count, stale) in enumerate(shapes)
    ]


def _lengths(g, count, accumulation_steps):
    # real tokens per sequence; every window gets micro-batches with different token counts
    while True:
        lengths = torch.randint(1, LENGTH + 1, (count, SEQUENCES), generator=g)
        per_batch = lengths.sum(dim=1).tolist()
        windows = [
            per_batch[i : i + accumulation_steps] for i in range(0, count, accumulation_steps)
        ]
        if all(len(set(w)) == len(w) for w in windows):
            return lengths


def _case(seed, count, accumulation_steps, stale):
    g = torch.Generator().manual_seed(seed)
    shapes = [(VOCAB, WIDTH), (VOCAB, WIDTH), (VOCAB,)]
    start = [torch.randn(shape, generator=g, dtype=torch.float64) for shape in shapes]
    leftover = [torch.randn(shape, generator=g, dtype=torch.float64) for shape in shapes]
    batches = []
    for lengths in _lengths(g, count, accumulation_steps):
        tokens = torch.randint(1, VOCAB, (SEQUENCES, LENGTH), generator=g)
        real = torch.arange(LENGTH) < lengths[:, None]
        tokens = torch.where(real, tokens, torch.zeros_like(tokens))
        targets = torch.where(real, tokens.roll(-1, dims=1), torch.full_like(tokens, IGNORE_INDEX))
        batches.append((tokens, targets))
    return {
        "start": start,
        "leftover": leftover if stale else None,
        "batches": batches,
        "accumulation_steps": accumulation_steps,
    }


class _TinyLanguageModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, WIDTH, dtype=torch.float64)
        self.head = torch.nn.Linear(WIDTH, VOCAB, dtype=torch.float64)

    def forward(self, tokens):
        return self.head(torch.tanh(self.embed(tokens)))


def make_model(case):
    model = _TinyLanguageModel()
    with torch.no_grad():
        for p, value in zip(model.parameters(), case["start"]):
            p.copy_(value)
    return model, torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)


def run(function, case):
    """Train with the student's function; the weights and the largest forward pass."""
    model, optimizer = make_model(case)
    if case["leftover"] is not None:
        for p, value in zip(model.parameters(), case["leftover"]):
            p.grad = value.clone()
    sizes = []  # sequences per forward pass: one micro-batch at a time is the point
    model.register_forward_pre_hook(lambda module, args: sizes.append(len(args[0])))
    batches = [(x.clone(), y.clone()) for x, y in case["batches"]]
    function(model, optimizer, batches, case["accumulation_steps"])
    weights = [p.detach().tolist() for p in model.parameters()]
    return {"weights": weights, "largest_forward": max(sizes, default=0)}
