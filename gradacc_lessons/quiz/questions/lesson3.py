"""Lesson 3's self-check: BatchNorm and what accumulation cannot fix."""

from __future__ import annotations

from gradacc_lessons.quiz.questions.kinds import Prediction, Question
from gradacc_lessons.quiz.yoruba import Wording

LESSON3 = (
    Question(
        id="l3_single_sample",
        lesson=3,
        prompt=(
            "Memory allows micro-batches of one sample. What happens to an MLP with "
            "BatchNorm1d in training mode?"
        ),
        choices=(
            "It trains, with the statistics of all the samples seen so far",
            "It trains like the full batch, as the statistics then match",
            "It trains, but its running mean is no longer updated",
            "PyTorch raises an error: one value has no variance",
        ),
        answer=3,
        hint="What is the variance of a single number?",
        explanation=(
            "With one sample, each feature has a single value: its batch mean is that value, "
            "so every output would collapse to BatchNorm's shift. PyTorch refuses ('Expected "
            "more than 1 value per channel when training'). Use LayerNorm or GroupNorm, or "
            "freeze BatchNorm."
        ),
    ),
    Prediction(
        id="l3_predict_running_mean",
        lesson=3,
        prompt=(
            "A BatchNorm layer with momentum 0.1 sees a window of N = 4 micro-batches, so its "
            "running mean is updated 4 times. What fraction of the running mean then comes "
            "from this window's data (a number between 0 and 1)?"
        ),
        value=0.3439,
        tolerance=0.01,
        computation=(
            "from gradacc_lessons.demos.batchnorm import compute_running_stats\n\n"
            "compute_running_stats(accumulation_steps=(4,), momentum=0.1).weight_on_new_data[0]"
        ),
        hint="Each update keeps 1 - 0.1 = 0.9 of the old running mean. How much is left after 4?",
        explanation=(
            "After 4 updates 0.9^4 = 0.6561 of the old running mean is left, so 1 - 0.6561 = "
            "0.3439 comes from the window, not the 0.1 of one full-batch update. A momentum of "
            "1 - 0.9^(1/4) puts it back at 0.1."
        ),
    ),
)

# The same questions in Yorùbá (docs/yoruba.md), the choices in the order above.
LESSON3_YORUBA: dict[str, Wording] = {
    "l3_single_sample": Wording(
        prompt=(
            "Memory gba micro-batch tí ó ní àpẹẹrẹ kan ṣoṣo. Kí ló ń ṣẹlẹ̀ sí MLP tí ó ní "
            "BatchNorm1d ní ipò training?"
        ),
        choices=(
            "Ó ń kọ́ ẹ̀kọ́, pẹ̀lú statistics gbogbo àpẹẹrẹ tí ó ti rí títí di ìsinsìnyí",
            "Ó ń kọ́ ẹ̀kọ́ bíi gbogbo batch, nítorí statistics wọn dọ́gba nígbà náà",
            "Ó ń kọ́ ẹ̀kọ́, ṣùgbọ́n running mean rẹ̀ kò yí padà mọ́",
            "PyTorch ń ju àṣìṣe: iye kan ṣoṣo kò ní variance",
        ),
        hint="Kí ni variance nọ́mbà kan ṣoṣo?",
        explanation=(
            "Pẹ̀lú àpẹẹrẹ kan, feature kọ̀ọ̀kan ní iye kan ṣoṣo: mean batch rẹ̀ ni iye náà, "
            "nítorí náà gbogbo èsì ì bá di shift BatchNorm nìkan. PyTorch kọ̀ ọ́ (`Expected "
            "more than 1 value per channel when training`). Lo LayerNorm tàbí GroupNorm, tàbí "
            "di BatchNorm mú."
        ),
    ),
    "l3_predict_running_mean": Wording.prediction(
        "Layer BatchNorm tí momentum rẹ̀ jẹ́ 0.1 rí fèrèsé tí ó ní micro-batch N = 4, nítorí "
        "náà running mean rẹ̀ yí padà lẹ́ẹ̀mẹ́rin. Ìdá wo nínú running mean ló wá láti inú data "
        "fèrèsé yìí (nọ́mbà láàárín 0 àti 1)?",
        "Ìmúdójúìwọ̀n kọ̀ọ̀kan ń pa 1 - 0.1 = 0.9 running mean àtijọ́ mọ́. Èló ló kù lẹ́yìn 4?",
        "Lẹ́yìn ìmúdójúìwọ̀n 4, 0.9^4 = 0.6561 running mean àtijọ́ ló kù, nítorí náà 1 - "
        "0.6561 = 0.3439 ló wá láti inú fèrèsé, kì í ṣe 0.1 ti ìmúdójúìwọ̀n kan pẹ̀lú gbogbo "
        "batch. Momentum 1 - 0.9^(1/4) ló ń dá a padà sí 0.1.",
    ),
}
