"""Draw one release of an assignment from the question bank and the instructor's secret.

Drawing decides everything the secret hides: each question's numbers, the position of its
right answer, the order of its wrong answers, and the seed of each exercise's hidden cases.
The same secret, bank and language always give the same release.
"""

from __future__ import annotations

from dataclasses import dataclass

from gradacc_grader.bank.core import Assignment, Choice, Drawn, Exercise, MultipleChoice, Written
from gradacc_grader.secret import rng_for

LETTERS = "ABCD"


@dataclass(frozen=True)
class Asked:
    """A multiple-choice question as a release asks it: the choices in their final order."""

    item: MultipleChoice
    prompt: str
    choices: tuple[Choice, ...]
    answer: int  # index of the right choice in `choices`

    @property
    def letter(self) -> str:
        """The right choice's letter."""
        return LETTERS[self.answer]


@dataclass(frozen=True)
class Seeded:
    """A coding exercise with the seed of its hidden cases."""

    item: Exercise
    seed: int


@dataclass(frozen=True)
class Release:
    """One assignment drawn for one course: what the builder turns into a notebook."""

    assignment: Assignment
    lang: str
    items: tuple  # Asked | Seeded | Written, in the assignment's order


def right_positions(secret: bytes, counts: list[int]) -> list[list[int]]:
    """Where the right answers go (0 = A), for assignments with `counts` questions each.

    One stream of shuffled blocks, each holding every letter twice, runs through the whole
    course: over a release every letter is right about as often (within two of each other),
    while knowing some answers of an assignment does not give away the others.

    >>> sorted(sum(right_positions(b"s" * 64, [3, 5]), []))
    [0, 0, 1, 1, 2, 2, 3, 3]
    """
    rng = rng_for(secret, "positions")
    stream: list[int] = []
    while len(stream) < sum(counts):
        block = [*range(len(LETTERS)), *range(len(LETTERS))]
        rng.shuffle(block)
        stream += block
    starts = [sum(counts[:i]) for i in range(len(counts))]
    return [stream[start : start + count] for start, count in zip(starts, counts)]


def _positions_for(assignment: Assignment, secret: bytes) -> list[int]:
    """The right answers' positions of one assignment, from the course-wide stream."""
    from gradacc_grader.bank import ASSIGNMENTS  # the course: its order fixes the stream

    course = list(ASSIGNMENTS) if assignment in ASSIGNMENTS else [assignment]
    counts = [sum(isinstance(i, MultipleChoice) for i in a.items) for a in course]
    return right_positions(secret, counts)[course.index(assignment)]


def _ask(item: MultipleChoice, drawn: Drawn, position: int, rng) -> Asked:
    """Put the right choice at `position` and three wrong ones, shuffled, around it."""
    if len(drawn.wrong) < len(LETTERS) - 1:
        raise ValueError(
            f"question {item.id!r} drew {len(drawn.wrong)} wrong choices; it needs at least "
            f"{len(LETTERS) - 1}: one per common mistake"
        )
    texts = [drawn.right.text, *(c.text for c in drawn.wrong)]
    if len(set(texts)) != len(texts):
        raise ValueError(f"question {item.id!r} drew two equal choices: {texts}")
    wrong = _pick_wrong(drawn, rng)
    rng.shuffle(wrong)
    choices = (*wrong[:position], drawn.right, *wrong[position:])
    return Asked(item, drawn.prompt, choices, position)


def number_in(text: str) -> float | None:
    """The number a choice states, when the choice is a number with a unit at most.

    >>> number_in("160.0 MiB"), number_in("16/64"), number_in("LayerNorm")
    (160.0, 0.25, None)
    """
    words = text.replace(",", "").split()
    if not 1 <= len(words) <= 2 or (len(words) == 2 and any(c.isdigit() for c in words[1])):
        return None
    head = words[0]
    try:
        if "/" in head:
            top, bottom = head.split("/")
            return float(top) / float(bottom)
        return float(head)
    except ValueError:
        return None


def _pick_wrong(drawn: Drawn, rng) -> list[Choice]:
    """Three of the drawn wrong choices (a question may offer more mistakes than that).

    With numbers, the three are picked so that the right value is as often the smallest,
    the largest or in between: "avoid the extremes" must not be a cue.
    """
    pool = list(drawn.wrong)
    right = number_in(drawn.right.text)
    values = [number_in(c.text) for c in pool]
    if right is None or None in values:
        return rng.sample(pool, len(LETTERS) - 1)
    below = [c for c, v in zip(pool, values) if v < right]
    above = [c for c, v in zip(pool, values) if v > right]
    ranks = [r for r in range(len(LETTERS)) if r <= len(below) and 3 - r <= len(above)]
    rank = rng.choice(ranks)
    return rng.sample(below, rank) + rng.sample(above, 3 - rank)


def draw_release(assignment: Assignment, secret: bytes, lang: str = "en") -> Release:
    """The release of `assignment` that this secret gives, in language `lang`.

    >>> from gradacc_grader.bank.lesson5 import LESSON5
    >>> letters = [q.letter for q in draw_release(LESSON5, b"s" * 64).items]
    >>> letters == [q.letter for q in draw_release(LESSON5, b"s" * 64).items]
    True
    >>> draw_release(LESSON5, b"s" * 64, lang="yo")
    Traceback (most recent call last):
    ValueError: lang='yo': lesson5_training is written in en only; build it with one of those
    """
    if lang not in assignment.languages:
        raise ValueError(
            f"lang={lang!r}: {assignment.name} is written in {', '.join(assignment.languages)} "
            "only; build it with one of those"
        )
    positions = iter(_positions_for(assignment, secret))
    items = []
    for item in assignment.items:
        rng = rng_for(secret, assignment.name, item.id)
        if isinstance(item, MultipleChoice):
            # the numbers do not depend on the language: both editions share one answer key
            items.append(_ask(item, item.draw(rng, lang), next(positions), rng))
        elif isinstance(item, Exercise):
            items.append(Seeded(item, rng.randrange(2**31)))
        elif isinstance(item, Written):
            items.append(item)
        else:
            raise ValueError(f"{assignment.name} holds an item of unknown type {type(item)}")
    return Release(assignment, lang, tuple(items))
