"""Reading files anyone may have made: a size limit, UTF-8, and JSON without ambiguity.

A verifier reads certificates and registries it did not write. Each reader here turns what is
wrong with such a file into a ValueError that says so in one sentence.
"""

from __future__ import annotations

import json
from pathlib import Path


def read_small_file(path: Path, limit: int, what: str) -> bytes:
    """The bytes of a file that should hold ``what``, at most ``limit`` of them.

    Raises:
        ValueError: the path is a folder, or the file is larger than ``limit``.
        OSError: the file is missing or unreadable (the caller names the path).

    >>> read_small_file(Path("."), 10, "a certificate")
    Traceback (most recent call last):
    ValueError: . is a folder, not a certificate
    """
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a folder, not {what}")
    with open(path, "rb") as file:
        data = file.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{path} is larger than {limit} bytes: it is not {what}")
    return data


def parse_json_object(text: str, what: str) -> dict:
    """A JSON object from text, refusing duplicate keys (two readers could pick different ones).

    Args:
        text: the JSON text.
        what: what the text is, for the error message.

    >>> parse_json_object('{"a": 1}', "x")
    {'a': 1}
    >>> parse_json_object('{"a": 1, "a": 2}', "x")
    Traceback (most recent call last):
    ValueError: x is not valid JSON (key 'a' appears twice)
    """

    def no_duplicates(pairs):
        keys = [key for key, _ in pairs]
        for key in keys:
            if keys.count(key) > 1:
                raise ValueError(f"key {key!r} appears twice")
        return dict(pairs)

    def no_constants(name):
        raise ValueError(f"{name} is not a JSON number")

    try:
        value = json.loads(text, object_pairs_hook=no_duplicates, parse_constant=no_constants)
    except (ValueError, RecursionError) as error:  # JSONDecodeError is a ValueError
        raise ValueError(f"{what} is not valid JSON ({error})") from None
    if not isinstance(value, dict):
        raise ValueError(f"{what} is not valid: it is not a JSON object")
    return value
