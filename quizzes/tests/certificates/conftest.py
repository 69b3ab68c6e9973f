"""Gradebooks for the certificate tests, filled through nbgrader's own API (no kernel runs)."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest

AUTO_POINTS, WRITTEN_POINTS = 7.0, 3.0
# What the test courses' certificates state (gradacc-certify settings): not the defaults of
# anything, so that a test finds them only where they were set.
SETTINGS = {
    "course_title": "Gradient accumulation in PyTorch",
    "issuer": "Ọ̀ṣun Open School",
    "verify_url": "https://certificates.example.org/gradacc/verify/",
}


def settle(course: Path, assignment: str, language: str = "en") -> None:
    """Give ``course`` its certificate settings, as an instructor does once."""
    from gradacc_grader.certify import main

    options = [f"--{name.replace('_', '-')}={value}" for name, value in SETTINGS.items()]
    title = ["--assignment-title", assignment, f"the final exam of {assignment}"]
    command = ["settings", "--course", str(course), *options, *title, "--language", language]
    assert main(command) == 0


@pytest.fixture(scope="session")
def give_settings():
    """``give_settings(course, assignment, language="en")``: the course's certificate settings."""
    return settle


@pytest.fixture
def certify(capsys):
    """``certify(*args)``: gradacc-certify run in this process: (exit status, stdout, stderr)."""
    from gradacc_grader.certify import main

    def run(*args):
        status = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return status, out, err

    return run


@pytest.fixture
def certify_output(certify):
    """``certify_output(*args)``: as ``certify``, with stdout and stderr as one text."""

    def run(*args):
        status, out, err = certify(*args)
        return status, out + err

    return run


@pytest.fixture(autouse=True)
def verifier_state(tmp_path, monkeypatch):
    """Where ``verify`` remembers the registries it has seen: a folder of each test's own."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state" / "gradacc" / "registries-seen.json"


@pytest.fixture(scope="session")
def fill_gradebook(tmp_path_factory):
    """A function making a course folder whose gradebook holds one graded assignment.

    ``fill_gradebook(course, assignment, students)``, where ``students`` maps a student id to
    (autograded points of 7, hand-graded points of 3 or None while pending, display name).
    """
    empty = _empty_gradebook(tmp_path_factory.mktemp("gradebook") / "gradebook.db")

    def fill(course: Path, assignment: str, students: dict, course_id: str = "testcourse"):
        course.mkdir(parents=True, exist_ok=True)
        (course / "nbgrader_config.py").write_text(f"c.CourseDirectory.course_id = {course_id!r}\n")
        shutil.copy(empty, course / "gradebook.db")  # a new one per test would take seconds
        _fill(course / "gradebook.db", assignment, students, course_id)
        settle(course, assignment)
        return course

    return fill


def _empty_gradebook(path: Path) -> Path:
    from nbgrader.api import Gradebook

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SQLAlchemy's SAWarnings about nbgrader's models
        with Gradebook(f"sqlite:///{path}"):
            pass
    return path


def _fill(database: Path, assignment: str, students: dict, course_id: str) -> None:
    from nbgrader.api import Gradebook

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Gradebook(f"sqlite:///{database}", course_id=course_id) as gradebook:
            gradebook.add_assignment(assignment)
            gradebook.add_notebook("quiz", assignment)
            for cell, points, kind in (
                ("auto", AUTO_POINTS, "code"),
                ("written", WRITTEN_POINTS, "markdown"),
            ):
                gradebook.add_grade_cell(cell, "quiz", assignment, max_score=points, cell_type=kind)
            for student, (auto, hand, name) in students.items():
                first, _, last = name.partition(" ")
                gradebook.add_student(student, first_name=first or None, last_name=last or None)
                gradebook.add_submission(assignment, student)
                grade = gradebook.find_grade("auto", "quiz", assignment, student)
                grade.auto_score, grade.needs_manual_grade = auto, False
                grade = gradebook.find_grade("written", "quiz", assignment, student)
                grade.manual_score, grade.needs_manual_grade = hand, hand is None
            gradebook.db.commit()


@pytest.fixture(scope="session")
def registries(tmp_path_factory, fill_gradebook):
    """Registries published by ``gradacc-certify``, good and bad, for the CLI and the page.

    Ada's certificate stands, Bob's is revoked. ``older`` is number 1, exported before Bob's
    revocation; ``current`` is number 2, after it. ``stale`` was exported 60 days ago for 7
    days; ``future`` says it was issued in two days. ``forked`` is another number 2 signed with
    the issuer's key (from a copy of the SQLite file kept before the revocation: a key in the
    wrong hands), and ``forked_next`` its number 3. ``forged`` is a certificate of Ada made
    with another key (``forger``).
    """
    from datetime import UTC, datetime, timedelta

    from gradacc_grader.certificates.registry import export_registry
    from gradacc_grader.certificates.signing import load_private_key
    from gradacc_grader.certify import main

    root = tmp_path_factory.mktemp("registries")
    course = fill_gradebook(
        root / "course", "final", {"ada": (7.0, 3.0, "Ada Lovelace"), "bob": (7.0, 1.0, "Bob Kahn")}
    )
    sqlite = course / "certificates.sqlite"

    def run(*args):
        assert main([str(a) for a in args]) == 0, args

    run("keygen", "--out", root / "keys")
    key = root / "keys/issuer.key"
    run("issue", "final", "--course", course, "--key", key, "--out", root / "out")
    run("export", "--registry", sqlite, "--key", key, "--out", root / "older.json")
    shutil.copy(sqlite, root / "fork.sqlite")
    ids = {}
    for student in ("ada", "bob"):
        (path,) = (root / "out" / student).glob("*.json")
        ids[student] = json.loads(path.read_text("utf-8"))["certificate"]["id"]
    run("revoke", ids["bob"], "--registry", sqlite, "--key", key, "--reason", "copied the final")
    run("export", "--registry", sqlite, "--key", key, "--out", root / "current.json")
    for name in ("forked", "forked_next"):
        run(
            "export",
            "--registry",
            root / "fork.sqlite",
            "--key",
            key,
            "--out",
            root / f"{name}.json",
        )
    now, signing_key = datetime.now(UTC), load_private_key(key)
    for name, when, days in (
        ("stale", now - timedelta(days=60), 7),
        ("future", now + timedelta(days=2), 30),
    ):
        shutil.copy(sqlite, root / f"{name}.sqlite")
        export_registry(
            root / f"{name}.sqlite", root / f"{name}.json", signing_key, now=when, valid_days=days
        )
    run("keygen", "--out", root / "forger")
    run(
        "issue",
        "final",
        "--course",
        course,
        "--key",
        root / "forger/issuer.key",
        "--out",
        root / "forged",
        "--registry",
        root / "forged.sqlite",
    )
    (forged,) = (root / "forged" / "ada").glob("*.json")
    return {
        "root": root,
        "ids": ids,
        "public_key": root / "keys/issuer.pub",
        "forger_key": root / "forger/issuer.key",
        "forged": forged,
        **{
            name: root / f"{name}.json"
            for name in ("older", "current", "forked", "forked_next", "stale", "future")
        },
    }


MISMATCH = "the registry's signature does not match the issuer's key"


@pytest.fixture(scope="session")
def tampered(registries):
    """The current registry tampered with in every way we thought of: {case: (file, reason)}.

    Each is made from the published text as an attacker would (one who can write the file,
    without the issuer's key), and must be refused with ``reason`` by the CLI and the page.
    """
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from gradacc_grader.certificates.signing import load_private_key, public_key_text, sign_record

    document = json.loads(registries["current"].read_text("utf-8"))
    body = json.loads(document["signed"])
    forged = json.loads(registries["forged"].read_text("utf-8"))
    ada, bob = registries["ids"]["ada"], registries["ids"]["bob"]
    forger = load_private_key(registries["forger_key"])
    folder = registries["root"] / "tampered"
    folder.mkdir()

    def resigned(changed: dict, key=None) -> dict:
        """The document with ``changed`` as its signed text: re-signed with ``key``, or with
        the original signature kept when there is no key."""
        if key is None:
            text = json.dumps(changed, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
            return {**document, "signed": text}
        return {**document, **sign_record(changed, key)}

    def without(part: str, certificate_id: str) -> dict:
        return {**body, part: {k: v for k, v in body[part].items() if k != certificate_id}}

    added = {
        **body["certificates"],
        forged["certificate"]["id"]: {"signed": forged["signed"], "signature": forged["signature"]},
    }
    reordered = dict(reversed(list(body["certificates"].items())))
    later = body["next_update"].replace(
        body["next_update"][:4], str(int(body["next_update"][:4]) + 5)
    )
    cases = {
        "a revocation deleted": (resigned(without("revocations", bob)), MISMATCH),
        "a certificate deleted": (resigned(without("certificates", ada)), MISMATCH),
        "a forged certificate added": (resigned({**body, "certificates": added}), MISMATCH),
        "the next update moved later": (resigned({**body, "next_update": later}), MISMATCH),
        "the sequence number raised": (
            resigned({**body, "sequence": 9, "chain": body["chain"] * 8}),
            MISMATCH,
        ),
        "a chain link removed": (resigned({**body, "chain": []}), MISMATCH),
        "signed by another key": (resigned(body, forger), MISMATCH),
        "signed by another key that it names": (
            resigned({**body, "public_key": public_key_text(forger.public_key())}, forger),
            MISMATCH,
        ),
        "signed by a random key": (resigned(body, Ed25519PrivateKey.generate()), MISMATCH),
        "an empty signature": ({**document, "signature": ""}, MISMATCH),
    }
    # signed with the issuer's own key, but not a registry the issuer's export would write
    key = load_private_key(registries["root"] / "keys/issuer.key")
    malformed = "the registry is malformed"
    cases |= {
        "a day not in the calendar": (
            resigned({**body, "issued": body["issued"][:5] + "02-30" + body["issued"][10:]}, key),
            malformed,
        ),
        "due before it was issued": (
            resigned({**body, "next_update": body["issued"][:4] + "-01-01T00:00:00Z"}, key),
            malformed,
        ),
        "a chain shorter than its number": (resigned({**body, "chain": []}, key), malformed),
        "a revocation of a certificate it does not list": (
            resigned(without("certificates", bob), key),
            malformed,
        ),
        "a field too many": (resigned({**body, "note": "hi"}, key), malformed),
        "another key named inside": (
            resigned({**body, "public_key": public_key_text(forger.public_key())}, key),
            "the registry names another issuer key",
        ),
    }
    texts = {name: json.dumps(doc, indent=1) for name, (doc, _) in cases.items()}
    reasons = {name: reason for name, (_, reason) in cases.items()}
    # reordered entries: the same JSON value, another text: the signature covers the text
    texts["entries reordered"] = json.dumps(
        {
            **document,
            "signed": json.dumps(
                {**body, "certificates": reordered}, ensure_ascii=False, separators=(",", ":")
            ),
        }
    )
    reasons["entries reordered"] = MISMATCH
    text = registries["current"].read_text("utf-8")
    texts["one space added to the signed text"] = text.replace('"signed": "{', '"signed": " {', 1)
    reasons["one space added to the signed text"] = MISMATCH
    # two "signed" keys: JSON.parse keeps the last, Python's reader the... neither: both refuse
    twice = (
        json.dumps(resigned(without("revocations", bob)))[:-1]
        + ', "signed": '
        + json.dumps(document["signed"])
        + "}"
    )
    texts["the signed text given twice"] = twice
    reasons["the signed text given twice"] = "appears twice"
    old = {
        "format": "gradacc-certificate-registry/1",
        "public_key": body["public_key"],
        "certificates": body["certificates"],
        "revocations": {},
    }
    texts["the old unsigned format"] = json.dumps(old)
    reasons["the old unsigned format"] = "old, unsigned format"
    paths = {}
    for name, text in texts.items():
        path = folder / (name.replace(" ", "-") + ".json")
        path.write_text(text, "utf-8")
        paths[name] = (path, reasons[name])
    return paths
