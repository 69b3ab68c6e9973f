"""Lesson 4, peak memory: graded questions and the planner exercise (6 points)."""

from __future__ import annotations

from .core import Assignment, Choice, Drawn, Exercise, MultipleChoice, distinct, mib, pick

OPTIMIZERS = {  # name as the prompt shows it -> values of state per parameter
    "`torch.optim.SGD(params, lr=0.1)`": 0,
    "`torch.optim.SGD(params, lr=0.1, momentum=0.9)`": 1,
    "`torch.optim.Adam(params, lr=1e-3)`": 2,
}
COPIES = {  # copies of the parameters counted -> what that count holds
    1: "the parameters alone: backward writes a gradient of the same size for each of them",
    2: "parameters and gradients only: this optimizer keeps state too",
    3: "parameters, gradients and one value of state per parameter (SGD's momentum buffer)",
    4: "parameters, gradients and two values of state per parameter (Adam's two moments)",
    5: "three values of state per parameter, more than any optimizer here keeps",
}


def draw_floor(rng, lang="en") -> Drawn:
    """Parameters + gradients + optimizer state of a given MLP and optimizer."""
    while True:
        inputs, hidden, outputs = pick(rng, (784, 512, 1024)), pick(rng, (256, 512, 1000)), 10
        name = pick(rng, OPTIMIZERS)
        count = inputs * hidden + hidden + hidden * hidden + hidden + hidden * outputs + outputs
        right = 2 + OPTIMIZERS[name]
        others = [k for k in COPIES if k != right]
        rng.shuffle(others)
        drawn = _floor(inputs, hidden, outputs, name, count, right, others[:3])
        if distinct(drawn):
            return drawn


def _floor(inputs, hidden, outputs, name, count, right, others) -> Drawn:
    prompt = (
        f"A float32 MLP has layers of {inputs} → {hidden} → {hidden} → {outputs} units "
        "(`nn.Linear` layers with biases, ReLU between them) and trains with "
        f"{name}. How much memory do its parameters, their gradients and the optimizer's state "
        "take together, once the first step has run (ignore any per-tensor counters)? "
        "1 MiB = 2²⁰ bytes. Lesson 4's `gradacc_lessons.memory.estimate_training_memory` "
        "computes it for a model and optimizer you build."
    )

    def copies(k: int, why: str) -> Choice:
        return Choice(mib(k * 4 * count), f"{k} × {count:,} parameters × 4 bytes counts {why}.")

    return Drawn(
        prompt,
        copies(right, "exactly what stays in memory whatever the micro-batch"),
        tuple(copies(k, COPIES[k]) for k in others),
    )


def draw_peak(rng, lang="en") -> Drawn:
    """The analytic peak of a window of N micro-batches."""
    while True:
        floor = pick(rng, range(300, 1500, 50))
        per_sample = pick(rng, (1.5, 2.0, 2.5, 3.0, 4.0, 6.0))
        batch = pick(rng, (128, 256, 512))
        accumulation_steps = pick(rng, (4, 8, 16))
        drawn = _peak(floor, per_sample, batch, accumulation_steps)
        if distinct(drawn):
            return drawn


def _peak(floor, per_sample, batch, accumulation_steps) -> Drawn:
    micro_batch_size = batch // accumulation_steps
    prompt = (
        f"Parameters, gradients and optimizer state of a model take **{floor} MiB**; its "
        f"activations take **{per_sample} MiB per sample**. You train with an effective batch "
        f"of {batch} samples, accumulated over **{accumulation_steps}** micro-batches. What peak "
        "memory does lesson 4's analytic model predict?"
    )
    right = Choice(
        f"{floor + micro_batch_size * per_sample:g} MiB",
        f"The floor stays whole; activations are kept for one micro-batch of {micro_batch_size} "
        "samples.",
    )
    wrong = (
        Choice(
            f"{floor + batch * per_sample:g} MiB",
            "That keeps the activations of the whole effective batch; accumulation keeps those "
            "of one micro-batch at a time.",
        ),
        Choice(
            f"{(floor + batch * per_sample) / accumulation_steps:g} MiB",
            "That divides the floor too. Weights, gradients and optimizer state exist whatever "
            "the micro-batch: only activations shrink.",
        ),
        Choice(
            f"{micro_batch_size * per_sample:g} MiB",
            "Those are the activations of one micro-batch alone; the floor of weights, "
            "gradients and optimizer state comes on top.",
        ),
        Choice(
            f"{floor * accumulation_steps + micro_batch_size * per_sample:g} MiB",
            "That keeps a floor per micro-batch. The micro-batches share one copy of the "
            "weights, and their gradients add up in one set of .grad buffers.",
        ),
        Choice(
            f"{floor + accumulation_steps * per_sample:g} MiB",
            f"That keeps the activations of N = {accumulation_steps} samples; a micro-batch holds "
            f"{micro_batch_size} samples.",
        ),
    )
    return Drawn(prompt, right, wrong)


def draw_time(rng, lang="en") -> Drawn:
    """What accumulation does to the time of an update when the batch already fits."""
    accumulation_steps = pick(rng, (4, 8, 16))
    prompt = (
        f"Your whole batch fits in memory. You split it into {accumulation_steps} accumulated "
        "micro-batches anyway. How does the time of one optimizer update change?"
    )
    right = Choice(
        "About the same or longer: small passes use the hardware less well",
        "Accumulation buys memory, not speed: the same samples go through in smaller, less "
        "efficient pieces, plus a Python loop around them.",
    )
    wrong = (
        Choice(
            f"It shrinks about {accumulation_steps} times, since each pass sees "
            f"{accumulation_steps} times fewer samples",
            "Each pass is shorter, but there are N of them: the total work per update is the "
            "same, done in smaller pieces.",
        ),
        Choice(
            "It shrinks, because the optimizer now steps less often per sample",
            "The optimizer steps once per update in both cases: once per batch, once per "
            "window of the same samples.",
        ),
        Choice(
            f"It grows exactly {accumulation_steps} times: every micro-batch costs a whole batch",
            "A micro-batch costs less than the whole batch; the loss of efficiency is real but "
            "far from a factor N (lesson 4 measured it).",
        ),
    )
    return Drawn(prompt, right, wrong)


PLAN_PROMPT = """\
### Exercise: plan the micro-batches for a memory budget ({points})

Lesson 4's analytic model predicts the peak memory of a window as
`floor_bytes + micro_batch_size * bytes_per_sample` (the floor: parameters, gradients, optimizer
state). Write `plan_micro_batches(effective_batch, floor_bytes, bytes_per_sample, budget_bytes)`.
It returns `(micro_batch_size, accumulation_steps)`: the **largest** micro-batch that divides the
effective batch (so that every window has equal micro-batches) and whose predicted peak is at most
the budget, and the number of micro-batches that make up the effective batch. When not even one
sample fits, it raises `ValueError` with a message that names the budget. The grader tries
several budgets, part of the points for each."""

PLAN_STARTER = '''\
def plan_micro_batches(effective_batch, floor_bytes, bytes_per_sample, budget_bytes):
    """(micro_batch_size, accumulation_steps): the largest equal micro-batch whose peak fits."""'''

PLAN_SOLUTION = """\
    for micro_batch_size in range(effective_batch, 0, -1):
        fits = floor_bytes + micro_batch_size * bytes_per_sample <= budget_bytes
        if effective_batch % micro_batch_size == 0 and fits:
            return micro_batch_size, effective_batch // micro_batch_size
    raise ValueError(
        f"budget_bytes={budget_bytes} is below the peak of a single sample "
        f"({floor_bytes + bytes_per_sample} bytes): raise the budget or shrink the model"
    )"""

PLAN_PARTIAL = PLAN_SOLUTION.replace("<= budget_bytes", "< budget_bytes")

PLAN_CHECK = """\
def _quick_check():
    MiB = 2**20
    assert plan_micro_batches(64, 100 * MiB, 1 * MiB, 200 * MiB) == (64, 1), (
        "64 samples need 164 MiB of a 200 MiB budget: no accumulation needed"
    )
    plan = plan_micro_batches(64, 100 * MiB, 4 * MiB, 200 * MiB)
    assert plan == (16, 4), f"with 4 MiB per sample, 16 samples fit (164 MiB), not {plan}"
    try:
        plan_micro_batches(64, 300 * MiB, 1 * MiB, 200 * MiB)
    except ValueError:
        pass
    else:
        raise AssertionError("the floor alone exceeds the budget: that must raise ValueError")
    print("Quick check passed: three budgets. The grader tries more.")


_quick_check()"""

PLAN = Exercise(
    id="l4_plan",
    module="micro_batch_plan",
    goal="plan micro-batches for a memory budget",
    prompt={"en": PLAN_PROMPT},
    starter=PLAN_STARTER,
    solution=PLAN_SOLUTION,
    check={"en": PLAN_CHECK},
    partial=PLAN_PARTIAL,
    partial_fails=("an exact fit",),
)

LESSON4 = Assignment(
    name="lesson4_memory",
    lesson="4",
    title={"en": "Lesson 4 quiz: peak memory"},
    intro={
        "en": "Three questions and one exercise on lesson 4: what stays in memory whatever the "
        "micro-batch, what shrinks with it, what it costs in time, and how to plan for a budget."
    },
    items=(
        MultipleChoice("l4_floor", "compute", "memory of a given model and optimizer", draw_floor),
        MultipleChoice("l4_peak", "compute", "analytic peak of a window", draw_peak),
        MultipleChoice("l4_time", "recall", "time of an accumulated update", draw_time),
        PLAN,
    ),
)
