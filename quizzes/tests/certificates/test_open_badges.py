"""Each certificate is an Open Badges 3.0 credential, signed as a VC-JWT.

The credential ``gradacc-certify issue`` writes is checked twice: by the course's own verifier
(``vcjwt``, on joserfc), and by ``independent_verify`` below, written from the specifications
alone (RFC 7515 compact JWS, RFC 8037 EdDSA, OB 3.0 section 8.2) with ``base64`` and
``cryptography``: it shares no code with the issuer. Then every field an OB 3.0 validator
requires, the baked PNG (read back with Pillow, not with our reader), names, and late penalties.
"""

from __future__ import annotations

import base64
import json
import re
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.serialization import load_pem_public_key


def b64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def independent_verify(token: str, public_pem: bytes) -> tuple[dict, dict]:
    """RFC 7515 section 5.2 by hand: split, verify the signature over the ASCII of
    "header.payload", then parse. Raises InvalidSignature or ValueError."""
    header_part, payload_part, signature_part = token.split(".")
    header = json.loads(b64url(header_part))
    if header["alg"] != "EdDSA":
        raise ValueError("not EdDSA")
    key = load_pem_public_key(public_pem)
    key.verify(b64url(signature_part), f"{header_part}.{payload_part}".encode("ascii"))
    return header, json.loads(b64url(payload_part))


@pytest.fixture
def issued(tmp_path, certify, fill_gradebook):
    course = fill_gradebook(
        tmp_path / "course",
        "final",
        {"ada": (7.0, 3.0, "Adébáyọ̀ Ọ̀ṣun"), "bob": (5.0, 1.0, "Bob Kahn")},
    )
    assert certify("keygen", "--out", tmp_path / "keys")[0] == 0
    status, out, err = certify(
        "issue", "final", "--course", course, "--key", tmp_path / "keys/issuer.key",
        "--out", tmp_path / "out", "--email", "ada", "ada@example.org",
    )  # fmt: skip
    assert status == 0, out + err
    return tmp_path, course, out


def the_token(tmp_path: Path, student: str = "ada") -> str:
    (path,) = (tmp_path / "out" / student).glob("gradacc-credential-*.jwt")
    return path.read_text("ascii").strip()


def test_the_credential_verifies_independently_and_by_the_course(issued):
    tmp_path, _, out = issued
    token = the_token(tmp_path)
    pem = (tmp_path / "keys/issuer.pub").read_bytes()
    header, payload = independent_verify(token, pem)
    assert header["typ"] == "JWT" and header["kid"].startswith(
        "https://certificates.example.org/gradacc/verify/jwks.json#"
    )
    # the course's own verifier, given the key set publish writes, agrees
    from gradacc_grader.certificates import vcjwt
    from gradacc_grader.certificates.signing import load_public_key

    public = load_public_key(tmp_path / "keys/issuer.pub")
    keys = {"keys": [vcjwt.public_jwk(public, header["kid"])]}
    assert vcjwt.verify(token, keys)[1] == payload
    # a changed byte of the payload: both refuse
    parts = token.split(".")
    changed = json.loads(b64url(parts[1]))
    changed["credentialSubject"]["result"][0]["value"] = "10"
    parts[1] = base64.urlsafe_b64encode(json.dumps(changed).encode()).decode().rstrip("=")
    forged = ".".join(parts)
    with pytest.raises(InvalidSignature):
        independent_verify(forged, pem)
    with pytest.raises(vcjwt.NotAuthentic, match="signature does not match"):
        vcjwt.verify(forged, keys)
    # bob did not pass: no credential
    assert not (tmp_path / "out/bob").exists()
    assert "issuer's key: SHA256:" in out


def test_every_field_an_ob3_validator_requires(issued):
    tmp_path, _, _ = issued
    _, c = independent_verify(the_token(tmp_path), (tmp_path / "keys/issuer.pub").read_bytes())
    assert c["@context"][0] == "https://www.w3.org/ns/credentials/v2"
    ob = r"https://purl\.imsglobal\.org/spec/ob/v3p0/context-3\.0\.\d+\.json"
    assert re.fullmatch(ob, c["@context"][1])
    assert set(c["type"]) == {"VerifiableCredential", "OpenBadgeCredential"}
    assert c["id"].startswith("https://") and c["name"]
    issuer = c["issuer"]
    assert issuer["id"] == "https://certificates.example.org/gradacc/verify/issuer.json"
    assert "Profile" in issuer["type"] and issuer["name"] == "Ọ̀ṣun Open School"
    assert datetime.strptime(c["validFrom"], "%Y-%m-%dT%H:%M:%SZ")
    subject = c["credentialSubject"]
    assert "AchievementSubject" in subject["type"]
    achievement = subject["achievement"]
    assert "Achievement" in achievement["type"]
    for field in ("id", "name", "description"):
        assert isinstance(achievement[field], str) and achievement[field]
    assert "70 %" in achievement["criteria"]["narrative"]
    assert achievement["name"] == "the final exam of final"
    assert "Gradient accumulation in PyTorch" in c["name"]
    (score,) = achievement["resultDescription"]
    assert (score["valueMax"], score["requiredValue"]) == ("10", "7")
    assert subject["result"][0]["value"] == "10"
    identities = {i["identityType"]: i for i in subject["identifier"]}
    assert identities["name"]["identityHash"] == "Adébáyọ̀ Ọ̀ṣun"
    email = identities["emailAddress"]
    assert email["hashed"] is True and "ada@example.org" not in json.dumps(c)
    import hashlib

    expected = hashlib.sha256(("ada@example.org" + email["salt"]).encode()).hexdigest()
    assert email["identityHash"] == f"sha256${expected}"
    # the JWT claims OB 3.0, section 8.2.4.1, maps from the credential
    assert c["iss"] == issuer["id"] and c["jti"] == c["id"] and c["sub"] == subject["id"]
    valid_from = datetime.strptime(c["validFrom"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert c["nbf"] == int(valid_from.timestamp())
    purposes = {entry["statusPurpose"]: entry for entry in c["credentialStatus"]}
    assert set(purposes) == {"revocation", "message"}
    for entry in purposes.values():
        assert entry["type"] == "BitstringStatusListEntry"
        assert 0 <= int(entry["statusListIndex"]) < 131072
        assert entry["statusListCredential"].startswith("https://certificates.example.org/")
    assert json.dumps(c, ensure_ascii=False).count("Adébáyọ̀") == 1  # nowhere but the name


def test_the_baked_png_round_trips(issued):
    from PIL import Image

    tmp_path, _, _ = issued
    (png,) = (tmp_path / "out/ada").glob("gradacc-badge-*.png")
    with Image.open(png) as image:
        image.load()
        carried = image.text["openbadgecredential"]  # Pillow reads the iTXt chunk
    assert carried == the_token(tmp_path)
    from gradacc_grader.certificates.baking import unbake

    assert unbake(png.read_bytes()) == carried


def test_the_pdf_prints_the_key_fingerprint(issued):
    import pypdfium2
    from gradacc_grader.certificates.signing import fingerprint, load_public_key

    tmp_path, _, _ = issued
    (pdf,) = (tmp_path / "out/ada").glob("*.pdf")
    document = pypdfium2.PdfDocument(pdf)
    text = document[0].get_textpage().get_text_range()
    document.close()
    printed = fingerprint(load_public_key(tmp_path / "keys/issuer.pub"))
    assert re.fullmatch(r"SHA256:([0-9A-F]{4}-){4}[0-9A-F]{4}", printed)
    assert printed in text.replace("\r", "").replace("\n", " ")


def test_the_late_penalty_lowers_the_total(tmp_path, certify, fill_gradebook):
    course = fill_gradebook(
        tmp_path / "course", "final", {"ada": (7.0, 3.0, "Ada Lovelace"), "cyd": (7.0, 1.0, "Cyd")}
    )
    with sqlite3.connect(course / "gradebook.db") as db:  # nbgrader's own column
        db.execute(
            "UPDATE submitted_notebook SET late_submission_penalty = 3.5 WHERE assignment_id IN "
            "(SELECT a.id FROM submitted_assignment a JOIN student s ON a.student_id = s.id "
            "WHERE s.id = 'ada')"
        )
    certify("keygen", "--out", tmp_path / "keys")
    status, out, _ = certify("issue", "final", "--course", course,
        "--key", tmp_path / "keys/issuer.key", "--out", tmp_path / "out")  # fmt: skip
    assert status == 0
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith(("ada", "cyd"))}
    assert "6.5/10" in lines["ada"] and "below the pass mark" in lines["ada"]
    assert "8/10" in lines["cyd"] and lines["cyd"].endswith("issued")


HOSTILE = {
    "cyr": ("\u0410da Lovelace", "mixes CYRILLIC and LATIN letters"),
    "cgj": ("Ada\u034fLovelace", "U+034F COMBINING GRAPHEME JOINER, an invisible character"),
    "fil": ("\u3164 Ada", "U+3164 HANGUL FILLER, an invisible character"),
    "long": ("Ada " + "Lovelace" * 16, "too long for one line"),
}


def test_doubtful_names_are_refused_before_signing_unless_accepted(
    tmp_path, certify, fill_gradebook
):
    students = {s: (7.0, 3.0, name) for s, (name, _) in HOSTILE.items()}
    students["ok"] = (7.0, 3.0, "Nguyễn Văn An")
    students["jp"] = (7.0, 3.0, "山田 たろう")
    students["low"] = (1.0, 0.0, "\u0410da Low")  # below the pass mark: its name is not asked
    course = fill_gradebook(tmp_path / "course", "final", students)
    certify("keygen", "--out", tmp_path / "keys")
    command = ["issue", "final", "--course", course, "--key", tmp_path / "keys/issuer.key",
               "--out", tmp_path / "out"]  # fmt: skip
    status, out, _ = certify(*command)
    assert status == 0
    lines = {line.split()[0]: line for line in out.splitlines() if line[:1].isalpha()}
    for student, (_, reason) in HOSTILE.items():
        assert "refused: the name" in lines[student] and reason in lines[student], lines[student]
        assert f"--accept-name {student}" in lines[student]
        assert not (tmp_path / "out" / student).exists()
    assert lines["ok"].endswith("issued")
    assert lines["low"].endswith("below the pass mark")
    assert "fonts have no letters" in lines["jp"]  # not a mixed-script word (UTS #39: Jpan)
    with sqlite3.connect(course / "certificates.sqlite") as db:
        names = {row[0] for row in db.execute("SELECT name FROM credentials")}
    assert names == {"Nguyễn Văn An"}
    status, out, _ = certify(*command, "--accept-name", "cyr")
    (line,) = [line for line in out.splitlines() if line.startswith("cyr")]
    assert status == 0 and line.endswith("issued")


def test_markup_and_control_names_are_refused_even_when_accepted(tmp_path, certify, fill_gradebook):
    course = fill_gradebook(
        tmp_path / "course",
        "final",
        {"eve": (7.0, 3.0, '<img src=x onerror="alert(1)">'), "bel": (7.0, 3.0, "Ada\x07 Bell")},
    )
    certify("keygen", "--out", tmp_path / "keys")
    status, out, _ = certify("issue", "final", "--course", course,
        "--key", tmp_path / "keys/issuer.key", "--out", tmp_path / "out",
        "--accept-name", "eve", "--accept-name", "bel")  # fmt: skip
    assert status == 0
    lines = {line.split()[0]: line for line in out.splitlines() if line[:3] in ("eve", "bel")}
    assert "U+003C LESS-THAN SIGN" in lines["eve"] and "refused" in lines["eve"]
    assert "U+0007" in lines["bel"] and "a control character" in lines["bel"]
    assert not (tmp_path / "out").exists()


def test_a_changed_name_gets_a_new_credential_and_supersedes_the_old(issued, certify):
    tmp_path, course, _ = issued
    old = the_token(tmp_path)
    with sqlite3.connect(course / "gradebook.db") as db:
        db.execute(
            "UPDATE student SET first_name = 'Adébáyọ̀', last_name = 'Ọ̀ṣun-Bello' WHERE id = 'ada'"
        )
    status, out, _ = certify("issue", "final", "--course", course,
        "--key", tmp_path / "keys/issuer.key", "--out", tmp_path / "out")  # fmt: skip
    assert status == 0
    (line,) = [line for line in out.splitlines() if line.startswith("ada ")]
    old_id = json.loads(b64url(old.split(".")[1]))["id"].rpartition("=")[2]
    assert f"{old_id} is superseded" in line and "re-issued as" in line
    with sqlite3.connect(course / "certificates.sqlite") as db:
        rows = dict(db.execute("SELECT id, superseded_by FROM credentials").fetchall())
    (new_id,) = [i for i in rows if i != old_id]
    assert rows == {old_id: new_id, new_id: None}
    (new,) = (tmp_path / "out/ada").glob(f"gradacc-credential-{new_id}.jwt")
    pem = (tmp_path / "keys/issuer.pub").read_bytes()
    _, payload = independent_verify(new.read_text().strip(), pem)
    assert payload["credentialSubject"]["identifier"][0]["identityHash"] == "Adébáyọ̀ Ọ̀ṣun-Bello"


def test_an_older_format_certificate_gets_a_credential_under_its_id(
    tmp_path, certify, fill_gradebook, older_format
):
    # a course that issued before Open Badges: its registry holds the older record only
    course = fill_gradebook(tmp_path / "course", "final", {"ada": (7.0, 3.0, "Adébáyọ̀ Ọ̀ṣun")})
    assert certify("keygen", "--out", tmp_path / "keys")[0] == 0
    key = tmp_path / "keys/issuer.key"
    older = older_format(course, key, tmp_path / "old", {"ada": ("Adébáyọ̀ Ọ̀ṣun", 10.0)})
    older_id = json.loads(older["ada"].read_text("utf-8"))["certificate"]["id"]
    issue = ["issue", "final", "--course", course, "--key", key, "--out", tmp_path / "out"]
    assert certify(*issue)[0] == 0
    (jwt,) = (tmp_path / "out/ada").glob("gradacc-credential-*.jwt")
    assert jwt.name == f"gradacc-credential-{older_id}.jwt"  # the same ID
    assert not list((tmp_path / "out/ada").glob("*.json"))  # and no new older-format file
    _, payload = independent_verify(
        jwt.read_text().strip(), (tmp_path / "keys/issuer.pub").read_bytes()
    )
    assert payload["id"].endswith(f"?id={older_id}")
    # a name changed since: a new ID; the older file's status stays unknown, never valid
    with sqlite3.connect(course / "certificates.sqlite") as db:
        db.execute("DELETE FROM credentials")
    with sqlite3.connect(course / "gradebook.db") as db:
        db.execute("UPDATE student SET last_name = 'Ọ̀ṣun-Bello' WHERE id = 'ada'")
    status, out, _ = certify(*issue)
    (line,) = [line for line in out.splitlines() if line.startswith("ada ")]
    assert status == 0 and "the name changed from 'Adébáyọ̀ Ọ̀ṣun'" in line
    assert f"the older-format certificate {older_id} stands" in line
