"""Lesson 5's self-check: training curves."""

from __future__ import annotations

from gradacc_lessons.quiz.questions.kinds import Prediction, Question
from gradacc_lessons.quiz.yoruba import Wording

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

# The same questions in Yorùbá (docs/yoruba.md), the choices in the order above.
LESSON5_YORUBA: dict[str, Wording] = {
    "l5_curves": Wording(
        prompt=(
            "Training mẹ́ta ń lo model kan náà, ètò data kan náà, AdamW, clipping àti schedule "
            "learning rate kan náà: batch 128; micro-batch mẹ́rin tí ọ̀kọ̀ọ̀kan ní àpẹẹrẹ 32; batch "
            "32 láìsí ìkójọpọ̀. Àwọn wo ló ní ìlà training kan náà?"
        ),
        choices=(
            "Batch 128 àti èyí tí a kó jọ, títí dé rounding",
            "Gbogbo mẹ́tẹ̀ẹ̀ta, nítorí wọ́n rí àwọn àpẹẹrẹ kan náà ní epoch kọ̀ọ̀kan",
            "Èyí tí a kó jọ àti batch 32: méjèèjì ń rí 32",
            "Kò sí ọ̀kankan: ìkójọpọ̀ máa ń fi ariwo kún ìlà",
        ),
        hint="Àwọn wo ló ń ṣe ìmúdójúìwọ̀n kan náà, ọ̀kan fún àpẹẹrẹ 128 kọ̀ọ̀kan?",
        explanation=(
            "Fèrèsé kọ̀ọ̀kan tí a kó jọ jẹ́ ìmúdójúìwọ̀n kan náà bíi batch 128 kan. Batch 32 "
            "láìsí ìkójọpọ̀ jẹ́ ìmúdójúìwọ̀n tirẹ̀: ìmúdójúìwọ̀n mìíràn, training mìíràn."
        ),
    ),
    "l5_scheduler": Wording(
        prompt=(
            "O yí training kan padà láti batch 128 sí micro-batch 32 pẹ̀lú iye ìkójọpọ̀ 4. "
            "Ìgbà mélòó ni scheduler.step() àti gradient clipping gbọ́dọ̀ ṣiṣẹ́ báyìí?"
        ),
        choices=(
            "Lẹ́yìn micro-batch kọ̀ọ̀kan, ní ìlọ́po mẹ́rin ti tẹ́lẹ̀",
            "Clipping lẹ́yìn micro-batch kọ̀ọ̀kan, scheduler fún fèrèsé kọ̀ọ̀kan",
            "Lẹ́ẹ̀kan fún optimizer.step() kọ̀ọ̀kan: lẹ́yìn fèrèsé mẹ́rin-mẹ́rin",
            "Lẹ́ẹ̀kan ṣoṣo ní epoch kọ̀ọ̀kan, lẹ́yìn fèrèsé tó kẹ́yìn rẹ̀",
        ),
        hint="Kí ni schedule ń kà, gradient wo sì ni clipping gbọ́dọ̀ rí?",
        explanation=(
            "Schedule ń ka ìmúdójúìwọ̀n optimizer, clipping sì gbọ́dọ̀ rí gradient gbogbo batch "
            "àpapọ̀: méjèèjì ń ṣẹlẹ̀ lẹ́ẹ̀kan ní fèrèsé kọ̀ọ̀kan, nítorí náà training kò yí padà."
        ),
    ),
    "l5_predict_steps": Wording.prediction(
        "Training ẹ̀kọ́ 5 tí a kó jọ, pẹ̀lú batch=256 àti micro_batch=64 dípò: epoch 10 lórí "
        "àwọn nọ́mbà 1,536 ti training. Ìmúdójúìwọ̀n optimizer mélòó ni ó ń ṣe lápapọ̀?",
        "Àpẹẹrẹ mélòó ló wà lẹ́yìn ìmúdójúìwọ̀n kan, ìmúdójúìwọ̀n mélòó ló sì ń ṣe epoch kan?",
        "Ìmúdójúìwọ̀n kan fún àpẹẹrẹ 256: 1,536 / 256 = 6 ní epoch kọ̀ọ̀kan, 60 ní epoch 10, "
        "bí micro-batch ti wù kí ó rí. Micro-batch 64 kàn ń sọ pé N = 4.",
    ),
}
