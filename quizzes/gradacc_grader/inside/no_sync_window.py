"""Cases of lesson 6's exercise: `train_with_no_sync`, one all-reduce per window.

A plain module (imports only torch): its cases and how to run a student's function on one, and
nothing more: the sandbox's harness runs it, the reference and hints are the grader's
(gradacc_grader/exercises/no_sync_window.py), never in the sandbox. `CountingDDP` stands in for
DistributedDataParallel on one process: like DDP it decides in the forward pass whether the
coming backward all-reduces (not inside `no_sync()`), and it counts those all-reduces instead of
making them. The weights are compared with one full-batch step per window, as for the plain
accumulation loop.
"""

import contextlib
import random

import torch

FUNCTION = "train_with_no_sync"
MICRO_BATCH_SIZE = 4


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
    accumulation_steps = rng.randint(2, 4)
    shapes = [
        ("one all-reduce per window", accumulation_steps * rng.randint(2, 3), accumulation_steps),
        (
            "a short last window",
            accumulation_steps * 2 + rng.randint(1, accumulation_steps - 1),
            accumulation_steps,
        ),
        ("no accumulation", rng.randint(3, 5), 1),
    ]
    return [
        (name, _case(seed * 10 + i, count, accumulation_steps))
        for i, (name, count, accumulation_steps) in enumerate(shapes)
    ]


def _case(seed, count, accumulation_steps):
    g = torch.Generator().manual_seed(seed)
    shapes = [(3, 4), (3,)]
    start = [0.5 * torch.randn(shape, generator=g, dtype=torch.float64) for shape in shapes]
    batches = [
        (
            torch.randn(MICRO_BATCH_SIZE, 4, generator=g, dtype=torch.float64),
            torch.randn(MICRO_BATCH_SIZE, 3, generator=g, dtype=torch.float64),
        )
        for _ in range(count)
    ]
    return {"start": start, "batches": batches, "accumulation_steps": accumulation_steps}


def make_model(case):
    model = torch.nn.Linear(4, 3, dtype=torch.float64)
    with torch.no_grad():
        for p, value in zip(model.parameters(), case["start"]):
            p.copy_(value)
    return model, torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


def run(function, case):
    """Train with the student's function; the weights and the all-reduces made."""
    model, optimizer = make_model(case)
    ddp = CountingDDP(model)
    batches = [(x.clone(), y.clone()) for x, y in case["batches"]]
    function(ddp, optimizer, torch.nn.MSELoss(), batches, case["accumulation_steps"])
    return {
        "weights": [p.detach().tolist() for p in model.parameters()],
        "allreduces": ddp.allreduces,
    }
