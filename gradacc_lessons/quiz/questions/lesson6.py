"""Lesson 6's self-check: beyond one device."""

from __future__ import annotations

from gradacc_lessons.quiz.questions.kinds import Prediction, Question
from gradacc_lessons.quiz.yoruba import Wording

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

# The same questions in Yorùbá (docs/yoruba.md), the choices in the order above.
LESSON6_YORUBA: dict[str, Wording] = {
    "l6_no_sync": Wording(
        prompt=(
            "Lábẹ́ DistributedDataParallel, o kó micro-batch 4 jọ fún ìmúdójúìwọ̀n kọ̀ọ̀kan, o "
            "sì kọ `loss = model(x)...` lóde `with model.no_sync():`, `loss.backward()` nìkan ló "
            "wà nínú rẹ̀. Kí ló ń ṣẹlẹ̀?"
        ),
        choices=(
            "Micro-batch kọ̀ọ̀kan ṣì ń ṣe all-reduce: ìlọ́po mẹ́rin ìrìnnà",
            "A kò ṣe all-reduce gradient rárá, nítorí náà àwọn process ń yapa",
            "Ó ń ṣiṣẹ́ bí a ti fẹ́, pẹ̀lú all-reduce kan fún ìmúdójúìwọ̀n kọ̀ọ̀kan",
            "DDP ń ju àṣìṣe ní backward àkọ́kọ́ fèrèsé náà",
        ),
        hint="DDP ń pinnu nínú forward pass bóyá backward tí ó ń bọ̀ yóò ṣe all-reduce.",
        explanation=(
            "DDP ń pinnu nínú forward pass bóyá backward yóò ṣe ìmúṣiṣẹ́pọ̀. no_sync() gbọ́dọ̀ "
            "bo forward àti backward gbogbo micro-batch àfi èyí tó kẹ́yìn nínú fèrèsé."
        ),
    ),
    "l6_scaler": Wording(
        prompt=(
            "Training ní float16 pẹ̀lú GradScaler, ìkójọpọ̀ àti gradient clipping: ìgbà wo ni "
            "o ń pe scaler.unscale_(optimizer)?"
        ),
        choices=(
            "Lẹ́yìn backward micro-batch kọ̀ọ̀kan, ṣáájú kí ó tó wọ .grad",
            "Lẹ́ẹ̀kan ní fèrèsé kọ̀ọ̀kan, lẹ́yìn backward tó kẹ́yìn, ṣáájú clipping",
            "Kò sí ìgbà kankan: scaler.step() ń ṣe unscale, nítorí náà ṣe clipping gradient "
            "tí a ti scale",
            "Lẹ́yìn scaler.update(), nígbà tí scale tuntun bá ti di mímọ̀",
        ),
        hint="Clipping ń fi norm gradient wé max_norm. Gradient wo ni ó gbọ́dọ̀ rí?",
        explanation=(
            "Gradient tí a ti scale ń kó jọ nínú .grad jálẹ̀ fèrèsé; ṣe unscale lẹ́ẹ̀kan, kí "
            "clipping lè rí norm tòótọ́, lẹ́yìn náà step àti update lẹ́ẹ̀kan ní fèrèsé kọ̀ọ̀kan."
        ),
    ),
    "l6_predict_effective_batch": Wording.prediction(
        "GPU 4, ọ̀kọ̀ọ̀kan ń ṣe micro-batch tí ó ní àpẹẹrẹ 32, ó sì ń kó 8 jọ fún ìmúdójúìwọ̀n "
        "optimizer kọ̀ọ̀kan. Àpẹẹrẹ mélòó ló wà lẹ́yìn ìmúdójúìwọ̀n kan?",
        "GPU kọ̀ọ̀kan ń rí micro-batch x iye ìkójọpọ̀ àpẹẹrẹ fún ìmúdójúìwọ̀n kọ̀ọ̀kan.",
        "world size x micro-batch x iye ìkójọpọ̀ = 4 x 32 x 8 = 1024 àpẹẹrẹ.",
    ),
    "l6_predict_zero3": Wording.prediction(
        "Parameter bílíọ̀nù 1, Adam, float32 (byte 4 fún iye kọ̀ọ̀kan), ZeRO-3 tí a pín sí GPU "
        "4: GiB (2^30 byte) mélòó nínú parameters, gradient àti moment méjì Adam ni GPU kọ̀ọ̀kan "
        "ń tọ́jú gẹ́gẹ́ bí ìpín tirẹ̀?",
        "Adam ní float32 ń tọ́jú byte 16 fún parameter kọ̀ọ̀kan; ZeRO-3 ń pín gbogbo rẹ̀.",
        "Byte 4 fún weights, gradient àti moment méjì: 16 GB lápapọ̀, ìdá mẹ́rin rẹ̀ fún GPU "
        "kọ̀ọ̀kan, 4e9 / 2^30 = 3.73 GiB.",
    ),
}
