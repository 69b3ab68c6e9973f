"""Lesson 6's self-check: beyond one device."""

from __future__ import annotations

from gradacc_lessons.quiz.questions.kinds import Prediction, Question

LESSON6 = (
    Question(
        id="l6_no_sync",
        lesson=6,
        prompt=(
            "Under DistributedDataParallel you accumulate 4 micro-batches per step and write "
            "`loss = model(x)...` outside `with model.no_sync():`, and only `loss.backward()` "
            "inside it. What happens?"
        ),
        choices=(
            "Every micro-batch still all-reduces: four times the traffic",
            "Gradients are never all-reduced, so the processes drift apart",
            "It works as intended, with one all-reduce per optimizer step",
            "DDP raises an error at the first backward of the window",
        ),
        answer=0,
        hint="DDP decides during the forward pass whether the coming backward will all-reduce.",
        explanation=(
            "DDP decides in the forward pass whether the backward will sync. no_sync() must wrap "
            "forward and backward of every micro-batch but the last of a window."
        ),
    ),
    Question(
        id="l6_scaler",
        lesson=6,
        prompt=(
            "Training in float16 with a GradScaler, accumulation and gradient clipping: when "
            "do you call scaler.unscale_(optimizer)?"
        ),
        choices=(
            "After every micro-batch's backward, before adding to .grad",
            "Once per window, after the last backward, before clipping",
            "Never: scaler.step() unscales, so clip the scaled gradients",
            "After scaler.update(), once the new scale is known",
        ),
        answer=1,
        hint="Clipping compares the gradient's norm with max_norm. Which gradient must it see?",
        explanation=(
            "The scaled gradients add up in .grad over the window; unscale once, so that "
            "clipping sees the true norm, then step and update once per window."
        ),
    ),
    Prediction(
        id="l6_predict_effective_batch",
        lesson=6,
        prompt=(
            "4 GPUs each run micro-batches of 32 samples and accumulate 8 of them per optimizer "
            "step. How many samples are behind one step?"
        ),
        value=1024,
        tolerance=0,
        computation=(
            "from gradacc_lessons.demos.distributed import effective_batch\n\n"
            "effective_batch(world_size=4, micro_batch_size=32, accumulation_steps=8)"
        ),
        hint="Every GPU sees micro-batch x accumulation steps samples per step.",
        explanation="world size x micro-batch x accumulation steps = 4 x 32 x 8 = 1024 samples.",
    ),
    Prediction(
        id="l6_predict_zero3",
        lesson=6,
        prompt=(
            "1 billion parameters, Adam, float32 (4 bytes a value), ZeRO-3 sharded over 4 GPUs: "
            "how many GiB (2^30 bytes) of parameters, gradients and Adam's two moments does "
            "each GPU keep as its own shards?"
        ),
        value=3.725,
        tolerance=0.05,
        computation=(
            "from gradacc_lessons.demos.sharding import sharded_bytes\n\n"
            "sum(sharded_bytes(1_000_000_000, world_size=4, stage=3).values()) / 2**30"
        ),
        hint="Adam in float32 keeps 16 bytes per parameter; ZeRO-3 splits all of it.",
        explanation=(
            "4 bytes each for weights, gradients and two moments: 16 GB in all, a quarter of it "
            "per GPU, 4e9 / 2^30 = 3.73 GiB."
        ),
    ),
)
