"""Lesson 5's self-check: training curves."""

from __future__ import annotations

from gradacc_lessons.quiz.questions.kinds import Prediction, Question

LESSON5 = (
    Question(
        id="l5_curves",
        lesson=5,
        prompt=(
            "Three runs share the model, data order, AdamW, clipping and learning-rate schedule: "
            "batches of 128; micro-batches of 32 accumulated 4 at a time; batches of 32 without "
            "accumulation. Which runs have the same training curve?"
        ),
        choices=(
            "The batch of 128 and the accumulated run, up to rounding",
            "All three, since they see the same samples each epoch",
            "The accumulated run and the batches of 32: both see 32",
            "None of them: accumulation always adds noise to a curve",
        ),
        answer=0,
        hint="Which runs make the same updates, one for every 128 samples?",
        explanation=(
            "Each accumulated window is the same update as one batch of 128. A batch of 32 "
            "without accumulation is an optimizer step on its own: other updates, another run."
        ),
    ),
    Question(
        id="l5_scheduler",
        lesson=5,
        prompt=(
            "You switch a run from batches of 128 to micro-batches of 32 with 4 accumulation "
            "steps. How often must scheduler.step() and gradient clipping now run?"
        ),
        choices=(
            "After every micro-batch, four times as often as before",
            "Clipping after each micro-batch, the scheduler per window",
            "Once per optimizer step: after each window of four",
            "Only once per epoch, after the last window of the epoch",
        ),
        answer=2,
        hint="What does the schedule count, and which gradient must clipping see?",
        explanation=(
            "The schedule counts optimizer steps, and clipping must see the gradient of the "
            "whole effective batch: both happen once per window, so the run stays the same."
        ),
    ),
    Prediction(
        id="l5_predict_steps",
        lesson=5,
        prompt=(
            "Lesson 5's accumulated run, with batch=256 and micro_batch_size=64 instead: 10 epochs "
            "over the 1,536 training digits. How many optimizer steps does it take in all?"
        ),
        value=60,
        tolerance=0,
        computation=(
            "from gradacc_lessons.demos.training import TrainingConfig, train_run\n\n"
            'run = train_run("accumulated", TrainingConfig(batch=256, micro_batch_size=64))\n'
            "len(run.train_loss)  # one loss per optimizer step"
        ),
        hint="How many samples are behind one step, and how many steps make an epoch?",
        explanation=(
            "One step per 256 samples: 1,536 / 256 = 6 steps per epoch, 60 in 10 epochs, "
            "whatever the micro-batch. The micro-batch of 64 only sets N = 4."
        ),
    ),
)
