"""The lessons' self-check questions and summaries in Yorùbá.

`QUESTIONS` gives each lesson question of the bank (questions/lesson1.py ... lesson9.py) its
Yorùbá text, choices in the bank's order; `SUMMARIES` is each lesson's summary, the markdown
cell that follows the English summary in the notebook (tests/test_yoruba.py checks that the
notebooks hold exactly these texts). All of it follows the convention of docs/yoruba.md: full
tone marks, one word per idea (`glossary.TERMS`), English technical terms kept as they are.
"""

from __future__ import annotations

from gradacc_lessons.quiz.yoruba import Wording


def _predict(prompt: str, hint: str, explanation: str) -> Wording:
    """The Yorùbá of a Prediction: a number to type, so no choices."""
    return Wording(prompt=prompt, choices=(), hint=hint, explanation=explanation)


QUESTIONS: dict[str, Wording] = {
    # --- lesson 1 ---
    "l1_scale": Wording(
        prompt=(
            "Loss micro-batch kọ̀ọ̀kan jẹ́ àròpín lórí àwọn àpẹẹrẹ rẹ̀. O kó micro-batch mẹ́rin "
            "tí ìwọ̀n wọn dọ́gba jọ. Kí ni o gbọ́dọ̀ ṣe sí loss kọ̀ọ̀kan ṣáájú backward()?"
        ),
        choices=(
            "Pín in sí 4, iye àwọn micro-batch",
            "Kò sí nǹkan kan, optimizer ló ń ṣe àròpín àwọn gradient",
            "Fi 4 sọ ọ́ di púpọ̀, ẹ̀ẹ̀kan fún micro-batch kọ̀ọ̀kan",
            "Pín in sí iye àwọn àpẹẹrẹ tirẹ̀",
        ),
        hint=("Àròpín loss mẹ́rin, backward kọ̀ọ̀kan ń fi kún .grad: gradient àròpín mélòó nìyẹn?"),
        explanation=(
            "Gradient máa ń kó jọ, nítorí náà àròpín loss mẹ́rin ń fún ni ní ìlọ́po mẹ́rin "
            "gradient àròpín; pípín ọ̀kọ̀ọ̀kan sí 4 ló ń sọ àpapọ̀ di àròpín lórí gbogbo batch."
        ),
    ),
    "l1_off_by_one": Wording(
        prompt=(
            "Loop kan ń ka àwọn micro-batch pẹ̀lú i láti 0, ó sì ń ṣe ìmúdójúìwọ̀n nígbà tí "
            "i % accumulation_steps == 0. Kí ló ń ṣàṣìṣe?"
        ),
        choices=(
            "Kò ṣe ìmúdójúìwọ̀n rárá, nítorí i kò dé ìlọ́po fèrèsé láéláé",
            "Ó ń ṣe ìmúdójúìwọ̀n lẹ́yìn micro-batch àkọ́kọ́: gbogbo fèrèsé ti yẹ̀ kúrò",
            "Ó ń ṣe ìmúdójúìwọ̀n lẹ́ẹ̀mejì nínú fèrèsé kọ̀ọ̀kan, lẹ́yìn àkọ́kọ́ àti tó kẹ́yìn",
            "Kò sí nǹkan kan: ó ń ṣe ìmúdójúìwọ̀n lẹ́ẹ̀kan lẹ́yìn micro-batch N, bí ó ti yẹ",
        ),
        hint="Gbìyànjú micro-batch àkọ́kọ́: kí ni 0 % 4?",
        explanation=(
            "0 % N == 0, nítorí náà loop náà ń ṣe ìmúdójúìwọ̀n lẹ́yìn micro-batch 0 nìkan, "
            "láti ìgbà náà lọ, fèrèsé kọ̀ọ̀kan ń kọjá ààlà fèrèsé gidi méjì. Ìgbà tí ó ń ṣe "
            "ìmúdójúìwọ̀n pọ̀ tó ti loop tí ó tọ̀nà, nítorí náà ìfiwéra pẹ̀lú gbogbo batch nìkan "
            "ló ń rí i; àtúnṣe rẹ̀ ni (i + 1) % N == 0."
        ),
    ),
    "l1_predict_steps": _predict(
        "train_accumulated gba micro-batch 10 àti accumulation_steps=4. Ìgbà mélòó ni ó ń pe "
        "optimizer.step()?",
        "Pín micro-batch 10 sí fèrèsé 4 kọ̀ọ̀kan. Kí ló ń ṣẹlẹ̀ sí fèrèsé tó kẹ́yìn tí ó kúrú?",
        "Fèrèsé micro-batch 4, 4 àti 2: ìmúdójúìwọ̀n kan fún ọ̀kọ̀ọ̀kan, títí kan fèrèsé tó "
        "kẹ́yìn tí ó kúrú (tí a pín loss rẹ̀ gẹ́gẹ́ bí àwọn àpẹẹrẹ tirẹ̀), nítorí náà 3.",
    ),
    # --- lesson 2 ---
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
    "l2_predict_last_window": _predict(
        "Epoch kan tí ó ní micro-batch 9 tí wọ́n dọ́gba pẹ̀lú accumulation_steps=4 parí pẹ̀lú "
        "fèrèsé tí ó ní micro-batch kan ṣoṣo, loop náà sì ń pín gbogbo loss sí 4. Kí ni "
        "relative error gradient fèrèsé tó kẹ́yìn yẹn (0 túmọ̀ sí pé ó pé, 1 túmọ̀ sí pé gbogbo "
        "rẹ̀ ló ṣàṣìṣe)?",
        "Fèrèsé tó kẹ́yìn gbọ́dọ̀ gbé gbogbo gradient àwọn àpẹẹrẹ rẹ̀. Ìdá mélòó nínú rẹ̀ ni "
        "micro-batch kan tí a pín sí 4 ń gbé?",
        "Fèrèsé náà ní micro-batch kan tí a pín sí 4: ìdá mẹ́rin gradient tí ó dúró fún, "
        "nítorí náà error jẹ́ 1 - 1/4 = 0.75 (fèrèsé méjì ti ẹ̀kọ́ náà fún ni ní 1 - 2/4 = 0.5).",
    ),
    # --- lesson 3 ---
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
    "l3_predict_running_mean": _predict(
        "Layer BatchNorm tí momentum rẹ̀ jẹ́ 0.1 rí fèrèsé tí ó ní micro-batch N = 4, nítorí "
        "náà running mean rẹ̀ yí padà lẹ́ẹ̀mẹ́rin. Ìdá wo nínú running mean ló wá láti inú data "
        "fèrèsé yìí (nọ́mbà láàárín 0 àti 1)?",
        "Ìmúdójúìwọ̀n kọ̀ọ̀kan ń pa 1 - 0.1 = 0.9 running mean àtijọ́ mọ́. Èló ló kù lẹ́yìn 4?",
        "Lẹ́yìn ìmúdójúìwọ̀n 4, 0.9^4 = 0.6561 running mean àtijọ́ ló kù, nítorí náà 1 - "
        "0.6561 = 0.3439 ló wá láti inú fèrèsé, kì í ṣe 0.1 ti ìmúdójúìwọ̀n kan pẹ̀lú gbogbo "
        "batch. Momentum 1 - 0.9^(1/4) ló ń dá a padà sí 0.1.",
    ),
    # --- lesson 4 ---
    "l4_floor": Wording(
        prompt=(
            "O mú batch àpapọ̀ dúró, o sì ń sọ iye ìkójọpọ̀ di ìlọ́po méjì léraléra. Kí ni peak "
            "memory ń sún mọ́?"
        ),
        choices=(
            "Òdo, nítorí memory ń tẹ̀lé ìwọ̀n micro-batch",
            "Activations gbogbo batch àpapọ̀, tí a gbé ní ẹ̀ẹ̀kan",
            "Ohun tí parameters, gradient àti ipò optimizer ń gbà",
            "Nǹkan bí ìdajì peak tí a wọ̀n láìsí ìkójọpọ̀",
        ),
        hint="Apá wo nínú memory training ni kò gbára lé àwọn àpẹẹrẹ tí forward pass kan rí?",
        explanation=(
            "Activations nìkan ló ń dínkù pẹ̀lú micro-batch. Weights, gradient wọn àti ipò "
            "optimizer wà níbẹ̀ bí micro-batch ti wù kí ó rí, nítorí náà peak dúró lórí wọn."
        ),
    ),
    "l4_time": Wording(
        prompt=(
            "Gbogbo batch wọ inú memory. Ní ìfiwéra pẹ̀lú ṣíṣe é lẹ́ẹ̀kan náà, báwo ni pípín in "
            "sí micro-batch 8 tí a kó jọ ṣe ń yí àkókò ìmúdójúìwọ̀n kọ̀ọ̀kan padà?"
        ),
        choices=(
            "Ó ń kúrú ní nǹkan bí ìlọ́po mẹ́jọ, ìdá mẹ́jọ iṣẹ́ fún ọ̀kọ̀ọ̀kan",
            "Ó ń kúrú, nítorí optimizer ń ṣe ìmúdójúìwọ̀n díẹ̀",
            "Ó ń kúrú, nítorí activations kéré ní ìlọ́po mẹ́jọ",
            "Ó ń gùn sí i: iṣẹ́ kékeré ń ṣe iṣẹ́ díẹ̀ ní ìpè kọ̀ọ̀kan",
        ),
        hint="Ìkójọpọ̀ ń yí iye àpẹẹrẹ tí iṣẹ́ kọ̀ọ̀kan rí padà, kì í ṣe iye àpẹẹrẹ tí ó wà.",
        explanation=(
            "Ìkójọpọ̀ ń dín memory kù, kì í ṣe àkókò: ẹ̀kọ́ náà wọ̀n ọ́, ó lọ́ra ju batch lẹ́ẹ̀kan "
            "náà. Ó ń ṣe àpẹẹrẹ púpọ̀ ní ìṣẹ́jú-àáyá kan ju ìmúdójúìwọ̀n lẹ́yìn batch kékeré "
            "kọ̀ọ̀kan, ṣùgbọ́n ìmúdójúìwọ̀n rẹ̀ fi ìlọ́po N dín kù."
        ),
    ),
    "l4_predict_floor": _predict(
        "A ń kọ́ model tí ó ní parameter float32 mílíọ̀nù 10 (torch.nn.Linear(10_000, 1_000)) "
        "pẹ̀lú Adam. MB mélòó (mílíọ̀nù byte) ni parameters rẹ̀, gradient wọn àti ipò optimizer "
        "ń gbà papọ̀?",
        "Ka ẹ̀dà parameters: weights, gradient wọn, moment méjì ti Adam.",
        "Parameter 10,001,000 tí ọ̀kọ̀ọ̀kan jẹ́ byte 4: weights 40 MB, gradient 40 MB àti "
        "moment méjì Adam tí ọ̀kọ̀ọ̀kan jẹ́ 40 MB, ẹ̀dà mẹ́rin lápapọ̀: 160 MB (àti byte 8 fún "
        "kíka ìmúdójúìwọ̀n).",
    ),
    # --- lesson 5 ---
    "l5_curves": Wording(
        prompt=(
            "Training mẹ́ta ń lo model kan náà, ètò data kan náà, AdamW, clipping àti schedule "
            "learning rate kan náà: batch 128; micro-batch 32 tí a kó jọ ní mẹ́rin-mẹ́rin; batch "
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
    "l5_predict_steps": _predict(
        "Training ẹ̀kọ́ 5 tí a kó jọ, pẹ̀lú batch=256 àti micro_batch=64 dípò: epoch 10 lórí "
        "àwọn nọ́mbà 1,536 ti training. Ìmúdójúìwọ̀n optimizer mélòó ni ó ń ṣe lápapọ̀?",
        "Àpẹẹrẹ mélòó ló wà lẹ́yìn ìmúdójúìwọ̀n kan, ìmúdójúìwọ̀n mélòó ló sì ń ṣe epoch kan?",
        "Ìmúdójúìwọ̀n kan fún àpẹẹrẹ 256: 1,536 / 256 = 6 ní epoch kọ̀ọ̀kan, 60 ní epoch 10, "
        "bí micro-batch ti wù kí ó rí. Micro-batch 64 kàn ń sọ pé N = 4.",
    ),
    # --- lesson 6 ---
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
    "l6_predict_effective_batch": _predict(
        "GPU 4, ọ̀kọ̀ọ̀kan ń ṣe micro-batch tí ó ní àpẹẹrẹ 32, ó sì ń kó 8 jọ fún ìmúdójúìwọ̀n "
        "optimizer kọ̀ọ̀kan. Àpẹẹrẹ mélòó ló wà lẹ́yìn ìmúdójúìwọ̀n kan?",
        "GPU kọ̀ọ̀kan ń rí micro-batch x iye ìkójọpọ̀ àpẹẹrẹ fún ìmúdójúìwọ̀n kọ̀ọ̀kan.",
        "world size x micro-batch x iye ìkójọpọ̀ = 4 x 32 x 8 = 1024 àpẹẹrẹ.",
    ),
    "l6_predict_zero3": _predict(
        "Parameter bílíọ̀nù 1, Adam, float32 (byte 4 fún iye kọ̀ọ̀kan), ZeRO-3 tí a pín sí GPU "
        "4: GiB (2^30 byte) mélòó nínú parameters, gradient àti moment méjì Adam ni GPU kọ̀ọ̀kan "
        "ń tọ́jú gẹ́gẹ́ bí ìpín tirẹ̀?",
        "Adam ní float32 ń tọ́jú byte 16 fún parameter kọ̀ọ̀kan; ZeRO-3 ń pín gbogbo rẹ̀.",
        "Byte 4 fún weights, gradient àti moment méjì: 16 GB lápapọ̀, ìdá mẹ́rin rẹ̀ fún GPU "
        "kọ̀ọ̀kan, 4e9 / 2^30 = 3.73 GiB.",
    ),
    # --- lesson 7 ---
    "l7_tail_window": Wording(
        prompt=(
            "Epoch kan ní micro-batch 10, accumulate() ti Accelerate sì ń ṣiṣẹ́ pẹ̀lú "
            "gradient_accumulation_steps=4. Kí ló ń ṣẹlẹ̀ sí micro-batch méjì tó kẹ́yìn?"
        ),
        choices=(
            "A sọ wọ́n nù: optimizer ń ṣe ìmúdójúìwọ̀n lẹ́ẹ̀mejì péré nínú epoch",
            "Ìmúdójúìwọ̀n kẹta, loss kọ̀ọ̀kan ṣì pín sí 4: ìdajì ìmúdójúìwọ̀n gbogbo batch",
            "Ìmúdójúìwọ̀n kẹta, gẹ́lẹ́ bí ti batch kan tí ó ní méjèèjì",
            "Wọ́n dúró nínú .grad, wọ́n sì ń darapọ̀ mọ́ fèrèsé àkọ́kọ́ epoch tó kàn",
        ),
        hint="accelerator.backward ń pín sí N tí o ṣètò, ohun yòówù tí fèrèsé ní.",
        explanation=(
            "Accelerate (bíi Lightning) ń ṣe ìmúdójúìwọ̀n ní òpin dataloader, ṣùgbọ́n "
            "accelerator.backward ń pín gbogbo loss sí N. Fún micro-batch kọ̀ọ̀kan ní ipa ìpín "
            "rẹ̀ nínú fèrèsé, lọ́nà N, kí o lè rí ìmúdójúìwọ̀n gbogbo batch."
        ),
    ),
    "l7_trainer_tokens": Wording(
        prompt=(
            "Trainer ń kó loss causal language model jọ lórí àwọn sequence tí a fi padding kún. "
            "Iye wo ni num_items_in_batch gbọ́dọ̀ ní kí ìmúdójúìwọ̀n lè dọ́gba pẹ̀lú ti batch "
            "ńlá kan?"
        ),
        choices=(
            "Àwọn micro-batch rẹ̀: loss kọ̀ọ̀kan ti jẹ́ àròpín lórí token rẹ̀ tẹ́lẹ̀",
            "Àwọn sequence rẹ̀, nítorí sequence kọ̀ọ̀kan jẹ́ àpẹẹrẹ kan nínú batch",
            "Àwọn label rẹ̀ tí kì í ṣe -100, tí a kà ṣáájú kí a tó sún wọn",
            "Àwọn label rẹ̀ tí kì í ṣe -100, lẹ́yìn tí a ti sún wọn ní ipò kan",
        ),
        hint="Ka ohun tí loss ń ṣe àròpín lé lórí: a ń fi ipò t wé label t + 1.",
        explanation=(
            "Model ń sọ token t + 1 tẹ́lẹ̀ láti inú àwọn token títí dé t, nítorí náà sequence "
            "tí ó ní token gidi n ń fún ni ní àsọtẹ́lẹ̀ n - 1. Kíkà ṣáájú sísún ń fi token kan "
            "kún sequence kọ̀ọ̀kan: GPT2LMHeadModel nínú ẹ̀kọ́ yìí kù díẹ̀ ní ìdá díẹ̀ nínú "
            "ọgọ́rùn-ún títí a fi ṣètò loss_type rẹ̀ sí ForCausalLM."
        ),
    ),
    "l7_logged_loss": Wording(
        prompt=(
            'Module Lightning kan ń kọ self.log("loss", loss) sínú training_step, pẹ̀lú '
            "accumulate_grad_batches=4. Kí ni logger ń gbà ní ìmúdójúìwọ̀n optimizer kọ̀ọ̀kan?"
        ),
        choices=(
            "Loss micro-batch tó kẹ́yìn nínú fèrèsé",
            "Loss gbogbo fèrèsé, bí Trainer ṣe ń kọ ọ́",
            "Àpapọ̀ loss micro-batch mẹ́rin ti fèrèsé",
            "Loss gbogbo fèrèsé tí a pín sí 4",
        ),
        hint="Kí ni iye `loss` ní training_step tó kẹ́yìn ṣáájú ìmúdójúìwọ̀n?",
        explanation=(
            "Lightning ń kọ iye tí training_step fi fún self.log, láti inú micro-batch tó kẹ́yìn. "
            "Trainer ń kọ loss fèrèsé; loop Accelerate ń gbé loss micro-batch tó kẹ́yìn."
        ),
    ),
    "l7_scheduler_length": Wording(
        prompt=(
            "Pẹ̀lú Accelerate lórí process kan, micro-batch 1,000 ní epoch kọ̀ọ̀kan àti "
            "gradient_accumulation_steps=4, step mélòó ni ó yẹ kí schedule linear fún epoch kan "
            "ní?"
        ),
        choices=(
            "1,000: step scheduler kan fún micro-batch kọ̀ọ̀kan",
            "250: step scheduler kan fún ìmúdójúìwọ̀n optimizer kọ̀ọ̀kan",
            "4: ọ̀kan fún micro-batch kọ̀ọ̀kan nínú fèrèsé",
            "4,000: len(dataloader) lọ́nà gradient_accumulation_steps",
        ),
        hint="Ka ìmúdójúìwọ̀n optimizer, kì í ṣe micro-batch.",
        explanation=(
            "Scheduler tí a ti pèsè ń lọ síwájú nígbà tí optimizer bá ṣe ìmúdójúìwọ̀n gan-an "
            "nìkan: lẹ́ẹ̀kan ní fèrèsé kọ̀ọ̀kan, 1,000 / 4 = 250 ìgbà. Tí a bá ṣètò rẹ̀ fún "
            "len(dataloader) = 1,000, ìdá mẹ́rin rẹ̀ péré ló ti parí nígbà tí epoch bá parí. "
            "Lórí process W, ó ń lọ síwájú ní ìgbà W fún ìmúdójúìwọ̀n kọ̀ọ̀kan (àfi tí "
            "split_batches=True): ṣètò rẹ̀ ní ìlọ́po W."
        ),
    ),
    "l7_clipping": Wording(
        prompt=(
            "O ń pe accelerator.clip_grad_norm_(model.parameters(), 1.0) lẹ́yìn "
            "accelerator.backward(loss) kọ̀ọ̀kan, nínú accumulate(). Kí ló ń ṣàṣìṣe?"
        ),
        choices=(
            "Kò sí nǹkan kan: Accelerate ń fo ìpè náà títí dé micro-batch tó kẹ́yìn fèrèsé",
            "Accelerate ń ju àṣìṣe tí a bá ṣe clipping nínú accumulate()",
            "Ìpè kọ̀ọ̀kan ń ṣe clipping apá kan àpapọ̀: kì í ṣe ìmúdójúìwọ̀n gbogbo batch",
            "A ń ṣe clipping gradient lẹ́ẹ̀mejì ní òpin fèrèsé kọ̀ọ̀kan",
        ),
        hint="Ṣé clip_grad_norm_ mọ̀ pé fèrèsé kò tíì parí?",
        explanation=(
            "clip_grad_norm_ ń ṣe clipping ohunkóhun tí .grad ní nígbà tí a pè é. Dáàbò bò ó "
            "pẹ̀lú `if accelerator.sync_gradients:` kí ó lè ṣe clipping àpapọ̀ gradient lẹ́ẹ̀kan "
            "ní fèrèsé kọ̀ọ̀kan, bí Trainer àti Lightning ṣe ń ṣe."
        ),
    ),
    "l7_deepspeed_scaling": Wording(
        prompt=(
            "Lábẹ́ DeepSpeed pẹ̀lú gradient_accumulation_steps=8, loop kan ń ṣe "
            "engine.backward(loss / 8) àti engine.step() lẹ́yìn micro-batch kọ̀ọ̀kan. Kí ló "
            "ṣàṣìṣe?"
        ),
        choices=(
            "engine.step() wà fún ẹ̀yìn micro-batch tó kẹ́yìn fèrèsé nìkan",
            "Kò sí nǹkan kan: loop tí ìwé DeepSpeed fi hàn nìyí",
            "A gbọ́dọ̀ fi 8 sọ loss di púpọ̀, kì í ṣe pín in sí 8",
            "A pín loss sí 8 lẹ́ẹ̀mejì: ìmúdójúìwọ̀n kọ̀ọ̀kan kéré ní ìlọ́po 8",
        ),
        hint="Èwo nínú ìpè méjèèjì ló ti mọ N tẹ́lẹ̀?",
        explanation=(
            "engine.backward fúnra rẹ̀ ń pín loss sí gradient_accumulation_steps, a sì gbọ́dọ̀ "
            "pe engine.step() lẹ́yìn micro-batch kọ̀ọ̀kan: engine náà ń ṣe ìmúdójúìwọ̀n ní ààlà "
            "fèrèsé nìkan."
        ),
    ),
    "l7_predict_gpt2_count": _predict(
        "Fèrèsé kejì ẹ̀kọ́ 7 tí ó ní ìlà tí a fi padding kún ní ìlà 8 àti target token-tó-kàn "
        "360. Item mélòó ni Trainer ń pín loss rẹ̀ sí fún GPT2LMHeadModel?",
        "Fún GPT-2, Trainer ń ka àwọn label ṣáájú kí a tó sún wọn ní ipò kan.",
        "Láìsí sísún, ìlà kọ̀ọ̀kan ṣì ní label àkọ́kọ́ rẹ̀: target 360 + 1 fún ìlà kọ̀ọ̀kan x "
        "ìlà 8 = 368, nítorí náà ìmúdójúìwọ̀n kọ̀ọ̀kan fèrèsé yẹn jẹ́ 360/368 ti gbogbo batch.",
    ),
    # --- lesson 9 ---
    "l9_dominates": Wording(
        prompt=(
            "Planner náà mú kí model 8B wọ inú GPU tí ó ní 24 GiB pẹ̀lú LoRA àti checkpointing, "
            "pẹ̀lú micro-batch tí ó ní sequence díẹ̀. Ní peak yẹn, kí ló ń gba èyí tí ó pọ̀ jù "
            "nínú memory?"
        ),
        choices=(
            "Weights model tí a ti kọ́ tẹ́lẹ̀, tí a dì mú",
            "Moment méjì ti AdamW fún gbogbo weight model náà",
            "Gradient gbogbo weight bílíọ̀nù mẹ́jọ",
            "Àwọn logit gbogbo vocabulary fún token kọ̀ọ̀kan",
        ),
        hint="Pẹ̀lú LoRA, àwọn tensor wo ni a kò kọ́, mélòó sì ni wọ́n?",
        explanation=(
            "Àwọn adapter nìkan ni a ń kọ́, nítorí náà gradient wọn àti moment AdamW kéré. "
            "Weight bílíọ̀nù 8 tí a dì mú ṣì wà níbẹ̀, byte 2 fún ọ̀kọ̀ọ̀kan ní bfloat16: nǹkan "
            "bí 15 GiB nínú 24. Activations sequence díẹ̀, tí checkpointing ti dín kù, ló ń gba "
            "ààyè tí ó kù."
        ),
    ),
    "l9_checkpointing": Wording(
        prompt=(
            "Ètò fún model 8B ń lo activation checkpointing. Kí ni a ń jèrè níbẹ̀, kí ló sì ń ná wa?"
        ),
        choices=(
            "Ìpìlẹ̀ tí ó dínkù: ó ń dín weights, gradient àti ipò optimizer kù",
            "Kò yí memory padà; ó kàn ń mú kí backward pass yára sí i",
            "Activations tí a ń pa mọ́ dínkù gidigidi, ṣùgbọ́n a ń ṣe forward kejì nígbà backward",
            "Gradient kékeré, nítorí a ń ṣírò wọn ní bit 16 dípò 32",
        ),
        hint="Apá wo nínú peak ló ń pọ̀ sí i pẹ̀lú micro-batch, kí ni backward sì nílò?",
        explanation=(
            "Layer kọ̀ọ̀kan tí a fi checkpointing sí ń pa input rẹ̀ nìkan mọ́, ó sì ń ṣírò àwọn "
            "activations rẹ̀ yòókù lẹ́ẹ̀kan sí i nígbà backward pass: activations sequence kan ń "
            "dínkù ní ìlọ́po púpọ̀, nítorí náà micro-batch tí ó tóbi jù ń wọ inú memory, fún "
            "àkókò nǹkan bí forward pass kan sí i. Ìpìlẹ̀ (weights, gradient, ipò optimizer) kò "
            "yí padà, bí ẹ̀kọ́ 4 ti fi hàn."
        ),
    ),
    "l9_why_exact": Wording(
        prompt=(
            "Lórí Llama kékeré náà, ìfojúdíwọ̀n Accelerate àti fọ́múlà transformer-math kò bá peak "
            "tí a wọ̀n mu; ti planner bá a mu. Kí nìdí?"
        ),
        choices=(
            "Ó ń ka gbogbo tensor tí step gidi ń ṣẹ̀dá, tí ó sì ń tú sílẹ̀",
            "Ó ń wọn step náà lórí memory ẹ̀rọ yìí, bíi profiler",
            "Ó ń fi àfikún ààbò kún un, tí ó bo ohun tí àwọn fọ́múlà fi sílẹ̀",
            "Ó ń sọ ìwọ̀n tensor kọ̀ọ̀kan di ìlọ́po byte 512, bí allocator CUDA ti ń ṣe",
        ),
        hint="Kí ni tensor ayédèrú ní, kí ni kò sì ní?",
        explanation=(
            "Planner náà ń ṣe forward, backward àti step optimizer lórí tensor ayédèrú (ìrísí "
            "nìkan, láìsí data), ó sì ń ka storage kọ̀ọ̀kan níwọ̀n ìgbà tí ó bá wà, ohun yòówù "
            "tí architecture jẹ́: SwiGLU, grouped-query attention, àwọn adapter float32 ti LoRA. "
            "Accelerate ń ka weights, gradient àti ipò Adam nìkan, fún gbogbo weight, kò sì ka "
            "activation kankan; fọ́múlà náà gbà pé architecture kan ṣoṣo ni, pé activations jẹ́ "
            "16-bit, àti pé a ń kọ́ gbogbo weights."
        ),
    ),
    "l9_choose_n": Wording(
        prompt=(
            "Micro-batch tí ó tóbi jù tí ó wọ inú memory ní sequence 6; ìlànà training náà fẹ́ "
            "batch àpapọ̀ tí ó ní sequence 256. Iye ìkójọpọ̀ N wo ni ètò náà yàn?"
        ),
        choices=(
            "42 (méjìlélógójì)",
            "44 (mẹ́rìnlélógójì)",
            "43 (mẹ́tàlélógójì)",
            "48 (méjìdínláàádọ́ta)",
        ),
        hint="Micro-batch N tí ọ̀kọ̀ọ̀kan kò ju sequence 6 lọ gbọ́dọ̀ gba gbogbo sequence 256.",
        explanation=(
            "N = 256 / 6, tí a gbé sókè sí odidi nọ́mbà tó kàn, = 43: micro-batch 42 tí "
            "ọ̀kọ̀ọ̀kan ní 6 gba sequence 252 péré. A pín 256 sí micro-batch 43 tí ọ̀kọ̀ọ̀kan ní "
            "6 tàbí 5 (ìwọ̀n wọn kò yàtọ̀ ju ọ̀kan lọ, ẹ̀kọ́ 1), a sì fún loss kọ̀ọ̀kan ní ipa "
            "ìpín rẹ̀, nítorí náà fèrèsé náà ṣì jẹ́ batch 256 náà."
        ),
    ),
}


_OPEN, _CLOSE = '<div lang="yo">\n\n### Àkótán ní Yorùbá\n\n', "\n\n</div>"

# Each lesson's summary (lessons 4 and 5 have none in English: theirs sums up their sections).
SUMMARIES: dict[int, str] = {
    1: _OPEN
    + """\
- `backward()` ń fi kún `.grad`; ìkójọpọ̀ gradient ni àpapọ̀ yẹn, tí a pín kí ó lè di àròpín.
- Fún àròpín loss micro-batch kọ̀ọ̀kan ní ipa ìpín àpẹẹrẹ rẹ̀ (`1/N` tí ìwọ̀n wọn bá dọ́gba).
- Sọ gradient di òdo ṣáájú micro-batch àkọ́kọ́, ṣe ìmúdójúìwọ̀n lẹ́ẹ̀kan lẹ́yìn micro-batch
  N, kí o sì sọ ọ́ di òdo lẹ́sẹ̀kẹsẹ̀ lẹ́yìn náà.
- Èsì float32 yàtọ̀ díẹ̀ ní àwọn díjíìtì tó kẹ́yìn nítorí ètò àròpọ̀, kì í ṣe nítorí pé ìkójọpọ̀
  kò tọ̀nà; float64 fi hàn pé wọ́n dọ́gba títí dé rounding tirẹ̀, nǹkan bí $10^{-16}$.

Ẹ̀kọ́ tó kàn: ẹ̀kọ́ 2, níbi tí pípín loss ti ń ṣàṣìṣe nínú kóòdù gidi."""
    + _CLOSE,
    2: _OPEN
    + """\
Gbogbo àṣìṣe tí ẹ̀kọ́ yìí wọ̀n jẹ́ ipa tí a fi sí ibi tí kò yẹ:

- Fún micro-batch kọ̀ọ̀kan ní ipa ìpín rẹ̀ nínú ohun tí loss ń ṣe àròpín lé lórí: àpẹẹrẹ, tàbí
  token gidi (fún causal language model, àwọn label tí a ti sún). Àṣìṣe token ń kọ́ model fún
  ipa tí kò tọ̀nà: kò ṣe ìpalára lórí micro-batch tí a dà pọ̀ dáadáa, ṣùgbọ́n model mìíràn ló
  ń jáde lórí àwọn tí a kó jọ gẹ́gẹ́ bí gígùn wọn.
- Loss tí ó tóbi ní ìlọ́po N jẹ́ ìlọ́po N ìmúdójúìwọ̀n fún SGD, kò sì fẹ́rẹ̀ yí nǹkan padà fún
  Adam — títí clipping, weight decay tàbí loss kejì yóò fi mú kí ìwọ̀n gradient ṣe pàtàkì.
- Pín fèrèsé tó kẹ́yìn sí ohun tí ó ní, kì í ṣe sí N tí a ṣètò.
- Pe scheduler, clipping àti logging lẹ́ẹ̀kan fún ìmúdójúìwọ̀n optimizer kọ̀ọ̀kan.

Ẹ̀kọ́ tó kàn: ibi kan ṣoṣo tí ipa kankan kò ti lè ṣèrànwọ́ — BatchNorm."""
    + _CLOSE,
    3: _OPEN
    + """\
- Ìkójọpọ̀ pé gẹ́lẹ́ nígbà tí loss àpẹẹrẹ kọ̀ọ̀kan bá gbára lé àpẹẹrẹ náà nìkan. BatchNorm ní
  ipò training ń ba èyí jẹ́: forward pass rẹ̀ gbára lé micro-batch.
- Ìyàtọ̀ gradient ń pọ̀ sí i bí micro-batch ṣe ń kéré sí i; BatchNorm1d ń jìyà ju
  BatchNorm2d lọ.
- Tí a bá kọ́ model dé òpin, micro-batch 16 sí 32 fún BatchNorm kọ̀ọ̀kan ń ṣe dáadáa bíi
  gbogbo batch; àpẹẹrẹ díẹ̀ kò ṣe bẹ́ẹ̀. Kíkó micro-batch N jọ ń ṣe ohun tí GPU N ń ṣe pẹ̀lú
  BatchNorm lásán gẹ́lẹ́; àwọn ètò SyncBatchNorm nìkan ni kò ṣeé ṣe.
- Running statistics ń yí padà ní ìgbà N fún fèrèsé kọ̀ọ̀kan; momentum $1-(1-m)^{1/N}$ fẹ́rẹ̀
  tún un ṣe.
- LayerNorm, GroupNorm àti BatchNorm ní ipò eval pé gẹ́lẹ́; pẹ̀lú iye kan ṣoṣo fún channel
  kọ̀ọ̀kan, èsì BatchNorm jẹ́ bias rẹ̀ nìkan, PyTorch sì kọ̀ ọ́.
- Dropout dọ́gba ní àròpín nìkan; dá àwọn mask dúró (tàbí lo ipò eval) láti fi wọ́n wéra
  gẹ́lẹ́."""
    + _CLOSE,
    4: _OPEN
    + """\
- Activations nìkan ló ń tẹ̀lé ìwọ̀n micro-batch: bí N ṣe ń pọ̀ sí i, peak memory ń dínkù, ó
  sì dúró lórí ìpìlẹ̀ — weights, gradient wọn àti ipò optimizer.
- Ìkójọpọ̀ ń dín memory kù, kì í ṣe àkókò: micro-batch kékeré ń ṣe iṣẹ́ díẹ̀ ní ìpè kọ̀ọ̀kan,
  nítorí náà ìmúdójúìwọ̀n kọ̀ọ̀kan ń pẹ́ sí i.
- Láti ṣètò: yan N tí ó kéré jù tí peak rẹ̀ (ìpìlẹ̀ + micro-batch × activations fún àpẹẹrẹ
  kọ̀ọ̀kan) wọ inú memory tí ó wà.
- Lórí GPU, wọn peak gan-an pẹ̀lú `torch.cuda.max_memory_allocated`."""
    + _CLOSE,
    5: _OPEN
    + """\
- Training tí a kó jọ (micro-batch 32, mẹ́rin-mẹ́rin) wà lórí ìlà training batch 128, títí
  dé rounding; batch 32 láìsí ìkójọpọ̀ jẹ́ training mìíràn.
- Scheduler àti clipping ń ṣiṣẹ́ lẹ́ẹ̀kan fún ìmúdójúìwọ̀n optimizer kọ̀ọ̀kan; ṣírò gígùn
  schedule ní ìmúdójúìwọ̀n optimizer: `math.ceil(len(dataloader) / N) * epochs`.
- `torch.compile` ń ṣiṣẹ́ lẹ́ẹ̀kan sí i fún micro-batch tó kẹ́yìn tí ó kúrú: mú ìrísí dúró
  (`drop_last=True`), tàbí sọ pé ìwọ̀n batch lè yí padà (`torch.compile(model, dynamic=True)`)."""
    + _CLOSE,
    6: _OPEN
    + """\
- Batch àpapọ̀ = world size × micro-batch × iye ìkójọpọ̀: ṣírò N lẹ́ẹ̀kan sí i tí iye GPU
  bá yí padà.
- `no_sync()` gbọ́dọ̀ bo forward àti backward gbogbo micro-batch àfi èyí tó kẹ́yìn nínú
  fèrèsé; àṣìṣe náà (backward nìkan) ṣì ń kọ́ model dáadáa, ṣùgbọ́n ó ń ṣe all-reduce ní ìgbà N
  fún ìmúdójúìwọ̀n kọ̀ọ̀kan, èyí tí ó ń gba àkókò. Gbogbo process gbọ́dọ̀ ṣe iye micro-batch
  kan náà: ọ̀kan tí ó lé ń dá iṣẹ́ náà dúró, tàbí kí ó bá all-reduce mìíràn pàdé kí ó sì da
  fèrèsé pọ̀ láìsí ẹni tí yóò mọ̀ (`Join` àti `TORCH_DISTRIBUTED_DEBUG=DETAIL` ń ṣèrànwọ́).
- Loss lórí token: ṣe all-reduce iye token G fèrèsé, kí o sì fi W / G sọ àpapọ̀ loss process
  kọ̀ọ̀kan di púpọ̀ (W: world size, nítorí DDP ń ṣe àròpín lórí àwọn process).
- Mixed precision: ìkójọpọ̀ kò fi àṣìṣe kún un nígbà tí fèrèsé bá ń kó jọ ní float32; `.grad`
  bfloat16 ń fi àṣìṣe tí ó tó ìdá díẹ̀ nínú ọgọ́rùn-ún kún un lórí fèrèsé gígùn, nítorí náà
  kó jọ sínú buffers float32. Pẹ̀lú GradScaler, pe `scaler.unscale_()` lẹ́ẹ̀kan ní fèrèsé
  kọ̀ọ̀kan ṣáájú clipping, `scaler.step()` àti `scaler.update()` lẹ́ẹ̀kan, kí o sì pe scheduler
  lẹ́yìn ìmúdójúìwọ̀n gidi nìkan.
- Checkpointing àti ìkójọpọ̀ jẹ́ ọ̀nà méjì tí ó ń ran ara wọn lọ́wọ́ láti dín memory kù;
  sharding (FSDP/ZeRO) ń dín ìpìlẹ̀ kù. Nínú FSDP, fífo sync sílẹ̀ ń pa gradient tí a kò pín
  mọ́, àti pẹ̀lú resharding àtilẹ̀wá ó ń dín ìbánisọ̀rọ̀ kù títí dé ìdá mẹ́ta (`FULL_SHARD`) tàbí
  ìdajì (`SHARD_GRAD_OP`), bí fèrèsé ṣe ń gùn sí i (ní N = 4: ìdá kan nínú mẹ́rin, ìdá mẹ́ta
  nínú mẹ́jọ); pípa àwọn parameter mọ́ láìpín jákèjádò fèrèsé ń dín
  in kù ní nǹkan bí ìlọ́po N pẹ̀lú `SHARD_GRAD_OP`, ṣùgbọ́n ẹ̀dà wọn kíkún yóò wà nínú memory.
  Ṣe clipping lórí norm gbogbo gradient (DTensor FSDP2, `model.clip_grad_norm_` nínú FSDP1),
  lẹ́ẹ̀kan, lẹ́yìn sync fèrèsé. Nínú DeepSpeed, stage ló ń pinnu: ZeRO-0/1 ń ṣe
  reduce lẹ́ẹ̀kan ní fèrèsé kọ̀ọ̀kan, ZeRO-2/3 lẹ́yìn micro-batch kọ̀ọ̀kan
  ([orísun](../docs/sources.md#lesson-6)).
- Pipeline parallelism náà ń pín batch sí micro-batch: bí wọ́n bá ṣe pọ̀ tó, bẹ́ẹ̀ ni bubble
  ṣe ń kéré tó."""
    + _CLOSE,
    7: _OPEN
    + """\
- Lórí fèrèsé tí ó kún, gbogbo framework ń ṣe ohun tí gbogbo batch ń ṣe, títí dé rounding
  float32.
- Fèrèsé tó kẹ́yìn tí ó kúrú: Trainer tọ̀nà; Accelerate àti Lightning ń pín in sí N; loop
  ìwé-ẹ̀kọ́ ń fò ó. Fún micro-batch kọ̀ọ̀kan ní ipa ohun tí fèrèsé ní, lọ́nà N, láti tún un ṣe.
- Token: Trainer nìkan ló ń kà wọ́n, ó sì tọ̀nà nìkan tí ó bá mọ̀ pé loss ń sún label rẹ̀.
- Trainer ń kọ loss fèrèsé sílẹ̀; `self.log` ti Lightning àti loop Accelerate ń fi ti
  micro-batch tó kẹ́yìn hàn.
- Scheduler ń lọ síwájú lẹ́ẹ̀kan fún ìmúdójúìwọ̀n optimizer kọ̀ọ̀kan: ṣírò gígùn rẹ̀ ní
  ìmúdójúìwọ̀n optimizer. Àyàfi ti Accelerate lórí process W, tí ó ń lọ síwájú ní ìgbà W (àfi
  tí `DataLoaderConfiguration(split_batches=True)` bá wà): ṣírò gígùn rẹ̀ fún gbogbo DataLoader,
  kí o tó pe `prepare`.
- Gbogbo wọn ń ṣe clipping lẹ́ẹ̀kan ní fèrèsé kọ̀ọ̀kan; Trainer ń ṣe é láìjẹ́ pé a sọ fún un."""
    + _CLOSE,
    8: _OPEN
    + """\
Gbogbo rẹ̀ tọ̀nà ní ìgbìyànjú àkọ́kọ́? O lè ṣàlàyé ìkójọpọ̀ gradient fún ẹlẹgbẹ́ rẹ: ohun tí ó
ń kó jọ, ìgbà tí a ó ṣe ìmúdójúìwọ̀n àti tí a ó sọ gradient di òdo, bí a ṣe ń pín loss, ìdí
tí BatchNorm kò fi bá a mu, ohun tí ó ń ná ní memory àti àkókò, àti bí ó ṣe ń bá GPU púpọ̀ àti
àwọn framework pàdé. Ṣé o ṣàṣìṣe ọ̀kan? Ìtọ́ka rẹ̀ ń dárúkọ èrò náà, ẹ̀kọ́ tí a tò lókè sì ń
wọ̀n ọ́."""
    + _CLOSE,
}
