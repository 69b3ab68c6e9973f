"""Issuing certificates from an nbgrader gradebook: who passed, and their signed files.

A student gets a certificate for an assignment when their total (autograded and hand-graded
points) is at least ``pass_mark`` times the maximum. Nothing is issued while any submission of
the assignment still waits for hand grading: its total is not final yet. Each certificate is an
Open Badges credential, kept in the issuer's registry once; issuing again writes the same files
again, with the same ID. A certificate of the older format (a signed JSON record) is migrated:
its learner gets a credential under the same ID, and no older-format record is made any more.
"""

from __future__ import annotations

import dataclasses
import re
import sqlite3
import warnings
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from pathlib import Path

from gradacc_grader.certificates import badge, baking, names, status_lists, vcjwt
from gradacc_grader.certificates.ids import new_id
from gradacc_grader.certificates.printable import problem_with, write_printable
from gradacc_grader.certificates.records import certificate_file, check_name, normalize_name
from gradacc_grader.certificates.registry import Registry
from gradacc_grader.certificates.settings import CertificateSettings
from gradacc_grader.certificates.signing import fingerprint, public_key_text
from gradacc_grader.certificates.untrusted import parse_json_object

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
    """What issuing did for one student: their certificate file (None: none) and why.

    ``held`` is the ID of a certificate the student holds when no file was written for it
    (revoked, or their total is now below the pass mark).
    """

    result: Result
    document: dict | None
    outcome: str
    held: str | None = None
    credential: dict | None = None  # {"facts", "token"}: the Open Badges credential

    @property
    def certificate_id(self) -> str | None:
        if self.credential:
            return self.credential["facts"]["id"]
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
    # nbgrader keeps the late penalty apart from the points: the total a grade book shows is
    # the points less the penalty (never below 0)
    penalty = float(submission.late_submission_penalty or 0)
    return Result(
        student=student.id,
        name=normalize_name(name or student.id),
        score=max(0.0, float(submission.score) - penalty),
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
    accept_names: frozenset[str] = frozenset(),
    emails: dict[str, str] | None = None,
) -> list[Issued]:
    """Issue a certificate to each student of ``assignment`` who passed, into ``out``.

    Writes ``out/<student>/gradacc-credential-<ID>.jwt`` (the Open Badges credential),
    ``gradacc-badge-<ID>.png`` (it, baked) and ``gradacc-certificate-<ID>.pdf`` (the printable
    page) for each, and records each credential in the registry.

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
        accept_names: students whose doubtful names (``names.doubtful``) the instructor
            accepts as they are, having read the reason.
        emails: e-mail addresses by student, stated salted and hashed in the credential.

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
    _check_out(Path(out))
    facts = {"course": course_id, "assignment": assignment, "course_version": course_version}
    facts["course_title"], facts["issuer"] = settings.course_title, settings.issuer
    facts["assignment_title"] = settings.title_of(assignment)
    facts["day"] = today or date.today()
    badge_facts = {"verify_url": settings.verify_url, "pass_mark": pass_mark, "fonts": fonts}
    badge_facts |= {"accept": accept_names, "emails": emails or {}, "key": key}
    with Registry(registry_path, create=True) as registry:
        registry.claim_issuer(public_key_text(key.public_key()))
        issued = []
        for result in results:
            refusal = result.passed(pass_mark) and _name_refused(result, badge_facts)
            if refusal:
                issued.append(Issued(result, None, refusal))
                continue
            item = _issue_one(registry, result, pass_mark, facts)
            issued.append(_with_credential(registry, item, facts, badge_facts))
    # the registry is saved first: if writing a file fails, issuing again writes it again
    for item in issued:
        if item.credential:
            folder = out / _folder_name(item.result.student)
            try:
                _write_files(item, folder, settings, fonts, key.public_key())
            except Exception as error:  # one student's PDF (fpdf2, a font) never stops the class
                reason = " ".join(str(error).split()) or type(error).__name__
                item.outcome += f", but its files could not be written ({reason}): issue again"
    return issued


def _check_out(out: Path) -> None:
    """A wrong --out stops issuing before anything is signed (it is made when first needed)."""
    existing = next(folder for folder in (out, *out.parents) if folder.exists())
    if not existing.is_dir():
        raise ValueError(f"--out {out}: {existing} is a file, not a folder")


def _issue_one(registry: Registry, result: Result, pass_mark: float, facts: dict) -> Issued:
    """Decide for one student: a certificate held in the older format is migrated (its
    document goes on to ``_with_credential``), a new one is left to ``_with_credential``.

    A student whose certificate cannot be made (a name it cannot state) is refused alone,
    with the reason; the rest of the class is issued.
    """
    held = registry.find(facts["course"], facts["assignment"], result.student)  # older format
    current = registry.current_credential(facts["course"], facts["assignment"], result.student)
    revocation = registry.revocation(held["id"]) if held else None
    if revocation:
        facts_of = parse_json_object(revocation["signed"], "the revocation")
        credential = registry.credential(held["id"])  # the reason, kept in these records only
        if credential and credential["reason"]:
            facts_of["reason"] = credential["reason"]
        return Issued(
            result,
            None,
            f"revoked on {facts_of['date']} ({facts_of['reason']}): not issued again, "
            "no files written",
            held=held["id"],
        )
    if current and current["revoked_on"]:
        return Issued(
            result,
            None,
            f"revoked on {current['revoked_on']} ({current['reason']}): not issued again, "
            "no files written",
            held=current["id"],
        )
    if not result.passed(pass_mark):
        holds = (current or held or {}).get("id")
        if holds:
            note = "revoke it if it must not stand"
            return Issued(result, None, f"below the pass mark; holds {holds}: {note}", holds)
        return Issued(result, None, "below the pass mark")
    if held:
        return Issued(result, certificate_file(held), "already issued: files written again")
    try:
        check_name(result.name)
    except ValueError as error:
        return Issued(result, None, f"refused: {error}")
    return Issued(result, None, "issued")  # the Open Badges credential alone (_with_credential)


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


def _write_files(item: Issued, folder: Path, settings, fonts: dict, public_key) -> None:
    """The learner's files: the credential (.jwt), the baked badge (.png) and the printable
    page (.pdf); no older-format JSON, whose registry no longer publishes anything."""
    folder.mkdir(parents=True, exist_ok=True)
    facts, token = item.credential["facts"], item.credential["token"]
    stem = f"gradacc-certificate-{facts['id']}"
    (folder / f"gradacc-credential-{facts['id']}.jwt").write_text(token + "\n", "ascii")
    image = baking.badge_image(badge.credential_id(settings.verify_url, facts["id"]))
    (folder / f"gradacc-badge-{facts['id']}.png").write_bytes(baking.bake(image, token))
    write_printable(
        facts,
        settings.verify_url,
        folder / f"{stem}.pdf",
        fonts,
        settings.language,
        fingerprint=fingerprint(public_key),
    )


def _name_refused(result: Result, badge_facts: dict) -> str | None:
    """Why this student's name is not signed (before anything is), or None.

    Only students who passed are asked about: a refusal names the student and the
    character, and says how to go on.
    """
    name = result.name
    never = names.never_signed(name)
    if never:
        return (
            f"refused: the name {name!r} cannot be signed: {never}; correct the name in "
            "the gradebook"
        )
    doubt = names.doubtful(name) or problem_with(name, badge_facts["fonts"] or None)
    if doubt and result.student not in badge_facts["accept"]:
        return (
            f"refused: the name {name!r}: {doubt}; correct the name in the gradebook, or issue "
            f"again with --accept-name {result.student} if the name is right as it is"
        )
    return None


def _with_credential(registry: Registry, item: Issued, facts: dict, badge_facts: dict) -> Issued:
    """Give a student who passed their Open Badges credential: the one they hold when their
    name is unchanged; a new one, superseding it, when the gradebook's name changed."""
    result = item.result
    if not (item.document or item.outcome == "issued"):
        return item  # refused, below the pass mark, or revoked
    current = registry.current_credential(facts["course"], facts["assignment"], result.student)
    if current and current["name"] == result.name:
        credential = {"facts": current["facts"], "token": current["token"]}
        outcome = "already issued: files written again"
        return dataclasses.replace(item, credential=credential, outcome=outcome)
    older_id = item.document["certificate"]["id"] if item.document else None
    same_name = item.document and item.document["certificate"]["name"] == result.name
    certificate_id = older_id if older_id and same_name and not current else _free_id(registry)
    credential = _sign_credential(registry, result, facts, badge_facts, certificate_id)
    outcome = item.outcome
    if older_id and certificate_id == older_id:
        outcome = "issued as an Open Badge under its older-format ID (send it to the learner)"
    if older_id and certificate_id != older_id and not current:
        outcome = (
            f"issued (the name changed from {item.document['certificate']['name']!r}; the "
            f"older-format certificate {older_id} stands until you revoke it)"
        )
    if current:
        registry.supersede(current["id"], certificate_id)
        outcome = (
            f"re-issued as {certificate_id} (the name changed from {current['name']!r}); "
            f"{current['id']} is superseded: publish again (gradacc-certify publish)"
        )
    return dataclasses.replace(item, credential=credential, outcome=outcome)


def _sign_credential(registry, result: Result, facts: dict, badge_facts: dict, the_id: str):
    """Sign and register a new credential for one student; its facts, for the PDF."""
    key = badge_facts["key"]
    stated = {
        "id": the_id,
        "course": facts["course"],
        "assignment": facts["assignment"],
        "course_title": facts["course_title"],
        "assignment_title": facts["assignment_title"],
        "issuer": facts["issuer"],
        "name": result.name,
        "score": round(result.score, 2),
        "max_score": round(result.max_score, 2),
        "course_version": facts["course_version"],
        "date": facts["day"].isoformat(),
    }
    index = registry.free_status_index(status_lists.LIST_BITS)
    verify_url = badge_facts["verify_url"]
    credential = badge.open_badge_credential(
        stated,
        verify_url=verify_url,
        status_indexes=dict.fromkeys(badge.PURPOSES, index),
        issued=datetime.combine(facts["day"], time(), UTC),
        pass_mark=badge_facts["pass_mark"],
        email=badge_facts["emails"].get(result.student),
    )
    kid = badge.key_id(verify_url, vcjwt.thumbprint(key.public_key()))
    token = vcjwt.sign(credential, key, kid)
    registry.add_credential(stated, result.student, index, token)
    return {"facts": stated, "token": token}
