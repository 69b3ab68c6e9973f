"""Revocation without naming anyone: W3C Bitstring Status List v1.0.

Each credential holds a random bit in each of the issuer's two lists (``badge.PURPOSES``):
``revocation``, and a ``message`` list whose set bit says "superseded: re-issued" (a corrected
name). A list is a signed, dated credential of its own (``BitstringStatusListCredential``,
as a VC-JWT): 131,072 bits (the specification's minimum, so that a set bit cannot be told
from its neighbours' owners), GZIP-compressed, multibase base64url (``u``...). It names no
one and states no reason: those stay in the instructor's SQLite registry. It is valid for a
week (``validUntil``) and ``publish`` signs it anew; a verifier refuses a list past its
``validUntil`` (stale) and one older than a list it has already seen (replayed).
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

from gradacc_grader.certificates import badge, vcjwt
from gradacc_grader.certificates.untrusted import parse_json_object, read_small_file

LIST_BITS = 131_072  # section 2.1: at least 16 KB, for group privacy
VALID_DAYS = 7
CLOCK_SLACK = timedelta(minutes=10)
STATE_FILE = "status-lists-seen.json"


class StatusRefused(ValueError):
    """A status list a verifier must not rely on; the message says why and what to do."""


def encode(indexes: set[int], bits: int = LIST_BITS) -> str:
    """The ``encodedList`` of a list with ``indexes`` set: GZIP, then multibase base64url.

    Bit 0 is the first (most significant) bit of the first byte (section 3.2).

    >>> decode(encode({0, 9}))[:2]
    b'\\x80@'
    """
    raw = bytearray(bits // 8)
    for index in indexes:
        raw[index // 8] |= 0x80 >> (index % 8)
    packed = gzip.compress(bytes(raw), mtime=0)
    return "u" + base64.urlsafe_b64encode(packed).decode("ascii").rstrip("=")


def decode(encoded: str) -> bytes:
    """The raw bitstring of an ``encodedList`` (ValueError when it is not one)."""
    if not isinstance(encoded, str) or not encoded.startswith("u"):
        raise ValueError("its encodedList is not multibase base64url (u...)")
    packed = base64.urlsafe_b64decode(encoded[1:] + "=" * (-len(encoded[1:]) % 4))
    with gzip.GzipFile(fileobj=io.BytesIO(packed)) as file:
        raw = file.read(LIST_BITS // 8 * 8 + 1)  # a bounded read: no gzip bomb
    if len(raw) < LIST_BITS // 8:
        raise ValueError(f"its list holds {len(raw) * 8} bits, fewer than {LIST_BITS}")
    return raw


def bit(raw: bytes, index: int) -> bool:
    """Whether bit ``index`` of a decoded list is set."""
    if not 0 <= index < len(raw) * 8:
        raise ValueError(f"index {index} lies outside the list")
    return bool(raw[index // 8] & (0x80 >> (index % 8)))


def status_list_credential(
    verify_url: str, issuer_name: str, purpose: str, indexes: set[int], now: datetime, days: float
) -> dict:
    """The unsigned ``BitstringStatusListCredential`` of one purpose."""
    url = badge.status_list_url(verify_url, purpose)
    subject = {
        "id": f"{url}#list",
        "type": "BitstringStatusList",
        "statusPurpose": purpose,
        "encodedList": encode(indexes),
    }
    if purpose == "message":
        subject |= {"statusSize": 1, "statusMessage": badge.SUPERSEDED_MESSAGES}
    return {
        "@context": [badge.CONTEXTS[0]],
        "id": url,
        "type": ["VerifiableCredential", "BitstringStatusListCredential"],
        "issuer": badge.issuer_profile(verify_url, issuer_name),
        "validFrom": badge.time_text(now),
        "validUntil": badge.time_text(now + timedelta(days=days)),
        "credentialSubject": subject,
    }


def _parse(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def check_list(token: str, key_set: dict, entry: dict, issuer: str, now: datetime) -> dict:
    """The status list credential ``entry`` points at, once authentic, the issuer's, current.

    Raises:
        StatusRefused: forged (signature, another issuer), another list than the entry's,
            malformed, issued in the future, or stale (with the date it was due).
    """
    try:
        _, listed = vcjwt.verify(token, key_set)
    except vcjwt.NotAuthentic as error:
        raise StatusRefused(f"the status list is not the issuer's: {error}") from None
    try:
        subject = listed["credentialSubject"]
        issued, due = _parse(listed["validFrom"]), _parse(listed["validUntil"])
        same_issuer = listed["issuer"]["id"] == issuer
        right_list = listed["id"] == entry["statusListCredential"]
        purpose = subject["statusPurpose"] == entry["statusPurpose"]
    except (KeyError, TypeError, ValueError):
        raise StatusRefused("the status list is malformed") from None
    if "BitstringStatusListCredential" not in listed.get("type", []) or not purpose:
        raise StatusRefused(f"it is not a {entry['statusPurpose']} status list")
    if not same_issuer:
        raise StatusRefused("the status list was issued by another issuer than the credential")
    if not right_list:
        raise StatusRefused(
            f"this is the status list {listed['id']}, not {entry['statusListCredential']}"
        )
    if issued > now + CLOCK_SLACK:
        raise StatusRefused(f"the status list says it was issued on {_when(issued)}, in the future")
    if now > due:
        raise StatusRefused(
            f"stale: the status list was due to be replaced by {_when(due)}; a credential revoked "
            "since would still look valid. Get the current list from the issuer's address, or ask "
            "the issuer to publish (gradacc-certify publish)"
        )
    return listed


def status_of(listed: dict, entry: dict) -> bool:
    """Whether the credential's bit is set in a checked list (StatusRefused if unreadable)."""
    try:
        index = int(entry["statusListIndex"])
        return bit(decode(listed["credentialSubject"]["encodedList"]), index)
    except (KeyError, TypeError, ValueError, OSError, EOFError) as error:
        raise StatusRefused(f"the status list cannot be read ({error})") from None


def default_state_path() -> Path:
    """``$XDG_STATE_HOME/gradacc/status-lists-seen.json`` (``~/.local/state`` without it)."""
    base = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(base) / "gradacc" / STATE_FILE


def check_not_replayed(state: Path, listed: dict) -> None:
    """StatusRefused if a newer list under this address was seen before; else remember this one.

    An old list, signed before a revocation, is as authentic as the current one; only its
    ``validFrom`` gives it away, to a verifier that has seen a newer one.
    """
    seen = {}
    if state.exists():
        try:
            seen = parse_json_object(
                read_small_file(state, 1_000_000, "a state file").decode("utf-8"), str(state)
            )
        except (ValueError, UnicodeDecodeError) as error:
            raise ValueError(f"{state} is damaged ({error}): delete it to start afresh") from None
    newest = seen.get(listed["id"])
    if isinstance(newest, str) and _parse(listed["validFrom"]) < _parse(newest):
        raise StatusRefused(
            f"replayed: this status list was issued {_when(_parse(listed['validFrom']))} and due "
            f"by {_when(_parse(listed['validUntil']))}, but a newer one (issued "
            f"{_when(_parse(newest))}) was checked here before; an old list can hide a revocation"
        )
    if newest != listed["validFrom"]:
        seen[listed["id"]] = listed["validFrom"]
        state.parent.mkdir(parents=True, exist_ok=True)
        partial = state.with_name(state.name + ".partial")
        partial.write_text(json.dumps(seen, indent=1, sort_keys=True) + "\n", "utf-8")
        partial.replace(state)
