"""Lesson 2's self-check: scaling the loss."""

from __future__ import annotations

from gradacc_lessons.quiz.questions.kinds import Prediction, Question
from gradacc_lessons.quiz.yoruba import Wording

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

# The same questions in Yorùbá (docs/yoruba.md), the choices in the order above.
LESSON2_YORUBA: dict[str, Wording] = {
    "l2_uneven": Wording(
        prompt=(
            "Fèrèsé kan ní micro-batch tí ó ní àpẹẹrẹ 24, 24 àti 16, loss kọ̀ọ̀kan sì jẹ́ "
            "àròpín lórí micro-batch rẹ̀. Iye wo ni a gbọ́dọ̀ fi sọ loss kọ̀ọ̀kan di púpọ̀ kí "
            "gradient tí a kó jọ lè dọ́gba pẹ̀lú ti gbogbo batch?"
        ),
        choices=(
            "1/3 fún ọ̀kọ̀ọ̀kan, nítorí fèrèsé náà ní micro-batch mẹ́ta",
            "1 fún ọ̀kọ̀ọ̀kan, nítorí optimizer ń pín in sí ìwọ̀n batch",
            "1/24, 1/24 àti 1/16, ọ̀kan lórí ìwọ̀n micro-batch kọ̀ọ̀kan",
            "24/64, 24/64 àti 16/64: ìpín àpẹẹrẹ tí ó jẹ́ ti ọ̀kọ̀ọ̀kan",
        ),
        hint=(
            "Loss gbogbo batch jẹ́ àpapọ̀ lórí àpẹẹrẹ 64 tí a pín sí 64. Apá wo nínú àpapọ̀ yẹn "
            "ni àròpín micro-batch kan?"
        ),
        explanation=(
            "Àròpín gbogbo batch jẹ́ àpapọ̀ lórí gbogbo àpẹẹrẹ 64 tí a pín sí 64; àròpín "
            "micro-batch kan lọ́nà ìpín rẹ̀ (ìwọ̀n/64) ni apá tirẹ̀ gẹ́lẹ́ nínú àpapọ̀ yẹn. 1/N "
            "ń fún àwọn àpẹẹrẹ micro-batch kékeré ní ipa tí ó pọ̀ jù."
        ),
    ),
    "l2_tokens": Wording(
        prompt=(
            "Àwọn sequence tí a fi padding kún, cross-entropy tí ó jẹ́ àròpín lórí token gidi "
            "micro-batch kọ̀ọ̀kan, a sì pín loss kọ̀ọ̀kan sí N. Kí ló ń ṣàṣìṣe, kí ló sì ń tún "
            "un ṣe?"
        ),
        choices=(
            "Kò sí nǹkan kan, tí micro-batch bá ní iye sequence kan náà",
            "Token inú micro-batch kúkúrú ní ipa jù; pín in sí iye token fèrèsé",
            "Token padding ń wọ inú loss; ignore_index tí ó tóbi jù ni àtúnṣe",
            "Gradient ti pọ̀ ní ìlọ́po N; pípín in sí N lẹ́ẹ̀mejì ni àtúnṣe",
        ),
        hint="Àròpín micro-batch kọ̀ọ̀kan ń pín sí iye token gidi tirẹ̀. Ṣé wọ́n dọ́gba?",
        explanation=(
            "Àròpín micro-batch kọ̀ọ̀kan ń pín sí iye token tirẹ̀, nítorí náà sequence kan náà "
            "ní ipa jù nínú micro-batch kúkúrú. Kíkó loss àwọn token pọ̀ àti pípín in sí iye token "
            "fèrèsé (num_items_in_batch nínú Transformers láti àtúnṣe ọdún 2024) ni àròpín gbogbo "
            "batch."
        ),
    ),
    "l2_scheduler": Wording(
        prompt=(
            "Pẹ̀lú micro-batch N = 4 nínú fèrèsé kan, a ń pe step() scheduler warm-up lẹ́yìn "
            "micro-batch kọ̀ọ̀kan. Kí ló ń ṣẹlẹ̀?"
        ),
        choices=(
            "Kò sí nǹkan kan: learning rate ṣe pàtàkì ní optimizer.step() nìkan",
            "Warm-up parí ní ìlọ́po mẹ́rin ṣáájú àkókò; pè é lẹ́ẹ̀kan fún ìmúdójúìwọ̀n kọ̀ọ̀kan",
            "Warm-up gùn ní ìlọ́po mẹ́rin, nítorí a fò àwọn ìmúdójúìwọ̀n kan",
            "A ń pín learning rate sí 4 ní gbogbo optimizer.step()",
        ),
        hint="Scheduler ń ka ìpè step() tirẹ̀. Mélòó ni fèrèsé kan ń ṣe?",
        explanation=(
            "Schedule ń ka ìpè step() tirẹ̀. Pípè é lẹ́yìn micro-batch kọ̀ọ̀kan ń tì í síwájú "
            "ní ìgbà N fún ìmúdójúìwọ̀n kọ̀ọ̀kan, nítorí náà ó ń dé ibi kọ̀ọ̀kan nínú ètò rẹ̀ "
            "lẹ́yìn 1/N àwọn àpẹẹrẹ."
        ),
    ),
    "l2_predict_last_window": Wording.prediction(
        "Epoch kan tí ó ní micro-batch 9 tí wọ́n dọ́gba pẹ̀lú accumulation_steps=4 parí pẹ̀lú "
        "fèrèsé tí ó ní micro-batch kan ṣoṣo, loop náà sì ń pín gbogbo loss sí 4. Kí ni "
        "relative error gradient fèrèsé tó kẹ́yìn yẹn (0 túmọ̀ sí pé ó pé, 1 túmọ̀ sí pé gbogbo "
        "rẹ̀ ló ṣàṣìṣe)?",
        "Fèrèsé tó kẹ́yìn gbọ́dọ̀ gbé gbogbo gradient àwọn àpẹẹrẹ rẹ̀. Ìdá mélòó nínú rẹ̀ ni "
        "micro-batch kan tí a pín sí 4 ń gbé?",
        "Fèrèsé náà ní micro-batch kan tí a pín sí 4: ìdá mẹ́rin gradient tí ó dúró fún, "
        "nítorí náà error jẹ́ 1 - 1/4 = 0.75 (fèrèsé méjì ti ẹ̀kọ́ náà fún ni ní 1 - 2/4 = 0.5).",
    ),
}
