"""Checks of the arguments a learner passes: each returns the value or says what to do instead.

Every public function of the course checks its arguments first, with these, so that a
wrong call stops at once with a ValueError naming the argument, its value and the fix,
instead of a torch error ten frames deep or, worse, a wrong result. Booleans are not
counts (`True` would pass as 1); NumPy integers are (`operator.index` accepts them).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable


def as_count(name: str, value, minimum: int = 1, maximum: int | None = None, fix: str = "") -> int:
    """`value` as a Python int between `minimum` and `maximum` (inclusive).

    >>> import numpy as np
    >>> as_count("accumulation_steps", np.int64(4))
    4
    >>> as_count("accumulation_steps", True)
    Traceback (most recent call last):
    ValueError: accumulation_steps must be an integer of at least 1, got True
    """
    bounds = f"of at least {minimum}" if maximum is None else f"between {minimum} and {maximum}"
    if isinstance(value, bool):
        _fail(name, f"an integer {bounds}", value, fix)
    try:
        number = operator.index(value)
    except TypeError:
        _fail(name, f"an integer {bounds}", value, fix)
    if number < minimum or (maximum is not None and number > maximum):
        _fail(name, f"an integer {bounds}", value, fix)
    return number


def as_positive(name: str, value, fix: str = "", *, zero_allowed: bool = False) -> float:
    """`value` as a finite float above 0 (or at least 0 when `zero_allowed`).

    >>> as_positive("max_grad_norm", 1)
    1.0
    >>> as_positive("max_grad_norm", -1.0, "pass None to skip clipping")
    Traceback (most recent call last):
    ValueError: max_grad_norm must be a number above 0, got -1.0; pass None to skip clipping
    """
    requirement = "a number of at least 0" if zero_allowed else "a number above 0"
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not _is_real(value):
        _fail(name, requirement, value, fix)
    number = float(value)
    if not math.isfinite(number) or number < 0 or (number == 0 and not zero_allowed):
        _fail(name, requirement, value, fix)
    return number


def as_fraction(name: str, value, fix: str = "", *, one_allowed: bool = True) -> float:
    """`value` as a float from 0 to 1 (below 1 when not `one_allowed`).

    >>> as_fraction("spread", 0.5)
    0.5
    >>> as_fraction("spread", 1.5)
    Traceback (most recent call last):
    ValueError: spread must be a number from 0 to 1, got 1.5
    """
    requirement = "a number from 0 to 1" if one_allowed else "a number from 0 to below 1"
    number = as_positive(name, value, fix, zero_allowed=True)
    if number > 1 or (number == 1 and not one_allowed):
        _fail(name, requirement, value, fix)
    return number


def as_counts(
    name: str, values: Iterable, minimum: int = 1, maximum: int | None = None, fix: str = ""
) -> list[int]:
    """A non-empty list of integers of at least `minimum`, each checked by `as_count`.

    >>> as_counts("sizes", (3, 2))
    [3, 2]
    >>> as_counts("sizes", [])
    Traceback (most recent call last):
    ValueError: sizes must be a non-empty list of integers, got []
    """
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        _fail(name, "a non-empty list of integers", values, fix)
    items = list(values)
    if not items:
        _fail(name, "a non-empty list of integers", values, fix)
    return [as_count(f"every entry of {name}", v, minimum, maximum, fix) for v in items]


def as_choice(name: str, value, choices: Iterable[str]) -> str:
    """`value` when it is one of `choices`.

    >>> as_choice("normalize", "sum", ("samples", "sum"))
    'sum'
    """
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        _fail(name, f"one of {choices}", value)
    return value


def _is_real(value) -> bool:
    """NumPy floats and 0-d tensors count as numbers; strings, lists and None do not."""
    return hasattr(value, "__float__") and not isinstance(value, (str, bytes))


def _fail(name: str, requirement: str, value, fix: str = "") -> None:
    message = f"{name} must be {requirement}, got {value!r}"
    raise ValueError(f"{message}; {fix}" if fix else message)
