"""The issuer's Ed25519 keys, and records signed with them (``cryptography`` does the maths).

A signed record is a JSON text and the signature of exactly those bytes. Verifiers check the
signature over the text as it was signed, then read it: nothing is re-serialized, so Python
and the browser's WebCrypto agree byte for byte on what was signed.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from pathlib import Path

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from gradacc_grader.certificates.untrusted import parse_json_object, read_small_file

PRIVATE_KEY_FILE = "issuer.key"
PUBLIC_KEY_FILE = "issuer.pub"
MAX_KEY_BYTES = 10_000


class BadSignature(ValueError):
    """A record whose signature does not match the issuer's public key."""


def make_key_pair(folder: Path) -> tuple[Path, Path]:
    """Write a new issuer key pair into ``folder``: the private key readable by its owner only.

    Args:
        folder: where to write ``issuer.key`` (PEM, mode 0600) and ``issuer.pub`` (PEM).

    Returns:
        The paths of the private and the public key.

    Raises:
        ValueError: a key file is already there (keys are never overwritten).

    >>> import tempfile
    >>> private, public = make_key_pair(Path(tempfile.mkdtemp()) / "keys")
    >>> oct(private.stat().st_mode & 0o777), public.name
    ('0o600', 'issuer.pub')
    """
    folder = Path(folder)
    private, public = folder / PRIVATE_KEY_FILE, folder / PUBLIC_KEY_FILE
    for path in (private, public):
        if path.exists():
            raise ValueError(
                f"{path} already exists: keys are never overwritten; use another --out"
            )
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    # O_EXCL: never replace a file that appeared meanwhile; 0o600 from the first byte on.
    with os.fdopen(os.open(private, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as file:
        file.write(pem)
    public.write_bytes(public_pem(key.public_key()))
    return private, public


def public_pem(public_key: Ed25519PublicKey) -> bytes:
    """The public key as PEM text (SubjectPublicKeyInfo), as ``issuer.pub`` holds it.

    >>> key = Ed25519PrivateKey.from_private_bytes(bytes(32)).public_key()
    >>> public_pem(key).splitlines()[0]
    b'-----BEGIN PUBLIC KEY-----'
    """
    return public_key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def public_key_text(public_key: Ed25519PublicKey) -> str:
    """The 32 raw bytes of a public key in base64, as the published registry states it.

    >>> key = Ed25519PrivateKey.from_private_bytes(bytes(32)).public_key()
    >>> public_key_text(key)
    'O2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2ik='
    """
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return base64.b64encode(raw).decode("ascii")


def load_private_key(path: Path) -> Ed25519PrivateKey:
    """The issuer's private key from its PEM file (``issuer.key``).

    Raises:
        ValueError: the file holds no Ed25519 private key in PEM (it says which it is not).

    >>> import tempfile
    >>> private, public = make_key_pair(Path(tempfile.mkdtemp()))
    >>> type(load_private_key(private)).__name__.startswith("Ed25519")
    True
    >>> load_private_key(public)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: .../issuer.pub is not a private key in PEM format (...)
    """
    key = _load_pem(Path(path), serialization.load_pem_private_key, "private")
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError(f"{path} is not an Ed25519 private key: make one with keygen")
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    """The issuer's public key from its PEM file (``issuer.pub``).

    Raises:
        ValueError: the file holds no Ed25519 public key in PEM.

    >>> import tempfile
    >>> private, public = make_key_pair(Path(tempfile.mkdtemp()))
    >>> public_key_text(load_public_key(public)) == public_key_text(
    ...     load_private_key(private).public_key())
    True
    """
    key = _load_pem(Path(path), serialization.load_pem_public_key, "public")
    if not isinstance(key, Ed25519PublicKey):
        raise ValueError(f"{path} is not an Ed25519 public key: use the issuer.pub of keygen")
    return key


def _load_pem(path: Path, loader, kind: str):
    data = read_small_file(path, MAX_KEY_BYTES, f"a {kind} key")
    try:
        return loader(data, password=None) if kind == "private" else loader(data)
    except (ValueError, TypeError, UnsupportedAlgorithm) as error:
        reason = str(error).split("\n")[0] or type(error).__name__
        raise ValueError(f"{path} is not a {kind} key in PEM format ({reason})") from None


def sign_record(record: dict, key: Ed25519PrivateKey) -> dict:
    """Sign a record: its JSON text and the base64 signature of that text's UTF-8 bytes.

    Args:
        record: a flat dict of strings and numbers.
        key: the issuer's private key.

    Returns:
        ``{"signed": text, "signature": base64}``.

    >>> key = Ed25519PrivateKey.from_private_bytes(bytes(32))
    >>> signed = sign_record({"id": "X"}, key)
    >>> signed["signed"], read_signed(signed, key.public_key())
    ('{"id":"X"}', {'id': 'X'})
    """
    text = json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    signature = key.sign(text.encode("utf-8"))
    return {"signed": text, "signature": base64.b64encode(signature).decode("ascii")}


def read_signed(entry: dict, public_key: Ed25519PublicKey) -> dict:
    """The record inside a signed entry, once its signature is checked.

    Raises:
        BadSignature: the signature is not the issuer's signature of this text.
        ValueError: the entry is not a signed record.

    >>> key = Ed25519PrivateKey.from_private_bytes(bytes(32))
    >>> entry = sign_record({"name": "Ada"}, key)
    >>> read_signed(entry, key.public_key())
    {'name': 'Ada'}
    >>> read_signed({**entry, "signed": '{"name":"Eve"}'}, key.public_key())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    gradacc_grader.certificates.signing.BadSignature: the signature does not match: ...
    """
    text, signature = entry.get("signed"), entry.get("signature")
    if not isinstance(text, str) or not isinstance(signature, str):
        raise ValueError("it has no signed text and signature")
    try:
        raw = base64.b64decode(signature, validate=True)
        public_key.verify(raw, text.encode("utf-8"))
    except (binascii.Error, InvalidSignature, UnicodeEncodeError):
        raise BadSignature(
            "the signature does not match: the record was changed after signing, "
            "or it was not signed by this issuer's key"
        ) from None
    return parse_json_object(text, "the signed record")


def fingerprint(public_key: Ed25519PublicKey) -> str:
    """The key's short fingerprint to compare out of band: SHA-256 of its 32 raw bytes, the
    first 80 bits in hex, in groups of four.

    >>> key = Ed25519PrivateKey.from_private_bytes(bytes(32)).public_key()
    >>> fingerprint(key)
    'SHA256:139E-3940-E64B-5491-7220'
    """
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    digits = hashlib.sha256(raw).hexdigest()[:20].upper()
    return "SHA256:" + "-".join(digits[i : i + 4] for i in range(0, len(digits), 4))
