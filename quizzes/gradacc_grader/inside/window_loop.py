"""Cases of the FAQ 3 exercise: `train_with_accumulation`, one optimizer step per window.

A plain module (imports only torch): pasted into the hidden test, imported by the sandbox's
harness and by the grader's re-check. Every case trains a small float64 network from the
same start with SGD and momentum (momentum remembers every step, so one step too many or too
few shows in the weights); the reference trains it on each window concatenated into one batch.
"""

import random

import torch

FUNCTION = "train_with_accumulation"
MICRO_BATCH = 4  # samples per micro-batch: the exercise promises equal sizes
HINTS = {
    "en": {
        "whole windows": "one window must move the weights like one batch of all its samples: "
        "what does .grad hold when optimizer.step() runs, and how often does it run?",
        "a short last window": "the last window may hold fewer micro-batches than "
        "accumulation_steps; which batch does that window stand for?",
        "leftover gradients": "the model arrives with gradients already in .grad; backward() "
        "adds to whatever is there",
    },
    "yo": {
        "whole windows": "fèrèsé kan gbọ́dọ̀ yí àwọn ìwọ̀n padà bí ipele kan tó ní gbogbo àwọn "
        "àpẹẹrẹ rẹ̀: kí ni .grad ní nígbà tí optimizer.step() bá ṣiṣẹ́, ìgbà mélòó ló sì ṣiṣẹ́?",
        "a short last window": "fèrèsé tó kẹ́yìn lè ní micro-batches tó kéré ju "
        "accumulation_steps lọ; ipele wo ni fèrèsé yẹn dúró fún?",
        "leftover gradients": "àwòṣe náà dé pẹ̀lú gradients tó ti wà nínú .grad; backward() "
        "máa ń fi kún ohun tó bá wà níbẹ̀",
    },
}


def cases(seed):
    """[(case name, case)]: whole windows, a shorter last window, stale gradients.

    >>> [name for name, _ in cases(0)]  # doctest: +NORMALIZE_WHITESPACE
    ['whole windows', 'a short last window', 'leftover gradients']
    """
    rng = random.Random(seed)
    steps = rng.randint(2, 4)
    shapes = [
        ("whole windows", steps * rng.randint(2, 3), False),
        ("a short last window", steps * 2 + rng.randint(1, steps - 1), False),
        ("leftover gradients", steps * 2, True),
    ]
    return [
        (name, _case(seed * 10 + i, count, steps, stale))
        for i, (name, count, stale) in enumerate(shapes)
    ]


def _case(seed, count, steps, stale):
    g = torch.Generator().manual_seed(seed)
    start = [0.5 * torch.randn(shape, generator=g, dtype=torch.float64) for shape in _SHAPES]
    leftover = [torch.randn(shape, generator=g, dtype=torch.float64) for shape in _SHAPES]
    batches = [
        (
            torch.randn(MICRO_BATCH, 5, generator=g, dtype=torch.float64),
            torch.randn(MICRO_BATCH, 2, generator=g, dtype=torch.float64),
        )
        for _ in range(count)
    ]
    return {
        "start": start,
        "leftover": leftover if stale else None,
        "batches": batches,
        "steps": steps,
    }


_SHAPES = [(6, 5), (6,), (2, 6), (2,)]


def _model(case):
    model = torch.nn.Sequential(
        torch.nn.Linear(5, 6), torch.nn.Tanh(), torch.nn.Linear(6, 2)
    ).double()
    with torch.no_grad():
        for p, value in zip(model.parameters(), case["start"]):
            p.copy_(value)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return model, optimizer


def run(function, case):
    """Train with the student's function; the weights and the largest forward pass."""
    model, optimizer = _model(case)
    if case["leftover"] is not None:
        for p, value in zip(model.parameters(), case["leftover"]):
            p.grad = value.clone()
    sizes = []  # samples per forward pass: one micro-batch at a time is the point
    model.register_forward_pre_hook(lambda module, args: sizes.append(len(args[0])))
    batches = [(x.clone(), y.clone()) for x, y in case["batches"]]
    function(model, optimizer, torch.nn.MSELoss(), batches, case["steps"])
    weights = [p.detach().tolist() for p in model.parameters()]
    return {"weights": weights, "largest_forward": max(sizes, default=0)}


def expected(case):
    """The reference: each window concatenated into one batch, one backward, one step."""
    model, optimizer = _model(case)
    batches, steps = case["batches"], case["steps"]
    for first in range(0, len(batches), steps):
        window = batches[first : first + steps]
        optimizer.zero_grad()
        inputs = torch.cat([x for x, _ in window])
        targets = torch.cat([y for _, y in window])
        torch.nn.functional.mse_loss(model(inputs), targets).backward()
        optimizer.step()
    return {
        "weights": [p.detach().tolist() for p in model.parameters()],
        "largest_forward": MICRO_BATCH,
    }


def disagrees(outcome, reference):
    """None if the model saw one micro-batch at a time (scoring compares the weights)."""
    if outcome.get("largest_forward") != MICRO_BATCH:
        return "the model must see one micro-batch at a time"
    return None
