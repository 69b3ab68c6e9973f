"""The published registry with the guide's commands: signed as a whole, numbered, dated and
chained; `verify` refuses it edited, stale, from the future, replayed or forked, and says why."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shlex
import shutil
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.serialization import load_pem_public_key
from gradacc_grader.certify import _parser

MISMATCH = "the registry's signature does not match the issuer's key"


def verify_id(certify_output, registries, registry, student="ada", *extra):
    return certify_output(
        "verify",
        "--id",
        registries["ids"][student],
        "--public-key",
        registries["public_key"],
        "--registry",
        registry,
        *extra,
    )


def body_of(path) -> dict:
    return json.loads(json.loads(path.read_text("utf-8"))["signed"])


def test_the_registry_is_signed_as_a_whole_by_the_issuer_key(registries):
    # checked with cryptography directly, not with the package's reader
    document = json.loads(registries["current"].read_text("utf-8"))
    assert set(document) == {"format", "signed", "signature"}
    key = load_pem_public_key(registries["public_key"].read_bytes())
    key.verify(base64.b64decode(document["signature"]), document["signed"].encode("utf-8"))
    body = json.loads(document["signed"])
    assert body["sequence"] == 2 and sorted(body["certificates"]) == sorted(
        registries["ids"].values()
    )
    assert list(body["revocations"]) == [registries["ids"]["bob"]]


def test_each_registry_lists_the_hashes_of_those_before_it(registries):
    older, current = body_of(registries["older"]), body_of(registries["current"])
    signed_older = json.loads(registries["older"].read_text("utf-8"))["signed"]
    assert (older["sequence"], older["chain"]) == (1, [])
    assert current["chain"] == [hashlib.sha256(signed_older.encode("utf-8")).hexdigest()]


def test_the_next_update_is_the_valid_days_after_the_issue(registries):
    body = body_of(registries["current"])
    issued = datetime.strptime(body["issued"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    due = datetime.strptime(body["next_update"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert due - issued == timedelta(days=30)
    assert abs(datetime.now(UTC) - issued) < timedelta(hours=1)


def test_a_current_registry_verifies_and_says_how_old_it_is(registries, certify_output):
    status, out = verify_id(certify_output, registries, registries["current"])
    assert status == 0 and "VALID" in out and "Ada Lovelace" in out
    assert "registry date   number 2, issued " in out
    assert "(less than a minute ago)" in out or "minute" in out
    assert "next due by " in out


def test_the_revocation_shows_in_the_published_registry(registries, certify_output):
    status, out = verify_id(certify_output, registries, registries["current"], "bob")
    # revoked; the reason stays in the instructor's records, published nowhere
    assert status == 1 and "revoked" in out and "copied the final" not in out


def test_every_tampered_registry_is_refused_with_its_reason(registries, tampered, certify_output):
    for case, (path, reason) in tampered.items():
        for student in ("ada", "bob"):
            status, out = verify_id(certify_output, registries, path, student)
            assert status == 1 and reason in out and not out.startswith("VALID"), (case, out)
            assert len(out.strip().splitlines()) == 1, (case, out)


def test_a_certificate_file_is_refused_against_a_tampered_registry(
    registries, tampered, certify_output
):
    (certificate,) = (registries["root"] / "out/bob").glob("*.json")
    path, _ = tampered["a revocation deleted"]
    status, out = certify_output(
        "verify",
        certificate,
        "--public-key",
        registries["public_key"],
        "--registry",
        path,
    )
    assert status == 1 and MISMATCH in out


def test_a_stale_registry_is_refused_saying_since_when(registries, certify_output):
    status, out = verify_id(certify_output, registries, registries["stale"])
    assert status == 1 and "stale:" in out
    assert "was due to be replaced by" in out and "53 days ago" in out
    assert "Get the current registry.json" in out


def test_a_registry_from_the_future_is_refused(registries, certify_output):
    status, out = verify_id(certify_output, registries, registries["future"])
    assert status == 1 and "in the future" in out and "clock" in out


def test_an_older_registry_after_a_newer_one_is_refused_as_replayed(registries, certify_output):
    assert verify_id(certify_output, registries, registries["current"])[0] == 0
    status, out = verify_id(certify_output, registries, registries["older"], "bob")
    assert status == 1 and "replayed: this is registry number 1, older than number 2" in out


def test_an_older_registry_passes_where_no_newer_one_was_seen(registries, certify_output):
    # what the guide says is not protected: bob's certificate, revoked in number 2, passes here
    status, out = verify_id(certify_output, registries, registries["older"], "bob")
    assert status == 0 and "number 1, issued" in out


def test_a_newer_registry_after_an_older_one_is_accepted(
    registries, certify_output, verifier_state
):
    assert verify_id(certify_output, registries, registries["older"])[0] == 0
    assert json.loads(verifier_state.read_text("utf-8")) != {}
    status, out = verify_id(certify_output, registries, registries["current"])
    assert status == 0 and "number 2" in out
    (mark,) = json.loads(verifier_state.read_text("utf-8")).values()
    signed = json.loads(registries["current"].read_text("utf-8"))["signed"]
    assert mark == {"sequence": 2, "hash": hashlib.sha256(signed.encode("utf-8")).hexdigest()}


def test_two_registries_under_one_number_are_refused(registries, certify_output):
    assert verify_id(certify_output, registries, registries["current"])[0] == 0
    status, out = verify_id(certify_output, registries, registries["forked"])
    assert status == 1 and "another registry under the same number 2" in out


def test_a_registry_whose_chain_misses_the_one_seen_is_refused(registries, certify_output):
    assert verify_id(certify_output, registries, registries["current"])[0] == 0
    status, out = verify_id(certify_output, registries, registries["forked_next"])
    assert status == 1 and "does not continue registry number 2" in out


def test_the_state_file_can_be_given_and_a_damaged_one_is_named(
    registries, certify_output, tmp_path
):
    state = tmp_path / "seen.json"
    assert (
        verify_id(certify_output, registries, registries["current"], "ada", "--state", state)[0]
        == 0
    )
    status, out = verify_id(
        certify_output, registries, registries["older"], "ada", "--state", state
    )
    assert status == 1 and "replayed" in out
    state.write_text("{not json", "utf-8")
    status, out = verify_id(
        certify_output, registries, registries["current"], "ada", "--state", state
    )
    assert status == 1 and "delete it to start afresh" in out


def test_a_refused_registry_is_not_remembered(registries, tampered, certify_output, verifier_state):
    verify_id(certify_output, registries, registries["stale"])
    verify_id(certify_output, registries, tampered["the sequence number raised"][0])
    assert not verifier_state.exists()


@pytest.fixture
def course(registries, tmp_path):
    """A copy of the issuer's course registry and keys, to export from."""
    sqlite = tmp_path / "certificates.sqlite"
    shutil.copy(registries["root"] / "course/certificates.sqlite", sqlite)
    return sqlite, registries["root"] / "keys/issuer.key"


def test_export_numbers_each_registry_and_keeps_every_one(course, certify_output, tmp_path):
    sqlite, key = course
    first = ["export", "--registry", sqlite, "--key", key, "--out", tmp_path / "first.json"]
    assert certify_output(*first)[0] == 0
    for days in ("7", "365"):
        out_file = tmp_path / f"registry-{days}.json"
        status, out = certify_output(
            "export",
            "--registry",
            sqlite,
            "--key",
            key,
            "--out",
            out_file,
            "--valid-days",
            days,
        )
        assert status == 0 and "export and publish again before then" in out
    bodies = [body_of(tmp_path / f"registry-{days}.json") for days in ("7", "365")]
    assert [b["sequence"] for b in bodies] == [4, 5]  # 1 and 2 published before, 3 first
    with sqlite3.connect(sqlite) as connection:
        kept = connection.execute("SELECT sequence, signed FROM publications ORDER BY 1").fetchall()
    assert [sequence for sequence, _ in kept] == [1, 2, 3, 4, 5]
    hashes = [hashlib.sha256(signed.encode("utf-8")).hexdigest() for _, signed in kept]
    assert bodies[1]["chain"] == hashes[:4]


def test_export_refuses_a_registry_that_lost_a_published_certificate(
    course, certify_output, tmp_path
):
    sqlite, key = course
    with sqlite3.connect(sqlite) as connection:
        connection.execute("DELETE FROM revocations")
    status, out = certify_output(
        "export", "--registry", sqlite, "--key", key, "--out", tmp_path / "r.json"
    )
    assert status == 1 and "no longer holds it" in out and "backup" in out
    assert not (tmp_path / "r.json").exists()


def test_export_needs_the_issuer_key(course, registries, certify_output, tmp_path):
    sqlite, _ = course
    status, out = certify_output(
        "export",
        "--registry",
        sqlite,
        "--key",
        registries["forger_key"],
        "--out",
        tmp_path / "r.json",
    )
    assert status == 1 and "another issuer key" in out
    assert not (tmp_path / "r.json").exists()


def test_every_command_of_the_guide_parses_and_publish_signs():
    guide = (Path(__file__).resolve().parents[2] / "CERTIFICATES.md").read_text("utf-8")
    blocks = "\n".join(re.findall(r"```bash\n(.*?)```", guide, re.DOTALL)).replace("\\\n", " ")
    commands = [line for line in blocks.splitlines() if line.startswith("gradacc-certify ")]
    publishes = [command for command in commands if command.startswith("gradacc-certify publish")]
    assert len(commands) >= 7 and len(publishes) == 2
    assert not [command for command in commands if command.startswith("gradacc-certify export")]
    for command in commands:
        _parser().parse_args(shlex.split(command.split("#")[0])[1:])  # SystemExit(2) if refused
    assert all("--key" in command for command in publishes)


def audit(certify_output, registries, *args):
    return certify_output("audit", "--public-key", registries["public_key"], *args)


def test_audit_finds_the_published_history_whole(registries, certify_output):
    sqlite = registries["root"] / "course/certificates.sqlite"
    status, out = audit(certify_output, registries, "--registry", sqlite)
    assert status == 0 and out.startswith("CONSISTENT: 2 registries, numbers 1 to 2")
    status, out = audit(certify_output, registries, registries["current"], registries["older"])
    assert status == 0 and "numbers 1 to 2" in out


def test_audit_finds_a_fork_and_a_broken_chain(registries, certify_output):
    status, out = audit(certify_output, registries, registries["current"], registries["forked"])
    assert status == 1 and "two different registries are numbered 2" in out
    status, out = audit(
        certify_output, registries, registries["current"], registries["forked_next"]
    )
    assert status == 1 and "registry number 3 does not continue number 2" in out


def test_audit_finds_a_certificate_the_key_holder_made_vanish(registries, certify_output, tmp_path):
    # whoever holds the key signs a number 3 without Ada's certificate, chained correctly
    from gradacc_grader.certificates.signing import load_private_key, sign_record

    document = json.loads(registries["current"].read_text("utf-8"))
    body = json.loads(document["signed"])
    ada = registries["ids"]["ada"]
    body["certificates"] = {k: v for k, v in body["certificates"].items() if k != ada}
    body["chain"] = [*body["chain"], hashlib.sha256(document["signed"].encode()).hexdigest()]
    body["sequence"] = 3
    key = load_private_key(registries["root"] / "keys/issuer.key")
    later = tmp_path / "registry-3.json"
    later.write_text(json.dumps({"format": document["format"], **sign_record(body, key)}), "utf-8")
    status, out = audit(certify_output, registries, registries["current"], later)
    assert status == 1
    assert f"the certificate {ada}, published in registry number 2, is missing from" in out
    # a verifier who saw number 2 accepts this number 3: the chain holds, the signature too
    assert verify_id(certify_output, registries, registries["current"])[0] == 0
    status, out = verify_id(certify_output, registries, later)
    assert status == 1 and "unknown ID" in out


def test_audit_refuses_a_tampered_copy(registries, tampered, certify_output):
    path, reason = tampered["a revocation deleted"]
    status, out = audit(certify_output, registries, registries["older"], path)
    assert status == 1 and reason in out


def test_a_state_file_that_cannot_be_written_warns_and_the_check_stands(
    registries, certify_output, tmp_path
):
    (tmp_path / "a-file").write_text("x")
    state = tmp_path / "a-file" / "seen.json"  # its folder is a file: nothing can be written
    status, out = verify_id(
        certify_output, registries, registries["current"], "ada", "--state", state
    )
    assert status == 0 and "VALID" in out
    assert "warning: cannot remember this registry" in out and "--state FILE" in out
