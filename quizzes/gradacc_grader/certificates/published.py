"""The published registry: one signed document, numbered, dated, and chained to the one before.

``registry.json`` is, like a certificate file, a signed text and its signature::

    {"format": "gradacc-certificate-registry/2",
     "signed": "{...the registry, as the exact text that was signed...}",
     "signature": "<base64 Ed25519 signature of that text>"}

The signed registry holds every signed certificate and revocation, and, as an X.509
certificate revocation list does, its ``sequence`` number, when it was ``issued`` and the
``next_update`` by which a newer one is due. Its ``chain`` lists the SHA-256 hashes of every
registry published before it, oldest first (as a transparency log does): a registry commits to
all its predecessors, so an older copy cannot pass as newer and a newer one cannot drop what an
older one published without the issuer's key. Changing any byte of the signed text breaks the
signature; a verifier also refuses a registry past its ``next_update`` (stale) and one older
than a registry it has already seen (``seen.py`` remembers those). The page
(``quizzes/verify/verify.js``) makes the same checks.
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime, timedelta

from gradacc_grader.certificates.signing import BadSignature, read_signed, sign_record

FORMAT = "gradacc-certificate-registry/2"
OLD_FORMAT = "gradacc-certificate-registry/1"
TYPE = "gradacc-certificate-registry"
VALID_DAYS = 30  # how long an export stays current unless the issuer says otherwise
CLOCK_SLACK = timedelta(minutes=10)  # a verifier's clock may run this far behind the issuer's
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
_HASH = re.compile(r"[0-9a-f]{64}")
FIELDS = {
    "type",
    "public_key",
    "sequence",
    "issued",
    "next_update",
    "chain",
    "certificates",
    "revocations",
}


class RegistryRefused(ValueError):
    """A published registry a verifier must not trust; the message says why, for a reader."""


def registry_hash(signed: str) -> str:
    """The SHA-256 (hex) of a registry's signed text: what the next registry's chain lists.

    >>> registry_hash("{}")[:16]
    '44136fa355b3678a'
    """
    return hashlib.sha256(signed.encode("utf-8")).hexdigest()


def time_text(moment: datetime) -> str:
    """A moment as the registry writes it: UTC, to the second, ``YYYY-MM-DDTHH:MM:SSZ``.

    >>> time_text(datetime(2026, 5, 1, 9, 30, 15, 999, tzinfo=UTC))
    '2026-05-01T09:30:15Z'
    """
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> datetime:
    """The moment a registry's time field states (ValueError if it is not written as issued).

    >>> parse_time("2026-05-01T09:30:15Z").isoformat()
    '2026-05-01T09:30:15+00:00'
    """
    if not isinstance(text, str) or not _TIME.fullmatch(text):
        raise ValueError(f"{text!r} is not a time written YYYY-MM-DDTHH:MM:SSZ")
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def next_registry(
    previous: dict | None,
    contents: dict,
    key,
    *,
    now: datetime,
    valid_days: float = VALID_DAYS,
) -> dict:
    """Sign the registry that follows ``previous`` (a published document, None for the first).

    Args:
        previous: the last registry published, as ``{"signed", "signature"}``, or None.
        contents: ``{"public_key", "certificates", "revocations"}`` as the SQLite file holds them.
        key: the issuer's private key.
        now: the time of issue.
        valid_days: how long until the next registry is due.

    Returns:
        The new published document ``{"format", "signed", "signature"}``.

    Raises:
        ValueError: ``contents`` drops a certificate or revocation ``previous`` published.

    >>> from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    >>> key = Ed25519PrivateKey.from_private_bytes(bytes(32))
    >>> now = datetime(2026, 5, 1, tzinfo=UTC)
    >>> empty = {"public_key": "K", "certificates": {}, "revocations": {}}
    >>> first = next_registry(None, empty, key, now=now)
    >>> second = next_registry(first, empty, key, now=now)
    >>> body = read_signed(second, key.public_key())
    >>> body["sequence"], body["chain"] == [registry_hash(first["signed"])], body["next_update"]
    (2, True, '2026-05-31T00:00:00Z')
    """
    if valid_days <= 0:
        raise ValueError(f"a registry must stay current for some time, not {valid_days} days")
    sequence, chain = 1, []
    if previous is not None:
        before = read_signed(previous, key.public_key())
        _check_nothing_dropped(before, contents)
        sequence, chain = (
            before["sequence"] + 1,
            [*before["chain"], registry_hash(previous["signed"])],
        )
    body = {
        "type": TYPE,
        "public_key": contents["public_key"],
        "sequence": sequence,
        "issued": time_text(now),
        "next_update": time_text(now + timedelta(days=valid_days)),
        "chain": chain,
        "certificates": contents["certificates"],
        "revocations": contents["revocations"],
    }
    return {"format": FORMAT, **sign_record(body, key)}


def _check_nothing_dropped(before: dict, after: dict) -> None:
    for part in ("certificates", "revocations"):
        for certificate_id, entry in before[part].items():
            if after[part].get(certificate_id) != entry:
                raise ValueError(
                    f"registry number {before['sequence']} published {part[:-1]} "
                    f"{certificate_id}, and the SQLite registry no longer holds it as published: "
                    "restore the SQLite file from your backup; nothing was published"
                )


def check_published(document: dict, public_key, *, now: datetime) -> dict:
    """The registry inside a published document, once it is shown authentic and current.

    Args:
        document: the parsed ``registry.json``.
        public_key: the issuer's public key, which must have signed it.
        now: the verifier's time (a registry past its ``next_update`` is stale).

    Returns:
        The signed registry: ``sequence``, ``issued``, ``next_update``, ``chain``,
        ``certificates`` and ``revocations``, with ``hash`` (its SHA-256) added (see
        ``authentic``).

    Raises:
        RegistryRefused: why the registry cannot be trusted.

    >>> from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    >>> from gradacc_grader.certificates.signing import public_key_text
    >>> key = Ed25519PrivateKey.from_private_bytes(bytes(32))
    >>> empty = {"public_key": public_key_text(key.public_key()), "certificates": {},
    ...          "revocations": {}}
    >>> document = next_registry(None, empty, key, now=datetime(2026, 5, 1, tzinfo=UTC))
    >>> public = key.public_key()
    >>> check_published(document, public, now=datetime(2026, 5, 2, tzinfo=UTC))["sequence"]
    1
    >>> check_published(document, public, now=datetime(2026, 6, 2, tzinfo=UTC))
    Traceback (most recent call last):
    gradacc_grader.certificates.published.RegistryRefused: stale: ...
    """
    body = authentic(document, public_key)
    issued, due = parse_time(body["issued"]), parse_time(body["next_update"])
    if issued > now + CLOCK_SLACK:
        raise RegistryRefused(
            f"the registry says it was issued on {_when(issued)}, in the future: check this "
            "computer's clock"
        )
    if now > due:
        raise RegistryRefused(
            f"stale: this registry (number {body['sequence']}, issued {_when(issued)}) was due "
            f"to be replaced by {_when(due)}, {age_text(now - due)} ago; a certificate revoked "
            "since then would still look valid here. Get the current registry.json from the "
            "issuer's site, or ask the issuer to publish one"
        )
    return body


def authentic(document: dict, public_key) -> dict:
    """The signed registry of a published document, with its ``hash``, whatever its dates.

    Raises:
        RegistryRefused: not a registry, not signed by ``public_key``, or malformed.
    """
    from gradacc_grader.certificates.signing import public_key_text

    fmt = document.get("format")
    if fmt == OLD_FORMAT:
        raise RegistryRefused(
            "this registry is of the old, unsigned format (gradacc-certificate-registry/1), in "
            "which entries could be deleted unnoticed: the issuer must export it again "
            "(gradacc-certify export --key ...)"
        )
    if fmt != FORMAT:
        raise RegistryRefused(f"it is not a certificate registry (format {FORMAT})")
    if set(document) != {"format", "signed", "signature"}:
        raise RegistryRefused("it must hold exactly format, signed and signature")
    if document["signed"] is None:
        raise RegistryRefused("the issuer has published no certificates yet")
    try:
        body = read_signed(document, public_key)
    except BadSignature:
        raise RegistryRefused(
            "the registry's signature does not match the issuer's key: the registry was "
            "changed after it was signed (an entry added, removed or edited, any byte), or "
            "it was signed by another key"
        ) from None
    except ValueError as error:
        raise RegistryRefused(f"the registry is malformed ({error})") from None
    _check_body(body)
    if body["public_key"] != public_key_text(public_key):
        raise RegistryRefused(
            "the registry names another issuer key than the one it is checked with"
        )
    return {**body, "hash": registry_hash(document["signed"])}


def check_history(documents: list[dict], public_key) -> list[dict]:
    """Registries published over time, checked as one history: each signed, each later one
    chained to each earlier one, and nothing an earlier one published missing or changed in a
    later one. Dates are not checked: old registries are expected here.

    Args:
        documents: published registries (``{"format", "signed", "signature"}``), any order,
            any subset of the numbers.
        public_key: the issuer's public key.

    Returns:
        The signed registries, by sequence number (one per number).

    Raises:
        RegistryRefused: the first break in the history, named.

    >>> from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    >>> from gradacc_grader.certificates.signing import public_key_text
    >>> key = Ed25519PrivateKey.from_private_bytes(bytes(32))
    >>> now = datetime(2026, 5, 1, tzinfo=UTC)
    >>> contents = {"public_key": public_key_text(key.public_key()),
    ...             "certificates": {"A": {"signed": "{}", "signature": ""}}, "revocations": {}}
    >>> first = next_registry(None, contents, key, now=now)
    >>> second = next_registry(first, contents, key, now=now)
    >>> [body["sequence"] for body in check_history([second, first], key.public_key())]
    [1, 2]
    >>> dropped = {**contents, "certificates": {}}
    >>> check_history([first, next_registry(None, dropped, key, now=now)], key.public_key())
    Traceback (most recent call last):
    gradacc_grader.certificates.published.RegistryRefused: two different registries are ...
    """
    by_number: dict[int, dict] = {}
    for document in documents:
        body = authentic(document, public_key)
        known = by_number.setdefault(body["sequence"], body)
        if known["hash"] != body["hash"]:
            raise RegistryRefused(
                f"two different registries are numbered {body['sequence']}: both are signed "
                "with the issuer's key, so the key was misused or stolen"
            )
    bodies = [by_number[number] for number in sorted(by_number)]
    for before, after in zip(bodies, bodies[1:], strict=False):
        if after["chain"][before["sequence"] - 1] != before["hash"]:
            raise RegistryRefused(
                f"registry number {after['sequence']} does not continue number "
                f"{before['sequence']}: its chain lists another registry under that number"
            )
        for part in ("certificates", "revocations"):
            for certificate_id, entry in before[part].items():
                if after[part].get(certificate_id) != entry:
                    raise RegistryRefused(
                        f"the {part[:-1]} {certificate_id}, published in registry number "
                        f"{before['sequence']}, is missing from (or changed in) number "
                        f"{after['sequence']}: a published entry vanished"
                    )
    return bodies


def _check_body(body: dict) -> None:
    """RegistryRefused unless a signed registry has its fields, each well formed."""
    try:
        if set(body) != FIELDS or body["type"] != TYPE:
            raise ValueError("its fields are not those of a registry")
        sequence, chain = body["sequence"], body["chain"]
        if type(sequence) is not int or sequence < 1:
            raise ValueError(f"its sequence number {sequence!r} is not a whole number from 1")
        if not isinstance(chain, list) or not all(
            isinstance(h, str) and _HASH.fullmatch(h) for h in chain
        ):
            raise ValueError("its chain is not a list of SHA-256 hashes")
        if len(chain) != sequence - 1:
            raise ValueError(f"number {sequence} must list {sequence - 1} earlier registries")
        if parse_time(body["next_update"]) <= parse_time(body["issued"]):
            raise ValueError("its next update is not after its time of issue")
        if not all(isinstance(body[part], dict) for part in ("certificates", "revocations")):
            raise ValueError("its certificates and revocations are not objects")
        if not set(body["revocations"]) <= set(body["certificates"]):
            raise ValueError("it revokes a certificate it does not list")
    except (ValueError, TypeError) as error:
        raise RegistryRefused(f"the registry is malformed: {error}") from None


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def age_text(elapsed: timedelta) -> str:
    """A duration as a reader says it.

    >>> age_text(timedelta(seconds=30)), age_text(timedelta(hours=5)), age_text(timedelta(days=3))
    ('less than a minute', '5 hours', '3 days')
    """
    seconds = max(0, int(elapsed.total_seconds()))
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'s' if count > 1 else ''}"
    return "less than a minute"


def describe(body: dict, now: datetime) -> str:
    """One line on the registry checked: its number, its age, when the next one is due.

    >>> body = {"sequence": 4, "issued": "2026-05-01T09:00:00Z",
    ...         "next_update": "2026-05-31T09:00:00Z"}
    >>> describe(body, datetime(2026, 5, 3, 10, tzinfo=UTC))
    'number 4, issued 2026-05-01 09:00 UTC (2 days ago), next due by 2026-05-31 09:00 UTC'
    """
    issued = parse_time(body["issued"])
    return (
        f"number {body['sequence']}, issued {_when(issued)} ({age_text(now - issued)} ago), "
        f"next due by {_when(parse_time(body['next_update']))}"
    )
