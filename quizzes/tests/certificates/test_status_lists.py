"""The issuer's place and its Bitstring Status Lists, checked by ``gradacc-certify verify``.

One class is issued and published; then every way we know to pass off a credential: a changed
byte, another key, another origin, a stale, replayed or forged status list, a revoked and a
superseded credential, an SQLite file handed in as the status. Each is refused in one line.
"""

from __future__ import annotations

import base64
import json
import shutil
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def place(tmp_path_factory, fill_gradebook):
    """Ada's and Cyd's credentials stand, Bob's is revoked; Cyd's name was corrected, so his
    first credential is superseded. ``old`` is the folder published before all that."""
    from gradacc_grader.certificates.publishing import publish
    from gradacc_grader.certificates.signing import load_private_key
    from gradacc_grader.certify import main

    root = tmp_path_factory.mktemp("place")
    students = {
        "ada": (7.0, 3.0, "Ada Lovelace"),
        "bob": (7.0, 2.0, "Bob Kahn"),
        "cyd": (7.0, 3.0, "Cyd Charisse"),
    }
    course = fill_gradebook(root / "course", "final", students)

    def run(*args):
        assert main([str(a) for a in args]) == 0, args

    key = root / "keys/issuer.key"
    run("keygen", "--out", root / "keys")
    run("issue", "final", "--course", course, "--key", key, "--out", root / "out")
    files = {s: next((root / "out" / s).glob("*.jwt")) for s in students}
    url, signing = "https://certificates.example.org/gradacc/verify/", load_private_key(key)
    then = datetime.now(UTC) - timedelta(hours=2)
    sqlite = course / "certificates.sqlite"
    publish(sqlite, signing, url, "Ọ̀ṣun Open School", root / "old", now=then)
    bob = files["bob"].name.removeprefix("gradacc-credential-").removesuffix(".jwt")
    run("revoke", bob, "--registry", sqlite, "--key", key, "--reason", "copied the final")
    with sqlite3.connect(course / "gradebook.db") as db:
        db.execute("UPDATE student SET last_name = 'Charisse-Finklea' WHERE id = 'cyd'")
    run("issue", "final", "--course", course, "--key", key, "--out", root / "out")
    run("publish", "--course", course, "--key", key, "--out", root / "www")
    (cyd_new,) = [p for p in (root / "out/cyd").glob("*.jwt") if p != files["cyd"]]
    publish(
        sqlite, signing, url, "Ọ̀ṣun Open School", root / "stale",
        now=datetime.now(UTC) - timedelta(days=30),
    )  # fmt: skip
    # a forger's own place, with a key of its own and the same issuer's name
    run("keygen", "--out", root / "forger")
    forger = load_private_key(root / "forger/issuer.key")
    publish(
        root / "forger.sqlite", forger, "https://forger.example/verify/", "Ọ̀ṣun Open School",
        root / "forged-place", now=datetime.now(UTC),
    )  # fmt: skip
    return {"root": root, "files": files, "cyd_new": cyd_new, "course": course, "forger": forger}


def verify(certify, place, path, *options):
    folder = options[0] if options and not str(options[0]).startswith("--") else None
    options = options[1:] if folder else options
    published = ["--published", folder or place["root"] / "www"]
    status, out, err = certify("verify", path, *published, *options)
    return status, (out + err).strip()


def test_a_credential_verifies_against_its_issuers_place(place, certify):
    status, out = verify(certify, place, place["files"]["ada"])
    assert status == 0, out
    assert out.startswith("VALID: Open Badges 3.0 credential")
    assert "name            Ada Lovelace" in out and "not revoked, not superseded" in out
    from gradacc_grader.certificates.signing import fingerprint, load_public_key

    printed = fingerprint(load_public_key(place["root"] / "keys/issuer.pub"))
    assert f"issuer key      {printed}" in out
    assert "checked against a copy at " in out  # --published: not the issuer's own address
    # and the baked badge, the same
    (png,) = (place["root"] / "out/ada").glob("*.png")
    assert verify(certify, place, png)[0] == 0


def refused(certify, place, path, *options) -> str:
    status, out = verify(certify, place, path, *options)
    assert status == 1, out
    assert out.startswith("INVALID: ") and len(out.splitlines()) == 1, out
    return out


def test_a_changed_byte_is_refused(place, certify, tmp_path):
    token = place["files"]["ada"].read_text().strip()
    head, payload, signature = token.split(".")
    credential = json.loads(base64.urlsafe_b64decode(payload + "=="))
    credential["credentialSubject"]["identifier"][0]["identityHash"] = "Eve Lovelace"
    payload = base64.urlsafe_b64encode(json.dumps(credential).encode()).decode().rstrip("=")
    (tmp_path / "changed.jwt").write_text(f"{head}.{payload}.{signature}")
    assert "signature does not match" in refused(certify, place, tmp_path / "changed.jwt")
    flipped = token[:-3] + ("A" if token[-3] != "A" else "B") + token[-2:]
    (tmp_path / "flipped.jwt").write_text(flipped)
    assert "signature does not match" in refused(certify, place, tmp_path / "flipped.jwt")


def test_another_key_and_another_origin_are_refused(place, certify, tmp_path):
    from gradacc_grader.certificates import vcjwt

    token = place["files"]["ada"].read_text().strip()
    _, credential = vcjwt.verify(token, json.loads((place["root"] / "www/jwks.json").read_text()))
    # the forger signs Ada's credential, naming the real issuer and its own key
    forged = vcjwt.sign(credential, place["forger"], "https://forger.example/verify/jwks.json#k")
    (tmp_path / "forged.jwt").write_text(forged)
    out = refused(certify, place, tmp_path / "forged.jwt")
    assert "does not hold: it was signed by another key" in out
    # checked against the forger's place, which publishes another issuer: another origin
    out = refused(certify, place, place["files"]["ada"], place["root"] / "forged-place")
    assert "another origin" in out
    # the forger's place with the real issuer's profile copied in: its key set lacks the key
    clone = tmp_path / "clone"
    shutil.copytree(place["root"] / "forged-place", clone)
    shutil.copy(place["root"] / "www/issuer.json", clone / "issuer.json")
    assert "another key" in refused(certify, place, place["files"]["ada"], clone)


def test_stale_replayed_and_forged_status_lists_are_refused(place, certify, tmp_path):
    ada = place["files"]["ada"]
    out = refused(certify, place, ada, place["root"] / "stale")
    assert "stale: the status list was due to be replaced by " in out
    due = (datetime.now(UTC) - timedelta(days=23)).strftime("%Y-%m-%d")
    assert due in out
    # the current list first, then the old one (signed before Bob's revocation): replayed
    assert verify(certify, place, ada)[0] == 0
    out = refused(certify, place, place["files"]["bob"], place["root"] / "old")
    assert "replayed:" in out and "due by" in out
    # a list the forger signed, at the real issuer's address
    from gradacc_grader.certificates import status_lists, vcjwt

    listed = status_lists.status_list_credential(
        "https://certificates.example.org/gradacc/verify/", "Ọ̀ṣun Open School", "revocation",
        set(), datetime.now(UTC), 7,
    )  # fmt: skip
    fake = vcjwt.sign(listed, place["forger"], "https://forger.example/verify/jwks.json#k")
    (tmp_path / "revocation.jwt").write_text(fake)
    out = refused(
        certify, place, place["files"]["bob"], "--status-list", tmp_path / "revocation.jwt"
    )
    assert "status list is refused: the status list is not the issuer's" in out


def test_revoked_and_superseded_credentials_are_refused(place, certify):
    out = refused(certify, place, place["files"]["bob"])
    assert "revoked:" in out and "copied the final" not in out
    out = refused(certify, place, place["files"]["cyd"])
    assert "superseded: the issuer re-issued this credential" in out
    status, out = verify(certify, place, place["cyd_new"])
    assert status == 0 and "Cyd Charisse-Finklea" in out


def test_the_published_lists_name_no_one(place):
    www = place["root"] / "www"
    # the page's font: the package's own files, byte for byte, which name no learner
    shipped = ROOT / "quizzes/gradacc_grader/certificates/fonts"
    fonts = {p.name: p.read_bytes() for p in (www / "fonts").iterdir()}
    assert fonts == {p.name: p.read_bytes() for p in shipped.iterdir()}
    files = [p for p in www.rglob("*") if p.is_file() and p.parent != www / "fonts"]
    texts = [p.read_text("utf-8") for p in files if p.suffix != ".css"]
    for token in [t for t in texts if t.count(".") == 2 and " " not in t.strip()]:
        texts.append(base64.urlsafe_b64decode(token.split(".")[1] + "==").decode("utf-8"))
    everything = "\n".join(texts)
    for word in ("Ada", "Lovelace", "Kahn", "Cyd", "Charisse", "copied"):
        assert word not in everything, word
    assert "registry.json" not in {p.name for p in www.iterdir()}


def test_without_a_status_list_the_status_is_unknown(place, certify, tmp_path):
    bare = tmp_path / "bare"
    shutil.copytree(place["root"] / "www", bare)
    shutil.rmtree(bare / "status")
    status, out = verify(certify, place, place["files"]["bob"], bare)
    assert status == 1
    assert "NOT CONFIRMED: signature valid, status unknown" in out


def test_a_database_is_never_a_status_list(place, certify, tmp_path):
    sqlite = place["course"] / "certificates.sqlite"
    shutil.copy(sqlite, tmp_path / "registry-sqlite.json")
    out = refused(
        certify, place, place["files"]["ada"], "--status-list", tmp_path / "registry-sqlite.json"
    )
    assert "SQLite database, not a signed status list" in out
    out = refused(certify, place, place["files"]["ada"], "--registry", sqlite)
    assert "decided by the issuer's signed status list alone" in out


def test_older_certificates_still_verify_marked_as_such(place, certify, older_format, tmp_path):
    (tmp_path / "course").mkdir()
    key = place["root"] / "keys/issuer.key"
    older = older_format(tmp_path / "course", key, tmp_path, {"ada": ("Ada Lovelace", 10.0)})
    public = place["root"] / "keys/issuer.pub"
    status, out, _ = certify("verify", older["ada"], "--public-key", public)
    assert out.startswith("SIGNATURE VALID: certificate")
    assert "the older gradacc-certificate/1 (not an Open Badge)" in out
    # no signed status list covers it: its status is unknown, and it never says VALID
    assert status == 1 and "NOT CONFIRMED: signature valid, status unknown" in out
    sqlite = tmp_path / "course/certificates.sqlite"
    status, out, _ = certify("verify", older["ada"], "--public-key", public, "--registry", sqlite)
    assert status == 1 and "decided by the issuer's signed status list alone" in out


def test_publish_runs_on_a_fresh_clone(tmp_path, place):
    clone = tmp_path / "clone"
    if (ROOT / ".git").exists():
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    else:  # a copy of quizzes/ alone (tests/test_quizzes_alone.py) holds what a clone would
        shutil.copytree(ROOT, clone, ignore=shutil.ignore_patterns(".venv", "__pycache__"))
    course = place["course"]
    key = place["root"] / "keys/issuer.key"
    command = [sys.executable, "-m", "gradacc_grader.certify", "publish", "--course", str(course),
               "--key", str(key), "--out", str(tmp_path / "site")]  # fmt: skip
    done = subprocess.run(
        command, cwd=clone, env={"PYTHONPATH": str(clone / "quizzes"), "PATH": "/usr/bin"},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    names = {str(p.relative_to(tmp_path / "site")) for p in (tmp_path / "site").rglob("*")}
    assert {"index.html", "verify.js", "verify.css", "issuer.json", "jwks.json",
            "status/revocation.jwt", "status/superseded.jwt", "published.js"} <= names  # fmt: skip
    assert "SHA256:" in done.stdout
