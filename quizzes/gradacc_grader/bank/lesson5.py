"""Lesson 5, training curves: graded questions (3 points, 2 of them computed)."""

from __future__ import annotations

import math

from .core import Assignment, Choice, Drawn, MultipleChoice, distinct, pick


def draw_steps_per_epoch(rng, lang="en") -> Drawn:
    """Optimizer steps per epoch of the accumulated run."""
    while True:
        samples = pick(rng, range(1000, 2001, 37))
        batch, micro_batch_size = pick(rng, ((128, 32), (256, 64), (96, 16), (120, 24)))
        drawn = _steps_per_epoch(samples, batch, micro_batch_size)
        if distinct(drawn) and samples % batch:
            return drawn


def _steps_per_epoch(samples, batch, micro_batch_size) -> Drawn:
    accumulation_steps = batch // micro_batch_size
    prompt = (
        f"Lesson 5's accumulated run cuts each epoch of **{samples}** shuffled training samples "
        f"into micro-batches of {micro_batch_size} and steps once per window of "
        f"{accumulation_steps} micro-batches, the same update as the large-batch run's batches "
        f"of {batch}. The last, shorter window of an epoch steps too. How many optimizer steps "
        "does the accumulated run take per epoch?"
    )
    right = Choice(
        str(math.ceil(samples / batch)),
        f"One step per {batch} samples, and one more for the shorter last window: as many "
        "as the large-batch run.",
    )
    wrong = (
        Choice(
            str(math.ceil(samples / micro_batch_size)),
            "That is a step per micro-batch, the small-batch run's count. Accumulation steps "
            "once per window.",
        ),
        Choice(
            str(samples // batch),
            "That drops the last, shorter window, which the run steps on too.",
        ),
        Choice(
            str(math.ceil(samples / (batch * accumulation_steps))),
            f"That counts windows of {batch * accumulation_steps} samples; a window of "
            f"{accumulation_steps} micro-batches of {micro_batch_size} holds {batch}.",
        ),
        Choice(
            str(math.ceil(samples / batch) + 1),
            "That adds a step after the first micro-batch, as the off-by-one loop does; a "
            "correct loop steps at the end of each window only.",
        ),
        Choice(
            str(samples // micro_batch_size),
            "That is a step per whole micro-batch, the small-batch run's way. Accumulation "
            "steps once per window.",
        ),
    )
    return Drawn(prompt, right, wrong)


def draw_forward_passes(rng, lang="en") -> Drawn:
    """Forward passes of the accumulated run over several epochs."""
    while True:
        samples = pick(rng, range(600, 1501, 29))
        micro_batch_size, accumulation_steps = pick(rng, ((16, 4), (32, 4), (24, 5), (16, 8)))
        epochs = pick(rng, (3, 4, 5, 6))
        drawn = _forward_passes(samples, micro_batch_size, accumulation_steps, epochs)
        if (
            distinct(drawn)
            and samples % micro_batch_size
            and (samples // micro_batch_size) % accumulation_steps
        ):
            return drawn


def _forward_passes(samples, micro_batch_size, accumulation_steps, epochs) -> Drawn:
    per_epoch = math.ceil(samples / micro_batch_size)
    prompt = (
        f"The accumulated run trains **{epochs}** epochs on **{samples}** samples, in "
        f"micro-batches of {micro_batch_size} (the last micro-batch of an epoch may be smaller), "
        f"with `accumulation_steps = {accumulation_steps}`. How many forward passes does the "
        "model make in all?"
    )
    right = Choice(
        str(epochs * per_epoch),
        f"One forward pass per micro-batch: {per_epoch} micro-batches per epoch, {epochs} epochs.",
    )
    wrong = (
        Choice(
            str(epochs * math.ceil(samples / (micro_batch_size * accumulation_steps))),
            "That counts optimizer steps. Every micro-batch of a window goes forward and "
            "backward on its own.",
        ),
        Choice(
            str(epochs * samples),
            "That counts samples: a forward pass takes a whole micro-batch at once.",
        ),
        Choice(
            str(per_epoch),
            f"That is one epoch's count; the run trains {epochs} epochs, each going through "
            "every micro-batch again.",
        ),
        Choice(
            str(epochs * (samples // micro_batch_size)),
            "That leaves out the last, smaller micro-batch of each epoch, which goes forward "
            "and backward too.",
        ),
        Choice(
            str(2 * epochs * per_epoch),
            "That counts the backward passes too; each micro-batch makes one forward and one "
            "backward pass.",
        ),
    )
    return Drawn(prompt, right, wrong)


def draw_same_run(rng, lang="en") -> Drawn:
    """Which of lesson 5's three runs end with the same weights?"""
    batch, micro_batch_size = pick(rng, ((128, 32), (256, 64), (96, 16)))
    accumulation_steps = batch // micro_batch_size
    prompt = (
        "You train three copies of one network for the same epochs, on the same shuffled "
        "samples, with AdamW, gradient clipping and a learning-rate schedule over epochs: one "
        f"with batches of {batch}, one with micro-batches of {micro_batch_size} and "
        f"{accumulation_steps} of them per optimizer step, one with batches of "
        f"{micro_batch_size} and no accumulation. Which end with the same weights, up to float32 "
        "rounding?"
    )
    right = Choice(
        f"Batches of {batch}, and micro-batches of {micro_batch_size} with accumulation",
        "Each accumulated window is the update of one batch of the same samples: same updates, "
        "same run.",
    )
    wrong = (
        Choice(
            "All three, since every epoch they go through the same samples",
            f"Batches of {micro_batch_size} make {accumulation_steps} times as many, different "
            "updates: another run, even on the same samples.",
        ),
        Choice(
            f"Micro-batches of {micro_batch_size} with accumulation, and batches of "
            f"{micro_batch_size}",
            f"Both run forward passes of {micro_batch_size} samples, but the updates differ: one "
            f"per {batch} samples against one per {micro_batch_size}.",
        ),
        Choice(
            "None of them: accumulation adds noise of its own to the weights",
            "Accumulated and full-batch gradients agree to rounding; the lesson measured "
            "differences at float32's precision only.",
        ),
    )
    return Drawn(prompt, right, wrong)


LESSON5 = Assignment(
    name="lesson5_training",
    lesson="5",
    title={"en": "Lesson 5 quiz: training curves"},
    intro={
        "en": "Three questions on lesson 5: what an accumulated run does per epoch, and which "
        "runs are the same run."
    },
    items=(
        MultipleChoice("l5_steps", "compute", "optimizer steps per epoch", draw_steps_per_epoch),
        MultipleChoice("l5_forward", "compute", "forward passes of a run", draw_forward_passes),
        MultipleChoice("l5_same_run", "recall", "which runs are the same", draw_same_run),
    ),
)
