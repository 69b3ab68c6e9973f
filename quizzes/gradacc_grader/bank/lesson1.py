"""Lesson 1, accumulation is a full batch: graded questions (4 points, 3 of them computed)."""

from __future__ import annotations

from .core import Assignment, Choice, Drawn, MultipleChoice, distinct, pick

OFF_BY_ONE_LOOP = """\
```python
for i, (inputs, targets) in enumerate(micro_batches):
    loss = loss_fn(model(inputs), targets) / accumulation_steps
    loss.backward()
    if i % accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
```"""


def _numbers(values) -> str:
    return ", ".join(str(v) for v in values)


def draw_off_by_one(rng, lang="en") -> Drawn:
    """After which micro-batches does the loop with `i % N == 0` step?"""
    accumulation_steps = pick(rng, (3, 4))
    count = pick(
        rng,
        [
            m
            for m in range(2 * accumulation_steps + 1, 3 * accumulation_steps + 2)
            if m % accumulation_steps
        ],
    )
    ones = range(1, count + 1)
    prompt = (
        f"The loop below runs over {count} micro-batches with `accumulation_steps = "
        f"{accumulation_steps}`.\n\n{OFF_BY_ONE_LOOP}\n\nCounting the micro-batches from 1, "
        "after which of them does it call `optimizer.step()`?"
    )
    right = Choice(
        _numbers(m for m in ones if (m - 1) % accumulation_steps == 0),
        "`i` counts from 0, and `0 % N == 0`: the loop steps right after the first micro-batch, "
        "then every N-th one, so its windows straddle the real ones.",
    )
    wrong = (
        Choice(
            _numbers(m for m in ones if m % accumulation_steps == 0),
            "That is the fixed loop, `(i + 1) % N == 0`. This one tests `i`, which starts at 0, "
            "and `0 % N == 0` is true.",
        ),
        Choice(
            _numbers([*(m for m in ones if m % accumulation_steps == 0), count]),
            "That is a correct loop that also steps on the short last window. This one tests "
            "`i % N == 0`, which is true for i = 0.",
        ),
        Choice(
            _numbers(m for m in ones if (m - 1) % accumulation_steps == 0 and m > 1),
            "Close: `i % N == 0` is true at i = 0 too, so the first micro-batch already ends a "
            "(one micro-batch long) window.",
        ),
    )
    return Drawn(prompt, right, wrong)


def draw_two_windows(rng, lang="en") -> Drawn:
    """Which gradients do two steps use when a stale gradient was never cleared?"""
    while True:
        stale = pick(rng, (3, 4, 5, 6, 7))
        grads = [pick(rng, (-3, -2, -1, 1, 2, 3, 4)) for _ in range(4)]
        drawn = _two_windows(stale, grads)
        if distinct(drawn) and 0 not in (grads[0] + grads[1], grads[2] + grads[3]):
            return drawn


def _two_windows(stale: int, grads: list[int]) -> Drawn:
    first, second = grads[0] + grads[1], grads[2] + grads[3]
    prompt = (
        f"A model has a single weight `w`. Before training, `w.grad` still holds **{stale}** "
        "from an evaluation run. A loop with `accumulation_steps = 2` then runs four "
        "micro-batches, and calls `optimizer.zero_grad()` only right after each "
        "`optimizer.step()`. The backward passes of the four (already scaled) micro-batch "
        f"losses give `w` the gradients {_numbers(grads)}, in this order.\n\nWhich gradients "
        "do the two optimizer steps use?"
    )
    right = Choice(
        f"{stale + first} and {second}",
        "backward() adds to whatever `.grad` holds: the stale value joins the first window's "
        "sum, and the zero_grad() after the first step clears it for the second window.",
    )
    wrong = (
        Choice(
            f"{first} and {second}",
            "That is what a loop that clears the gradients *before* the first micro-batch "
            "gets. This one never does, so the stale gradient joins the first window.",
        ),
        Choice(
            f"{stale + first} and {stale + second}",
            "zero_grad() after the first step clears everything in `.grad`, the stale value "
            "included: it cannot reach the second window.",
        ),
        Choice(
            f"{stale + first} and {stale + first + second}",
            "The loop clears `.grad` right after each step, so the second window starts "
            "from zero and keeps only its own two gradients.",
        ),
    )
    return Drawn(prompt, right, wrong)


def draw_window_gradient(rng, lang="en") -> Drawn:
    """What does .grad hold after a window when each mean loss is divided by N?"""
    accumulation_steps = pick(rng, (3, 4, 5))
    while True:
        grads = [pick(rng, range(-6, 10)) for _ in range(accumulation_steps)]
        total = sum(grads)
        values = [
            total / accumulation_steps,
            total,
            grads[-1],
            total / accumulation_steps**2,
            total / (accumulation_steps - 1),
        ]
        if len({f"{v:.2f}" for v in values}) == 5 and total % accumulation_steps:
            break
    prompt = (
        f"A window holds {accumulation_steps} micro-batches of equal size. Every micro-batch's "
        f"loss averages over that micro-batch and is divided by {accumulation_steps} before "
        "`backward()`; nothing clears `.grad` inside the window. On their own, the micro-batch "
        f"losses have the gradients {_numbers(grads)} with respect to a weight `w`.\n\nWhat does "
        "`w.grad` hold just before `optimizer.step()`?"
    )
    right = Choice(
        f"{total / accumulation_steps:.2f}",
        "Each backward adds its gradient divided by N: the sum over the window divided by N is "
        "the mean, the full batch's gradient.",
    )
    wrong = (
        Choice(
            f"{total:.2f}",
            "That is the plain sum: each loss is divided by N before backward, so each "
            "gradient enters `.grad` divided by N too.",
        ),
        Choice(
            f"{grads[-1]:.2f}",
            "Only the last micro-batch's gradient would stay if `.grad` were cleared inside "
            "the window; here the gradients add up.",
        ),
        Choice(
            f"{total / accumulation_steps**2:.2f}",
            "That divides by N twice. The losses are divided once, and backward() adds the "
            "gradients without averaging them again.",
        ),
        Choice(
            f"{total / (accumulation_steps - 1):.2f}",
            "That divides the sum by N - 1. Each of the N losses is divided by N, so the sum "
            "of their gradients is divided by N.",
        ),
    )
    return Drawn(prompt, right, wrong)


def draw_rounding(rng, lang="en") -> Drawn:
    """What does a 1e-7 float32 gap between accumulated and full-batch gradients show?"""
    accumulation_steps = pick(rng, (4, 6, 8))
    gap32 = pick(rng, ("1e-7", "2e-7", "3e-7"))
    prompt = (
        "You compare the gradients of a batch computed at once and accumulated over "
        f"{accumulation_steps} micro-batches, correctly weighted. In float32 they differ by "
        f"about {gap32} of the largest gradient; in float64 by about 1e-16. Against a float64 "
        "reference, both float32 gradients are off by about the same amount. What does this show?"
    )
    right = Choice(
        "Only the order of the additions differs: both are equally good",
        "Floating-point addition is not associative: the two sums round differently, and "
        "neither is closer to the exact gradient.",
    )
    wrong = (
        Choice(
            "Accumulation loses precision, so accumulate in float64 instead",
            "The float64 reference shows the accumulated float32 gradient is as accurate as "
            "the full-batch one: nothing is lost.",
        ),
        Choice(
            "One micro-batch's loss got a slightly wrong weight in float32",
            "A wrong weight shows as an error of percents, in float64 too; here float64 agrees "
            "to 1e-16.",
        ),
        Choice(
            "The error grows with N, so keep the number of micro-batches low",
            "Rounding gaps stay at the level of float32's precision for any N; they do not "
            "build up into an error of the method.",
        ),
    )
    return Drawn(prompt, right, wrong)


LESSON1 = Assignment(
    name="lesson1_full_batch",
    lesson="1",
    title={"en": "Lesson 1 quiz: accumulation is a full batch"},
    intro={
        "en": "Four questions on lesson 1: how gradients add up in `.grad`, when a loop steps "
        "and clears, and what float32 rounding means. Three of them ask you to work out a "
        "number: add cells of your own to compute if you like."
    },
    items=(
        MultipleChoice("l1_off_by_one", "compute", "steps of the off-by-one loop", draw_off_by_one),
        MultipleChoice("l1_two_windows", "compute", "a stale gradient in .grad", draw_two_windows),
        MultipleChoice(
            "l1_window_gradient", "compute", ".grad after a window", draw_window_gradient
        ),
        MultipleChoice("l1_rounding", "recall", "float32 vs float64 gaps", draw_rounding),
    ),
)
