"""gradacc-build with real nbgrader: what the instructor gets, and what students never see."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import stat
import sys
import warnings
from contextlib import closing
from pathlib import Path

import nbformat
import pytest
from gradacc_grader.bank import ASSIGNMENTS
from gradacc_grader.bank.faq import GUIDE
from gradacc_grader.build import new_gradebook
from gradacc_grader.guards import hidden_lines, without_hidden_tests
from nbgrader.nbgraderformat import MetadataValidator

BIN = Path(sys.executable).parent  # nbgrader runs this venv's `alembic`

pytestmark = pytest.mark.slow
NAMES = [a.name for a in ASSIGNMENTS]


def _notebook(course, folder, name):
    return nbformat.read(course / folder / name / f"{name}.ipynb", as_version=4)


def _secret_lines(source) -> set[str]:
    """Lines of the hidden tests that appear nowhere outside them (imports are no secret)."""
    hidden = set().union(*(hidden_lines(cell.source) for cell in source.cells))
    shown = {
        line.strip()
        for cell in source.cells
        for line in without_hidden_tests(cell.source).splitlines()
    }
    return hidden - shown


def _solution_lines(source) -> set[str]:
    """Lines of the solutions that the source shows nowhere else (lesson 2 shows a loop to fix)."""
    solutions, shown = set(), set()
    for cell in source.cells:
        parts = cell.source.split("### BEGIN SOLUTION")
        for part in parts[1:]:
            inside, _, after = part.partition("### END SOLUTION")
            solutions |= {line.strip() for line in inside.splitlines() if line.strip()}
            shown |= {line.strip() for line in after.splitlines()}
        shown |= {line.strip() for line in parts[0].splitlines()}
    return solutions - shown


def test_a_fresh_course_gets_a_secret_readable_by_its_owner_only(tmp_path, cli):
    course = tmp_path / "course"
    done = cli(["gradacc-build", "--course", str(course), "--assignment", "lesson5_training"])
    assert done.returncode == 0, done.stderr
    secret = course / "instructor.secret"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert len(secret.read_text().strip()) == 64
    assert (course / "nbgrader_config.py").is_file()
    assert (course / "release" / "lesson5_training" / "lesson5_training.ipynb").is_file()


def _tables_and_revision(database) -> tuple[list, list]:
    with closing(sqlite3.connect(database)) as db:
        tables = db.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
        return tables, db.execute("SELECT version_num FROM alembic_version").fetchall()


def test_the_new_gradebook_is_the_one_nbgrader_creates(tmp_path, monkeypatch):
    from nbgrader.api import Gradebook

    new_gradebook(tmp_path / "ours.db")
    # nbgrader's own: its tables, and the revision a new `alembic heads` process prints
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ['PATH']}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SQLAlchemy's SAWarnings about nbgrader's models
        with Gradebook(f"sqlite:///{tmp_path / 'nbgraders.db'}"):
            pass
    ours, nbgraders = (_tables_and_revision(tmp_path / n) for n in ("ours.db", "nbgraders.db"))
    assert ours == nbgraders and len(ours[0]) > 10 and len(ours[1]) == 1, (ours, nbgraders)
    with Gradebook(f"sqlite:///{tmp_path / 'ours.db'}") as gradebook:  # nbgrader opens it
        gradebook.add_assignment("a")
        assert [a.name for a in gradebook.assignments] == ["a"]


def test_every_assignment_has_its_source_release_and_key(built):
    from nbgrader.api import Gradebook

    for assignment in ASSIGNMENTS:
        name = assignment.name
        MetadataValidator().validate_nb(_notebook(built, "source", name))
        assert sorted(p.name for p in (built / "release" / name).iterdir()) == [f"{name}.ipynb"]
        key = json.loads((built / "keys" / f"{name}.json").read_text())
        assert stat.S_IMODE((built / "keys" / f"{name}.json").stat().st_mode) == 0o600
        assert sum(cell["points"] for cell in key["cells"]) == assignment.points
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SQLAlchemy's SAWarnings on nbgrader's queries
        with Gradebook(f"sqlite:///{built / 'gradebook.db'}") as gradebook:
            for assignment in ASSIGNMENTS:
                assert gradebook.find_assignment(assignment.name).max_score == assignment.points


def test_building_again_changes_nothing(course_copy, cli):
    before = {p: p.read_bytes() for p in course_copy.glob("source/*/*.ipynb")}
    done = cli(["gradacc-build", "--course", str(course_copy)])
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("up to date") == len(ASSIGNMENTS), done.stdout
    assert {p: p.read_bytes() for p in course_copy.glob("source/*/*.ipynb")} == before


@pytest.mark.parametrize("name", NAMES)
def test_the_release_holds_nothing_of_the_instructors(built, name, test_secret):
    source = _notebook(built, "source", name)
    release = _notebook(built, "release", name)
    text = "\n".join(cell.source for cell in release.cells)
    for marker in (
        "BEGIN SOLUTION",
        "HIDDEN TESTS",
        "Rubric",
        "Model answer",
        test_secret,
    ):
        assert marker not in text, marker
    visible = {line.strip() for cell in release.cells for line in cell.source.splitlines()}
    for line in _secret_lines(source):
        assert line not in visible, f"hidden test line in the release: {line}"
    for line in _solution_lines(source):
        assert line not in visible, f"solution line in the release: {line}"
    key = json.loads((built / "keys" / f"{name}.json").read_text())
    for cell in key["cells"]:
        if cell["kind"] == "choice":
            assert not re.search(rf'{cell["variable"]}\s*=\s*"[A-D]"', text)


def test_the_yoruba_final_keeps_the_key_and_asks_the_guides_questions(course_copy, cli):
    english = json.loads((course_copy / "keys" / "gradacc_faq.json").read_text())
    done = cli(
        [
            "gradacc-build",
            "--course",
            str(course_copy),
            "--lang",
            "yo",
            "--assignment",
            "gradacc_faq",
        ]
    )
    assert done.returncode == 0, done.stderr
    release = _notebook(course_copy, "release", "gradacc_faq")
    text = "\n".join(cell.source for cell in release.cells)
    assert all(GUIDE[k]["yo"] in text for k in GUIDE)
    yoruba = json.loads((course_copy / "keys" / "gradacc_faq.json").read_text())
    assert yoruba["lang"] == "yo"
    # the same letters and exercises; only the explanations are in the release's language
    for cell in (*yoruba["cells"], *english["cells"]):
        cell.pop("why", None)
    assert yoruba["cells"] == english["cells"]


def test_an_assignment_with_submissions_is_not_rebuilt_with_other_questions(course_copy, cli):
    from nbgrader.api import Gradebook

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Gradebook(f"sqlite:///{course_copy / 'gradebook.db'}") as gradebook:
            gradebook.add_student("ada")
            gradebook.add_submission("lesson1_full_batch", "ada")
    source = course_copy / "source" / "lesson1_full_batch" / "lesson1_full_batch.ipynb"
    before = source.read_text()
    (course_copy / "instructor.secret").write_text("7a" * 32 + "\n")  # a new term's secret
    done = cli(
        [
            "gradacc-build",
            "--course",
            str(course_copy),
            "--assignment",
            "lesson1_full_batch",
            "--assignment",
            "lesson5_training",
        ]
    )
    assert done.returncode == 0, done.stderr
    assert "lesson1_full_batch: NOT rebuilt: 1 students have submitted it" in done.stdout
    assert source.read_text() == before
    assert "lesson5_training (en, 3 points): written" in done.stdout


def test_two_secrets_give_two_answer_keys(built, tmp_path, cli, course_with_secret):
    other = course_with_secret(tmp_path / "other", "c3" * 32)
    done = cli(["gradacc-build", "--course", str(other), "--assignment", "gradacc_faq"])
    assert done.returncode == 0, done.stderr
    keys = [json.loads((c / "keys" / "gradacc_faq.json").read_text()) for c in (built, other)]
    letters = ["".join(c.get("letter", "") for c in k["cells"]) for k in keys]
    assert letters[0] != letters[1]
    releases = [
        "\n".join(c.source for c in _notebook(c, "release", "gradacc_faq").cells)
        for c in (built, other)
    ]
    assert releases[0] != releases[1]  # other numbers, other order


@pytest.mark.parametrize("name", NAMES)
def test_a_released_exercise_cell_defines_the_function_to_complete(built, name):
    from gradacc_grader.bank.core import Exercise

    assignment = next(a for a in ASSIGNMENTS if a.name == name)
    release = {
        c.metadata.get("nbgrader", {}).get("grade_id"): c
        for c in _notebook(built, "release", name).cells
    }
    for item in assignment.items:
        if isinstance(item, Exercise):
            namespace: dict = {}
            exec(release[f"{item.id}_answer"].source, namespace)  # runs: the stub is in the body
            function = next(
                v
                for k, v in namespace.items()
                if callable(v) and k[0] != "_" and k not in ("F", "torch", "contextlib")
            )
            with pytest.raises(NotImplementedError):
                function(*[None] * function.__code__.co_argcount)


def test_the_releases_ask_what_the_cue_statistics_measure(built, test_secret):
    # test_cues plays test-wise strategies on releases drawn in memory; the notebooks nbgrader
    # released show exactly those choices, in that order, with that key
    from gradacc_grader.draw import Asked, draw_release

    for assignment in ASSIGNMENTS:
        drawn = draw_release(assignment, test_secret.encode())
        asked = [item for item in drawn.items if isinstance(item, Asked)]
        release = _notebook(built, "release", assignment.name)
        shown = [
            re.findall(r"^- \*\*([A-D])\.\*\* (.*)$", cell.source, re.MULTILINE)
            for cell in release.cells
            if cell.source.startswith("### Question")
        ]
        assert shown == [[("ABCD"[i], c.text) for i, c in enumerate(q.choices)] for q in asked]
        key = json.loads((built / "keys" / f"{assignment.name}.json").read_text())
        letters = [cell["letter"] for cell in key["cells"] if cell["kind"] == "choice"]
        assert letters == [q.letter for q in asked]


@pytest.mark.parametrize("name", NAMES)
def test_nothing_secret_is_in_a_cell_the_students_kernel_runs(built, name, test_secret):
    """Issue 20: the kernel runs the locked and test cells as the source holds them, and the
    student's own cells. No letter, explanation, seed or reference may be in the former."""
    import inspect

    from gradacc_grader.draw import Seeded, draw_release
    from gradacc_grader.scoring import exercise

    source = _notebook(built, "source", name)
    kernel = "\n".join(
        cell.source
        for cell in source.cells
        if cell.cell_type == "code" and not cell.metadata.nbgrader.get("solution")
    )
    key = json.loads((built / "keys" / f"{name}.json").read_text())
    release = draw_release(next(a for a in ASSIGNMENTS if a.name == name), test_secret.encode())
    for cell in key["cells"]:
        if cell["kind"] == "choice":
            assert f'"{cell["letter"]}"' not in kernel and f"'{cell['letter']}'" not in kernel
            for why in cell["why"].values():
                assert why not in kernel, why
        elif cell["kind"] == "exercise":
            # no two lines of the reference in a row (a quick check may share one line of
            # plain torch with it, `torch.nn.functional.cross_entropy(`)
            reference = inspect.getsource(exercise(cell["module"])["expected"])
            lines = [line.strip() for line in reference.splitlines()[2:] if line.strip()]
            shown = "\n".join(line.strip() for line in kernel.splitlines())
            assert "def expected" not in shown
            for pair in zip(lines, lines[1:]):
                assert "\n".join(pair) not in shown, pair
    for item in release.items:
        if isinstance(item, Seeded):
            assert str(item.seed) not in kernel
    metadata = json.dumps(source.metadata) + json.dumps([c.metadata for c in source.cells])
    assert not re.search(r'"letter"|"why"|seed', metadata)
