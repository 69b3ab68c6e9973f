"""Training loops written out in full, the way a tutorial shows them.

Lesson 1 prints their source, so what a student reads is the code that runs.
They assume micro-batches of equal size; `train_accumulated` handles the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import torch


def textbook_loop(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    """The classic accumulation loop: step and clear once per window."""
    optimizer.zero_grad()  # start from empty .grad buffers
    for i, (inputs, targets) in enumerate(micro_batches):
        loss = loss_fn(model(inputs), targets)
        (loss / accumulation_steps).backward()  # .grad += gradient of this micro-batch
        if (i + 1) % accumulation_steps == 0:  # after the last micro-batch of a window
            optimizer.step()
            optimizer.zero_grad()


def off_by_one_loop(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    """The same loop with a classic bug: it steps after the first micro-batch of each window."""
    optimizer.zero_grad()
    for i, (inputs, targets) in enumerate(micro_batches):
        loss = loss_fn(model(inputs), targets)
        (loss / accumulation_steps).backward()
        if i % accumulation_steps == 0:  # BUG: true for i = 0, k, 2k, ...
            optimizer.step()
            optimizer.zero_grad()


def full_batch_loop(model, optimizer, loss_fn, batches):
    """Plain training, one step per batch: the reference accumulation must match."""
    for inputs, targets in batches:
        optimizer.zero_grad()
        loss_fn(model(inputs), targets).backward()
        optimizer.step()


def windows_as_batches(
    micro_batches: list[tuple[torch.Tensor, torch.Tensor]], accumulation_steps: int
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Concatenate each window of micro-batches into the one batch it stands for.

    >>> mbs = [(torch.zeros(2, 3), torch.zeros(2))] * 5
    >>> [len(x) for x, y in windows_as_batches(mbs, 2)]
    [4, 4, 2]
    """
    if accumulation_steps < 1:
        raise ValueError(f"accumulation_steps must be at least 1, got {accumulation_steps}")
    windows = [
        micro_batches[i : i + accumulation_steps]
        for i in range(0, len(micro_batches), accumulation_steps)
    ]
    return [(torch.cat([x for x, _ in w]), torch.cat([y for _, y in w])) for w in windows]


def count_steps(optimizer: torch.optim.Optimizer, train: Callable[[], object]) -> int:
    """Run `train()` and return how many times it called `optimizer.step()`.

    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    >>> count_steps(opt, lambda: [opt.step() for _ in range(3)])
    3
    """
    steps = []
    handle = optimizer.register_step_post_hook(lambda *args: steps.append(1))
    try:
        train()
    finally:
        handle.remove()
    return len(steps)


def micro_batches_of(
    inputs: torch.Tensor, targets: torch.Tensor, size: int
) -> Iterable[tuple[torch.Tensor, torch.Tensor]]:
    """Cut a dataset into consecutive micro-batches of `size` samples (the last may be smaller).

    >>> [len(x) for x, y in micro_batches_of(torch.zeros(10, 2), torch.zeros(10), 4)]
    [4, 4, 2]
    """
    if size < 1:
        raise ValueError(f"size must be at least 1 sample, got {size}")
    return [(inputs[i : i + size], targets[i : i + size]) for i in range(0, len(inputs), size)]
