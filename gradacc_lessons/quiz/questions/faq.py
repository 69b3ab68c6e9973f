"""The five FAQ questions of the course's source guide, in its order (the self-study quiz)."""

from __future__ import annotations

from gradacc_lessons.quiz.questions.kinds import Question

FAQ = (
    Question(
        id="faq1_what",
        lesson=1,
        faq=1,
        prompt="What is gradient accumulation?",
        choices=(
            "Averaging the weights of several models, each trained on a part of the data",
            "Raising the learning rate step by step while the batch size grows",
            "Adding up the gradients of several micro-batches, then making one update",
            "Keeping a running mean of the loss over the last few micro-batches",
        ),
        answer=2,
        hint="Think of what backward() does to a .grad that nobody has cleared.",
        explanation=(
            "backward() adds each micro-batch's gradient to the .grad buffers; after N "
            "micro-batches one optimizer step uses their sum, the gradient of one large batch, "
            "while memory holds one micro-batch at a time."
        ),
    ),
    Question(
        id="faq2_purpose",
        lesson=1,
        faq=2,
        prompt="What does gradient accumulation mainly let you do?",
        choices=(
            "Train with a large batch while memory holds only a small one",
            "Train faster than with the whole batch held in memory at once",
            "Reach the same accuracy with fewer parameters in the model",
            "Skip the backward pass for most of the micro-batches",
        ),
        answer=0,
        hint="What grows with the batch in training: the parameters, or what backward needs?",
        explanation=(
            "Activations are kept for one micro-batch at a time, so peak memory follows the "
            "micro-batch while the update follows the effective batch. It buys memory, not speed."
        ),
    ),
    Question(
        id="faq3_when_step",
        lesson=1,
        faq=3,
        prompt=(
            "With an accumulation factor N, when should optimizer.step() and zero_grad() occur?"
        ),
        choices=(
            "Both after every micro-batch, so that each update only sees fresh gradients",
            "step() after every micro-batch, zero_grad() once after each window of N",
            "zero_grad() after every micro-batch, step() once after each window of N",
            "step() and then zero_grad() once per window, after its N-th micro-batch",
        ),
        answer=3,
        hint="Which of the two calls would throw away gradients that are still being added up?",
        explanation=(
            "Clearing inside a window throws away the gradients being added up; stepping inside "
            "it updates on a part of the batch. Start with cleared gradients, step once per "
            "window of N micro-batches, and clear right after the step."
        ),
    ),
    Question(
        id="faq4_norm_layers",
        lesson=3,
        faq=4,
        prompt="Which normalisation layers pair cleanly with gradient accumulation?",
        choices=(
            "BatchNorm, because it normalises over all the samples of the batch",
            "LayerNorm and GroupNorm, as they normalise each sample on its own",
            "Any normalisation layer, provided that each loss is divided by N",
            "None of them: every normalisation layer breaks the equivalence",
        ),
        answer=1,
        hint="Does one sample's output depend on the other samples of its micro-batch?",
        explanation=(
            "LayerNorm and GroupNorm compute their statistics inside each sample, so splitting "
            "the batch changes nothing; BatchNorm's statistics depend on which samples share "
            "the micro-batch."
        ),
    ),
    Question(
        id="faq5_batchnorm",
        lesson=3,
        faq=5,
        prompt=(
            "Why may four micro-batches with BatchNorm behave differently from one physical "
            "batch of the same total size?"
        ),
        choices=(
            "The loss of each of the four micro-batches was not divided by four",
            "Rounding errors of float32 add up over the four backward passes",
            "Each micro-batch is normalised with its own mean and variance",
            "The optimizer's momentum is updated four times instead of once",
        ),
        answer=2,
        hint="Does a sample get the same output in a micro-batch as in the full batch?",
        explanation=(
            "No loss scaling can fix it: with a forward pass that depends on the batch, the "
            "micro-batches compute another function than the full batch."
        ),
    ),
)
