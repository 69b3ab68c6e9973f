"""A term's rough edges (issue 35, item 6): the exchange's time, the feedback's promise, NaN
weights, the score table's digits, the late-penalised total."""

from __future__ import annotations

import datetime
import os
import time
from types import SimpleNamespace

import pytest
from gradacc_grader.export import late_penalised_total
from gradacc_grader.grading import score_table
from gradacc_grader.results import Outcome
from gradacc_grader.scoring import points_for, weights_differ
from gradacc_grader.submissions import exchange_time
from gradacc_grader.trusted import multiple_choice
from nbgrader.utils import parse_utc

WHYS = {"A": "adds", "B": "replaces", "C": "averages", "D": "clears"}
NOT_FINITE = "the weights are not all finite numbers (NaN or infinity)"
CELL = {"cell_type": "code", "metadata": {"nbgrader": {"grade_id": "q_test"}}}


def _message(check, letter: str) -> str:
    out = {"output_type": "stream", "name": "stdout", "text": f"gradacc-report answer_q {letter!r}"}
    return check.run([{**CELL, "outputs": [out]}]).message


@pytest.mark.parametrize("lang", ["en", "yo"])
def test_a_wrong_choice_says_when_it_will_be_explained(lang):
    due = datetime.datetime(2026, 12, 18, 17, 0)
    dated = _message(multiple_choice("q_test", "answer_q", "A", WHYS, lang=lang, due=due), "B")
    assert "2026-12-18 17:00 UTC" in dated and "replaces" not in dated
    undated = _message(multiple_choice("q_test", "answer_q", "A", WHYS, lang=lang), "B")
    assert "2026" not in undated and "replaces" not in undated
    assert undated.split(")")[-1] != dated.split(")")[-1]  # a sentence of its own
    if lang == "en":
        assert undated.endswith("once this assignment has a due date and it has passed.")
        assert "after the deadline" not in dated + undated  # the old promise, for ever
    now = _message(multiple_choice("q_test", "answer_q", "A", WHYS, True, lang), "B")
    assert now.endswith("replaces") and "UTC" not in now


def test_nan_or_infinite_weights_are_never_right():
    want = [[1.0, 2.0], [3.0]]
    assert weights_differ([[1.0, 2.0], [3.0]], want) is None
    # NaN second: Python's max() of [0.0, nan] is 0.0, which once read as "they agree"
    nan, inf = float("nan"), 1e400
    for bad in ([[1.0, 2.0], [nan]], [[nan, 2.0], [3.0]], [[1.0, 2.0], [inf]]):
        assert weights_differ(bad, want) == NOT_FINITE


def test_the_score_table_shows_the_scores_the_gradebook_holds():
    held = points_for({"a": None, "b": None, "c": None, "d": "wrong"}, 3)  # 3 * 3/4
    assert held == 2.25
    table = score_table([Outcome("ada", "graded", 4.25, 10.0), Outcome("bob", "graded", held, 3)])
    rows = {line.split()[0]: line.split()[1:3] for line in table.splitlines()[1:]}
    assert rows == {"ada": ["4.25", "10"], "bob": ["2.25", "3"]}


def test_the_late_penalised_total_is_what_sheets_and_certificates_count():
    assert late_penalised_total(SimpleNamespace(score=8.5, late_submission_penalty=1.25)) == 7.25
    assert late_penalised_total(SimpleNamespace(score=1.0, late_submission_penalty=3.0)) == 0.0


def test_the_exchange_time_is_when_the_folder_last_changed_whatever_the_student_wrote(tmp_path):
    before = time.time()
    folder = tmp_path / "bob+faq+2020-01-01 00:00:00.000000 UTC+1a2b"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "notes.txt").write_text("late work")
    (folder / "timestamp.txt").write_text("2020-01-01 00:00:00.000000 UTC")
    for path in (folder / "data" / "notes.txt", folder / "data", folder / "timestamp.txt", folder):
        os.utime(path, (946684800, 946684800))  # every mtime set back to 2000, as a student can
    after = time.time()
    found = exchange_time(folder).replace(tzinfo=datetime.UTC).timestamp()
    assert before - 1 <= found <= after + 1


@pytest.mark.slow
def test_collect_writes_the_exchanges_time_not_the_students(course_copy, cli, tmp_path):
    inbound = tmp_path / "exchange" / "gradacc" / "inbound"
    backdated = "2020-01-01 00:00:00.000000 UTC"
    folder = inbound / f"bob+gradacc_faq+{backdated}+1a2b"
    folder.mkdir(parents=True)
    honest = course_copy / "submitted" / "sample-honest" / "gradacc_faq" / "gradacc_faq.ipynb"
    (folder / "gradacc_faq.ipynb").write_bytes(honest.read_bytes())
    (folder / "timestamp.txt").write_text(backdated)
    os.utime(folder / "gradacc_faq.ipynb", (946684800, 946684800))
    elsewhere = tmp_path / "instructor-file.txt"
    elsewhere.write_text("untouched")
    other = inbound / "eve+gradacc_faq+not a time at all+9f9f"  # stopped nbgrader's collect
    other.mkdir()
    (other / "gradacc_faq.ipynb").write_bytes(honest.read_bytes())
    (other / "timestamp.txt").symlink_to(elsewhere)  # written through, it would change
    made = time.time()
    collect = ["nbgrader", "collect", "gradacc_faq", f"--Exchange.root={tmp_path / 'exchange'}"]
    done = cli(collect, cwd=course_copy)
    assert done.returncode == 0, done.stdout + done.stderr
    for student in ("bob", "eve"):
        written = course_copy / "submitted" / student / "gradacc_faq" / "timestamp.txt"
        assert not written.is_symlink()
        when = parse_utc(written.read_text()).replace(tzinfo=datetime.UTC).timestamp()
        assert made - 60 <= when <= time.time(), (student, written.read_text())
    assert elsewhere.read_text() == "untouched"


@pytest.mark.slow
def test_gradacc_grade_warns_when_wrong_choices_wait_for_a_due_date_never_set(course_copy, cli):
    from gradacc_grader.gradebook_scores import no_due_date_warning

    warning = no_due_date_warning(course_copy, "lesson5_training")
    assert warning.startswith("lesson5_training has no due date")
    assert 'explain_wrong_choices = "now"' in warning
    add = ["nbgrader", "db", "assignment", "add", "lesson5_training"]
    done = cli([*add, "--duedate=2026-12-18 17:00:00 UTC"], cwd=course_copy)
    assert done.returncode == 0, done.stderr
    assert no_due_date_warning(course_copy, "lesson5_training") is None
    assert no_due_date_warning(course_copy, "lesson1_full_batch") is not None
    with (course_copy / "nbgrader_config.py").open("a", encoding="utf-8") as config:
        config.write('c.GradaccFeedback.explain_wrong_choices = "now"\n')
    assert no_due_date_warning(course_copy, "lesson1_full_batch") is None


@pytest.mark.slow
def test_a_backdated_late_submission_is_late_and_its_total_penalised(course_copy, cli, tmp_path):
    """bob hands in after the due date, with a name and timestamp.txt from before it."""
    from gradacc_grader.export import late_penalised_total
    from nbgrader.api import Gradebook

    name = "lesson5_training"
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    due = now - datetime.timedelta(hours=1)
    add = ["nbgrader", "db", "assignment", "add", name, f"--duedate={due:%Y-%m-%d %H:%M:%S} UTC"]
    assert cli(add, cwd=course_copy).returncode == 0
    with (course_copy / "nbgrader_config.py").open("a", encoding="utf-8") as config:
        config.write('c.LateSubmissionPlugin.penalty_method = "zero"\n')  # late: 0 points
    backdated = f"{due - datetime.timedelta(hours=1):%Y-%m-%d %H:%M:%S.%f} UTC"
    folder = tmp_path / "exchange" / "gradacc" / "inbound" / f"bob+{name}+{backdated}+1a2b"
    folder.mkdir(parents=True)
    honest = course_copy / "submitted" / "sample-honest" / name / f"{name}.ipynb"
    (folder / f"{name}.ipynb").write_bytes(honest.read_bytes())
    (folder / "timestamp.txt").write_text(backdated)
    collect = ["nbgrader", "collect", name, f"--Exchange.root={tmp_path / 'exchange'}"]
    assert cli(collect, cwd=course_copy).returncode == 0
    done = cli(["gradacc-grade", "--course", str(course_copy), name, "--student", "bob"])
    assert done.returncode == 0, done.stdout + done.stderr
    with Gradebook(f"sqlite:///{course_copy / 'gradebook.db'}") as gradebook:
        submission = gradebook.find_submission(name, "bob")
        assert submission.timestamp >= now - datetime.timedelta(seconds=1)  # the exchange's
        assert submission.score == 3.0  # every answer right...
        assert late_penalised_total(submission) == 0.0  # ...and late
