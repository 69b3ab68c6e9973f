"""The self-check without a browser: the bank, first-try scoring, hints, predictions, Yoruba.

The browser suite (test_browser.py) drives the same quiz in JupyterLab; here the pure
functions, the widgets from Python, the terminal and the static HTML are checked.
"""

from __future__ import annotations

import ast
import html
import io
import random
import re
import string
import subprocess
import sys
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

from gradacc_lessons.lessons import LESSONS
from gradacc_lessons.quiz import selfcheck, yoruba
from gradacc_lessons.quiz.attempts import (
    Attempt,
    check,
    feedback,
    format_number,
    is_right,
    parse_answer,
    parse_number,
    score_text,
    show_answer,
    tolerance_text,
)
from gradacc_lessons.quiz.language import ENGLISH, LANGUAGES, Words, translated, words_for
from gradacc_lessons.quiz.questions import (
    QUESTIONS,
    Prediction,
    Question,
    faq_questions,
    lesson_questions,
    question,
    questions_for,
    self_study_questions,
)
from gradacc_lessons.quiz.selfcheck import build_quiz, language_switch, quiz_html, self_check
from gradacc_lessons.quiz.terminal import draw, quiz_text, run_text_quiz

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
# the guide's FAQ as published; kept with the instructor's tests, which need it on their own
GUIDE_FAQ = ROOT / "quizzes" / "tests" / "data" / "guide_faq.txt"
YO = words_for("yo")

CHOICES = [q for q in QUESTIONS if isinstance(q, Question)]
PREDICTIONS = [q for q in QUESTIONS if isinstance(q, Prediction)]

Q = Question(
    id="t_demo",
    lesson=1,
    prompt="Which number is prime?",
    choices=("4", "6", "7", "9"),
    answer=2,
    hint="A prime has no divisor but 1 and itself.",
    explanation="7 has no divisor but 1 and itself.",
)
P = Prediction(
    id="t_predict",
    lesson=1,
    prompt="What is 3/4 as a decimal?",
    value=0.75,
    tolerance=0.01,
    computation="3 / 4",
    hint="Divide 3 by 4.",
    explanation="3 / 4 = 0.75.",
)


def wrong_choices(q: Question) -> list[int]:
    return [i for i in range(len(q.choices)) if i != q.answer]


# --- the bank ---


def _is_prime(n: int) -> bool:
    return n > 1 and all(n % divisor for divisor in range(2, n))


def test_is_right_accepts_exactly_the_choice_a_hand_check_finds_right():
    # The reference shares nothing with is_right: trial division says which choice is prime.
    assert [is_right(Q, i) for i in range(len(Q.choices))] == [_is_prime(int(c)) for c in Q.choices]
    assert [_is_prime(int(c)) for c in Q.choices].count(True) == 1
    # A prediction: Python's own arithmetic of the computation shown to the student is right.
    assert is_right(P, eval(P.computation)) and not is_right(P, eval(P.computation) + 0.1)


@pytest.mark.parametrize("q", CHOICES, ids=lambda q: q.id)
def test_every_choice_question_has_one_answer_among_distinct_choices(q):
    assert 0 <= q.answer < len(q.choices), q.id
    assert len({c.strip().lower() for c in q.choices}) == len(q.choices), q.id


@pytest.mark.parametrize("q", QUESTIONS, ids=lambda q: q.id)
def test_every_hint_points_at_the_idea_without_giving_the_answer(q):
    assert q.hint.strip() and q.hint != q.explanation, q.id
    if isinstance(q, Question):
        assert q.choices[q.answer].lower() not in q.hint.lower(), q.id
    else:
        assert _number_words(q.value) & _number_words_in(q.hint) == set(), (q.id, q.hint)


def _number_words(value: float) -> set[str]:
    return {f"{value:g}", f"{value:,.0f}", str(round(value, 2))}


def _number_words_in(text: str) -> set[str]:
    return set(re.findall(r"\d[\d,.]*", text))


def test_question_ids_are_unique_and_say_their_lesson():
    assert len({q.id for q in QUESTIONS}) == len(QUESTIONS)
    for q in QUESTIONS:
        assert q.faq is not None or q.id.startswith(f"l{q.lesson}_"), q.id


PREDICTING = [lesson.number for lesson in LESSONS if lesson.predicts]


@pytest.mark.parametrize("lesson", PREDICTING)
def test_every_lesson_asks_to_predict_a_number(lesson):
    assert any(isinstance(q, Prediction) for q in questions_for(lesson)), lesson


def test_the_self_study_quiz_asks_to_predict_numbers_too():
    predictions = {q.lesson for q in lesson_questions() if isinstance(q, Prediction)}
    assert predictions >= set(PREDICTING)


# The numbers by hand: independent of the package, which computes them in the lessons.
BY_HAND = {
    "l1_predict_steps": -(-10 // 4),  # windows of 4, 4 and 2: one step each
    "l2_predict_last_window": 1 - 1 / 4,  # one micro-batch divided by 4
    "l3_predict_running_mean": 1 - 0.9**4,  # what 4 updates of momentum 0.1 leave
    "l4_predict_floor": 4 * 4 * (10_000 * 1_000 + 1_000) / 1e6,  # 4 copies of 4-byte values
    "l5_predict_steps": 10 * 1536 // 256,  # 10 epochs of 6 steps
    "l6_predict_effective_batch": 4 * 32 * 8,
    "l6_predict_zero3": 16 * 1e9 / 4 / 2**30,  # 16 bytes a parameter, a quarter per GPU
}


@pytest.mark.parametrize("q", PREDICTIONS, ids=lambda q: q.id)
def test_a_predicted_number_is_what_the_lesson_computes(q):
    """The bank's value agrees with a hand computation and with the lesson's package function."""
    if q.lesson in BY_HAND_LESSONS:
        assert q.id in BY_HAND, f"{q.id}: add its hand computation to BY_HAND"
    if q.id in BY_HAND:
        assert abs(BY_HAND[q.id] - q.value) <= q.tolerance / 10 + 1e-9, q.id
    computed = run_computation(q.computation)
    # The package must give the bank's number far more closely than a learner has to.
    assert abs(computed - q.value) <= q.tolerance / 10 + 1e-9, (q.id, computed)


BY_HAND_LESSONS = range(1, 7)  # lesson 7's predictions (if any) are checked by their computation


def run_computation(code: str) -> float:
    """Run a prediction's computation as shown to the learner; return its last expression."""
    tree = ast.parse(code)
    *body, last = tree.body
    assert isinstance(last, ast.Expr), "a computation ends with the expression it shows"
    namespace: dict = {}
    exec(compile(ast.Module(body, type_ignores=[]), "<computation>", "exec"), namespace)
    return float(eval(compile(ast.Expression(last.value), "<computation>", "eval"), namespace))


@pytest.mark.parametrize("q", PREDICTIONS, ids=lambda q: q.id)
def test_a_prediction_calls_what_its_lesson_calls(q):
    """The computation imports from modules that the lesson's notebook imports too."""
    import nbformat

    path = next(NOTEBOOKS.glob(f"{q.lesson:02d}_*.ipynb"))
    code = "\n".join(
        c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"
    )
    modules = re.findall(r"^from (gradacc_lessons[\w.]*) import", q.computation, re.M)
    assert modules, f"{q.id}: the computation calls no function of the course's package"
    for module in modules:
        if module != "gradacc_lessons":
            assert f"from {module} import" in code, f"{path.name} does not use {module}"


# --- no answer cue: issue 12's statistics over the bank, in both languages ---


def bank_in(lang: str) -> list[Question]:
    questions = CHOICES if lang == "en" else [q for q in CHOICES if q.faq is not None]
    return [translated(q, lang) for q in questions]


def share_picked(questions: list[Question], score) -> float:
    """How often "pick the choice with the highest score" is right (ties split)."""
    hits = 0.0
    for q in questions:
        scores = [score(c) for c in q.choices]
        best = [i for i, s in enumerate(scores) if s == max(scores)]
        hits += (q.answer in best) / len(best)
    return hits / len(questions)


def specificity(choice: str) -> int:
    """Detail a test-wise learner reads as "the specific one": numbers, code, qualifiers."""
    technical = sum(1 for word in choice.split() if re.search(r"[\d_().=/%]", word))
    return technical + sum(choice.count(mark) for mark in ",:;")


def chance(questions: list[Question]) -> float:
    return sum(1 / len(q.choices) for q in questions) / len(questions)


@pytest.mark.parametrize("lang", sorted(LANGUAGES))
@pytest.mark.parametrize("cue", [len, specificity], ids=["longest", "most specific"])
def test_picking_by_a_cue_scores_no_better_than_chance(lang, cue):
    questions = bank_in(lang)
    assert share_picked(questions, cue) <= chance(questions) + 0.10


@pytest.mark.parametrize("lang", sorted(LANGUAGES))
def test_right_choices_are_as_long_as_the_others(lang):
    """No length cue in any question: the right choice is no longer than the others on average
    (a fifth of slack), and no choice stands out by length (numbers like "4" and "4,000" may)."""
    too_long = []
    for q in bank_in(lang):
        lengths = [len(c) for c in q.choices]
        others = [n for i, n in enumerate(lengths) if i != q.answer]
        numbers = all(re.fullmatch(r"[\d,.]+( \w+)?", c) for c in q.choices)
        if lengths[q.answer] > 1.2 * sum(others) / len(others):
            too_long.append(f"{q.id}: right {lengths[q.answer]} chars, others {others}")
        elif max(lengths) > 1.5 * min(lengths) and not numbers:
            too_long.append(f"{q.id}: choices of {lengths} chars")
    assert not too_long, "\n".join(too_long)


def test_right_answers_are_spread_over_the_positions():
    counts = Counter(q.answer for q in CHOICES)
    assert set(counts) == set(range(4)), counts
    assert max(counts.values()) - min(counts.values()) <= 2, counts


# --- drawing the quiz: a fresh order each time, seeded in tests ---


def test_a_seed_draws_the_same_order_and_no_seed_a_fresh_one():
    quiz = faq_questions()
    assert draw(quiz, seed=7) == draw(quiz, seed=7)
    orders = {tuple(q.choices for q in draw(quiz)) for _ in range(3)}  # 1 in 24^5 to fail
    assert len(orders) == 3, "three draws without a seed gave the same order"


def test_a_drawn_question_keeps_its_answer_with_the_right_choice():
    for seed in range(20):
        for bank, drawn in zip(self_study_questions(), draw(self_study_questions(), seed=seed)):
            if isinstance(bank, Question):
                assert sorted(drawn.choices) == sorted(bank.choices)
                assert drawn.choices[drawn.answer] == bank.choices[bank.answer]
            else:
                assert drawn == bank


def test_drawn_positions_of_the_right_answer_are_uniform():
    positions = Counter(draw([question("l1_scale")], seed=s)[0].answer for s in range(800))
    assert all(150 <= n <= 250 for n in positions.values()), positions  # 200 each, 4.4 sd


def test_drawing_leaves_the_global_random_state_alone():
    random.seed(1)
    expected = random.random()
    random.seed(1)
    draw(self_study_questions(), seed=3)
    draw(self_study_questions())
    assert random.random() == expected


# --- attempts: the first answer counts, the hint comes before the answer ---


def test_a_wrong_first_answer_stays_wrong_in_the_score():
    attempt, kind = check(Q, Attempt(), 0)
    assert kind == "hint"
    attempt, kind = check(Q, attempt, Q.answer)
    assert kind == "right" and attempt.right and attempt.first_right is False
    assert score_text([attempt], 1, ENGLISH) == (
        "Score: 0 / 1 at the first try · 1 / 1 right in the end"
    )


def test_a_right_first_answer_scores_at_the_first_try():
    attempt, kind = check(Q, Attempt(), Q.answer)
    assert kind == "right"
    assert score_text([attempt], 1, ENGLISH).startswith("Score: 1 / 1 at the first try")


def test_the_first_wrong_answer_gets_the_hint_and_not_the_answer():
    attempt, kind = check(Q, Attempt(), 1)
    said = feedback(Q, attempt, kind, 1, ENGLISH)
    assert said.text == (
        "Not quite. Hint: A prime has no divisor but 1 and itself. Try again, or show the answer."
    )
    assert Q.explanation not in said.text and "C." not in said.text and not attempt.shown


def test_the_second_wrong_answer_shows_the_answer_and_explains():
    attempt, _ = check(Q, Attempt(), 0)
    attempt, kind = check(Q, attempt, 3)
    said = feedback(Q, attempt, kind, 3, ENGLISH)
    assert kind == "answer" and attempt.shown and not attempt.right
    assert said.text == "Not quite. The answer is C. 7. 7 has no divisor but 1 and itself."


def test_asking_for_the_answer_first_counts_as_a_wrong_first_answer():
    attempt = show_answer(Attempt())
    said = feedback(Q, attempt, "answer", None, ENGLISH)
    assert said.text == "The answer is C. 7. 7 has no divisor but 1 and itself."
    attempt, kind = check(Q, attempt, Q.answer)  # now copying the shown answer
    assert kind == "right" and attempt.first_right is False and not attempt.right
    assert score_text([attempt], 1, ENGLISH).startswith("Score: 0 / 1 at the first try · 0 / 1")


def test_checking_without_an_answer_changes_nothing():
    attempt, kind = check(Q, Attempt(), None)
    assert (attempt, kind) == (Attempt(), "empty")
    assert feedback(Q, attempt, kind, None, ENGLISH).text.startswith("Pick one of the choices")


def test_feedback_rejects_a_kind_that_check_never_returns():
    with pytest.raises(ValueError, match="kind must be one of"):
        feedback(Q, Attempt(), "wrong", 1, ENGLISH)


def test_is_right_rejects_a_choice_out_of_range():
    with pytest.raises(ValueError, match="answer=4"):
        is_right(Q, 4)


# --- predictions: typed in, checked within the tolerance, explained ---


@pytest.mark.parametrize("q", PREDICTIONS, ids=lambda q: q.id)
def test_a_number_within_the_tolerance_is_right_and_outside_it_wrong(q):
    step = q.tolerance if q.tolerance else 1  # whole numbers: the next one is wrong
    assert is_right(q, q.value) and is_right(q, q.value + 0.99 * q.tolerance)
    assert is_right(q, q.value - 0.99 * q.tolerance)
    assert not is_right(q, q.value + 1.01 * step) and not is_right(q, q.value - 1.01 * step)


def test_a_right_prediction_shows_the_computation():
    attempt, kind = check(P, Attempt(), 0.755)
    said = feedback(P, attempt, kind, 0.755, ENGLISH)
    assert said.text == "Right! The lesson's package computes 0.75. 3 / 4 = 0.75."
    assert said.code == "3 / 4"


def test_a_wrong_prediction_says_which_way_then_gives_the_hint():
    attempt, kind = check(P, Attempt(), 0.5)
    said = feedback(P, attempt, kind, 0.5, ENGLISH)
    assert (
        said.text
        == "Not quite. 0.5 is too low. Hint: Divide 3 by 4. Try again, or show the answer."
    )
    assert said.code is None, "the computation comes with the answer, not with the hint"
    attempt, kind = check(P, attempt, 0.9)
    said = feedback(P, attempt, kind, 0.9, ENGLISH)
    assert (
        said.text == "Not quite. 0.9 is too high. The lesson's package computes 0.75. 3 / 4 = 0.75."
    )
    assert said.code == "3 / 4" and kind == "answer"


@pytest.mark.parametrize(
    ("typed", "value"),
    [("0.75", 0.75), (".75", 0.75), ("3/4", 0.75), ("75%", 0.75), ("1,024", 1024.0),
     ("1e6", 1e6), (" -2 ", -2.0), ("160.0", 160.0)],
)  # fmt: skip
def test_typed_numbers_are_read_as_learners_write_them(typed, value):
    assert parse_number(typed, ENGLISH) == value


@pytest.mark.parametrize("typed", ["0,75", "three", "1/0", "nan", "inf", "1.2.3"])
def test_what_is_not_a_number_is_refused_with_what_to_type(typed):
    with pytest.raises(ValueError, match="is not a number: type one such as 0.75"):
        parse_number(typed, ENGLISH)


@pytest.mark.parametrize(("typed", "index"), [("a", 0), ("D", 3), (" 2 ", 1), ("4", 3), ("", None)])
def test_typed_choices_are_letters_or_numbers(typed, index):
    assert parse_answer(Q, typed, ENGLISH) == index


@pytest.mark.parametrize("typed", ["E", "5", "0", "ab", "right"])
def test_what_is_not_a_choice_is_refused_with_what_to_type(typed):
    with pytest.raises(ValueError, match="type a letter from A to D"):
        parse_answer(Q, typed, ENGLISH)


# --- the widgets, driven from Python (the browser suite drives them in Chromium) ---


def test_widgets_score_the_first_try_and_hint_before_the_answer():
    quiz = build_quiz(draw(faq_questions(), seed=0))
    first, second = quiz.questions[:2]
    quiz.answers[first.id].value = wrong_choices(first)[0]
    quiz.checks[first.id].click()
    said = quiz.feedback[first.id].value
    assert "Not quite. Hint:" in said and first.choices[first.answer] not in said
    assert "Score: 0 / 5 at the first try · 0 / 5 right in the end" in quiz.score.value
    quiz.answers[first.id].value = first.answer
    quiz.checks[first.id].click()
    assert "Right! The score counts your first answer." in quiz.feedback[first.id].value
    assert "Score: 0 / 5 at the first try · 1 / 5 right in the end" in quiz.score.value
    quiz.reveals[second.id].click()
    assert f"The answer is {second.letter}." in quiz.feedback[second.id].value
    quiz.answers[second.id].value = second.answer
    quiz.checks[second.id].click()
    assert "Score: 0 / 5 at the first try · 1 / 5 right in the end" in quiz.score.value


def test_a_prediction_card_reads_the_typed_number():
    quiz = build_quiz([P])
    box = quiz.answers[P.id]
    assert "gradacc-number" in box._dom_classes
    box.value = "half"
    quiz.checks[P.id].click()
    assert "“half” is not a number" in quiz.feedback[P.id].value
    assert quiz.attempts[P.id] == Attempt(), "a typo is not an answer"
    box.value = "0.7"
    quiz.checks[P.id].click()
    assert "0.7 is too low. Hint: Divide 3 by 4." in quiz.feedback[P.id].value
    box.value = "3/4"
    quiz.checks[P.id].click()
    said = quiz.feedback[P.id].value
    assert "Right!" in said and "<pre><code>3 / 4</code></pre>" in said
    assert "Score: 0 / 1 at the first try · 1 / 1 right in the end" in quiz.score.value


def test_widget_feedback_escapes_html():
    quiz = build_quiz([question("faq1_what")])
    quiz.reveals["faq1_what"].click()
    assert "micro-batch&#x27;s gradient" in quiz.feedback["faq1_what"].value


def test_widgets_carry_stable_css_classes_and_nothing_is_preselected():
    q = question("l1_scale")
    quiz = build_quiz([q])
    card = quiz.box.children[1]
    assert {"gradacc-question", f"gradacc-question-{q.id}"} <= set(card._dom_classes)
    assert "gradacc-check" in quiz.checks[q.id]._dom_classes
    assert "gradacc-reveal" in quiz.reveals[q.id]._dom_classes
    assert "gradacc-feedback" in quiz.feedback[q.id]._dom_classes
    assert "gradacc-score" in quiz.score._dom_classes
    assert quiz.answers[q.id].value is None, "no choice may be preselected"


def test_radio_labels_are_the_lettered_choices_in_the_drawn_order():
    drawn = draw([question("l1_scale")], seed=5)
    quiz = build_quiz(drawn)
    assert quiz.answers["l1_scale"].options == tuple(
        (f"{'ABCD'[i]}. {c}", i) for i, c in enumerate(drawn[0].choices)
    )


def test_the_language_switch_shows_the_quiz_in_yoruba():
    quizzes = {code: build_quiz(draw(faq_questions(), code, seed=1), code) for code in LANGUAGES}
    switch = language_switch(quizzes, "en")
    toggle, shown = switch.children
    assert "gradacc-language" in toggle._dom_classes
    assert shown.children == (quizzes["en"].box,)
    toggle.value = "yo"
    assert shown.children == (quizzes["yo"].box,)
    q = quizzes["yo"].questions[0]
    assert q.prompt == "Kini ikojọpọ Gradient?"
    quizzes["yo"].answers[q.id].value = wrong_choices(q)[0]
    quizzes["yo"].checks[q.id].click()
    assert f"{YO.not_quite} {YO.hint} {q.hint}" in quizzes["yo"].feedback[q.id].value
    assert "Máàkì: 0 / 5 ní ìgbìyànjú àkọ́kọ́" in quizzes["yo"].score.value
    assert quizzes["yo"].checks[q.id].description == "Ṣàyẹ̀wò"


@pytest.mark.parametrize("bad", [[], ["not a question"]])
def test_self_check_rejects_what_is_not_a_list_of_questions(bad):
    with pytest.raises(ValueError, match="questions"):
        self_check(bad)


def test_self_check_rejects_a_language_without_the_text():
    from dataclasses import replace

    new = replace(questions_for(1)[0], id="l1_not_yet_translated")  # a question added later
    with pytest.raises(ValueError, match="'l1_not_yet_translated' has no text in lang='yo'"):
        self_check([new], lang="yo")
    self_check([new])  # offered in English only, where it has its text


@pytest.mark.parametrize(
    ("lang", "languages"), [("fr", None), ("yo", ["en"]), ("en", ["en", "en"]), ("en", [])]
)
def test_self_check_rejects_languages_it_cannot_offer(lang, languages):
    with pytest.raises(ValueError, match=f"lang={lang!r} and languages="):
        self_check(faq_questions(), lang, languages=languages)


@pytest.mark.parametrize("seed", [True, 1.5, "1"])
def test_a_seed_must_be_an_integer(seed):
    with pytest.raises(ValueError, match=f"seed must be an integer or None, got {seed!r}"):
        draw(faq_questions(), seed=seed)


def test_a_numpy_integer_seeds_like_an_int():
    import numpy as np

    assert draw(faq_questions(), seed=np.int64(3)) == draw(faq_questions(), seed=3)


BAD_INPUT = {
    "questions_for(True)": ("lesson", lambda: questions_for(True)),
    "questions_for(99)": ("lesson", lambda: questions_for(99)),
    "question('nope')": ("id", lambda: question("nope")),
    "translated(text)": ("question", lambda: translated("faq1_what", "yo")),
    "words_for('fr')": ("lang", lambda: words_for("fr")),
    "is_right(Q, True)": ("answer", lambda: is_right(Q, True)),
    "is_right(Q, 1.0)": ("answer", lambda: is_right(Q, 1.0)),
    "is_right(P, 'x')": ("answer", lambda: is_right(P, "0.75")),
    "is_right(P, nan)": ("answer", lambda: is_right(P, float("nan"))),
    "is_right(id)": ("question", lambda: is_right("t_demo", 1)),
    "check(None)": ("attempt", lambda: check(Q, None, 1)),
    "show_answer({})": ("attempt", lambda: show_answer({})),
    "score_text(-1)": ("total", lambda: score_text([], -1, ENGLISH)),
    "score_text(too few)": ("total", lambda: score_text([Attempt(), Attempt()], 1, ENGLISH)),
    "tolerance_text(Q)": ("question", lambda: tolerance_text(Q, ENGLISH)),
    "format_number(True)": ("value", lambda: format_number(True)),
    "parse_answer(3)": ("text", lambda: parse_answer(Q, 3, ENGLISH)),
    "parse_number(None)": ("text", lambda: parse_number(None, ENGLISH)),
    "quiz_text([])": ("questions", lambda: quiz_text([])),
    "quiz_html([])": ("questions", lambda: quiz_html([])),
    "build_quiz([])": ("questions", lambda: build_quiz([])),
    "run_text_quiz([])": ("questions", lambda: run_text_quiz([])),
    "language_switch('yo')": ("lang", lambda: language_switch({"en": None}, "yo")),
}


@pytest.mark.parametrize("case", BAD_INPUT, ids=str)
def test_bad_input_is_refused_naming_the_argument(case):
    name, call = BAD_INPUT[case]
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        call()


# --- the static fallback: for pages without a kernel (the course site) ---


class Outline(HTMLParser):
    """The tags of an HTML fragment, checked for balance, and its text."""

    VOID = {"br", "hr", "img", "input", "meta", "link"}

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_endtag(self, tag):
        assert self.open and self.open.pop() == tag, f"</{tag}> closes nothing"

    def handle_data(self, data):
        self.text.append(data)


def outline(fragment: str) -> Outline:
    parsed = Outline()
    parsed.feed(fragment)
    parsed.close()
    assert parsed.open == [], f"unclosed tags: {parsed.open}"
    return parsed


def test_the_static_quiz_shows_questions_then_hint_then_answer_collapsed():
    drawn = draw(self_study_questions(), seed=2)
    page = quiz_html(drawn)
    parsed = outline(page)
    blocks = [a.get("class") for tag, a in parsed.tags if tag == "details"]
    assert blocks == ["gradacc-hint", "gradacc-answer"] * len(drawn)
    assert all("open" not in a for tag, a in parsed.tags if tag == "details")
    assert not {tag for tag, _ in parsed.tags} & {"script", "iframe", "link", "img", "style"}
    for q in drawn:
        section = page.split(f'data-question="{q.id}">', 1)[1].split("gradacc-static-question")[0]
        hint, answer = section.split('<details class="gradacc-answer">')
        assert "Hint" in hint and "The answer is" not in hint
        if isinstance(q, Question):
            assert f"The answer is {q.letter}." in answer
        else:
            assert "The lesson&#x27;s package computes" in answer and "<pre><code>" in answer


def test_the_static_quiz_escapes_what_it_shows():
    tricky = Question("t_html", 1, "Is <b> a tag & more?", ("<i>", "b"), 0, "a > b", hint="x < y")
    page = quiz_html([tricky])
    assert "<b> a tag" not in page and "Is &lt;b&gt; a tag &amp; more?" in page
    outline(page)


def test_the_static_quiz_in_yoruba_says_its_own_words():
    page = quiz_html(draw(faq_questions(), "yo", seed=0), "yo")
    assert '<div class="gradacc-quiz-static" lang="yo">' in page
    assert "<summary>Ìtọ́ka</summary>" in page and "<summary>Ìdáhùn</summary>" in page
    assert "Kini ikojọpọ Gradient?" in page


# --- Yoruba: the guide's own words for its FAQ ---


def guide_faq() -> list[tuple[str, str]]:
    """The guide's FAQ as (question, answer) pairs, copied verbatim from the source guide."""
    lines = GUIDE_FAQ.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "Awọn ibeere ti a beere nigbagbogbo"  # the guide's heading of its FAQ
    pairs = list(zip(lines[1::2], lines[2::2]))
    assert len(pairs) == 5
    return pairs


@pytest.mark.parametrize("item", faq_questions(), ids=lambda q: q.id)
def test_every_faq_item_exists_in_both_languages(item):
    english, yo = translated(item, "en"), translated(item, "yo")
    assert english.prompt and yo.prompt and yo.prompt != english.prompt
    for field in ("hint", "explanation"):
        assert getattr(yo, field) and getattr(yo, field) != getattr(english, field), field
    assert len(yo.choices) == len(english.choices)
    assert all(y and y != e for y, e in zip(yo.choices, english.choices))
    assert yo.answer == english.answer


@pytest.mark.parametrize("number", [1, 2, 4])
def test_the_guides_yoruba_questions_are_used_verbatim(number):
    asked, _ = guide_faq()[number - 1]
    assert translated(faq_questions()[number - 1], "yo").prompt == asked


@pytest.mark.parametrize("number", [1, 2, 3, 4, 5])
def test_the_guides_answers_open_the_explanations_as_quotations(number):
    _, answered = guide_faq()[number - 1]
    yo = translated(faq_questions()[number - 1], "yo")
    opening = f"Ìtọ́sọ́nà náà dáhùn pé: «{answered}» "
    assert yo.explanation.startswith(opening)
    assert len(yo.explanation) > len(opening) + 40  # the course's own explanation follows


@pytest.mark.parametrize("number", [3, 5])
def test_the_guides_english_questions_are_the_english_prompts(number):
    asked, _ = guide_faq()[number - 1]
    assert faq_questions()[number - 1].prompt == asked


def test_only_the_faq_has_yoruba_text():
    assert set(yoruba.FAQ) == {q.id for q in faq_questions()}


def test_the_quiz_says_every_word_in_yoruba_with_the_same_blanks():
    for name in Words.__dataclass_fields__:
        english, yo = getattr(ENGLISH, name), getattr(YO, name)
        assert yo and yo != english, name
        assert _blanks(yo) == _blanks(english), name


def _blanks(text: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(text) if field}


# --- in a kernel: JupyterLab, and Colab with its widget manager ---


def test_in_a_kernel_self_check_shows_the_widget_with_its_static_fallback(monkeypatch):
    from gradacc_lessons import display

    shown = []
    monkeypatch.setattr(selfcheck, "widgets_can_render", lambda: True)
    monkeypatch.setattr(display, "show_widget", lambda widget, page: shown.append((widget, page)))
    self_check(faq_questions(), languages=("en", "yo"), seed=0)
    ((switch, page),) = shown
    toggle, quiz = switch.children
    assert toggle.options == (("English", "en"), ("Yorùbá", "yo")) and toggle.value == "en"
    assert re.findall(r'class="gradacc-quiz-static" lang="(\w+)"', page) == ["en", "yo"]
    first = quiz.children[0].children[1]  # the style sheet, then the first question's card
    radio = first.children[1]
    static = page.split("<ol", 1)[1].split("</ol>", 1)[0]  # the first question's choices
    listed = [html.unescape(item) for item in re.findall(r"<li>(.*?)</li>", static)]
    assert [label[3:] for label, _ in radio.options] == listed  # the same draw in both


def test_on_colab_self_check_switches_on_the_widget_manager(monkeypatch, capsys):
    import types

    calls: list[str] = []
    output = types.SimpleNamespace(enable_custom_widget_manager=lambda: calls.append("on"))
    colab = types.ModuleType("google.colab")
    colab.output = output
    monkeypatch.setitem(sys.modules, "google", types.ModuleType("google"))
    monkeypatch.setitem(sys.modules, "google.colab", colab)
    monkeypatch.setitem(sys.modules, "google.colab.output", output)
    monkeypatch.setattr(selfcheck, "widgets_can_render", lambda: True)
    self_check([Q], seed=0)
    assert calls == ["on"]
    assert "VBox" in capsys.readouterr().out  # outside a kernel, display() prints the widget


# --- the fallbacks: a terminal, and a script without one ---


def test_the_terminal_quiz_counts_the_first_try_and_hints_first():
    said: list[str] = []
    answers = iter(["x", "B", "C", "0.5", "?"])  # a typo, a wrong then a right choice, ...
    attempts = run_text_quiz([Q, P], ask=lambda _: next(answers), say=said.append)
    assert [a.first_right for a in attempts] == [False, False]
    assert [a.right for a in attempts] == [True, False]
    assert any("“x” is not one of the choices" in s for s in said)
    hint = said.index("Not quite. Hint: A prime has no divisor but 1 and itself. "
                      "Try again, or show the answer.")  # fmt: skip
    assert said[hint + 1] == "Right! The score counts your first answer. " + Q.explanation
    assert "Not quite. 0.5 is too low. Hint: Divide 3 by 4." in said[-4]
    assert said[-3] == "The lesson's package computes 0.75. 3 / 4 = 0.75.\n    3 / 4"
    assert said[-1] == "The end. Score: 0 / 2 at the first try · 1 / 2 right in the end"


def test_the_terminal_quiz_stops_when_the_input_ends():
    def ask(_prompt: str) -> str:
        raise EOFError

    said: list[str] = []
    assert run_text_quiz([Q, Q], ask=ask, say=said.append) == []
    assert said[-1] == "The end. Score: 0 / 2 at the first try · 0 / 2 right in the end"


def test_the_terminal_quiz_in_yoruba():
    said: list[str] = []
    item = draw([faq_questions()[0]], "yo", seed=0)[0]
    typed = iter(["ABCD"[wrong_choices(item)[0]], "ABCD"[item.answer]])
    run_text_quiz([item], "yo", ask=lambda _: next(typed), say=said.append)
    assert said[1].startswith("Kò tíì tọ̀nà. Ìtọ́ka: ")
    assert said[2].startswith("Ó tọ̀nà! Máàkì náà ka ìdáhùn àkọ́kọ́ rẹ nìkan.")
    assert said[-1] == "Ìparí. Máàkì: 0 / 1 ní ìgbìyànjú àkọ́kọ́ · 1 / 1 tọ̀nà ní ìparí"


def test_without_a_kernel_or_terminal_self_check_prints_the_questions(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # not a terminal
    assert not selfcheck.widgets_can_render()  # pytest runs no kernel
    self_check([Q, P], seed=0)
    out = capsys.readouterr().out
    assert out.strip() == quiz_text(draw([Q, P], seed=0)).strip()
    assert "Question 2. What is 3/4 as a decimal?" in out and "within ±0.01" in out


def test_in_a_terminal_self_check_asks_with_input(monkeypatch, capsys):
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    drawn = draw([Q], seed=4)[0]
    monkeypatch.setattr(sys, "stdin", Tty(f"{drawn.letter}\n"))  # input() reads sys.stdin
    self_check([Q], seed=4)
    out = capsys.readouterr().out
    assert "Right! 7 has no divisor" in out and "Score: 1 / 1 at the first try" in out


@pytest.mark.slow  # a Python process importing torch
def test_a_script_without_stdin_does_not_block():
    code = (
        "from gradacc_lessons.quiz.questions import faq_questions\n"
        "from gradacc_lessons.quiz.selfcheck import self_check\n"
        "self_check(faq_questions(), lang='yo')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "Ìbéèrè 5." in done.stdout and YO.static_note in done.stdout


# --- the notebooks ---

LESSON_CHECK = (
    "from gradacc_lessons.quiz.questions import questions_for\n"
    "from gradacc_lessons.quiz.selfcheck import self_check\n\n"
    "self_check(questions_for(lesson={n}))"
)


LESSON_NOTEBOOKS = sorted(NOTEBOOKS.glob("0[1-79]_*.ipynb"))  # lesson 8 is the self-study quiz


@pytest.mark.parametrize("path", LESSON_NOTEBOOKS, ids=lambda p: p.name[:2])
def test_every_lesson_ends_with_a_self_check_of_its_own_questions(path):
    import nbformat

    lesson = int(path.name[:2])
    code = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    assert code[-1].source.strip() == LESSON_CHECK.format(n=lesson)
    assert questions_for(lesson), f"lesson {lesson} has no questions in the bank"


@pytest.mark.slow
def test_the_quiz_notebook_shows_widgets_with_static_fallbacks_and_a_language_switch(lesson_runs):
    notebook = lesson_runs.get("08_self_study_quiz.ipynb").notebook  # shared with the site test
    quizzes = [c for c in notebook.cells if c.cell_type == "code" and "self_check(" in c.source]
    faq, lessons = quizzes[-2:]  # Part 1 and Part 2 (Part 3 is the exercises' score)
    assert faq.source.endswith('self_check(faq_questions(), languages=("en", "yo"))')
    assert lessons.source.endswith(
        "self_check(lesson_questions(), first_number=len(faq_questions()) + 1)"
    )
    for cell, languages in ((faq, ["en", "yo"]), (lessons, ["en", "yo"])):
        (output,) = cell.outputs
        assert "application/vnd.jupyter.widget-view+json" in output["data"]
        page = output["data"]["text/html"]
        found = re.findall(r'<div class="gradacc-quiz-static" lang="(\w+)">', page)
        assert found == languages
    assert page.count("gradacc-static-question") == 2 * len(lesson_questions())  # en and yo
    lessons_in_course = {int(p.name[:2]) for p in NOTEBOOKS.glob("0[1-79]_*.ipynb")}
    assert {q.lesson for q in lesson_questions()} >= lessons_in_course
