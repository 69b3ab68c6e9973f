"""One exercise: run the learner's function safely, measure it, and say what the measure means.

A check never shows our traceback: the learner's exception is reported with the line of
their cell that raised it, an endless loop is stopped after `TIME_LIMIT_S` seconds, and a
function whose body is still `...` gets "not written yet" (the notebook runs on).
"""

from __future__ import annotations

import html
import inspect
import linecache
import signal
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

from gradacc_lessons.exercises import progress
from gradacc_lessons.exercises.words import say

TIME_LIMIT_S = 20.0  # seconds a learner's function may run before the check stops it


class Failed(Exception):
    """Raised by a diagnosis: the learner's answer is wrong, and `message` says why."""

    def __init__(self, key: str, **fields):
        super().__init__(key)
        self.key, self.fields = key, fields


class _TimeLimit(BaseException):
    """Raised by the alarm; a BaseException, so that the learner's `except Exception` misses it."""


class _Crashed(Exception):
    """The learner's function raised: `text` says what and where."""

    def __init__(self, text: str):
        super().__init__(text)
        self.text = text


@dataclass(frozen=True)
class Verdict:
    """What a check found: passed (True, False, or None when nothing was written yet), in words."""

    passed: bool | None
    text: str

    def __repr__(self) -> str:
        return self.text

    def _repr_markdown_(self) -> str:
        # marks of common text fonts (DejaVu has them), not emoji, which some systems lack
        mark = {True: "✔", False: "✘", None: "✎"}[self.passed]
        return f"{mark} {self.text}"


def _unwritten(*args, **kwargs):
    """A function whose body is `...`: what a learner's unanswered exercise looks like."""
    ...


def is_unwritten(function: Callable) -> bool:
    """Whether `function` still has an empty body (`...` or `pass`, after its docstring)."""
    if not callable(function):
        raise ValueError(f"function must be a function, got {function!r}")
    code = getattr(function, "__code__", None)
    if code is None or code.co_code != _unwritten.__code__.co_code:
        return False
    # `return True` compiles to the same bytes as `...`; only its constant differs
    return all(c is None or c is Ellipsis or isinstance(c, str) for c in code.co_consts)


def call_learner(function: Callable, *args, limit_s: float | None = None, **kwargs):
    """`function(*args, **kwargs)`, stopped after `limit_s` seconds; its exception as _Crashed."""
    limit = TIME_LIMIT_S if limit_s is None else limit_s
    if not limit > 0:
        raise ValueError(f"limit_s must be a positive number of seconds, got {limit_s!r}")
    try:
        return _with_time_limit(lambda: function(*args, **kwargs), limit)
    except _TimeLimit:
        raise Failed("time_limit", seconds=f"{limit:g}") from None
    except Failed:
        raise
    except Exception as error:  # the learner's mistake: say it in their terms
        raise _Crashed(_where(function, error)) from None


def _with_time_limit(call: Callable, limit: float):
    """Run `call`; raise _TimeLimit after `limit` seconds (an alarm on the main thread)."""
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):

        def stop(signum, frame):
            raise _TimeLimit()

        previous = signal.signal(signal.SIGALRM, stop)
        signal.setitimer(signal.ITIMER_REAL, limit)
        try:
            return call()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    # Elsewhere (Windows, a worker thread): run it in a daemon thread and stop waiting.
    result: dict = {}

    def run():
        try:
            result["value"] = call()
        except BaseException as error:  # handed to the caller's thread below
            result["error"] = error

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(limit)
    if worker.is_alive():
        raise _TimeLimit()
    if "error" in result:
        raise result["error"]
    return result.get("value")


def _where(function: Callable, error: Exception) -> str:
    """'NameError: ... (line 7: `x = y`)': the error and the learner's last line it passed."""
    filename = function.__code__.co_filename
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == filename]
    what = f"{type(error).__name__}: {error}"
    if not frames:
        return what
    line = frames[-1].lineno
    text = (frames[-1].line or linecache.getline(filename, line)).strip()
    return f"{what} (line {line}: `{text}`)" if text else f"{what} (line {line})"


@dataclass
class Exercise:
    """An exercise: `check(your_function)`, `hint()`, and `solution()` after a checked attempt."""

    id: str
    lesson: int
    diagnose: Callable[[Callable], None]  # raises Failed for a wrong answer
    reference: Callable  # the solution; its source is shown by solution()
    hint_key: str
    tries: int = field(default=0, init=False)
    first_right: bool | None = field(default=None, init=False)
    right: bool = field(default=False, init=False)

    def check(self, function: Callable, lang: str = "en") -> Verdict:
        """Run `function` on fresh cases; say whether it is right, and if not, why."""
        if not callable(function):
            return Verdict(False, say("not_a_function", lang, got=type(function).__name__))
        if is_unwritten(function):
            return Verdict(None, say("not_written", lang))
        try:
            self.diagnose(function)
        except Failed as failed:
            return self._record(False, say(failed.key, lang, **failed.fields))
        except _Crashed as crashed:
            return self._record(False, say("raised", lang, error=crashed.text))
        return self._record(True, say("right", lang))

    def _record(self, passed: bool, text: str) -> Verdict:
        self.tries += 1
        if self.first_right is None:
            self.first_right = passed
        self.right = self.right or passed
        progress.record(self.id, passed)  # for lesson 8's score, in a file on this machine
        return Verdict(passed, text)

    def hint(self, lang: str = "en") -> Verdict:
        """Where to look, without the answer."""
        return Verdict(None, say(self.hint_key, lang))

    def solution(self, lang: str = "en") -> Verdict:
        """The reference solution's source, once an attempt of yours was checked."""
        if self.tries == 0:
            return Verdict(None, say("solution_later", lang))
        return Verdict(None, f"{say('solution_is', lang)}\n\n```python\n{self.source()}```")

    def source(self) -> str:
        """The reference solution, as code."""
        return inspect.getsource(self.reference)


def static_html(exercise: Exercise, lang: str = "en") -> str:
    """The exercise on a page without a kernel (the site): a note, hint and solution folded."""
    if not isinstance(exercise, Exercise):
        raise ValueError(f"exercise must be an Exercise, got {exercise!r}")
    hint = f"<p>{html.escape(say(exercise.hint_key, lang))}</p>"
    code = f"<pre><code>{html.escape(exercise.source())}</code></pre>"
    return (
        f'<div class="gradacc-exercise-static" lang="{lang}">'
        f"<p><i>{html.escape(say('static_note', lang))}</i></p>"
        f"{_details('gradacc-hint', say('hint_title', lang), hint)}"
        f"{_details('gradacc-answer', say('solution_title', lang), code)}</div>"
    )


def _details(css_class: str, summary: str, body: str) -> str:
    return f'<details class="{css_class}"><summary>{html.escape(summary)}</summary>{body}</details>'
