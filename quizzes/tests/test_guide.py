"""The instructor's guide says what nbgrader 0.9.6 and our commands really do.

Fast tests read the guide and the code it describes; slow ones run nbgrader the way the guide
tells an instructor to (re-grading after hand grading, feedback through the exchange,
formgrader's Manual Grading pages served by a real Jupyter server).
"""

from __future__ import annotations

import getpass
import json
import re
import secrets
import shlex
import socket
import subprocess
import sys
import time
import urllib.request
import warnings
from pathlib import Path

import nbformat
import pytest
from gradacc_grader import build, settings
from gradacc_grader.bank import ASSIGNMENTS

QUIZZES = Path(__file__).resolve().parent.parent
GUIDE = (QUIZZES / "README.md").read_text(encoding="utf-8")
GRADING = (QUIZZES / "GRADING.md").read_text(encoding="utf-8")


def test_the_exchange_is_where_nbgrader_looks_for_it():
    from nbgrader.exchange.default.exchange import Exchange

    root = Exchange.class_traits()["root"].default_value
    assert root == "/usr/local/share/nbgrader/exchange"
    assert f"`{root}`" in GUIDE and "/srv/nbgrader" not in GUIDE + GRADING


def test_manual_grading_is_named_as_formgrader_shows_it():
    import nbgrader

    templates = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader" / "templates"
    sidebar = (templates / "manage_assignments.tpl").read_text()
    assert "Manual Grading" in sidebar and "Manual Grading" in GUIDE
    assert "Manage Assignments -> gradacc_faq -> Manual grading" not in GUIDE


def test_every_gradacc_build_command_in_the_guide_parses():
    commands = re.findall(r"^\s*(gradacc-build [^\n#]*)", GUIDE, re.MULTILINE)
    assert len(commands) >= 3
    for command in commands:
        args = shlex.split(command)[1:]
        parser_errors = []
        try:
            build.parser().parse_args(args)
        except SystemExit as error:
            parser_errors.append(error.code)
        assert not parser_errors, command


def test_every_setting_is_in_the_guides_table():
    source = Path(settings.__file__).read_text(encoding="utf-8")
    names = set(re.findall(r"^\s+c\.(\w+\.\w+) =", source, re.MULTILINE))
    assert len(names) >= 8
    for name in names:
        assert f"`{name}`" in GUIDE, name


def test_the_guide_lists_every_assignment_with_its_points():
    for assignment in ASSIGNMENTS:
        assert re.search(rf"`{assignment.name}`\s*\|[^|\n]*\|\s*{assignment.points}\s*\|", GUIDE), (
            assignment.name
        )


# --- nbgrader as the guide describes it -----------------------------------------------------


def _submit(course: Path, student: str, name: str, edit=None) -> None:
    """The sample-honest notebook handed in again as another student (optionally edited)."""
    notebook = nbformat.read(
        course / "submitted" / "sample-honest" / name / f"{name}.ipynb", as_version=4
    )
    if edit:
        edit(notebook)
    folder = course / "submitted" / student / name
    folder.mkdir(parents=True)
    nbformat.write(notebook, folder / f"{name}.ipynb")


def _grade(cli, course: Path, name: str, student: str):
    """nbgrader's autograde with the course's sanitizing steps, which gradacc-grade runs too.

    The course refuses plain `nbgrader autograde` (gradacc_grader.plain_autograde); these
    tests read its log of the sanitizing steps, so they set back the exporter, as
    gradacc-grade does.
    """
    plain = "--Autograde.exporter_class=nbconvert.exporters.NotebookExporter"
    command = ["nbgrader", "autograde", name, "--student", student, "--force", plain]
    return cli(command, cwd=course)


@pytest.mark.slow
def test_an_edited_locked_cell_is_reported_and_an_untouched_one_is_not(course_copy, cli):
    def edit(notebook):
        cell = next(
            c
            for c in notebook.cells
            if c.metadata.get("nbgrader", {}).get("grade_id") == "l5_steps_prompt"
        )
        cell.source = "I changed the question."

    _submit(course_copy, "ada", "lesson5_training")
    _submit(course_copy, "bob", "lesson5_training", edit)
    untouched = _grade(cli, course_copy, "lesson5_training", "ada")
    edited = _grade(cli, course_copy, "lesson5_training", "bob")
    assert untouched.returncode == edited.returncode == 0
    assert "has changed" not in untouched.stderr and "was edited" not in untouched.stderr
    assert "Cell l5_steps_prompt was edited by the student" in edited.stderr


@pytest.mark.slow
def test_grading_again_marks_a_hand_graded_answer_as_waiting(course_copy, cli):
    from nbgrader.api import Gradebook

    _submit(course_copy, "ada", "gradacc_faq")
    assert _grade(cli, course_copy, "gradacc_faq", "ada").returncode == 0
    db = f"sqlite:///{course_copy / 'gradebook.db'}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Gradebook(db) as gradebook:
            grade = gradebook.find_grade("faq5_written", "gradacc_faq", "gradacc_faq", "ada")
            grade.manual_score, grade.needs_manual_grade = 2.0, False  # as formgrader does
            gradebook.db.commit()
        assert _grade(cli, course_copy, "gradacc_faq", "ada").returncode == 0
        with Gradebook(db) as gradebook:
            grade = gradebook.find_grade("faq5_written", "gradacc_faq", "gradacc_faq", "ada")
            # the score is kept, but the answer waits for the instructor again
            assert grade.manual_score == 2.0 and grade.needs_manual_grade


@pytest.mark.slow
def test_the_exchange_round_trip_the_guide_describes(course_copy, tmp_path, cli):
    exchange, desk = tmp_path / "exchange", tmp_path / "student"
    exchange.mkdir()
    exchange.chmod(0o777)  # as the guide says: it must exist and be writable by everyone
    desk.mkdir()
    root = f"--Exchange.root={exchange}"
    name, course = "lesson5_training", ["--course", "gradacc", root]
    assert cli(["nbgrader", "release_assignment", name, root], cwd=course_copy).returncode == 0
    assert cli(["nbgrader", "fetch_assignment", name, *course], cwd=desk).returncode == 0
    honest = course_copy / "submitted" / "sample-honest" / name / f"{name}.ipynb"
    (desk / name / f"{name}.ipynb").write_bytes(honest.read_bytes())
    assert cli(["nbgrader", "submit", name, *course], cwd=desk).returncode == 0
    assert cli(["nbgrader", "collect", name, root], cwd=course_copy).returncode == 0
    student = getpass.getuser()
    assert _grade(cli, course_copy, name, student).returncode == 0
    assert cli(["nbgrader", "generate_feedback", name], cwd=course_copy).returncode == 0
    # release_feedback copies into the exchange: it fails without one ...
    missing = cli(
        ["nbgrader", "release_feedback", name, f"--Exchange.root={tmp_path / 'none'}"],
        cwd=course_copy,
    )
    quoted = "Unwritable directory, please contact your instructor"
    assert missing.returncode != 0 and quoted in missing.stderr
    assert quoted in " ".join(GUIDE.split())
    # ... and works with it, for submissions that came through it
    done = cli(["nbgrader", "release_feedback", name, root], cwd=course_copy)
    assert done.returncode == 0, done.stderr
    assert cli(["nbgrader", "fetch_feedback", name, *course], cwd=desk).returncode == 0
    assert list(desk.glob(f"{name}/feedback/*/{name}.html"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_formgraders_manual_grading_lists_the_written_answers(course_copy, tmp_path, cli):
    _submit(course_copy, "ada", "gradacc_faq")
    assert _grade(cli, course_copy, "gradacc_faq", "ada").returncode == 0
    port, token = _free_port(), secrets.token_hex(16)
    env_dirs = {name: tmp_path / name for name in ("config", "runtime")}
    for folder in env_dirs.values():
        folder.mkdir()
    server = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "jupyter"),
            "server",
            "--no-browser",
            f"--port={port}",
            "--ServerApp.ip=127.0.0.1",
            f"--IdentityProvider.token={token}",
            "--allow-root",
        ],
        cwd=course_copy,
        env={
            "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
            "HOME": str(tmp_path),
            "JUPYTER_RUNTIME_DIR": str(env_dirs["runtime"]),
        },
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        base, query = f"http://127.0.0.1:{port}/formgrader", f"?token={token}"
        # the sidebar link the guide names, then the data behind its pages
        assert "Manual Grading" in _get(f"{base}/gradebook{query}")
        listed = json.loads(_get(f"{base}/api/submitted_notebooks/gradacc_faq/gradacc_faq{query}"))
        ada = next(entry for entry in listed if entry["student"] == "ada")
        assert ada["needs_manual_grade"]
        page = _get(f"{base}/submissions/{ada['id']}/{query}")
        assert "faq5_written" in page
    finally:
        server.terminate()
        server.wait(timeout=30)


def _get(url: str, tries: int = 60) -> str:
    for _ in range(tries):
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                return response.read().decode("utf-8")
        except OSError:
            time.sleep(1)
    raise AssertionError(f"no answer from {url}")
