"""What every certificate of a course says about the course, set once per course.

A reader outside the course needs the course's title, who issues it, what was passed in
words, and where to check it. ``gradacc-certify settings`` writes them into the course
folder (``certificate-settings.json``); ``gradacc-certify issue`` reads them and refuses
to issue while one is missing, rather than print a course id or point the QR code at
someone else's site.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from gradacc_grader.certificates.untrusted import parse_json_object, read_small_file

SETTINGS_FILE = "certificate-settings.json"
LANGUAGES = ("en", "yo", "both")  # both: Yorùbá first, English under each line
MAX_BYTES = 100_000


@dataclass(frozen=True)
class CertificateSettings:
    """The course's wording and address for its certificates.

    Attributes:
        course_title: the course's title in words, e.g. "Gradient accumulation in PyTorch".
        issuer: who issues the certificates: an institution, or the instructor's name.
        verify_url: the verification page, where the QR code points (``?id=...`` is added).
        language: the printed page's language: "en", "yo" or "both".
        assignment_titles: what each assignment is, in words, by its nbgrader name.
    """

    course_title: str = ""
    issuer: str = ""
    verify_url: str = ""
    language: str = "en"
    assignment_titles: dict[str, str] = field(default_factory=dict)

    def missing(self, assignment: str | None = None) -> list[str]:
        """The settings still to give before issuing ``assignment`` (their option names).

        >>> CertificateSettings("Gradacc", "Ada", "https://x.org/verify/").missing("final")
        ['--assignment-title final TITLE']
        """
        needed = [
            ("--course-title TITLE", self.course_title),
            ("--issuer NAME", self.issuer),
            ("--verify-url URL", self.verify_url),
        ]
        if assignment is not None:
            needed.append((f"--assignment-title {assignment} TITLE", self.title_of(assignment)))
        return [option for option, value in needed if not value]

    def title_of(self, assignment: str) -> str:
        """The assignment's title in words, or "" when none is set."""
        return self.assignment_titles.get(assignment, "")


def check_settings(settings: CertificateSettings) -> None:
    """Raise ValueError for a setting that is given but wrong (say which, and what to give).

    >>> check_settings(CertificateSettings(verify_url="http://example.org/verify/"))
    Traceback (most recent call last):
    ValueError: --verify-url http://example.org/verify/: give the https:// address of the \
verification page (http:// only for 127.0.0.1 or localhost)
    """
    if settings.language not in LANGUAGES:
        raise ValueError(f"--language {settings.language}: give one of {', '.join(LANGUAGES)}")
    texts = [settings.course_title, settings.issuer, *settings.assignment_titles.values()]
    for text in texts:
        if len(text) > 200 or not text.isprintable():
            raise ValueError(f"{text!r}: a title or name is one line of at most 200 characters")
    if settings.verify_url:
        _check_url(settings.verify_url)


def _check_url(url: str) -> None:
    parts = urlsplit(url)
    local = parts.hostname in ("127.0.0.1", "localhost")
    if not parts.hostname or not (parts.scheme == "https" or (parts.scheme == "http" and local)):
        raise ValueError(
            f"--verify-url {url}: give the https:// address of the verification page "
            "(http:// only for 127.0.0.1 or localhost)"
        )
    if parts.query or parts.fragment:
        raise ValueError(f"--verify-url {url}: give the page's address without ?... or #...")


def read_settings(course: Path) -> CertificateSettings:
    """The course's certificate settings; empty ones when the course has none yet.

    Raises:
        ValueError: the settings file is malformed (it says how).

    >>> read_settings(Path("no-such-course")).missing()
    ['--course-title TITLE', '--issuer NAME', '--verify-url URL']
    """
    path = Path(course) / SETTINGS_FILE
    if not path.exists():
        return CertificateSettings()
    data = read_small_file(path, MAX_BYTES, "certificate settings")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not UTF-8 text: save it as UTF-8") from None
    values = parse_json_object(text, str(path))
    known = {name for name in CertificateSettings.__dataclass_fields__}
    if set(values) - known:
        raise ValueError(f"{path}: unknown settings {sorted(set(values) - known)}")
    titles = values.get("assignment_titles", {})
    strings = [v for k, v in values.items() if k != "assignment_titles"]
    if not isinstance(titles, dict) or not all(
        isinstance(v, str) for v in [*strings, *titles, *titles.values()]
    ):
        raise ValueError(f"{path}: every setting is text (assignment_titles: name -> title)")
    settings = CertificateSettings(**values)
    check_settings(settings)
    return settings


def write_settings(course: Path, settings: CertificateSettings) -> Path:
    """Write the course's certificate settings (readable JSON, for editing by hand too)."""
    check_settings(settings)
    path = Path(course) / SETTINGS_FILE
    path.write_text(json.dumps(asdict(settings), ensure_ascii=False, indent=2) + "\n", "utf-8")
    return path
