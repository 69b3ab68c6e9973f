"""Cases of lesson 6's exercise: `train_with_no_sync`, one all-reduce per window.

A plain module (imports only torch): pasted into the hidden test, imported by the sandbox's
harness and by the grader's re-check. `CountingDDP` stands in for DistributedDataParallel on
one process: like DDP it decides in the forward pass whether the coming backward all-reduces
(not inside `no_sync()`), and it counts those all-reduces instead of making them. The weights
are compared with one full-batch step per window, as for the plain accumulation loop.
"""

import contextlib
import random

import torch

FUNCTION = "train_with_no_sync"
MICRO_BATCH = 4
HINTS = {
    "en": {
        "one all-reduce per window": "DDP decides in the forward pass whether the backward "
        "will all-reduce; only the window's last micro-batch needs to",
        "a short last window": "the last window may be shorter: its own last micro-batch is "
        "the one that must synchronise",
        "no accumulation": "with accumulation_steps = 1 every micro-batch is the last of its "
        "window",
    },
    "yo": {
        "one all-reduce per window": "DDP pinnu nínú forward bóyá backward yóò ṣe all-reduce; "
        "micro-batch tó kẹ́yìn fèrèsé nìkan ló nílò rẹ̀",
        "a short last window": "fèrèsé tó kẹ́yìn lè kúrú: micro-batch tó kẹ́yìn tirẹ̀ ló gbọ́dọ̀ "
        "ṣe ìmúṣiṣẹ́pọ̀",
        "no accumulation": "pẹ̀lú accumulation_steps = 1 gbogbo micro-batch ló jẹ́ èyí tó kẹ́yìn "
        "fèrèsé rẹ̀",
    },
}


class CountingDDP(torch.nn.Module):
    """A one-process stand-in for DistributedDataParallel that counts its all-reduces."""

    def __init__(self, module):
        super().__init__()
        self.module = module
        self.require_backward_grad_sync = True
        self.allreduces = 0

    @contextlib.contextmanager
    def no_sync(self):
        """Like DDP's: the forward passes run inside it make no all-reduce in their backward."""
        before = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = before

    def forward(self, inputs):
        outputs = self.module(inputs)
        if self.require_backward_grad_sync and outputs.requires_grad:
            outputs.register_hook(self._all_reduce)  # decided here, as DDP does
        return outputs

    def _all_reduce(self, grad):
        self.allreduces += 1
        return grad


def cases(seed):
    """[(case name, case)]: whole windows, a shorter last window, N = 1.

    >>> [name for name, _ in cases(0)]  # doctest: +NORMALIZE_WHITESPACE
    ['one all-reduce per window', 'a short last window', 'no accumulation']
    """
    rng = random.Random(seed)
    steps = rng.randint(2, 4)
    shapes = [
        ("one all-reduce per window", steps * rng.randint(2, 3), steps),
        ("a short last window", steps * 2 + rng.randint(1, steps - 1), steps),
        ("no accumulation", rng.randint(3, 5), 1),
    ]
    return [
        (name, _case(seed * 10 + i, count, steps)) for i, (name, count, steps) in enumerate(shapes)
    ]


def _case(seed, count, steps):
    g = torch.Generator().manual_seed(seed)
    shapes = [(3, 4), (3,)]
    start = [0.5 * torch.randn(shape, generator=g, dtype=torch.float64) for shape in shapes]
    batches = [
        (
            torch.randn(MICRO_BATCH, 4, generator=g, dtype=torch.float64),
            torch.randn(MICRO_BATCH, 3, generator=g, dtype=torch.float64),
        )
        for _ in range(count)
    ]
    return {"start": start, "batches": batches, "steps": steps}


def _model(case):
    model = torch.nn.Linear(4, 3, dtype=torch.float64)
    with torch.no_grad():
        for p, value in zip(model.parameters(), case["start"]):
            p.copy_(value)
    return model, torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


def run(function, case):
    """Train with the student's function; the weights and the all-reduces made."""
    model, optimizer = _model(case)
    ddp = CountingDDP(model)
    batches = [(x.clone(), y.clone()) for x, y in case["batches"]]
    function(ddp, optimizer, torch.nn.MSELoss(), batches, case["steps"])
    return {
        "weights": [p.detach().tolist() for p in model.parameters()],
        "allreduces": ddp.allreduces,
    }


def expected(case):
    """The reference: one full-batch step per window, and one all-reduce per window."""
    model, optimizer = _model(case)
    batches, steps = case["batches"], case["steps"]
    for first in range(0, len(batches), steps):
        window = batches[first : first + steps]
        optimizer.zero_grad()
        inputs = torch.cat([x for x, _ in window])
        targets = torch.cat([y for _, y in window])
        torch.nn.functional.mse_loss(model(inputs), targets).backward()
        optimizer.step()
    windows = -(-len(batches) // steps)
    return {"weights": [p.detach().tolist() for p in model.parameters()], "allreduces": windows}


def disagrees(outcome, reference):
    """None if there was one all-reduce per window (scoring compares the weights)."""
    made, wanted = outcome.get("allreduces"), reference["allreduces"]
    if made != wanted:
        return f"{made} all-reduces for {wanted} windows"
    return None
