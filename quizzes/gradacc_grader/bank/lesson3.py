"""Lesson 3, BatchNorm: graded questions and the momentum exercise (5 points)."""

from __future__ import annotations

from .core import Assignment, Choice, Drawn, Exercise, MultipleChoice, distinct, pick


def _percent(share: float) -> str:
    return f"{100 * share:.1f} %"


def draw_running_share(rng, lang="en") -> Drawn:
    """Which share of the running mean lies on one window's data after N updates?"""
    while True:
        momentum = pick(rng, (0.05, 0.1, 0.15, 0.2))
        accumulation_steps = pick(rng, (3, 4, 6, 8))
        drawn = _running_share(momentum, accumulation_steps)
        if distinct(drawn):
            return drawn


def _running_share(momentum: float, accumulation_steps: int) -> Drawn:
    share = 1 - (1 - momentum) ** accumulation_steps
    prompt = (
        f"A BatchNorm layer has `momentum={momentum}`. Training accumulates "
        f"**{accumulation_steps}** micro-batches per optimizer step, in train mode. Right after "
        "one window, which share of the running mean's value comes from that window's "
        "micro-batches (the rest is what the running mean held before)?"
    )
    right = Choice(
        _percent(share),
        f"Each of the {accumulation_steps} updates keeps {1 - momentum:g} of the old value: "
        f"1 - {1 - momentum:g}^{accumulation_steps} of the result is new data.",
    )
    wrong = (
        Choice(
            _percent(momentum),
            "That is one update, what a full batch would give. Every train-mode forward pass "
            "updates the running statistics: a window makes N updates.",
        ),
        Choice(
            _percent(min(momentum * accumulation_steps, 0.99)),
            "Adding the momentum N times ignores that each update also shrinks the weight of "
            "what the earlier updates brought.",
        ),
        Choice(
            _percent(1 - (1 - momentum) ** (1 / accumulation_steps)),
            "That is the compensating momentum, the one that would bring the share back to "
            "one update's. The question asks the share with the layer as it is.",
        ),
        Choice(
            _percent((1 - momentum) ** accumulation_steps),
            "That is the share left to the old value: each update keeps 1 - momentum of it, "
            "and the rest is the window's data.",
        ),
        Choice(
            _percent(1 - (1 - momentum) ** (accumulation_steps - 1)),
            "That counts one update too few: every one of the N micro-batches' forward passes "
            "updates the running mean.",
        ),
    )
    return Drawn(prompt, right, wrong)


LAYERS_DIFFER = {
    "right": (
        "`nn.BatchNorm1d(64)`, model in `train()` mode",
        "In train mode BatchNorm normalises each micro-batch with that micro-batch's "
        "statistics: the forward pass itself is not the full batch's.",
    ),
    "eval": (
        "`nn.BatchNorm1d(64)`, model in `eval()` mode",
        "In eval mode BatchNorm uses its stored running statistics, the same numbers for "
        "every micro-batch: it matches the full batch.",
    ),
    "group": (
        "`nn.GroupNorm(8, 64)`, model in `train()` mode",
        "GroupNorm computes its statistics inside each sample, so splitting the batch "
        "changes nothing.",
    ),
    "layer": (
        "`nn.LayerNorm(64)`, model in `train()` mode",
        "LayerNorm computes its statistics inside each sample, so splitting the batch "
        "changes nothing.",
    ),
}
LAYERS_MATCH = {
    "momentum": (
        "`nn.BatchNorm1d(64, momentum=0.025)`, `train()`",
        "A smaller momentum only changes the running statistics; the forward pass "
        "still normalises with each micro-batch's own statistics.",
    ),
    "scaled": (
        "`nn.BatchNorm1d(64)`, `train()`, loss / N",
        "Dividing the loss fixes the gradients' sum, not the forward pass, which "
        "still normalises with each micro-batch's own statistics.",
    ),
    "sync": (
        "`nn.SyncBatchNorm(64)`, one process, `train()`",
        "SyncBatchNorm shares statistics across processes, not across the micro-batches "
        "of one process: each micro-batch still has its own.",
    ),
}


def draw_norm_layer(rng, lang="en") -> Drawn:
    """Which normalisation layer breaks (or keeps) equality with the full batch?"""
    if rng.random() < 0.5:
        prompt = (
            "Four copies of a network differ only in one normalisation layer. You accumulate "
            "4 micro-batches of 16 samples and compare the gradient with one batch of 64. "
            "Which copy's gradients differ from the full batch's beyond float rounding?"
        )
        right = Choice(*LAYERS_DIFFER["right"])
        wrong = tuple(Choice(*LAYERS_DIFFER[k]) for k in ("eval", "group", "layer"))
        return Drawn(prompt, right, wrong)
    prompt = (
        "Four copies of a network differ only in one normalisation layer. You accumulate "
        "4 micro-batches of 16 samples and compare the gradient with one batch of 64. Which "
        "copy's gradients match the full batch's, up to float rounding?"
    )
    kind = pick(rng, ("group", "layer"))
    right = Choice(LAYERS_DIFFER[kind][0], LAYERS_DIFFER[kind][1])
    wrong = tuple(Choice(*LAYERS_MATCH[k]) for k in ("momentum", "scaled", "sync"))
    return Drawn(prompt, right, wrong)


MOMENTUM_PROMPT = """\
### Exercise: compensate BatchNorm's momentum ({points})

With N micro-batches per optimizer step, every BatchNorm layer updates its running statistics N
times per step instead of once, so they follow recent data much more than the model's author
meant. Write `compensate_momentum(model, accumulation_steps)`: it sets the `momentum` of **every
BatchNorm layer** of `model` so that `accumulation_steps` updates put the same weight on new
data as one update with the layer's current momentum. A layer whose momentum is `None` (a plain
average of all batches so far) stays as it is, and so does every other layer. The function
returns nothing. The grader checks several models, part of the points for each."""

MOMENTUM_STARTER = '''\
import torch


def compensate_momentum(model, accumulation_steps):
    """Set every BatchNorm layer's momentum for windows of accumulation_steps micro-batches."""'''

MOMENTUM_SOLUTION = """\
    for module in model.modules():
        norm = isinstance(module, torch.nn.modules.batchnorm._BatchNorm)
        if norm and module.momentum is not None:
            # N updates keep (1 - m')^N of the old value; one update keeps 1 - m
            module.momentum = 1 - (1 - module.momentum) ** (1 / accumulation_steps)"""

MOMENTUM_PARTIAL = """\
    for module in model.modules():
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            module.momentum = 1 - (1 - module.momentum) ** (1 / accumulation_steps)"""

MOMENTUM_CHECK = """\
def _quick_check():
    norm = torch.nn.BatchNorm1d(3, momentum=0.1)
    compensate_momentum(torch.nn.Sequential(torch.nn.Linear(3, 3), norm), 4)
    new = norm.momentum
    assert new != 0.1, "the momentum is unchanged: 4 updates put 34 % on new data, not 10 %"
    assert abs(new - 0.1 / 4) > 1e-6, (
        "momentum / N is close but not right: 4 updates with 0.025 keep 0.975^4 of the old value"
    )
    kept = (1 - new) ** 4
    assert abs(kept - 0.9) < 1e-9, f"4 updates with {new:.4g} keep {kept:.4f} of the old value"
    print("Quick check passed: one BatchNorm1d, N = 4. The grader tries more models.")


_quick_check()"""

MOMENTUM = Exercise(
    id="l3_momentum",
    module="bn_momentum",
    goal="compensate BatchNorm's momentum for N updates per step",
    prompt={"en": MOMENTUM_PROMPT},
    starter=MOMENTUM_STARTER,
    solution=MOMENTUM_SOLUTION,
    check={"en": MOMENTUM_CHECK},
    partial=MOMENTUM_PARTIAL,
    partial_fails=("a cumulative average is left alone",),
)

LESSON3 = Assignment(
    name="lesson3_batchnorm",
    lesson="3",
    title={"en": "Lesson 3 quiz: BatchNorm"},
    intro={
        "en": "Two questions and one exercise on lesson 3: what BatchNorm does to accumulated "
        "gradients, and to its running statistics."
    },
    items=(
        MultipleChoice(
            "l3_running_share", "compute", "running statistics after a window", draw_running_share
        ),
        MultipleChoice("l3_norm_layer", "recall", "which normalisation matches", draw_norm_layer),
        MOMENTUM,
    ),
)
