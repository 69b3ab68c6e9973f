"""The instructor opens hostile submissions in a real browser: no script runs, nothing is fetched.

A course built by gradacc-build, a hostile student's submission (markup in a written answer and
in added cells, outputs of every dangerous kind made by the student's own code in the sandboxed
kernel, hostile metadata, a notebook and a student id named with markup) next to an honest one,
graded by gradacc-grade, feedback by `nbgrader generate_feedback`. A Jupyter server with
formgrader on 127.0.0.1 serves the course; Chromium logs in as the instructor with the token and
opens Manual Grading and both students' pages, then both feedback pages.

Each payload, if it ever ran, would fetch `PWN<n>`, open an alert and write `window.PWNED`. The
test watches every request, every dialog and that variable, and reads the rendered page: no
element with an event handler, no script or frame in the notebook, no link or image other than
an inline PNG or JPEG, every mark in text inside `<pre>`. The hostile page may request nothing
the honest page does not. A control (the submitted notebook put in autograded/ as it is)
shows the watchers see payloads that run.
"""

from __future__ import annotations

import base64
import html
import io
import json
import re
import shutil
import urllib.request
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_raw_cell
from PIL import Image
from playwright.sync_api import sync_playwright

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(1800)]
NAME = "gradacc_faq"
HOSTILE, HONEST = "mallory", "sample-honest"
MARKUP_ID = "<img src=x onerror=alert(1)>"


def js(n: int) -> str:
    """A script that, if it ever runs, says so three ways: a request, an alert, a variable."""
    return f"fetch(/PWN{n}/.source);alert({n});window.top.PWNED=(window.top.PWNED||[]).concat({n})"


def png() -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 3), (20, 120, 20)).save(buffer, "PNG")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def onerror(n: int) -> str:
    return f'<img src=x onerror="{js(n)}">'


def attacks() -> list[str]:
    """The student's code: every kind of output that nbconvert would render as markup."""
    svg = f'<svg xmlns="http://www.w3.org/2000/svg" onload="{js(13)}"><rect width="4"/></svg>'
    width = {"image/png": {"width": f"1 onerror={js(10)}"}}
    frame, isolated = (
        {"text/html": f"<iframe src=javascript:{js(18)}>"},
        {"text/html": {"isolated": True}},
    )
    filenames = {"filenames": {"image/png": "/PWN19.png"}}
    latex = f"$\\href{{javascript:{js(15)}}}{{x}}$"
    widget = {"application/vnd.jupyter.widget-view+json": {"model_id": "PWN16"}}
    vendor = {"application/vnd.evil+json": {"x": onerror(17)}}
    return [
        "from IPython.display import HTML, SVG, Javascript, Latex, Markdown, display",
        "from IPython.display import publish_display_data as publish",
        f"publish({{'image/png': {png()!r}}}, metadata={width!r})",
        f"display(HTML({onerror(11)!r}))",
        f"display(Javascript({js(12)!r}))",
        f"display(SVG({svg!r}))",
        f"display(Markdown({onerror(14)!r}))",
        f"display(Latex({latex!r}))",
        f"publish({widget!r})",
        f"publish({vendor!r})",
        f"publish({frame!r}, metadata={isolated!r})",
        f"publish({{'image/png': {png()!r}}}, metadata={filenames!r})",
        "print('\\x1b[31m<img src=x onerror=PWN20()>\\x1b[0m')",
        # and after every later cell, the test cells too: markup from a hook
        "get_ipython().events.register(",
        f"    'post_run_cell', lambda result: display(HTML({onerror(21)!r}))",
        ")",
    ]


def hostile_submission(course: Path) -> None:
    """The honest student's notebook, answers kept, with markup everywhere a student can put it."""
    nb = nbformat.read(course / "submitted" / HONEST / NAME / f"{NAME}.ipynb", as_version=4)
    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}
    cells["faq5_written"].source = (
        f'BatchNorm <img src=x onerror="{js(1)}"> <script>{js(2)}</script> '
        f'<svg onload="{js(3)}"></svg> [click](javascript:{js(4)}) ![t](/PWN5.png) '
        f"$\\href{{javascript:{js(6)}}}{{x}}$ <style>body{{background:url(/PWN7.png)}}</style>"
    )
    note = new_markdown_cell(
        f'<iframe src="javascript:{js(22)}"></iframe> ![a](attachment:a.svg)',
        attachments={
            "a.svg": {"image/svg+xml": base64.b64encode(b'<svg onload="PWN23"/>').decode()}
        },
    )
    note.metadata["tags"] = ['"><img src=x onerror=PWN24>']
    setup = nb.cells.index(cells["setup"])
    added = [
        new_code_cell("\n".join(attacks())),
        new_code_cell(f"raise ValueError({onerror(25)!r})"),
        note,
        new_raw_cell(f'<img src=x onerror="{js(26)}">', metadata={"raw_mimetype": "text/html"}),
    ]
    for cell in added:
        del cell["id"]  # the course's notebooks are nbformat 4.4: no cell ids
    nb.cells[setup + 1 : setup + 1] = added
    nb.metadata["title"] = "<img src=x onerror=PWN27>"
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    folder = course / "submitted" / HOSTILE / NAME
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"{NAME}.ipynb")
    extra = new_notebook(cells=[new_markdown_cell(f"<script>{js(28)}</script>")])
    nbformat.write(extra, folder / "<img src=x onerror=PWN29>.ipynb")
    shutil.copytree(folder.parent.parent / HONEST / NAME, course / "submitted" / MARKUP_ID / NAME)


def _run(cli, command: list[str], cwd: Path | None = None):
    done = cli(command, cwd=cwd)
    return done, done.stdout + done.stderr


@pytest.fixture(scope="module")
def course(built, tmp_path_factory, cli) -> Path:
    """The built course with the hostile and the honest students graded, and their feedback."""
    course = Path(shutil.copytree(built, tmp_path_factory.mktemp("hostile") / "course"))
    with (course / "nbgrader_config.py").open("a", encoding="utf-8") as config:
        # what this test reads is the pages, not the timing: a busy machine must not fail it
        config.write("\nc.Execute.timeout = 300\nc.Execute.iopub_timeout = 120\n")
    hostile_submission(course)
    students = [arg for s in (HONEST, HOSTILE, MARKUP_ID) for arg in ("--student", s)]
    done, out = _run(
        cli, ["gradacc-grade", "--course", str(course), NAME, *students, "--jobs", "2"]
    )
    assert done.returncode == 1, out  # 1: the student id with markup is refused
    assert re.search(rf"^{HOSTILE} .* graded$", done.stdout, re.M), out
    # the table cuts the status short; the reason follows below it, whole
    assert re.search(r"^<img src=x onerror=alert\(1\)> .* refus", done.stdout, re.M), out
    assert "refused: the folder name is not a student id" in done.stdout, out
    done, out = _run(cli, ["nbgrader", "generate_feedback", NAME], cwd=course)
    assert done.returncode == 0, out
    return course


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode("utf-8")


@pytest.fixture(scope="module")
def server(course, tmp_path_factory, formgrader):
    """A Jupyter server with formgrader, serving the course on 127.0.0.1; (base URL, token)."""
    with formgrader(course, tmp_path_factory.mktemp("home")) as (base, token):
        yield base, token


# What a rendered page must not hold: run in the page after it loaded.
READ_PAGE = """() => {
  const root = document.querySelector('#notebook-container') || document.body;
  const bad = [];
  const live = ['script', 'iframe', 'frame', 'object', 'embed', 'svg', 'math', 'style', 'link',
                'base', 'form', 'meta', 'audio', 'video', 'source', 'input', 'button'];
  const urls = ['src', 'href', 'action', 'formaction', 'srcset', 'background', 'poster', 'data',
                'xlink:href'];
  const inline = (v) => ['#', 'data:image/png;base64,', 'data:image/jpeg;base64,']
                        .some((start) => v.startsWith(start));
  for (const el of root.querySelectorAll('*')) {
    const tag = el.tagName.toLowerCase();
    const grading = el.closest('.panel-heading, .panel-footer');  // formgrader's own inputs
    if (live.includes(tag) && !grading) bad.push('<' + tag + '>');
    for (const a of el.attributes) {
      const v = a.value.trim().toLowerCase();
      if (a.name.startsWith('on')) bad.push(tag + ' ' + a.name);
      if (urls.includes(a.name) && !inline(v)) bad.push(tag + ' ' + a.name + '=' + v.slice(0, 60));
      if (a.value.includes('PWN')) bad.push(tag + ' ' + a.name + ' holds a mark');
    }
  }
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const text = walk.currentNode.data;
    const shown = walk.currentNode.parentElement.closest('pre');
    if (text.includes('PWN') && !shown) bad.push('text: ' + text.slice(0, 60));
  }
  return bad;
}"""


class Watcher:
    """Every request, dialog and console message of the pages of one browser context."""

    def __init__(self, context, allowed_origin: str):
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        # nothing leaves the machine: any request elsewhere is recorded, then refused
        context.route(
            "**/*",
            lambda route: (
                route.continue_()
                if route.request.url.startswith((allowed_origin, "file://"))
                else route.abort()
            ),
        )
        context.on("request", lambda request: self.requests.append(request.url))
        context.on("page", self.watch)

    def watch(self, page) -> None:
        page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss()))

    def visit(self, page, url: str) -> dict:
        """Open a page, let it settle; what it requested, alerted, set and holds."""
        first, dialogs = len(self.requests), len(self.dialogs)
        page.goto(url, wait_until="load")
        page.wait_for_load_state("networkidle")
        return {
            "requests": self.requests[first:],
            "dialogs": self.dialogs[dialogs:],
            "pwned": page.evaluate("() => window.PWNED || []"),
            "bad": page.evaluate(READ_PAGE),
        }


def _normal(url: str) -> str:
    """A URL without what differs between two students' pages (ids, names, the token)."""
    url = re.sub(r"[0-9a-f]{32}", "ID", url.split("?")[0])
    return url.replace(HOSTILE, "STUDENT").replace(HONEST, "STUDENT")


@pytest.fixture(scope="module")
def browser(chromium):
    executable, args = chromium
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=args)
        try:
            yield chromium
        finally:
            chromium.close()


def _submission_ids(base: str, token: str) -> dict[str, str]:
    listed = json.loads(
        _get(f"{base}/formgrader/api/submitted_notebooks/{NAME}/{NAME}?token={token}")
    )
    return {entry["student"]: entry["id"] for entry in listed}


def test_manual_grading_of_a_hostile_submission_runs_no_script(server, browser):
    base, token = server
    ids = _submission_ids(base, token)
    assert set(ids) == {HONEST, HOSTILE}  # the student id with markup never reached the gradebook
    # as the instructor: the token goes with every request, the pages' own API calls too
    context = browser.new_context(extra_http_headers={"Authorization": f"token {token}"})
    watcher = Watcher(context, base)
    page = context.new_page()
    page.set_default_timeout(60_000)
    listing = watcher.visit(page, f"{base}/formgrader/gradebook/{NAME}/{NAME}")
    assert not listing["dialogs"] and not listing["pwned"]
    page.get_by_text("Show All Names").click()  # the Manual Grading list, with the names
    page.wait_for_function(f"document.body.innerText.includes('{HOSTILE}')")
    assert HONEST in page.inner_text("body")
    assert not watcher.dialogs and not page.evaluate("() => window.PWNED || []")
    honest = watcher.visit(page, f"{base}/formgrader/submissions/{ids[HONEST]}/")
    hostile = watcher.visit(page, f"{base}/formgrader/submissions/{ids[HOSTILE]}/")
    context.close()
    assert honest["bad"] == [] and honest["dialogs"] == []
    assert hostile["dialogs"] == [] and hostile["pwned"] == [], hostile
    assert hostile["bad"] == [], hostile["bad"]
    assert not [url for url in hostile["requests"] if "PWN" in url]
    extra = {_normal(u) for u in hostile["requests"]} - {_normal(u) for u in honest["requests"]}
    assert not extra, extra


def test_the_feedback_pages_run_no_script(course, browser):
    pages = {s: course / "feedback" / s / NAME / f"{NAME}.html" for s in (HONEST, HOSTILE)}
    assert all(path.is_file() for path in pages.values())
    assert not list((course / "feedback").rglob("*<*")), "a file named with markup"
    context = browser.new_context()
    watcher = Watcher(context, "file://")
    page = context.new_page()
    honest = watcher.visit(page, pages[HONEST].as_uri())
    hostile = watcher.visit(page, pages[HOSTILE].as_uri())
    context.close()
    assert hostile["dialogs"] == [] and hostile["pwned"] == [] and hostile["bad"] == [], hostile
    assert not [url for url in hostile["requests"] if "PWN" in url]
    extra = {_normal(u) for u in hostile["requests"]} - {_normal(u) for u in honest["requests"]}
    assert not extra, extra
    # the student's own words are there, as the text they typed
    shown = html.unescape(pages[HOSTILE].read_text(encoding="utf-8"))
    assert f'BatchNorm <img src=x onerror="{js(1)}">' in shown


def test_the_watchers_see_a_payload_that_runs(course, server, browser):
    """The control: Manual Grading of the notebook as the student handed it in, not rewritten."""
    base, token = server
    autograded = course / "autograded" / HOSTILE / NAME / f"{NAME}.ipynb"
    autograded.unlink()
    shutil.copy(course / "submitted" / HOSTILE / NAME / f"{NAME}.ipynb", autograded)
    context = browser.new_context(extra_http_headers={"Authorization": f"token {token}"})
    watcher = Watcher(context, base)
    page = context.new_page()
    seen = watcher.visit(
        page, f"{base}/formgrader/submissions/{_submission_ids(base, token)[HOSTILE]}/"
    )
    context.close()
    assert seen["dialogs"] and seen["pwned"] and seen["bad"]
    assert [url for url in seen["requests"] if "PWN" in url]
