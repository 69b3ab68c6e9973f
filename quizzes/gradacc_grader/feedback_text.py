"""Every sentence the grader writes to a student, per language: one catalogue.

- `MESSAGES`: the test cells' messages (gradacc_grader.trusted, gradacc_grader.grading);
- `REPORT` and `CASES`: the words of an exercise's case-by-case report and its case names
  (gradacc_grader.scoring; each exercise's hints live next to its reference, in exercises/);
- `REASONS`: why a case or a submission failed. The code that finds out (the sandbox, the
  harness, the exercises' comparisons, gradacc-grade) writes its reason in English, as data
  for the instructor's table; `reason(text, lang)` gives the student that reason in `lang`.

Code stays code: a Python error, a name, a log line the sandbox sent are shown as they came,
between backticks; what surrounds them is in the student's language.
"""

from __future__ import annotations

import re

MESSAGES = {
    "en": {
        "right": "Right ({points:g} / {max:g}): {why}",
        "wrong": "{variable} = {value}: not right (0 / {max:g}).",
        "why": "What this choice gets wrong: {why}",
        "later": "Why it is wrong is explained once the due date, {due} UTC, has passed.",
        "undated": "Why it is wrong is explained once this assignment has a due date and it "
        "has passed.",
        "unset": "{variable} was not set to a string when this cell ran (0 / {max:g}).",
        "several": "{variable} was reported {count} times in this cell (0 / {max:g}).",
        "unknown": '{variable} = {value} is not one of "A", "B", "C", "D" (0 / {max:g}).',
        "not_run": "{function} could not be graded (0 / {max:g}): {why}",
        "not_graded": "Not graded: {why}",
        "no_key": "Not graded: the course's answer key has no entry for this cell.",
    },
    "yo": {
        "right": "Ó tọ̀nà ({points:g} / {max:g}): {why}",
        "wrong": "{variable} = {value}: kò tọ̀nà (0 / {max:g}).",
        "why": "Ibi tí ìdáhùn yìí ti ṣàṣìṣe: {why}",
        "later": "Ìdí tí kò fi tọ̀nà yóò hàn lẹ́yìn ọjọ́ ìparí, {due} UTC.",
        "undated": "Ìdí tí kò fi tọ̀nà yóò hàn lẹ́yìn tí olùkọ́ bá ti fi ọjọ́ ìparí sí iṣẹ́ "
        "yìí, tí ọjọ́ náà sì ti kọjá.",
        "unset": "A kò fi lẹ́tà kankan sínú {variable} nígbà tí sẹ́ẹ̀lì yìí ṣiṣẹ́ (0 / {max:g}).",
        "several": "{variable} fara hàn ní ìgbà {count} nínú sẹ́ẹ̀lì yìí (0 / {max:g}).",
        "unknown": '{variable} = {value} kì í ṣe "A", "B", "C" tàbí "D" (0 / {max:g}).',
        "not_run": "A kò lè máàkì {function} (0 / {max:g}): {why}",
        "not_graded": "A kò máàkì iṣẹ́ yìí: {why}",
        "no_key": "A kò máàkì sẹ́ẹ̀lì yìí: kọ́kọ́rọ́ ìdáhùn ẹ̀kọ́ náà kò ní nǹkan kan fún un.",
    },
}

REPORT = {
    "en": {"hint": "Hint", "total": "points"},
    "yo": {"hint": "Ìtọ́ka", "total": "máàkì"},
}

# The exercises' case names (inside/<module>.py names them in English, as keys).
CASES = {
    "en": {},
    "yo": {
        "whole windows": "fèrèsé tí ó kún",
        "a short last window": "fèrèsé tó kẹ́yìn tí ó kúrú",
        "leftover gradients": "gradient tí ó kù sílẹ̀ ṣáájú",
        "uneven real tokens": "iye token gidi tí kò dọ́gba",
        "one all-reduce per window": "all-reduce kan ṣoṣo fún fèrèsé kọ̀ọ̀kan",
        "no accumulation": "láìsí ìkójọpọ̀",
        "one BatchNorm layer": "layer BatchNorm kan",
        "several BatchNorm layers": "layer BatchNorm púpọ̀",
        "a cumulative average is left alone": "àròpín àkójọ wà bí ó ṣe wà",
        "the whole batch fits": "gbogbo batch wọ inú memory",
        "a split is needed": "a gbọ́dọ̀ pín batch",
        "an exact fit": "ó wọ̀ gẹ́lẹ́",
        "a budget below the floor": "memory tí kò tó ìpìlẹ̀",
    },
}

# (pattern, template): the first pattern that matches the whole English reason gives its
# text in the language. In a template, a group named `n…` is a number, kept as it is; `code…`
# is code or data, shown between backticks; `why…` is itself a reason, translated in turn.
REASONS = {
    "yo": (
        (r"no result", "kò sí èsì kankan"),
        (r"no weights came back", "kò sí weights kankan tí ó padà dé"),
        (r"the weights have the wrong shapes", "ìrísí àwọn weights kò tọ̀nà"),
        (
            r"the weights are not all finite numbers \(NaN or infinity\)",
            "àwọn weights kan kì í ṣe nọ́mbà tí ó ní òpin (NaN tàbí infinity)",
        ),
        (
            r"the weights differ from one full-batch step per window by (?P<n>\S+)",
            "weights yàtọ̀ sí ti ìmúdójúìwọ̀n kan pẹ̀lú gbogbo batch fèrèsé kọ̀ọ̀kan, ní {n}",
        ),
        (
            r"the model must see one micro-batch at a time",
            "model gbọ́dọ̀ rí micro-batch kan ṣoṣo ní ẹ̀ẹ̀kan",
        ),
        (r"the BatchNorm layers are not all there", "àwọn layer BatchNorm kò pé"),
        (
            r"a layer with momentum=None got a momentum",
            "layer tí momentum rẹ̀ jẹ́ `None` gba momentum mìíràn",
        ),
        (
            r"the function raised ValueError, though a plan fits",
            "function náà ju `ValueError`, bẹ́ẹ̀ sì ni ètò kan wà tí ó wọ inú memory",
        ),
        (r"no test cell (?P<code>.+)", "kò sí sẹ́ẹ̀lì ìdánwò {code}"),
        (r"the cells did not run: (?P<why>.*)", "àwọn sẹ́ẹ̀lì rẹ kò ṣiṣẹ́ dé òpin: {why}"),
        (r"(?P<why>it .*) \((?P<why2>[^()]*)\)", "{why} ({why2})"),
        (r"it did not finish in (?P<n>\d+) s", "kò parí láàárín ìṣẹ́jú-àáyá {n}"),
        (r"it sent more than (?P<n>\d+) bytes", "ó fi èsì tí ó ju byte {n} lọ ránṣẹ́"),
        (r"it sent an unreadable result", "èsì tí ó fi ránṣẹ́ kò ṣeé kà"),
        (r"it sent no result", "kò fi èsì kankan ránṣẹ́"),
        (r"its result is not a JSON object", "èsì tí ó fi ránṣẹ́ kì í ṣe ohun tí a ń retí"),
        (r"nothing on stderr", "kò kọ nǹkan kan sí stderr"),
        (r"(?P<code>\w+) is not defined: no cell ran", "a kò rí {code}: kò sí sẹ́ẹ̀lì tí ó ṣiṣẹ́"),
        (r"(?P<code>\w+) is not defined: (?P<code2>.*)", "a kò rí {code}: {code2}"),
        (
            r"(?P<code>[\w.]*(?:Error|Exception|Exit|Interrupt)\b.*)",
            "àṣìṣe Python: {code}",
        ),
        (r"failed: took more than (?P<n>\d+) s", "iṣẹ́ rẹ gba ju ìṣẹ́jú-àáyá {n} lọ"),
        (
            r"failed: grading ended with exit code (?P<n>-?\d+): (?P<code>.*)",
            "ìmáàkì dúró láìròtẹ́lẹ̀ ({n}): {code}",
        ),
        (r"failed: nbgrader recorded no submission", "nbgrader kò rí iṣẹ́ tí o fi ránṣẹ́"),
        (
            r"failed: (?P<code>.*(?:CellTimeoutError|timed out).*)",
            "sẹ́ẹ̀lì kan kò parí ní àkókò rẹ̀: {code}",
        ),
        (r"failed: (?P<code>.*)", "ìmáàkì kùnà: {code}"),
        (r"refused: (?P<code>.*)", "a kò gba iṣẹ́ rẹ: {code}"),
    ),
}
# A reason no pattern knows: shown as data, as it came.
UNKNOWN = {"yo": "ìdí: {code}"}


def _code(text: str) -> str:
    text = text.strip().replace("`", "'")
    return f"`{text}`" if text else "``"


def reason(text: str, lang: str) -> str:
    """Why a case or a submission failed, in `lang` (the English the code wrote, for "en").

    >>> reason("it did not finish in 300 s (nothing on stderr)", "yo")
    'kò parí láàárín ìṣẹ́jú-àáyá 300 (kò kọ nǹkan kan sí stderr)'
    >>> reason("NotImplementedError: ", "yo")
    'àṣìṣe Python: `NotImplementedError:`'
    """
    if lang not in MESSAGES:
        raise ValueError(f"lang must be one of {sorted(MESSAGES)}, got {lang!r}")
    text = str(text)
    if lang == "en":
        return text
    for pattern, template in REASONS[lang]:
        found = re.fullmatch(pattern, text, re.S)
        if found:
            parts = {}
            for name, value in found.groupdict().items():
                if name.startswith("why"):
                    parts[name] = reason(value, lang)
                elif name.startswith("code"):
                    parts[name] = _code(value)
                else:
                    parts[name] = value
            return template.format(**parts)
    return UNKNOWN[lang].format(code=_code(text))


def case_name(name: str, lang: str) -> str:
    """An exercise's case name in `lang` (as the exercise names it where the catalogue has none)."""
    return CASES[lang].get(name, name)
