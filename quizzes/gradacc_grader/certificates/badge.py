"""What a certificate states as an Open Badges 3.0 ``OpenBadgeCredential`` (1EdTech OB 3.0, on
the W3C Verifiable Credentials Data Model 2.0), and where its issuer lives.

The issuer is a place: the course's verification folder at its https address (the settings'
``verify_url``). Everything a verifier needs is published there by ``gradacc-certify
publish``: the issuer's profile (``issuer.json``, the issuer's id), its key set
(``jwks.json``), and the two status lists (``status/``). A credential names those addresses;
``vcjwt`` signs it, ``status_lists`` says whether it still stands.

The learner's name is stated as OB 3.0 states identities: an ``IdentityObject`` of type
``name``, not hashed; an e-mail the instructor gives may be added, salted and hashed
(``sha256$<hex>``), so that the learner can show that the credential is theirs without the
address being published.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from datetime import UTC, datetime
from urllib.parse import quote

CONTEXTS = [
    "https://www.w3.org/ns/credentials/v2",
    "https://purl.imsglobal.org/spec/ob/v3p0/context-3.0.3.json",
]
TYPES = ["VerifiableCredential", "OpenBadgeCredential"]
ISSUER_FILE = "issuer.json"
KEYS_FILE = "jwks.json"
STATUS_FOLDER = "status"
# Bitstring Status List v1.0 purposes: "revocation" for a revoked credential; "message" (one
# bit, two messages) for one superseded by a re-issue, which is not the learner's fault.
PURPOSES = ("revocation", "message")
SUPERSEDED_MESSAGES = [
    {"status": "0x0", "message": "current"},
    {"status": "0x1", "message": "superseded: the issuer re-issued this credential"},
]


def issuer_id(verify_url: str) -> str:
    """The issuer's id: the address of its profile in the course's verification folder.

    >>> issuer_id("https://ada.example/gradacc/verify/")
    'https://ada.example/gradacc/verify/issuer.json'
    """
    return verify_url + ISSUER_FILE


def key_id(verify_url: str, thumbprint: str) -> str:
    """The ``kid`` of the issuer's key: its entry in the published key set (RFC 7638 thumbprint).

    >>> key_id("https://ada.example/verify/", "abc")
    'https://ada.example/verify/jwks.json#abc'
    """
    return f"{verify_url}{KEYS_FILE}#{thumbprint}"


def status_list_url(verify_url: str, purpose: str) -> str:
    """Where the status list of ``purpose`` is published.

    >>> status_list_url("https://ada.example/verify/", "revocation")
    'https://ada.example/verify/status/revocation.jwt'
    """
    name = "superseded" if purpose == "message" else purpose
    return f"{verify_url}{STATUS_FOLDER}/{name}.jwt"


def credential_id(verify_url: str, certificate_id: str) -> str:
    """The credential's id: the verification page asked about its short ID (the QR code's)."""
    return f"{verify_url}?id={certificate_id}"


def time_text(moment: datetime) -> str:
    """A moment as credentials write it: UTC, to the second (XML Schema dateTimeStamp).

    >>> time_text(datetime(2026, 5, 1, 9, 30, 15, 999, tzinfo=UTC))
    '2026-05-01T09:30:15Z'
    """
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def issuer_profile(verify_url: str, issuer_name: str) -> dict:
    """The issuer's OB 3.0 ``Profile``, as credentials embed it and ``issuer.json`` publishes it.

    >>> issuer_profile("https://ada.example/verify/", "Ada's School")["type"]
    ['Profile']
    """
    return {
        "id": issuer_id(verify_url),
        "type": ["Profile"],
        "name": issuer_name,
        "url": verify_url,
    }


def hashed_email(email: str, salt: str | None = None) -> dict:
    """An e-mail address as an OB 3.0 ``IdentityObject``: salted SHA-256, never the address.

    >>> identity = hashed_email("Ada@Example.org", salt="pepper")
    >>> identity["identityHash"] == "sha256$" + hashlib.sha256(b"ada@example.orgpepper").hexdigest()
    True
    """
    salt = salt if salt is not None else secrets.token_hex(8)
    digest = hashlib.sha256((email.strip().lower() + salt).encode("utf-8")).hexdigest()
    return {
        "type": "IdentityObject",
        "hashed": True,
        "identityHash": f"sha256${digest}",
        "identityType": "emailAddress",
        "salt": salt,
    }


def open_badge_credential(
    facts: dict,
    *,
    verify_url: str,
    status_indexes: dict[str, int],
    issued: datetime,
    pass_mark: float,
    email: str | None = None,
) -> dict:
    """The ``OpenBadgeCredential`` of one certificate, unsigned.

    Args:
        facts: the certificate's facts: ``id`` (the short ID), ``course``, ``assignment``,
            ``course_title``, ``assignment_title``, ``issuer``, ``name``, ``score``,
            ``max_score``, ``course_version``.
        verify_url: the course's verification folder (https), the issuer's place.
        status_indexes: the credential's bit in each status list, by purpose.
        issued: the moment of issue (``validFrom``).
        pass_mark: the fraction of the maximum needed, stated in the criteria.
        email: an e-mail to state salted and hashed, or None.

    >>> facts = {"id": "7K3M-Q9XT-2HPW", "course": "gradacc", "assignment": "final",
    ...          "course_title": "Gradient accumulation", "assignment_title": "the final",
    ...          "issuer": "Ada's School", "name": "Ada Lovelace", "score": 8.5,
    ...          "max_score": 10.0, "course_version": "0.1.0"}
    >>> badge = open_badge_credential(facts, verify_url="https://a.example/verify/",
    ...     status_indexes={"revocation": 5, "message": 5},
    ...     issued=datetime(2026, 5, 1, tzinfo=UTC), pass_mark=0.7)
    >>> badge["type"], badge["credentialSubject"]["identifier"][0]["identityHash"]
    (['VerifiableCredential', 'OpenBadgeCredential'], 'Ada Lovelace')
    """
    course, assignment = quote(facts["course"]), quote(facts["assignment"])
    achievement_id = f"{verify_url}achievement/{course}/{assignment}"
    needed = pass_mark * facts["max_score"]
    criteria = (
        f"Pass {facts['assignment_title']} of the course {facts['course_title']}: at least "
        f"{needed:g} of {facts['max_score']:g} points ({100 * pass_mark:g} %), the code "
        "autograded in a sandbox and the written answers graded by hand."
    )
    identities = [
        {
            "type": "IdentityObject",
            "hashed": False,
            "identityHash": facts["name"],
            "identityType": "name",
        }
    ]
    if email:
        identities.append(hashed_email(email))
    the_id = credential_id(verify_url, facts["id"])
    return {
        "@context": CONTEXTS,
        "id": the_id,
        "type": TYPES,
        "name": f"{facts['assignment_title']} — {facts['course_title']}",
        "issuer": issuer_profile(verify_url, facts["issuer"]),
        "validFrom": time_text(issued),
        "credentialSubject": {
            "id": f"urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, the_id + '#subject')}",
            "type": ["AchievementSubject"],
            "identifier": identities,
            "achievement": {
                "id": achievement_id,
                "type": ["Achievement"],
                "achievementType": "Assessment",
                "name": facts["assignment_title"],
                "description": (
                    f"{facts['assignment_title']}, the graded final of the course "
                    f"{facts['course_title']} (course version {facts['course_version']})."
                ),
                "criteria": {"narrative": criteria},
                "resultDescription": [
                    {
                        "id": f"{achievement_id}#score",
                        "type": ["ResultDescription"],
                        "name": "Score",
                        "resultType": "RawScore",
                        "valueMin": "0",
                        "valueMax": f"{facts['max_score']:g}",
                        "requiredValue": f"{needed:g}",
                    }
                ],
                "creator": issuer_profile(verify_url, facts["issuer"]),
            },
            "result": [
                {
                    "type": ["Result"],
                    "resultDescription": f"{achievement_id}#score",
                    "value": f"{facts['score']:g}",
                }
            ],
        },
        "credentialStatus": [
            _status_entry(verify_url, purpose, status_indexes[purpose]) for purpose in PURPOSES
        ],
    }


def _status_entry(verify_url: str, purpose: str, index: int) -> dict:
    """A ``BitstringStatusListEntry`` (W3C Bitstring Status List v1.0, section 2.1)."""
    url = status_list_url(verify_url, purpose)
    entry = {
        "id": f"{url}#{index}",
        "type": "BitstringStatusListEntry",
        "statusPurpose": purpose,
        "statusListIndex": str(index),
        "statusListCredential": url,
    }
    if purpose == "message":
        entry |= {"statusSize": 1, "statusMessage": SUPERSEDED_MESSAGES}
    return entry


def stated_facts(credential: dict) -> dict:
    """What a checked credential states, for people to read (the verifier's lines)."""
    subject = credential["credentialSubject"]
    achievement = subject["achievement"]
    names = [i["identityHash"] for i in subject["identifier"] if i["identityType"] == "name"]
    score = subject["result"][0]["value"]
    best = achievement["resultDescription"][0]
    return {
        "id": credential["id"].rpartition("?id=")[2],
        "name": names[0] if names else "",
        "achievement": achievement["name"],
        "course": achievement["description"],
        "issuer": credential["issuer"]["name"],
        "issuer id": credential["issuer"]["id"],
        "score": f"{score} of {best['valueMax']} (pass mark {best['requiredValue']})",
        "valid from": credential["validFrom"],
    }
