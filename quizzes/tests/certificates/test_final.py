"""Certificates from the course's own final, gradacc_faq, as an instructor issues them: built by
gradacc-build with a sample class, graded by gradacc-grade, hand-graded, then issued."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

FINAL = "gradacc_faq"
BIN = Path(sys.executable).parent


def run(*command, cwd: Path) -> str:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(
        [str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def grade_by_hand(course: Path, points: dict) -> list[str]:
    """Score every answer waiting for hand grading: full marks for the students in ``points``
    set to True, none for the others (as formgrader does); returns who had answers waiting."""
    from nbgrader.api import Gradebook

    waiting = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
            for submission in gradebook.assignment_submissions(FINAL):
                for notebook in submission.notebooks:
                    for grade in notebook.grades:
                        if grade.needs_manual_grade:
                            waiting.add(submission.student.id)
                            full = points.get(submission.student.id, False)
                            grade.manual_score = grade.max_score if full else 0.0
                            grade.needs_manual_grade = False
            gradebook.db.commit()
    return sorted(waiting)


def test_the_finals_sample_class_gets_certificates_for_the_honest_student_only(
    tmp_path, certify, give_settings
):
    course = tmp_path / "course"
    run(BIN / "gradacc-build", "--course", course, "--assignment", FINAL, "--sample-class",
        cwd=tmp_path)  # fmt: skip
    give_settings(course, FINAL)
    run(BIN / "gradacc-grade", "--course", course, FINAL, "--jobs", "2", cwd=tmp_path)
    assert certify("keygen", "--out", tmp_path / "keys")[0] == 0
    issue = ("issue", FINAL, "--course", course, "--key", tmp_path / "keys/issuer.key",
             "--out", tmp_path / "out")  # fmt: skip
    status, _, err = certify(*issue)
    assert status == 1 and "pending for" in err and "sample-honest" in err

    assert "sample-honest" in grade_by_hand(course, {"sample-honest": True})
    status, out, _ = certify(*issue)
    assert status == 0, out
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["sample-honest"]
    (path,) = (tmp_path / "out/sample-honest").glob("*.json")
    status, shown, _ = certify("verify", path, "--public-key", tmp_path / "keys/issuer.pub",
        "--registry", course / "certificates.sqlite",
    )  # fmt: skip
    assert status == 0 and f"assignment      {FINAL}" in shown
    facts = json.loads(path.read_text("utf-8"))["certificate"]
    assert facts["score"] == facts["max_score"] > 0  # every point, the hand-graded ones too
