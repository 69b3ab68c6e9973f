"""The verification page ``gradacc-certify publish`` writes, in a real Chromium (WebCrypto's
Ed25519), in English and in Yorùbá, served over http at the issuer's address and opened from
disk: a valid credential and baked badge pass; a changed byte, a revoked credential, a page
hosted at another origin, a changed issuer key, a stale and a replayed status list do not."""

from __future__ import annotations

import functools
import http.server
import shutil
import socket
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _serve(folder: Path, port: int = 0):
    handler = functools.partial(_QuietHandler, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def issuer(tmp_path_factory, fill_gradebook):
    """An issuer at http://127.0.0.1:PORT/verify/ (its place), with Ada's credential valid and
    Bob's revoked, and the same folder served by a second origin."""
    from gradacc_grader.certify import main

    root = tmp_path_factory.mktemp("issuer")
    www = root / "www"
    www.mkdir()
    httpd = _serve(www, _free_port())
    url = f"http://127.0.0.1:{httpd.server_address[1]}/verify/"
    students = {"ada": (7.0, 3.0, "Adébáyọ̀ Ọ̀ṣun"), "bob": (7.0, 2.0, "Bob Kahn")}
    course = fill_gradebook(root / "course", "final", students)
    key = root / "keys/issuer.key"

    def run(*args):
        assert main([str(a) for a in args]) == 0, args

    run("settings", "--course", course, "--verify-url", url)
    run("keygen", "--out", root / "keys")
    run("issue", "final", "--course", course, "--key", key, "--out", root / "out")
    from gradacc_grader.certificates.publishing import publish
    from gradacc_grader.certificates.signing import load_private_key

    signing, sqlite = load_private_key(key), course / "certificates.sqlite"
    for name, when in (("stale", timedelta(days=30)), ("older", timedelta(hours=3))):
        publish(sqlite, signing, url, "Ọ̀ṣun Open School", root / name, now=datetime.now(UTC) - when)
    bob = next((root / "out/bob").glob("*.jwt")).stem.removeprefix("gradacc-credential-")
    run("revoke", bob, "--registry", sqlite, "--key", key, "--reason", "copied the final")
    run("publish", "--course", course, "--key", key, "--out", www / "verify")
    elsewhere = _serve(www)
    yield {
        "root": root,
        "url": url,
        "elsewhere": f"http://127.0.0.1:{elsewhere.server_address[1]}/verify/",
        "www": www,
    }
    for server in (httpd, elsewhere):
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser(chromium):
    from playwright.sync_api import sync_playwright

    executable, args = chromium
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, headless=True, args=args)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, issuer):
    """A tab with its own localStorage that records the addresses it asks for and its errors."""
    context = browser.new_context()
    tab = context.new_page()
    requested, errors = [], []
    tab.on("request", lambda request: requested.append(request.url))
    tab.on("pageerror", lambda error: errors.append(str(error)))
    yield tab
    context.close()
    own = (issuer["url"], issuer["elsewhere"], issuer["www"].as_uri())
    assert [url for url in requested if not url.startswith(own)] == []
    assert errors == []


def file_of(issuer, student: str, suffix: str = ".jwt") -> Path:
    (path,) = (issuer["root"] / "out" / student).glob(f"*{suffix}")
    return path


def check(page, address: str, path: Path, label: str = "Credential file or badge image") -> str:
    page.goto(address)
    page.get_by_label(label).set_input_files(str(path))
    page.wait_for_selector("#verdict.valid, #verdict.invalid", timeout=20_000)
    return page.inner_text("#verdict")


YO_LABEL = "Fáìlì ìwé-ẹ̀rí tàbí àwòrán àmì-ẹ̀yẹ"


def test_a_credential_and_its_baked_badge_verify_over_http_in_both_languages(page, issuer):
    shown = check(page, issuer["url"], file_of(issuer, "ada"))
    assert shown.startswith("Valid certificate "), shown
    assert "Adébáyọ̀ Ọ̀ṣun" in shown and "not revoked, not superseded" in shown
    from gradacc_grader.certificates.signing import fingerprint, load_public_key

    printed = fingerprint(load_public_key(issuer["root"] / "keys/issuer.pub"))
    assert printed in shown
    shown = check(page, issuer["url"] + "?lang=yo", file_of(issuer, "ada", ".png"), YO_LABEL)
    assert shown.startswith("Ìwé-ẹ̀rí tòótọ́ ni: "), shown
    assert "a kò fagi lé e, a kò sì fi òmíràn rọ́pò rẹ̀" in shown
    assert page.locator("html").get_attribute("lang") == "yo"


def test_from_disk_it_verifies_and_says_where_the_key_came_from(page, issuer):
    address = (issuer["www"] / "verify/index.html").as_uri()
    shown = check(page, address, file_of(issuer, "ada"))
    assert shown.startswith("Valid certificate ") and "Opened from disk" in shown
    shown = check(page, address + "?lang=yo", file_of(issuer, "ada", ".png"), YO_LABEL)
    assert shown.startswith("Ìwé-ẹ̀rí tòótọ́ ni") and "A ṣí i láti orí kọ̀ǹpútà" in shown


def test_revoked_and_changed_credentials_are_refused(page, issuer, tmp_path):
    shown = check(page, issuer["url"], file_of(issuer, "bob"))
    assert shown.startswith("Not valid: revoked:") and "copied" not in shown
    token = file_of(issuer, "ada").read_text().strip()
    changed = token[:-3] + ("A" if token[-3] != "A" else "B") + token[-2:]
    (tmp_path / "changed.jwt").write_text(changed)
    shown = check(page, issuer["url"] + "?lang=yo", tmp_path / "changed.jwt", YO_LABEL)
    assert shown.startswith("Kì í ṣe ìwé-ẹ̀rí tòótọ́: ìbuwọ́lù náà kò bá a mu")


def test_a_page_at_another_origin_says_so(page, issuer):
    shown = check(page, issuer["elsewhere"], file_of(issuer, "ada"))
    assert shown.startswith(f"Not valid: this page is hosted at {issuer['elsewhere']}")
    assert f"not at the issuer's own address {issuer['url']}" in shown


def test_a_changed_issuer_key_is_named(page, issuer):
    page.goto(issuer["url"])
    page.evaluate(
        "([id, fp]) => localStorage.setItem('gradacc-issuer-key/' + id, fp)",
        [issuer["url"] + "issuer.json", "SHA256:0000-0000-0000-0000-0000"],
    )
    shown = check(page, issuer["url"], file_of(issuer, "ada"))
    assert "the key published for this issuer changed" in shown
    assert "before SHA256:0000-0000-0000-0000-0000" in shown


def test_stale_and_replayed_status_lists_are_refused(page, issuer):
    status = issuer["www"] / "verify/status"
    saved = {p.name: p.read_bytes() for p in status.iterdir()}
    try:
        assert check(page, issuer["url"], file_of(issuer, "ada")).startswith("Valid")
        for name in saved:  # an older list, signed before Bob's revocation, still in date
            shutil.copy(issuer["root"] / "older/status" / name, status / name)
        shown = check(page, issuer["url"], file_of(issuer, "bob"))
        assert shown.startswith("Not valid: replayed: this status list (issued ")
        for name in saved:
            shutil.copy(issuer["root"] / "stale/status" / name, status / name)
        due = (datetime.now(UTC) - timedelta(days=23)).strftime("%Y-%m-%d")
        shown = check(page, issuer["url"], file_of(issuer, "ada"))
        assert shown.startswith("Not valid: stale: the status list was due to be replaced by")
        assert due in shown
    finally:
        for name, data in saved.items():
            (status / name).write_bytes(data)


def test_the_command_line_checks_at_the_issuers_own_address(issuer, certify):
    # no --published: verify fetches issuer.json, jwks.json and the lists from the address
    # the credential names, over http here (https on a real site)
    status, out, err = certify("verify", file_of(issuer, "ada", ".png"))
    assert status == 0, out + err
    assert f"(published at {issuer['url']}jwks.json)" in out and "checked against a copy" not in out
    status, out, _ = certify("verify", file_of(issuer, "bob"))
    assert status == 1 and out.startswith("INVALID: revoked:")
