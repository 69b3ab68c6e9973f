"""Self-check quizzes with instant feedback: widgets in JupyterLab and Colab, text elsewhere.

`self_check(questions)` draws the quiz (each question's choices in a fresh order) and shows
it with what the environment can show:

- in a Jupyter kernel: one card per question (prompt, choices or a number box, Check and
  Show the answer, feedback) and the score, with a static HTML version beside the widget
  for pages that have no kernel (the course site);
- in a terminal: the same quiz through `input()`;
- anywhere else (a script without stdin): the questions as text. Nothing waits for input
  that cannot come, so a headless notebook run never blocks.

What counts and what is said is decided in `attempts.py`; this module only wires it up.
Drawing the quiz and the plain-text ways of showing it are in `terminal.py`.
"""

from __future__ import annotations

import html
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gradacc_lessons.quiz.attempts import (
    Attempt,
    Feedback,
    check,
    feedback,
    parse_answer,
    score_text,
    show_answer,
    tolerance_text,
)
from gradacc_lessons.quiz.language import ENGLISH, LANGUAGES, Words, languages_of, words_for
from gradacc_lessons.quiz.questions import LETTERS, AnyQuestion, Prediction
from gradacc_lessons.quiz.terminal import (
    _check_questions,
    _check_seed,
    _draw,
    _numbered,
    draw,
    quiz_text,
    run_text_quiz,
)

__all__ = [  # draw, quiz_text and run_text_quiz are terminal's, shown here as self_check uses them
    "QuizWidgets",
    "build_quiz",
    "draw",
    "language_switch",
    "quiz_html",
    "quiz_text",
    "run_text_quiz",
    "self_check",
    "widgets_can_render",
]

# --- widgets: JupyterLab and Colab ---


@dataclass
class QuizWidgets:
    """A quiz's widgets and state, for tests and styling; question ids are the keys."""

    box: Any  # the VBox to display
    questions: list  # as drawn: in the quiz's language, choices in the order shown
    words: Words
    answers: dict[str, Any] = field(default_factory=dict)  # RadioButtons or Text
    checks: dict[str, Any] = field(default_factory=dict)  # the Check buttons
    reveals: dict[str, Any] = field(default_factory=dict)  # the Show-the-answer buttons
    feedback: dict[str, Any] = field(default_factory=dict)  # HTML
    attempts: dict[str, Attempt] = field(default_factory=dict)
    score: Any = None  # HTML


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
.gradacc-selfcheck pre { white-space: pre; line-height: 1.3; margin: 0.3em 0; }
.gradacc-question { margin-bottom: 0.8em; }
</style>"""

_COLOURS = {"right": "#1a7f37", "hint": "#9a6700", "answer": "#b42318", "empty": "inherit"}


def _feedback_html(said: Feedback) -> str:
    """A feedback message as HTML, coloured by kind, with its computation as a code block.

    >>> _feedback_html(Feedback("right", "Right! 3 < 4", code="3 / 4"))
    '<span style="color: #1a7f37">Right! 3 &lt; 4</span><pre><code>3 / 4</code></pre>'
    """
    text = f'<span style="color: {_COLOURS[said.kind]}">{html.escape(said.text)}</span>'
    if said.code is None:
        return text
    return f"{text}<pre><code>{html.escape(said.code)}</code></pre>"


def build_quiz(
    questions: Sequence[AnyQuestion], lang: str = "en", first_number: int = 1
) -> QuizWidgets:
    """The quiz as ipywidgets: a card per question (as given: draw them first), then the score.

    >>> from gradacc_lessons.quiz.questions import question
    >>> quiz = build_quiz([question("l1_scale")])
    >>> quiz.checks["l1_scale"].click()
    >>> quiz.feedback["l1_scale"].value
    '<span style="color: inherit">Pick one of the choices first, then press Check.</span>'
    """
    import ipywidgets as widgets

    quiz = QuizWidgets(None, _check_questions(questions), words_for(lang))
    quiz.score = _styled(widgets.HTML(), "gradacc-score")
    numbered = _numbered(quiz.questions, quiz.words, first_number)
    cards = [_card(quiz, q, title, widgets) for title, q in numbered]
    _show_score(quiz)
    quiz.box = _styled(
        widgets.VBox([widgets.HTML(_STYLE), *cards, quiz.score]), "gradacc-selfcheck"
    )
    return quiz


def _styled(widget: Any, *css_classes: str) -> Any:
    """The widget with these CSS classes (for the style sheet, and for the browser tests)."""
    for css_class in css_classes:
        widget.add_class(css_class)
    return widget


def _show_score(quiz: QuizWidgets) -> None:
    text = score_text(quiz.attempts.values(), len(quiz.questions), quiz.words)
    quiz.score.value = f"<b>{html.escape(text)}</b>"


def _card(quiz: QuizWidgets, q: AnyQuestion, title: str, widgets: Any) -> Any:
    """One question's card: prompt, answer input, Check and Show-the-answer, feedback."""
    words = quiz.words
    prompt = widgets.HTML(f"<b>{html.escape(title)}</b> {html.escape(q.prompt)}")
    answer, parts = _answer_input(q, words, widgets)
    check_button = widgets.Button(description=words.check, button_style="primary")
    quiz.checks[q.id] = _styled(check_button, "gradacc-check")
    quiz.reveals[q.id] = _styled(widgets.Button(description=words.show_answer), "gradacc-reveal")
    quiz.feedback[q.id] = _styled(widgets.HTML(""), "gradacc-feedback")
    quiz.answers[q.id], quiz.attempts[q.id] = answer, Attempt()
    _wire(quiz, q)
    buttons = widgets.HBox([quiz.checks[q.id], quiz.reveals[q.id]])
    card = widgets.VBox([prompt, *parts, buttons, quiz.feedback[q.id]])
    return _styled(card, "gradacc-question", f"gradacc-question-{q.id}")


def _wire(quiz: QuizWidgets, q: AnyQuestion) -> None:
    """Connect a card's buttons to `check` and `show_answer`, its feedback and the score."""
    said, words = quiz.feedback[q.id], quiz.words

    def on_check(_button: Any) -> None:
        try:
            value = _read(q, quiz.answers[q.id], words)
        except ValueError as error:  # a typo in the number box: say what to type
            said.value = _feedback_html(Feedback("empty", str(error)))
            return
        quiz.attempts[q.id], kind = check(q, quiz.attempts[q.id], value)
        said.value = _feedback_html(feedback(q, quiz.attempts[q.id], kind, value, words))
        _show_score(quiz)

    def on_reveal(_button: Any) -> None:
        quiz.attempts[q.id] = show_answer(quiz.attempts[q.id])
        said.value = _feedback_html(feedback(q, quiz.attempts[q.id], "answer", None, words))
        _show_score(quiz)

    quiz.checks[q.id].on_click(on_check)
    quiz.reveals[q.id].on_click(on_reveal)


def _answer_input(q: AnyQuestion, words: Words, widgets: Any) -> tuple[Any, list]:
    """The answer's widget (radio choices, or a text box for a number) and what to show."""
    if isinstance(q, Prediction):
        box = widgets.Text(placeholder=words.placeholder, layout=widgets.Layout(width="12em"))
        note = widgets.HTML(f"<i>{html.escape(tolerance_text(q, words))}</i>")
        return _styled(box, "gradacc-number"), [box, _styled(note, "gradacc-tolerance")]
    options = [(f"{LETTERS[i]}. {choice}", i) for i, choice in enumerate(q.choices)]
    radio = widgets.RadioButtons(options=options, value=None, layout=widgets.Layout(width="auto"))
    return _styled(radio, "gradacc-choices"), [radio]


def _read(q: AnyQuestion, answer: Any, words: Words) -> Any:
    """The answer in a card's widget: the radio's choice index, or the typed number."""
    return parse_answer(q, answer.value, words) if isinstance(q, Prediction) else answer.value


def language_switch(quizzes: dict[str, QuizWidgets], lang: str) -> Any:
    """Toggle buttons that show one of `quizzes` (language -> quiz), `lang`'s first.

    Each language keeps its own quiz, and its own score, while the other is shown.

    >>> from gradacc_lessons.quiz.questions import faq_questions
    >>> quizzes = {code: build_quiz(draw(faq_questions(), code), code) for code in ("en", "yo")}
    >>> toggle, shown = language_switch(quizzes, "en").children
    >>> toggle.value = "yo"
    >>> shown.children[0] is quizzes["yo"].box
    True
    """
    import ipywidgets as widgets

    if not isinstance(quizzes, dict) or lang not in quizzes:
        raise ValueError(
            f"lang={lang!r} must be a key of quizzes, a dict language -> build_quiz(...), "
            f"got keys {list(quizzes) if isinstance(quizzes, dict) else quizzes!r}"
        )
    options = [(LANGUAGES[code], code) for code in quizzes]
    toggle = _styled(widgets.ToggleButtons(options=options, value=lang), "gradacc-language")
    shown = widgets.VBox([quizzes[lang].box])

    def on_change(change: dict) -> None:
        shown.children = [quizzes[change["new"]].box]

    toggle.observe(on_change, names="value")
    return widgets.VBox([toggle, shown])


# --- static HTML: where no kernel runs ---


def quiz_html(questions: Sequence[AnyQuestion], lang: str = "en", first_number: int = 1) -> str:
    """The quiz as static HTML: each question with its hint and its answer in collapsed blocks.

    >>> from gradacc_lessons.quiz.questions import question
    >>> '<details class="gradacc-answer">' in quiz_html([question("l1_scale")])
    True
    """
    words, questions = words_for(lang), _check_questions(questions)
    items = [_question_html(q, t, words) for t, q in _numbered(questions, words, first_number)]
    note = f'<p class="gradacc-quiz-note"><i>{html.escape(words.static_note)}</i></p>'
    return f'<div class="gradacc-quiz-static" lang="{lang}">{note}{"".join(items)}</div>'


def _question_html(q: AnyQuestion, title: str, words: Words) -> str:
    parts = [f"<p><b>{html.escape(title)}</b> {html.escape(q.prompt)}</p>"]
    if isinstance(q, Prediction):
        parts.append(f"<p><i>{html.escape(tolerance_text(q, words))}</i></p>")
    else:
        items = "".join(f"<li>{html.escape(choice)}</li>" for choice in q.choices)
        parts.append(f'<ol type="A">{items}</ol>')
    parts.append(_details("gradacc-hint", words.hint_title, f"<p>{html.escape(q.hint)}</p>"))
    said = feedback(q, Attempt(), "answer", None, words)
    answer = f"<p>{html.escape(said.text)}</p>"
    if said.code is not None:
        answer += f"<pre><code>{html.escape(said.code)}</code></pre>"
    parts.append(_details("gradacc-answer", words.answer_title, answer))
    body = "".join(parts)
    return f'<div class="gradacc-static-question" data-question="{q.id}">{body}</div>'


def _details(css_class: str, summary: str, body: str) -> str:
    return f'<details class="{css_class}"><summary>{html.escape(summary)}</summary>{body}</details>'


# --- choosing what to show ---


def widgets_can_render() -> bool:
    """Whether we run inside a Jupyter kernel (JupyterLab, Colab) that has ipywidgets.

    >>> widgets_can_render()  # doctests run in no kernel
    False
    """
    try:
        import ipywidgets  # noqa: F401
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def _stdin_is_interactive() -> bool:
    """Whether someone can type answers: stdin exists and is a terminal."""
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):  # closed or detached stdin
        return False


def _check_languages(lang: str, languages: Sequence[str] | None) -> list[str]:
    """The languages to offer, `lang` among them; ValueError for unknown or repeated ones."""
    chosen = [lang] if languages is None else list(languages)
    unknown = [code for code in [lang, *chosen] if code not in LANGUAGES]
    if unknown or len(set(chosen)) != len(chosen) or lang not in chosen:
        raise ValueError(
            f"lang={lang!r} and languages={languages!r} must name each language once, lang "
            f"among them, from {sorted(LANGUAGES)}: e.g. lang='en', languages=('en', 'yo')"
        )
    return chosen


def self_check(
    questions: Sequence[AnyQuestion],
    lang: str = "en",
    *,
    languages: Sequence[str] | None = None,
    seed: int | None = None,
    first_number: int = 1,
) -> None:
    """Show the self-check quiz for `questions`: widgets where they render, else text.

    Args:
        questions: from the bank (`questions_for(lesson)`, `faq_questions()`, ...).
        lang: "en", or "yo" for Yorùbá.
        languages: offer a switch between these languages (e.g. ("en", "yo")), `lang` first;
            None offers every language all the questions are written in (`languages_of`).
        seed: the order of the choices; None draws a fresh order each time.
        first_number: the first question's number, for a quiz asked in parts (lesson 8).

    Where there is no kernel to draw widgets, nor anyone to type, it prints the quiz in `lang`:

    >>> from gradacc_lessons.quiz.questions import question
    >>> self_check([question("l1_scale")], lang="yo", seed=0)  # doctest: +ELLIPSIS
    Ìbéèrè 1. Loss micro-batch kọ̀ọ̀kan jẹ́ àròpín lórí àwọn àpẹẹrẹ rẹ̀...
    """
    questions = _check_questions(questions)
    if languages is None:
        languages = [lang, *(code for code in languages_of(questions) if code != lang)]
    languages = _check_languages(lang, languages)
    rng = random.Random(_check_seed(seed))
    _numbered(questions, ENGLISH, first_number)  # a bad first_number fails before drawing
    drawn = {code: _draw(questions, code, rng) for code in languages}
    if widgets_can_render():
        from gradacc_lessons.display import show_widget

        quizzes = {code: build_quiz(drawn[code], code, first_number) for code in languages}
        widget = quizzes[lang].box if len(quizzes) == 1 else language_switch(quizzes, lang)
        pages = [quiz_html(drawn[code], code, first_number) for code in languages]
        show_widget(widget, "".join(pages))
    elif _stdin_is_interactive():
        run_text_quiz(drawn[lang], lang, first_number=first_number)
    else:
        print(quiz_text(drawn[lang], lang, first_number))
