"""A learner's attempts at a question: what counts for the score, and what the quiz says.

The rules, the same in every front end (widgets, terminal):

- the score counts each question's FIRST answer; later answers can make it right "in the
  end", never right at the first try;
- a first wrong answer gets the bank's hint and no answer; a second wrong answer, or a
  request, shows the answer with its explanation (and, for a prediction, its computation);
- asking for the answer before answering counts as a wrong first answer.

Everything here is a pure function of its arguments, so the tests need no widget.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from fractions import Fraction

from gradacc_lessons.quiz.language import Words
from gradacc_lessons.quiz.questions import LETTERS, AnyQuestion, Prediction, Question

Answer = int | float | None  # a choice's index, a typed number, or None (no answer)

# What a check leads to: "empty" (nothing to check), "right", "hint" (first wrong answer),
# "answer" (the answer is shown).
KINDS = ("empty", "right", "hint", "answer")


@dataclass(frozen=True)
class Attempt:
    """Where a learner stands on one question."""

    tries: int = 0  # answers checked so far
    first_right: bool | None = None  # the verdict on the first answer; None before it
    right: bool = False  # answered right before the answer was shown
    shown: bool = False  # the answer has been shown

    @property
    def over(self) -> bool:
        """Whether the question is settled: answered right, or its answer shown."""
        return self.right or self.shown


def is_right(question: AnyQuestion, answer: Answer) -> bool:
    """Whether `answer` is right: the right choice's index, or a number within the tolerance.

    >>> from gradacc_lessons.quiz.questions import question
    >>> is_right(question("l1_scale"), 0), is_right(question("l2_predict_last_window"), 0.755)
    (True, True)
    """
    _check_question(question)
    if answer is None:
        return False
    if isinstance(question, Prediction):
        return abs(_real("answer", answer) - question.value) <= question.tolerance
    last = len(question.choices) - 1
    if (
        isinstance(answer, bool)
        or not isinstance(answer, numbers.Integral)
        or not 0 <= answer <= last
    ):
        raise ValueError(
            f"answer={answer!r} is not a choice of question {question.id!r}: "
            f"pass a choice's index from 0 to {last}, or None"
        )
    return answer == question.answer


def _check_question(question: object) -> None:
    if not is_question(question):
        raise ValueError(
            f"question must be a Question or Prediction of the bank, got {question!r}: "
            "take one from gradacc_lessons.quiz.questions (question, questions_for)"
        )


def _check_attempt(attempt: object) -> None:
    if not isinstance(attempt, Attempt):
        raise ValueError(f"attempt must be an Attempt (Attempt() to start), got {attempt!r}")


def _real(name: str, value: object) -> float:
    """`value` as a finite float; ValueError naming `name` for anything else (bools too)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def check(question: AnyQuestion, attempt: Attempt, answer: Answer) -> tuple[Attempt, str]:
    """The attempt after checking `answer`, and what to say: one of `KINDS`.

    >>> from gradacc_lessons.quiz.questions import question
    >>> q = question("l1_scale")
    >>> first, kind = check(q, Attempt(), 1)
    >>> kind, first.first_right
    ('hint', False)
    >>> second, kind = check(q, first, 0)
    >>> kind, second.first_right, second.right
    ('right', False, True)
    """
    _check_attempt(attempt)
    if answer is None:
        return attempt, "empty"
    right = is_right(question, answer)
    first_right = right if attempt.first_right is None else attempt.first_right
    updated = replace(
        attempt,
        tries=attempt.tries + 1,
        first_right=first_right,
        right=attempt.right or (right and not attempt.shown),
    )
    if right:
        return updated, "right"
    if updated.tries == 1 and not attempt.shown:
        return updated, "hint"
    return replace(updated, shown=True), "answer"


def show_answer(attempt: Attempt) -> Attempt:
    """The attempt after the learner asks for the answer (before answering: a wrong first try).

    >>> show_answer(Attempt())
    Attempt(tries=0, first_right=False, right=False, shown=True)
    """
    _check_attempt(attempt)
    first_right = False if attempt.first_right is None else attempt.first_right
    return replace(attempt, first_right=first_right, shown=True)


def score_text(attempts: Iterable[Attempt], total: int, words: Words) -> str:
    """The score: right at the first try, and right in the end, out of `total`.

    >>> from gradacc_lessons.quiz.language import ENGLISH
    >>> score_text([Attempt(1, True, True), Attempt(2, False, True)], 3, ENGLISH)
    'Score: 1 / 3 at the first try · 2 / 3 right in the end'
    """
    attempts = list(attempts)
    for attempt in attempts:
        _check_attempt(attempt)
    if isinstance(total, bool) or not isinstance(total, numbers.Integral) or total < len(attempts):
        raise ValueError(
            f"total must be the number of questions, at least the {len(attempts)} attempts, "
            f"got {total!r}"
        )
    first = sum(1 for a in attempts if a.first_right)
    final = sum(1 for a in attempts if a.right)
    return words.score.format(first=first, final=final, total=total)


@dataclass(frozen=True)
class Feedback:
    """What the quiz says after a check: a message, and for a prediction maybe its computation."""

    kind: str  # one of KINDS
    text: str
    code: str | None = None  # the computation, shown with the answer of a prediction


def feedback(
    question: AnyQuestion, attempt: Attempt, kind: str, answer: Answer, words: Words
) -> Feedback:
    """The feedback for `kind` (from `check`, or "answer" on request) on `answer`.

    >>> from gradacc_lessons.quiz.language import ENGLISH
    >>> from gradacc_lessons.quiz.questions import question
    >>> q = question("l1_scale")
    >>> feedback(q, Attempt(1, False), "hint", 2, ENGLISH).text.startswith("Not quite. Hint:")
    True
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS} (what check() returns), got {kind!r}")
    if kind == "empty":
        empty = words.type_first if isinstance(question, Prediction) else words.pick_first
        return Feedback(kind, empty)
    verdict = _verdict(question, kind, answer, words)
    if kind == "hint":
        return Feedback(kind, f"{verdict} {words.hint} {question.hint} {words.try_again}")
    if kind == "right" and attempt.first_right is False:  # right now, not at the first try
        verdict = f"{verdict} {words.first_counts}"
    if isinstance(question, Prediction):
        shown = words.value_is.format(value=format_number(question.value))
        text = f"{verdict} {shown} {question.explanation}".strip()
        return Feedback(kind, text, question.computation)
    if kind == "answer":
        right = f"{question.letter}. {question.choices[question.answer]}"
        verdict = f"{verdict} {words.answer_is.format(answer=right)}".strip()
    return Feedback(kind, f"{verdict} {question.explanation}")


def _verdict(question: AnyQuestion, kind: str, answer: Answer, words: Words) -> str:
    """The verdict: right, not quite (too high or too low for a number), or none if asked."""
    if kind == "right":
        return words.right
    if answer is None:
        return ""
    if isinstance(question, Prediction):
        side = words.too_high if answer > question.value else words.too_low
        return f"{words.not_quite} {side.format(guess=format_number(answer))}"
    return words.not_quite


def tolerance_text(question: Prediction, words: Words) -> str:
    """How close a typed number must be, as the quiz states it.

    >>> from gradacc_lessons.quiz.language import ENGLISH
    >>> from gradacc_lessons.quiz.questions import question
    >>> tolerance_text(question("l2_predict_last_window"), ENGLISH)
    'Answers within ±0.01 count as right.'
    """
    if not isinstance(question, Prediction):
        raise ValueError(f"question must be a Prediction (it has a tolerance), got {question!r}")
    if question.tolerance == 0:
        return words.exact
    return words.within.format(tolerance=format_number(question.tolerance))


def format_number(value: float) -> str:
    """A number as the quiz writes it: whole numbers without a point, others to 4 digits.

    >>> format_number(1024.0), format_number(0.3439), format_number(160.016008)
    ('1024', '0.3439', '160')
    """
    value = _real("value", value)
    if value.is_integer():
        return str(int(value))
    return f"{value:.4g}"


def parse_answer(question: AnyQuestion, text: str, words: Words) -> Answer:
    """The answer typed as text: a choice ("b" or "2") or a number; None if nothing is typed.

    Raises ValueError with what to type instead, in the quiz's language.

    >>> from gradacc_lessons.quiz.language import ENGLISH
    >>> from gradacc_lessons.quiz.questions import question
    >>> parse_answer(question("l1_scale"), " b ", ENGLISH)
    1
    >>> parse_answer(question("l2_predict_last_window"), "3/4", ENGLISH)
    0.75
    """
    _check_question(question)
    _check_text(text)
    text = text.strip()
    if not text:
        return None
    if isinstance(question, Prediction):
        return parse_number(text, words)
    count = len(question.choices)
    upper = text.upper()
    if len(upper) == 1 and upper in LETTERS[:count]:
        return LETTERS.index(upper)
    if upper.isdigit() and 1 <= int(upper) <= count:
        return int(upper) - 1
    raise ValueError(words.not_a_choice.format(text=text, last=LETTERS[count - 1]))


_THOUSANDS = re.compile(r"^[+-]?\d{1,3}([,_ ]\d{3})+(\.\d*)?$")


def parse_number(text: str, words: Words) -> float:
    """A typed number: 0.75, .75, 1e6, 1,024 (thousands), 3/4, 75 %; ValueError otherwise.

    >>> from gradacc_lessons.quiz.language import ENGLISH
    >>> [parse_number(t, ENGLISH) for t in ("1,024", "3/4", "75 %", "-2e-3")]
    [1024.0, 0.75, 0.75, -0.002]
    """
    _check_text(text)
    cleaned = text.strip()
    percent = cleaned.endswith("%")
    cleaned = cleaned.rstrip("%").strip()
    if _THOUSANDS.match(cleaned):
        cleaned = re.sub(r"[,_ ]", "", cleaned)
    try:
        value = float(Fraction(cleaned.replace(" ", "")))
    except (ValueError, ZeroDivisionError):
        raise ValueError(words.not_a_number.format(text=text.strip())) from None
    if not math.isfinite(value):
        raise ValueError(words.not_a_number.format(text=text.strip()))
    return value / 100 if percent else value


def _check_text(text: object) -> None:
    if not isinstance(text, str):
        raise ValueError(f"text must be what the learner typed, a str, got {text!r}")


def is_question(item: object) -> bool:
    """Whether `item` is a question of the bank (multiple choice or prediction).

    >>> from gradacc_lessons.quiz.questions import question
    >>> is_question(question("l1_scale")), is_question("l1_scale")
    (True, False)
    """
    return isinstance(item, (Question, Prediction))
