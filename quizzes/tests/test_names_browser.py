"""A student named with markup: formgrader shows the name as text and runs none of it.

nbgrader 0.9.6's Manual Grading page of a submission writes the student's first and last name
into its markup unescaped (gradacc_grader.names). A course built by gradacc-build, a student
whose names are script (put straight into the gradebook's table, as a name that entered before
the course refused them would be) with a submission; formgrader on 127.0.0.1; Chromium as the
instructor opens the students list, Manual Grading's list of submissions and the submission's
page. Each payload, if it ran, would add to `window.PWNED` and log "PWNED" on the console.
The control renders the same page with nbgrader's template alone: there the payload runs.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import warnings
from contextlib import closing
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(900)]
NAME = "gradacc_faq"
STUDENT = "mallory"


def script(mark: str) -> str:
    return f"window.top.PWNED=(window.top.PWNED||[]).concat('{mark}');console.log('PWNED {mark}')"


FIRST = f'<img src=x onerror="{script("first")}">'
LAST = f'<script>{script("last")}</script><svg onload="{script("svg")}"></svg>'


@pytest.fixture(scope="module")
def course(built, tmp_path_factory) -> Path:
    """The built course with mallory's submission recorded and her names made script."""
    from nbgrader.api import Gradebook

    course = Path(shutil.copytree(built, tmp_path_factory.mktemp("names") / "course"))
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        warnings.simplefilter("ignore")  # SQLAlchemy's SAWarnings about nbgrader's models
        gradebook.update_or_create_student(STUDENT, first_name="Mal", last_name="Lory")
        gradebook.add_submission(NAME, STUDENT)
    with closing(sqlite3.connect(course / "gradebook.db")) as db, db:
        db.execute(
            "UPDATE student SET first_name = ?, last_name = ? WHERE id = ?", (FIRST, LAST, STUDENT)
        )
    autograded = course / "autograded" / STUDENT / NAME
    autograded.mkdir(parents=True)
    shutil.copy(course / "submitted" / "sample-honest" / NAME / f"{NAME}.ipynb", autograded)
    return course


@pytest.fixture(scope="module")
def browser(chromium):
    executable, args = chromium
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=args)
        try:
            yield launched
        finally:
            launched.close()


class Watched:
    """A page of a fresh context whose console messages and `window.PWNED` are read."""

    def __init__(self, browser, headers: dict | None = None):
        self.context = browser.new_context(extra_http_headers=headers or {})
        self.page = self.context.new_page()
        self.page.set_default_timeout(60_000)
        self.console: list[str] = []
        self.page.on("console", lambda message: self.console.append(message.text))

    def open(self, url: str) -> None:
        self.page.goto(url, wait_until="load")
        self.page.wait_for_load_state("networkidle")

    def ran(self) -> list:
        """What the payloads did: marks set on the window and PWNED console lines."""
        marks = self.page.evaluate("() => window.top.PWNED || []")
        return marks + [line for line in self.console if "PWNED" in line]


def test_formgrader_shows_a_markup_name_as_text(course, browser, formgrader, tmp_path):
    with formgrader(course, tmp_path) as (base, token):
        watched = Watched(browser, {"Authorization": f"token {token}"})
        page = watched.page
        try:
            watched.open(f"{base}/formgrader/manage_students")
            page.wait_for_function(f"document.body.innerText.includes('{STUDENT}')")
            assert f"{LAST}, {FIRST}" in page.inner_text("body")  # the students list
            assert watched.ran() == []

            watched.open(f"{base}/formgrader/gradebook/{NAME}/{NAME}")
            page.get_by_text("Show All Names").click()
            page.wait_for_function("document.body.innerText.includes('<img src=x')")
            assert f"{LAST}, {FIRST}" in page.inner_text("body")  # Manual Grading's list
            assert watched.ran() == []

            url = f"{base}/formgrader/api/submitted_notebooks/{NAME}/{NAME}?token={token}"
            listed = json.loads(page.evaluate(f"() => fetch({url!r}).then(r => r.text())"))
            (submission,) = [entry["id"] for entry in listed if entry["student"] == STUDENT]
            watched.open(f"{base}/formgrader/submissions/{submission}/")
            shown = page.evaluate("() => document.querySelector('a.name-shown').textContent")
            live = page.evaluate("() => document.querySelectorAll('nav img, nav script').length")
            assert shown.strip() == f"{LAST}, {FIRST}"  # the submission's own page
            assert live == 0
            assert watched.ran() == []
        finally:
            watched.context.close()


def test_the_control_page_runs_the_name(course, browser, tmp_path):
    """nbgrader's formgrade template on its own runs the name: the watchers see it."""
    from gradacc_grader.names import EscapeStudentFields
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers
    from traitlets.config import Config

    resources = {
        "assignment_id": NAME,
        "notebook_id": NAME,
        "submission_id": "x",
        "index": 0,
        "total": 1,
        "base_url": "",
        "student": STUDENT,
        "last_name": LAST,
        "first_name": FIRST,
        "notebook_path": "autograded",
    }
    pages = {}
    for escaped in (False, True):
        config = Config()
        config.HTMLExporter.template_name = "formgrade"
        config.HTMLExporter.extra_template_basedirs = [handlers.template_path]
        exporter = HTMLExporter(config=config)
        if escaped:
            exporter.register_preprocessor(EscapeStudentFields, enabled=True)
        notebook = course / "autograded" / STUDENT / NAME / f"{NAME}.ipynb"
        html, _ = exporter.from_filename(str(notebook), resources=dict(resources))
        pages[escaped] = tmp_path / f"escaped-{escaped}.html"
        pages[escaped].write_text(html, encoding="utf-8")
    ran = {}
    for escaped, path in pages.items():
        watched = Watched(browser)
        watched.open(path.as_uri())
        ran[escaped] = watched.ran()
        watched.context.close()
    assert "first" in ran[False] and "last" in ran[False]
    assert ran[True] == []
