"""Checking an older-format certificate file: its signature, by the issuer's key, and no more.

Before the Open Badges credentials (``badge``, ``checking``), a certificate was a signed JSON
record. Such a file still verifies: ``verify_file`` returns its facts when the issuer's key
signed exactly its text, or raises ``Invalid`` with the reason. Its status (revoked or not)
cannot be known: only a signed status list decides status, and an older file has no entry in
one, so ``gradacc-certify verify`` says "status unknown" for it and exits non-zero.
"""

from __future__ import annotations

from pathlib import Path

from gradacc_grader.certificates.records import check_certificate, read_certificate_file


class Invalid(Exception):
    """A certificate that does not hold up; the message says why."""


def verify_file(path: Path, public_key) -> dict:
    """The facts of an older-format certificate file, once its signature is checked.

    Raises:
        Invalid: why the certificate does not hold up.

    >>> import tempfile
    >>> from datetime import date
    >>> from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    >>> from gradacc_grader.certificates.records import certificate_file, certificate_record
    >>> from gradacc_grader.certificates.records import write_certificate
    >>> from gradacc_grader.certificates.signing import sign_record
    >>> key = Ed25519PrivateKey.from_private_bytes(bytes(32))
    >>> record = certificate_record(
    ...     "7K3M-Q9XT-2HPW", course="gradacc", assignment="final", name="Ada Lovelace",
    ...     score=8.5, max_score=10, day=date(2026, 5, 1), course_version="0.1.0")
    >>> path = Path(tempfile.mkdtemp()) / "certificate.json"
    >>> write_certificate(certificate_file(sign_record(record, key)), path)
    >>> verify_file(path, key.public_key())["name"]
    'Ada Lovelace'
    >>> other = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
    >>> verify_file(path, other.public_key())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    gradacc_grader.certificates.verification.Invalid: ...
    """
    try:
        return check_certificate(read_certificate_file(path), public_key)
    except ValueError as error:  # BadSignature is a ValueError
        raise Invalid(str(error)) from None
