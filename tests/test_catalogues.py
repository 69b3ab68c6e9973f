"""The site's Yorùbá edition: its gettext catalogues keep up with the English, and Sphinx uses them.

The English messages are extracted as `make catalogues` extracts them (Sphinx's gettext
builder over the staged pages, tools/catalogues.py); a catalogue of locales/yo that lacks one
of its page's messages, holds one the page no longer has, or holds a fuzzy entry, is behind.
Then the Yorùbá edition is rendered from the same pages (the lessons unexecuted: their text is
what is translated) and read back.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from gradacc_lessons.lessons import LESSONS
from tools.catalogues import CATALOGUED, LOCALES, THEME, behind, extract, read_po, theme_messages
from tools.site import render

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pot(tmp_path_factory) -> Path:
    return extract(tmp_path_factory.mktemp("gettext"))


def test_every_catalogue_is_up_to_date_with_its_english(pot):
    assert behind(pot) == []


def test_the_themes_words_are_all_in_yoruba():
    theme = read_po(LOCALES / "yo" / "LC_MESSAGES" / f"{THEME}.po")
    assert len(theme_messages()) >= 20  # the theme's buttons, tooltips and footer
    assert all(theme.get(msgid, ("", False))[0] for msgid in theme_messages())


def test_a_catalogue_behind_its_english_is_caught(pot, tmp_path):
    locales = Path(shutil.copytree(LOCALES, tmp_path / "locales"))
    index = locales / "yo" / "LC_MESSAGES" / "index.po"
    text = index.read_text(encoding="utf-8")
    first = re.search(r'\nmsgid "(Lessons)"\nmsgstr "[^"]*"\n', text)
    index.write_text(text.replace(first[0], "\n"), encoding="utf-8")  # a message missing
    lesson = locales / "yo" / "LC_MESSAGES" / "notebooks" / "01_accumulation_is_a_full_batch.po"
    lesson.write_text(
        lesson.read_text(encoding="utf-8").replace(
            '\nmsgid "Summary"', '\n#, fuzzy\nmsgid "Summary"'
        )
    )
    problems = behind(pot, locales)
    assert "index: missing: 'Lessons'" in problems
    assert "notebooks/01_accumulation_is_a_full_batch: fuzzy: 'Summary'" in problems
    assert len(problems) == 2


def test_the_edition_translates_the_front_page_summaries_and_quizzes(pot, tmp_path):
    source = pot.parent / "source"
    assert render(source, tmp_path / "work", tmp_path / "yo", "yo") == 0
    front = (tmp_path / "yo" / "index.html").read_text(encoding="utf-8")
    assert "Ẹ̀kọ́ ìṣe lórí <strong>ìkójọpọ̀ gradient</strong>" in front
    assert 'lang="yo"' in front and "Wá nǹkan" in front  # the page's language, the interface
    assert "Ojú ìbòjú kíkún" in front and "Fullscreen mode" not in front  # the theme's words
    lesson = (tmp_path / "yo" / "notebooks" / "01_accumulation_is_a_full_batch.html").read_text()
    assert "Àkótán" in lesson and "accumulation is that sum, weighted so it becomes" not in lesson
    assert "ìkójọpọ̀ gradient ni àpapọ̀ yẹn, tí a pín kí ó lè di àròpín" in lesson
    quiz = (tmp_path / "yo" / "notebooks" / "08_self_study_quiz.html").read_text()
    assert "Ìdánwò fún ara rẹ: ìkójọpọ̀ gradient" in quiz
    for page in ("index", "notebooks/01_accumulation_is_a_full_batch"):
        assert "Ojú-ewé yìí kò tíì ní Yorùbá" not in (tmp_path / "yo" / f"{page}.html").read_text()
    design = (tmp_path / "yo" / "design.html").read_text(encoding="utf-8")
    assert "Ojú-ewé yìí kò tíì ní Yorùbá" in design  # no catalogue: English, with a note


def test_every_translated_message_follows_the_glossary():
    from tools.glossary import problems

    found = []
    for page in (*CATALOGUED, THEME):
        po = LOCALES / "yo" / "LC_MESSAGES" / f"{page}.po"
        for msgstr, _ in read_po(po).values():
            found += [f"{page}: {p} in {msgstr[:60]!r}" for p in problems(msgstr)]
    assert not found, "\n".join(found)


def test_each_lessons_yoruba_title_is_the_one_the_front_page_links_it_by():
    """The sidebar shows a lesson's title as its catalogue translates it; the front page lists
    it as index.po does, and gradacc_lessons/lessons.py declares it: one Yorùbá title a lesson."""
    declared = {f"notebooks/{each.stem}": each.title_yo for each in LESSONS}
    link = re.compile(r"\{doc\}`(.+?) <(notebooks/\w+)>`", re.S)
    checked = 0
    for msgid, (msgstr, _) in read_po(LOCALES / "yo" / "LC_MESSAGES" / "index.po").items():
        english, yoruba = link.match(msgid), link.match(msgstr)
        lesson = LOCALES / "yo" / "LC_MESSAGES" / f"{english[2]}.po" if english else None
        if lesson and lesson.is_file():
            assert yoruba and yoruba[2] == english[2], msgstr[:80]
            title = read_po(lesson)[" ".join(english[1].split())][0]
            assert title == " ".join(yoruba[1].split()), english[2]
            assert title.endswith(declared[english[2]]), (title, declared[english[2]])
            checked += 1
    assert checked == len([page for page in CATALOGUED if page.startswith("notebooks/")])
