"""The self-check quiz without a browser: grading, feedback, score, widget wiring, fallbacks."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from gradacc_lessons.quiz import selfcheck
from gradacc_lessons.quiz.questions import (
    QUESTIONS,
    Question,
    faq_questions,
    question,
    questions_for,
)
from gradacc_lessons.quiz.selfcheck import (
    build_quiz,
    feedback_text,
    is_right,
    parse_choice,
    quiz_text,
    record,
    run_text_quiz,
    score_text,
    self_check,
    self_study_questions,
)

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"

Q = Question(
    id="t_demo",
    lesson=1,
    prompt="Which number is prime?",
    choices=("4", "6", "7", "9"),
    answer=2,
    explanation="7 has no divisor but 1 and itself.",
)


def wrong_choices(q: Question) -> list[int]:
    return [i for i in range(len(q.choices)) if i != q.answer]


@pytest.mark.parametrize("q", QUESTIONS, ids=lambda q: q.id)
def test_every_bank_question_grades_exactly_its_answer(q):
    verdicts = [is_right(q, i) for i in range(len(q.choices))]
    assert verdicts.count(True) == 1 and verdicts[q.answer], q.id


def test_is_right_rejects_a_choice_out_of_range():
    with pytest.raises(ValueError, match="choice=4"):
        is_right(Q, 4)


def test_feedback_for_the_right_choice_says_right_and_explains():
    assert feedback_text(Q, 2) == "Right! 7 has no divisor but 1 and itself."


@pytest.mark.parametrize("choice", [0, 1, 3])
def test_feedback_for_a_wrong_choice_names_the_answer_and_explains(choice):
    text = feedback_text(Q, choice)
    assert text == "Not quite. The answer is C. 7. 7 has no divisor but 1 and itself."
    assert "Right!" not in text


def test_feedback_without_a_choice_asks_for_one():
    assert "Pick one of the choices" in feedback_text(Q, None)


def test_score_follows_the_latest_check_of_each_question():
    q1, q2 = faq_questions()[:2]
    results = record({}, q1, q1.answer)
    assert score_text(results, 5) == "Score: 1 / 5"
    results = record(results, q2, wrong_choices(q2)[0])
    assert score_text(results, 5) == "Score: 1 / 5"
    results = record(results, q1, wrong_choices(q1)[0])  # changed their mind, wrongly
    assert score_text(results, 5) == "Score: 0 / 5"
    results = record(results, q2, None)  # Check without a choice changes nothing
    assert results == {q1.id: False, q2.id: False}


@pytest.mark.parametrize(("typed", "index"), [("a", 0), ("D", 3), (" 2 ", 1), ("4", 3), ("", None)])
def test_parse_choice_reads_letters_and_numbers(typed, index):
    assert parse_choice(typed, 4) == index


@pytest.mark.parametrize("typed", ["E", "5", "0", "ab", "right"])
def test_parse_choice_rejects_what_is_not_a_choice(typed):
    with pytest.raises(ValueError, match="answer="):
        parse_choice(typed, 4)


def test_self_study_covers_the_faq_in_order_then_every_other_question_once():
    quiz = self_study_questions()
    assert [q.faq for q in quiz[:5]] == [1, 2, 3, 4, 5]
    assert sorted(q.id for q in quiz) == sorted(q.id for q in QUESTIONS)
    assert [q.lesson for q in quiz[5:]] == sorted(q.lesson for q in quiz[5:])


LESSON_CHECK = (
    "from gradacc_lessons.quiz.questions import questions_for\n"
    "from gradacc_lessons.quiz.selfcheck import self_check\n\n"
    "self_check(questions_for(lesson={n}))"
)


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("0[1-6]_*.ipynb")), ids=lambda p: p.name[:2])
def test_every_lesson_ends_with_a_self_check_of_its_own_questions(path):
    import nbformat

    lesson = int(path.name[:2])
    code = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    assert code[-1].source.strip() == LESSON_CHECK.format(n=lesson)
    assert questions_for(lesson), f"lesson {lesson} has no questions in the bank"


def test_question_ids_are_unique_and_say_their_lesson():
    assert len({q.id for q in QUESTIONS}) == len(QUESTIONS)
    for q in QUESTIONS:
        assert q.faq is not None or q.id.startswith(f"l{q.lesson}_"), q.id


# --- the widgets, driven from Python (the browser suite drives them in Chromium) ---


def test_widget_check_shows_feedback_and_running_score():
    questions = faq_questions()
    quiz = build_quiz(questions)
    first, second = questions[0], questions[1]
    quiz.radios[first.id].value = wrong_choices(first)[0]
    quiz.buttons[first.id].click()
    assert "Not quite." in quiz.feedback[first.id].value
    assert "Score: 0 / 5" in quiz.score.value
    quiz.radios[second.id].value = second.answer
    quiz.buttons[second.id].click()
    assert "Right!" in quiz.feedback[second.id].value
    assert "Score: 1 / 5" in quiz.score.value
    quiz.radios[first.id].value = first.answer
    quiz.buttons[first.id].click()
    assert "Right!" in quiz.feedback[first.id].value
    assert "Score: 2 / 5" in quiz.score.value


def test_widget_feedback_escapes_html_and_keeps_the_explanation():
    quiz = build_quiz([question("faq1_what")])
    quiz.radios["faq1_what"].value = 1
    quiz.buttons["faq1_what"].click()
    assert "micro-batch&#x27;s gradient" in quiz.feedback["faq1_what"].value


def test_widgets_carry_stable_css_classes():
    q = question("l1_scale")
    quiz = build_quiz([q])
    card = quiz.box.children[1]
    assert {"gradacc-question", f"gradacc-question-{q.id}"} <= set(card._dom_classes)
    assert "gradacc-check" in quiz.buttons[q.id]._dom_classes
    assert "gradacc-feedback" in quiz.feedback[q.id]._dom_classes
    assert "gradacc-score" in quiz.score._dom_classes
    assert quiz.radios[q.id].value is None, "no choice may be preselected"


def test_radio_labels_are_the_lettered_choices():
    q = question("l1_scale")
    quiz = build_quiz([q])
    assert quiz.radios[q.id].options == tuple(
        (f"{'ABCD'[i]}. {c}", i) for i, c in enumerate(q.choices)
    )


@pytest.mark.parametrize("bad", [[], ["not a question"]])
def test_self_check_rejects_what_is_not_a_list_of_questions(bad):
    with pytest.raises(ValueError, match="questions"):
        self_check(bad)


# --- the fallbacks ---


def test_text_quiz_gives_feedback_and_the_final_score():
    said: list[str] = []
    answers = iter(["x", "C", "a"])  # a typo first: asked again
    results = run_text_quiz([Q, question("l1_scale")], ask=lambda _: next(answers), say=said.append)
    assert results == {"t_demo": True, "l1_scale": False}
    assert any("answer='X'" in s for s in said)
    assert "Right! 7 has no divisor" in "\n".join(said)
    assert any(s.startswith("Not quite. The answer is C.") for s in said)
    assert said[-1] == "Final Score: 1 / 2"


def test_text_quiz_stops_when_the_input_ends():
    def ask(_prompt: str) -> str:
        raise EOFError

    said: list[str] = []
    assert run_text_quiz([Q, Q], ask=ask, say=said.append) == {}
    assert said[-1] == "Final Score: 0 / 2"


def test_without_a_kernel_or_terminal_self_check_prints_the_questions(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # not a terminal
    assert not selfcheck.widgets_can_render()  # pytest runs no kernel
    self_check([Q])
    out = capsys.readouterr().out
    assert out.strip() == quiz_text([Q]).strip()
    assert "Question 1. Which number is prime?" in out and "C. 7" in out


def test_in_a_terminal_self_check_asks_with_input(monkeypatch, capsys):
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdin", Tty("C\n"))  # input() reads sys.stdin
    self_check([Q])
    out = capsys.readouterr().out
    assert "Right! 7 has no divisor" in out and "Final Score: 1 / 1" in out


def test_a_script_without_stdin_does_not_block():
    code = (
        "from gradacc_lessons.quiz.questions import faq_questions\n"
        "from gradacc_lessons.quiz.selfcheck import self_check\n"
        "self_check(faq_questions())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "Question 5." in done.stdout and "open this notebook in JupyterLab" in done.stdout


@pytest.mark.slow
def test_quiz_notebook_runs_headless_and_shows_the_widget_with_a_text_fallback():
    from tools.notebooks import execute_notebook
    from tools.setup_cell import SETUP_CELL

    path = NOTEBOOKS / "08_self_study_quiz.ipynb"
    notebook, seconds = execute_notebook(path)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert code[0].source == SETUP_CELL
    assert code[-1].source.endswith("self_check(questions)")
    outputs = code[-1].outputs
    assert len(outputs) == 1, outputs
    data = outputs[0]["data"]
    assert "application/vnd.jupyter.widget-view+json" in data
    assert data["text/plain"] == quiz_text(self_study_questions())
    assert seconds < 120, f"the quiz notebook took {seconds:.0f} s"


def test_on_colab_the_widget_manager_for_ipywidgets_8_is_switched_on(monkeypatch):
    import types

    calls: list[str] = []
    output = types.SimpleNamespace(enable_custom_widget_manager=lambda: calls.append("on"))
    colab = types.ModuleType("google.colab")
    colab.output = output
    monkeypatch.setitem(sys.modules, "google", types.ModuleType("google"))
    monkeypatch.setitem(sys.modules, "google.colab", colab)
    monkeypatch.setitem(sys.modules, "google.colab.output", output)
    selfcheck._enable_colab_widgets()
    assert calls == ["on"]


def test_off_colab_nothing_is_switched_on(monkeypatch):
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    selfcheck._enable_colab_widgets()  # must not import anything from Colab
    assert "google.colab" not in sys.modules
