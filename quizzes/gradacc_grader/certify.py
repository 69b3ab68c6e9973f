"""gradacc-certify: certificates with a verifiable ID, issued from the nbgrader gradebook.

    gradacc-certify keygen --out keys
    gradacc-certify settings --course quizzes/course --course-title "Gradient accumulation" \\
        --issuer "Ada's School" --verify-url https://ada.example/gradacc/verify/ \\
        --assignment-title gradacc_faq "the final exam: the FAQ, in code and words"
    gradacc-certify issue gradacc_faq --course quizzes/course --key keys/issuer.key --out certs
    gradacc-certify publish --course quizzes/course --key keys/issuer.key --out www/verify
    gradacc-certify verify certs/ada/gradacc-credential-7K3M-Q9XT-2HPW.jwt
    gradacc-certify revoke 7K3M-Q9XT-2HPW --registry quizzes/course/certificates.sqlite \\
        --key keys/issuer.key --reason "plagiarism"
    gradacc-certify verify old/gradacc-certificate-7K3M-Q9XT-2HPW.json --public-key keys/issuer.pub

Signatures are Ed25519 (the ``cryptography`` package). The instructor's guide is
quizzes/CERTIFICATES.md. Exit status: 0 done (or valid), 1 refused (or invalid), 2 bad usage.

Past 400 lines on purpose: this is the command line alone (argparse for six commands and one
short handler each, which turn arguments into calls and errors into one-line messages); the
work itself is in `gradacc_grader.certificates`, one module per idea.
"""

from __future__ import annotations

import argparse
import dataclasses
import sqlite3
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from gradacc_grader.certificates import badge, checking, publishing, status_lists
from gradacc_grader.certificates.ids import normalize_id
from gradacc_grader.certificates.issuing import PASS_MARK, issue_certificates
from gradacc_grader.certificates.printable import default_fonts
from gradacc_grader.certificates.records import FORMAT, TITLES, revocation_record
from gradacc_grader.certificates.registry import Registry
from gradacc_grader.certificates.settings import LANGUAGES, read_settings, write_settings
from gradacc_grader.certificates.signing import (
    fingerprint,
    load_private_key,
    load_public_key,
    make_key_pair,
    public_key_text,
    sign_record,
)
from gradacc_grader.certificates.verification import Invalid, verify_file

REGISTRY_FILE = "certificates.sqlite"


def main(argv: list[str] | None = None) -> int:
    """The console script: run one command; every problem is one line, never a traceback.

    Args:
        argv: the command line without the program's name (default: ``sys.argv[1:]``).

    Returns:
        The exit status: 0 done (or valid), 1 refused (or not valid); bad usage exits with 2.

    >>> main(["verify", "no-such-certificate.json", "--public-key", "no-such-key.pub"])
    1
    """
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["export"], ["audit"]):  # the older format's registry.json named everyone
        print(
            f"gradacc-certify: {argv[0]} is gone: it published a registry naming every learner; "
            "gradacc-certify publish writes the verification folder, which names no one",
            file=sys.stderr,
        )
        return 1
    args = _parser().parse_args(argv)
    try:
        return args.run(args)
    except Invalid as error:
        print(f"INVALID: {error}")
        return 1
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        print(f"gradacc-certify: {where}{error.strerror or error}", file=sys.stderr)
        return 1
    except (ValueError, sqlite3.Error) as error:
        print(f"gradacc-certify: {_one_line(error)}", file=sys.stderr)
        return 1


def _one_line(error: Exception) -> str:
    return " ".join(str(error).split()) or type(error).__name__


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        """Bad usage: one line (argparse's default prints the usage too), exit status 2."""
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="gradacc-certify",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(required=True, metavar="COMMAND", parser_class=_Parser)
    keygen = commands.add_parser("keygen", help="make the issuer's key pair")
    keygen.add_argument("--out", type=Path, required=True, help="folder for issuer.key/.pub")
    keygen.set_defaults(run=_keygen)
    _add_settings(commands)
    _add_issue(commands)
    _add_verify(commands)
    revoke = commands.add_parser("revoke", help="revoke a certificate in the registry")
    revoke.add_argument("id", help="the certificate ID")
    revoke.add_argument("--registry", type=Path, required=True, help="the registry (SQLite)")
    revoke.add_argument("--key", type=Path, required=True, help="the issuer's private key")
    revoke.add_argument(
        "--reason", required=True, help="why, in a few words (kept in the registry only)"
    )
    revoke.set_defaults(run=_revoke)
    publish = commands.add_parser(
        "publish", help="write the whole verification folder: page, key, status lists"
    )
    publish.add_argument("--course", type=Path, required=True, help="the nbgrader course folder")
    publish.add_argument("--key", type=Path, required=True, help="the issuer's private key")
    publish.add_argument("--out", type=Path, required=True, help="the folder to publish")
    publish.add_argument(
        "--registry", type=Path, help=f"the registry (default: COURSE/{REGISTRY_FILE})"
    )
    publish.add_argument(
        "--valid-days",
        type=_valid_days,
        default=status_lists.VALID_DAYS,
        help=f"days the status lists stay current (default {status_lists.VALID_DAYS})",
    )
    publish.set_defaults(run=_publish)
    return parser


def _add_issue(commands) -> None:
    issue = commands.add_parser("issue", help="issue certificates from the gradebook")
    issue.add_argument("assignment", help="the graded assignment, e.g. gradacc_faq")
    issue.add_argument("--course", type=Path, required=True, help="the nbgrader course folder")
    issue.add_argument("--key", type=Path, required=True, help="the issuer's private key")
    issue.add_argument("--out", type=Path, required=True, help="folder for the certificates")
    issue.add_argument(
        "--pass-mark",
        type=_pass_mark,
        default=PASS_MARK,
        help=f"fraction of the maximum a student needs (default {PASS_MARK})",
    )
    issue.add_argument("--student", help="issue to this student only (a self-learner)")
    issue.add_argument(
        "--registry", type=Path, help=f"the registry (default: COURSE/{REGISTRY_FILE})"
    )
    issue.add_argument(
        "--language", choices=LANGUAGES, help="the page's language (default: the settings')"
    )
    issue.add_argument("--course-version", default=None, help="default: the course's version")
    issue.add_argument("--font", type=Path, help="a TrueType font for names Noto Sans lacks")
    issue.add_argument(
        "--accept-name",
        action="append",
        default=[],
        metavar="STUDENT",
        help="sign this student's name although it looks doubtful (read the reason first)",
    )
    issue.add_argument(
        "--email",
        nargs=2,
        action="append",
        default=[],
        metavar=("STUDENT", "ADDRESS"),
        help="state this student's e-mail in the credential, salted and hashed",
    )
    issue.set_defaults(run=_issue)


def _add_settings(commands) -> None:
    settings = commands.add_parser(
        "settings", help="say once what the course's certificates state (show them: no options)"
    )
    settings.add_argument("--course", type=Path, required=True, help="the nbgrader course folder")
    settings.add_argument("--course-title", help='the course in words, e.g. "Gradient ..."')
    settings.add_argument("--issuer", help="who issues: an institution or the instructor")
    settings.add_argument("--verify-url", help="where the verification page is published")
    settings.add_argument("--language", choices=LANGUAGES, help="the printed page's language")
    settings.add_argument(
        "--assignment-title",
        nargs=2,
        action="append",
        default=[],
        metavar=("ASSIGNMENT", "TITLE"),
        help="what an assignment is, in words (repeat for each)",
    )
    settings.set_defaults(run=_settings)


def _add_verify(commands) -> None:
    verify = commands.add_parser("verify", help="check a credential (or an older certificate)")
    verify.add_argument(
        "certificate", type=Path, help="the credential (.jwt, .png) or an older-format .json"
    )
    verify.add_argument(
        "--public-key", type=Path, help="the issuer's key (older-format certificates)"
    )
    verify.add_argument("--registry", type=Path, help=argparse.SUPPRESS)  # refused: see _verify
    verify.add_argument(
        "--published",
        help="a copy of the issuer's published folder (a folder or an address); default: the "
        "issuer's own address, which the credential names",
    )
    verify.add_argument(
        "--status-list",
        type=Path,
        action="append",
        default=[],
        help="a status list credential (.jwt) to check the credential against",
    )
    verify.add_argument(
        "--state",
        type=Path,
        help="where to remember the newest status lists seen "
        f"(default {status_lists.default_state_path()})",
    )
    verify.set_defaults(run=_verify)


def _pass_mark(text: str) -> float:
    return _number_up_to(1, text, "--pass-mark", "a fraction of the maximum in (0, 1], like 0.7")


def _valid_days(text: str) -> float:
    return _number_up_to(
        3660, text, "--valid-days", "a number of days, more than 0 and at most 3660"
    )


def _number_up_to(most: float, text: str, option: str, what: str) -> float:
    """An option's number in (0, most]; else argparse's error, which says what to give."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= most:  # also false for nan
        raise argparse.ArgumentTypeError(f"{option} {text}: give {what}")
    return value


def _keygen(args) -> int:
    private, public = make_key_pair(args.out)
    print(f"private key: {private} (keep it secret, readable by you only)")
    print(f"public key:  {public} (gradacc-certify publish puts it at the issuer's address)")
    print(f"fingerprint: {fingerprint(load_public_key(public))} (print it where learners see it)")
    return 0


def _settings(args) -> int:
    if not args.course.is_dir():
        raise ValueError(f"--course {args.course}: no such folder")
    settings = read_settings(args.course)
    given = {
        name: getattr(args, name)
        for name in ("course_title", "issuer", "verify_url", "language")
        if getattr(args, name) is not None
    }
    titles = {**settings.assignment_titles, **dict(args.assignment_title)}
    if given or args.assignment_title:
        settings = dataclasses.replace(settings, **given, assignment_titles=titles)
        print(f"wrote {write_settings(args.course, settings)}")
    for name, value in dataclasses.asdict(settings).items():
        if name != "assignment_titles":
            print(f"  {name:<17} {value or '(not set)'}")
    for assignment, title in settings.assignment_titles.items():
        print(f"  title of {assignment}: {title}")
    if settings.missing():
        print(f"still to give before issuing: {' '.join(settings.missing())}")
    return 0


def _issue(args) -> int:
    if not args.course.is_dir():
        raise ValueError(f"--course {args.course}: no such folder")
    key = _private_key(args.key)
    registry = args.registry or args.course / REGISTRY_FILE
    fonts = default_fonts(args.font)
    settings = read_settings(args.course)
    if args.language:
        settings = dataclasses.replace(settings, language=args.language)
    issued = issue_certificates(
        args.course,
        args.assignment,
        key,
        args.out,
        registry,
        pass_mark=args.pass_mark,
        student=args.student,
        settings=settings,
        course_version=args.course_version or _course_version(),
        fonts=fonts,
        accept_names=frozenset(args.accept_name),
        emails=dict(args.email),
    )
    for item in issued:
        r = item.result
        score, shown = f"{r.score:g}/{r.max_score:g}", item.certificate_id or item.held or "-"
        print(f"{r.student:<16} {score:>9}  {shown:<14}  {item.outcome}")
    count = sum(1 for item in issued if item.certificate_id)
    print(f"{count} certificate(s) in {args.out}; registry: {registry}")
    print(f"issuer's key: {fingerprint(key.public_key())}")
    refused = [item.result.student for item in issued if item.outcome.startswith("refused")]
    if refused:
        print(f"refused (see the reason above): {', '.join(refused)}; the others are issued")
    return 0


def _verify(args) -> int:
    if args.registry is not None:
        raise Invalid(
            f"--registry {args.registry}: a certificate's status is decided by the issuer's "
            "signed status list alone (give --status-list FILE or --published)"
        )
    if args.certificate.suffix.lower() in (".jwt", ".png"):
        return _verify_credential(args)
    if args.public_key is None:
        raise ValueError("an older-format certificate (.json) needs --public-key")
    public_key = load_public_key(args.public_key)
    record = verify_file(args.certificate, public_key)
    print(f"SIGNATURE VALID: certificate {record['id']}")
    for label, value in _facts(record):
        print(f"  {label:<15} {value}")
    print(f"  format          the older {FORMAT} (not an Open Badge): the issuer may re-issue it")
    print(f"  issuer key      {fingerprint(public_key)}")
    print(
        "NOT CONFIRMED: signature valid, status unknown: the older format has no signed status "
        "list, so a revocation would not show; ask the learner for their Open Badges credential "
        "(.jwt or .png), which the issuer gives on issuing again"
    )
    return 1


def _verify_credential(args) -> int:
    """An Open Badges credential (.jwt, or a baked .png), against its issuer's place."""
    now = datetime.now(UTC)
    token = checking.read_credential(args.certificate)
    state = args.state or status_lists.default_state_path()
    try:
        checked = checking.check_credential(
            token, published=args.published, status_files=args.status_list, state=state, now=now
        )
    except checking.Refused as error:
        raise Invalid(str(error)) from None
    except checking.StatusUnknown as error:
        _print_credential(error.checked)
        print(f"NOT CONFIRMED: {error}")
        return 1
    _print_credential(checked)
    lists = checking.describe_lists(checked["lists"])
    print(f"  status          not revoked, not superseded ({lists})")
    return 0


def _print_credential(checked: dict) -> None:
    facts = badge.stated_facts(checked["credential"])
    print(f"VALID: Open Badges 3.0 credential {facts['id']}")
    for label in ("name", "achievement", "issuer", "issuer id", "score", "valid from"):
        print(f"  {label:<15} {facts[label]}")
    print(f"  issuer key      {checked['fingerprint']} (published at {checked['source']}jwks.json)")
    place = facts["issuer id"].removesuffix("issuer.json")
    if checked["source"] != place:
        print(
            f"  checked against a copy at {checked['source']}, not the issuer's address {place}: "
            "compare the key's fingerprint with the one the issuer prints"
        )


def _publish(args) -> int:
    key = _private_key(args.key)
    settings = read_settings(args.course)
    missing = [m for m in settings.missing() if not m.startswith("--course-title")]
    if missing:
        raise ValueError(
            f"give first: gradacc-certify settings --course {args.course} {' '.join(missing)}"
        )
    registry = args.registry or args.course / REGISTRY_FILE
    now = datetime.now(UTC)
    texts = publishing.publish(
        registry,
        key,
        settings.verify_url,
        settings.issuer,
        args.out,
        now=now,
        valid_days=args.valid_days,
    )
    print(f"{args.out}: the verification folder for {badge.issuer_id(settings.verify_url)}")
    print(f"  {', '.join(sorted(texts))}, the page and {publishing.OFFLINE}")
    due = now + timedelta(days=args.valid_days)
    print(f"  status lists due by {due:%Y-%m-%d %H:%M} UTC: publish again before then")
    print(f"  issuer key: {fingerprint(key.public_key())}")
    return 0


def _facts(record: dict) -> list[tuple[str, str]]:
    labels = {"course_title": "course title", "issuer": "issuer", "assignment_title": "passed"}
    titles = [(labels[field], record[field]) for field in TITLES if field in record]
    return [
        ("name", record["name"]),
        ("course", record["course"]),
        ("assignment", record["assignment"]),
        *titles,
        ("score", f"{record['score']:g} of {record['max_score']:g}"),
        ("date", record["date"]),
        ("course version", record["course_version"]),
    ]


def _revoke(args) -> int:
    key = _private_key(args.key)
    certificate_id = normalize_id(args.id)
    reason = " ".join(args.reason.split())
    with Registry(args.registry) as registry:
        if registry.issuer() != public_key_text(key.public_key()):
            raise ValueError(
                f"{args.key} is not the key that issued {args.registry}'s certificates"
            )
        credential = registry.credential(certificate_id)
        if not registry.holds(certificate_id):
            raise ValueError(f"{args.registry} holds no certificate {certificate_id}")
        if (
            credential
            and credential["revoked_on"]
            or (not credential and registry.revocation(certificate_id))
        ):
            print(f"{certificate_id} was already revoked")
            return 0
        if credential:
            # the reason stays here, in the instructor's own records; the status list shows a bit
            registry.revoke_credential(certificate_id, date.today().isoformat(), reason)
        if registry.find_by_id(certificate_id) and not registry.revocation(certificate_id):
            # an older-format certificate of the same ID: its registry shows no reason either
            record = revocation_record(certificate_id, date.today(), "revoked by the issuer")
            registry.revoke(certificate_id, sign_record(record, key))
    print(
        f"revoked {certificate_id} (the reason stays in {args.registry}); publish again: "
        "gradacc-certify publish"
    )
    if not credential:
        print(
            f"  {certificate_id} is of the older format: no verifier sees its status (they say "
            "unknown); it will not be issued again as an Open Badge"
        )
    return 0


def _private_key(path: Path):
    key = load_private_key(path)
    if path.stat().st_mode & 0o077:
        print(
            f"gradacc-certify: warning: {path} is readable by others: chmod 600 {path}",
            file=sys.stderr,
        )
    return key


def _course_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gradacc-lessons")
    except PackageNotFoundError:
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
