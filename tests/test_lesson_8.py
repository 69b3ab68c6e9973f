"""Lesson 8, the self-study quiz: its list of questions and its cards say the same.

The list at the top numbers the questions 1-31 across both parts; the cards of Part 2 must go
on from Part 1's five, and name each question's lesson, so that "Question 12" on a card is the
list's question 12. The titles are rebuilt here from the bank, not from the quiz's own code.
"""

import re

import pytest

from gradacc_lessons.quiz.questions import faq_questions, lesson_questions
from gradacc_lessons.quiz.selfcheck import build_quiz, quiz_html, quiz_text

from .lessons import register

LESSON = "08_self_study_quiz.ipynb"
register(LESSON, ())


def expected_titles(questions, first):
    return [f"Question {first + i}. (lesson {q.lesson})" for i, q in enumerate(questions)]


def test_part_2_cards_go_on_from_part_1_and_name_the_lesson():
    part2 = lesson_questions()
    quiz = build_quiz(part2, first_number=6)
    shown = [
        re.match(r"<b>(.*?)</b>", quiz.box.children[i + 1].children[0].value).group(1)
        for i in range(len(part2))
    ]
    assert shown == expected_titles(part2, 6)
    assert shown[-1] == f"Question {len(faq_questions()) + len(part2)}. (lesson 9)"
    page = quiz_html(part2, first_number=6)
    assert re.findall(r"<p><b>(.*?)</b>", page) == expected_titles(part2, 6)
    assert quiz_text(part2, first_number=6).startswith(expected_titles(part2, 6)[0])


def test_a_quiz_of_one_lesson_keeps_plain_numbers():
    one_lesson = [q for q in lesson_questions() if q.lesson == 2]
    assert quiz_text(one_lesson).startswith(f"Question 1. {one_lesson[0].prompt}")


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "6"])
def test_a_bad_first_number_is_refused(bad):
    with pytest.raises(ValueError, match="first_number"):
        quiz_text(lesson_questions(), first_number=bad)


@pytest.mark.slow
def test_the_list_and_the_cards_number_each_question_the_same(lesson_runs):
    notebook = lesson_runs.get(LESSON).notebook
    code = [c for c in notebook.cells if c.cell_type == "code"]
    listing = "".join(o.get("text", "") for o in code[1].outputs)
    listed = re.findall(r"Part (\d), question +(\d+): lesson (\d)", listing)
    assert len(listed) == len(faq_questions()) + len(lesson_questions())
    cards = {}
    for cell in [c for c in code if "self_check(" in c.source]:  # Part 1's and Part 2's
        (output,) = cell.outputs
        page = output["data"]["text/html"]
        english = page.split('<div class="gradacc-quiz-static" lang="yo">')[0]
        for number, lesson in re.findall(r"<b>Question (\d+)\. \(lesson (\d)\)</b>", english):
            cards[number] = lesson
    assert cards == {number: lesson for _, number, lesson in listed}
    parts = {number: part for part, number, _ in listed}
    assert {parts[str(n)] for n in range(1, 6)} == {"1"}
    assert {parts[n] for n in cards if int(n) > 5} == {"2"}
