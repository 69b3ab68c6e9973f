"""Scaling pitfalls of gradient accumulation: each one a short broken loop and its fix.

Every loop has the signature of `gradacc_lessons.loops`:
`loop(model, optimizer, loss_fn, micro_batches, accumulation_steps, ...)`, where
`micro_batches` is a list of (inputs, targets) and a window is `accumulation_steps`
consecutive micro-batches (the last window may be shorter). Lesson 2 prints their
source; `gradacc_lessons.damage` measures each one against the full batch.
"""

from __future__ import annotations

import torch


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
        window_tokens = sum(int((targets != -100).sum()) for _, targets in window)
        for inputs, targets in window:
            tokens = int((targets != -100).sum())  # real tokens, padding excluded
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
