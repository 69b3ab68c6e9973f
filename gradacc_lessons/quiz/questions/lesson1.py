"""Lesson 1's self-check: accumulation is a full batch."""

from __future__ import annotations

from gradacc_lessons.quiz.questions.kinds import Prediction, Question

LESSON1 = (
    Question(
        id="l1_scale",
        lesson=1,
        prompt=(
            "Each micro-batch loss is a mean over its samples. You accumulate 4 equal "
            "micro-batches. What must you do to each loss before backward()?"
        ),
        choices=(
            "Divide it by 4, the number of micro-batches",
            "Nothing, the optimizer averages the gradients",
            "Multiply it by 4, once for each micro-batch",
            "Divide it by the number of its own samples",
        ),
        answer=0,
        hint="Four mean losses, each backward adding to .grad: how many mean gradients is that?",
        explanation=(
            "Gradients add up, so four mean losses give four times the mean gradient; dividing "
            "each by 4 makes the sum the mean over the whole batch."
        ),
    ),
    Question(
        id="l1_off_by_one",
        lesson=1,
        prompt=(
            "A loop counts micro-batches with i from 0 and steps when "
            "i % accumulation_steps == 0. What goes wrong?"
        ),
        choices=(
            "It never steps, as i never reaches a multiple of the window",
            "It steps after the first micro-batch: every window is shifted",
            "It steps twice in each window, after its first and last micro-batch",
            "Nothing: it steps once every N micro-batches, as it should",
        ),
        answer=1,
        hint="Try the first micro-batch: what is 0 % 4?",
        explanation=(
            "0 % N == 0, so the loop steps after micro-batch 0 on a single micro-batch, and from "
            "then on each window straddles two real ones. It steps as often as the right loop, "
            "so only a comparison with the full batch catches it; the fix is (i + 1) % N == 0."
        ),
    ),
    Prediction(
        id="l1_predict_steps",
        lesson=1,
        prompt=(
            "train_accumulated gets 10 micro-batches and accumulation_steps=4. How many times "
            "does it call optimizer.step()?"
        ),
        value=3,
        tolerance=0,
        computation=(
            "import torch\n"
            "from gradacc_lessons import train_accumulated\n"
            "from gradacc_lessons.demos.loops import count_steps\n\n"
            "model = torch.nn.Linear(4, 2)\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "micro_batches = [(torch.randn(8, 4), torch.randint(2, (8,)))] * 10\n"
            "loss_fn = torch.nn.functional.cross_entropy\n"
            "count_steps(optimizer, lambda: train_accumulated(\n"
            "    model, optimizer, loss_fn, micro_batches, accumulation_steps=4))"
        ),
        hint="Cut 10 micro-batches into windows of 4. What happens to the short last window?",
        explanation=(
            "Windows of 4, 4 and 2 micro-batches: one step each, the short last window included "
            "(its losses weighted by its own samples), so 3 steps."
        ),
    ),
)
