"""The printed page, read back: every name as written, every accent on its own letter.

PDFium (pypdfium2) reads the PDF the way a viewer does. The text is what a reader copies out
of it; the glyphs' boxes are where the ink is. A mark (U+0300 ...) must sit over or under the
letter before it, inside that letter's width and clear of its outline.
"""

from __future__ import annotations

import ctypes
import tomllib
import unicodedata
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import matplotlib
import pypdfium2
import pypdfium2.raw as pdfium_c
import pytest
from gradacc_grader.certificates import printable
from gradacc_grader.certificates.printable import default_fonts, problem_with, write_printable
from gradacc_grader.certificates.records import certificate_record
from gradacc_grader.certificates.wording import TEXT
from gradacc_grader.certify import main

QUIZZES = Path(__file__).resolve().parents[2]
YORUBA = "Adébáyọ̀ Ẹ̀bùnolúwa Ọlọ́runfẹ́mi-Ṣóbọ̀ọ̀lá"
NAMES = {
    "yoruba": YORUBA,
    # a mark on every capital the review found misprinted: Ọ́, Ẹ́, Ọ̀ (and Ẹ̀ above)
    "yoruba capitals": "Ọ́láolúwa Ẹ́nìtàn Ọ̀ṣúnwálé",
    "vietnamese": "Nguyễn Thị Ánh Tuyết",
    "zero-width joiner": "Adé\u200dbáyọ̀ Ọmọ\u200dlẹ́yẹ",
    # typed decomposed (NFD), as some keyboards do: printed and read back as NFC
    "decomposed": unicodedata.normalize("NFD", "Ọláwùmí Ẹniọlá"),
}
# A mark may reach into its letter's box by this much of the font size, and no more. The
# boxes are the outlines' bounds: a letter's overshoot or a mark's tip can touch the other's
# box by a hair that no eye sees. Noto Sans leaves at least 0.038 em between a letter and its
# mark; the grave that fpdf2 2.8.9 and DejaVu Sans put into "Ẹ" reaches 0.124 em into it.
OVERLAP = 0.02


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def is_mark(character: str) -> bool:
    return unicodedata.category(character).startswith("M")


def is_inked(character: str) -> bool:
    """Not a space, nor a joiner (HarfBuzz draws a joiner as an empty glyph, or none)."""
    return not character.isspace() and unicodedata.category(character) != "Cf"


def render(folder: Path, name: str, language: str = "en", fonts: dict | None = None) -> Path:
    record = certificate_record(
        "7K3M-Q9XT-2HPW", course="gradacc", assignment="gradacc_faq", name=name, score=9.5,
        max_score=10, day=date(2026, 12, 1), course_version="0.1.0",
        course_title="Gradient accumulation in PyTorch", issuer="Ilé-ẹ̀kọ́ Ọ̀ṣun",
        assignment_title="the final exam",
    )  # fmt: skip
    path = folder / f"{language}.pdf"
    write_printable(record, "https://x.example/verify/", path, fonts or default_fonts(), language)
    return path


def printed_lines(path: Path) -> list[str]:
    """The page's text as a reader copies it, line by line, NFC."""
    page = pypdfium2.PdfDocument(path)[0]
    return nfc(page.get_textpage().get_text_range()).splitlines()


@dataclass
class Glyph:
    character: str
    left: float
    bottom: float
    right: float
    top: float
    size: float  # the font size, pt


def drawn_glyphs(path: Path) -> list[Glyph]:
    """Every glyph on the page, in the order it is drawn, with its box (pt).

    The page marks each line with /ActualText, and PDFium then spreads that text evenly over
    the line instead of giving each glyph its box; marked content draws nothing, so it is
    dropped first. PDFium's own character order follows positions (a mark drawn after its
    letter can land elsewhere), so glyphs are put in content-stream order: by the text
    object that draws them, then by their place in it.
    """
    page = pypdfium2.PdfDocument(path)[0]
    objects = list(page.get_objects())
    for obj in objects:
        for index in reversed(range(pdfium_c.FPDFPageObj_CountMarks(obj.raw))):
            pdfium_c.FPDFPageObj_RemoveMark(obj.raw, pdfium_c.FPDFPageObj_GetMark(obj.raw, index))
    order = {ctypes.cast(obj.raw, ctypes.c_void_p).value: n for n, obj in enumerate(objects)}
    text = page.get_textpage()
    glyphs = []
    for index in range(text.count_chars()):
        if pdfium_c.FPDFText_IsGenerated(text.raw, index):
            continue
        drawn_by = pdfium_c.FPDFText_GetTextObject(text.raw, index)
        key = (order[ctypes.cast(drawn_by, ctypes.c_void_p).value], index)
        size = pdfium_c.FPDFText_GetFontSize(text.raw, index)
        glyph = Glyph(text.get_text_range(index, 1), *text.get_charbox(index), size)
        glyphs.append((key, glyph))
    return [glyph for _, glyph in sorted(glyphs, key=lambda item: item[0])]


def misplaced_marks(glyphs: list[Glyph]) -> list[str]:
    """Each mark that is not over or under its own letter, said in words."""
    problems, letter = [], None
    for glyph in glyphs:
        if not is_mark(glyph.character):
            letter = glyph if not glyph.character.isspace() else letter
            continue
        middle = (glyph.left + glyph.right) / 2
        slack = OVERLAP * glyph.size
        above = glyph.bottom >= letter.top - slack
        below = glyph.top <= letter.bottom + slack
        where = f"U+{ord(glyph.character):04X} on {letter.character!r}"
        if not letter.left <= middle <= letter.right:
            problems.append(
                f"{where}: beside it ({middle:.1f} not in {letter.left:.1f}-{letter.right:.1f})"
            )
        elif not (above or below):
            problems.append(f"{where}: into it (mark {glyph.bottom:.1f}-{glyph.top:.1f}, "
                            f"letter {letter.bottom:.1f}-{letter.top:.1f})")  # fmt: skip
    return problems


def name_glyphs(glyphs: list[Glyph], name: str) -> list[Glyph]:
    """The glyphs that draw ``name`` (its inked characters, in order) on the page."""
    inked = [c for c in nfc(name) if is_inked(c)]
    drawn = [g for g in glyphs if is_inked(g.character)]
    for start in range(len(drawn) - len(inked) + 1):
        if [g.character for g in drawn[start : start + len(inked)]] == inked:
            return drawn[start : start + len(inked)]
    raise AssertionError(f"the page does not draw {name!r} in order")


@pytest.mark.parametrize("kind", NAMES)
def test_a_name_copied_out_of_the_pdf_is_the_name(tmp_path, kind):
    name = NAMES[kind]
    assert nfc(name) in printed_lines(render(tmp_path, name))


@pytest.mark.parametrize("kind", NAMES)
def test_every_mark_of_a_name_sits_on_its_own_letter(tmp_path, kind):
    glyphs = name_glyphs(drawn_glyphs(render(tmp_path, NAMES[kind])), NAMES[kind])
    assert not misplaced_marks(glyphs)


def test_the_marks_the_review_found_are_there_to_check(tmp_path):
    # the test above checks something: the Yorùbá names draw combining marks on capitals
    name = NAMES["yoruba capitals"]
    glyphs = name_glyphs(drawn_glyphs(render(tmp_path, name)), name)
    on_capitals = [
        (letter.character, mark.character)
        for letter, mark in zip(glyphs, glyphs[1:])
        if is_mark(mark.character) and letter.character.isupper()
    ]
    assert on_capitals == [("Ọ", "\u0301"), ("Ẹ", "\u0301"), ("Ọ", "\u0300")]


@pytest.mark.parametrize("language", ["en", "yo", "both"])
def test_every_mark_on_the_page_sits_on_its_letter_in_every_language(tmp_path, language):
    # bold (the title, the name) and regular (the Yorùbá sentences, the issuer "Ọ̀ṣun")
    path = render(tmp_path, YORUBA, language)
    glyphs = drawn_glyphs(path)
    assert sum(is_mark(g.character) for g in glyphs) >= 8
    assert not misplaced_marks(glyphs)
    lines = printed_lines(path)
    assert YORUBA in lines
    if language != "en":
        assert nfc(TEXT["yo"]["title"]) in lines and nfc(TEXT["yo"]["certifies"]) in lines
        assert "pẹ̀lú máàkì 9.5 nínú 10 (95 %)." in lines
    if language != "yo":
        assert "passed the final exam" in lines and "Certificate of completion" in lines


def test_the_old_way_puts_the_grave_into_the_capital(tmp_path, monkeypatch):
    # what the review saw, so that the checks above are known to catch it: fpdf2's own
    # fragments (no _ShapedPDF) and DejaVu Sans
    monkeypatch.setattr(printable, "_ShapedPDF", printable.FPDF)
    folder = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    dejavu = {"regular": folder / "DejaVuSans.ttf", "bold": folder / "DejaVuSans-Bold.ttf"}
    glyphs = drawn_glyphs(render(tmp_path, YORUBA, fonts=dejavu))
    problems = misplaced_marks(name_glyphs(glyphs, YORUBA))
    assert any("U+0300 on 'Ẹ': into it" in problem for problem in problems), problems


def test_a_font_for_other_letters_prints_them_too(tmp_path):
    georgian = "ნინო Ẹ̀bùn"  # Noto Sans has no Georgian; DejaVu Sans has
    assert "no letters for ი, ნ, ო:" in problem_with(georgian)
    folder = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    fonts = default_fonts(fallback=folder / "DejaVuSans.ttf")
    assert problem_with(georgian, fonts) is None
    assert georgian in printed_lines(render(tmp_path, georgian, fonts=fonts))


@pytest.mark.parametrize(
    "name, reason",
    [
        ("王小明", "no letters for 小, 明, 王"),
        ("Ada\u0007 Lovelace", "U+0007, a control character"),
        ("Ada\ue000", "U+E000, a private-use character"),
        ("Ada\u202e Lovelace", "U+202E, an invisible formatting character"),  # RTL override
        ("Ada\U000e0001", "U+E0001, an invisible formatting character"),
        ("\u0301Ada", "begins with an accent"),
        ("Ọ̀ṣun " * 30, "too long for one line"),
        ("   ", "the name is empty"),
    ],
)
def test_a_name_that_cannot_be_printed_says_why(name, reason):
    assert reason in problem_with(name)


@pytest.mark.parametrize("name", [*NAMES.values(), "Zoë O'Brien-Łukasiewicz", "Ǹjídé"])
def test_names_that_print_have_no_problem(name):
    assert problem_with(name) is None


def test_the_fixed_text_is_nfc_and_yoruba_everywhere():
    for language, texts in TEXT.items():
        for key, text in texts.items():
            assert nfc(text) == text, (language, key)
            assert text != TEXT["en"][key] or language == "en", key


def test_the_font_and_its_licence_ship_with_the_package():
    fonts = QUIZZES / "gradacc_grader/certificates/fonts"
    shipped = {path.name for path in fonts.iterdir()}
    assert shipped == {"NotoSans-Regular.ttf", "NotoSans-Bold.ttf", "OFL.txt"}
    assert "SIL OPEN FONT LICENSE" in (fonts / "OFL.txt").read_text("utf-8")
    data = tomllib.loads((QUIZZES / "pyproject.toml").read_text("utf-8"))
    patterns = data["tool"]["setuptools"]["package-data"]["gradacc_grader.certificates"]
    packaged = {p.name for pattern in patterns for p in fonts.parent.glob(pattern)}
    assert packaged == shipped | {"index.html", "verify.js", "verify.css"}  # and the page
    assert {p.name for p in default_fonts().values()} <= shipped


def test_a_certificate_signed_before_titles_still_verifies_and_prints(tmp_path, capsys):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from gradacc_grader.certificates.records import (
        FIELDS_BEFORE_TITLES,
        certificate_file,
        write_certificate,
    )  # fmt: skip
    from gradacc_grader.certificates.signing import public_pem, sign_record

    key = Ed25519PrivateKey.generate()
    old = {
        "type": "gradacc-certificate", "id": "7K3M-Q9XT-2HPW", "course": "gradacc",
        "assignment": "gradacc_faq", "name": YORUBA, "score": 9.0, "max_score": 10.0,
        "date": "2026-05-01", "course_version": "0.1.0",
    }  # fmt: skip
    assert set(old) == set(FIELDS_BEFORE_TITLES)
    write_certificate(certificate_file(sign_record(old, key)), tmp_path / "old.json")
    (tmp_path / "issuer.pub").write_bytes(public_pem(key.public_key()))
    status = main(
        ["verify", str(tmp_path / "old.json"), "--public-key", str(tmp_path / "issuer.pub")]
    )
    out = capsys.readouterr().out
    assert out.startswith("SIGNATURE VALID") and "course title" not in out
    # its signature holds; no signed status list covers it, so its status cannot show
    assert status == 1 and "NOT CONFIRMED: signature valid, status unknown" in out
    write_printable(old, "https://x.example/verify/", tmp_path / "old.pdf", default_fonts())
    lines = printed_lines(tmp_path / "old.pdf")
    assert "passed gradacc_faq" in lines and "in the course gradacc" in lines


def test_issuing_without_settings_says_what_to_set(tmp_path, capsys, fill_gradebook):
    course = fill_gradebook(tmp_path / "course", "final", {"ada": (7.0, 3.0, "Ada Lovelace")})
    (course / "certificate-settings.json").unlink()
    main(["keygen", "--out", str(tmp_path / "keys")])
    issue = ["issue", "final", "--course", str(course), "--key", str(tmp_path / "keys/issuer.key")]
    status = main([*issue, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 1 and not (tmp_path / "out").exists()
    for option in ("--course-title", "--issuer", "--verify-url", "--assignment-title final"):
        assert option in err


def test_a_yoruba_certificate_from_the_settings(tmp_path, capsys, fill_gradebook, give_settings):
    course = fill_gradebook(tmp_path / "course", "final", {"ade": (7.0, 3.0, YORUBA)})
    give_settings(course, "final", language="yo")
    main(["keygen", "--out", str(tmp_path / "keys")])
    issue = ["issue", "final", "--course", str(course), "--key", str(tmp_path / "keys/issuer.key")]
    assert main([*issue, "--out", str(tmp_path / "out")]) == 0
    (pdf,) = (tmp_path / "out/ade").glob("*.pdf")
    lines = printed_lines(pdf)
    assert YORUBA in lines and nfc(TEXT["yo"]["title"]) in lines
    assert "ti yege nínú the final exam of final" in lines  # the settings' title
