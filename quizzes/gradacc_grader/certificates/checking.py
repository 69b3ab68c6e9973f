"""Checking an Open Badges credential as ``gradacc-certify verify`` does, against its issuer's
place: the key and the status lists published at the address the credential names.

The credential names its issuer (``iss``: ``<verify_url>issuer.json``); the verifier reads
that folder, or a copy of it given with ``--published`` (a folder or another address), and
refuses when the copy publishes another issuer (another origin). Then the signature (by a key
of the issuer's ``jwks.json``), the dates, and each status list: signed by the same key,
current, not older than one seen here before, and the credential's bit unset. Without a status
list the answer is "signature valid, status unknown", never "valid".
"""

from __future__ import annotations

import base64
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

from gradacc_grader.certificates import badge, baking, status_lists, vcjwt
from gradacc_grader.certificates.signing import fingerprint
from gradacc_grader.certificates.untrusted import parse_json_object, read_small_file

MAX_BYTES = 2_000_000
SQLITE = b"SQLite format 3\0"


class Refused(Exception):
    """A credential that does not hold up; the message says why in one line."""


class StatusUnknown(Exception):
    """The signature holds, but no status list could be read: revocation cannot show."""


def read_credential(path: Path) -> str:
    """The VC-JWT of a credential file: the ``.jwt`` text, or the one a baked ``.png`` carries."""
    data = read_small_file(Path(path), MAX_BYTES, "a credential")
    if data.startswith(baking.SIGNATURE):
        return baking.unbake(data)
    return data.decode("ascii", "replace").strip()


def unverified_payload(token: str) -> dict:
    """The payload of a token, NOT checked: only to learn where to look (its issuer)."""
    try:
        part = token.split(".")[1]
        return parse_json_object(
            base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)).decode("utf-8"), "its payload"
        )
    except (IndexError, ValueError, UnicodeDecodeError):
        raise Refused("it is not a VC-JWT credential (three base64url parts)") from None


def fetch(source: str, name: str) -> bytes | None:
    """A published file: from an http(s) address or a folder; None when it is not there."""
    if source.startswith(("https://", "http://")):
        try:
            with urllib.request.urlopen(source + name, timeout=20) as response:
                return response.read(MAX_BYTES + 1)[:MAX_BYTES]
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return None
            raise Refused(f"{source}{name} answered {error.code}") from None
        except (urllib.error.URLError, TimeoutError) as error:
            raise Refused(f"cannot reach {source}{name} ({error})") from None
    path = Path(source) / name
    return read_small_file(path, MAX_BYTES, "a published file") if path.is_file() else None


def issuer_place(payload: dict) -> str:
    """The folder the credential's issuer publishes in (its id without ``issuer.json``)."""
    issuer = payload.get("iss")
    if not isinstance(issuer, str) or not issuer.endswith("/" + badge.ISSUER_FILE):
        raise Refused("it names no issuer place (its iss is not an address of issuer.json)")
    return issuer[: -len(badge.ISSUER_FILE)]


def check_credential(
    token: str,
    *,
    published: str | None,
    status_files: list[Path],
    state: Path,
    now: datetime,
) -> dict:
    """A credential checked against its issuer's place: ``{"credential", "source", "key",
    "lists"}``.

    Raises:
        Refused: why the credential does not hold up.
        StatusUnknown: the signature holds, but no status list decides (the credential is
            attached to the exception as ``.checked``).
    """
    place = issuer_place(unverified_payload(token))
    source = published or place
    if not source.startswith(("http://", "https://")) and not source.endswith("/"):
        source += "/"
    profile_bytes = fetch(source, badge.ISSUER_FILE)
    keys_bytes = fetch(source, badge.KEYS_FILE)
    if profile_bytes is None or keys_bytes is None:
        raise Refused(f"{source} publishes no issuer.json and jwks.json: not an issuer's place")
    profile = parse_json_object(profile_bytes.decode("utf-8", "replace"), f"{source}issuer.json")
    if profile.get("id") != badge.issuer_id(place):
        raise Refused(
            f"another origin: the credential names the issuer {badge.issuer_id(place)}, but "
            f"{source} publishes the issuer {profile.get('id')!r}; only the key published at the "
            "issuer's own address vouches for its credentials"
        )
    key_set = parse_json_object(keys_bytes.decode("utf-8", "replace"), f"{source}jwks.json")
    try:
        header, credential = vcjwt.verify(token, key_set)
    except vcjwt.NotAuthentic as error:
        raise Refused(str(error)) from None
    if not str(header.get("kid", "")).startswith(place):
        raise Refused("its key is not one published at the issuer's own address")
    _check_credential_fields(credential, now)
    checked = {"credential": credential, "source": source, "key": header["kid"], "lists": []}
    checked["fingerprint"] = _fingerprint(key_set, header["kid"])
    given = _given_lists(status_files)
    for entry in credential["credentialStatus"]:
        text = given.get(entry["statusPurpose"])
        if text is None:
            relative = entry["statusListCredential"].removeprefix(place)
            if relative == entry["statusListCredential"]:
                raise Refused("its status list lies outside the issuer's place")
            text = fetch(source, relative)
        if text is None:
            error = StatusUnknown(
                f"signature valid, status unknown: no {entry['statusPurpose']} status list at "
                f"{source} (a revocation would not show); give --status-list FILE or --published"
            )
            error.checked = checked
            raise error
        _check_status(text, key_set, entry, credential, state, now, checked)
    return checked


def _fingerprint(key_set: dict, kid: str) -> str:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    (jwk,) = [k for k in key_set["keys"] if k.get("kid") == kid][:1]
    raw = base64.urlsafe_b64decode(jwk["x"] + "=" * (-len(jwk["x"]) % 4))
    return fingerprint(Ed25519PublicKey.from_public_bytes(raw))


def _check_credential_fields(credential: dict, now: datetime) -> None:
    if "OpenBadgeCredential" not in credential.get("type", []):
        raise Refused("it is not an OpenBadgeCredential")
    statuses = credential.get("credentialStatus")
    if not isinstance(statuses, list) or not statuses:
        raise Refused("it carries no credentialStatus: nothing could ever revoke it")
    start = datetime.strptime(credential["validFrom"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    if start > now + timedelta(minutes=10):
        raise Refused(f"it is valid only from {credential['validFrom']}, in the future")


def _given_lists(paths: list[Path]) -> dict[str, bytes]:
    lists = {}
    for path in paths:
        data = read_small_file(Path(path), MAX_BYTES, "a status list")
        if data.startswith(SQLITE):
            raise Refused(
                f"{path} is an SQLite database, not a signed status list: only the issuer's "
                "signed status list decides a credential's status"
            )
        try:
            purpose = unverified_payload(data.decode("ascii").strip())["credentialSubject"][
                "statusPurpose"
            ]
        except (Refused, KeyError, TypeError, UnicodeDecodeError):
            raise Refused(f"{path} is not a status list credential (a VC-JWT)") from None
        lists[purpose] = data
    return lists


def _check_status(text, key_set, entry, credential, state, now, checked) -> None:
    if text.startswith(SQLITE):
        raise Refused("the status list is an SQLite database, not a signed status list")
    token = text.decode("ascii", "replace").strip()
    try:
        listed = status_lists.check_list(token, key_set, entry, credential["issuer"]["id"], now)
        status_lists.check_not_replayed(state, listed)
        set_bit = status_lists.status_of(listed, entry)
    except status_lists.StatusRefused as error:
        raise Refused(f"the {entry['statusPurpose']} status list is refused: {error}") from None
    checked["lists"].append(listed)
    if set_bit and entry["statusPurpose"] == "revocation":
        raise Refused(
            f"revoked: the issuer's status list (issued {listed['validFrom']}) marks this "
            "credential revoked"
        )
    if set_bit:
        raise Refused(
            "superseded: the issuer re-issued this credential (a corrected name); ask the learner "
            "for the current one"
        )


def describe_lists(lists: list[dict]) -> str:
    """One line on the status lists checked: issued when, due by when."""
    return "; ".join(
        f"{listed['credentialSubject']['statusPurpose']} list issued {listed['validFrom']}, "
        f"due by {listed['validUntil']}"
        for listed in lists
    )
