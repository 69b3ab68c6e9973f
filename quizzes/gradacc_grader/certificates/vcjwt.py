"""Credentials signed as VC-JWTs (OB 3.0, section 8.2: the JSON Web Token proof format).

A VC-JWT is a JWS in compact form (RFC 7515): its payload is the credential itself, with the
JWT claims OB 3.0 asks for beside it (``iss`` the issuer's id, ``jti`` the credential's id,
``sub`` the learner's id, ``nbf`` its ``validFrom``, ``exp`` its ``validUntil`` if any); its
header names the algorithm (EdDSA, Ed25519 keys) and the key (``kid``, an entry of the
issuer's published key set). ``joserfc`` does the JOSE; this module checks what OB 3.0 asks a
verifier to check of the claims.
"""

from __future__ import annotations

import base64
import contextlib
import json
import warnings
from datetime import UTC, datetime

from joserfc import jws
from joserfc.errors import JoseError, SecurityWarning
from joserfc.jwk import OKPKey

ALGORITHM = "EdDSA"  # OB 3.0 and the VC-JWT wallets of 2026 name Ed25519 this way
MAX_TOKEN = 200_000


class NotAuthentic(ValueError):
    """A token whose signature or claims do not hold up; the message says why."""


@contextlib.contextmanager
def _eddsa_allowed():
    """joserfc warns that RFC 9864 deprecates "EdDSA" for "Ed25519"; OB 3.0 verifiers know
    "EdDSA" only, and the signature is the same Ed25519 signature."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SecurityWarning)
        yield


def public_jwk(public_key, kid: str) -> dict:
    """The issuer's public key as a JWK (RFC 8037 OKP), with its ``kid``.

    >>> from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    >>> jwk = public_jwk(Ed25519PrivateKey.from_private_bytes(bytes(32)).public_key(), "k")
    >>> jwk["kty"], jwk["crv"], jwk["x"]
    ('OKP', 'Ed25519', 'O2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2ik')
    """
    key = OKPKey.import_key(public_key)
    return {**key.as_dict(private=False), "kid": kid, "alg": ALGORITHM, "use": "sig"}


def thumbprint(public_key) -> str:
    """The key's JWK thumbprint (RFC 7638, SHA-256), as its ``kid`` ends."""
    return OKPKey.import_key(public_key).thumbprint()


def _epoch(text: str) -> int:
    return int(datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp())


def claims_of(credential: dict) -> dict:
    """The JWT claims OB 3.0 maps from a credential's own fields."""
    claims = {
        "iss": credential["issuer"]["id"]
        if isinstance(credential["issuer"], dict)
        else credential["issuer"],
        "jti": credential["id"],
        "nbf": _epoch(credential["validFrom"]),
    }
    subject = credential.get("credentialSubject", {})
    if "id" in subject:
        claims["sub"] = subject["id"]
    if "validUntil" in credential:
        claims["exp"] = _epoch(credential["validUntil"])
    return claims


def sign(credential: dict, private_key, kid: str) -> str:
    """The credential as a VC-JWT signed with the issuer's Ed25519 key.

    >>> from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    >>> key = Ed25519PrivateKey.from_private_bytes(bytes(32))
    >>> credential = {"id": "urn:x", "issuer": {"id": "https://a.example/"},
    ...               "validFrom": "2026-05-01T00:00:00Z", "credentialSubject": {}}
    >>> token = sign(credential, key, "https://a.example/jwks.json#k")
    >>> keys = {"keys": [public_jwk(key.public_key(), "https://a.example/jwks.json#k")]}
    >>> verify(token, keys)[1]["jti"]
    'urn:x'
    """
    payload = {**credential, **claims_of(credential)}
    header = {"alg": ALGORITHM, "typ": "JWT", "kid": kid}
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    with _eddsa_allowed():
        return jws.serialize_compact(header, data, OKPKey.import_key(private_key), [ALGORITHM])


def verify(token: str, key_set: dict) -> tuple[dict, dict]:
    """The header and payload of a VC-JWT signed by a key of ``key_set`` (a JWKS), checked.

    Checks: three base64url parts; the header's ``alg`` is EdDSA and its ``kid`` names a key
    of the set; the signature; and the claims against the credential's own fields (``iss``,
    ``jti``, ``sub``, ``nbf``, ``exp``). Dates are the caller's to judge.

    Raises:
        NotAuthentic: why the token does not hold up, in one line.
    """
    if not isinstance(token, str) or len(token) > MAX_TOKEN or token.count(".") != 2:
        raise NotAuthentic("it is not a VC-JWT (three base64url parts joined by dots)")
    try:
        header = json.loads(_b64url(token.split(".")[0]))
    except (ValueError, UnicodeDecodeError):
        raise NotAuthentic("its JOSE header is not base64url JSON") from None
    if not isinstance(header, dict) or header.get("alg") != ALGORITHM:
        raise NotAuthentic(f"its algorithm is not {ALGORITHM} (Ed25519)")
    keys = [k for k in key_set.get("keys", []) if isinstance(k, dict) and k.get("kid")]
    chosen = [k for k in keys if k["kid"] == header.get("kid")]
    if not chosen:
        raise NotAuthentic(
            f"it names the key {header.get('kid')!r}, which the issuer's published key set "
            "does not hold: it was signed by another key"
        )
    try:
        with _eddsa_allowed():
            public = {k: v for k, v in chosen[0].items() if k in ("kty", "crv", "x")}
            key = OKPKey.import_key(public)
            payload = jws.deserialize_compact(token, key, [ALGORITHM]).payload
    except JoseError:
        raise NotAuthentic(
            "the signature does not match: the credential was changed after signing, or it "
            "was not signed by the issuer's key"
        ) from None
    except ValueError as error:
        raise NotAuthentic(f"it is malformed ({error})") from None
    try:
        claims = json.loads(payload)
        expected = claims_of(claims)
    except (ValueError, KeyError, TypeError, AttributeError):
        raise NotAuthentic("its payload is not a credential (issuer, id, validFrom)") from None
    for name, value in expected.items():
        if claims.get(name) != value:
            raise NotAuthentic(f"its JWT claim {name} does not match the credential it carries")
    return header, claims


def _b64url(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
