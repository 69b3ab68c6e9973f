"""Students' names and ids are data: checked where they enter, escaped where they are shown.

A name comes from what a student typed (a sign-up form, a roster exported from a platform, a
self-learner's e-mail). nbgrader 0.9.6 shows it as markup in one place: formgrader's Manual
Grading page of a submission (`nbgrader/server_extensions/formgrader/templates/formgrade/
formgrade_macros.html.j2`, macro `nav`: `{{ resources.last_name }}, {{ resources.first_name }}`,
else `{{ resources.student }}`; the resources come from the gradebook in `handlers.py`,
`SubmissionHandler.get`, and are rendered by nbconvert's `HTMLExporter` with Jinja's autoescape
off). The lists (students, submissions) write names with jQuery's `.text()`, as text. So:

- where a name enters the gradebook (`nbgrader db student add/import`, formgrader's student
  dialog, `gradacc-build --roster`), a field holding markup or a control character is refused,
  naming the student, the field and the character (`check_student`, `guard_gradebook`);
- where formgrader renders a submission, `EscapeStudentFields`, a preprocessor of that
  `HTMLExporter` (`c.HTMLExporter.preprocessors`, gradacc_grader.settings), escapes the
  student's fields of the page's resources, for names that entered before this check.
"""

from __future__ import annotations

import html
import sqlite3
import unicodedata
from contextlib import closing
from pathlib import Path

from nbconvert.preprocessors import Preprocessor

from gradacc_grader.terminal_text import visible

# A tag or an entity starts with these; a quote ends an attribute's value.
MARKUP = set('<>"&`')
_BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# The student's fields of nbgrader's gradebook (nbgrader.api.Student), as nbgrader names them.
FIELDS = ("id", "first_name", "last_name", "email", "lms_user_id")


def bad_characters(text: str) -> list[str]:
    """The characters of `text` that are markup or control characters, each once, in order.

    >>> bad_characters("Adéwálé O'Brien-Ng"), bad_characters('<img src=x onerror="1">')
    ([], ['<', '"', '>'])
    >>> bad_characters("Ada\\x1b]0;pwned\\x07")
    ['\\x1b', '\\x07']
    """
    found = []
    for char in str(text):
        control = unicodedata.category(char) in ("Cc", "Zl", "Zp") or char in _BIDI
        if (control or char in MARKUP) and char not in found:
            found.append(char)
    return found


def describe(char: str) -> str:
    """A character as an instructor can read it, whatever it is: `'<' (U+003C)`.

    >>> describe("<"), describe("\\x1b")
    ("'<' (U+003C)", "'\\\\x1b' (U+001B)")
    """
    return f"'{visible(char)}' (U+{ord(char):04X})"


def check_student(student_id: str, fields: dict) -> list[str]:
    """Why the student's fields cannot enter the gradebook: one line per bad field.

    >>> check_student("ada", {"first_name": "Ada", "last_name": "Lovelace"})
    []
    >>> print(check_student("mal", {"last_name": "<img src=x>"})[0].split(": names")[0])
    student 'mal': last_name holds '<' (U+003C), '>' (U+003E)
    """
    problems = []
    for field, value in {"id": student_id, **fields}.items():
        if field not in FIELDS or value is None:
            continue
        bad = bad_characters(str(value))
        if bad:
            problems.append(
                f"student {visible(student_id)!r}: {field} holds "
                f"{', '.join(describe(c) for c in bad)}: names are shown in formgrader, the "
                'feedback and certificates as text; remove markup (< > " & `) and control '
                "characters"
            )
    return problems


def _refuse(target, value, oldvalue, initiator):
    """SQLAlchemy's `set` event of a Student field: refuse markup and control characters."""
    if value is None:
        return value
    student = value if initiator.key == "id" else getattr(target, "id", None) or "?"
    problems = check_student(str(student), {initiator.key: value})
    if problems:
        raise ValueError(problems[0])
    return value


def guard_gradebook() -> None:
    """Refuse markup and control characters in every student field nbgrader sets, in this
    process (the course's nbgrader_config.py calls it through settings.configure).

    nbgrader has no hook of its own where students enter; SQLAlchemy's attribute events on
    nbgrader's `Student` model see every way in: `nbgrader db student add` and `import`,
    formgrader's student dialog, autograde's own `update_or_create_student`.
    """
    from nbgrader.api import Student
    from sqlalchemy import event

    for field in FIELDS:
        attribute = getattr(Student, field)
        if not event.contains(attribute, "set", _refuse):
            event.listen(attribute, "set", _refuse, retval=True)


def unsafe_names(gradebook: Path) -> list[str]:
    """check_student's lines for every student already in a gradebook (read as plain data).

    For names that entered before the course refused them: formgrader's page for a missing
    autograded notebook (nbgrader's `formgrade_404.tpl`, rendered by its own Jinja
    environment, which no setting reaches) still writes them unescaped.
    """
    columns = ", ".join(FIELDS)
    read_only = f"{Path(gradebook).resolve().as_uri()}?mode=ro"
    with closing(sqlite3.connect(read_only, uri=True)) as db:
        rows = db.execute(f"SELECT {columns} FROM student ORDER BY id").fetchall()
    problems = []
    for row in rows:
        problems += check_student(str(row[0]), dict(zip(FIELDS[1:], row[1:], strict=True)))
    return problems


class EscapeStudentFields(Preprocessor):
    """Escape the student's fields in the resources of formgrader's Manual Grading page.

    nbgrader 0.9.6's `formgrade` template writes them unescaped (see the module's docstring);
    run as a preprocessor of that `HTMLExporter`, this hands the template HTML-escaped text.
    Other exports (generate_feedback's) hold none of these keys and pass through unchanged.
    """

    keys = ("first_name", "last_name", "student", "notebook_path")

    def preprocess(self, nb, resources):
        for key in self.keys:
            if isinstance(resources.get(key), str):
                resources[key] = html.escape(resources[key], quote=True)
        return nb, resources
