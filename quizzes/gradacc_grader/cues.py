"""Cue statistics: can a student who knows nothing beat chance on the multiple-choice questions?

    python -m gradacc_grader.cues        # over many secrets, as the tests do

A test-wise student looks for cues instead of the answer: the right letter's usual position,
the longest or most specific choice, the odd one out by size. `cue_scores` plays each such
strategy over drawn releases and returns its expected score (ties split evenly); with four
choices, chance is 25 %, and the course asks every strategy to stay below chance + 10 points.
"""

from __future__ import annotations

import re
import secrets
import sys
from collections import Counter
from collections.abc import Callable, Iterable

from gradacc_grader.bank import ASSIGNMENTS
from gradacc_grader.draw import LETTERS, Asked, draw_release, number_in

CHANCE = 1 / len(LETTERS)


def asked_questions(secret_list: Iterable[bytes], lang: str = "en") -> list[Asked]:
    """Every multiple-choice question of every assignment, drawn with each secret."""
    found = []
    for secret in secret_list:
        for assignment in ASSIGNMENTS:
            edition = lang if lang in assignment.languages else "en"
            release = draw_release(assignment, secret, edition)
            found += [item for item in release.items if isinstance(item, Asked)]
    return found


def specificity(text: str) -> int:
    """How specific a choice looks: numbers, code, names and qualifying clauses it holds.

    >>> specificity("`nn.LayerNorm(32)`, in train mode") > specificity("Any layer")
    True
    """
    words = text.split()
    detail = sum(bool(re.search(r"[\d`_().=]", w)) or w[:1].isupper() for w in words[1:])
    return detail + text.count(",") + text.count(":") + text.count(";") + len(words) // 6


def _by_key(key: Callable[[str], float], pick_max: bool) -> Callable[[Asked], float]:
    def score(asked: Asked) -> float:
        values = [key(choice.text) for choice in asked.choices]
        best = max(values) if pick_max else min(values)
        chosen = [i for i, v in enumerate(values) if v == best]
        return (asked.answer in chosen) / len(chosen)  # ties: a random one of the best

    return score


def _middle(asked: Asked) -> float:
    values = sorted(number_in(choice.text) for choice in asked.choices)
    right = number_in(asked.choices[asked.answer].text)
    inner = values[1:3]
    return (right in inner) / 2  # picks one of the two middle values at random


STRATEGIES: dict[str, Callable[[Asked], float]] = {
    "longest": _by_key(len, True),
    "shortest": _by_key(len, False),
    "most specific": _by_key(specificity, True),
    "least specific": _by_key(specificity, False),
}
NUMERIC_STRATEGIES: dict[str, Callable[[Asked], float]] = {
    "largest number": _by_key(lambda t: number_in(t) or 0.0, True),
    "smallest number": _by_key(lambda t: number_in(t) or 0.0, False),
    "a middle number": _middle,
}


def numeric(asked: Asked) -> bool:
    """Are all four choices plain numbers (with a unit at most)?"""
    return all(number_in(choice.text) is not None for choice in asked.choices)


def cue_scores(questions: list[Asked]) -> dict[str, float]:
    """Expected score of each test-wise strategy, and of every fixed letter, over `questions`."""
    scores = {name: sum(map(play, questions)) / len(questions) for name, play in STRATEGIES.items()}
    numbers = [q for q in questions if numeric(q)]
    for name, play in NUMERIC_STRATEGIES.items():
        if numbers:
            scores[name] = sum(map(play, numbers)) / len(numbers)
    letters = Counter(q.letter for q in questions)
    for letter in LETTERS:
        scores[f'always "{letter}"'] = letters[letter] / len(questions)
    return scores


def length_spread(asked: Asked) -> float:
    """Longest choice over shortest, in characters: 1 when all are the same length.

    >>> from gradacc_grader.bank.core import Choice
    >>> choices = (Choice("ab", ""), Choice("abcd", ""))
    >>> length_spread(Asked(None, "?", choices, 0))
    2.0
    """
    lengths = [len(choice.text) for choice in asked.choices]
    return max(lengths) / min(lengths)


def main() -> int:
    """Print each strategy's score over 200 fresh secrets; exit 1 if one beats chance + 10."""
    questions = asked_questions(secrets.token_hex(32).encode() for _ in range(200))
    worst = 0.0
    for name, score in cue_scores(questions).items():
        print(f"{name:<16} {score:6.1%}")
        worst = max(worst, score)
    print(f"chance {CHANCE:.0%}; {len(questions)} questions drawn")
    return 0 if worst <= CHANCE + 0.10 else 1


if __name__ == "__main__":
    sys.exit(main())
