"""The printable page of a certificate: a one-page PDF (fpdf2) with a QR code (segno).

The page states the same facts as the signed record and the address where anyone can check
them; the QR code holds that address with the certificate ID. The page is a convenience: the
signed JSON file is the proof.

Every name must print right, Yorùbá's "Ẹ̀" and Vietnamese's "ễ" included. Three things see
to it: the page's font is Noto Sans, shipped in ``fonts/`` (its mark anchors place an accent
over a capital, which DejaVu Sans lacks for Ẹ, Ọ, ẹ, ọ); ``_ShapedPDF`` hands HarfBuzz a
letter and its combining marks together; and each line carries its text as /ActualText, so
that copying it out of the PDF gives the name, not the glyphs in the order they were drawn.
"""

from __future__ import annotations

import functools
import unicodedata
from datetime import UTC, date, datetime, time
from pathlib import Path

import segno
from fpdf import FPDF
from fpdf.unicode_script import UnicodeScript, get_unicode_script

from gradacc_grader.certificates.wording import Wording, wording

PAGE_WIDTH, PAGE_HEIGHT = 297, 210  # A4 landscape, millimetres
MARGIN = 20
QR_SIZE = 45  # mm: a phone reads it from an arm's length
NAME_SIZES = (34, 12)  # pt: the name's largest size, and the smallest it shrinks to
FONT_FOLDER = Path(__file__).parent / "fonts"
GREY = (90, 96, 110)  # the English lines under the Yorùbá ones


def verification_address(verify_url: str, certificate_id: str) -> str:
    """The address the QR code holds: the verification page, asked about this ID.

    >>> verification_address("https://example.org/verify/", "7K3M-Q9XT-2HPW")
    'https://example.org/verify/?id=7K3M-Q9XT-2HPW'
    """
    return f"{verify_url}?id={certificate_id}"


class _ShapedPDF(FPDF):
    """fpdf2's FPDF, shaping each letter together with its combining marks.

    fpdf2 2.8.9 (fpdf/fpdf.py, ``FPDF._parse_chars``, lines 4679-4687) starts a new text
    fragment wherever a character's Unicode script changes, and combining marks (U+0300 ...)
    and the zero-width joiners have the script "Inherited". Each fragment is shaped alone,
    so HarfBuzz never sees "Ẹ" and U+0300 together and puts the grave where it would go
    on a small letter, into the capital. This joins such fragments again; nothing else
    about them differs (same font, same style).
    """

    def _parse_chars(self, text, markdown, *, _initial_emphasis=None):
        joined = []
        for fragment in super()._parse_chars(text, markdown, _initial_emphasis=_initial_emphasis):
            previous = joined[-1] if joined else None
            if previous is not None and _belong_together(previous, fragment):
                previous.characters.extend(fragment.characters)
            else:
                joined.append(fragment)
        yield from joined


def _belong_together(previous, fragment) -> bool:
    inherited = UnicodeScript.INHERITED
    at_seam = (previous.characters[-1], fragment.characters[0])
    return (
        previous.graphics_state == fragment.graphics_state
        and previous.link == fragment.link
        and any(get_unicode_script(c) == inherited for c in at_seam)
    )


def write_printable(
    record: dict,
    verify_url: str,
    path: Path,
    fonts: dict,
    language: str = "en",
    fingerprint: str | None = None,
) -> None:
    """Write the one-page PDF of a certificate.

    Args:
        record: the certificate's facts (see ``records.certificate_record``).
        verify_url: the address of the verification page.
        path: where to write the PDF.
        fonts: TrueType files: ``{"regular": path, "bold": path}``, and
            optionally ``"fallback"``, a font for names the others lack glyphs for.
        language: "en", "yo", or "both" (Yorùbá, with English under each line).
        fingerprint: the issuer's key fingerprint (``signing.fingerprint``), printed so that
            a reader can compare it with the one the issuer publishes; None: not printed.

    >>> import tempfile
    >>> record = {"id": "7K3M-Q9XT-2HPW", "course": "gradacc", "assignment": "final",
    ...           "name": "Ada Lovelace", "score": 8.5, "max_score": 10.0,
    ...           "date": "2026-05-01", "course_version": "0.1.0"}
    >>> path = Path(tempfile.mkdtemp()) / "certificate.pdf"
    >>> write_printable(record, "https://example.org/verify/", path, default_fonts())
    >>> path.read_bytes()[:5]
    b'%PDF-'
    """
    address = verification_address(verify_url, record["id"])
    languages = {"en": ["en"], "yo": ["yo"], "both": ["yo", "en"]}[language]
    texts = [wording(record, each, address) for each in languages]
    pdf = _new_pdf(record, fonts, "en" if language == "en" else "yo")
    _draw_facts(pdf, record["name"], texts)
    _draw_qr(pdf, address, x=PAGE_WIDTH - MARGIN - QR_SIZE, y=PAGE_HEIGHT - MARGIN - QR_SIZE)
    _draw_footer(pdf, record["id"], texts, fingerprint)
    pdf.output(str(path))


def _new_pdf(record: dict, fonts: dict, language: str) -> _ShapedPDF:
    pdf = _ShapedPDF(orientation="landscape", unit="mm", format="A4")
    pdf.set_creator("gradacc-certify")
    # dated the day of issue, not the day of writing: the same certificate, the same bytes
    pdf.set_creation_date(datetime.combine(date.fromisoformat(record["date"]), time(), UTC))
    pdf.set_title(f"Certificate {record['id']}")
    pdf.set_lang(language)
    pdf.set_margins(MARGIN, MARGIN)
    pdf.set_auto_page_break(False)
    pdf.add_font("Text", "", fonts["regular"])
    pdf.add_font("Text", "B", fonts["bold"])
    if fonts.get("fallback"):
        pdf.add_font("Fallback", "", fonts["fallback"])
        pdf.set_fallback_fonts(["Fallback"])
    # HarfBuzz places each mark on its letter by the font's anchors
    pdf.set_text_shaping(True)
    pdf.add_page()
    return pdf


def _draw_facts(pdf: FPDF, name: str, texts: list[Wording]) -> None:
    """The frame, the title, the name and the facts: each line in every language."""
    width = PAGE_WIDTH - 2 * MARGIN
    pdf.set_draw_color(60, 90, 140)
    pdf.set_line_width(1.2)
    pdf.rect(MARGIN / 2, MARGIN / 2, PAGE_WIDTH - MARGIN, PAGE_HEIGHT - MARGIN)
    two = len(texts) == 2
    pdf.set_y(MARGIN + (2 if two else 5))
    _lines(pdf, "B", 30, [t.title for t in texts], width)
    pdf.ln(4 if two else 10)
    _lines(pdf, "", 14, [t.certifies for t in texts], width)
    _line(pdf, "B", NAME_SIZES[0], name, width, smallest=NAME_SIZES[1])
    for part in ("passed", "course", "score"):
        _lines(pdf, "", 14, [getattr(t, part) for t in texts], width)
    pdf.ln(2 if two else 6)
    _lines(pdf, "", 11, [t.issued for t in texts], width)


def _lines(pdf: FPDF, style: str, size: float, lines: list[str], width: float) -> None:
    """One line, and under it the same line in the second language, smaller and grey."""
    _line(pdf, style, size, lines[0], width)
    for line in lines[1:]:
        pdf.set_text_color(*GREY)
        _line(pdf, style, round(size * 0.7), line, width)
        pdf.set_text_color(0, 0, 0)


def _line(pdf: FPDF, style: str, size: float, text: str, width: float, smallest: float = 7) -> None:
    """One centred line, in a smaller size where a long title or name needs it."""
    pdf.set_font("Text", style, _fitting_size(pdf, style, text, width, size, smallest))
    with _actual_text(pdf, text):
        pdf.cell(width, size * 0.5, text, align="C", new_x="LMARGIN", new_y="NEXT")


class _actual_text:
    """Mark what is drawn inside as the text ``text`` (PDF 1.7, 14.9.4: /ActualText).

    fpdf2 draws a mark moved by HarfBuzz as a glyph of its own, and the next letter from
    a point before it; PDF readers then copy "Ẹ̀bùn" as "Ẹbùn" with the grave elsewhere.
    With /ActualText they copy the line as written. It changes nothing that is drawn.
    """

    def __init__(self, pdf: FPDF, text: str):
        self.pdf, self.text = pdf, text

    def __enter__(self):
        utf16 = ("\ufeff" + self.text).encode("utf-16-be").hex().upper()
        self.pdf._out(f"/Span <</ActualText <{utf16}>>> BDC")  # fpdf2 has no public call

    def __exit__(self, *exc_info):
        self.pdf._out("EMC")


def _fitting_size(
    pdf: FPDF, style: str, text: str, width: float, largest: float, smallest: float
) -> float:
    """The largest font size, from ``largest`` down to ``smallest``, at which ``text`` fits
    on one line (problem_with refuses a name that does not fit at NAME_SIZES[1])."""
    size = largest
    pdf.set_font("Text", style, size)
    while size > smallest and pdf.get_string_width(text) > width:
        size = max(smallest, size - 1)
        pdf.set_font("Text", style, size)
    return size


def _draw_qr(pdf: FPDF, address: str, x: float, y: float) -> None:
    """Draw the QR code of ``address`` as filled squares (sharp at any printer resolution)."""
    matrix = [list(row) for row in segno.make(address, error="m").matrix]
    module = QR_SIZE / len(matrix)
    pdf.set_fill_color(0, 0, 0)
    for row_number, row in enumerate(matrix):
        for column, dark in enumerate(row):
            if dark:
                left, top = x + column * module, y + row_number * module
                # a hair wider than the module, so that no white seam shows between squares
                pdf.rect(left, top, module + 0.05, module + 0.05, style="F")


def _draw_footer(
    pdf: FPDF, certificate_id: str, texts: list[Wording], fingerprint: str | None
) -> None:
    left_width = PAGE_WIDTH - 3 * MARGIN - QR_SIZE
    pdf.set_xy(MARGIN, PAGE_HEIGHT - MARGIN - QR_SIZE)
    pdf.set_font("Text", "", 11)
    label = " · ".join(t.id for t in texts)
    with _actual_text(pdf, label):
        pdf.cell(left_width, 6, label, new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Text", "B", 22)
    pdf.set_char_spacing(1.5)
    pdf.cell(left_width, 11, certificate_id, new_x="LMARGIN", new_y="NEXT")
    pdf.set_char_spacing(0)
    size, height = (8.5, 4) if len(texts) == 2 else (10, 5)
    for text in texts:
        pdf.set_font("Text", "", size)
        with _actual_text(pdf, text.check):
            pdf.multi_cell(left_width, height, text.check, align="L", new_x="LMARGIN", new_y="NEXT")
    if fingerprint:
        label = " · ".join(f"{t.key}: {fingerprint}" for t in texts)
        pdf.set_font("Text", "", size)
        with _actual_text(pdf, label):
            pdf.cell(left_width, height, label, new_x="LMARGIN", new_y="NEXT")


def default_fonts(fallback: Path | None = None) -> dict:
    """The page's fonts: Noto Sans, shipped with this package, and an optional fallback.

    Args:
        fallback: a .ttf or .otf file for names in scripts Noto Sans lacks, or None.

    Raises:
        ValueError: the fallback is not a TrueType font file.

    >>> sorted(name.name for name in default_fonts().values())
    ['NotoSans-Bold.ttf', 'NotoSans-Regular.ttf']
    """
    fonts = {
        "regular": FONT_FOLDER / "NotoSans-Regular.ttf",
        "bold": FONT_FOLDER / "NotoSans-Bold.ttf",
    }
    if fallback is not None:
        if not Path(fallback).is_file() or Path(fallback).suffix.lower() not in (".ttf", ".otf"):
            raise ValueError(f"--font {fallback} is not a TrueType font file (.ttf or .otf)")
        _characters_of(Path(fallback))  # ValueError now, rather than in the middle of a class
        fonts["fallback"] = Path(fallback)
    return fonts


def missing_characters(text: str, fonts: dict) -> str:
    """The characters of ``text`` that neither the bold font nor the fallback can draw.

    >>> missing_characters("Ada Lovelace 中", default_fonts())
    '中'
    """
    covered = set().union(*(_characters_of(fonts[k]) for k in ("bold", "fallback") if k in fonts))
    return "".join(sorted({c for c in text if not c.isspace() and ord(c) not in covered}))


def problem_with(name: str, fonts: dict | None = None) -> str | None:
    """Why ``name`` cannot be printed on a certificate, or None when it can.

    The name is taken as the record states it (NFC). Refused: an empty name, a control or
    unassigned character, a mark with no letter to sit on, a character the fonts lack, and
    a name too long for one line at the smallest size.

    Args:
        name: the learner's name.
        fonts: the page's fonts (default: ``default_fonts()``).

    >>> problem_with("Adébáyọ̀ Ẹ̀bùnolúwa Ọlọ́runfẹ́mi-Ṣóbọ̀ọ̀lá") is None
    True
    >>> problem_with("Ada\\u0007")  # doctest: +ELLIPSIS
    'the name holds a character that cannot be printed (U+0007, a control character): ...'
    >>> problem_with("李小龍")  # doctest: +ELLIPSIS
    "the certificate's fonts have no letters for 小, 李, 龍: give --font with a font ..."
    """
    fonts = fonts or default_fonts()
    name = unicodedata.normalize("NFC", " ".join(name.split()))
    if not name:
        return "the name is empty: give the student's name in the gradebook"
    for character in name:
        kind = _unprintable(character)
        if kind:
            return (
                f"the name holds a character that cannot be printed (U+{ord(character):04X}, "
                f"{kind}): correct the name in the gradebook"
            )
    if unicodedata.category(name[0]).startswith("M"):
        return "the name begins with an accent that has no letter to sit on"
    missing = missing_characters(name, fonts)
    if missing:
        return (
            f"the certificate's fonts have no letters for {', '.join(missing)}: give --font "
            "with a font that has them (e.g. NotoSansSC-Regular.ttf)"
        )
    return _too_long(name, fonts)


UNPRINTABLE = {
    "Cc": "a control character",
    "Cf": "an invisible formatting character",
    "Co": "a private-use character",
    "Cs": "a lone surrogate",
    "Cn": "an unassigned code point",
}


def _unprintable(character: str) -> str | None:
    """What kind of character ``character`` is, if no name may hold it; None if one may.

    The joiners (ZWJ, ZWNJ) are formatting characters that names do use.
    """
    if character in "\u200c\u200d":
        return None
    return UNPRINTABLE.get(unicodedata.category(character))


def _too_long(name: str, fonts: dict) -> str | None:
    pdf = _measuring_pdf(Path(fonts["bold"]), fonts.get("fallback") and Path(fonts["fallback"]))
    pdf.set_font("Text", "B", NAME_SIZES[1])
    if pdf.get_string_width(name) > PAGE_WIDTH - 2 * MARGIN:
        return f"the name is too long for one line ({len(name)} characters): shorten it"
    return None


@functools.lru_cache(maxsize=4)
def _measuring_pdf(bold: Path, fallback: Path | None) -> _ShapedPDF:
    """A PDF that is never written, to measure names in (reading a font takes 0.1 s)."""
    pdf = _ShapedPDF(orientation="landscape", unit="mm", format="A4")
    pdf.add_font("Text", "B", bold)
    if fallback:
        pdf.add_font("Fallback", "", fallback)
        pdf.set_fallback_fonts(["Fallback"])
    pdf.set_text_shaping(True)
    return pdf


@functools.lru_cache(maxsize=8)
def _characters_of(font: Path) -> frozenset:
    from fontTools.ttLib import TTFont

    try:
        return frozenset(TTFont(font, lazy=True).getBestCmap())
    except Exception as error:  # fontTools raises many kinds for a file that is no font
        raise ValueError(f"{font} is not a TrueType font ({error})") from None
