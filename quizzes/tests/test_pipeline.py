"""The sample class through the whole pipeline, as an instructor runs it: gradacc-build,
gradacc-grade, nbgrader generate_feedback and export, then gradacc-certify on the final.

Honest, partly right, cheating and blank students (gradacc_grader.sample_class) are graded in
the sandbox; each must end with exactly the points the sample class says they deserve, per
grade cell, and the feedback must teach without showing anything of the instructor's.
"""

from __future__ import annotations

import base64
import csv
import html
import json
import re
import shutil
import warnings
from pathlib import Path

import nbformat
import pytest
from gradacc_grader.bank import ASSIGNMENTS
from gradacc_grader.certify import main as certify
from gradacc_grader.guards import hidden_lines, without_hidden_tests
from gradacc_grader.sample_class import EXPECTED_FILE

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]
NAMES = [a.name for a in ASSIGNMENTS]
# Every assignment for the honest and the partly right students; the cheater and the blank
# notebook on the final and lesson 2 (their tricks are the same in every assignment).
CLASS = {name: ["sample-honest", "sample-partly"] for name in NAMES}
for name in ("gradacc_faq", "lesson2_loss_scaling"):
    CLASS[name] += ["sample-cheater", "sample-blank"]


@pytest.fixture(scope="module")
def graded(built, tmp_path_factory, cli) -> dict:
    """The sample class graded with gradacc-grade, every assignment in one run, then feedback
    and export.

    Two students at a time, as GRADING.md advises on two cores: one at a time, the grading
    of this class kept one core busy half the time (180 s of CPU in 350 s)."""
    course = Path(shutil.copytree(built, tmp_path_factory.mktemp("class") / "course"))
    for folder in (course / "submitted").iterdir():
        for assignment in list(folder.iterdir()):
            if folder.name not in CLASS[assignment.name]:
                shutil.rmtree(assignment)
    # a self-paced course: wrong choices are explained at once (the default waits for the
    # due date; tests/test_grading.py grades with the default)
    with (course / "nbgrader_config.py").open("a", encoding="utf-8") as config:
        config.write('c.GradaccFeedback.explain_wrong_choices = "now"\n')
    # every assignment in one run, as an instructor grades a term
    done = cli(["gradacc-grade", "--jobs", "2", "--course", str(course), *NAMES], timeout=1800)
    assert done.returncode == 0, done.stdout + done.stderr
    feedback = {name: cli(["nbgrader", "generate_feedback", name], cwd=course) for name in NAMES}
    export = cli(["nbgrader", "export"], cwd=course)
    return {"course": course, "run": done, "feedback": feedback, "export": export}


def _scores(course: Path) -> dict:
    from nbgrader.api import Gradebook, MissingEntry

    found = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SQLAlchemy's SAWarnings on nbgrader's queries
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
            for name, students in CLASS.items():
                for student in students:
                    try:
                        notebook = gradebook.find_submission_notebook(name, name, student)
                    except MissingEntry:
                        continue
                    for grade in notebook.grades:
                        found[student, name, grade.name] = (grade.score, grade.needs_manual_grade)
    return found


def _expected(course: Path) -> dict:
    with (course / EXPECTED_FILE).open(encoding="utf-8") as file:
        return {
            (r["student"], r["assignment"], r["grade_id"]): float(r["expected_points"])
            for r in csv.DictReader(file)
            if r["student"] in CLASS[r["assignment"]]
        }


def test_everyone_gets_exactly_the_points_they_deserve(graded):
    scores, expected = _scores(graded["course"]), _expected(graded["course"])
    assert expected
    wrong = {
        key: (scores.get(key), points)
        for key, points in expected.items()
        if scores.get(key, (None,))[0] != points
    }
    assert not wrong, wrong


def test_written_answers_wait_for_the_instructor(graded):
    scores = _scores(graded["course"])
    for student in ("sample-honest", "sample-partly"):
        assert scores[student, "gradacc_faq", "faq5_written"] == (0, True)


def _page(graded, student: str, name: str) -> str:
    path = graded["course"] / "feedback" / student / name / f"{name}.html"
    return html.unescape(re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8")))


def test_feedback_explains_each_wrong_choice_and_each_failed_case(graded):
    course = graded["course"]
    for name in NAMES:
        assert graded["feedback"][name].returncode == 0, graded["feedback"][name].stderr
        key = json.loads((course / "keys" / f"{name}.json").read_text())
        page = _page(graded, "sample-partly", name)
        submitted = nbformat.read(
            course / "submitted" / "sample-partly" / name / f"{name}.ipynb", as_version=4
        )
        answers = dict(
            re.findall(r'(answer_\w+) = "([A-D])"', "\n".join(c.source for c in submitted.cells))
        )
        for cell in key["cells"]:
            if cell["kind"] == "choice":
                chosen = answers[cell["variable"]]
                assert cell["why"][chosen] in page, (name, cell["grade_id"])
                for letter, why in cell["why"].items():  # never the other choices' reasons
                    assert letter == chosen or why not in page, (name, cell["grade_id"], letter)
        if any(cell["kind"] == "exercise" for cell in key["cells"]):
            assert "\u2713" in page and "\u2717" in page and "Hint:" in page, name


@pytest.mark.parametrize("student", ["sample-honest", "sample-partly", "sample-cheater"])
def test_feedback_shows_nothing_of_the_instructors(graded, student, test_secret):
    course = graded["course"]
    for name in NAMES:
        if student not in CLASS[name]:
            continue
        page = _page(graded, student, name)
        source = nbformat.read(course / "source" / name / f"{name}.ipynb", as_version=4)
        hidden = set().union(*(hidden_lines(c.source) for c in source.cells))
        # what the student saw anyway: the release's cells and their own submission
        submitted = course / "submitted" / student / name / f"{name}.ipynb"
        shown = "\n".join(
            [without_hidden_tests(c.source) for c in source.cells]
            + [c.source for c in nbformat.read(submitted, as_version=4).cells]
        )
        for line in (line for line in hidden if line not in shown):
            assert line not in page, f"hidden line in {student}'s feedback of {name}: {line}"
        for secret in ("Rubric", "Model answer", test_secret, "gradacc-report"):
            assert secret not in page


def test_each_assignment_gets_its_table_of_its_students(graded):
    tables = re.split(r"^(\w+):$", graded["run"].stdout, flags=re.M)[1:]
    assert tables[0::2] == NAMES, graded["run"].stdout  # in the order given
    for name, table in zip(tables[0::2], tables[1::2], strict=True):
        header, *lines = table.strip("\n").splitlines()
        assert header.split()[:2] == ["student", "score"], (name, table)
        rows = [line.split()[0] for line in lines if line[:1] != " "]  # not a note under a row
        assert rows == sorted(CLASS[name]), (name, table)


def test_untouched_test_cells_log_no_checksum_warning(graded):
    assert "has changed" not in graded["run"].stdout + graded["run"].stderr


def test_the_export_has_every_question_and_an_lms_sheet(graded):
    course = graded["course"]
    assert graded["export"].returncode == 0, graded["export"].stderr
    with (course / "exports" / "grades_by_question.csv").open(encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    expected = _expected(course)
    assert {(r["student_id"], r["assignment"], r["grade_id"]) for r in rows} >= set(expected)
    with (course / "exports" / "grades_for_lms.csv").open(encoding="utf-8") as file:
        sheet = list(csv.reader(file))
    assert sheet[0][:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert len(sheet[0]) == 5 + len(ASSIGNMENTS)
    honest = next(row for row in sheet if row[3] == "sample-honest")
    final = sheet[0].index(next(h for h in sheet[0] if h.startswith("gradacc_faq")))
    assert float(honest[final]) == 8.0  # the written answer's 2 points wait for the instructor


def _grade_by_hand(course: Path, assignment: str, full_marks: set) -> list[str]:
    """Score every answer waiting for hand grading, as formgrader does: full marks for the
    students in `full_marks`, none for the others; who had answers waiting."""
    from nbgrader.api import Gradebook

    waiting = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
            for submission in gradebook.assignment_submissions(assignment):
                for notebook in submission.notebooks:
                    for grade in notebook.grades:
                        if grade.needs_manual_grade:
                            waiting.add(submission.student.id)
                            full = submission.student.id in full_marks
                            grade.manual_score = grade.max_score if full else 0.0
                            grade.needs_manual_grade = False
            gradebook.db.commit()
    return sorted(waiting)


def test_the_final_gives_a_certificate_to_the_honest_student_only(
    graded, tmp_path, capsys, monkeypatch
):
    """The class's final, graded above, hand-graded, then issued and verified."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # the lists verify saw
    final = "gradacc_faq"
    course = Path(shutil.copytree(graded["course"], tmp_path / "course"))  # others read it
    settings = ["settings", "--course", str(course), "--course-title", "Gradient accumulation",
                "--issuer", "A test school", "--verify-url", "https://example.org/verify/",
                "--assignment-title", final, "the final exam"]  # fmt: skip
    assert certify(settings) == 0
    assert certify(["keygen", "--out", str(tmp_path / "keys")]) == 0
    issue = ["issue", final, "--course", str(course), "--key", str(tmp_path / "keys/issuer.key"),
             "--out", str(tmp_path / "out")]  # fmt: skip
    capsys.readouterr()
    assert certify(issue) == 1  # the written answers wait for the instructor
    err = capsys.readouterr().err
    assert "pending for" in err and "sample-honest" in err, err

    assert "sample-honest" in _grade_by_hand(course, final, {"sample-honest"})
    assert certify(issue) == 0, capsys.readouterr()
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["sample-honest"]
    (path,) = (tmp_path / "out/sample-honest").glob("gradacc-credential-*.jwt")
    www = tmp_path / "www"  # the verification folder, as the issuer publishes it
    publish = ["publish", "--course", str(course), "--key", str(tmp_path / "keys/issuer.key"),
               "--out", str(www)]  # fmt: skip
    assert certify(publish) == 0
    capsys.readouterr()
    assert certify(["verify", str(path), "--published", str(www)]) == 0
    assert "achievement     the final exam" in capsys.readouterr().out
    part = path.read_text("ascii").strip().split(".")[1]  # the payload, decoded by hand
    subject = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))[
        "credentialSubject"
    ]
    facts = {
        "score": float(subject["result"][0]["value"]),
        "max_score": float(subject["achievement"]["resultDescription"][0]["valueMax"]),
    }
    assert facts["score"] == facts["max_score"] > 0  # every point, the hand-graded ones too
