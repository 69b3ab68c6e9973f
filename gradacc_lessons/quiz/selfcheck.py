"""Self-check quizzes with instant feedback: widgets in JupyterLab and Colab, plain text elsewhere.

The logic (grading an answer, the feedback text, the running score) lives in
small pure functions; `build_quiz` only wires ipywidgets to them, and
`self_check` picks what the current environment can show:

- inside a Jupyter kernel with ipywidgets: one card per question (prompt,
  radio choices, a "Check" button, feedback) and a running score;
- in a terminal (stdin is interactive): the same quiz through `input()`;
- anywhere else (a script with no stdin): the questions printed, with the
  instructions to check them in JupyterLab. Nothing ever waits for input
  that cannot come, so a headless notebook run never blocks.
"""

from __future__ import annotations

import html
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gradacc_lessons.quiz.questions import LETTERS, Question

RIGHT = "Right!"
WRONG = "Not quite."
NO_CHOICE = "Pick one of the choices first, then press Check."


def is_right(question: Question, choice: int | None) -> bool:
    """Whether `choice` (an index into `question.choices`, or None) is the right answer.

    >>> from gradacc_lessons.quiz.questions import question
    >>> q = question("l1_scale")
    >>> is_right(q, 2), is_right(q, 0), is_right(q, None)
    (True, False, False)
    """
    if choice is None:
        return False
    if not 0 <= choice < len(question.choices):
        raise ValueError(
            f"choice={choice} is out of range for question {question.id!r}: "
            f"pass an index from 0 to {len(question.choices) - 1}"
        )
    return choice == question.answer


def choice_label(question: Question, index: int) -> str:
    """The choice as shown to the student, with its letter: "C. Divide it by 4".

    >>> from gradacc_lessons.quiz.questions import question
    >>> choice_label(question("l1_scale"), 2)
    'C. Divide it by 4'
    """
    return f"{LETTERS[index]}. {question.choices[index]}"


def feedback_text(question: Question, choice: int | None) -> str:
    """The feedback on `choice`: right or wrong, the right answer, and the bank's explanation.

    >>> from gradacc_lessons.quiz.questions import question
    >>> feedback_text(question("l1_scale"), 1).startswith("Not quite. The answer is C.")
    True
    """
    if choice is None:
        return NO_CHOICE
    if is_right(question, choice):
        return f"{RIGHT} {question.explanation}"
    right = choice_label(question, question.answer)
    return f"{WRONG} The answer is {right}. {question.explanation}"


def record(results: Mapping[str, bool], question: Question, choice: int | None) -> dict[str, bool]:
    """The results after checking `choice`: question id -> right at its latest check.

    Checking without a choice changes nothing.

    >>> from gradacc_lessons.quiz.questions import question
    >>> record({}, question("l1_scale"), 2)
    {'l1_scale': True}
    """
    updated = dict(results)
    if choice is not None:
        updated[question.id] = is_right(question, choice)
    return updated


def score(results: Mapping[str, bool]) -> int:
    """How many questions are answered right at their latest check.

    >>> score({"a": True, "b": False, "c": True})
    2
    """
    return sum(1 for right in results.values() if right)


def score_text(results: Mapping[str, bool], total: int) -> str:
    """The running score as the widget shows it.

    >>> score_text({"a": True, "b": True, "c": False}, 5)
    'Score: 2 / 5'
    """
    return f"Score: {score(results)} / {total}"


def parse_choice(text: str, n_choices: int) -> int | None:
    """The choice index typed as a letter ("b") or a number from 1 ("2"); None if empty.

    >>> parse_choice(" b ", 4), parse_choice("3", 4), parse_choice("", 4)
    (1, 2, None)
    """
    text = text.strip().upper()
    if not text:
        return None
    if len(text) == 1 and text in LETTERS[:n_choices]:
        return LETTERS.index(text)
    if text.isdigit() and 1 <= int(text) <= n_choices:
        return int(text) - 1
    raise ValueError(
        f"answer={text!r} is not one of the choices: type a letter from A to "
        f"{LETTERS[n_choices - 1]} (or a number from 1 to {n_choices}), or nothing to skip"
    )


def question_text(question: Question, number: int) -> str:
    """A question as plain text: its number, prompt and lettered choices.

    >>> from gradacc_lessons.quiz.questions import question
    >>> print(question_text(question("l1_scale"), 1).splitlines()[-1])
        D. Divide it by the number of parameters
    """
    lines = [f"Question {number}. {question.prompt}"]
    lines += [f"    {choice_label(question, i)}" for i in range(len(question.choices))]
    return "\n".join(lines)


def quiz_text(questions: Sequence[Question]) -> str:
    """All questions as plain text, with how to check the answers (where no widget can render).

    >>> "Question 1." in quiz_text([])
    False
    """
    parts = [question_text(q, i) for i, q in enumerate(questions, start=1)]
    parts.append(
        "To check your answers with instant feedback, open this notebook in JupyterLab or "
        "Colab, or run it in a terminal where you can type your answers."
    )
    return "\n\n".join(parts)


def _check_questions(questions: Sequence[Question]) -> list[Question]:
    """The questions as a list; ValueError if there are none or an item is not a Question."""
    questions = list(questions)
    if not questions:
        raise ValueError(
            "questions=[] is empty: pass a list of Question, e.g. questions_for(lesson=1)"
        )
    for q in questions:
        if not isinstance(q, Question):
            raise ValueError(
                f"questions contains {q!r}, which is not a Question: pass items of "
                "gradacc_lessons.quiz.questions (questions_for, faq_questions, question)"
            )
    return questions


def run_text_quiz(
    questions: Sequence[Question],
    ask: Callable[[str], str] = input,
    say: Callable[[str], Any] = print,
) -> dict[str, bool]:
    """Ask each question with `ask` (input by default), give feedback and the running score.

    Stops early when the input ends (EOFError). Returns the results (id -> right).

    >>> from gradacc_lessons.quiz.questions import question
    >>> run_text_quiz([question("l1_scale")], ask=lambda _: "C", say=lambda _: None)
    {'l1_scale': True}
    """
    questions = _check_questions(questions)
    results: dict[str, bool] = {}
    for number, q in enumerate(questions, start=1):
        say(question_text(q, number))
        choice = _ask_choice(q, ask, say)
        if choice is _END:
            break
        say(feedback_text(q, choice) if choice is not None else "Skipped.")
        results = record(results, q, choice)
        say(score_text(results, len(questions)))
    say(f"Final {score_text(results, len(questions))}")
    return results


_END = object()  # the input ended


def _ask_choice(question: Question, ask: Callable[[str], str], say: Callable[[str], Any]) -> Any:
    """One choice index, None to skip, or _END when the input ends; re-asks on a typo."""
    last = LETTERS[len(question.choices) - 1]
    while True:
        try:
            text = ask(f"Your answer (A-{last}, Enter to skip): ")
        except EOFError:
            return _END
        try:
            return parse_choice(text, len(question.choices))
        except ValueError as error:
            say(str(error))


@dataclass
class QuizWidgets:
    """The widgets of one quiz, for tests and for styling: wired to the pure functions above."""

    box: Any  # the VBox to display
    radios: dict[str, Any]  # question id -> RadioButtons (value: choice index or None)
    buttons: dict[str, Any]  # question id -> the "Check" button
    feedback: dict[str, Any]  # question id -> HTML feedback
    score: Any  # HTML running score
    results: dict[str, bool]  # question id -> right at its latest check


# Long choices wrap onto several lines: ipywidgets gives radio labels a fixed height.
_STYLE = """<style>
.gradacc-selfcheck .widget-radio-box label {
  display: flex; align-items: flex-start; gap: 0.4em; height: auto; padding: 2px 0;
  min-height: var(--jp-widgets-radio-item-height, 24px); white-space: normal; line-height: 1.4;
}
.gradacc-selfcheck .widget-radio-box input {
  order: -1; float: none; flex: none; margin: 0.2em 0 0 1px;  /* the radio before its text */
}
.gradacc-selfcheck .widget-html-content { white-space: normal; line-height: 1.5; }
.gradacc-question { margin-bottom: 0.8em; }
</style>"""


def _feedback_html(question: Question, choice: int | None) -> str:
    """The feedback text as HTML, coloured green when right and red when wrong."""
    text = html.escape(feedback_text(question, choice))
    if choice is None:
        return f"<span>{text}</span>"
    colour = "#1a7f37" if is_right(question, choice) else "#b42318"
    return f'<span style="color: {colour}">{text}</span>'


def build_quiz(questions: Sequence[Question]) -> QuizWidgets:
    """The quiz as ipywidgets: per question a card, and the running score below them."""
    import ipywidgets as widgets

    questions = _check_questions(questions)
    total = len(questions)
    score_box = widgets.HTML(value=f"<b>{score_text({}, total)}</b>")
    score_box.add_class("gradacc-score")
    quiz = QuizWidgets(None, {}, {}, {}, score_box, {})
    cards = [_question_card(quiz, q, n, total, widgets) for n, q in enumerate(questions, 1)]
    quiz.box = widgets.VBox([widgets.HTML(value=_STYLE), *cards, score_box])
    quiz.box.add_class("gradacc-selfcheck")
    return quiz


def _question_card(quiz: QuizWidgets, q: Question, number: int, total: int, widgets: Any) -> Any:
    """One question's card: prompt, radio choices, Check button and feedback, wired to `quiz`."""
    prompt = widgets.HTML(value=f"<b>Question {number}.</b> {html.escape(q.prompt)}")
    options = [(choice_label(q, i), i) for i in range(len(q.choices))]
    radio = widgets.RadioButtons(options=options, value=None, layout=widgets.Layout(width="auto"))
    radio.add_class("gradacc-choices")
    button = widgets.Button(description="Check", button_style="primary")
    button.add_class("gradacc-check")
    feedback = widgets.HTML(value="")
    feedback.add_class("gradacc-feedback")

    def on_check(_button: Any) -> None:
        quiz.results.update(record(quiz.results, q, radio.value))
        feedback.value = _feedback_html(q, radio.value)
        quiz.score.value = f"<b>{score_text(quiz.results, total)}</b>"

    button.on_click(on_check)
    quiz.radios[q.id], quiz.buttons[q.id], quiz.feedback[q.id] = radio, button, feedback
    card = widgets.VBox([prompt, radio, button, feedback])
    card.add_class("gradacc-question")
    card.add_class(f"gradacc-question-{q.id}")
    return card


def widgets_can_render() -> bool:
    """Whether we run inside a Jupyter kernel (JupyterLab, Colab) that has ipywidgets."""
    try:
        import ipywidgets  # noqa: F401
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def stdin_is_interactive() -> bool:
    """Whether someone can type answers: stdin exists and is a terminal."""
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):  # closed or detached stdin
        return False


def _enable_colab_widgets() -> None:
    """On Colab, switch on the widget manager that renders ipywidgets 8; elsewhere do nothing."""
    if "google.colab" not in sys.modules:
        return
    try:
        from google.colab import output

        output.enable_custom_widget_manager()
    except (ImportError, AttributeError):  # an old or a future Colab: try to render anyway
        pass


def self_check(questions: Sequence[Question]) -> None:
    """Show the self-check quiz for `questions`: widgets where they render, else plain text.

    Never blocks without a terminal: with no interactive stdin it prints the questions.
    """
    questions = _check_questions(questions)
    if widgets_can_render():
        from IPython.display import display

        _enable_colab_widgets()
        quiz = build_quiz(questions)
        bundle = quiz.box._repr_mimebundle_()
        bundle["text/plain"] = quiz_text(questions)  # what a frontend without widgets shows
        display(bundle, raw=True)
    elif stdin_is_interactive():
        run_text_quiz(questions)
    else:
        print(quiz_text(questions))


def self_study_questions() -> list[Question]:
    """The self-study quiz: the five FAQ questions in order, then every lesson's own, by lesson.

    >>> [q.faq for q in self_study_questions()[:5]]
    [1, 2, 3, 4, 5]
    """
    from gradacc_lessons.quiz.questions import QUESTIONS, faq_questions

    others = sorted((q for q in QUESTIONS if q.faq is None), key=lambda q: q.lesson)
    return faq_questions() + others
