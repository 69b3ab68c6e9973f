"""gradacc-build: write every graded assignment of a course from the bank and the secret.

    gradacc-build --course quizzes/course            # what `make quizzes` runs
    gradacc-build --course quizzes/course --lang yo  # the final in Yoruba, the rest in English
    gradacc-build --course quizzes/course --roster students.csv   # and the class's students

For each assignment: draws its release with the course's secret (created, mode 0600, on the
first run), writes `source/<name>/<name>.ipynb` and the answer key `keys/<name>.json`, then
runs nbgrader's generate_assignment, which writes `release/<name>/` and the gradebook. The
same secret and bank always give the same notebooks. An assignment whose source would change
while students have submitted it is left alone (nbgrader could no longer grade them).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import nbformat

from gradacc_grader.bank import ASSIGNMENTS
from gradacc_grader.draw import LETTERS, Asked, Release, Seeded, draw_release
from gradacc_grader.notebook import TEXT, build_notebook
from gradacc_grader.private import make_course_private, private_umask
from gradacc_grader.roster import import_roster, read_roster
from gradacc_grader.sample_class import write_sample_class
from gradacc_grader.secret import ensure_secret

CONFIG = """\
# nbgrader configuration of a gradacc course: the settings and why are in
# gradacc_grader/settings.py; add your own below the call to change them.
from gradacc_grader.private import use_private_umask
from gradacc_grader.settings import configure

c = get_config()  # noqa: F821 (nbgrader defines get_config when it reads this file)
configure(c)
# What this nbgrader command writes (gradebook, autograded copies, feedback, exports) holds
# answers or grades: readable by you only, whatever your umask (gradacc_grader/private.py).
use_private_umask()
"""


def answer_key(release: Release) -> dict:
    """What the grader needs to score outside the sandbox: each grade cell's right letter and
    the explanation of every choice, or its exercise module. It stays in keys/, which no
    sandbox sees.

    >>> from gradacc_grader.bank.lesson2 import LESSON2
    >>> key = answer_key(draw_release(LESSON2, b"s" * 64))
    >>> [(cell["grade_id"], cell["kind"], cell["points"]) for cell in key["cells"]][2]
    ('l2_token_loop_test', 'exercise', 3)
    """
    cells = []
    for item in release.items:
        if isinstance(item, Asked):
            cells.append(
                {
                    "grade_id": f"{item.item.id}_test",
                    "kind": "choice",
                    "points": item.item.points,
                    "variable": f"answer_{item.item.id}",
                    "letter": item.letter,
                    # what each choice gets right or wrong: the grader's message, never the kernel's
                    "why": {LETTERS[i]: choice.why for i, choice in enumerate(item.choices)},
                }
            )
        elif isinstance(item, Seeded):
            cells.append(
                {
                    "grade_id": f"{item.item.id}_test",
                    "kind": "exercise",
                    "points": item.item.points,
                    "answer_cell": f"{item.item.id}_answer",
                    "module": item.item.module,
                }
            )
        else:
            cells.append({"grade_id": item.id, "kind": "written", "points": item.points})
    return {"assignment": release.assignment.name, "lang": release.lang, "cells": cells}


def notebook_text(release: Release) -> str:
    """The source notebook of a release, as the exact text written to disk."""
    return nbformat.writes(build_notebook(release), version=4) + "\n"


def write_release(course: Path, release: Release) -> bool:
    """Write the source notebook and answer key; False when they were already up to date."""
    name = release.assignment.name
    source = course / "source" / name / f"{name}.ipynb"
    text = notebook_text(release)
    key = course / "keys" / f"{name}.json"
    if source.is_file() and source.read_text(encoding="utf-8") == text and key.is_file():
        return False
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(text, encoding="utf-8")
    key.parent.mkdir(exist_ok=True)
    key.write_text(json.dumps(answer_key(release), indent=1) + "\n", encoding="utf-8")
    os.chmod(key, 0o600)  # the answer key: the instructor's eyes only, like the secret
    return True


def submitted(course: Path, name: str) -> list[str]:
    """Students with a submission of `name` recorded in the course's gradebook."""
    if not (course / "gradebook.db").is_file():
        return []
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        try:
            assignment = gradebook.find_assignment(name)
        except MissingEntry:
            return []
        return sorted(s.student.id for s in assignment.submissions)


def generate(course: Path, names: list[str], langs: dict[str, str] | None = None) -> None:
    """Run nbgrader's generate_assignment on each of `names` (writes release/ and the gradebook).

    `langs` ({name: "en" or "yo"}, "en" where missing): the language of the stubs nbgrader
    leaves in place of the solutions ("# YOUR CODE HERE" and its Yorùbá).
    """
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    first = not (course / "gradebook.db").exists()
    if first:
        new_gradebook(course / "gradebook.db")
    for name in names:
        config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
        config.CourseDirectory.root = str(course)
        lang = (langs or {}).get(name, "en")
        if lang != "en":
            config.ClearSolutions.code_stub = {"python": TEXT[lang]["code_stub"]}
            config.ClearSolutions.text_stub = TEXT[lang]["text_stub"]
        api = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)
        result = api.generate_assignment(name, force=True)
        if not result["success"]:
            if first:  # a half-made new gradebook would block the next run
                (course / "gradebook.db").unlink(missing_ok=True)
            raise RuntimeError(f"nbgrader could not generate {name}:\n{result['log'][-3000:]}")


def new_gradebook(path: Path) -> None:
    """Create an empty gradebook at `path`, the one nbgrader's Gradebook creates, in this process.

    nbgrader 0.9.6 (nbgrader/api.py: Gradebook.__init__ and get_alembic_version) creates its
    tables, then runs `alembic heads` in a new process for the schema's revision, which it
    writes into an `alembic_version` table: 2 s of CPU (a Python importing alembic and
    SQLAlchemy) for one line. This reads the same revision from nbgrader's migrations with
    alembic's API. quizzes/tests/test_build.py compares the result with nbgrader's own.
    """
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from nbgrader.api import Base
    from nbgrader.dbutil import ALEMBIC_DIR
    from sqlalchemy import create_engine, text

    migrations = Config()
    migrations.set_main_option("script_location", ALEMBIC_DIR)
    revision = ScriptDirectory.from_config(migrations).get_current_head()
    engine = create_engine(f"sqlite:///{path}")
    try:
        Base.metadata.create_all(bind=engine)
        with engine.begin() as db:
            db.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL);"))
            insert = "INSERT INTO alembic_version (version_num) VALUES (:revision)"
            db.execute(text(insert), {"revision": revision})
    finally:
        engine.dispose()


def build_course(
    course: Path, lang: str = "en", only: list[str] | None = None, sample_class: bool = False
) -> list[str]:
    """Write and generate every assignment (or those in `only`); returns the lines to print.

    What it writes is readable by the instructor only, whatever the umask (private.py).
    """
    course = Path(course).resolve()
    with private_umask():  # put back on return, though the course's config sets it for good
        course.mkdir(parents=True, exist_ok=True)
        make_course_private(course)
        return _build_course(course, lang, only, sample_class)


def _build_course(course: Path, lang: str, only: list[str] | None, sample_class: bool):
    if not (course / "nbgrader_config.py").exists():
        (course / "nbgrader_config.py").write_text(CONFIG, encoding="utf-8")
    unknown = sorted(set(only or ()) - {a.name for a in ASSIGNMENTS})
    if unknown:
        raise ValueError(
            f"assignment={unknown[0]!r} is not in the bank; build one of "
            f"{', '.join(a.name for a in ASSIGNMENTS)} (or leave --assignment out for all)"
        )
    secret = ensure_secret(course)
    lines, changed, releases = [], [], []
    for assignment in ASSIGNMENTS:
        if only and assignment.name not in only:
            continue
        edition = lang if lang in assignment.languages else "en"
        release = draw_release(assignment, secret, edition)
        students = submitted(course, assignment.name)
        source = course / "source" / assignment.name / f"{assignment.name}.ipynb"
        if students and (
            not source.is_file() or source.read_text(encoding="utf-8") != notebook_text(release)
        ):
            lines.append(
                f"{assignment.name}: NOT rebuilt: {len(students)} students have submitted it "
                "and its questions would change"
            )
            continue
        releases.append(release)
        fresh = write_release(course, release)
        if fresh or not (course / "release" / assignment.name).is_dir():
            changed.append(assignment.name)
        lines.append(
            f"{assignment.name} ({edition}, {assignment.points} points): "
            + ("written" if fresh else "up to date")
        )
    generate(course, changed, {r.assignment.name: r.lang for r in releases})
    if sample_class:
        expected = write_sample_class(course, releases)
        lines.append(f"sample class written to {course / 'submitted'}; deserved points: {expected}")
    return lines


def parser() -> argparse.ArgumentParser:
    """The command line of gradacc-build."""
    parser = argparse.ArgumentParser(
        prog="gradacc-build",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--course", type=Path, required=True, help="the nbgrader course folder")
    parser.add_argument(
        "--lang",
        choices=("en", "yo"),
        default="en",
        help="language of the FAQ assignment (the others are English)",
    )
    parser.add_argument("--assignment", action="append", help="build only this one (repeatable)")
    parser.add_argument(
        "--sample-class",
        action="store_true",
        help="also write dry-run submissions to rehearse on (see sample_class.py)",
    )
    parser.add_argument(
        "--roster",
        type=Path,
        help="add the students of this CSV (columns id, first_name, last_name, email, "
        "lms_user_id) to the gradebook; refused whole if a field holds markup (roster.py)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """The console script gradacc-build; 0 when every assignment was built."""
    args = parser().parse_args(argv)
    try:
        if args.roster:
            read_roster(args.roster)  # a refused roster: refused before anything is built
        for line in build_course(args.course, args.lang, args.assignment, args.sample_class):
            print(line)
        if args.roster:
            print(import_roster(args.course, args.roster))
    except (ValueError, RuntimeError, OSError) as error:
        print(f"gradacc-build: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
