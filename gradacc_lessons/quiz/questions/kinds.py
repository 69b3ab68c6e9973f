"""The two kinds of self-check question: `Question` (multiple choice), `Prediction` (a number)."""

from __future__ import annotations

from dataclasses import dataclass

LETTERS = "ABCDEFGH"


@dataclass(frozen=True)
class Question:
    """A multiple-choice question with one right answer, a hint and the explanation shown after."""

    id: str  # stable and unique: names the widget's CSS class and the Yoruba text
    lesson: int  # the lesson whose self-check asks it
    prompt: str
    choices: tuple[str, ...]
    answer: int  # index of the right choice in `choices`
    explanation: str  # shown with the answer
    faq: int | None = None  # position of the FAQ item it asks (1-5), if any
    # After a first wrong answer: points at the idea, not at the answer. Every question of the
    # bank has one (a test checks); the default keeps older positional calls working.
    hint: str = ""

    @property
    def letter(self) -> str:
        """The right choice as a letter, A for the first choice."""
        return LETTERS[self.answer]


@dataclass(frozen=True)
class Prediction:
    """Predict a number the lesson's package computes; right within `tolerance` of `value`."""

    id: str
    lesson: int
    prompt: str  # says the unit the number is typed in
    value: float  # what `computation` gives
    tolerance: float  # |typed - value| <= tolerance counts as right
    computation: str  # Python code, shown after the check; its last line gives `value`
    explanation: str  # the same number by hand
    hint: str
    faq: int | None = None


AnyQuestion = Question | Prediction
