"""Every training loop a lesson prints, written out in full the way a tutorial shows it.

Lessons 1 and 2 print their source, so what a student reads is the code that runs;
`gradacc_lessons.demos.pitfalls` measures each one against the full batch. Every
loop has the signature `loop(model, optimizer, loss_fn, micro_batches,
accumulation_steps, ...)`, where `micro_batches` is a list of (inputs, targets) and
a window is `accumulation_steps` consecutive micro-batches (the last may be shorter).
Loops marked BROKEN carry a classic bug; each has a FIX next to it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence

import torch

from gradacc_lessons.accumulate import IGNORE_INDEX
from gradacc_lessons.checks import as_count, as_positive


def _checked(loop: Callable) -> Callable:
    """Check what every loop receives before it runs, so the printed loops stay short."""
    signature = inspect.signature(loop)

    @functools.wraps(loop)
    def run(*args, **kwargs):
        arguments = signature.bind(*args, **kwargs).arguments
        for name in ("micro_batches", "batches"):
            value = arguments.get(name, [()])
            if not isinstance(value, Sequence) or len(value) == 0:
                raise ValueError(
                    f"{name} must be a non-empty list of (inputs, targets), got {value!r}"
                )
        if "accumulation_steps" in arguments:
            as_count("accumulation_steps", arguments["accumulation_steps"])
        if "max_norm" in arguments:
            as_positive("max_norm", arguments["max_norm"])
        return loop(*args, **kwargs)

    return run


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


def count_steps(optimizer: torch.optim.Optimizer, train: Callable[[], object]) -> int:
    """Run `train()` and return how many times it called `optimizer.step()`.

    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    >>> count_steps(opt, lambda: [opt.step() for _ in range(3)])
    3
    """
    if not isinstance(optimizer, torch.optim.Optimizer) or not callable(train):
        raise ValueError("count_steps needs an optimizer and train, a function of no argument")
    steps = []
    handle = optimizer.register_step_post_hook(lambda *args: steps.append(1))
    try:
        train()
    finally:
        handle.remove()
    return len(steps)


def divide_by_n_loop(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    """BROKEN unless all micro-batches are equal: every mean loss is divided by N."""
    optimizer.zero_grad()
    for start in range(0, len(micro_batches), accumulation_steps):
        for inputs, targets in micro_batches[start : start + accumulation_steps]:
            loss = loss_fn(model(inputs), targets)
            (loss / accumulation_steps).backward()  # BUG: a micro-batch of 16 counts as one of 24
        optimizer.step()
        optimizer.zero_grad()


def weight_by_samples_loop(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    """FIX: weigh each micro-batch's mean loss by its share of the window's samples."""
    optimizer.zero_grad()
    for start in range(0, len(micro_batches), accumulation_steps):
        window = micro_batches[start : start + accumulation_steps]
        window_samples = sum(len(inputs) for inputs, _ in window)
        for inputs, targets in window:
            loss = loss_fn(model(inputs), targets)
            (loss * len(inputs) / window_samples).backward()
        optimizer.step()
        optimizer.zero_grad()


def weight_by_tokens_loop(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    """FIX for a token-mean loss: weigh each micro-batch by its share of the window's tokens."""
    optimizer.zero_grad()
    for start in range(0, len(micro_batches), accumulation_steps):
        window = micro_batches[start : start + accumulation_steps]
        window_tokens = sum(int((targets != IGNORE_INDEX).sum()) for _, targets in window)
        for inputs, targets in window:
            tokens = int((targets != IGNORE_INDEX).sum())  # real tokens, padding excluded
            if tokens > 0:  # a micro-batch of padding only has a mean loss of 0/0
                loss = loss_fn(model(inputs), targets)
                (loss * tokens / window_tokens).backward()
        optimizer.step()
        optimizer.zero_grad()


def last_window_loop(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    """BROKEN: the last, shorter window is still divided by the configured N."""
    optimizer.zero_grad()
    for i, (inputs, targets) in enumerate(micro_batches):
        loss = loss_fn(model(inputs), targets)
        (loss / accumulation_steps).backward()  # BUG in a last window of fewer than N
        if (i + 1) % accumulation_steps == 0 or i + 1 == len(micro_batches):
            optimizer.step()
            optimizer.zero_grad()


def scheduler_per_micro_batch_loop(
    model, optimizer, loss_fn, micro_batches, accumulation_steps, scheduler
):
    """BROKEN: the learning-rate schedule advances N times per optimizer step."""
    optimizer.zero_grad()
    for start in range(0, len(micro_batches), accumulation_steps):
        window = micro_batches[start : start + accumulation_steps]
        window_samples = sum(len(inputs) for inputs, _ in window)
        for inputs, targets in window:
            loss = loss_fn(model(inputs), targets)
            (loss * len(inputs) / window_samples).backward()
            scheduler.step()  # BUG: once per micro-batch
        optimizer.step()
        optimizer.zero_grad()


def scheduler_per_step_loop(
    model, optimizer, loss_fn, micro_batches, accumulation_steps, scheduler
):
    """FIX: step the scheduler once per optimizer step, right after it."""
    optimizer.zero_grad()
    for start in range(0, len(micro_batches), accumulation_steps):
        window = micro_batches[start : start + accumulation_steps]
        window_samples = sum(len(inputs) for inputs, _ in window)
        for inputs, targets in window:
            loss = loss_fn(model(inputs), targets)
            (loss * len(inputs) / window_samples).backward()
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()


def clip_per_micro_batch_loop(
    model, optimizer, loss_fn, micro_batches, accumulation_steps, max_norm
):
    """BROKEN: clipping inside the window rescales the partial sums unevenly."""
    optimizer.zero_grad()
    for start in range(0, len(micro_batches), accumulation_steps):
        window = micro_batches[start : start + accumulation_steps]
        window_samples = sum(len(inputs) for inputs, _ in window)
        for inputs, targets in window:
            loss = loss_fn(model(inputs), targets)
            (loss * len(inputs) / window_samples).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)  # BUG: too early
        optimizer.step()
        optimizer.zero_grad()


def clip_once_loop(model, optimizer, loss_fn, micro_batches, accumulation_steps, max_norm):
    """FIX: clip once, the whole window's gradient, just before the step."""
    optimizer.zero_grad()
    for start in range(0, len(micro_batches), accumulation_steps):
        window = micro_batches[start : start + accumulation_steps]
        window_samples = sum(len(inputs) for inputs, _ in window)
        for inputs, targets in window:
            loss = loss_fn(model(inputs), targets)
            (loss * len(inputs) / window_samples).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        optimizer.step()
        optimizer.zero_grad()


def log_last_micro_batch_loop(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    """BROKEN: logs the scaled loss of the window's last micro-batch."""
    logged = []
    optimizer.zero_grad()
    for start in range(0, len(micro_batches), accumulation_steps):
        window = micro_batches[start : start + accumulation_steps]
        window_samples = sum(len(inputs) for inputs, _ in window)
        for inputs, targets in window:
            loss = loss_fn(model(inputs), targets) * len(inputs) / window_samples
            loss.backward()
        logged.append(loss.item())  # BUG: one micro-batch, and scaled down
        optimizer.step()
        optimizer.zero_grad()
    return logged


def log_window_loss_loop(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    """FIX: log the sum of the weighted losses: the mean loss of the effective batch."""
    logged = []
    optimizer.zero_grad()
    for start in range(0, len(micro_batches), accumulation_steps):
        window = micro_batches[start : start + accumulation_steps]
        window_samples = sum(len(inputs) for inputs, _ in window)
        window_loss = 0.0
        for inputs, targets in window:
            loss = loss_fn(model(inputs), targets) * len(inputs) / window_samples
            loss.backward()
            window_loss += loss.item()
        logged.append(window_loss)
        optimizer.step()
        optimizer.zero_grad()
    return logged


# Each loop checks its arguments before it runs; wrapped here, not with a decorator, so that
# the source a lesson prints is the loop alone.
textbook_loop = _checked(textbook_loop)
off_by_one_loop = _checked(off_by_one_loop)
full_batch_loop = _checked(full_batch_loop)
divide_by_n_loop = _checked(divide_by_n_loop)
weight_by_samples_loop = _checked(weight_by_samples_loop)
weight_by_tokens_loop = _checked(weight_by_tokens_loop)
last_window_loop = _checked(last_window_loop)
scheduler_per_micro_batch_loop = _checked(scheduler_per_micro_batch_loop)
scheduler_per_step_loop = _checked(scheduler_per_step_loop)
clip_per_micro_batch_loop = _checked(clip_per_micro_batch_loop)
clip_once_loop = _checked(clip_once_loop)
log_last_micro_batch_loop = _checked(log_last_micro_batch_loop)
log_window_loss_loop = _checked(log_window_loss_loop)
