"""The course site in a real browser: built with the network off, then read page by page.

The module builds the site once (`python -m tools.site`, what `make site` runs) in a network
namespace that holds only the loopback interface (bubblewrap's --unshare-net), so a build that
needs the network fails here. It renders the lessons as the lesson tests executed them
(`--executed`: tests/lessons.py runs each lesson once per test run). It serves the pages on
127.0.0.1 and opens each in Debian's Chromium with every request routed: one to any other host
is recorded and refused. Each page must load with no console error, no failed request and no
empty output area, its math typeset.
Screenshots go to test-artifacts/site/.
"""

from __future__ import annotations

import functools
import http.server
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import sync_playwright

from tools.course_config import course_repository
from tools.site import GUESS_FIRST, lesson_paths
from tools.system_tools import CHROMIUM, CHROMIUM_ARGS

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(1800)]

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts" / "site"
LESSONS = {f"notebooks/{path.stem}.html": path for path in lesson_paths()}
GUIDES = [f"quizzes/{path.stem}.html" for path in sorted(ROOT.glob("quizzes/*.md"))]
# docs/'s own pages: the front page, the instructors', contributors' and sources pages
DOCS_PAGES = [f"{path.stem}.html" for path in sorted((ROOT / "docs").glob("*.md"))]
PAGES = [
    *DOCS_PAGES,
    *LESSONS,
    *GUIDES,
    "search.html",
    "genindex.html",
]
# What a widget shows as text/plain when no fallback came with it: "VBox(children=(...".
WIDGET_REPR = re.compile(r"\b(VBox|HBox|IntSlider|FloatSlider|ToggleButtons|Output)\(")
EXPLORER_CALL = re.compile(r"\b(accumulation_explorer|spread_explorer|budget_slider)\(")

# Output areas with nothing to read or see: no text, no image, no table, no typeset math. An
# output folded until the reader opens it (the answer to a guess) is read from its text content.
EMPTY_OUTPUTS = """() => [...document.querySelectorAll('.cell_output > *')]
    .filter(o => !(o.closest('details:not([open])') ? o.textContent : o.innerText).trim()
                 && !o.querySelector('img, svg, table, mjx-container')
                 && o.tagName !== 'IMG')
    .map(o => o.outerHTML.slice(0, 200))"""
# Math that MathJax left as raw TeX (Sphinx marks every formula with the class "math").
RAW_MATH = """() => [...document.querySelectorAll('.math')]
    .filter(m => !m.querySelector('mjx-container')).map(m => m.innerText.slice(0, 80))"""
# Elements whose content is wider than their box and that do not scroll: cut off, or spilling
# out of the column. Inline elements and MathJax's glyph boxes (a pixel of italic overhang) aside.
CUT_OFF = """() => [...document.querySelectorAll('.bd-article *')]
    .filter(e => !e.closest('.math') && e.clientWidth > 0)
    .filter(e => { const style = getComputedStyle(e);
                   return style.display !== 'inline' && e.scrollWidth > e.clientWidth + 1
                          && !['auto', 'scroll'].includes(style.overflowX); })
    .map(e => `${e.tagName}.${e.className}: ${(e.textContent || '').slice(0, 80)}`)"""
BROKEN_IMAGES = """() => [...document.querySelectorAll('img')]
    .filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src.slice(0, 80))"""


@pytest.fixture(scope="module")
def site(tmp_path_factory, lesson_runs) -> Path:
    """The site, built once in a network namespace with nothing but the loopback interface."""
    assert shutil.which("bwrap"), "the offline build needs bubblewrap: apt-get install bubblewrap"
    work = tmp_path_factory.mktemp("site")
    executed = work / "executed"
    executed.mkdir()
    for name, run in lesson_runs.every_lesson([path.name for path in lesson_paths()]).items():
        nbformat.write(run.notebook, executed / name)
    build = [sys.executable, "-m", "tools.site", "--out", str(work / "site")]
    build += ["--executed", str(executed)]
    offline = ["bwrap", "--dev-bind", "/", "/", "--unshare-net", "--"]
    result = subprocess.run(
        offline + build + ["--work", str(work / "build")], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, (
        f"offline build failed:\n{result.stdout}\n{result.stderr[-5000:]}"
    )
    return work / "site"


@pytest.fixture(scope="module")
def base_url(site):
    """The site served on 127.0.0.1 at a free port; the server stops with the module."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):  # keep the test output for failures
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(site))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


class Visit:
    """One page opened in a fresh browser context, with what it logged and requested.

    `until`: "networkidle" (half a second with no request) for the test that checks every
    request a page makes; the others read the page once it has loaded ("load": its images and
    scripts) and its math is typeset.
    """

    def __init__(self, browser, base_url: str, page_path: str, until: str = "load"):
        self.errors: list[str] = []  # console errors, uncaught exceptions, failed responses
        self.outside: list[str] = []  # requests to any host but the test's server
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.context.route("**/*", functools.partial(self._route, base_url))
        self.page = self.context.new_page()
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.errors.append(f"uncaught: {error}"))
        self.page.on("requestfailed", lambda r: self.errors.append(f"failed: {r.url}"))
        response = self.page.goto(base_url + page_path, wait_until=until)
        assert response is not None and response.ok, f"{page_path}: {response and response.status}"
        # MathJax typesets after the load event; its promise settles when it is done
        self.page.evaluate("() => window.MathJax?.startup?.promise")

    def _route(self, base_url, route):
        if route.request.url.startswith(base_url) or route.request.url.startswith("data:"):
            route.continue_()
        else:
            self.outside.append(route.request.url)
            route.abort()

    def _console(self, message):
        if message.type == "error":
            self.errors.append(f"console: {message.text}")

    def close(self):
        self.context.close()


@pytest.fixture
def visit(browser, base_url):
    opened = []

    def open_page(page_path: str, until: str = "load") -> Visit:
        opened.append(Visit(browser, base_url, page_path, until))
        return opened[-1]

    yield open_page
    for page in opened:
        page.close()


@pytest.fixture(scope="module", params=list(LESSONS))
def lesson(request, browser, base_url) -> tuple[str, Visit]:
    """A lesson's page, opened once for every test below that reads it.

    Module-scoped and parametrized: pytest runs the tests that take it lesson by lesson, in the
    order they are written, so the first (`test_the_lesson_reads_offline`) sees the page as it
    loaded, and each later one finds what it checks untouched by the others' clicks (each opens
    a different kind of block). A page opened per test made 47 visits more, of a second or so.
    """
    page = Visit(browser, base_url, request.param, until="networkidle")
    yield request.param, page
    page.close()


def _pages(folder: Path) -> set[str]:
    return {
        path.relative_to(folder).as_posix()
        for path in folder.rglob("*.html")
        if not path.relative_to(folder).parts[0].startswith("_")
        and path.relative_to(folder).parts[0] != "yo"
    }


def test_the_site_has_every_page_and_only_those(site):
    built = _pages(site)
    assert built == set(PAGES), f"missing: {set(PAGES) - built}; untested: {built - set(PAGES)}"
    # the Yorùbá edition (locales/yo, tests/test_catalogues.py) has the same pages
    assert _pages(site / "yo") == built
    assert '<html lang="yo"' in (site / "yo" / "index.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("page_path", [page for page in PAGES if page not in LESSONS])
def test_the_page_reads_offline(visit, page_path):
    _reads_offline(visit(page_path, until="networkidle"), page_path)


def test_the_lesson_reads_offline(lesson):
    _reads_offline(lesson[1], lesson[0])


def _reads_offline(page: Visit, page_path: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    # the page's first screen: a whole lesson page (up to 25,000 px high) took a second or more
    page.page.screenshot(path=ARTIFACTS / f"{page_path.replace('/', '_')}.png")
    assert page.outside == [], f"{page_path} asked other hosts: {page.outside}"
    assert page.errors == [], f"{page_path}: {page.errors}"
    assert page.page.evaluate(EMPTY_OUTPUTS) == [], f"{page_path}: empty output areas"
    assert page.page.evaluate(BROKEN_IMAGES) == [], f"{page_path}: images that did not load"
    assert page.page.evaluate(RAW_MATH) == [], f"{page_path}: math left as raw TeX"
    text = page.page.inner_text("body")
    assert not WIDGET_REPR.search(text), (
        f"{page_path} shows a widget's text instead of its fallback"
    )


def test_a_lesson_has_launch_buttons_and_its_setup_cell_folded(lesson):
    page_path, page = lesson[0], lesson[1].page
    notebook = LESSONS[page_path].relative_to(ROOT).as_posix()
    repository = course_repository()
    for url in (repository.colab_url(notebook), repository.binder_url(notebook)):
        assert page.locator(f'a[href="{url}"]').count() == 1, f"{page_path}: no link {url}"
    setup = page.locator(".cell").filter(has=page.locator(".cell_input")).first
    assert "tag_hide-input" in setup.get_attribute("class"), "the setup cell must be folded"
    assert not setup.locator(".cell_input").is_visible()
    setup.locator("summary").click()
    assert "make_repeatable" in setup.locator(".cell_input").inner_text()
    # the button that opens the two links says what it does
    button = page.locator(".dropdown-launch-buttons > button")
    assert button.count() == 1
    assert button.get_attribute("aria-label") == "Run this lesson on Colab or Binder"
    assert button.inner_text().strip() == "Run this lesson" and button.is_visible()


def test_quiz_hints_and_answers_stay_folded_until_opened(lesson):
    page_path, page = lesson[0], lesson[1].page
    folded = page.locator(".cell_output details")
    if "self_check(" in LESSONS[page_path].read_text():
        assert folded.count() > 0, f"{page_path}: a quiz without folded answers"
    for index in range(folded.count()):
        details = folded.nth(index)
        assert details.get_attribute("open") is None, "an answer is open before the reader asks"
        folded_part = details.locator(":scope > :not(summary)")
        assert not folded_part.first.is_visible(), "an answer is visible before the reader asks"
        details.locator("summary").click()
        assert folded_part.first.is_visible(), "opening the block does not show the answer"
        assert "".join(folded_part.all_inner_texts()).strip(), "an empty answer block"


def test_each_explorer_shows_its_snapshot(lesson):
    page_path, page = lesson[0], lesson[1].page
    calls = len(EXPLORER_CALL.findall(LESSONS[page_path].read_text()))
    snapshots = page.locator(".cell_output .gradacc-explorer-static")
    assert snapshots.count() == calls, f"{page_path}: {calls} explorers, {snapshots.count()} shown"
    for index in range(calls):
        snapshot = snapshots.nth(index)
        note = snapshot.locator(".gradacc-explorer-note").inner_text()
        assert len(snapshot.inner_text()) > len(note) + 20, "a snapshot without its text"
    if "accumulation_explorer(" in LESSONS[page_path].read_text():
        figure = snapshots.locator("img[src^='data:image/png;base64,']")
        assert figure.count() == 1 and figure.evaluate("i => i.naturalWidth") > 100


# a phone's width for each lesson; the front page on a phone and a laptop (a lesson on a laptop
# is checked on its shared page, below)
@pytest.mark.parametrize(
    "page_path, width",
    [*((page, 390) for page in LESSONS), ("index.html", 390), ("index.html", 1280)],
)
def test_nothing_is_cut_off_wide_outputs_and_tables_scroll(browser, base_url, page_path, width):
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        page.goto(base_url + page_path, wait_until="load")  # its images, styles and scripts
        page.evaluate("() => document.fonts.ready.then(() => window.MathJax?.startup?.promise)")
        _nothing_is_cut_off(page, f"{page_path} at {width} px")
    finally:
        context.close()


def _nothing_is_cut_off(page, where: str) -> None:
    assert page.evaluate(CUT_OFF) == [], f"{where}: cut off"
    # and a wide output does scroll inside its own box, within the column
    column = page.locator(".bd-article").bounding_box()
    for box in page.locator(".cell_output .output").all():
        bounds = box.bounding_box()
        if bounds:
            assert bounds["x"] + bounds["width"] <= column["x"] + column["width"] + 1, where


def test_an_answer_to_guess_stays_folded_until_opened(lesson):
    page_path, page = lesson[0], lesson[1].page
    asks = page.locator("p", has_text=GUESS_FIRST)
    # as many questions on the page as the lesson asks (none in most lessons)
    assert asks.count() == LESSONS[page_path].read_text().count(GUESS_FIRST)
    for index in range(asks.count()):
        # the cell right after the question: its code shows, its output waits behind a button
        cell = asks.nth(index).locator("xpath=following::div[contains(@class, 'cell ')][1]")
        output = cell.locator(".cell_output")
        assert cell.locator(".cell_input").is_visible()
        assert not output.is_visible(), f"{page_path}: the answer shows before the guess"
        cell.locator("details > summary").click()
        assert output.is_visible() and output.inner_text().strip()


def test_nothing_is_cut_off_on_a_laptop(lesson):
    """At 1280 px, with every block the tests above opened: the setup cell, hints, answers."""
    _nothing_is_cut_off(lesson[1].page, f"{lesson[0]} at 1280 px")


def test_the_launch_button_speaks_the_editions_language(visit):
    page = visit("yo/notebooks/01_accumulation_is_a_full_batch.html").page
    button = page.locator(".dropdown-launch-buttons > button")
    assert button.get_attribute("aria-label") == "Ṣe ẹ̀kọ́ yìí lórí Colab tàbí Binder"
    assert button.inner_text().strip() == "Ṣe ẹ̀kọ́ yìí" and button.is_visible()


def test_the_index_says_what_each_lesson_shows(visit):
    page = visit("index.html").page
    for page_path, notebook in LESSONS.items():
        cells = nbformat.read(notebook, as_version=4).cells  # lesson 1 opens with the guide
        title = next(c.source for c in cells if c.source.startswith("# ")).splitlines()[0][2:]
        link = page.locator(f'.bd-article li a[href="{page_path}"]')
        assert link.count() == 1 and link.inner_text() == title, f"{page_path} not listed"
        item = link.locator("xpath=ancestor::li[1]").inner_text()
        assert len(item) > len(title) + 40, f"{page_path}: no line on what the lesson shows"
