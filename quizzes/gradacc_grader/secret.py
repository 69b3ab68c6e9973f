"""The instructor's secret: made once per course, it decides every answer key.

`gradacc-build` creates `<course>/instructor.secret` (random, readable by its owner only) the
first time it runs, and keeps it after: the same secret and question bank always give the
same assignments. Everything a release draws — the numbers of a question, the order of its
choices, the seeds of the hidden test cases — comes from `rng_for(secret, ...)`, so a student
who reads the whole public repository still cannot tell the answer key of a release.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import random
import secrets
import stat
from pathlib import Path

SECRET_FILE = "instructor.secret"


def ensure_secret(course: Path) -> bytes:
    """The course's secret, created (mode 0600) when the course has none yet.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> ensure_secret(folder) == ensure_secret(folder)
    True
    >>> oct((folder / SECRET_FILE).stat().st_mode & 0o777)
    '0o600'
    """
    path = Path(course) / SECRET_FILE
    if not path.exists():
        # O_EXCL: never overwrite a secret that appeared meanwhile; 0600 from the first byte
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as file:
            file.write(secrets.token_hex(32) + "\n")
    return read_secret(course)


def read_secret(course: Path) -> bytes:
    """The course's secret; ValueError when it is missing, empty or readable by others.

    >>> read_secret(Path("/nonexistent"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: course='/nonexistent' has no instructor.secret: run `gradacc-build --course ...
    """
    path = Path(course) / SECRET_FILE
    if not path.is_file() or path.is_symlink():
        raise ValueError(
            f"course={str(course)!r} has no {SECRET_FILE}: run `gradacc-build --course "
            f"{course}` to create it (it decides the answer keys; keep it out of git)"
        )
    if path.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ValueError(
            f"{path} can be read by other users: run `chmod 600 {path}` (it decides the "
            "answer keys of every assignment)"
        )
    text = path.read_text(encoding="ascii").strip()
    if len(text) < 32:
        raise ValueError(f"{path} is too short to be a secret: delete it and run gradacc-build")
    return text.encode("ascii")


def rng_for(secret: bytes, *names: str) -> random.Random:
    """A random generator seeded by the secret and a path of names (assignment, question, ...).

    Each path gets its own stream, so adding a question leaves the others' draws unchanged.

    >>> key = b"k" * 64
    >>> rng_for(key, "lesson1", "steps").random() == rng_for(key, "lesson1", "steps").random()
    True
    >>> rng_for(b"k" * 64, "a").random() == rng_for(b"j" * 64, "a").random()
    False
    """
    digest = hmac.new(secret, "/".join(names).encode("utf-8"), hashlib.sha256).digest()
    return random.Random(int.from_bytes(digest, "big"))
