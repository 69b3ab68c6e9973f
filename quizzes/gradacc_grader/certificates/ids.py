"""Certificate IDs: random, short enough to read out or type, with a check character.

An ID is 11 random characters and one check character, printed in groups of four:
``7K3M-Q9XT-2HPW``. The characters are Crockford's base 32 without ``Z`` (no ``I``, ``L``,
``O``, ``U``: they look like ``1``, ``1``, ``0``, ``V``), 31 of them. Because 31 is a prime,
the check character ``sum(position * value) mod 31`` changes whenever one character is
mistyped or two characters (next to each other, or anywhere in the ID) are swapped.

11 characters drawn by :mod:`secrets` give 31**11, about 2.5e16 IDs: someone guessing IDs
finds one of 10,000 issued certificates once in 2.5e12 tries. The registry still refuses an
ID it already holds, so two certificates never share one.
"""

from __future__ import annotations

import secrets

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXY"
RANDOM_CHARS = 11
GROUP = 4
# What a person may type for a character that is never printed (Crockford's rule).
_LOOKALIKES = str.maketrans("OIL", "011")


def new_id() -> str:
    """A fresh random certificate ID, check character included.

    Returns:
        The ID in groups of four, e.g. ``"7K3M-Q9XT-2HPW"``.

    >>> certificate_id = new_id()
    >>> len(certificate_id), normalize_id(certificate_id.lower()) == certificate_id
    (14, True)
    """
    body = "".join(secrets.choice(ALPHABET) for _ in range(RANDOM_CHARS))
    return _grouped(body + check_character(body))


def check_character(body: str) -> str:
    """The check character of an ID's random part: sum of position x value, modulo 31.

    Args:
        body: the random characters, without dashes.

    Returns:
        One character of ``ALPHABET``.

    >>> check_character("00000000001")  # 11 x 1 = 11 -> "B"
    'B'
    """
    total = sum(position * ALPHABET.index(char) for position, char in enumerate(body, start=1))
    return ALPHABET[total % len(ALPHABET)]


def normalize_id(text: str) -> str:
    """The ID as printed, from what someone typed (any case, dashes or spaces, O for 0).

    Args:
        text: a certificate ID as typed.

    Returns:
        The ID in groups of four.

    Raises:
        ValueError: the text cannot be an ID, or its check character shows a typo.

    >>> normalize_id("7k3m q9xt 2hpw")
    '7K3M-Q9XT-2HPW'
    """
    chars = "".join(text.split()).replace("-", "").upper().translate(_LOOKALIKES)
    if len(chars) != RANDOM_CHARS + 1:
        raise ValueError(
            f"certificate ID {text!r} has {len(chars)} characters; an ID has "
            f"{RANDOM_CHARS + 1}, like 7K3M-Q9XT-2HPW"
        )
    wrong = sorted(set(chars) - set(ALPHABET))
    if wrong:
        raise ValueError(
            f"certificate ID {text!r} holds {''.join(wrong)!r}, which IDs never use "
            "(only digits and the letters A-Y without I, L, O, U): check what you typed"
        )
    if check_character(chars[:-1]) != chars[-1]:
        raise ValueError(
            f"certificate ID {text!r} is mistyped: its last character does not match the "
            "others (a wrong or swapped character); copy it again from the certificate"
        )
    return _grouped(chars)


def _grouped(chars: str) -> str:
    return "-".join(chars[i : i + GROUP] for i in range(0, len(chars), GROUP))
