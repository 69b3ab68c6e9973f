"""The self-check's languages: English, and Yorùbá for every question of the bank.

`words_for(lang)` gives what the quiz itself says (Check, Right!, the score...);
`translated(question, lang)` gives a question in that language; `languages_of(questions)`
the languages in which every one of them is written. The Yorùbá texts live in `yoruba.py`
(the FAQ) and beside each lesson's questions (`questions.YORUBA`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gradacc_lessons.quiz import yoruba
from gradacc_lessons.quiz.questions import YORUBA, AnyQuestion, Prediction, Question

LANGUAGES = {"en": "English", "yo": "Yorùbá"}


@dataclass(frozen=True)
class Words:
    """Everything the quiz says besides the questions; `{name}` fields are filled in."""

    question: str
    lesson: str  # beside a question's number where a quiz spans several lessons
    check: str
    show_answer: str
    right: str
    not_quite: str
    hint: str
    try_again: str
    answer_is: str
    first_counts: str
    pick_first: str
    type_first: str
    not_a_number: str
    not_a_choice: str
    too_high: str
    too_low: str
    value_is: str
    within: str
    exact: str
    computation: str
    score: str
    skipped: str
    the_end: str
    hint_title: str
    answer_title: str
    static_note: str
    ask_choice: str
    ask_number: str
    placeholder: str


ENGLISH = Words(
    question="Question {number}.",
    lesson="lesson {lesson}",
    check="Check",
    show_answer="Show the answer",
    right="Right!",
    not_quite="Not quite.",
    hint="Hint:",
    try_again="Try again, or show the answer.",
    answer_is="The answer is {answer}.",
    first_counts="The score counts your first answer.",
    pick_first="Pick one of the choices first, then press Check.",
    type_first="Type a number first, then press Check.",
    not_a_number="“{text}” is not a number: type one such as 0.75, 1024 or 3/4.",
    not_a_choice="“{text}” is not one of the choices: type a letter from A to {last}.",
    too_high="{guess} is too high.",
    too_low="{guess} is too low.",
    value_is="The lesson's package computes {value}.",
    within="Answers within ±{tolerance} count as right.",
    exact="Only the exact number counts as right.",
    computation="How the lesson computes it:",
    score="Score: {first} / {total} at the first try · {final} / {total} right in the end",
    skipped="Skipped.",
    the_end="The end.",
    hint_title="Hint",
    answer_title="Answer",
    static_note="Run this notebook in JupyterLab or Colab to check your answers and get a score.",
    ask_choice="Your answer (A-{last}; ? shows the answer; Enter skips): ",
    ask_number="Your number (? shows the answer; Enter skips): ",
    placeholder="a number",
)

_WORDS = {"en": ENGLISH, "yo": Words(**yoruba.WORDS)}
_TEXTS = {"yo": {**yoruba.FAQ, **YORUBA}}


def words_for(lang: str) -> Words:
    """What the quiz says in `lang` ("en" or "yo").

    >>> words_for("yo").check
    'Ṣàyẹ̀wò'
    """
    _check_language(lang)
    return _WORDS[lang]


def translated(question: AnyQuestion, lang: str) -> AnyQuestion:
    """`question` in `lang`: the same id and answer, its texts in that language.

    >>> from gradacc_lessons.quiz.questions import question
    >>> translated(question("faq2_purpose"), "yo").prompt
    'Kini ikojọpọ gradient nipataki jẹ ki o ṣe?'
    """
    _check_language(lang)
    if not isinstance(question, (Question, Prediction)):
        raise ValueError(f"question must be a Question or Prediction of the bank, got {question!r}")
    if lang == "en":
        return question
    wording = _TEXTS[lang].get(question.id)
    if wording is None:
        raise ValueError(
            f"question {question.id!r} has no text in lang={lang!r}: in {LANGUAGES[lang]} the "
            "quiz asks the questions of the bank; pass those, or lang='en'"
        )
    texts = dict(prompt=wording.prompt, hint=wording.hint, explanation=wording.explanation)
    if isinstance(question, Question):
        texts["choices"] = wording.choices
    return replace(question, **texts)


def languages_of(questions) -> list[str]:
    """The languages in which every one of `questions` has its text, English first.

    >>> from gradacc_lessons.quiz.questions import questions_for
    >>> languages_of(questions_for(1))
    ['en', 'yo']
    """
    questions = list(questions)
    for q in questions:
        if not isinstance(q, (Question, Prediction)):
            raise ValueError(
                f"questions contains {q!r}, which is not a question: pass items of "
                "gradacc_lessons.quiz.questions (questions_for, faq_questions, question)"
            )
    ids = [q.id for q in questions]
    return ["en", *(lang for lang, texts in _TEXTS.items() if all(i in texts for i in ids))]


def _check_language(lang: str) -> None:
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {sorted(LANGUAGES)}, got {lang!r}")
