"""The "baked" badge: a PNG image that carries its credential (OB 3.0, section 5.3, Baking).

OB 3.0 bakes a credential into a PNG as an ``iTXt`` chunk (PNG specification, 11.3.3.4) with
the keyword ``openbadgecredential``, uncompressed, its text the credential: here the VC-JWT.
A learner uploads the one image to a wallet or a profile; anyone can take the credential out
again and check it. The image itself is the credential's QR code (``segno``).
"""

from __future__ import annotations

import io
import struct
import zlib

import segno

KEYWORD = b"openbadgecredential"
SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def chunks(png: bytes):
    """Each chunk of a PNG as (type, data); ValueError if it is not a well-formed PNG."""
    if not png.startswith(SIGNATURE):
        raise ValueError("it is not a PNG image")
    at = len(SIGNATURE)
    while at < len(png):
        if at + 8 > len(png):
            raise ValueError("the PNG is cut short")
        (length,) = struct.unpack(">I", png[at : at + 4])
        kind, data = png[at + 4 : at + 8], png[at + 8 : at + 8 + length]
        if len(data) != length or at + 12 + length > len(png):
            raise ValueError("the PNG is cut short")
        (crc,) = struct.unpack(">I", png[at + 8 + length : at + 12 + length])
        if crc != zlib.crc32(kind + data):
            raise ValueError(f"the PNG's {kind.decode('latin-1')} chunk is damaged (CRC)")
        yield kind, data
        at += 12 + length


def bake(png: bytes, credential: str) -> bytes:
    """The PNG with ``credential`` in an ``openbadgecredential`` iTXt chunk before IEND.

    >>> baked = bake(badge_image("https://a.example/verify/?id=X"), "a.b.c")
    >>> unbake(baked)
    'a.b.c'
    """
    if any(kind == b"iTXt" and data.startswith(KEYWORD + b"\0") for kind, data in chunks(png)):
        raise ValueError("the image already carries a credential")
    # keyword, NUL, compression flag 0, method 0, empty language tag, NUL, empty
    # translated keyword, NUL, then the UTF-8 text
    data = KEYWORD + b"\0\0\0" + b"\0" + b"\0" + credential.encode("utf-8")
    end = png.rindex(b"IEND") - 4
    return png[:end] + _chunk(b"iTXt", data) + png[end:]


def unbake(png: bytes) -> str:
    """The credential a baked PNG carries (ValueError: none, or not a PNG)."""
    for kind, data in chunks(png):
        if kind == b"iTXt" and data.startswith(KEYWORD + b"\0"):
            rest = data[len(KEYWORD) + 1 :]
            if rest[:2] != b"\0\0":
                raise ValueError("its credential chunk is compressed, which OB 3.0 does not use")
            _language, _, rest = rest[2:].partition(b"\0")
            _translated, _, text = rest.partition(b"\0")
            return text.decode("utf-8")
    raise ValueError("the image carries no Open Badges credential (no openbadgecredential chunk)")


def badge_image(address: str) -> bytes:
    """The badge's picture: the QR code of the credential's verification address, as PNG."""
    out = io.BytesIO()
    segno.make(address, error="m").save(out, kind="png", scale=8, border=2)
    return out.getvalue()
