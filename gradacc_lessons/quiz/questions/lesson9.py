"""Lesson 9's self-check: planning a real fine-tune."""

from __future__ import annotations

from gradacc_lessons.quiz.questions.kinds import Question
from gradacc_lessons.quiz.yoruba import Wording

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

# The same questions in Yorùbá (docs/yoruba.md), the choices in the order above.
LESSON9_YORUBA: dict[str, Wording] = {
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
            "Ó ń wọ̀n ìgbésẹ̀ náà lórí memory ẹ̀rọ yìí, bíi profiler",
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
