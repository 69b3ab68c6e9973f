"""What a graded assignment is made of: choices, coding exercises, written answers.

A question of the graded bank is a *template*: `draw(rng, lang)` picks its numbers with the
random generator the builder seeds from the instructor's secret, computes the right answer
and one wrong answer per common mistake, each with the explanation a student reads in the
feedback. The builder then puts the right answer at a position the secret chooses.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

LANGUAGES = ("en", "yo")
KINDS = ("compute", "recall")  # compute: work out a quantity; recall: know a fact


@dataclass(frozen=True)
class Choice:
    """One answer a student can pick, and why it is right or wrong (shown in the feedback)."""

    text: str
    why: str


@dataclass(frozen=True)
class Drawn:
    """A multiple-choice question as one release asks it: its numbers are drawn."""

    prompt: str
    right: Choice
    wrong: tuple[Choice, ...]  # one per common mistake, three of them


@dataclass(frozen=True)
class MultipleChoice:
    """A multiple-choice template; `draw(rng, lang)` returns the question a release asks."""

    id: str  # the answer variable is answer_<id>
    kind: str  # one of KINDS
    goal: str  # what it checks, in a few words (the guide's table)
    draw: Callable[[random.Random, str], Drawn]
    points: int = 1


@dataclass(frozen=True)
class Exercise:
    """A coding exercise graded per named case by the module `inside/<module>.py`.

    `solution` is the body the builder puts between nbgrader's solution markers;
    `starter` is what stays visible in the student's cell (the signature, its docstring).
    """

    id: str
    module: str
    goal: str
    prompt: dict[str, str]  # markdown by language; {points} is filled in
    starter: str
    solution: str
    check: dict[str, str]  # the visible quick check by language: a locked cell, never graded
    partial: str  # a body with one classic bug, for the sample class
    partial_fails: tuple[str, ...]  # the cases that bug fails
    points: int = 3
    kind: str = "code"


@dataclass(frozen=True)
class Written:
    """An answer in words, graded by hand with the rubric (never shown to students)."""

    id: str
    goal: str
    prompt: dict[str, str]  # by language
    model_answer: str
    rubric: tuple[str, ...]  # one line per point, then what earns nothing
    points: int = 2
    kind: str = "written"


@dataclass(frozen=True)
class Assignment:
    """One nbgrader assignment: its name, its title and intro, and its items in order."""

    name: str
    lesson: str  # the lesson it follows ("1" ... "6", or "final")
    title: dict[str, str]
    intro: dict[str, str]
    items: tuple = field(default_factory=tuple)
    languages: tuple[str, ...] = ("en",)

    @property
    def points(self) -> int:
        """All the points of the assignment, hand-graded ones included."""
        return sum(item.points for item in self.items)


def pick(rng: random.Random, options) -> object:
    """One of `options`, drawn with `rng` (a list copy keeps dicts and ranges usable).

    >>> pick(random.Random(0), {"only": 1})
    'only'
    """
    return rng.choice(list(options))


def fraction(numerator: int, denominator: int) -> str:
    """A fraction as a student writes it: "16/64".

    >>> fraction(16, 64)
    '16/64'
    """
    return f"{numerator}/{denominator}"


def mib(size: float) -> str:
    """Bytes as MiB with one decimal, the unit the memory lesson prints.

    >>> mib(3 * 2**20)
    '3.0 MiB'
    """
    return f"{size / 2**20:.1f} MiB"


def distinct(drawn: Drawn) -> bool:
    """Are the choices of a drawn question all different (a draw may repeat a number)?

    >>> distinct(Drawn("?", Choice("1", "why"), (Choice("2", "a"), Choice("1", "b"))))
    False
    """
    texts = [drawn.right.text, *(choice.text for choice in drawn.wrong)]
    return len(set(texts)) == len(texts)
