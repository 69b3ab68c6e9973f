"""Lesson 2's self-check: scaling the loss."""

from __future__ import annotations

from gradacc_lessons.quiz.questions.kinds import Prediction, Question

LESSON2 = (
    Question(
        id="l2_uneven",
        lesson=2,
        prompt=(
            "A window holds micro-batches of 24, 24 and 16 samples, each loss a mean over its "
            "micro-batch. Which weights make the accumulated gradient equal to the full batch's?"
        ),
        choices=(
            "1/3 each, since the window holds three micro-batches",
            "1 each, since the optimizer divides by the batch size",
            "1/24, 1/24 and 1/16, one over each micro-batch's size",
            "24/64, 24/64 and 16/64: each one's share of samples",
        ),
        answer=3,
        hint=(
            "The full batch's loss is a sum over 64 samples divided by 64. Which part of that "
            "sum is one micro-batch's mean?"
        ),
        explanation=(
            "The full-batch mean is a sum over all 64 samples divided by 64; a micro-batch's mean "
            "times its share (size/64) is exactly its part of that sum. 1/N over-weights the "
            "samples of the smaller micro-batch."
        ),
    ),
    Question(
        id="l2_tokens",
        lesson=2,
        prompt=(
            "Padded sequences, cross-entropy averaged over the real tokens of each micro-batch, "
            "each loss divided by N. What goes wrong, and what fixes it?"
        ),
        choices=(
            "Nothing, if the micro-batches hold the same number of sequences",
            "Tokens in short micro-batches weigh more; divide by the window's tokens",
            "Padding tokens enter the loss; a larger ignore_index fixes it",
            "The gradient is N times too large; dividing by N twice fixes it",
        ),
        answer=1,
        hint="Each micro-batch's mean divides by its own count of real tokens. Are those equal?",
        explanation=(
            "Each micro-batch's mean divides by its own token count, so the same sequence counts "
            "more in a short micro-batch. Summing token losses and dividing by the window's token "
            "count (num_items_in_batch in Transformers since the 2024 fix) is the full-batch mean."
        ),
    ),
    Question(
        id="l2_scheduler",
        lesson=2,
        prompt=(
            "With N = 4 micro-batches per window, a warm-up scheduler is stepped after every "
            "micro-batch. What happens?"
        ),
        choices=(
            "Nothing: the learning rate only matters at optimizer.step()",
            "Warm-up ends 4 times too early; step it once per update",
            "Warm-up lasts 4 times longer, as steps are skipped",
            "The learning rate is divided by 4 at every optimizer step",
        ),
        answer=1,
        hint="A scheduler counts its own step() calls. How many does one window make?",
        explanation=(
            "A schedule counts its own step() calls. Stepping it per micro-batch advances it N "
            "times per update, so it reaches every milestone after 1/N of the samples."
        ),
    ),
    Prediction(
        id="l2_predict_last_window",
        lesson=2,
        prompt=(
            "An epoch of 9 equal micro-batches with accumulation_steps=4 ends in a window of "
            "one micro-batch, and the loop divides every loss by 4. What is the relative error "
            "of that last window's gradient (0 means exact, 1 means all of it wrong)?"
        ),
        value=0.75,
        tolerance=0.01,
        computation=(
            "from gradacc_lessons.demos.pitfalls import compute_last_window_damage\n\n"
            "damage = compute_last_window_damage(micro_batch_count=9, accumulation_steps=4)\n"
            'damage.details["per_window"]["broken"][-1]'
        ),
        hint=(
            "The last window should carry the whole gradient of its samples. What fraction of "
            "it does one micro-batch divided by 4 carry?"
        ),
        explanation=(
            "The window holds one micro-batch divided by 4: a quarter of the gradient it stands "
            "for, so the error is 1 - 1/4 = 0.75 (the lesson's window of two gave 1 - 2/4 = 0.5)."
        ),
    ),
)
