"""Bad files and wrong paths: gradacc-certify answers with one clear line, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from gradacc_grader.certify import main


@pytest.fixture(scope="module")
def world(tmp_path_factory, fill_gradebook, older_format):
    """A course with one older-format certificate, and a gallery of wrong files beside it."""
    root = tmp_path_factory.mktemp("world")
    course = fill_gradebook(root / "course", "final", {"ada": (7.0, 3.0, "Ada L")})
    assert main(["keygen", "--out", str(root / "keys")]) == 0
    key = root / "keys/issuer.key"
    certificate = older_format(course, key, root / "out", {"ada": ("Ada L", 10.0)})["ada"]
    document = json.loads(certificate.read_text("utf-8"))
    bad = root / "bad"
    bad.mkdir()
    (bad / "empty.json").write_bytes(b"")
    (bad / "garbage.json").write_bytes(bytes(range(256)) * 4)
    (bad / "array.json").write_text("[1, 2]")
    (bad / "truncated.json").write_text(certificate.read_text("utf-8")[:200])
    (bad / "huge.json").write_text(" " * 200_000 + "{}")
    (bad / "extra.json").write_text(json.dumps({**document, "note": "hi"}))
    (bad / "not-base64.json").write_text(json.dumps({**document, "signature": "***"}))
    duplicated = certificate.read_text("utf-8").replace('"format"', '"signed": "{}",\n "format"', 1)
    (bad / "duplicate.json").write_text(duplicated)
    (bad / "deep.json").write_text("[" * 50_000 + "]" * 50_000)
    other = ec.generate_private_key(ec.SECP256R1()).public_key()
    pem = other.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    (bad / "ec.pub").write_bytes(pem)
    (bad / "empty-course").mkdir()
    (bad / "garbage-course").mkdir()
    (bad / "garbage-course/gradebook.db").write_text("not a database")
    (bad / "a-file").write_text("x")
    return {
        "root": root,
        "course": course,
        "cert": certificate,
        "bad": bad,
        "id": document["certificate"]["id"],
    }


def verify(world, certificate=None, public_key=None, registry=None, extra=()):
    args = ["verify"]
    if certificate is not None:
        args.append(certificate)
    args += ["--public-key", public_key or world["root"] / "keys/issuer.pub"]
    if registry:
        args += ["--registry", registry]
    return [*args, *extra]


# (arguments, words the one line must hold)
CASES = {
    "certificate missing": (lambda w: verify(w, w["bad"] / "nope.json"), "No such file"),
    "certificate is a folder": (lambda w: verify(w, w["bad"]), "is a folder"),
    "certificate empty": (lambda w: verify(w, w["bad"] / "empty.json"), "not valid"),
    "certificate binary": (lambda w: verify(w, w["bad"] / "garbage.json"), "not UTF-8"),
    "certificate a JSON array": (lambda w: verify(w, w["bad"] / "array.json"), "not a JSON object"),
    "certificate truncated": (lambda w: verify(w, w["bad"] / "truncated.json"), "not valid"),
    "certificate huge": (lambda w: verify(w, w["bad"] / "huge.json"), "larger than"),
    "certificate with an extra part": (lambda w: verify(w, w["bad"] / "extra.json"), "exactly"),
    "signature not base64": (lambda w: verify(w, w["bad"] / "not-base64.json"), "signature"),
    "a part twice": (lambda w: verify(w, w["bad"] / "duplicate.json"), "appears twice"),
    "deeply nested": (lambda w: verify(w, w["bad"] / "deep.json"), "not valid"),
    "public key as certificate": (
        lambda w: verify(w, w["root"] / "keys/issuer.pub"),
        "not valid JSON",
    ),
    "public key missing": (lambda w: verify(w, w["cert"], w["bad"] / "nope.pub"), "No such file"),
    "private key as public": (
        lambda w: verify(w, w["cert"], w["root"] / "keys/issuer.key"),
        "not a public key",
    ),
    "certificate as public key": (lambda w: verify(w, w["cert"], w["cert"]), "not a public key"),
    "an EC public key": (lambda w: verify(w, w["cert"], w["bad"] / "ec.pub"), "not an Ed25519"),
    "a registry given": (
        lambda w: verify(w, w["cert"], registry=w["course"] / "certificates.sqlite"),
        "decided by the issuer's signed status list alone",
    ),
    "issue: no course": (
        lambda w: [
            "issue",
            "final",
            "--course",
            w["bad"] / "nope",
            "--key",
            w["root"] / "keys/issuer.key",
            "--out",
            w["bad"] / "o",
        ],
        "no such folder",
    ),
    "issue: no gradebook": (
        lambda w: [
            "issue",
            "final",
            "--course",
            w["bad"] / "empty-course",
            "--key",
            w["root"] / "keys/issuer.key",
            "--out",
            w["bad"] / "o",
        ],
        "no gradebook.db",
    ),
    "issue: garbage gradebook": (
        lambda w: [
            "issue",
            "final",
            "--course",
            w["bad"] / "garbage-course",
            "--key",
            w["root"] / "keys/issuer.key",
            "--out",
            w["bad"] / "o",
        ],
        "not an nbgrader gradebook",
    ),
    "issue: unknown assignment": (
        lambda w: [
            "issue",
            "nope",
            "--course",
            w["course"],
            "--key",
            w["root"] / "keys/issuer.key",
            "--out",
            w["bad"] / "o",
        ],
        "no assignment 'nope' (it has: final)",
    ),
    "issue: public key as key": (
        lambda w: [
            "issue",
            "final",
            "--course",
            w["course"],
            "--key",
            w["root"] / "keys/issuer.pub",
            "--out",
            w["bad"] / "o",
        ],
        "not a private key",
    ),
    "issue: unknown student": (
        lambda w: [
            "issue",
            "final",
            "--course",
            w["course"],
            "--key",
            w["root"] / "keys/issuer.key",
            "--out",
            w["bad"] / "o",
            "--student",
            "zed",
        ],
        "no graded submission",
    ),
    "issue: out is a file": (
        lambda w: [
            "issue",
            "final",
            "--course",
            w["course"],
            "--key",
            w["root"] / "keys/issuer.key",
            "--out",
            w["bad"] / "a-file",
        ],
        "a-file",
    ),
    "issue: a font that is no font": (
        lambda w: [
            "issue",
            "final",
            "--course",
            w["course"],
            "--key",
            w["root"] / "keys/issuer.key",
            "--out",
            w["bad"] / "o",
            "--font",
            w["bad"] / "a-file",
        ],
        "not a TrueType font",
    ),
    "pass mark above 1": (
        lambda w: [
            "issue",
            "final",
            "--course",
            w["course"],
            "--key",
            "k",
            "--out",
            "o",
            "--pass-mark",
            "70",
        ],
        "fraction",
    ),
    "pass mark not a number": (
        lambda w: [
            "issue",
            "final",
            "--course",
            w["course"],
            "--key",
            "k",
            "--out",
            "o",
            "--pass-mark",
            "most",
        ],
        "fraction",
    ),
    "revoke: unknown ID": (
        lambda w: [
            "revoke",
            "7K3M-Q9XT-2HPW",
            "--registry",
            w["course"] / "certificates.sqlite",
            "--key",
            w["root"] / "keys/issuer.key",
            "--reason",
            "x",
        ],
        "holds no certificate",
    ),
    "revoke: mistyped ID": (
        lambda w: [
            "revoke",
            "7K3M-Q9XT-2HPX",
            "--registry",
            w["course"] / "certificates.sqlite",
            "--key",
            w["root"] / "keys/issuer.key",
            "--reason",
            "x",
        ],
        "mistyped",
    ),
    "revoke: no registry": (
        lambda w: [
            "revoke",
            w["id"],
            "--registry",
            w["bad"] / "nope.sqlite",
            "--key",
            w["root"] / "keys/issuer.key",
            "--reason",
            "x",
        ],
        "no certificate registry",
    ),
    "export: gone": (
        lambda w: ["export", "--registry", w["course"] / "certificates.sqlite", "--out", "r.json"],
        "gradacc-certify publish writes the verification folder, which names no one",
    ),
    "audit: gone": (lambda w: ["audit", "--public-key", "k.pub", "r.json"], "audit is gone"),
    "keygen: out is a file": (lambda w: ["keygen", "--out", w["bad"] / "a-file"], "a-file"),
    "no command": (lambda w: [], "required"),
}


@pytest.mark.parametrize("case", CASES)
def test_one_clear_line(world, capsys, case):
    arguments, words = CASES[case]
    try:
        status = main([str(a) for a in arguments(world)])
    except SystemExit as stop:  # argparse's usage errors
        status = stop.code
    out, err = capsys.readouterr()
    lines = [line for line in (out + err).splitlines() if line.strip()]
    assert status in (1, 2), (case, out, err)
    assert len(lines) == 1, (case, out, err)
    assert "Traceback" not in out + err
    assert words in lines[0], (case, lines[0])


def test_the_console_script_prints_no_traceback(world):
    # the installed entry point, in its own process, on a file that is not a certificate
    script = [
        sys.executable,
        "-c",
        "import sys; from gradacc_grader.certify import main; sys.exit(main())",
    ]
    command = [*script, *map(str, verify(world, world["bad"] / "garbage.json"))]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stdout.count("\n") == 1 and "INVALID" in done.stdout
    assert "Traceback" not in done.stderr
