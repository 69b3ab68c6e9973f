"""The issuer's place: the verification folder ``gradacc-certify publish`` writes, whole.

Served at the settings' ``verify_url`` (the issuer's https address), the folder holds:

- the page (``index.html``, ``verify.js``, ``verify.css``, shipped in ``page/``) and its font,
  Noto Sans (``fonts/``, the files the PDFs print with);
- ``issuer.json``: the issuer's OB 3.0 ``Profile``, whose address is the issuer's id;
- ``jwks.json``: the issuer's public key as a JSON Web Key Set, by ``kid``;
- ``status/revocation.jwt`` and ``status/superseded.jwt``: the two Bitstring Status List
  credentials, signed and valid for a week (``status_lists``);
- ``published.js``: the same texts as one classic script, for the page opened from disk
  (a browser lets a ``file://`` page fetch nothing).

Nothing in it names a learner. Publishing again changes only the status lists (and their
dates); run it after each revocation or re-issue, and at least weekly (cron).
"""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path

from gradacc_grader.certificates import badge, status_lists, vcjwt
from gradacc_grader.certificates.registry import Registry
from gradacc_grader.certificates.signing import fingerprint, public_key_text

PAGE = Path(__file__).parent / "page"
FONTS = Path(__file__).parent / "fonts"
OFFLINE = "published.js"


def status_file(purpose: str) -> str:
    """A status list's path inside the folder, e.g. ``status/revocation.jwt``."""
    return badge.status_list_url("", purpose)


def publish(
    registry_path: Path,
    key,
    verify_url: str,
    issuer_name: str,
    out: Path,
    *,
    now: datetime,
    valid_days: float = status_lists.VALID_DAYS,
) -> dict[str, str]:
    """Write the whole verification folder into ``out``; the texts written, by path.

    Raises:
        ValueError: the registry belongs to another key.
    """
    public = key.public_key()
    kid = badge.key_id(verify_url, vcjwt.thumbprint(public))
    with Registry(registry_path, create=True) as registry:
        registry.claim_issuer(public_key_text(public))
        indexes = registry.status_indexes()
    profile = {"@context": badge.CONTEXTS, **badge.issuer_profile(verify_url, issuer_name)}
    texts = {
        badge.ISSUER_FILE: json.dumps(profile, ensure_ascii=False, indent=1) + "\n",
        badge.KEYS_FILE: json.dumps({"keys": [vcjwt.public_jwk(public, kid)]}, indent=1) + "\n",
    }
    for purpose in badge.PURPOSES:
        listed = status_lists.status_list_credential(
            verify_url, issuer_name, purpose, indexes[purpose], now, valid_days
        )
        texts[status_file(purpose)] = vcjwt.sign(listed, key, kid) + "\n"
    out = Path(out)
    (out / badge.STATUS_FOLDER).mkdir(parents=True, exist_ok=True)
    for page_file in sorted(PAGE.iterdir()):
        if page_file.is_file():
            shutil.copy(page_file, out / page_file.name)
    # the page's font: the files the PDFs print with, so that names draw the same
    shutil.copytree(FONTS, out / "fonts", dirs_exist_ok=True)
    for name, text in texts.items():
        _write_atomically(out / name, text)
    offline = {"issuer": badge.issuer_id(verify_url), "fingerprint": fingerprint(public), **texts}
    _write_atomically(
        out / OFFLINE,
        "// Written by gradacc-certify publish: the texts beside this page, for the page opened\n"
        "// from disk (file://), where a browser lets it fetch nothing. Do not edit.\n"
        f"globalThis.gradaccPublished = {json.dumps(offline, ensure_ascii=False)};\n",
    )
    return texts


def _write_atomically(path: Path, text: str) -> None:
    """A verifier fetching during publish sees the old file or the new one, never half."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, "utf-8")
    partial.replace(path)
