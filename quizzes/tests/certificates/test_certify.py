"""gradacc-certify end to end on gradebooks filled with nbgrader's API: issue, verify, revoke."""

from __future__ import annotations

import base64
import json
import sqlite3
import unicodedata
from pathlib import Path

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


def certificate_of(tmp_path, student):
    (path,) = (tmp_path / "out" / student).glob("gradacc-certificate-*.json")
    return path


def verify(certify, tmp_path, *args):
    return certify(
        "verify",
        *args,
        "--public-key",
        tmp_path / "keys/issuer.pub",
        "--registry",
        tmp_path / "course/certificates.sqlite",
    )


def test_the_class_gets_certificates_from_the_pass_mark_up(issued):
    tmp_path, _, _ = issued
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["ada", "bob", "dee"]
    facts = json.loads(certificate_of(tmp_path, "dee").read_text("utf-8"))["certificate"]
    assert (facts["name"], facts["score"], facts["max_score"]) == ("Adébáyọ̀ Ọlọ́run", 8.0, 10.0)
    assert (facts["course"], facts["assignment"]) == ("testcourse", "final")


def test_a_certificate_is_signed_by_the_issuer_key_over_its_exact_text(issued):
    # checked with cryptography directly, not with the package's own reader
    tmp_path, _, _ = issued
    document = json.loads(certificate_of(tmp_path, "ada").read_text("utf-8"))
    key = load_pem_public_key((tmp_path / "keys/issuer.pub").read_bytes())
    assert isinstance(key, Ed25519PublicKey)
    key.verify(base64.b64decode(document["signature"]), document["signed"].encode("utf-8"))
    assert json.loads(document["signed"]) == document["certificate"]


def test_a_valid_certificate_verifies_with_its_facts(issued, certify):
    tmp_path, _, _ = issued
    status, out, _ = verify(certify, tmp_path, certificate_of(tmp_path, "bob"))
    assert status == 0
    assert "VALID" in out and "Bob Kahn" in out and "7 of 10" in out
    assert "listed, not revoked" in out


def test_a_certificate_saved_again_by_an_editor_still_verifies(issued, certify):
    # another indentation, escaped accents, CRLF line ends and a byte order mark change no fact
    tmp_path, _, _ = issued
    path = certificate_of(tmp_path, "dee")
    document = json.loads(path.read_text("utf-8"))
    text = json.dumps(document, indent=4, ensure_ascii=True).replace("\n", "\r\n")
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    status, out, _ = verify(certify, tmp_path, path)
    assert status == 0 and "Adébáyọ̀ Ọlọ́run" in out


@pytest.mark.parametrize(
    ("field", "value"),
    [("name", "Mallory Lovelace"), ("score", 10.0), ("date", "2020-01-01"), ("assignment", "x")],
)
@pytest.mark.parametrize("where", ["readable copy", "signed text", "both"])
def test_an_altered_fact_fails(issued, certify, field, value, where):
    tmp_path, _, _ = issued
    path = certificate_of(tmp_path, "bob")
    document = json.loads(path.read_text("utf-8"))
    if where in ("readable copy", "both"):
        document["certificate"][field] = value
    if where in ("signed text", "both"):
        record = json.loads(document["signed"])
        record[field] = value
        document["signed"] = json.dumps(record, sort_keys=True, separators=(",", ":"))
    path.write_text(json.dumps(document), "utf-8")
    status, out, _ = verify(certify, tmp_path, path)
    assert status == 1
    assert out.startswith("INVALID:") and out.count("\n") == 1
    reason = "readable copy was changed" if where == "readable copy" else "signature does not match"
    assert reason in out


def test_a_certificate_of_another_key_fails(issued, certify, tmp_path_factory):
    tmp_path, course, _ = issued
    other = tmp_path_factory.mktemp("other")
    certify("keygen", "--out", other / "keys")
    # a forger's certificate, issued from the same gradebook with the forger's key
    status, _, _ = certify(
        "issue",
        "final",
        "--course",
        course,
        "--key",
        other / "keys/issuer.key",
        "--out",
        other / "out",
        "--registry",
        other / "registry.sqlite",
    )
    assert status == 0
    (forged,) = (other / "out/ada").glob("*.json")
    status, out, _ = verify(certify, tmp_path, forged)
    assert status == 1 and "signature does not match" in out
    # and the genuine one does not verify with the forger's public key
    status, out, _ = certify(
        "verify", certificate_of(tmp_path, "ada"), "--public-key", other / "keys/issuer.pub"
    )
    assert status == 1 and "signature does not match" in out


def test_issuing_twice_gives_no_duplicates(issued, certify):
    tmp_path, course, first = issued

    def files():
        return {p: p.read_bytes() for p in sorted((tmp_path / "out").glob("*/*"))}

    before = files()
    # for each of three students: the credential (.jwt), the baked badge (.png), the PDF, and
    # the older format's signed JSON
    assert len(before) == 12
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
    with sqlite3.connect(course / "certificates.sqlite") as registry:
        assert registry.execute("SELECT count(*) FROM certificates").fetchone() == (3,)


def test_a_revoked_certificate_fails_by_file_and_by_id(issued, certify):
    tmp_path, course, _ = issued
    path = certificate_of(tmp_path, "dee")
    certificate_id = json.loads(path.read_text("utf-8"))["certificate"]["id"]
    status, out, _ = certify(
        "revoke",
        certificate_id,
        "--registry",
        course / "certificates.sqlite",
        "--key",
        tmp_path / "keys/issuer.key",
        "--reason",
        "copied the final",
    )
    assert status == 0, out
    status, out, _ = verify(certify, tmp_path, path)
    # revoked; the reason stays in the instructor's records, published nowhere
    assert status == 1 and "revoked" in out and "copied the final" not in out
    status, out, _ = verify(certify, tmp_path, "--id", certificate_id)
    assert status == 1 and "revoked" in out
    # the published registry says so too
    published = tmp_path / "registry.json"
    export = ["export", "--registry", course / "certificates.sqlite", "--out", published]
    assert certify(*export, "--key", tmp_path / "keys/issuer.key")[0] == 0
    status, out, _ = certify(
        "verify",
        "--id",
        certificate_id,
        "--public-key",
        tmp_path / "keys/issuer.pub",
        "--registry",
        published,
    )
    assert status == 1 and "revoked" in out


def test_an_id_verifies_alone_as_typed_and_a_typo_shows(issued, certify):
    tmp_path, _, _ = issued
    certificate_id = json.loads(certificate_of(tmp_path, "ada").read_text("utf-8"))["certificate"][
        "id"
    ]
    typed = certificate_id.lower().replace("-", " ")
    status, out, _ = verify(certify, tmp_path, "--id", typed)
    assert status == 0 and "Ada Lovelace" in out
    swapped = certificate_id[1] + certificate_id[0] + certificate_id[2:]
    if swapped != certificate_id:
        status, out, _ = verify(certify, tmp_path, "--id", swapped)
        assert status == 1 and "mistyped" in out


def test_a_valid_looking_id_the_registry_does_not_hold_is_unknown(issued, certify):
    tmp_path, _, _ = issued
    status, out, _ = verify(certify, tmp_path, "--id", "7K3M-Q9XT-2HPW")
    assert status == 1 and "unknown ID" in out


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
    with sqlite3.connect(course / "certificates.sqlite") as registry:
        assert registry.execute("SELECT count(*) FROM certificates").fetchone() == (0,)


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


def test_the_published_registry_holds_no_student_ids(issued, certify):
    tmp_path, course, _ = issued
    published = tmp_path / "registry.json"
    export = ["export", "--registry", course / "certificates.sqlite", "--out", published]
    assert certify(*export, "--key", tmp_path / "keys/issuer.key")[0] == 0
    text = published.read_text("utf-8")
    assert len(json.loads(json.loads(text)["signed"])["certificates"]) == 3
    assert '"ada"' not in text and '"student"' not in text


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
    certificate_id = json.loads(certificate_of(tmp_path, "ada").read_text("utf-8"))["certificate"][
        "id"
    ]
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
    path = certificate_of(tmp_path, "dee")
    facts = json.loads(path.read_text("utf-8"))["certificate"]
    page = pypdfium2.PdfDocument(path.with_suffix(".pdf"))[0]
    lines = unicodedata.normalize("NFC", page.get_textpage().get_text_range()).splitlines()
    assert facts["name"] in lines
    settings = read_settings(course)
    assert f"passed {settings.title_of('final')}" in lines
    assert f"in the course {settings.course_title}" in lines
    assert "with 8 of 10 points (80 %)." in lines
    version = facts["course_version"]
    issued = f"Issued by {settings.issuer} on {facts['date']}; course version {version}."
    assert issued in lines
    assert facts["id"] in lines
    image = page.render(scale=2).to_pil()
    (code,) = zxingcpp.read_barcodes(image)
    assert code.text == f"{settings.verify_url}?id={facts['id']}"


def test_the_committed_registry_of_the_page_says_nothing_is_published_yet(tmp_path, certify):
    # quizzes/verify/registry.json stands for "nothing issued yet" until the host exports theirs
    committed = Path(__file__).resolve().parents[2] / "verify" / "registry.json"
    assert json.loads(committed.read_text("utf-8")) == {
        "format": "gradacc-certificate-registry/2",
        "signed": None,
        "signature": None,
    }
    assert certify("keygen", "--out", tmp_path / "keys")[0] == 0
    status, out, _ = certify(
        "verify",
        "--id",
        "7K3M-Q9XT-2HPW",
        "--public-key",
        tmp_path / "keys/issuer.pub",
        "--registry",
        committed,
    )
    assert status == 1 and "published no certificates yet" in out


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
