"""The guide opens the course twice, from one file: the front page and lesson 1's first cell."""

from __future__ import annotations

import math
import re
from html.parser import HTMLParser

import nbformat

from tools import guide
from tools.site import prepare_for_site


class _Halves(HTMLParser):
    """The text of each language's half (`<div lang="...">`) of an HTML fragment, spaces
    collapsed, the parts of the guide joined in order."""

    def __init__(self):
        super().__init__()
        self.texts: dict[str, list[str]] = {}
        self._lang = None

    def handle_starttag(self, tag, attrs):
        if tag == "div" and "lang" in dict(attrs):
            self._lang = dict(attrs)["lang"]
            self.texts.setdefault(self._lang, [])

    def handle_endtag(self, tag):
        if tag == "div":
            self._lang = None

    def handle_data(self, data):
        if self._lang:
            self.texts[self._lang].append(data)


def sections(fragment: str) -> dict[str, str]:
    parser = _Halves()
    parser.feed(fragment)
    return {lang: " ".join(" ".join(parts).split()) for lang, parts in parser.texts.items()}


def test_the_front_page_and_lesson_1_hold_the_same_guide_in_both_languages():
    text = guide.GUIDE.read_text(encoding="utf-8")
    front = guide.FRONT_PAGE.read_text(encoding="utf-8")
    assert text in front
    cells = nbformat.read(guide.LESSON_1, as_version=4).cells
    assert cells[0].cell_type == "markdown" and cells[0].get("id") == guide.CELL_ID
    opening = sections(cells[0].source)
    assert sorted(opening) == ["en", "yo"]
    assert opening == sections(text)  # the same words, in both languages
    assert len(opening["yo"]) > 1000 and "Ìkójọpọ̀ gradient" in opening["yo"]
    assert guide.write() == []  # nothing to regenerate: both are up to date


def test_the_guide_cell_has_no_listen_buttons_and_links_the_notebooks_then_the_pages():
    cell = guide.notebook_cell(guide.GUIDE.read_text(encoding="utf-8"))
    assert "gradacc-listen" not in cell and 'class="gradacc-guide"' not in cell
    assert 'href="02_scaling_the_loss.ipynb"' in cell and ".html" not in cell
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(cell)])
    page = prepare_for_site(notebook, "01_x.ipynb").cells[0].source
    assert 'href="02_scaling_the_loss.html"' in page and ".ipynb" not in page


def test_each_read_time_is_the_words_of_its_language_at_200_a_minute():
    text = guide.GUIDE.read_text(encoding="utf-8")
    said = dict(re.findall(r'<span class="gradacc-read-time" lang="(\w+)">~(\d+) ', text))
    for lang, words in sections(text).items():
        assert int(said[lang]) == math.ceil(len(words.split()) / 200), lang
    assert sorted(said) == ["en", "yo"]
