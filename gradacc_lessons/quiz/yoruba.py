"""The FAQ quiz in Yoruba, the language of the guide this course is built from.

The guide asks its FAQ questions 1, 2 and 4 in Yoruba and answers them in Yoruba: those
prompts are used here word for word, and its answers are the explanations. Questions 3 and 5
are in English in the guide; their Yoruba text, the choices and the hints are ours, written
with the guide's own terms (ikojọpọ gradient, ipele, iranti, iwuwasi, pipadanu, imudojuiwọn).
Like the guide's FAQ, the items are written without tone marks; the quiz's own words
(`WORDS`) carry them, like the guide's own "Ìdáhùn lẹ́sẹ̀kẹsẹ̀".
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Wording:
    """A question's text in another language; the choices in the bank's order."""

    prompt: str
    choices: tuple[str, ...]
    hint: str
    explanation: str


FAQ: dict[str, Wording] = {
    "faq1_what": Wording(
        prompt="Kini ikojọpọ Gradient?",  # the guide's question 1
        choices=(
            "Ṣiṣe aropin awọn iwọn ti awọn awoṣe pupọ, ọkọọkan ti a kọ lori apakan data",
            "Gbigbe oṣuwọn ẹkọ soke diẹdiẹ bi iwọn ipele ṣe n pọ si lakoko ikẹkọ",
            "Pipọ awọn gradients ti awọn micro-batch pupọ, lẹhinna imudojuiwọn kan",
            "Titọju aropin pipadanu lori awọn micro-batch diẹ ti o kẹhin",
        ),
        hint="Ronu nipa ohun ti backward() ṣe si .grad ti ẹnikẹni ko sọ di odo.",
        explanation=(  # the guide's answer
            "Ikojọpọ Gradient jẹ ki o ṣe adaṣe iwọn ipele nla kan lori iranti GPU ti o lopin "
            "nipa pipọ awọn gradients lori ọpọlọpọ awọn ipele kekere kekere ṣaaju mimu dojuiwọn "
            "awọn iwọn. O jẹ adaṣe boṣewa fun ikẹkọ awọn awoṣe nla nigbati iranti jẹ igo."
        ),
    ),
    "faq2_purpose": Wording(
        prompt="Kini ikojọpọ gradient nipataki jẹ ki o ṣe?",  # the guide's question 2
        choices=(
            "Ṣe ikẹkọ pẹlu ipele nla nigbati iranti gba ipele kekere nikan",
            "Ṣe ikẹkọ yiyara ju igba ti gbogbo ipele wa ni iranti ni ẹẹkan",
            "De deede kanna pẹlu awọn paramita to kere ninu awoṣe naa",
            "Fo kọja sẹhin (backward) fun pupọ julọ awọn micro-batch",
        ),
        hint="Kini o n dagba pẹlu ipele ni ikẹkọ: awọn paramita, tabi ohun ti backward() nilo?",
        explanation=(  # the guide's answer
            "Nipa pipọ awọn gradients lori ọpọlọpọ awọn ipele kekere ṣaaju ṣiṣe imudojuiwọn, "
            "o ṣe afiwe ipele nla kan laisi idaduro gbogbo rẹ ni iranti ni ẹẹkan."
        ),
    ),
    "faq3_when_step": Wording(
        prompt=(
            "Pẹlu ifosiwewe ikojọpọ N, nigbawo ni optimizer.step() ati zero_grad() yẹ ki o waye?"
        ),
        choices=(
            "Mejeeji lẹhin micro-batch kọọkan, ki imudojuiwọn kọọkan ri awọn gradients titun",
            "step() lẹhin micro-batch kọọkan, zero_grad() lẹẹkan lẹhin ferese N kọọkan",
            "zero_grad() lẹhin micro-batch kọọkan, step() lẹẹkan lẹhin ferese N kọọkan",
            "step() lẹhinna zero_grad(), lẹẹkan ni ferese kọọkan lẹhin micro-batch ti N",
        ),
        hint="Ewo ninu awọn ipe meji naa ni yoo da awọn gradients ti a tun n ko jọ nu?",
        explanation=(
            "Ko awọn gradients jọ kọja awọn micro-batch N (ferese kan), pe optimizer.step() "
            "lẹẹkan fun ipele ti o munadoko, lẹhinna sọ awọn gradients di odo ṣaaju ferese ti o "
            "tẹle; bẹrẹ ikẹkọ pẹlu awọn buffers ti a ti sọ di odo."
        ),
    ),
    "faq4_norm_layers": Wording(
        prompt="Eyi ti normalization Layer orisii diẹ mọ pẹlu gradient ikojọpọ?",  # question 4
        choices=(
            "BatchNorm, nitori pe o ṣe iwuwasi lori gbogbo awọn apẹẹrẹ ti ipele",
            "LayerNorm ati GroupNorm, nitori wọn ṣe iwuwasi apẹẹrẹ kọọkan lọtọ",
            "Layer iwuwasi eyikeyi, niwọn igba ti a ba pin pipadanu kọọkan si N",
            "Ko si ọkan: gbogbo layer iwuwasi ni o n fọ ibaamu naa",
        ),
        hint="Ṣe abajade apẹẹrẹ kan da lori awọn apẹẹrẹ miiran ninu micro-batch rẹ?",
        explanation=(  # the guide's answer
            "Batch-norm ṣe iṣiro awọn iṣiro fun ipele kekere, nitorinaa Layer tabi iwuwasi "
            "ẹgbẹ yago fun ibaamu pẹlu awọn ipele kekere kekere."
        ),
    ),
    "faq5_batchnorm": Wording(
        prompt=(
            "Kini idi ti micro-batch mẹrin pẹlu BatchNorm fi le huwa yatọ si ipele ti ara kan "
            "ti iwọn lapapọ kanna?"
        ),
        choices=(
            "A ko pin pipadanu ti ọkọọkan awọn micro-batch mẹrin naa si mẹrin",
            "Awọn aṣiṣe iyipo float32 n pọ si lori awọn kọja sẹhin mẹrin naa",
            "A ṣe iwuwasi micro-batch kọọkan pẹlu aropin ati iyatọ tirẹ",
            "Momentum olupilẹṣẹ ni a ṣe imudojuiwọn ni igba mẹrin dipo ẹẹkan",
        ),
        hint="Ṣe apẹẹrẹ kan gba abajade kanna ninu micro-batch bi ninu gbogbo ipele?",
        explanation=(
            "Awọn iṣiro siwaju ti o da lori ipele n fọ ibaamu gangan. Ko si asekale pipadanu ti "
            "o le tun un ṣe: awọn micro-batch ṣe iṣiro iṣẹ miiran ju gbogbo ipele lọ."
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
    "hint": "Ìtọ́ni:",
    "try_again": "Gbìyànjú lẹ́ẹ̀kan sí i, tàbí fi ìdáhùn hàn.",
    "answer_is": "Ìdáhùn náà ni {answer}.",
    "first_counts": "Àmì náà ka ìdáhùn àkọ́kọ́ rẹ.",
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
    "score": "Àmì: {first} / {total} ní ìgbìyànjú àkọ́kọ́ · {final} / {total} tọ̀nà ní ìparí",
    "skipped": "O fò ó.",
    "the_end": "Ìparí.",
    "hint_title": "Ìtọ́ni",
    "answer_title": "Ìdáhùn",
    "static_note": "Ṣí ìwé yìí nínú JupyterLab tàbí Colab láti ṣàyẹ̀wò àwọn ìdáhùn rẹ pẹ̀lú àmì.",
    "ask_choice": "Ìdáhùn rẹ (A-{last}; ? fi ìdáhùn hàn; Enter fò ó): ",
    "ask_number": "Nọ́mbà rẹ (? fi ìdáhùn hàn; Enter fò ó): ",
    "placeholder": "nọ́mbà kan",
}
