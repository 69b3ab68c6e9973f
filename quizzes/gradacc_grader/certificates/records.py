"""What a certificate states, the file a learner keeps, and the checks that file must pass.

A certificate file is JSON::

    {"format": "gradacc-certificate/1",
     "certificate": {...the facts, for people to read...},
     "signed": "{...the same facts, as the exact text that was signed...}",
     "signature": "<base64 Ed25519 signature of that text>"}

It is valid when the signature matches the issuer's public key, the signed text is a
certificate record, and the readable copy states exactly the same facts. A revocation is a
signed record of its own (ID, date, reason), kept in the registry.
"""

from __future__ import annotations

import json
import math
import unicodedata
from datetime import date
from pathlib import Path

from gradacc_grader.certificates.ids import normalize_id
from gradacc_grader.certificates.signing import read_signed
from gradacc_grader.certificates.untrusted import parse_json_object, read_small_file

FORMAT = "gradacc-certificate/1"
CERTIFICATE = "gradacc-certificate"
REVOCATION = "gradacc-revocation"
MAX_FILE_BYTES = 100_000
MAX_TEXT = 200
# The facts of a certificate and their JSON types ("number": an int or float, never a bool).
FIELDS_BEFORE_TITLES = {
    "type": "string",
    "id": "string",
    "course": "string",
    "assignment": "string",
    "name": "string",
    "score": "number",
    "max_score": "number",
    "date": "string",
    "course_version": "string",
}
# Since 2026-12, a certificate also states in words what a reader outside the course needs
# (settings.CertificateSettings). Records signed before hold FIELDS_BEFORE_TITLES only and
# stay valid: their signed text is checked as it was signed.
TITLES = {"course_title": "string", "issuer": "string", "assignment_title": "string"}
FIELDS = {**FIELDS_BEFORE_TITLES, **TITLES}
# Joiners shape a name in some scripts; str.isprintable() calls them unprintable.
JOINERS = "\u200c\u200d"
REVOCATION_FIELDS = {"type": "string", "id": "string", "date": "string", "reason": "string"}


def certificate_record(
    certificate_id: str,
    *,
    course: str,
    assignment: str,
    name: str,
    score: float,
    max_score: float,
    day: date,
    course_version: str,
    course_title: str = "",
    issuer: str = "",
    assignment_title: str = "",
) -> dict:
    """The facts a certificate states, checked and in their signed form.

    The name and the titles are Unicode-normalized (NFC), so that the same name typed twice
    is the same text; scores are rounded to hundredths. ``issue`` always gives the titles
    and the issuer (settings.CertificateSettings.missing); a page prints the course's and
    the assignment's ids where they are empty.

    >>> record = certificate_record(
    ...     "7K3M-Q9XT-2HPW", course="gradacc", assignment="final", name="Ada  Lovelace",
    ...     score=8.5, max_score=10, day=date(2026, 5, 1), course_version="0.1.0",
    ...     course_title="Gradient accumulation", issuer="Ada's School",
    ...     assignment_title="the final exam")
    >>> record["name"], record["score"], record["date"]
    ('Ada Lovelace', 8.5, '2026-05-01')
    """
    record = {
        "type": CERTIFICATE,
        "id": certificate_id,
        "course": course,
        "assignment": assignment,
        "name": _text(name),
        "score": round(float(score), 2),
        "max_score": round(float(max_score), 2),
        "date": day.isoformat(),
        "course_version": course_version,
        "course_title": _text(course_title),
        "issuer": _text(issuer),
        "assignment_title": _text(assignment_title),
    }
    check_record(record)
    return record


def _text(text: str) -> str:
    return unicodedata.normalize("NFC", " ".join(text.split()))


def revocation_record(certificate_id: str, day: date, reason: str) -> dict:
    """The facts of a revocation: which ID, since when, and why.

    >>> revocation_record("7K3M-Q9XT-2HPW", date(2026, 6, 1), "copied")["date"]
    '2026-06-01'
    """
    record = {"type": REVOCATION, "id": certificate_id, "date": day.isoformat(), "reason": reason}
    check_revocation_record(record)
    return record


def check_record(record: dict) -> None:
    """Raise ValueError unless ``record`` holds exactly a certificate's facts, well formed.

    >>> check_record({"type": "gradacc-certificate", "name": "Ada"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: its fields are wrong (missing ['assignment', ...], unexpected [])
    """
    fields = FIELDS_BEFORE_TITLES if set(record) == set(FIELDS_BEFORE_TITLES) else FIELDS
    _check_fields(record, fields, CERTIFICATE)
    if normalize_id(record["id"]) != record["id"]:
        raise ValueError(f"the certificate ID {record['id']!r} is not written as issued")
    # nbgrader's extra credit can take a score above the maximum, never below 0
    if record["score"] < 0 or record["max_score"] <= 0:
        raise ValueError(f"the score {record['score']} of {record['max_score']} is impossible")
    if not record["name"]:
        raise ValueError("the certificate names nobody")


def check_revocation_record(record: dict) -> None:
    """Raise ValueError unless ``record`` holds exactly a revocation's facts.

    >>> check_revocation_record(revocation_record("7K3M-Q9XT-2HPW", date(2026, 6, 1), "x"))
    """
    _check_fields(record, REVOCATION_FIELDS, REVOCATION)
    normalize_id(record["id"])


def _check_fields(record: dict, fields: dict, kind: str) -> None:
    if set(record) != set(fields):
        missing, extra = sorted(set(fields) - set(record)), sorted(set(record) - set(fields))
        raise ValueError(f"its fields are wrong (missing {missing}, unexpected {extra})")
    for name, kind_of_value in fields.items():
        value = record[name]
        if kind_of_value == "string":
            ok = isinstance(value, str) and len(value) <= MAX_TEXT
            ok = ok and "".join(c for c in value if c not in JOINERS).isprintable()
        else:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            ok = ok and math.isfinite(value)
        if not ok:
            raise ValueError(f"its field {name!r} is not a {kind_of_value}: {value!r}")
    if record["type"] != kind:
        raise ValueError(f"it is a {record['type']!r} record, not a {kind!r}")
    if date.fromisoformat(record["date"]).isoformat() != record["date"]:  # ValueError if no date
        raise ValueError(f"its date {record['date']!r} is not written YYYY-MM-DD")


def certificate_file(entry: dict) -> dict:
    """A learner's certificate file from a signed record: the readable facts and the signed text.

    The readable copy is read back from the signed text, so that a certificate written again
    from the registry is the same file, byte for byte.

    >>> from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    >>> from gradacc_grader.certificates.signing import sign_record
    >>> key = Ed25519PrivateKey.from_private_bytes(bytes(32))
    >>> record = certificate_record(
    ...     "7K3M-Q9XT-2HPW", course="gradacc", assignment="final", name="Ada Lovelace",
    ...     score=8.5, max_score=10, day=date(2026, 5, 1), course_version="0.1.0",
    ...     course_title="Gradacc", issuer="Ada", assignment_title="the final")
    >>> sorted(certificate_file(sign_record(record, key)))
    ['certificate', 'format', 'signature', 'signed']
    """
    readable = parse_json_object(entry["signed"], "the signed record")
    return {
        "format": FORMAT,
        "certificate": readable,
        "signed": entry["signed"],
        "signature": entry["signature"],
    }


def write_certificate(document: dict, path: Path) -> None:
    """Write a certificate file as indented UTF-8 JSON (``read_certificate_file`` reads it)."""
    Path(path).write_text(json.dumps(document, ensure_ascii=False, indent=2) + "\n", "utf-8")


def read_certificate_file(path: Path) -> dict:
    """A certificate file's JSON, with its four parts; ValueError says what is malformed.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "certificate.json"
    >>> write_certificate({"format": FORMAT, "certificate": {}}, path)
    >>> read_certificate_file(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: .../certificate.json is not a certificate: it must hold exactly [...]
    """
    data = read_small_file(Path(path), MAX_FILE_BYTES, "a certificate file")
    try:
        text = data.decode("utf-8-sig")  # a byte order mark from an editor is fine
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not a certificate: it is not UTF-8 text") from None
    document = parse_json_object(text, f"{path}")
    if document.get("format") != FORMAT:
        raise ValueError(f"{path} is not a certificate: its format is not {FORMAT!r}")
    parts = {"format", "certificate", "signed", "signature"}
    if set(document) != parts or not isinstance(document["certificate"], dict):
        raise ValueError(f"{path} is not a certificate: it must hold exactly {sorted(parts)}")
    return document


def check_certificate(document: dict, public_key) -> dict:
    """The facts of a certificate file whose signature and readable copy hold up.

    Raises:
        BadSignature: the signed text was changed, or signed by another key.
        ValueError: the record is malformed, or the readable copy differs from it.

    >>> from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    >>> from gradacc_grader.certificates.signing import sign_record
    >>> key = Ed25519PrivateKey.from_private_bytes(bytes(32))
    >>> record = certificate_record(
    ...     "7K3M-Q9XT-2HPW", course="gradacc", assignment="final", name="Ada Lovelace",
    ...     score=8.5, max_score=10, day=date(2026, 5, 1), course_version="0.1.0",
    ...     course_title="Gradacc", issuer="Ada", assignment_title="the final")
    >>> document = certificate_file(sign_record(record, key))
    >>> check_certificate(document, key.public_key())["name"]
    'Ada Lovelace'
    >>> document["certificate"]["score"] = 10.0
    >>> check_certificate(document, key.public_key())
    Traceback (most recent call last):
    ValueError: the readable copy was changed: it differs from the signed record in score
    """
    record = read_signed(document, public_key)
    check_record(record)
    if document["certificate"] != record or not _same_types(document["certificate"], record):
        changed = sorted(k for k in record if document["certificate"].get(k) != record[k])
        raise ValueError(
            "the readable copy was changed: it differs from the signed record in "
            f"{', '.join(changed) or 'its fields'}"
        )
    return record


def _same_types(a: dict, b: dict) -> bool:
    # 1 == True and {"x": 1} == {"x": True} in Python: a changed type is a change too.
    return set(a) == set(b) and all(isinstance(a[k], bool) == isinstance(b[k], bool) for k in a)
