"""The quiz as plain text: drawn in a fresh order, printed, or asked through input().

`draw` gives each learner the questions in their language with the choices shuffled;
`quiz_text` prints them where nothing can ask (a script), `run_text_quiz` asks them in a
terminal, with a hint after a first wrong answer and the answer after a second. The widgets
and the static HTML that `self_check` shows in Jupyter are in `selfcheck.py`.
"""

from __future__ import annotations

import operator
import random
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from gradacc_lessons.quiz.attempts import (
    Attempt,
    Feedback,
    check,
    feedback,
    is_question,
    parse_answer,
    score_text,
    show_answer,
    tolerance_text,
)
from gradacc_lessons.quiz.language import Words, translated, words_for
from gradacc_lessons.quiz.questions import LETTERS, AnyQuestion, Prediction, Question


def draw(questions: Sequence[AnyQuestion], lang: str = "en", seed: int | None = None) -> list:
    """The quiz as a learner gets it: each question in `lang`, its choices in a fresh order.

    `seed=None` draws a new order every time; an integer seed gives the same order again.

    >>> from gradacc_lessons.quiz.questions import question
    >>> q = draw([question("l1_scale")], seed=3)[0]
    >>> q.choices[q.answer]
    'Divide it by 4, the number of micro-batches'
    """
    return _draw(_check_questions(questions), lang, random.Random(_check_seed(seed)))


def _check_seed(seed: Any) -> int | None:
    """The seed as an int (numpy integers too), or None; ValueError for anything else."""
    if seed is None:
        return None
    if isinstance(seed, bool):
        raise ValueError(f"seed must be an integer or None, got {seed!r}: pass e.g. seed=0")
    try:
        return operator.index(seed)
    except TypeError:
        raise ValueError(
            f"seed must be an integer or None, got {seed!r}: pass e.g. seed=0"
        ) from None


def _draw(questions: list, lang: str, rng: random.Random) -> list:
    drawn = []
    for q in questions:
        q = translated(q, lang)
        if isinstance(q, Question):
            order = rng.sample(range(len(q.choices)), len(q.choices))
            choices = tuple(q.choices[i] for i in order)
            q = replace(q, choices=choices, answer=order.index(q.answer))
        drawn.append(q)
    return drawn


def _check_questions(questions: Sequence[AnyQuestion]) -> list:
    """The questions as a list; ValueError if there are none or an item is not a question."""
    questions = list(questions)
    if not questions:
        raise ValueError(
            "questions=[] is empty: pass a list of questions, e.g. questions_for(lesson=1)"
        )
    for q in questions:
        if not is_question(q):
            raise ValueError(
                f"questions contains {q!r}, which is not a question: pass items of "
                "gradacc_lessons.quiz.questions (questions_for, faq_questions, question)"
            )
    return questions


# --- plain text: the terminal and scripts ---


def _numbered(questions: list, words: Words, first_number: Any) -> list[tuple[str, Any]]:
    """Each question with its title: "Question 6.", and its lesson when the quiz spans several.

    A quiz asked in parts (the self-study quiz) passes `first_number` so that its numbers go
    on from the part before, as the notebook's list of questions numbers them.

    >>> from gradacc_lessons.quiz.language import ENGLISH
    >>> from gradacc_lessons.quiz.questions import question
    >>> both = [question("l1_scale"), question("faq5_batchnorm")]
    >>> [title for title, _ in _numbered(both, ENGLISH, first_number=6)]
    ['Question 6. (lesson 1)', 'Question 7. (lesson 3)']
    """
    if isinstance(first_number, bool) or not isinstance(first_number, int) or first_number < 1:
        raise ValueError(
            f"first_number must be a whole number from 1, the first question's number, "
            f"got {first_number!r}: e.g. first_number=6 for a second part after 5 questions"
        )
    several = len({q.lesson for q in questions}) > 1
    titles = []
    for number, q in enumerate(questions, start=first_number):
        title = words.question.format(number=number)
        if several:
            title += f" ({words.lesson.format(lesson=q.lesson)})"
        titles.append((title, q))
    return titles


def _question_text(q: AnyQuestion, title: str, words: Words) -> str:
    """A question as plain text: its title, prompt, and lettered choices or the tolerance.

    >>> from gradacc_lessons.quiz.language import ENGLISH
    >>> from gradacc_lessons.quiz.questions import question
    >>> print(_question_text(question("l1_scale"), "Question 1.", ENGLISH).splitlines()[-1])
        D. Divide it by the number of its own samples
    """
    lines = [f"{title} {q.prompt}"]
    if isinstance(q, Prediction):
        lines.append(f"    {tolerance_text(q, words)}")
    else:
        lines += [f"    {LETTERS[i]}. {choice}" for i, choice in enumerate(q.choices)]
    return "\n".join(lines)


def quiz_text(questions: Sequence[AnyQuestion], lang: str = "en", first_number: int = 1) -> str:
    """All questions as plain text, with where to check the answers (where nothing can ask).

    >>> from gradacc_lessons.quiz.questions import question
    >>> quiz_text([question("l1_scale")]).startswith("Question 1. Each micro-batch")
    True
    """
    words, questions = words_for(lang), _check_questions(questions)
    parts = [_question_text(q, t, words) for t, q in _numbered(questions, words, first_number)]
    return "\n\n".join([*parts, words.static_note])


def _feedback_as_text(said: Feedback) -> str:
    """A feedback message, with its computation indented below it.

    >>> print(_feedback_as_text(Feedback("right", "Right!", code="3 / 4")))
    Right!
        3 / 4
    """
    if said.code is None:
        return said.text
    code = "\n".join(f"    {line}" for line in said.code.splitlines())
    return f"{said.text}\n{code}"


def run_text_quiz(
    questions: Sequence[AnyQuestion],
    lang: str = "en",
    ask: Callable[[str], str] = input,
    say: Callable[[str], Any] = print,
    first_number: int = 1,
) -> list[Attempt]:
    """Ask each question with `ask` (input by default), give feedback and the score.

    Up to two answers per question: a hint after the first wrong one, the answer after the
    second; "?" shows the answer, an empty line skips. Stops when the input ends (EOFError).

    >>> from gradacc_lessons.quiz.questions import question
    >>> run_text_quiz([question("l1_scale")], ask=lambda _: "A", say=lambda _: None)
    [Attempt(tries=1, first_right=True, right=True, shown=False)]
    """
    words, questions = words_for(lang), _check_questions(questions)
    attempts: list[Attempt] = []
    for title, q in _numbered(questions, words, first_number):
        say(_question_text(q, title, words))
        attempt = _ask_until_over(q, ask, say, words)
        if attempt is None:
            break
        attempts.append(attempt)
        say(score_text(attempts, len(questions), words))
    say(f"{words.the_end} {score_text(attempts, len(questions), words)}")
    return attempts


def _ask_until_over(q, ask, say, words: Words) -> Attempt | None:
    """One question's attempt in the terminal; None when the input ends."""
    attempt = Attempt()
    last = LETTERS[len(q.choices) - 1] if isinstance(q, Question) else ""
    prompt = words.ask_number if isinstance(q, Prediction) else words.ask_choice
    while not attempt.over:
        try:
            text = ask(prompt.format(last=last))
        except EOFError:
            return None
        if text.strip() == "?":
            attempt = show_answer(attempt)
            say(_feedback_as_text(feedback(q, attempt, "answer", None, words)))
            continue
        try:
            answer = parse_answer(q, text, words)
        except ValueError as error:
            say(str(error))
            continue
        if answer is None:
            say(words.skipped)
            break
        attempt, kind = check(q, attempt, answer)
        say(_feedback_as_text(feedback(q, attempt, kind, answer, words)))
    return attempt
