"""The front page's guide in Chromium: the language switch and the Listen button.

A small Sphinx build of docs/ alone (the lessons are not staged: the page's links to them are
checked as links), served on 127.0.0.1 and opened in Debian's Chromium. The browser's speech is
replaced before the page loads (page.add_init_script): `speechSynthesis.speak` records each
utterance's text and lang, and `getVoices` returns the voices the test chooses, with or
without a Yorùbá one, so the test sees what the button asks the browser to say.
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

from tools.system_tools import CHROMIUM, CHROMIUM_ARGS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent

# The page's speech, replaced: voices as the test chooses, `speak` records instead of speaking.
SPEECH_STUB = """
window.__spoken = [];
const voices = %s.map((lang) => ({lang: lang, name: "test " + lang, localService: true}));
Object.defineProperty(window, "speechSynthesis", {configurable: true, value: {
    getVoices: () => voices,
    speak: (u) => window.__spoken.push({text: u.text, lang: u.lang}),
    cancel: () => {},
}});
// A real utterance takes only a real SpeechSynthesisVoice: a plain one takes the stub's voices.
window.SpeechSynthesisUtterance = function (text) { this.text = text; };
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("front") / "site"
    build = [sys.executable, "-m", "sphinx", "-b", "html", "-q", str(ROOT / "docs"), str(out)]
    subprocess.run(build, check=True, cwd=ROOT, capture_output=True)
    handler = functools.partial(QuietHandler, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/index.html"
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


def open_page(browser, url, voices):
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.add_init_script(SPEECH_STUB % ("[" + ", ".join(f'"{v}"' for v in voices) + "]"))
    page.goto(url)
    return page, errors


def visible_text(page, lang):
    text = page.locator(f'.gradacc-guide section[lang="{lang}"] .gradacc-guide-text')
    return re.sub(r"\s+", " ", text.text_content()).strip()


def test_the_switch_shows_one_language_and_listen_reads_it_in_that_language(site, browser):
    page, errors = open_page(browser, site, ["en-US", "yo-NG"])
    guide = page.locator(".gradacc-guide")
    yo, en = guide.locator('section[lang="yo"]'), guide.locator('section[lang="en"]')
    expect(yo).to_be_visible()
    expect(en).to_be_hidden()
    expect(yo).to_contain_text("~2 ìṣẹ́jú láti kà")
    listen = guide.locator(".gradacc-listen")
    expect(listen).to_have_text("Tẹ́tí sí i")
    listen.click()
    spoken = page.evaluate("window.__spoken")
    assert spoken == [{"text": visible_text(page, "yo"), "lang": "yo"}]
    assert "Ìkójọpọ̀ gradient jẹ́ kí o kọ́ model" in spoken[0]["text"]

    guide.get_by_role("button", name="English", exact=True).click()
    expect(en).to_be_visible()
    expect(yo).to_be_hidden()
    expect(en).to_contain_text("~2 min read")
    expect(listen).to_have_text("Listen")
    listen.click()
    spoken = page.evaluate("window.__spoken")
    assert spoken[1] == {"text": visible_text(page, "en"), "lang": "en"}
    assert spoken[1]["text"].startswith("Gradient accumulation in two minutes")
    assert errors == []


def test_without_a_yoruba_voice_the_button_says_so_and_reads_nothing(site, browser):
    page, errors = open_page(browser, site, ["en-US", "fr-FR"])
    guide = page.locator(".gradacc-guide")
    guide.locator(".gradacc-listen").click()
    note = guide.locator(".gradacc-listen-note")
    expect(note).to_have_text("Ẹ̀rọ aṣàwárí rẹ kò ní ohùn Yorùbá, nítorí náà a kò kà á sókè.")
    assert page.evaluate("window.__spoken") == []
    guide.get_by_role("button", name="English", exact=True).click()
    expect(note).to_have_text("")
    guide.locator(".gradacc-listen").click()
    assert page.evaluate("window.__spoken")[0]["lang"] == "en"
    assert errors == []


def test_each_part_of_the_guide_links_to_a_lesson(site, browser):
    page, _ = open_page(browser, site, [])
    for lang in ("yo", "en"):
        links = page.locator(f'.gradacc-guide section[lang="{lang}"] a')
        hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
        assert len(hrefs) == 6, hrefs
        for href in hrefs:
            stem = re.fullmatch(r"notebooks/(\w+)\.html", href)
            assert stem and (ROOT / "notebooks" / f"{stem[1]}.ipynb").exists(), href
