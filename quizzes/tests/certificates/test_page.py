"""The verification page in a real Chromium: valid certificates pass, forged, tampered and
revoked ones do not, and the page reads nothing but its own folder."""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import threading
from pathlib import Path

import pytest
from gradacc_grader.certificates.ids import new_id
from gradacc_grader.certify import main

from tools.system_tools import CHROMIUM, CHROMIUM_ARGS

pytestmark = pytest.mark.browser

PAGE = Path(__file__).resolve().parents[2] / "verify"
STATIC = Path(__file__).resolve().parents[3] / "docs" / "_static"  # <site>/_static: the font
CLASS = {"ada": (7.0, 3.0, "Ada Lovelace"), "bob": (7.0, 1.0, "Bob Kahn")}


def run(*args):
    assert main([str(a) for a in args]) == 0


def certificate(folder: Path, student: str) -> Path:
    (path,) = (folder / student).glob("*.json")
    return path


@pytest.fixture(scope="module")
def site(tmp_path_factory, fill_gradebook):
    """The page with a published key and registry (Bob revoked), and certificates to upload."""
    root = tmp_path_factory.mktemp("site")
    course = fill_gradebook(root / "course", "final", CLASS)
    run("keygen", "--out", root / "keys")
    run(
        "issue",
        "final",
        "--course",
        course,
        "--key",
        root / "keys/issuer.key",
        "--out",
        root / "out",
    )
    bob = json.loads(certificate(root / "out", "bob").read_text("utf-8"))["certificate"]["id"]
    registry = course / "certificates.sqlite"
    run(
        "revoke",
        bob,
        "--registry",
        registry,
        "--key",
        root / "keys/issuer.key",
        "--reason",
        "copied",
    )
    # a forger with a key of their own issues "certificates" from the same gradebook
    run("keygen", "--out", root / "forger")
    run(
        "issue",
        "final",
        "--course",
        course,
        "--key",
        root / "forger/issuer.key",
        "--out",
        root / "forged",
        "--registry",
        root / "forged.sqlite",
    )
    served = root / "www/verify"
    shutil.copytree(PAGE, served)
    shutil.copytree(STATIC, root / "www/_static")  # as the site lays it out
    shutil.copy(root / "keys/issuer.pub", served / "issuer.pub")
    run("export", "--registry", registry, "--out", served / "registry.json")
    # ... and slips one of them into the published registry
    forged = json.loads(certificate(root / "forged", "ada").read_text("utf-8"))
    published = json.loads((served / "registry.json").read_text("utf-8"))
    published["certificates"][forged["certificate"]["id"]] = {
        "signed": forged["signed"],
        "signature": forged["signature"],
    }
    (served / "registry.json").write_text(json.dumps(published), "utf-8")
    shutil.copytree(PAGE, root / "www/empty")  # the page as committed: nothing published yet
    shutil.copytree(PAGE, root / "www/missing")
    (root / "www/missing/registry.json").unlink()  # a site that forgot the registry
    return root


@pytest.fixture(scope="module")
def server(site):
    """A static web server on 127.0.0.1 for the site, stopped after the tests."""
    handler = functools.partial(_QuietHandler, directory=str(site / "www"))
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
def browser(tmp_path_factory):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
        )
        yield context
        context.close()


@pytest.fixture
def page(browser, server):
    """A fresh tab that records every address it asks for and every error it logs."""
    tab = browser.new_page()
    requested, errors = [], []
    tab.on("request", lambda request: requested.append(request.url))
    tab.on("console", lambda message: message.type == "error" and errors.append(message.text))
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.expected_errors = 0
    yield tab
    tab.close()
    assert [url for url in requested if not url.startswith(server + "/")] == [], (
        "the page asked for something outside its own site"
    )
    assert len(errors) == tab.expected_errors, errors


def verdict(page) -> str:
    page.wait_for_selector("#verdict.valid, #verdict.invalid", timeout=20_000)
    return page.inner_text("#verdict")


def check_id(page, server, typed: str) -> str:
    page.goto(f"{server}/verify/")
    page.get_by_label("Certificate ID").fill(typed)
    page.get_by_role("button", name="Check the ID").click()
    return verdict(page)


def upload(page, server, path: Path) -> str:
    page.goto(f"{server}/verify/")
    page.get_by_label("Certificate file (.json)").set_input_files(str(path))
    return verdict(page)


def facts_of(path: Path) -> dict:
    return json.loads(path.read_text("utf-8"))["certificate"]


def test_a_valid_id_typed_by_hand_is_accepted(page, server, site):
    facts = facts_of(certificate(site / "out", "ada"))
    shown = check_id(page, server, facts["id"].lower().replace("-", " "))
    assert shown.startswith(f"Valid certificate {facts['id']}")
    assert "Ada Lovelace" in shown and "10 of 10" in shown and facts["date"] in shown
    page.screenshot(path=str(site / "valid.png"))


def test_the_qr_codes_address_checks_the_id_on_opening(page, server, site):
    facts = facts_of(certificate(site / "out", "ada"))
    page.goto(f"{server}/verify/?id={facts['id']}")
    assert verdict(page).startswith(f"Valid certificate {facts['id']}")


def test_a_valid_certificate_file_is_accepted(page, server, site):
    assert upload(page, server, certificate(site / "out", "ada")).startswith("Valid certificate")


def test_a_certificate_saved_again_by_an_editor_is_accepted(page, server, site, tmp_path):
    # as `verify` accepts it: other indentation, escaped characters, CRLF, a byte order mark
    document = json.loads(certificate(site / "out", "ada").read_text("utf-8"))
    text = json.dumps(document, indent=4, ensure_ascii=True).replace("\n", "\r\n")
    saved = tmp_path / "saved.json"
    saved.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert upload(page, server, saved).startswith("Valid certificate")


@pytest.mark.parametrize(
    ("field", "value"), [("name", "Mallory"), ("score", 9.5), ("date", "2020-01-01")]
)
def test_a_tampered_certificate_file_is_rejected(page, server, site, tmp_path, field, value):
    document = json.loads(certificate(site / "out", "ada").read_text("utf-8"))
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


def test_a_forged_certificate_is_rejected_as_a_file_and_as_an_id(page, server, site):
    forged = certificate(site / "forged", "ada")
    assert "signature does not match" in upload(page, server, forged)
    # its ID was slipped into the published registry: the signature still gives it away
    assert "signature does not match" in check_id(page, server, facts_of(forged)["id"])


def test_a_revoked_certificate_is_rejected_as_a_file_and_as_an_id(page, server, site):
    path = certificate(site / "out", "bob")
    shown = check_id(page, server, facts_of(path)["id"])
    assert shown.startswith("Not valid: revoked") and "copied" in shown
    assert "revoked" in upload(page, server, path)
    page.screenshot(path=str(site / "revoked.png"))


def test_unknown_and_mistyped_ids_are_rejected(page, server):
    assert "unknown ID" in check_id(page, server, "7K3M-Q9XT-2HPW")
    assert "mistyped" in check_id(page, server, "7K3M-Q9XT-2HPV")


def test_a_file_that_is_not_a_certificate_is_rejected(page, server, tmp_path):
    junk = tmp_path / "junk.json"
    junk.write_bytes(b"\x00\x01 not json")
    assert "not JSON" in upload(page, server, junk)


def test_the_page_as_committed_says_nothing_is_published_yet(page, server):
    page.goto(f"{server}/empty/")
    page.get_by_label("Certificate ID").fill("7K3M-Q9XT-2HPW")
    page.get_by_role("button", name="Check the ID").click()
    assert "published no certificates yet" in verdict(page)


def test_a_site_without_its_registry_says_so(page, server):
    page.expected_errors = 1  # Chromium logs the 404 of registry.json
    page.goto(f"{server}/missing/")
    page.get_by_label("Certificate ID").fill("7K3M-Q9XT-2HPW")
    page.get_by_role("button", name="Check the ID").click()
    assert "does not publish ./registry.json (404)" in verdict(page)


def test_the_page_and_the_package_agree_on_every_check_character(page, server):
    ids = [new_id() for _ in range(2_000)]
    page.goto(f"{server}/verify/")
    checked = page.evaluate(
        """async (ids) => {
            const { normalizeId } = await import("./verify.js");
            return ids.map((id) => normalizeId(id.toLowerCase()));
        }""",
        ids,
    )
    assert checked == ids
    wrong = [i[:-1] + ("0" if i[-1] != "0" else "1") for i in ids[:200]]
    refused = page.evaluate(
        """async (ids) => {
            const { normalizeId } = await import("./verify.js");
            const refuses = (id) => {
                try { normalizeId(id); return false; } catch { return true; }
            };
            return ids.filter(refuses);
        }""",
        wrong,
    )
    assert refused == wrong
