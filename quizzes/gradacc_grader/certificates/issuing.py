"""Issuing certificates from an nbgrader gradebook: who passed, and their signed files.

A student gets a certificate for an assignment when their total (autograded and hand-graded
points) is at least ``pass_mark`` times the maximum. Nothing is issued while any submission of
the assignment still waits for hand grading: its total is not final yet. Each certificate goes
into the registry once; issuing again writes the same files again, with the same ID.
"""

from __future__ import annotations

import re
import sqlite3
import warnings
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from gradacc_grader.certificates.ids import new_id
from gradacc_grader.certificates.printable import write_printable
from gradacc_grader.certificates.records import (
    certificate_file,
    certificate_record,
    write_certificate,
)
from gradacc_grader.certificates.registry import Registry
from gradacc_grader.certificates.settings import CertificateSettings
from gradacc_grader.certificates.signing import public_key_text, sign_record

PASS_MARK = 0.7
# nbgrader adds points in floating point: 0.7 * 10 is 7.000000000000001, and a total of
# 7 must pass a 70 % mark. Points are whole or halves, so this slack decides nothing else.
SLACK = 1e-9


@dataclass
class Result:
    """A student's graded submission of one assignment, as the gradebook holds it."""

    student: str
    name: str
    score: float
    max_score: float
    needs_manual_grade: bool

    def passed(self, pass_mark: float) -> bool:
        """Whether the total reaches ``pass_mark`` (a fraction) of the maximum.

        >>> Result("ada", "Ada", 7.0, 10.0, False).passed(0.7)
        True
        >>> Result("bob", "Bob", 6.5, 10.0, False).passed(0.7)
        False
        """
        return self.max_score > 0 and self.score + SLACK >= pass_mark * self.max_score


@dataclass
class Issued:
    """What issuing did for one student: their certificate file (None: none) and why."""

    result: Result
    document: dict | None
    outcome: str

    @property
    def certificate_id(self) -> str | None:
        return self.document["certificate"]["id"] if self.document else None


def read_gradebook(course: Path, assignment: str) -> tuple[str, list[Result]]:
    """The course id and every graded submission of ``assignment`` in ``course/gradebook.db``.

    Raises:
        ValueError: no gradebook there, or no such assignment in it.

    >>> read_gradebook(Path("no-such-course"), "final")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: no-such-course holds no gradebook.db: give the nbgrader course folder ...
    """
    from nbgrader.api import Gradebook, MissingEntry

    database = Path(course) / "gradebook.db"
    if not database.is_file():
        raise ValueError(
            f"{course} holds no gradebook.db: give the nbgrader course folder (--course) "
            "where the assignment was graded"
        )
    _check_sqlite(database)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SQLAlchemy's SAWarnings about nbgrader's models
        with Gradebook(f"sqlite:///{database.resolve()}") as gradebook:
            try:
                course_id = gradebook.find_assignment(assignment).course_id
            except MissingEntry:
                known = ", ".join(a.name for a in gradebook.assignments) or "none"
                raise ValueError(
                    f"the gradebook of {course} has no assignment {assignment!r} (it has: {known})"
                ) from None
            results = [_result(s) for s in gradebook.assignment_submissions(assignment)]
    return course_id, sorted(results, key=lambda r: r.student)


def _check_sqlite(database: Path) -> None:
    # nbgrader's Gradebook creates its tables in any file it is given: look before it does.
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
            tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
    except sqlite3.Error as error:
        raise ValueError(f"{database} is not an nbgrader gradebook ({error})") from None
    if "submitted_assignment" not in tables:
        raise ValueError(f"{database} is not an nbgrader gradebook")


def _result(submission) -> Result:
    student = submission.student
    name = " ".join(part for part in (student.first_name, student.last_name) if part)
    return Result(
        student=student.id,
        name=name or student.id,
        score=float(submission.score),
        max_score=float(submission.max_score),
        needs_manual_grade=bool(submission.needs_manual_grade),
    )


def issue_certificates(
    course: Path,
    assignment: str,
    key,
    out: Path,
    registry_path: Path,
    *,
    pass_mark: float = PASS_MARK,
    student: str | None = None,
    settings: CertificateSettings,
    course_version: str,
    fonts: dict,
    today: date | None = None,
) -> list[Issued]:
    """Issue a certificate to each student of ``assignment`` who passed, into ``out``.

    Writes ``out/<student>/gradacc-certificate-<ID>.json`` (the signed record) and ``.pdf``
    (the printable page) for each, and records each ID in the registry.

    Args:
        course: the nbgrader course folder (holds ``gradebook.db``).
        assignment: the assignment whose total decides.
        key: the issuer's private key.
        out: the folder for the certificates.
        registry_path: the registry (SQLite), created when missing.
        pass_mark: the fraction of the maximum a student needs, in (0, 1].
        student: only this student (a self-learner), or None for the whole class.
        settings: the course's title, the issuer, the assignment's title, the
            verification page's address (for the QR code) and the page's language.
        course_version: the course's version, stated on the certificate.
        fonts: the fonts of the printable page (see ``printable.write_printable``).
        today: the date of issue (default: today).

    Returns:
        One ``Issued`` per graded student.

    Raises:
        ValueError: hand grading is pending (it names the students), the student has no
            graded submission, a setting is missing (it names the option to give), or
            the registry belongs to another key.

    The tests (quizzes/tests/certificates) issue to whole classes; here, a course without
    a gradebook:

    >>> issue_certificates(Path("no-such-course"), "final", None, Path("out"), Path("r"),
    ...     settings=CertificateSettings(), course_version="", fonts={})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: no-such-course holds no gradebook.db: ...
    """
    course_id, results = read_gradebook(course, assignment)
    results = _chosen(results, assignment, student)
    pending = [r.student for r in results if r.needs_manual_grade]
    if pending:
        raise ValueError(
            f"hand grading of {assignment} is pending for {', '.join(pending)}: grade them "
            "(formgrader's Manual Grading), then issue again; no certificate was issued"
        )
    missing = settings.missing(assignment)
    if missing:
        raise ValueError(
            f"say once what {course}'s certificates state: gradacc-certify settings --course "
            f"{course} {' '.join(missing)}; no certificate was issued"
        )
    facts = {"course": course_id, "assignment": assignment, "course_version": course_version}
    facts["course_title"], facts["issuer"] = settings.course_title, settings.issuer
    facts["assignment_title"] = settings.title_of(assignment)
    facts["day"] = today or date.today()
    with Registry(registry_path, create=True) as registry:
        registry.claim_issuer(public_key_text(key.public_key()))
        issued = [_issue_one(registry, result, key, pass_mark, facts) for result in results]
    # the registry is saved first: if writing a file fails, issuing again writes it again
    for item in issued:
        if item.document:
            folder = out / _folder_name(item.result.student)
            _write_files(item.document, folder, settings, fonts)
    return issued


def _issue_one(registry: Registry, result: Result, key, pass_mark: float, facts: dict) -> Issued:
    """Decide for one student, and sign and register their certificate when it is new."""
    held = registry.find(facts["course"], facts["assignment"], result.student)
    if not result.passed(pass_mark):
        note = f"; holds {held['id']}: revoke it if it must not stand" if held else ""
        return Issued(result, None, f"below the pass mark{note}")
    if held:
        return Issued(result, certificate_file(held), "already issued: files written again")
    record = certificate_record(
        _free_id(registry),
        name=result.name,
        score=result.score,
        max_score=result.max_score,
        **facts,
    )
    entry = sign_record(record, key)
    registry.add(record["id"], facts["course"], facts["assignment"], result.student, entry)
    return Issued(result, certificate_file(entry), "issued")


def _chosen(results: list[Result], assignment: str, student: str | None) -> list[Result]:
    if student is None:
        return results
    chosen = [r for r in results if r.student == student]
    if not chosen:
        raise ValueError(
            f"the gradebook holds no graded submission of {assignment} by {student!r}: "
            "grade it first (gradacc-grade ... --student)"
        )
    return chosen


def _free_id(registry: Registry) -> str:
    """A new ID that no certificate in the registry holds yet."""
    while True:
        certificate_id = new_id()
        if not registry.holds(certificate_id):
            return certificate_id


def _folder_name(student: str) -> str:
    # nbgrader's student ids are folder names already; this keeps any other one inside out/.
    return re.sub(r"[^\w.@+-]", "_", student).lstrip(".") or "_"


def _write_files(document: dict, folder: Path, settings: CertificateSettings, fonts: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"gradacc-certificate-{document['certificate']['id']}"
    write_certificate(document, folder / f"{stem}.json")
    pdf = folder / f"{stem}.pdf"
    write_printable(document["certificate"], settings.verify_url, pdf, fonts, settings.language)
