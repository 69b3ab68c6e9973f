"""Lesson 1's self-check: accumulation is a full batch."""

from __future__ import annotations

from gradacc_lessons.quiz.questions.kinds import Prediction, Question
from gradacc_lessons.quiz.yoruba import Wording

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

# The same questions in Yorùbá (docs/yoruba.md), the choices in the order above.
LESSON1_YORUBA: dict[str, Wording] = {
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
    "l1_predict_steps": Wording.prediction(
        "train_accumulated gba micro-batch 10 àti accumulation_steps=4. Ìgbà mélòó ni ó ń pe "
        "optimizer.step()?",
        "Pín micro-batch 10 sí fèrèsé 4 kọ̀ọ̀kan. Kí ló ń ṣẹlẹ̀ sí fèrèsé tó kẹ́yìn tí ó kúrú?",
        "Fèrèsé micro-batch 4, 4 àti 2: ìmúdójúìwọ̀n kan fún ọ̀kọ̀ọ̀kan, títí kan fèrèsé tó "
        "kẹ́yìn tí ó kúrú (tí a pín loss rẹ̀ gẹ́gẹ́ bí àwọn àpẹẹrẹ tirẹ̀), nítorí náà 3.",
    ),
}
