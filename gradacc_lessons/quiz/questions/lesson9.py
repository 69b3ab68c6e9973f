"""Lesson 9's self-check: planning a real fine-tune."""

from __future__ import annotations

from gradacc_lessons.quiz.questions.kinds import Question

LESSON9 = (
    Question(
        id="l9_dominates",
        lesson=9,
        prompt=(
            "The planner fits the 8B model on a 24 GiB card with LoRA and checkpointing, at a "
            "micro-batch of a few sequences. At that peak, what takes most of the memory?"
        ),
        choices=(
            "The frozen weights of the base model",
            "AdamW's two moments for every weight of the model",
            "The gradients of all eight billion weights",
            "The logits of the vocabulary for every token",
        ),
        answer=0,
        hint="With LoRA, which tensors are not trained, and how many of them are there?",
        explanation=(
            "Only the adapters are trained, so their gradients and AdamW's moments are small. "
            "The 8 billion frozen weights stay, 2 bytes each in bfloat16: about 15 GiB of the "
            "24. The checkpointed activations of a few sequences fill what is left."
        ),
    ),
    Question(
        id="l9_checkpointing",
        lesson=9,
        prompt=(
            "The 8B plan switches activation checkpointing on. What does it buy, and at what cost?"
        ),
        choices=(
            "A lower floor: fewer weights, gradients and optimizer state",
            "Nothing in memory; it only makes the backward pass faster",
            "Far fewer saved activations, for a second forward in backward",
            "Smaller gradients, as they are computed in 16 bits instead",
        ),
        answer=2,
        hint="Which part of the peak grows with the micro-batch, and what does backward need?",
        explanation=(
            "Each checkpointed layer keeps only its input and recomputes its other activations "
            "during the backward pass: the activations of a sequence shrink many times, so a "
            "larger micro-batch fits, for about one more forward pass of time. The floor "
            "(weights, gradients, optimizer state) does not move, as lesson 4 showed."
        ),
    ),
    Question(
        id="l9_why_exact",
        lesson=9,
        prompt=(
            "On the tiny Llama, Accelerate's estimate and the transformer-math formula both "
            "miss the measured peak; the planner does not. Why?"
        ),
        choices=(
            "It counts every tensor that the real step makes and frees",
            "It measures the step on this machine's memory, like the profiler",
            "It adds a safety margin that covers what the formulas leave out",
            "It rounds every tensor up to 512 bytes as the CUDA allocator does",
        ),
        answer=0,
        hint="What does a fake tensor have, and what does it lack?",
        explanation=(
            "The planner runs forward, backward and the optimizer step on fake tensors (shapes, "
            "no data) and counts each storage while it lives, whatever the architecture: "
            "SwiGLU, grouped-query attention, LoRA's float32 adapters. Accelerate counts "
            "weights, gradients and Adam's state only, for every weight, and no activation; "
            "the formula assumes one architecture, 16-bit activations and full fine-tuning."
        ),
    ),
    Question(
        id="l9_choose_n",
        lesson=9,
        prompt=(
            "The largest micro-batch that fits is 6 sequences; the recipe wants an effective "
            "batch of 256 sequences. How many accumulation steps N does the plan take?"
        ),
        choices=("42", "44", "43", "48"),
        answer=2,
        hint="N micro-batches of at most 6 sequences must hold all 256 of them.",
        explanation=(
            "N = 256 / 6 rounded up = 43: 42 micro-batches of 6 hold only 252 sequences. The 256 "
            "are split into 43 micro-batches of 6 or 5 (sizes differ by at most one, lesson 1), "
            "each loss weighted by its share, so the window is still the batch of 256."
        ),
    ),
)
