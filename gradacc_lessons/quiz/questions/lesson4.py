"""Lesson 4's self-check: peak memory."""

from __future__ import annotations

from gradacc_lessons.quiz.questions.kinds import Prediction, Question
from gradacc_lessons.quiz.yoruba import Wording

LESSON4 = (
    Question(
        id="l4_floor",
        lesson=4,
        prompt=(
            "You keep the effective batch fixed and double the number of accumulation steps "
            "again and again. What does the peak memory approach?"
        ),
        choices=(
            "Zero, because memory is proportional to the micro-batch",
            "The activations of the whole effective batch, kept once",
            "What the parameters, gradients and optimizer state take",
            "About half of the peak measured without accumulation",
        ),
        answer=2,
        hint="Which parts of training memory do not depend on the samples one forward pass sees?",
        explanation=(
            "Only activations shrink with the micro-batch. Weights, their gradients and the "
            "optimizer's state exist whatever the micro-batch, so the peak levels off just "
            "above them: the floor plus the optimizer step's temporaries."
        ),
    ),
    Question(
        id="l4_time",
        lesson=4,
        prompt=(
            "The whole batch fits in memory. Compared with processing it at once, how does "
            "splitting it into 8 accumulated micro-batches change the time per update?"
        ),
        choices=(
            "It gets about 8 times shorter, one eighth of the work each",
            "It gets shorter, because the optimizer steps fewer times",
            "It gets shorter, as the activations are 8 times smaller",
            "It gets longer: small operations do less work per call",
        ),
        answer=3,
        hint="Accumulation changes how many samples each operation sees, not how many there are.",
        explanation=(
            "Accumulation saves memory, not time: the lesson measured it slower than the batch "
            "at once. It processes more samples per second than a step after every small "
            "batch, but makes N times fewer updates."
        ),
    ),
    Prediction(
        id="l4_predict_floor",
        lesson=4,
        prompt=(
            "A model of 10 million float32 parameters (torch.nn.Linear(10_000, 1_000)) is "
            "trained with Adam. How many MB (millions of bytes) do its parameters, gradients "
            "and optimizer state take together?"
        ),
        value=160.016,
        tolerance=1.0,
        computation=(
            "import torch\n"
            "from gradacc_lessons.memory import estimate_training_memory\n\n"
            "model = torch.nn.Linear(10_000, 1_000)\n"
            "optimizer = torch.optim.Adam(model.parameters())\n"
            "estimate_training_memory(model, optimizer, 1, 0.0).floor_bytes / 1e6"
        ),
        hint="Count the copies of the parameters: the weights, their gradients, Adam's moments.",
        explanation=(
            "10,001,000 parameters of 4 bytes: 40 MB of weights, 40 MB of gradients and Adam's "
            "two moments of 40 MB each, four copies in all: 160 MB (plus 8 bytes of step counts)."
        ),
    ),
)

# The same questions in Yorùbá (docs/yoruba.md), the choices in the order above.
LESSON4_YORUBA: dict[str, Wording] = {
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
            "optimizer wà níbẹ̀ bí micro-batch ti wù kí ó rí, nítorí náà peak dúró díẹ̀ lókè "
            "wọn: ìpìlẹ̀ náà pẹ̀lú àwọn tensor ìgbà díẹ̀ ti ìgbésẹ̀ optimizer."
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
    "l4_predict_floor": Wording.prediction(
        "A ń kọ́ model tí ó ní parameter float32 mílíọ̀nù 10 (torch.nn.Linear(10_000, 1_000)) "
        "pẹ̀lú Adam. MB mélòó (mílíọ̀nù byte) ni parameters rẹ̀, gradient wọn àti ipò optimizer "
        "ń gbà papọ̀?",
        "Ka ẹ̀dà parameters: weights, gradient wọn, moment méjì ti Adam.",
        "Parameter 10,001,000 tí ọ̀kọ̀ọ̀kan jẹ́ byte 4: weights 40 MB, gradient 40 MB àti "
        "moment méjì Adam tí ọ̀kọ̀ọ̀kan jẹ́ 40 MB, ẹ̀dà mẹ́rin lápapọ̀: 160 MB (àti byte 8 fún "
        "kíka ìmúdójúìwọ̀n).",
    ),
}
