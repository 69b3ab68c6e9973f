"""Certificate IDs: unique, spread over the alphabet, and every typo of one character shows."""

from __future__ import annotations

import collections
import random

import pytest
from gradacc_grader.certificates.ids import (
    ALPHABET,
    RANDOM_CHARS,
    check_character,
    new_id,
    normalize_id,
)


def test_ten_thousand_ids_never_collide():
    ids = [new_id() for _ in range(10_000)]
    assert len(set(ids)) == len(ids)
    assert all(normalize_id(certificate_id) == certificate_id for certificate_id in ids)


def test_random_characters_are_spread_evenly():
    # 10,000 IDs x 11 random characters: about 3,548 of each of the 31 characters, with a
    # standard deviation of about 58; a bias of 15 % (530) would be 9 deviations away.
    counts = collections.Counter("".join(new_id().replace("-", "")[:-1] for _ in range(10_000)))
    expected = 10_000 * RANDOM_CHARS / len(ALPHABET)
    assert set(counts) == set(ALPHABET)
    assert all(abs(count - expected) < 0.15 * expected for count in counts.values()), counts


def _mistakes(certificate_id: str):
    """Every ID one wrong character or one swap of two different characters away."""
    chars = certificate_id.replace("-", "")
    for i, char in enumerate(chars):
        for other in ALPHABET.replace(char, ""):
            yield chars[:i] + other + chars[i + 1 :]
    for i in range(len(chars)):
        for j in range(i + 1, len(chars)):
            if chars[i] != chars[j]:
                swapped = list(chars)
                swapped[i], swapped[j] = chars[j], chars[i]
                yield "".join(swapped)


@pytest.mark.parametrize("seed", range(20))
def test_every_wrong_character_and_every_swap_is_caught(seed):
    # 20 IDs drawn from seeded generators: a failure names the seed that reproduces it
    body = "".join(random.Random(seed).choices(ALPHABET, k=RANDOM_CHARS))
    certificate_id = normalize_id(body + check_character(body))
    mistakes = list(_mistakes(certificate_id))
    assert len(mistakes) >= 12 * 30  # 360 wrong characters and up to 66 swaps
    for mistake in mistakes:
        with pytest.raises(ValueError, match="mistyped"):
            normalize_id(mistake)


def test_what_people_type_is_read_as_printed():
    # any case, spaces for dashes, and the letters O, I, L for the digits they look like
    assert normalize_id(" 7k3m q9xt-2hpw ") == "7K3M-Q9XT-2HPW"
    assert normalize_id("lOil-OiIO-ooon") == "1011-0110-000N"


@pytest.mark.parametrize(
    ("typed", "says"),
    [("7K3M-Q9XT", "characters"), ("7K3M-Q9XT-2HPWW", "characters"), ("7K3M-Q9XT-2HPU", "'U'")],
)
def test_what_cannot_be_an_id_says_why(typed, says):
    with pytest.raises(ValueError, match=says):
        normalize_id(typed)
