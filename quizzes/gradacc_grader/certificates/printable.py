"""The printable page of a certificate: a one-page PDF (fpdf2) with a QR code (segno).

The page states the same facts as the signed record and the address where anyone can check
them; the QR code holds that address with the certificate ID. The page is a convenience: the
signed JSON file is the proof.
"""

from __future__ import annotations

import functools
from datetime import UTC, date, datetime, time
from pathlib import Path

import segno
from fpdf import FPDF

PAGE_WIDTH, PAGE_HEIGHT = 297, 210  # A4 landscape, millimetres
MARGIN = 20
QR_SIZE = 45  # mm: a phone reads it from an arm's length


def verification_address(verify_url: str, certificate_id: str) -> str:
    """The address the QR code holds: the verification page, asked about this ID.

    >>> verification_address("https://example.org/verify/", "7K3M-Q9XT-2HPW")
    'https://example.org/verify/?id=7K3M-Q9XT-2HPW'
    """
    return f"{verify_url}?id={certificate_id}"


def write_printable(record: dict, verify_url: str, path: Path, fonts: dict) -> None:
    """Write the one-page PDF of a certificate.

    Args:
        record: the certificate's facts (see ``records.certificate_record``).
        verify_url: the address of the verification page.
        path: where to write the PDF.
        fonts: TrueType files: ``{"regular": path, "bold": path}``, and
            optionally ``"fallback"``, a font for names the others lack glyphs for.

    >>> import tempfile
    >>> record = {"id": "7K3M-Q9XT-2HPW", "course": "gradacc", "assignment": "final",
    ...           "name": "Ada Lovelace", "score": 8.5, "max_score": 10.0,
    ...           "date": "2026-05-01", "course_version": "0.1.0"}
    >>> path = Path(tempfile.mkdtemp()) / "certificate.pdf"
    >>> write_printable(record, "https://example.org/verify/", path, default_fonts())
    >>> path.read_bytes()[:5]
    b'%PDF-'
    """
    pdf = FPDF(orientation="landscape", unit="mm", format="A4")
    pdf.set_creator("gradacc-certify")
    # dated the day of issue, not the day of writing: the same certificate, the same bytes
    issued = datetime.combine(date.fromisoformat(record["date"]), time(), UTC)
    pdf.set_creation_date(issued)
    pdf.set_title(f"Certificate {record['id']}")
    pdf.set_margins(MARGIN, MARGIN)
    pdf.set_auto_page_break(False)
    _add_fonts(pdf, fonts)
    # HarfBuzz places combining accents (Yoruba's "ọ̀", Vietnamese, ...) where they belong.
    pdf.set_text_shaping(True)
    pdf.add_page()
    _draw_facts(pdf, record)
    address = verification_address(verify_url, record["id"])
    _draw_qr(pdf, address, x=PAGE_WIDTH - MARGIN - QR_SIZE, y=PAGE_HEIGHT - MARGIN - QR_SIZE)
    _draw_footer(pdf, record["id"], address)
    pdf.output(str(path))


def _add_fonts(pdf: FPDF, fonts: dict) -> None:
    pdf.add_font("Text", "", fonts["regular"])
    pdf.add_font("Text", "B", fonts["bold"])
    if fonts.get("fallback"):
        pdf.add_font("Fallback", "", fonts["fallback"])
        pdf.set_fallback_fonts(["Fallback"])


def _draw_facts(pdf: FPDF, record: dict) -> None:
    width = PAGE_WIDTH - 2 * MARGIN
    pdf.set_draw_color(60, 90, 140)
    pdf.set_line_width(1.2)
    pdf.rect(MARGIN / 2, MARGIN / 2, PAGE_WIDTH - MARGIN, PAGE_HEIGHT - MARGIN)
    pdf.set_y(MARGIN + 5)
    _line(pdf, "Text", "B", 30, "Certificate of completion", width)
    _line(pdf, "Text", "", 14, f"course {record['course']}", width)
    pdf.ln(10)
    _line(pdf, "Text", "", 14, "This certifies that", width)
    _line(pdf, "Text", "B", _name_size(pdf, record["name"], width), record["name"], width)
    score = f"{record['score']:g} of {record['max_score']:g} points"
    percent = 100 * record["score"] / record["max_score"]
    _line(pdf, "Text", "", 14, f"passed the assignment {record['assignment']}", width)
    _line(pdf, "Text", "", 14, f"with {score} ({percent:.0f} %).", width)
    pdf.ln(6)
    issued = f"Issued on {record['date']}, course version {record['course_version']}."
    _line(pdf, "Text", "", 11, issued, width)


def _line(pdf: FPDF, family: str, style: str, size: float, text: str, width: float) -> None:
    pdf.set_font(family, style, size)
    pdf.cell(width, size * 0.55, text, align="C", new_x="LMARGIN", new_y="NEXT")


def _name_size(pdf: FPDF, name: str, width: float) -> float:
    """The largest font size, at most 34 pt, at which the name fits on one line."""
    size = 34.0
    pdf.set_font("Text", "B", size)
    while size > 12 and pdf.get_string_width(name) > width:
        size -= 2
        pdf.set_font("Text", "B", size)
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


def _draw_footer(pdf: FPDF, certificate_id: str, address: str) -> None:
    left_width = PAGE_WIDTH - 3 * MARGIN - QR_SIZE
    pdf.set_xy(MARGIN, PAGE_HEIGHT - MARGIN - QR_SIZE)
    pdf.set_font("Text", "", 11)
    pdf.cell(left_width, 6, "Certificate ID", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Text", "B", 22)
    pdf.set_char_spacing(1.5)
    pdf.cell(left_width, 11, certificate_id, new_x="LMARGIN", new_y="NEXT")
    pdf.set_char_spacing(0)
    pdf.set_font("Text", "", 10)
    pdf.multi_cell(
        left_width,
        5,
        f"Check it at {address} (or scan the code). The signed file "
        f"gradacc-certificate-{certificate_id}.json is the proof: anyone can check it "
        "with the issuer's public key.",
    )


def default_fonts(fallback: Path | None = None) -> dict:
    """The page's fonts: DejaVu, as matplotlib ships it, and an optional fallback font file.

    Args:
        fallback: a .ttf or .otf file for names in scripts DejaVu lacks, or None.

    Raises:
        ValueError: the fallback is not a TrueType font file.

    >>> sorted(name.name for name in default_fonts().values())
    ['DejaVuSans-Bold.ttf', 'DejaVuSans.ttf']
    """
    import matplotlib

    folder = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    fonts = {
        "regular": folder / "DejaVuSans.ttf",
        "bold": folder / "DejaVuSans-Bold.ttf",
    }
    if fallback is not None:
        if not Path(fallback).is_file() or Path(fallback).suffix.lower() not in (".ttf", ".otf"):
            raise ValueError(f"--font {fallback} is not a TrueType font file (.ttf or .otf)")
        _characters_of(Path(fallback))  # ValueError now, rather than in the middle of a class
        fonts["fallback"] = Path(fallback)
    return fonts


def missing_characters(text: str, fonts: dict) -> str:
    """The characters of ``text`` that neither the bold font nor the fallback can draw.

    >>> missing_characters("Ada Lovelace", default_fonts())
    ''
    """
    covered = set().union(*(_characters_of(fonts[k]) for k in ("bold", "fallback") if k in fonts))
    return "".join(sorted({c for c in text if not c.isspace() and ord(c) not in covered}))


@functools.lru_cache(maxsize=8)
def _characters_of(font: Path) -> frozenset:
    from fontTools.ttLib import TTFont

    try:
        return frozenset(TTFont(font, lazy=True).getBestCmap())
    except Exception as error:  # fontTools raises many kinds for a file that is no font
        raise ValueError(f"{font} is not a TrueType font ({error})") from None
