"""The verification page in Chromium draws Yorùbá names with Noto Sans.

On a system with only DejaVu Sans and Liberation (this one), Chromium would draw "Ẹ̀" with
the grave inside the capital; the site (docs/_static/fonts) and the verification folder that
``publish`` writes (fonts/) ship Noto Sans, and name it first. Chromium's DevTools protocol
says which font drew each glyph of an element.
"""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[3]
NAME = "Adébáyọ̀ Ẹ̀bùnolúwa Ọlọ́runfẹ́mi-Ṣóbọ̀ọ̀lá"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def site(tmp_path):
    """The verification folder as ``gradacc-certify publish`` writes it, served over http."""
    from datetime import UTC, datetime

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from gradacc_grader.certificates.publishing import publish

    url, key = "https://certificates.example.org/gradacc/verify/", Ed25519PrivateKey.generate()
    now = datetime.now(UTC)
    publish(tmp_path / "r.sqlite", key, url, "Ọ̀ṣun Open School", tmp_path / "verify", now=now)
    handler = functools.partial(_QuietHandler, directory=str(tmp_path))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join()


def fonts_drawing(page, selector: str) -> list[dict]:
    """The fonts Chromium drew ``selector``'s text with: family, web font or not, glyphs."""
    session = page.context.new_cdp_session(page)
    session.send("DOM.enable")
    session.send("CSS.enable")
    root = session.send("DOM.getDocument")["root"]["nodeId"]
    node = session.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    return session.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]


def test_a_yoruba_name_on_the_verify_page_is_drawn_in_noto_sans(site, chromium):
    from playwright.sync_api import sync_playwright

    executable, args = chromium

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=args)
        page = browser.new_page()
        failed = []
        page.on("requestfailed", lambda request: failed.append(request.url))
        page.on("response", lambda r: r.status >= 400 and failed.append(r.url))
        page.goto(f"{site}/verify/")
        page.evaluate(
            """name => {
              for (const [tag, weight] of [["h1", "700"], ["p", "400"]]) {
                const element = document.createElement(tag);
                element.id = "name-" + tag;
                element.style.fontWeight = weight;
                element.textContent = name;
                document.querySelector("main").append(element);
              }
              return document.fonts.ready.then(() => document.fonts.size);
            }""",
            NAME,
        )
        page.evaluate("async () => { await document.fonts.ready; }")
        drawn = {tag: fonts_drawing(page, f"#name-{tag}") for tag in ("h1", "p")}
        browser.close()
    assert failed == []
    for tag, fonts in drawn.items():
        families = {(font["familyName"], font["isCustomFont"]) for font in fonts}
        assert families == {("Noto Sans", True)}, (tag, fonts)


def test_the_sites_font_list_names_noto_sans_first():
    css = (ROOT / "docs" / "_static" / "gradacc.css").read_text("utf-8")
    for variable in ("--pst-font-family-base", "--pst-font-family-heading"):
        assert f'{variable}: "Noto Sans", ' in css
    page = ROOT / "quizzes" / "gradacc_grader" / "certificates" / "page"
    verify = (page / "verify.css").read_text("utf-8")
    assert 'body { font-family: "Noto Sans", ' in verify
    assert 'src: url("fonts/NotoSans-Regular.ttf")' in verify


def test_the_site_ships_the_same_font_files_as_the_certificates():
    shipped = ROOT / "quizzes" / "gradacc_grader" / "certificates" / "fonts"
    site = ROOT / "docs" / "_static" / "fonts"
    names = sorted(path.name for path in shipped.iterdir())
    assert names == sorted(path.name for path in site.iterdir())
    for name in names:
        assert (shipped / name).read_bytes() == (site / name).read_bytes(), name
