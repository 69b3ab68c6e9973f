"""Lesson 2's exercises: an uneven window's loss, by samples and by tokens; scheduler, clipping."""

from __future__ import annotations

import torch

from gradacc_lessons.accumulate import count_tokens, full_batch_gradients, token_loss
from gradacc_lessons.compare import relative_error
from gradacc_lessons.data import make_lengths, make_sequences
from gradacc_lessons.demos.pitfalls import classification_problem
from gradacc_lessons.device import seeded
from gradacc_lessons.exercises.lesson1 import (
    CountingRecorder,
    _added,
    _case,
    _check_step_times,
    _close,
    _scaled,
    _window_references,
)
from gradacc_lessons.exercises.runner import Exercise, Failed, call_learner
from gradacc_lessons.models import TinySequenceModel


def _gradients(model) -> dict[str, torch.Tensor]:
    """What the learner's function left in .grad."""
    return {
        n: torch.zeros_like(p) if p.grad is None else p.grad.detach().clone()
        for n, p in model.named_parameters()
    }


def _window_mistakes(model, loss_fn, window, got, counts, unit: str) -> None:
    """Failed if `got` is one of the known wrong weightings of the window's micro-batches."""
    parts = [full_batch_gradients(model, loss_fn, x, y) for x, y in window]
    n, total = len(window), sum(counts)
    listed = ", ".join(str(c) for c in counts)
    if all(float(g.abs().sum()) == 0.0 for g in got.values()):
        raise Failed("no_gradient")
    if n > 1 and _close(_added(*(_scaled(g, 1 / n) for g in parts)), got):
        small = min(counts)
        raise Failed(
            f"divided_by_n_{unit}", n=n, counts=listed, small=small,
            times=f"{total / (n * small):.2f}",
        )  # fmt: skip
    if n > 1 and _close(_added(*parts), got):
        raise Failed("unweighted", n=n)
    if unit == "tokens":
        samples = [len(x) for x, _ in window]
        by_samples = _added(*(_scaled(g, s / sum(samples)) for g, s in zip(parts, samples)))
        if _close(by_samples, got):
            raise Failed("weighted_by_samples", counts=listed)
    if _close(_added(*(_scaled(g, c) for g, c in zip(parts, counts))), got):
        raise Failed("not_divided_by_total", unit=unit, total=total)


def _diagnose_window(function, problems, unit: str) -> None:
    for model, loss_fn, window in problems:
        x, y = torch.cat([x for x, _ in window]), torch.cat([y for _, y in window])
        full = full_batch_gradients(model, loss_fn, x, y)
        model.zero_grad(set_to_none=True)
        call_learner(function, model, loss_fn, window)
        got = _gradients(model)
        if _close(full, got):
            continue
        counts = [len(x) if unit == "samples" else count_tokens(y) for x, y in window]
        _window_mistakes(model, loss_fn, window, got, counts, unit)
        raise Failed(
            "window_off", unit=unit, counts=", ".join(map(str, counts)),
            error=f"{relative_error(full, got):.2%}",
        )  # fmt: skip


def _sample_windows():
    """Uneven windows of a float64 classifier: sizes a learner did not choose."""
    for seed, sizes in ((21, (24, 24, 16)), (22, (5, 13, 9, 3)), (23, (7,))):
        model, x, y = classification_problem(sum(sizes), seed=seed)
        window = list(zip(x.split(list(sizes)), y.split(list(sizes))))
        yield model, torch.nn.functional.cross_entropy, window


def _token_windows():
    """Windows of padded sequences whose micro-batches hold very different numbers of tokens."""
    for seed, spread, sizes in ((31, 1.0, [5, 3, 6, 2]), (32, 0.8, [4, 6, 2])):
        lengths = make_lengths(sum(sizes), mean_length=10, spread=spread, seed=seed, sort=True)
        x, y = make_sequences(lengths, seed=seed)
        with seeded(seed):
            model = TinySequenceModel().double()
        yield model, token_loss, list(zip(x.split(sizes), y.split(sizes)))


def _diagnose_uneven(function) -> None:
    """Run the learner's window backward on uneven windows; Failed with the mistake found."""
    _diagnose_window(function, _sample_windows(), "samples")


def _diagnose_tokens(function) -> None:
    """Run the learner's window backward on token windows; Failed with the mistake found."""
    _diagnose_window(function, _token_windows(), "tokens")


def uneven_window_backward(model, loss_fn, window):
    batch = sum(len(inputs) for inputs, _ in window)  # samples in the whole window
    for inputs, targets in window:
        loss = loss_fn(model(inputs), targets)  # a mean over this micro-batch's samples
        (loss * len(inputs) / batch).backward()  # weighted by its share of the window


def token_window_backward(model, loss_fn, window):
    tokens = sum(int((targets != -100).sum()) for _, targets in window)  # real tokens
    for inputs, targets in window:
        loss = loss_fn(model(inputs), targets)  # a mean over this micro-batch's real tokens
        share = int((targets != -100).sum()) / tokens
        (loss * share).backward()


def _diagnose_schedule(function) -> None:
    """The learner's loop with a warm-up and clipping: learning rates and gradients per step."""
    for seed, micro_batches, size, n in ((41, 12, 6, 4), (42, 6, 5, 2)):
        model, batches, n = _case(seed, micro_batches, size, n)
        loss_fn = torch.nn.functional.cross_entropy
        full, _ = _window_references(model, loss_fn, batches, n)
        max_norm = 0.2 * min(_norm(g) for g in full)  # clipping bites in every window
        recorder = CountingRecorder(model, most_steps=10 * micro_batches)
        scheduler = torch.optim.lr_scheduler.LambdaLR(recorder, _warmup)
        call_learner(function, model, recorder, scheduler, loss_fn, batches, n, max_norm)
        _check_schedule(recorder, full, max_norm, n)


def _warmup(scheduler_steps: int) -> float:
    """A linear warm-up that never ends within a check: each scheduler step adds 1 %."""
    return (scheduler_steps + 1) / 100


def _scheduler_steps(lr: float) -> int:
    """How many times the scheduler had stepped when the optimizer used `lr`."""
    return round(lr * 100) - 1


def _norm(gradients: dict) -> float:
    return sum(float((g.double() ** 2).sum()) for g in gradients.values()) ** 0.5


def _check_schedule(recorder, full, max_norm, n) -> None:
    _check_step_times(recorder.after, n, n * len(full))
    got = [_scheduler_steps(lr) for lr in recorder.lrs]
    expected = list(range(len(full)))
    if got != expected:
        if len(set(got)) == 1:
            raise Failed("scheduler_never")
        if n > 1 and got[1] - got[0] == n:
            raise Failed("scheduler_per_micro_batch", n=n, steps=got[1] - got[0])
        if got == [s + 1 for s in expected]:
            raise Failed("scheduler_before_step")
        raise Failed("lr_differs", got=got, expected=expected)
    for k, (got, reference) in enumerate(zip(recorder.gradients, full)):
        # clip_grad_norm_'s factor, with its 1e-6 that keeps a zero gradient finite
        clipped = _scaled(reference, min(1.0, max_norm / (_norm(reference) + 1e-6)))
        if _close(clipped, got):
            continue
        norm = _norm(got)
        if _close(reference, got):
            raise Failed("not_clipped", norm=f"{norm:.3g}", max_norm=f"{max_norm:.3g}")
        if norm <= max_norm * (1 + 1e-6):
            raise Failed("clipped_inside_window", window=k + 1)
        raise Failed("window_differs", window=k + 1, error=f"{relative_error(clipped, got):.2%}")


def schedule_and_clip_loop(
    model, optimizer, scheduler, loss_fn, micro_batches, accumulation_steps, max_norm
):
    optimizer.zero_grad()
    for i, (inputs, targets) in enumerate(micro_batches):
        loss = loss_fn(model(inputs), targets)
        (loss / accumulation_steps).backward()
        if (i + 1) % accumulation_steps == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)  # the whole window's
            optimizer.step()
            scheduler.step()  # once per optimizer step
            optimizer.zero_grad()


UNEVEN_WINDOW = Exercise("l2_uneven", 2, _diagnose_uneven, uneven_window_backward, "hint_l2_uneven")
TOKEN_WINDOW = Exercise("l2_tokens", 2, _diagnose_tokens, token_window_backward, "hint_l2_tokens")
SCHEDULE_AND_CLIP = Exercise(
    "l2_schedule", 2, _diagnose_schedule, schedule_and_clip_loop, "hint_l2_schedule"
)
