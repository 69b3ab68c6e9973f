"""Issuing never fails the class for one student: a name a certificate cannot state is refused
for that student alone (a joiner is stated), names are NFC-normalised, and a revoked
certificate is not issued again (the guide's commands, on gradebooks filled with nbgrader's
API)."""

from __future__ import annotations

import base64
import json
import sqlite3
import unicodedata

ZWJ, RLO = "\u200d", "\u202e"


def stated_name(folder) -> str:
    """The name the one credential in ``folder`` states, its payload decoded by hand."""
    (path,) = folder.glob("gradacc-credential-*.jwt")
    part = path.read_text("ascii").strip().split(".")[1]
    payload = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    (name,) = [
        i["identityHash"]
        for i in payload["credentialSubject"]["identifier"]
        if i["identityType"] == "name"
    ]
    return name


def issue(certify_output, tmp_path, course, *extra):
    return certify_output(
        "issue",
        "final",
        "--course",
        course,
        "--key",
        tmp_path / "keys/issuer.key",
        "--out",
        tmp_path / "out",
        *extra,
    )


def line_of(out: str, student: str) -> str:
    (line,) = [line for line in out.splitlines() if line.startswith(student + " ")]
    return line


def issued_count(course) -> int:
    with sqlite3.connect(course / "certificates.sqlite") as registry:
        return registry.execute("SELECT count(*) FROM credentials").fetchone()[0]


def test_a_name_a_certificate_cannot_state_is_refused_for_that_student_alone(
    tmp_path, certify_output, fill_gradebook
):
    course = fill_gradebook(
        tmp_path / "course",
        "final",
        {
            "ada": (7.0, 3.0, "Ada Lovelace"),
            "dee": (7.0, 3.0, f"Adé{ZWJ}báyọ̀ Ọmọ{ZWJ}lẹ́yẹ"),  # a joiner: stated and printed
            "mal": (7.0, 3.0, f"Mal{RLO}ory Evans"),  # a right-to-left override: refused
            "zoe": (7.0, 2.0, "Zoë Quist"),
        },
    )
    assert certify_output("keygen", "--out", tmp_path / "keys")[0] == 0
    status, out = issue(certify_output, tmp_path, course)
    assert status == 0, out
    refusal = line_of(out, "mal")
    assert "refused: the name" in refusal and "U+202E RIGHT-TO-LEFT OVERRIDE" in refusal
    assert "correct the name in the gradebook" in refusal
    assert "refused (see the reason above): mal; the others are issued" in out
    for student in ("ada", "dee", "zoe"):
        assert line_of(out, student).endswith("issued"), out
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["ada", "dee", "zoe"]
    assert ZWJ in stated_name(tmp_path / "out/dee")
    assert issued_count(course) == 3
    # once the name is corrected in the gradebook, issuing again gives Mal theirs
    with sqlite3.connect(course / "gradebook.db") as gradebook:
        gradebook.execute("UPDATE student SET first_name = 'Mallory' WHERE id = 'mal'")
    status, out = issue(certify_output, tmp_path, course)
    assert status == 0 and line_of(out, "mal").endswith("issued")
    assert issued_count(course) == 4


def test_a_name_is_stated_in_nfc_however_it_was_typed(tmp_path, certify_output, fill_gradebook):
    typed = "Ade\u0301ba\u0301yo\u0323\u0300 Bello"  # every accent a combining character
    course = fill_gradebook(tmp_path / "course", "final", {"dee": (7.0, 3.0, typed)})
    assert certify_output("keygen", "--out", tmp_path / "keys")[0] == 0
    status, out = issue(certify_output, tmp_path, course)
    assert status == 0, out
    name = stated_name(tmp_path / "out/dee")
    assert name == unicodedata.normalize("NFC", typed) and name != typed
    # é, á and ọ composed (U+00E9, U+00E1, U+1ECD); no character is ọ̀, whose grave stays apart
    assert len(name) == len(typed) - 3 and name[-7] == "\u0300"


def test_issuing_again_after_a_revocation_says_it_is_revoked(
    tmp_path, certify_output, fill_gradebook
):
    course = fill_gradebook(
        tmp_path / "course",
        "final",
        {"ada": (7.0, 3.0, "Ada Lovelace"), "bob": (7.0, 2.0, "Bob Kahn")},
    )
    assert certify_output("keygen", "--out", tmp_path / "keys")[0] == 0
    assert issue(certify_output, tmp_path, course)[0] == 0
    (path,) = (tmp_path / "out/bob").glob("gradacc-credential-*.jwt")
    bob = path.stem.removeprefix("gradacc-credential-")
    revoke = ["revoke", bob, "--registry", course / "certificates.sqlite"]
    status, _ = certify_output(
        *revoke, "--key", tmp_path / "keys/issuer.key", "--reason", "copied the final"
    )
    assert status == 0
    for written in (tmp_path / "out/bob").iterdir():
        written.unlink()
    status, out = issue(certify_output, tmp_path, course)
    assert status == 0, out
    line = line_of(out, "bob")
    assert bob in line and "revoked on " in line and "(copied the final)" in line
    assert "not issued again" in line
    assert list((tmp_path / "out/bob").glob("*")) == []  # nothing written for Bob
    assert "already issued" in line_of(out, "ada")
    assert issued_count(course) == 2
    # below the pass mark now, and revoked: it says revoked, not "revoke it"
    with sqlite3.connect(course / "gradebook.db") as gradebook:
        gradebook.execute("UPDATE grade SET manual_score = 0")
    status, out = issue(certify_output, tmp_path, course, "--pass-mark", "0.8")
    assert "revoked on " in line_of(out, "bob")
    assert f"below the pass mark; holds {line_of(out, 'ada').split()[2]}" in line_of(out, "ada")
