"""The fixed text of the printed certificate, in English and in Yorùbá.

The facts (the name, the titles, the issuer) are printed as the record states them; only the
sentences around them are translated. Yorùbá is written with full tone marks, and score is
"máàkì", as in the course's quizzes.
"""

from __future__ import annotations

from dataclasses import dataclass

TEXT = {
    "en": {
        "title": "Certificate of completion",
        "certifies": "This certifies that",
        "passed": "passed {assignment}",
        "course": "in the course {course}",
        "score": "with {score} of {max_score} points ({percent} %).",
        "issued_by": "Issued by {issuer} on {date}; course version {version}.",
        "issued": "Issued on {date}; course version {version}.",
        "id": "Certificate ID",
        "key": "Issuer's key",
        "check": (
            "Check it at {address} (or scan the code). The credential {file} is the proof: "
            "anyone can check it with the issuer's public key."
        ),
    },
    "yo": {
        "title": "Ìwé-ẹ̀rí Àṣeyọrí",
        "certifies": "A fi ìwé yìí jẹ́rìí pé",
        "passed": "ti yege nínú {assignment}",
        "course": "ní ẹ̀kọ́ {course}",
        "score": "pẹ̀lú máàkì {score} nínú {max_score} ({percent} %).",
        "issued_by": "{issuer} ló fún un ní ìwé-ẹ̀rí yìí ní ọjọ́ {date}; ẹ̀dà ẹ̀kọ́: {version}.",
        "issued": "A fún un ní ìwé-ẹ̀rí yìí ní ọjọ́ {date}; ẹ̀dà ẹ̀kọ́: {version}.",
        "id": "Nọ́mbà ìdánimọ̀ ìwé-ẹ̀rí",
        "key": "Kọ́kọ́rọ́ ẹni tó fún un",
        "check": (
            "Ẹ yẹ̀ ẹ́ wò ní {address} (tàbí kí ẹ fi fóònù ka kóòdù yìí). Fáìlì tí a fọwọ́ sí, "
            "{file}, ni ẹ̀rí rẹ̀: ẹnikẹ́ni lè fi kọ́kọ́rọ́ gbangba ẹni tó fún un yẹ̀ ẹ́ wò."
        ),
    },
}


@dataclass(frozen=True)
class Wording:
    """Every sentence of one certificate, in one language (``TEXT``'s keys, filled in)."""

    title: str
    certifies: str
    passed: str
    course: str
    score: str
    issued: str
    id: str
    check: str
    key: str


def wording(record: dict, language: str, address: str) -> Wording:
    """The certificate's sentences in ``language`` ("en" or "yo"), with its facts filled in.

    A record issued before certificates stated titles (it has no ``course_title``) is worded
    with the course's and the assignment's ids, as it was then.

    >>> record = {"id": "7K3M-Q9XT-2HPW", "course": "gradacc", "assignment": "final",
    ...           "name": "Ada Lovelace", "score": 8.5, "max_score": 10.0,
    ...           "date": "2026-05-01", "course_version": "0.1.0",
    ...           "course_title": "Gradient accumulation", "issuer": "Ada's School",
    ...           "assignment_title": "the final exam"}
    >>> wording(record, "yo", "https://x.org/verify/?id=7K3M-Q9XT-2HPW").score
    'pẹ̀lú máàkì 8.5 nínú 10 (85 %).'
    """
    text = TEXT[language]
    issuer = record.get("issuer")
    facts = {
        "assignment": record.get("assignment_title") or record["assignment"],
        "course": record.get("course_title") or record["course"],
        "score": f"{record['score']:g}",
        "max_score": f"{record['max_score']:g}",
        "percent": f"{100 * record['score'] / record['max_score']:.0f}",
        "issuer": issuer,
        "date": record["date"],
        "version": record["course_version"],
        "address": address,
        "file": f"gradacc-credential-{record['id']}.jwt",
    }
    return Wording(
        title=text["title"],
        certifies=text["certifies"],
        passed=text["passed"].format(**facts),
        course=text["course"].format(**facts),
        score=text["score"].format(**facts),
        issued=text["issued_by" if issuer else "issued"].format(**facts),
        id=text["id"],
        key=text["key"],
        check=text["check"].format(**facts),
    )
