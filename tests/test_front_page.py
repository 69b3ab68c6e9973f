"""The front page's guide and the site's two editions in Chromium: Yorùbá and English side by
side, the Listen buttons, the language switch and `hreflang` links, the Yorùbá edition's words.

The site is built with its lessons unexecuted (`python -m tools.site --unexecuted`: their text
only, both editions, in seconds), served on 127.0.0.1 and opened in Debian's Chromium. The
browser's speech is replaced before the page loads (page.add_init_script): `speak` records each
utterance's text and lang, and `getVoices` returns the voices the test chooses — at once, or,
as Chrome does, nothing until the test makes them arrive with a `voiceschanged` event.
"""

from __future__ import annotations

import functools
import http.server
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright

from tests.test_site import CUT_OFF
from tools.catalogues import LOCALES, completeness, read_po
from tools.course_config import course_repository
from tools.system_tools import CHROMIUM, CHROMIUM_ARGS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
PARTS = ["guide-overview", "guide-deep-dive", "guide-uses", "guide-future", "guide-faq"]
WIDE, PHONE = {"width": 1280, "height": 900}, {"width": 390, "height": 844}
LESSON_1 = "notebooks/01_accumulation_is_a_full_batch"
TWINS = ["index", LESSON_1, "notebooks/09_plan_a_real_fine_tune", "design", "search", "genindex"]
EDITIONS = {"en": ("English", ""), "yo": ("Yorùbá", "yo/")}
MESSAGES = LOCALES / "yo" / "LC_MESSAGES"

# The page's speech, replaced: the voices the test chooses, there from the start or arriving
# only when the test calls window.__voicesArrive(); `speak` records instead of speaking.
SPEECH_STUB = """
window.__spoken = [];
const voices = %s.map((lang) => ({lang: lang, name: "test " + lang, localService: true}));
let loaded = %s;
const listeners = [];
Object.defineProperty(window, "speechSynthesis", {configurable: true, value: {
    getVoices: () => (loaded ? voices : []),
    speak: (u) => window.__spoken.push({text: u.text, lang: u.lang}),
    cancel: () => {},
    addEventListener: (type, f) => { if (type === "voiceschanged") listeners.push(f); },
    removeEventListener: (type, f) => {
        if (listeners.includes(f)) listeners.splice(listeners.indexOf(f), 1);
    },
}});
window.__voicesArrive = () => { loaded = true; listeners.slice().forEach((f) => f()); };
// A real utterance takes only a real SpeechSynthesisVoice: a plain one takes the stub's voices.
window.SpeechSynthesisUtterance = function (text) { this.text = text; };
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Both editions, lessons unexecuted, served on 127.0.0.1: the site's root URL."""
    work = tmp_path_factory.mktemp("front")
    build = [sys.executable, "-m", "tools.site", "--unexecuted", "--out", str(work / "site")]
    result = subprocess.run(
        build + ["--work", str(work / "build")], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr[-5000:]}"
    handler = functools.partial(QuietHandler, directory=str(work / "site"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


def open_page(browser, url, voices=(), *, late=False, viewport=WIDE):
    page = browser.new_page(viewport=viewport)
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    listed = "[" + ", ".join(f'"{v}"' for v in voices) + "]"
    page.add_init_script(SPEECH_STUB % (listed, "false" if late else "true"))
    page.goto(url)
    return page, errors


def halves(page, part):
    """The Yorùbá and English halves of a part of the guide, as locators."""
    block = page.locator(f".gradacc-guide #{part}")
    return block.locator(':scope > [lang="yo"]'), block.locator(':scope > [lang="en"]')


def guide_text(page, lang):
    """The guide's words in one language, as a reader sees them: every part's half."""
    texts = page.locator(f'.gradacc-guide-part > [lang="{lang}"]').all_text_contents()
    return re.sub(r"\s+", " ", " ".join(texts)).strip()


@pytest.mark.parametrize("edition, first", [("", "en"), ("yo/", "yo")])
def test_on_a_wide_screen_each_part_stands_side_by_side_the_editions_language_first(
    site, browser, edition, first
):
    page, errors = open_page(browser, site + edition + "index.html")
    assert page.locator(".gradacc-guide-part").count() == len(PARTS)
    for part in PARTS:
        yo, en = (h.bounding_box() for h in halves(page, part))
        left, right = (en, yo) if first == "en" else (yo, en)
        assert abs(yo["y"] - en["y"]) < 2, f"{part}: the two languages do not start level"
        assert left["x"] + left["width"] <= right["x"], f"{part}: not side by side, {first} first"
        assert left["width"] > 250 and right["width"] > 250, f"{part}: a column too narrow"
    buttons = {
        lang: page.locator(f'.gradacc-listen[lang="{lang}"]').bounding_box()
        for lang in ["yo", "en"]
    }
    second = "yo" if first == "en" else "en"
    assert buttons[first]["x"] < buttons[second]["x"], "the edition's Listen button comes first"
    assert page.evaluate(CUT_OFF) == [] and errors == []


@pytest.mark.parametrize("edition, first", [("", "en"), ("yo/", "yo")])
def test_on_a_phone_each_part_shows_one_language_above_the_other(site, browser, edition, first):
    page, errors = open_page(browser, site + edition + "index.html", viewport=PHONE)
    for part in PARTS:
        yo, en = (h.bounding_box() for h in halves(page, part))
        above, below = (en, yo) if first == "en" else (yo, en)
        assert above["y"] + above["height"] <= below["y"], f"{part}: not {first} above"
        assert above["width"] > 300 and abs(above["x"] - below["x"]) < 2, part
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert page.evaluate(CUT_OFF) == [] and errors == []


def test_each_listen_button_reads_its_language_with_that_languages_voice(site, browser):
    page, errors = open_page(browser, site + "index.html", ["en-US", "yo-NG"])
    tools = page.locator(".gradacc-guide-tools")
    tools.locator('.gradacc-listen[lang="yo"]').click()
    expect(page.locator(".gradacc-guide-tools")).to_be_visible()
    page.wait_for_function("window.__spoken.length === 1")
    spoken = page.evaluate("window.__spoken")
    assert spoken == [{"text": guide_text(page, "yo"), "lang": "yo"}]
    # the whole guide: every part, the FAQ included
    assert "Ìkójọpọ̀ gradient jẹ́ kí o kọ́ model" in spoken[0]["text"]
    assert "Èwo nínú àwọn layer normalization" in spoken[0]["text"]
    assert "Gradient accumulation trains" not in spoken[0]["text"]
    tools.locator('.gradacc-listen[lang="en"]').click()
    page.wait_for_function("window.__spoken.length === 2")
    assert page.evaluate("window.__spoken")[1] == {"text": guide_text(page, "en"), "lang": "en"}
    assert errors == []


def test_listen_waits_for_voices_that_arrive_late(site, browser):
    """Chrome's getVoices() is empty until `voiceschanged`: the first click must still speak."""
    page, errors = open_page(browser, site + "index.html", ["en-US", "yo-NG"], late=True)
    page.locator('.gradacc-listen[lang="yo"]').click()
    page.wait_for_timeout(300)  # the click is waiting: neither spoken nor refused yet
    assert page.evaluate("window.__spoken") == []
    expect(page.locator(".gradacc-listen-note")).to_have_text("")
    page.evaluate("window.__voicesArrive()")
    page.wait_for_function("window.__spoken.length === 1")
    assert page.evaluate("window.__spoken")[0]["lang"] == "yo"
    expect(page.locator(".gradacc-listen-note")).to_have_text("")
    assert errors == []


def test_without_a_yoruba_voice_the_button_says_so_and_reads_nothing(site, browser):
    page, errors = open_page(browser, site + "index.html", ["en-US", "fr-FR"])
    page.locator('.gradacc-listen[lang="yo"]').click()
    note = page.locator(".gradacc-listen-note")
    expect(note).to_have_text("Aṣàwákiri rẹ kò ní ohùn Yorùbá, nítorí náà a kò kà á sókè.")
    assert note.get_attribute("lang") == "yo"
    assert page.evaluate("window.__spoken") == []
    page.locator('.gradacc-listen[lang="en"]').click()
    page.wait_for_function("window.__spoken.length === 1")
    expect(note).to_have_text("")
    assert page.evaluate("window.__spoken")[0]["lang"] == "en"
    assert errors == []


def test_with_no_voice_ever_the_button_gives_up_after_waiting(site, browser):
    """A browser with no voice may never fire `voiceschanged`: the click says so in the end."""
    page, errors = open_page(browser, site + "index.html", [], late=True)
    page.locator('.gradacc-listen[lang="en"]').click()
    note = page.locator(".gradacc-listen-note")
    expect(note).to_have_text(
        "Your browser has no English voice, so nothing is read aloud.", timeout=10_000
    )
    assert page.evaluate("window.__spoken") == [] and errors == []


def test_each_part_links_to_the_lessons_that_measure_it_in_both_languages(site, browser):
    page, _ = open_page(browser, site + "index.html")
    for part in PARTS:
        links = []
        for half in halves(page, part):
            anchors = half.locator("a")
            links.append([anchors.nth(i).get_attribute("href") for i in range(anchors.count())])
        assert links[0] == links[1] and links[0], f"{part}: {links}"
        for href in links[0]:
            stem = re.fullmatch(r"notebooks/(\w+)\.html", href)
            assert stem and (ROOT / "notebooks" / f"{stem[1]}.ipynb").exists(), href
            # and the page is there, in both editions
            for edition in ("", "yo/"):
                response = page.request.get(site + edition + href)
                assert response.ok, f"{edition}{href}: {response.status}"
    uses = "".join(halves(page, "guide-uses")[1].all_text_contents())
    for use in ("language model", "32", "gradient_accumulation_steps", "paper"):
        assert use in uses
    future = "".join(halves(page, "guide-future")[1].all_text_contents())
    for lever in ("mixed precision", "checkpointing", "ZeRO", "FSDP", "pipeline", "budget"):
        assert lever in future


@pytest.mark.parametrize("page_name", TWINS)
@pytest.mark.parametrize("language", list(EDITIONS))
def test_every_page_links_its_twin_in_the_other_edition(site, browser, page_name, language):
    folder = EDITIONS[language][1]
    page, errors = open_page(browser, f"{site}{folder}{page_name}.html", viewport=PHONE)
    assert page.evaluate("document.documentElement.lang") == language
    alternates = page.evaluate(
        """[...document.querySelectorAll('link[rel="alternate"][hreflang]')]
           .map((l) => [l.hreflang, l.href])"""
    )
    assert dict(alternates) == {
        other: f"{site}{there}{page_name}.html" for other, (_, there) in EDITIONS.items()
    }
    switch = page.locator(".gradacc-editions")
    expect(switch).to_be_visible()
    expect(switch.locator('[aria-current="page"]')).to_have_text(EDITIONS[language][0])
    # the switch fits a phone's header with the theme's buttons
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    (other,) = set(EDITIONS) - {language}
    switch.locator(f'a[hreflang="{other}"]').click()
    page.wait_for_url(f"{site}{EDITIONS[other][1]}{page_name}.html")
    assert page.evaluate("document.documentElement.lang") == other
    assert errors == []


def test_the_yoruba_edition_names_and_folds_in_yoruba_with_one_summary(site, browser):
    index = read_po(MESSAGES / "index.po")
    page, errors = open_page(browser, f"{site}yo/{LESSON_1}.html")
    title = read_po(MESSAGES / f"{LESSON_1}.po")[
        "Lesson 1 — Accumulation is a full batch in disguise"
    ]
    site_title = index["gradacc: gradient accumulation, measured"][0]
    assert title[0].startswith("Ẹ̀kọ́ 1 — ") and site_title.startswith("gradacc: ")
    assert page.title() == f"{title[0]} — {site_title}"
    expect(page.locator(".bd-sidebar-primary .current > a")).to_have_text(title[0])
    expect(page.locator(".navbar-brand")).to_contain_text(site_title)
    fold = page.locator(".cell details.hide summary .collapsed").first
    expect(fold).to_have_text("Fi kóòdù sẹ́ẹ̀lì hàn")
    article = page.locator(".bd-article")
    expect(article.locator("section > h2", has_text="Àkótán")).to_have_count(1)
    expect(article.locator("section > h2", has_text="Dán ara rẹ wò")).to_have_count(1)
    for english in ("Check yourself", "Show code cell", "Summary", "Àkótán ní Yorùbá"):
        assert english not in article.inner_text(), english
    assert errors == []


def test_the_english_edition_shows_one_summary_too(site, browser):
    page, _ = open_page(browser, f"{site}{LESSON_1}.html")
    article = page.locator(".bd-article")
    expect(article.locator("section > h2", has_text="Summary")).to_have_count(1)
    assert "Àkótán ní Yorùbá" not in article.inner_text()
    expect(page.locator(".cell details.hide summary .collapsed").first).to_have_text(
        "Show code cell source"
    )


def test_a_partly_translated_page_says_how_much_and_a_whole_one_says_nothing(site, browser):
    # the share of the lesson's English words translated, counted here from the catalogue
    messages = read_po(MESSAGES / f"{LESSON_1}.po")
    words = {msgid: len(msgid.split()) for msgid in messages}
    done = sum(words[m] for m, (text, fuzzy) in messages.items() if text and not fuzzy)
    percent = int(100 * done / sum(words.values()))
    assert percent < 100 and completeness(MESSAGES / f"{LESSON_1}.po") < 1
    page, _ = open_page(browser, f"{site}yo/{LESSON_1}.html")
    expect(page.locator(".bd-article .admonition").first).to_contain_text(
        f"A ti túmọ̀ {percent}% ojú-ewé yìí sí Yorùbá"
    )
    assert completeness(MESSAGES / "index.po") == 1  # the front page: whole, so no note
    page, _ = open_page(browser, f"{site}yo/index.html")
    assert "A ti túmọ̀" not in page.locator(".bd-article").inner_text()


@pytest.mark.parametrize("language", list(EDITIONS))
def test_a_lessons_launch_buttons_open_the_notebook_in_the_editions_language(
    site, browser, language
):
    folder = EDITIONS[language][1]
    page, _ = open_page(browser, f"{site}{folder}{LESSON_1}.html")
    notebook = f"notebooks/{folder}{Path(LESSON_1).name}.ipynb"
    assert (ROOT / notebook).is_file()
    repository = course_repository()
    for url in (repository.colab_url(notebook), repository.binder_url(notebook)):
        assert page.locator(f'a[href="{url}"]').count() == 1, f"{language}: no link {url}"
