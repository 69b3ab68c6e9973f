"""No cue to guess from: the statistics a test-wise student would exploit, over many releases.

Chance is 25 % with four choices; every strategy must stay at or below chance + 10 points over
the bank drawn with 100 secrets (about 2,200 questions: a strategy's score then has a standard
error under 1 point, so the bound measures the bank, not the draw).
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
from gradacc_grader.bank import ASSIGNMENTS
from gradacc_grader.bank.core import Written
from gradacc_grader.cues import CHANCE, asked_questions, cue_scores, length_spread
from gradacc_grader.draw import LETTERS, Asked, draw_release

SECRETS = [(f"{i:03d}" * 22)[:64].encode() for i in range(100)]


@pytest.fixture(scope="module")
def questions() -> list[Asked]:
    return asked_questions(SECRETS)


def test_no_strategy_beats_chance_by_more_than_ten_points(questions):
    scores = cue_scores(questions)
    for name, score in scores.items():
        assert score <= CHANCE + 0.10, f"{name}: {score:.1%}"
    # the bank is not the reverse cue either: no letter is avoided
    for letter in LETTERS:
        assert scores[f'always "{letter}"'] >= CHANCE - 0.05, letter


def test_each_release_spreads_its_right_letters():
    for secret in SECRETS:
        letters = Counter()
        for assignment in ASSIGNMENTS:
            items = draw_release(assignment, secret).items
            letters.update(item.letter for item in items if isinstance(item, Asked))
        total = sum(letters.values())
        # 22 questions: every letter right 3 to 9 times (5.5 expected)
        assert all(3 <= letters[letter] <= 9 for letter in LETTERS), (letters, total)


def test_no_single_question_gives_itself_away(questions):
    by_id: dict[str, list[Asked]] = {}
    for question in questions:
        by_id.setdefault(question.item.id, []).append(question)
    for qid, group in by_id.items():
        scores = cue_scores(group)
        for name in ("longest", "most specific"):
            score = scores[name]
            assert score <= 0.5, f"{qid}: {name} picks the right answer {score:.0%} of the time"


def test_distractors_are_of_similar_length(questions):
    # code and numbers can differ a little more than sentences; no choice is 3 times another
    for question in questions:
        assert length_spread(question) <= 3.0, [c.text for c in question.choices]


def _content_words(text: str) -> set[str]:
    stop = {
        "the",
        "a",
        "an",
        "of",
        "to",
        "and",
        "or",
        "in",
        "is",
        "it",
        "its",
        "by",
        "for",
        "on",
        "with",
        "that",
        "this",
        "not",
        "be",
        "as",
        "are",
        "one",
        "each",
        "so",
    }
    return {w for w in re.findall(r"[a-z]+", text.lower()) if w not in stop and len(w) > 2}


def test_no_choice_restates_a_rubric_point(questions):
    rubrics = [
        line for a in ASSIGNMENTS for i in a.items if isinstance(i, Written) for line in i.rubric
    ]
    assert rubrics
    for question in questions:
        for choice in question.choices:
            words = _content_words(choice.text)
            for point in rubrics:
                shared = words & _content_words(point)
                # a choice that shares most of its words with a rubric point restates it
                assert len(shared) < max(4, len(words) // 2), (choice.text, point)
