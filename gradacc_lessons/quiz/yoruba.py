"""The FAQ quiz in Yorùbá, the language of the guide this course is built from.

The guide asks its FAQ questions 1, 2 and 4 in Yorùbá: those prompts are its own words, kept
as it wrote them (`GUIDE_FAQ`, without tone marks: quotations). Its answers are shown as
quotations too, between « and », and the course's own explanation follows, saying kindly
where the guide's words mislead (FAQ 1's "igo", FAQ 2's "afiwe" and "idaduro", FAQ 4's
second half, which says the reverse of what it means). Everything else here is the course's
own Yorùbá: fully tone-marked, one word per idea, as tools/glossary.py and docs/yoruba.md set out.
"""

from __future__ import annotations

from dataclasses import dataclass

# The guide's FAQ as it wrote it (tests/data/guide_faq.txt): quotations, never retouched.
GUIDE_FAQ: dict[str, tuple[str, str]] = {
    "faq1_what": (
        "Kini ikojọpọ Gradient?",
        "Ikojọpọ Gradient jẹ ki o ṣe adaṣe iwọn ipele nla kan lori iranti GPU ti o lopin nipa "
        "pipọ awọn gradients lori ọpọlọpọ awọn ipele kekere kekere ṣaaju mimu dojuiwọn awọn "
        "iwọn. O jẹ adaṣe boṣewa fun ikẹkọ awọn awoṣe nla nigbati iranti jẹ igo.",
    ),
    "faq2_purpose": (
        "Kini ikojọpọ gradient nipataki jẹ ki o ṣe?",
        "Nipa pipọ awọn gradients lori ọpọlọpọ awọn ipele kekere ṣaaju ṣiṣe imudojuiwọn, o ṣe "
        "afiwe ipele nla kan laisi idaduro gbogbo rẹ ni iranti ni ẹẹkan.",
    ),
    "faq3_when_step": (
        "With an accumulation factor N, when should optimizer.step() and zero_grad() occur?",
        "Accumulate gradients across N micro-batches, call optimizer.step() once for the "
        "effective batch, then clear gradients before the next window; begin training with "
        "cleared buffers.",
    ),
    "faq4_norm_layers": (
        "Eyi ti normalization Layer orisii diẹ mọ pẹlu gradient ikojọpọ?",
        "Batch-norm ṣe iṣiro awọn iṣiro fun ipele kekere, nitorinaa Layer tabi iwuwasi ẹgbẹ "
        "yago fun ibaamu pẹlu awọn ipele kekere kekere.",
    ),
    "faq5_batchnorm": (
        "Why may four micro-batches with BatchNorm behave differently from one physical batch "
        "of the same total size?",
        "Batch-dependent forward computations break exact equivalence.",
    ),
}


def _quote(text: str) -> str:
    """The guide's `text` as a quotation: «text», which the glossary's check leaves alone."""
    return f"«{text}»"


def _guide_says(item: str, ours: str) -> str:
    """An explanation: the guide's answer to `item`, quoted, then the course's own words."""
    return f"Ìtọ́sọ́nà náà dáhùn pé: {_quote(GUIDE_FAQ[item][1])} {ours}"


@dataclass(frozen=True)
class Wording:
    """A question's text in another language; the choices in the bank's order."""

    prompt: str
    choices: tuple[str, ...]
    hint: str
    explanation: str

    @classmethod
    def prediction(cls, prompt: str, hint: str, explanation: str) -> Wording:
        """The wording of a Prediction: a number to type, so no choices."""
        return cls(prompt=prompt, choices=(), hint=hint, explanation=explanation)


FAQ: dict[str, Wording] = {
    "faq1_what": Wording(
        prompt=GUIDE_FAQ["faq1_what"][0],
        choices=(
            "Ṣíṣe àròpín weights ti model púpọ̀, tí a kọ́ ọ̀kọ̀ọ̀kan wọn lórí apá kan data",
            "Gbígbé learning rate sókè díẹ̀díẹ̀ bí ìwọ̀n batch ṣe ń pọ̀ sí i",
            "Kíkó gradient ti micro-batch púpọ̀ jọ, lẹ́yìn náà ìmúdójúìwọ̀n kan ṣoṣo",
            "Títọ́jú àròpín loss lórí àwọn micro-batch díẹ̀ tó kẹ́yìn",
        ),
        hint="Ronú nípa ohun tí backward() ń ṣe sí .grad tí ẹnìkan kò tíì sọ di òdo.",
        explanation=_guide_says(
            "faq1_what",
            "Ohun tí ìtọ́sọ́nà náà fẹ́ sọ tọ̀nà, àfi ọ̀rọ̀ kan: «igo» túmọ̀ sí bottle; ohun "
            "tí ó fẹ́ sọ ni pé memory kò tó. Ní ọ̀rọ̀ tiwa: backward() ń fi gradient "
            "micro-batch kọ̀ọ̀kan kún .grad; lẹ́yìn micro-batch N, optimizer.step() kan ṣoṣo "
            "ń lo àpapọ̀ wọn, tí ó jẹ́ gradient batch ńlá kan, nígbà tí memory ń gbé micro-batch "
            "kan ṣoṣo ní ẹ̀ẹ̀kan.",
        ),
    ),
    "faq2_purpose": Wording(
        prompt=GUIDE_FAQ["faq2_purpose"][0],
        choices=(
            "Kọ́ model pẹ̀lú batch ńlá nígbà tí memory gba batch kékeré nìkan",
            "Kọ́ model kíákíá ju ìgbà tí gbogbo batch wà nínú memory ní ẹ̀ẹ̀kan",
            "Dé accuracy kan náà pẹ̀lú parameter díẹ̀ nínú model náà",
            "Fò backward pass fún èyí tó pọ̀ jù nínú àwọn micro-batch",
        ),
        hint=(
            "Kí ló ń pọ̀ sí i bí batch ṣe ń tóbi sí i nígbà training: àwọn parameter ni, àbí "
            "ohun tí backward() nílò?"
        ),
        explanation=_guide_says(
            "faq2_purpose",
            "Èrò rẹ̀ tọ̀nà, ṣùgbọ́n «afiwe» túmọ̀ sí compare (kì í ṣe simulate), «idaduro» sì "
            "túmọ̀ sí delay (kì í ṣe holding). Ohun tí ó ń ṣẹlẹ̀ ni pé: memory ń gbé activations "
            "micro-batch kan ṣoṣo ní ẹ̀ẹ̀kan, nítorí náà peak memory ń tẹ̀lé micro-batch, nígbà "
            "tí ìmúdójúìwọ̀n ń tẹ̀lé batch àpapọ̀. Memory ni ìkójọpọ̀ gradient ń fún ọ, kì í ṣe "
            "ìyára.",
        ),
    ),
    "faq3_when_step": Wording(
        prompt=("Tí iye ìkójọpọ̀ bá jẹ́ N, ìgbà wo ló yẹ kí optimizer.step() àti zero_grad() ṣẹlẹ̀?"),
        choices=(
            "Àwọn méjèèjì lẹ́yìn micro-batch kọ̀ọ̀kan, kí ìmúdójúìwọ̀n kọ̀ọ̀kan rí gradient tuntun nìkan",
            "step() lẹ́yìn micro-batch kọ̀ọ̀kan, zero_grad() lẹ́ẹ̀kan lẹ́yìn fèrèsé N kọ̀ọ̀kan",
            "zero_grad() lẹ́yìn micro-batch kọ̀ọ̀kan, step() lẹ́ẹ̀kan lẹ́yìn fèrèsé N kọ̀ọ̀kan",
            "step() lẹ́yìn náà zero_grad(), lẹ́ẹ̀kan ní fèrèsé lẹ́yìn micro-batch kẹ́yìn",
        ),
        hint="Èwo nínú ìpè méjèèjì ni yóò da gradient tí a ṣì ń kó jọ nù?",
        explanation=_guide_says(
            "faq3_when_step",
            "Ní Yorùbá: kó gradient jọ lórí micro-batch N (fèrèsé kan), pe optimizer.step() "
            "lẹ́ẹ̀kan fún batch àpapọ̀, lẹ́yìn náà sọ gradient di òdo kí fèrèsé tó kàn tó "
            "bẹ̀rẹ̀; bẹ̀rẹ̀ training pẹ̀lú .grad tí a ti sọ di òdo.",
        ),
    ),
    "faq4_norm_layers": Wording(
        prompt=GUIDE_FAQ["faq4_norm_layers"][0],
        choices=(
            "BatchNorm, nítorí pé ó ń ṣe normalization lórí gbogbo àpẹẹrẹ inú batch",
            "LayerNorm àti GroupNorm, tí ń ṣe normalization àpẹẹrẹ kọ̀ọ̀kan lọ́tọ̀",
            "Layer normalization èyíkéyìí, tí a bá ti pín loss kọ̀ọ̀kan sí N",
            "Kò sí ọ̀kan: gbogbo layer normalization ló ń ba ìdọ́gba jẹ́",
        ),
        hint="Ṣé èsì àpẹẹrẹ kan gbára lé àwọn àpẹẹrẹ mìíràn nínú micro-batch rẹ̀?",
        explanation=_guide_says(
            "faq4_norm_layers",
            "Ìdajì àkọ́kọ́ ìdáhùn yìí tọ̀nà, ṣùgbọ́n ìdajì kejì sọ òdìkejì ohun tí ó fẹ́ sọ: "
            "«yago fun ibaamu» túmọ̀ sí “yẹra fún ìbámu”. Òtítọ́ ni pé LayerNorm àti GroupNorm "
            "ń ṣírò statistics wọn nínú àpẹẹrẹ kọ̀ọ̀kan, nítorí náà pípín batch sí micro-batch "
            "kò yí nǹkan kan padà: wọ́n bá ìkójọpọ̀ gradient mu dáadáa. Statistics BatchNorm "
            "ló gbára lé àwọn àpẹẹrẹ tí ó jọ wà nínú micro-batch kan náà.",
        ),
    ),
    "faq5_batchnorm": Wording(
        prompt=(
            "Kí ló dé tí micro-batch mẹ́rin pẹ̀lú BatchNorm fi lè ṣiṣẹ́ yàtọ̀ sí batch gidi kan "
            "tí ìwọ̀n àpapọ̀ rẹ̀ jẹ́ ọ̀kan náà?"
        ),
        choices=(
            "A kò pín loss ọ̀kọ̀ọ̀kan nínú micro-batch mẹ́rẹ̀ẹ̀rin sí mẹ́rin",
            "Àṣìṣe rounding ti float32 ń kó jọ lórí backward pass mẹ́rin náà",
            "Micro-batch kọ̀ọ̀kan ń lo mean àti variance tirẹ̀ fún normalization",
            "A ń ṣe ìmúdójúìwọ̀n momentum optimizer lẹ́ẹ̀mẹ́rin dípò lẹ́ẹ̀kan",
        ),
        hint="Ṣé àpẹẹrẹ kan máa ń ní èsì kan náà nínú micro-batch bí ó ṣe ní nínú gbogbo batch?",
        explanation=_guide_says(
            "faq5_batchnorm",
            "Bẹ́ẹ̀ ni: kò sí pípín loss tí ó lè tún èyí ṣe. Nígbà tí forward pass gbára lé "
            "batch, àwọn micro-batch ń ṣírò function mìíràn yàtọ̀ sí ti gbogbo batch.",
        ),
    ),
}

# The self-check's own words (the fields of `language.Words`).
WORDS: dict[str, str] = {
    "question": "Ìbéèrè {number}.",
    "check": "Ṣàyẹ̀wò",
    "show_answer": "Fi ìdáhùn hàn",
    "right": "Ó tọ̀nà!",
    "not_quite": "Kò tíì tọ̀nà.",
    "hint": "Ìtọ́ka:",
    "try_again": "Gbìyànjú lẹ́ẹ̀kan sí i, tàbí fi ìdáhùn hàn.",
    "answer_is": "Ìdáhùn náà ni {answer}.",
    "first_counts": "Máàkì náà ka ìdáhùn àkọ́kọ́ rẹ nìkan.",
    "pick_first": "Kọ́kọ́ yan ọ̀kan nínú àwọn àṣàyàn, lẹ́yìn náà tẹ Ṣàyẹ̀wò.",
    "type_first": "Kọ́kọ́ kọ nọ́mbà kan, lẹ́yìn náà tẹ Ṣàyẹ̀wò.",
    "not_a_number": "“{text}” kì í ṣe nọ́mbà: kọ nọ́mbà bíi 0.75, 1024 tàbí 3/4.",
    "not_a_choice": "“{text}” kì í ṣe ọ̀kan nínú àwọn àṣàyàn: kọ lẹ́tà láti A sí {last}.",
    "too_high": "{guess} ti ga jù.",
    "too_low": "{guess} ti kéré jù.",
    "value_is": "Ẹ̀kọ́ náà ṣírò {value}.",
    "within": "Ìdáhùn tí ó wà láàrin ±{tolerance} ni a kà sí títọ̀nà.",
    "exact": "Nọ́mbà náà gan-an nìkan ni a kà sí títọ̀nà.",
    "computation": "Bí ẹ̀kọ́ náà ṣe ṣírò rẹ̀:",
    "score": "Máàkì: {first} / {total} ní ìgbìyànjú àkọ́kọ́ · {final} / {total} tọ̀nà ní ìparí",
    "skipped": "O fò ó.",
    "the_end": "Ìparí.",
    "hint_title": "Ìtọ́ka",
    "answer_title": "Ìdáhùn",
    "static_note": (
        "Ṣí ìwé yìí nínú JupyterLab tàbí Colab láti ṣàyẹ̀wò àwọn ìdáhùn rẹ, kí o sì gba máàkì."
    ),
    "ask_choice": "Ìdáhùn rẹ (A-{last}; ? fi ìdáhùn hàn; Enter fò ó): ",
    "ask_number": "Nọ́mbà rẹ (? fi ìdáhùn hàn; Enter fò ó): ",
    "placeholder": "nọ́mbà kan",
    "lesson": "ẹ̀kọ́ {lesson}",
}
