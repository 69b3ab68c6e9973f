"""The verification page in a real Chromium, served over http and opened from disk (file://):
valid certificates pass; forged, tampered and revoked ones do not; a tampered, stale, replayed
or forked registry is refused with its reason; the page reads nothing but its own folder."""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from gradacc_grader.certificates.ids import new_id
from gradacc_grader.certificates.offline import write_offline_copy
from gradacc_grader.certificates.untrusted import parse_json_object

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "quizzes" / "verify"
STATIC = ROOT / "docs" / "_static"  # <site>/_static: the font
MISMATCH = "the registry's signature does not match the issuer's key"
VARIANTS = ("older", "stale", "future", "forked", "forked_next")


def slug(name: str) -> str:
    return name.replace(" ", "-").replace("_", "-")


@pytest.fixture(scope="module")
def site(tmp_path_factory, registries, tampered):
    """One copy of the page per registry: www/verify/ the current one, www/<case>/ the others.

    Each copy also has the registry.js the site build writes, for reading from disk;
    www/committed/ is the page as committed (nothing published), without one.
    """
    www = tmp_path_factory.mktemp("www")
    shutil.copytree(STATIC, www / "_static")  # as the site lays it out

    def publish(folder: str, registry: Path | None) -> None:
        shutil.copytree(PAGE, www / folder)
        if registry is not None:
            shutil.copy(registries["public_key"], www / folder / "issuer.pub")
            shutil.copy(registry, www / folder / "registry.json")
        write_offline_copy(www / folder)

    publish("verify", registries["current"])
    for name in VARIANTS:
        publish(slug(name), registries[name])
    for name, (path, _) in tampered.items():
        publish(slug(name), path)
    publish("empty", None)
    publish("missing", registries["current"])
    (www / "missing/registry.json").unlink()
    shutil.copytree(PAGE, www / "committed")  # as in the repository: no registry.js
    return www


@pytest.fixture(scope="module")
def server(site):
    """A static web server on 127.0.0.1 for the site, stopped after the tests."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def browser(chromium):
    from playwright.sync_api import sync_playwright

    executable, args = chromium
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, headless=True, args=args)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, server, site):
    """A tab in a fresh browser profile (its own localStorage) that records every address it
    asks for and every error it logs."""
    context = browser.new_context()
    tab = context.new_page()
    requested, errors = [], []
    tab.on("request", lambda request: requested.append(request.url))
    tab.on("console", lambda message: message.type == "error" and errors.append(message.text))
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.expected_errors = 0
    tab.own = [server + "/", site.as_uri() + "/"]
    yield tab
    context.close()
    own = tuple(tab.own)
    assert [url for url in requested if not url.startswith(own)] == [], (
        "the page asked for something outside its own site"
    )
    assert len(errors) == tab.expected_errors, errors


def at(server: str, folder: str) -> str:
    """The page's address: over http, or from disk when ``server`` is the site's file:// URI."""
    return f"{server}/{folder}/" if server.startswith("http") else f"{server}/{folder}/index.html"


def verdict(page) -> str:
    page.wait_for_selector("#verdict.valid, #verdict.invalid", timeout=20_000)
    return page.inner_text("#verdict")


def registry_status(page) -> str:
    page.wait_for_selector("#registry-status.current, #registry-status.refused", timeout=20_000)
    return page.inner_text("#registry-status")


def check_id(page, server, typed: str, folder: str = "verify") -> str:
    page.goto(at(server, folder))
    page.get_by_label("Certificate ID").fill(typed)
    page.get_by_role("button", name="Check the ID").click()
    return verdict(page)


def upload(page, server, path: Path, folder: str = "verify") -> str:
    page.goto(at(server, folder))
    page.get_by_label("Certificate file (.json)").set_input_files(str(path))
    return verdict(page)


def certificate(registries, student: str) -> Path:
    (path,) = (registries["root"] / "out" / student).glob("*.json")
    return path


@pytest.fixture(params=["http", "file"])
def origin(request, server, site):
    """The site's address over http, and on disk (file://): every test below runs on both."""
    return server if request.param == "http" else site.as_uri()


def test_a_valid_id_typed_by_hand_is_accepted(page, origin, registries):
    ada = registries["ids"]["ada"]
    shown = check_id(page, origin, ada.lower().replace("-", " "))
    assert shown.startswith(f"Valid certificate {ada}")
    assert "Ada Lovelace" in shown and "10 of 10" in shown
    assert "Registry date\tnumber 2, issued " in shown and "next due by" in shown


def test_the_page_says_at_once_which_registry_it_checks_against(page, origin):
    page.goto(at(origin, "verify"))
    status = registry_status(page)
    assert "number 2, issued" in status and "ago" in status
    source = "registry.json" if origin.startswith("http") else "registry.js (the copy"
    assert f"read from {source}" in status


def test_the_qr_codes_address_checks_the_id_on_opening(page, origin, registries):
    ada = registries["ids"]["ada"]
    page.goto(f"{at(origin, 'verify')}?id={ada}")
    assert verdict(page).startswith(f"Valid certificate {ada}")


def test_a_valid_certificate_file_is_accepted(page, origin, registries):
    assert upload(page, origin, certificate(registries, "ada")).startswith("Valid certificate")


def test_a_revoked_certificate_is_rejected_as_a_file_and_as_an_id(page, origin, registries):
    shown = check_id(page, origin, registries["ids"]["bob"])
    assert shown.startswith("Not valid: revoked") and "copied the final" not in shown
    assert "revoked" in upload(page, origin, certificate(registries, "bob"))


def test_a_forged_certificate_is_rejected(page, origin, registries):
    assert "signature does not match" in upload(page, origin, registries["forged"])


def test_a_registry_with_a_deleted_revocation_is_refused(page, origin, registries):
    shown = check_id(page, origin, registries["ids"]["bob"], slug("a revocation deleted"))
    assert shown.startswith(f"Not valid: {MISMATCH}")
    assert MISMATCH in registry_status(page)


def test_a_stale_registry_is_refused_saying_since_when(page, origin, registries):
    shown = check_id(page, origin, registries["ids"]["ada"], "stale")
    assert shown.startswith("Not valid: stale: this registry (number 3, issued ")
    assert "was due to be replaced by" in shown and "53 days ago" in shown


def test_an_older_registry_after_a_newer_one_is_refused_as_replayed(page, origin, registries):
    assert check_id(page, origin, registries["ids"]["ada"]).startswith("Valid")
    shown = check_id(page, origin, registries["ids"]["bob"], "older")
    assert shown.startswith(
        "Not valid: replayed: this is registry number 1, older than number 2, which this "
        "browser has already checked"
    )


def test_the_committed_page_says_nothing_is_published_yet(page, origin):
    page.goto(at(origin, "empty"))
    assert "published no certificates yet" in registry_status(page)


def test_every_tampered_registry_is_refused_with_its_reason(page, server, registries, tampered):
    for name, (_, reason) in tampered.items():
        for student in ("ada", "bob"):
            shown = check_id(page, server, registries["ids"][student], slug(name))
            assert shown.startswith("Not valid: ") and reason in shown, (name, shown)
    page.screenshot(path=str(registries["root"] / "tampered.png"))


def test_a_registry_from_the_future_is_refused(page, server, registries):
    shown = check_id(page, server, registries["ids"]["ada"], "future")
    assert "in the future" in shown and "clock" in shown


def test_an_older_registry_passes_where_no_newer_one_was_seen(page, server, registries):
    # what CERTIFICATES.md says stays unprotected: a reader who never saw the newer registry
    shown = check_id(page, server, registries["ids"]["bob"], "older")
    assert shown.startswith("Valid") and "number 1, issued" in shown


def test_a_newer_registry_after_an_older_one_is_accepted(page, server, registries):
    assert check_id(page, server, registries["ids"]["ada"], "older").startswith("Valid")
    assert check_id(page, server, registries["ids"]["ada"]).startswith("Valid")


def test_two_registries_under_one_number_are_refused(page, server, registries):
    assert check_id(page, server, registries["ids"]["ada"]).startswith("Valid")
    shown = check_id(page, server, registries["ids"]["ada"], "forked")
    assert "another registry under the same number 2" in shown


def test_a_registry_whose_chain_misses_the_one_seen_is_refused(page, server, registries):
    assert check_id(page, server, registries["ids"]["ada"]).startswith("Valid")
    shown = check_id(page, server, registries["ids"]["ada"], slug("forked_next"))
    assert "does not continue registry number 2" in shown


def test_a_site_without_its_registry_says_so(page, server):
    page.expected_errors = 1  # Chromium logs the 404 of registry.json
    page.goto(f"{server}/missing/")
    assert "does not publish ./registry.json (404)" in registry_status(page)


def test_the_page_from_disk_without_registry_js_says_at_once_how_to_serve_it(page, site):
    page.expected_errors = 1  # Chromium logs the missing registry.js
    page.goto((site / "committed/index.html").as_uri())
    status = registry_status(page)
    assert "opened from a file (file://)" in status
    assert "python -m http.server" in status and "site/verify/index.html" in status


@pytest.mark.parametrize(
    ("field", "value"), [("name", "Mallory"), ("score", 9.5), ("date", "2020-01-01")]
)
def test_a_tampered_certificate_file_is_rejected(page, server, registries, tmp_path, field, value):
    document = json.loads(certificate(registries, "ada").read_text("utf-8"))
    document["certificate"][field] = value
    tampered = tmp_path / "readable.json"
    tampered.write_text(json.dumps(document), "utf-8")
    assert "readable copy was changed" in upload(page, server, tampered)
    record = json.loads(document["signed"])
    record[field] = value
    document["certificate"] = record
    document["signed"] = json.dumps(record, sort_keys=True, separators=(",", ":"))
    tampered = tmp_path / "signed.json"
    tampered.write_text(json.dumps(document), "utf-8")
    assert "signature does not match" in upload(page, server, tampered)


def test_a_certificate_saved_again_by_an_editor_is_accepted(page, server, registries, tmp_path):
    # as `verify` accepts it: other indentation, escaped characters, CRLF, a byte order mark
    document = json.loads(certificate(registries, "ada").read_text("utf-8"))
    text = json.dumps(document, indent=4, ensure_ascii=True).replace("\n", "\r\n")
    saved = tmp_path / "saved.json"
    saved.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert upload(page, server, saved).startswith("Valid certificate")


def test_unknown_and_mistyped_ids_are_rejected(page, server):
    assert "unknown ID" in check_id(page, server, "7K3M-Q9XT-2HPW")
    assert "mistyped" in check_id(page, server, "7K3M-Q9XT-2HPV")


def test_a_file_that_is_not_a_certificate_is_rejected(page, server, tmp_path):
    junk = tmp_path / "junk.json"
    junk.write_bytes(b"\x00\x01 not json")
    assert "not JSON" in upload(page, server, junk)


def test_the_page_and_the_package_agree_on_every_check_character(page, server):
    ids = [new_id() for _ in range(2_000)]
    page.goto(f"{server}/verify/")
    checked = page.evaluate(
        "(ids) => ids.map((id) => gradaccVerify.normalizeId(id.toLowerCase()))", ids
    )
    assert checked == ids
    wrong = [i[:-1] + ("0" if i[-1] != "0" else "1") for i in ids[:200]]
    refused = page.evaluate(
        """(ids) => ids.filter((id) => {
            try { gradaccVerify.normalizeId(id); return false; } catch { return true; }
        })""",
        wrong,
    )
    assert refused == wrong


def test_the_page_and_the_package_agree_on_duplicate_keys(page, server):
    texts = [
        '{"a": 1, "b": {"a": 2}}',
        '{"a": 1, "a": 2}',
        '{"a": 1, "\\u0061": 2}',
        '{"x": [{"k": 1}, {"k": 2}], "y": "\\"k\\": 1, \\"k\\""}',
        '{"x": [{"k": 1, "j": {}, "k": 3}]}',
        '{"s": "{\\"a\\":1,\\"a\\":2}", "t": "}"}',
        '{"": 1, "": 2}',
    ]

    def python_refuses(text: str) -> bool:
        try:
            parse_json_object(text, "x")
        except ValueError:
            return True
        return False

    page.goto(f"{server}/verify/")
    found = page.evaluate("(texts) => texts.map((t) => gradaccVerify.duplicateKey(t))", texts)
    assert [key is not None for key in found] == [python_refuses(t) for t in texts]
    assert [python_refuses(t) for t in texts] == [False, True, True, False, True, False, True]


def test_the_site_build_writes_registry_js_for_the_page_on_disk(page, tmp_path):
    """docs/conf.py, as `make site` runs it, copies the page with its registry.js."""
    source = tmp_path / "source"
    source.mkdir()
    (source / "index.md").write_text("# Site\n", "utf-8")
    build = [sys.executable, "-m", "sphinx", "-q", "-c", ROOT / "docs", source, tmp_path / "html"]
    done = subprocess.run(build, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    built = tmp_path / "html" / "verify"
    page.own.append((tmp_path / "html").as_uri() + "/")  # the page and the site's _static
    copy = (built / "registry.js").read_text("utf-8")
    assert json.dumps((PAGE / "registry.json").read_text("utf-8")) in copy
    page.goto((built / "index.html").as_uri())
    assert "published no certificates yet" in registry_status(page)
