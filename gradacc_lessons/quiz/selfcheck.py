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
"""

from __future__ import annotations

import html
import operator
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
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
from gradacc_lessons.quiz.language import ENGLISH, LANGUAGES, Words, translated, words_for
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
        lang: "en", or "yo" for the FAQ in Yoruba.
        languages: offer a switch between these languages (e.g. ("en", "yo")), `lang` first.
        seed: the order of the choices; None draws a fresh order each time.
        first_number: the first question's number, for a quiz asked in parts (lesson 8).

    In Yoruba it asks the FAQ (`faq_questions()`), the questions that have a Yoruba text:

    >>> from gradacc_lessons.quiz.questions import question
    >>> self_check([question("l1_scale")], lang="yo")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: question 'l1_scale' has no text in lang='yo': ... pass faq_questions(), or lang='en'
    """
    questions = _check_questions(questions)
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
