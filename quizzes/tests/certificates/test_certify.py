"""gradacc-certify end to end on gradebooks filled with nbgrader's API: issue, verify, revoke.

``issue`` writes the Open Badges credential alone (test_open_badges and test_status_lists check
it in depth); certificates of the older format, written here by ``older_format`` with the older
signing code, still verify by their signature, their status said to be unknown.
"""

from __future__ import annotations

import base64
import json
import sqlite3
import unicodedata

import pypdfium2
import pytest
import zxingcpp
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key
from gradacc_grader.certificates.registry import Registry
from gradacc_grader.certificates.settings import read_settings

CLASS = {
    "ada": (7.0, 3.0, "Ada Lovelace"),  # 10 of 10
    "bob": (7.0, 0.0, "Bob Kahn"),  # 7 of 10: exactly the default pass mark, passes
    "cyd": (6.5, 0.0, "Cyd Charisse"),  # 6.5 of 10: below it
    "dee": (5.0, 3.0, "Adébáyọ̀ Ọlọ́run"),  # 8 of 10, a name beyond ASCII
}


@pytest.fixture
def issued(tmp_path, certify, fill_gradebook):
    """A graded class, a key pair, and the certificates issued to it."""
    course = fill_gradebook(tmp_path / "course", "final", CLASS)
    assert certify("keygen", "--out", tmp_path / "keys")[0] == 0
    status, out, err = certify(
        "issue",
        "final",
        "--course",
        course,
        "--key",
        tmp_path / "keys/issuer.key",
        "--out",
        tmp_path / "out",
    )
    assert status == 0, err
    return tmp_path, course, out


def credential_payload(folder):
    """The payload of the one credential (.jwt) in ``folder``, decoded by hand (RFC 7515's
    base64url), not checked: what it states, read without the package's own reader."""
    (path,) = folder.glob("gradacc-credential-*.jwt")
    part = path.read_text("ascii").strip().split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def stated(payload):
    """A credential payload's ID, name and score, read by hand (OB 3.0's fields)."""
    subject = payload["credentialSubject"]
    (name,) = [i["identityHash"] for i in subject["identifier"] if i["identityType"] == "name"]
    return {
        "id": payload["id"].rpartition("?id=")[2],
        "name": name,
        "score": float(subject["result"][0]["value"]),
    }


def issue_again(certify, tmp_path, course):
    key, out = tmp_path / "keys/issuer.key", tmp_path / "out"
    return certify("issue", "final", "--course", course, "--key", key, "--out", out)


def id_of(tmp_path, student):
    return stated(credential_payload(tmp_path / "out" / student))["id"]


def count(course, table):
    with sqlite3.connect(course / "certificates.sqlite") as registry:
        return registry.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_the_class_gets_credentials_from_the_pass_mark_up(issued):
    tmp_path, _, _ = issued
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["ada", "bob", "dee"]
    facts = stated(credential_payload(tmp_path / "out/dee"))
    assert (facts["name"], facts["score"]) == ("Adébáyọ̀ Ọlọ́run", 8.0)


def test_issue_writes_the_credential_alone_and_no_older_format_record(issued):
    tmp_path, course, _ = issued
    for student in ("ada", "bob", "dee"):
        the_id = id_of(tmp_path, student)
        assert sorted(p.name for p in (tmp_path / "out" / student).iterdir()) == [
            f"gradacc-badge-{the_id}.png",
            f"gradacc-certificate-{the_id}.pdf",
            f"gradacc-credential-{the_id}.jwt",
        ]
    assert count(course, "credentials") == 3
    assert count(course, "certificates") == 0  # the older format's table: nothing new in it


def test_issuing_twice_gives_no_duplicates(issued, certify):
    tmp_path, course, first = issued

    def files():
        return {p: p.read_bytes() for p in sorted((tmp_path / "out").glob("*/*"))}

    before = files()
    assert len(before) == 9  # the credential (.jwt), the baked badge (.png) and the PDF, each
    status, second, _ = certify(
        "issue",
        "final",
        "--course",
        course,
        "--key",
        tmp_path / "keys/issuer.key",
        "--out",
        tmp_path / "out",
    )
    assert status == 0 and second.count("already issued") == 3
    assert files() == before
    assert count(course, "credentials") == 3


def test_export_and_audit_are_gone_and_publish_nothing(issued, certify):
    tmp_path, course, _ = issued
    sqlite = course / "certificates.sqlite"
    for command in (
        ["export", "--registry", sqlite, "--key", tmp_path / "keys/issuer.key", "--out",
         tmp_path / "registry.json"],
        ["audit", "--public-key", tmp_path / "keys/issuer.pub", "--registry", sqlite],
    ):  # fmt: skip
        status, out, err = certify(*command)
        assert status == 1 and out == "" and err.count("\n") == 1
        assert f"{command[0]} is gone" in err and "gradacc-certify publish" in err
    assert not (tmp_path / "registry.json").exists()


def test_below_the_pass_mark_nobody_gets_one(tmp_path, certify, fill_gradebook):
    course = fill_gradebook(tmp_path / "course", "final", {"cyd": (6.0, 0.5, "Cyd C")})
    certify("keygen", "--out", tmp_path / "keys")
    status, out, _ = certify(
        "issue",
        "final",
        "--course",
        course,
        "--key",
        tmp_path / "keys/issuer.key",
        "--out",
        tmp_path / "out",
        "--pass-mark",
        "0.7",
    )
    assert status == 0 and "below the pass mark" in out
    assert not (tmp_path / "out").exists()
    assert count(course, "credentials") == 0


def test_a_higher_pass_mark_leaves_out_who_misses_it(issued, certify):
    tmp_path, course, _ = issued
    status, out, _ = certify(
        "issue",
        "final",
        "--course",
        course,
        "--key",
        tmp_path / "keys/issuer.key",
        "--out",
        tmp_path / "out2",
        "--pass-mark",
        "0.85",
        "--registry",
        tmp_path / "r2.sqlite",
    )
    assert status == 0
    assert sorted(p.name for p in (tmp_path / "out2").iterdir()) == ["ada"]


def test_pending_hand_grading_issues_nothing_and_says_who(tmp_path, certify, fill_gradebook):
    students = {
        "ada": (7.0, 3.0, "Ada L"),
        "bob": (7.0, None, "Bob K"),
        "eve": (7.0, None, "Eve M"),
    }
    course = fill_gradebook(tmp_path / "course", "final", students)
    certify("keygen", "--out", tmp_path / "keys")
    status, out, err = certify(
        "issue",
        "final",
        "--course",
        course,
        "--key",
        tmp_path / "keys/issuer.key",
        "--out",
        tmp_path / "out",
    )
    assert status == 1
    assert "pending for bob, eve" in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()
    assert not (course / "certificates.sqlite").exists()


def test_a_self_learner_is_issued_alone(issued, certify):
    tmp_path, course, _ = issued
    status, out, _ = certify(
        "issue",
        "final",
        "--course",
        course,
        "--key",
        tmp_path / "keys/issuer.key",
        "--out",
        tmp_path / "solo",
        "--student",
        "dee",
        "--registry",
        tmp_path / "solo.sqlite",
    )
    assert status == 0
    assert [p.name for p in (tmp_path / "solo").iterdir()] == ["dee"]


def test_keygen_keeps_the_private_key_private_and_never_overwrites(tmp_path, certify):
    status, _, _ = certify("keygen", "--out", tmp_path / "keys")
    assert status == 0
    assert (tmp_path / "keys/issuer.key").stat().st_mode & 0o777 == 0o600
    before = (tmp_path / "keys/issuer.key").read_bytes()
    status, _, err = certify("keygen", "--out", tmp_path / "keys")
    assert status == 1 and "already exists" in err
    assert (tmp_path / "keys/issuer.key").read_bytes() == before


def test_a_registry_refuses_another_issuer_key(issued, certify, tmp_path_factory):
    tmp_path, course, _ = issued
    other = tmp_path_factory.mktemp("other")
    certify("keygen", "--out", other)
    status, _, err = certify(
        "issue",
        "final",
        "--course",
        course,
        "--key",
        other / "issuer.key",
        "--out",
        other / "out",
    )
    assert status == 1 and "another issuer key" in err
    certificate_id = id_of(tmp_path, "ada")
    status, _, err = certify(
        "revoke",
        certificate_id,
        "--registry",
        course / "certificates.sqlite",
        "--key",
        other / "issuer.key",
        "--reason",
        "x",
    )
    assert status == 1 and "not the key" in err


def test_the_printable_page_states_the_facts_and_its_qr_code_holds_the_address(issued):
    # read back the way a person does: the page drawn as pixels, its QR code scanned
    tmp_path, course, _ = issued
    payload = credential_payload(tmp_path / "out/dee")
    facts = stated(payload)
    (path,) = (tmp_path / "out/dee").glob("gradacc-certificate-*.pdf")
    page = pypdfium2.PdfDocument(path)[0]
    lines = unicodedata.normalize("NFC", page.get_textpage().get_text_range()).splitlines()
    assert facts["name"] in lines
    settings = read_settings(course)
    assert f"passed {settings.title_of('final')}" in lines
    assert f"in the course {settings.course_title}" in lines
    assert "with 8 of 10 points (80 %)." in lines
    issued = f"Issued by {settings.issuer} on {payload['validFrom'][:10]}; course version "
    assert any(line.startswith(issued) for line in lines)
    assert facts["id"] in lines
    image = page.render(scale=2).to_pil()
    (code,) = zxingcpp.read_barcodes(image)
    assert code.text == f"{settings.verify_url}?id={facts['id']}"


def test_the_registry_never_gives_one_id_twice(tmp_path):
    entry = {"signed": "{}", "signature": ""}
    with Registry(tmp_path / "r.sqlite", create=True) as registry:
        registry.add("7K3M-Q9XT-2HPW", "gradacc", "final", "ada", entry)
        with pytest.raises(sqlite3.IntegrityError):
            registry.add("7K3M-Q9XT-2HPW", "gradacc", "final", "bob", entry)
        with pytest.raises(sqlite3.IntegrityError):  # and one student one certificate
            registry.add("0000-0000-0000", "gradacc", "final", "ada", entry)


def test_a_name_the_fonts_cannot_draw_is_reported(tmp_path, certify, fill_gradebook):
    # Noto Sans has no Chinese: nothing is signed until the instructor gives a font for the
    # PDF, or accepts the name as it is (--accept-name), having read why
    course = fill_gradebook(tmp_path / "course", "final", {"wang": (7.0, 3.0, "王 小明")})
    certify("keygen", "--out", tmp_path / "keys")
    command = ["issue", "final", "--course", course, "--key", tmp_path / "keys/issuer.key",
               "--out", tmp_path / "out"]  # fmt: skip
    status, out, _ = certify(*command)
    assert status == 0
    assert "refused: the name '王 小明': the certificate's fonts have no letters" in out
    assert "--accept-name wang" in out and not (tmp_path / "out").exists()
    status, out, _ = certify(*command, "--accept-name", "wang")
    assert status == 0 and out.splitlines()[0].endswith("issued"), out


@pytest.fixture
def older(tmp_path, certify, fill_gradebook, older_format):
    """A course that issued before Open Badges: an older-format certificate per student."""
    course = fill_gradebook(tmp_path / "course", "final", CLASS)
    assert certify("keygen", "--out", tmp_path / "keys")[0] == 0
    students = {
        "ada": ("Ada Lovelace", 10.0),
        "bob": ("Bob Kahn", 7.0),
        "dee": (CLASS["dee"][2], 8.0),
    }
    files = older_format(course, tmp_path / "keys/issuer.key", tmp_path / "out", students)
    return tmp_path, course, files


def verify_older(certify, tmp_path, path, *extra):
    return certify("verify", path, "--public-key", tmp_path / "keys/issuer.pub", *extra)


def test_an_older_certificate_verifies_marked_and_its_status_unknown(older, certify):
    tmp_path, _, files = older
    status, out, _ = verify_older(certify, tmp_path, files["bob"])
    assert status == 1  # never "valid": no signed status list decides an older file's status
    assert out.startswith("SIGNATURE VALID: certificate") and "Bob Kahn" in out
    assert "7 of 10" in out
    assert "the older gradacc-certificate/1 (not an Open Badge)" in out
    assert "NOT CONFIRMED: signature valid, status unknown" in out
    assert not any(line.startswith("VALID") for line in out.splitlines())


def test_an_older_certificate_is_signed_by_the_issuer_key_over_its_exact_text(older):
    # checked with cryptography directly, not with the package's own reader
    tmp_path, _, files = older
    document = json.loads(files["ada"].read_text("utf-8"))
    key = load_pem_public_key((tmp_path / "keys/issuer.pub").read_bytes())
    assert isinstance(key, Ed25519PublicKey)
    key.verify(base64.b64decode(document["signature"]), document["signed"].encode("utf-8"))
    assert json.loads(document["signed"]) == document["certificate"]


def test_an_older_certificate_saved_again_by_an_editor_still_verifies(older, certify):
    # another indentation, escaped accents, CRLF line ends and a byte order mark change no fact
    tmp_path, _, files = older
    path = files["dee"]
    document = json.loads(path.read_text("utf-8"))
    text = json.dumps(document, indent=4, ensure_ascii=True).replace("\n", "\r\n")
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    status, out, _ = verify_older(certify, tmp_path, path)
    assert out.startswith("SIGNATURE VALID") and "Adébáyọ̀ Ọlọ́run" in out and "status unknown" in out


@pytest.mark.parametrize(
    ("field", "value"),
    [("name", "Mallory Lovelace"), ("score", 10.0), ("date", "2020-01-01"), ("assignment", "x")],
)
@pytest.mark.parametrize("where", ["readable copy", "signed text", "both"])
def test_an_altered_older_certificate_fails(older, certify, field, value, where):
    tmp_path, _, files = older
    path = files["bob"]
    document = json.loads(path.read_text("utf-8"))
    if where in ("readable copy", "both"):
        document["certificate"][field] = value
    if where in ("signed text", "both"):
        record = json.loads(document["signed"])
        record[field] = value
        document["signed"] = json.dumps(record, sort_keys=True, separators=(",", ":"))
    path.write_text(json.dumps(document), "utf-8")
    status, out, _ = verify_older(certify, tmp_path, path)
    assert status == 1
    assert out.startswith("INVALID:") and out.count("\n") == 1
    reason = "readable copy was changed" if where == "readable copy" else "signature does not match"
    assert reason in out


def test_an_older_certificate_of_another_key_fails(older, certify, older_format, tmp_path_factory):
    tmp_path, course, files = older
    other = tmp_path_factory.mktemp("other")
    certify("keygen", "--out", other / "keys")
    forger_course = other / "course"
    forger_course.mkdir()
    forged = older_format(forger_course, other / "keys/issuer.key", other / "out",
                          {"ada": ("Ada Lovelace", 10.0)})["ada"]  # fmt: skip
    status, out, _ = verify_older(certify, tmp_path, forged)
    assert status == 1 and "signature does not match" in out
    # and the genuine one does not verify with the forger's public key
    status, out, _ = certify("verify", files["ada"], "--public-key", other / "keys/issuer.pub")
    assert status == 1 and "signature does not match" in out


def test_no_registry_handed_in_decides_an_older_certificate(older, certify, tmp_path_factory):
    tmp_path, course, files = older
    sqlite = course / "certificates.sqlite"
    # the issuer's own SQLite file, and the same file under a JSON name: refused, never VALID
    renamed = tmp_path / "registry-sqlite.json"
    renamed.write_bytes(sqlite.read_bytes())
    for registry in (sqlite, renamed):
        status, out, _ = verify_older(certify, tmp_path, files["ada"], "--registry", registry)
        assert status == 1 and out.startswith("INVALID:") and out.count("\n") == 1
        assert "decided by the issuer's signed status list alone" in out


def test_a_revoked_older_certificate_never_shows_valid(older, certify):
    tmp_path, course, files = older
    the_id = json.loads(files["dee"].read_text("utf-8"))["certificate"]["id"]
    revoke = ["revoke", the_id, "--registry", course / "certificates.sqlite"]
    status, out, _ = certify(*revoke, "--key", tmp_path / "keys/issuer.key", "--reason", "copied")
    assert status == 0 and "of the older format: no verifier sees its status" in out
    status, out, _ = verify_older(certify, tmp_path, files["dee"])
    assert status == 1 and "status unknown" in out
    # nor is it issued again as an Open Badge
    status, out, _ = issue_again(certify, tmp_path, course)
    (line,) = [line for line in out.splitlines() if line.startswith("dee ")]
    assert status == 0 and "not issued again" in line
    assert not list((tmp_path / "out/dee").glob("*.jwt"))


def test_issuing_again_migrates_older_holders_under_their_ids(older, certify):
    tmp_path, course, files = older
    before = {s: json.loads(f.read_text("utf-8"))["certificate"]["id"] for s, f in files.items()}
    status, out, _ = issue_again(certify, tmp_path, course)
    assert status == 0, out
    for student, the_id in before.items():
        assert id_of(tmp_path, student) == the_id  # the same ID, now an Open Badge
        # the older file stays as it was; no new older-format file is written
        assert list((tmp_path / "out" / student).glob("*.json")) == [files[student]]
    assert count(course, "certificates") == 3 and count(course, "credentials") == 3
