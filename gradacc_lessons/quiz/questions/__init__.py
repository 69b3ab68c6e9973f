"""The question bank: one source of truth for the course's self-check questions.

Two kinds of question:

- `Question`: multiple choice with one right choice;
- `Prediction`: type in a number that the lesson's package computes, right within a stated
  tolerance; after the check the quiz shows the computation (`computation`: code that calls
  the lesson's function, and that the tests run to make sure it gives `value`).

Both carry a `hint`, shown after a first wrong answer, before the answer itself, and an
`explanation`, shown with the answer. The self-check at the end of each lesson asks
`questions_for(lesson)`; the self-study quiz asks `self_study_questions()`. Each lesson's
module holds its questions' Yorùbá beside them (`YORUBA`, by id); the Yorùbá of the five FAQ
questions is in `quiz/yoruba.py`, with the guide's own words. The choices are stored in any
order: the quiz draws a fresh order each time (`selfcheck.draw`).

One module per lesson holds its questions (`lessonN` for each lesson that
`gradacc_lessons.lessons` marks with `questions`, and `faq`; lesson 8 is the self-study
quiz), as the instructor's graded bank is cut; the two kinds are in `kinds`. They are
assembled here.
"""

from __future__ import annotations

import importlib
import numbers

from gradacc_lessons.lessons import LESSONS
from gradacc_lessons.quiz.questions.faq import FAQ
from gradacc_lessons.quiz.questions.kinds import LETTERS, AnyQuestion, Prediction, Question

__all__ = [
    "LETTERS",
    "QUESTIONS",
    "YORUBA",
    "AnyQuestion",
    "Prediction",
    "Question",
    "faq_questions",
    "lesson_questions",
    "question",
    "questions_for",
    "self_study_questions",
]

# lessonN.py holds LESSONN, its questions, and LESSONN_YORUBA, each one's Yorùbá by id (the
# FAQ's Yorùbá is in quiz/yoruba.py, with the guide's own words).
_MODULES = [
    importlib.import_module(f"{__name__}.lesson{lesson.number}")
    for lesson in LESSONS
    if lesson.questions
]
_NAMES = [module.__name__.rpartition(".")[2].upper() for module in _MODULES]  # LESSON1, ...
QUESTIONS: tuple[AnyQuestion, ...] = (
    *FAQ,
    *(q for module, name in zip(_MODULES, _NAMES) for q in getattr(module, name)),
)
YORUBA = {
    key: text
    for module, name in zip(_MODULES, _NAMES)
    for key, text in getattr(module, f"{name}_YORUBA").items()
}


def questions_for(lesson: int) -> list[AnyQuestion]:
    """The questions that the self-check at the end of `lesson` asks.

    >>> sorted({q.lesson for q in questions_for(3)})
    [3]
    """
    lessons = sorted({q.lesson for q in QUESTIONS})
    if (
        isinstance(lesson, bool)
        or not isinstance(lesson, numbers.Integral)
        or lesson not in lessons
    ):
        raise ValueError(
            f"lesson must be one of the lessons with questions, {lessons}, got {lesson!r}"
        )
    return [q for q in QUESTIONS if q.lesson == lesson]


def faq_questions() -> list[AnyQuestion]:
    """The five FAQ questions, in the FAQ's order.

    >>> [q.faq for q in faq_questions()]
    [1, 2, 3, 4, 5]
    """
    return sorted((q for q in QUESTIONS if q.faq is not None), key=lambda q: q.faq)


def lesson_questions() -> list[AnyQuestion]:
    """Every lesson's own questions (all but the FAQ), by lesson.

    >>> [q.lesson for q in lesson_questions()] == sorted(q.lesson for q in lesson_questions())
    True
    """
    return sorted((q for q in QUESTIONS if q.faq is None), key=lambda q: q.lesson)


def self_study_questions() -> list[AnyQuestion]:
    """The self-study quiz: the five FAQ questions in order, then every lesson's own.

    >>> [q.faq for q in self_study_questions()[:5]]
    [1, 2, 3, 4, 5]
    """
    return faq_questions() + lesson_questions()


def question(id: str) -> AnyQuestion:
    """The question with this id.

    >>> question("l1_scale").lesson
    1
    """
    for q in QUESTIONS:
        if q.id == id:
            return q
    raise ValueError(f"id={id!r} names no question; known ids: {[q.id for q in QUESTIONS]}")
