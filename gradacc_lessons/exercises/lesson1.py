"""Lesson 1's exercise: the accumulation loop, checked window by window against the full batch."""

from __future__ import annotations

import torch

from gradacc_lessons.accumulate import full_batch_gradients
from gradacc_lessons.compare import relative_error
from gradacc_lessons.demos.pitfalls import StepRecorder, classification_problem
from gradacc_lessons.exercises.runner import Exercise, Failed, call_learner

EXACT = 1e-9  # float64: a right loop lands within rounding of the full batch (about 1e-16)


class CountingRecorder(StepRecorder):
    """A StepRecorder that also notes after how many micro-batches each step() came.

    It stops a loop that steps far more often than the batches allow (an endless loop).
    """

    def __init__(self, model: torch.nn.Module, most_steps: int, lr: float = 1.0):
        super().__init__(model, lr=lr)
        self.forwards = 0
        self.after: list[int] = []  # micro-batches run before each step
        self.most_steps = most_steps
        model.register_forward_pre_hook(self._count)

    def _count(self, module, inputs) -> None:
        self.forwards += 1

    def step(self, closure=None):
        if len(self.after) >= self.most_steps:
            raise Failed("too_many_steps", steps=len(self.after))
        self.after.append(self.forwards)
        super().step(closure)


def _case(seed: int, micro_batches: int, size: int, accumulation_steps: int):
    """A float64 classifier and `micro_batches` micro-batches of `size` samples."""
    model, x, y = classification_problem(micro_batches * size, seed=seed)
    return model, list(zip(x.split(size), y.split(size))), accumulation_steps


def _stale_gradients(model: torch.nn.Module, seed: int) -> dict[str, torch.Tensor]:
    """Fill .grad with gradients of an earlier batch, as a training loop finds it."""
    generator = torch.Generator().manual_seed(seed)
    stale = {}
    for name, p in model.named_parameters():
        p.grad = torch.randn(p.shape, generator=generator, dtype=p.dtype)
        stale[name] = p.grad.clone()
    return stale


def _window_references(model, loss_fn, micro_batches, accumulation_steps):
    """Per window: the full batch's gradient, and each micro-batch's own gradient."""
    windows = [
        micro_batches[i : i + accumulation_steps]
        for i in range(0, len(micro_batches), accumulation_steps)
    ]
    full = [
        full_batch_gradients(
            model, loss_fn, torch.cat([x for x, _ in w]), torch.cat([y for _, y in w])
        )
        for w in windows
    ]
    parts = [[full_batch_gradients(model, loss_fn, x, y) for x, y in w] for w in windows]
    return full, parts


def _scaled(gradients: dict, factor: float) -> dict:
    return {n: g * factor for n, g in gradients.items()}


def _added(*gradients: dict) -> dict:
    return {n: sum(g[n] for g in gradients) for n in gradients[0]}


def _close(reference: dict, got: dict) -> bool:
    return relative_error(reference, got) < EXACT


def _ratio(reference: dict, got: dict) -> float:
    """The factor c that makes c × reference closest to `got` (a projection)."""
    dot = sum(float((reference[n].double() * got[n].double()).sum()) for n in reference)
    norm = sum(float((reference[n].double() ** 2).sum()) for n in reference)
    return dot / norm


def _check_step_times(after: list[int], accumulation_steps: int, micro_batches: int) -> None:
    """Failed unless step() came after micro-batches N, 2N, ... (and after a short last window)."""
    n = accumulation_steps
    expected = list(range(n, micro_batches, n)) + [micro_batches]
    if after == expected:
        return
    if not after:
        raise Failed("no_step")
    if after == list(range(1, micro_batches + 1)):
        raise Failed("step_every_micro_batch", n=n)
    if after[:2] == [1, n + 1]:
        raise Failed("off_by_one", n=n)
    raise Failed("step_times", got=after, expected=expected)


def _check_window_gradients(recorder, full, parts, stale, accumulation_steps) -> None:
    """Failed with the commonest mistake the gradients of the windows show, or where they differ."""
    n = accumulation_steps
    for k, (got, reference) in enumerate(zip(recorder.gradients, full)):
        if _close(reference, got):
            continue
        window = k + 1
        if k == 0 and _close(_added(reference, stale), got):
            raise Failed("not_cleared_first")
        if k > 0 and _close(_added(*full[: k + 1]), got):
            raise Failed("not_cleared_after", window=window, previous=window - 1)
        if len(parts[k]) > 1 and _close(_scaled(parts[k][-1], 1 / len(parts[k])), got):
            raise Failed("cleared_each_micro_batch", n=n)
        factor = _ratio(reference, got)
        if _close(_scaled(reference, factor), got):
            if abs(factor - n) < 1e-6 * n:
                raise Failed("not_divided", factor=f"{factor:.1f}", n=n)
            if abs(factor * n * n - n) < 1e-6 * n:
                raise Failed("divided_twice", n=n)
            raise Failed("scaled", factor=f"{factor:.3g}", window=window)
        raise Failed("window_differs", window=window, error=f"{relative_error(reference, got):.2%}")


def _diagnose_loop(loop) -> None:
    """Run the learner's loop on two fresh problems; Failed with the first mistake found."""
    for seed, micro_batches, size, n in ((11, 12, 6, 4), (12, 6, 5, 3)):
        model, batches, n = _case(seed, micro_batches, size, n)
        loss_fn = torch.nn.functional.cross_entropy
        full, parts = _window_references(model, loss_fn, batches, n)
        recorder = CountingRecorder(model, most_steps=10 * micro_batches)
        stale = _stale_gradients(model, seed)
        call_learner(loop, model, recorder, loss_fn, batches, n)
        _check_step_times(recorder.after, n, micro_batches)
        _check_window_gradients(recorder, full, parts, stale, n)


def accumulation_loop(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    optimizer.zero_grad()  # .grad may hold an earlier batch's gradients
    for i, (inputs, targets) in enumerate(micro_batches):
        loss = loss_fn(model(inputs), targets)
        (loss / accumulation_steps).backward()  # .grad += this micro-batch's share
        if (i + 1) % accumulation_steps == 0:  # the window's last micro-batch
            optimizer.step()
            optimizer.zero_grad()  # the next window starts from zero


ACCUMULATION_LOOP = Exercise(
    "l1_loop", 1, _diagnose_loop, accumulation_loop, hint_key="hint_l1_loop"
)


# (micro-batches, N): windows that divide the micro-batches, a short last window, N = 1, N above
WINDOW_CASES = ((12, 4), (10, 4), (7, 3), (5, 1), (3, 8))


def _diagnose_window_end(function) -> None:
    """Ask the learner's function about each micro-batch of each case; Failed naming a mistake."""
    for micro_batches, n in WINDOW_CASES:
        answers = [call_learner(function, i, micro_batches, n) for i in range(micro_batches)]
        for answer in answers:
            if answer is not True and answer is not False:
                raise Failed("ends_not_bool", got=type(answer).__name__)
        after = [i + 1 for i, ends in enumerate(answers) if ends]  # 1-based, as the loop counts
        if after == list(range(n, micro_batches, n)) + [micro_batches]:
            continue
        short = micro_batches % n
        if short and after == list(range(n, micro_batches + 1, n)):
            raise Failed("short_window_dropped", micro_batches=micro_batches, n=n, short=short)
        if n > 1 and after == [micro_batches]:
            raise Failed("one_step_at_the_end", micro_batches=micro_batches, n=n)
        _check_step_times(after, n, micro_batches)


def ends_window(i, micro_batches, accumulation_steps):
    last_of_window = (i + 1) % accumulation_steps == 0  # i counts from 0
    last_of_all = i + 1 == micro_batches  # a short last window steps too
    return last_of_window or last_of_all


WINDOW_END = Exercise("l1_window_end", 1, _diagnose_window_end, ends_window, "hint_l1_window_end")
