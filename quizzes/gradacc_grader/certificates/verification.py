"""Checking a certificate: its file or its ID, against the issuer's key and the registry.

Each check either returns the certificate's facts or raises ``Invalid`` with the reason a
verifier reads: a changed or foreign signature, a malformed file, an ID the registry does not
hold, or a revocation. The browser page (``quizzes/verify/verify.js``) makes the same checks.
"""

from __future__ import annotations

from pathlib import Path

from gradacc_grader.certificates.ids import normalize_id
from gradacc_grader.certificates.records import (
    check_certificate,
    check_record,
    check_revocation_record,
    read_certificate_file,
)
from gradacc_grader.certificates.signing import read_signed


class Invalid(Exception):
    """A certificate that does not hold up; the message says why."""


def verify_file(path: Path, public_key, published: dict | None = None) -> dict:
    """The facts of a certificate file, checked; and against the registry when one is given.

    Args:
        path: the certificate's JSON file.
        public_key: the issuer's public key.
        published: the registry (see ``registry.read_registry``), or None to check the
            signature only (a revocation cannot be seen then).

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
    >>> entry = sign_record(record, key)
    >>> path = Path(tempfile.mkdtemp()) / "certificate.json"
    >>> write_certificate(certificate_file(entry), path)
    >>> verify_file(path, key.public_key())["name"]
    'Ada Lovelace'
    >>> empty = {"certificates": {}, "revocations": {}}
    >>> verify_file(path, key.public_key(), empty)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    gradacc_grader.certificates.verification.Invalid: unknown ID: ... 7K3M-Q9XT-2HPW
    """
    try:
        document = read_certificate_file(path)
        record = check_certificate(document, public_key)
    except ValueError as error:  # BadSignature is a ValueError
        raise Invalid(str(error)) from None
    if published is not None:
        entry, _ = _registry_record(published, record["id"], public_key)
        if entry["signed"] != document["signed"]:
            raise Invalid(f"the registry holds another certificate under the ID {record['id']}")
    return record


def verify_id(text: str, public_key, published: dict) -> dict:
    """The facts of the certificate with this ID, read from the registry and checked.

    Raises:
        Invalid: a mistyped ID, an ID the registry does not hold, a bad record, a revocation.

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
    >>> entry = sign_record(record, key)
    >>> published = {"certificates": {"7K3M-Q9XT-2HPW": entry}, "revocations": {}}
    >>> verify_id("7k3m q9xt 2hpw", key.public_key(), published)["score"]
    8.5
    """
    try:
        certificate_id = normalize_id(text)
    except ValueError as error:
        raise Invalid(str(error)) from None
    _, record = _registry_record(published, certificate_id, public_key)
    return record


def _registry_record(published: dict, certificate_id: str, public_key) -> tuple[dict, dict]:
    """The registry's entry for an ID and its record, checked, unless unknown or revoked."""
    entry = published["certificates"].get(certificate_id)
    if entry is None:
        raise Invalid(f"unknown ID: the registry holds no certificate {certificate_id}")
    try:
        record = _signed_record(entry, public_key)
        check_record(record)
    except ValueError as error:
        raise Invalid(f"the registry's record of {certificate_id} is not valid: {error}") from None
    if record["id"] != certificate_id:
        raise Invalid(f"the registry's record under {certificate_id} is of {record['id']}")
    _check_not_revoked(published, certificate_id, public_key)
    return entry, record


def _check_not_revoked(published: dict, certificate_id: str, public_key) -> None:
    entry = published["revocations"].get(certificate_id)
    if entry is None:
        return
    try:
        revocation = _signed_record(entry, public_key)
        check_revocation_record(revocation)
    except ValueError as error:
        raise Invalid(
            f"the registry's revocation of {certificate_id} is not valid ({error}): "
            "the registry was tampered with"
        ) from None
    if revocation["id"] != certificate_id:
        raise Invalid(f"the registry's revocation under {certificate_id} is of another ID")
    raise Invalid(
        f"revoked: certificate {certificate_id} was revoked on {revocation['date']} "
        f"({revocation['reason']})"
    )


def _signed_record(entry, public_key) -> dict:
    if not isinstance(entry, dict):
        raise ValueError("it is not a signed record")
    return read_signed(entry, public_key)
