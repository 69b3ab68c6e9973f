"""The guide's JupyterLab for hand grading (quizzes/README.md, step 5), in a real Chromium: it
starts as root too (a container, a course VM), and the Nbgrader menu offers one Formgrader."""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]

BIN = Path(sys.executable).parent
GUIDE = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
TOKEN = "instructor-lab-test"


def guide_command() -> list[str]:
    """The guide's command of step 5, as a list."""
    (line,) = re.findall(r"^(jupyter lab[^#\n]*)", GUIDE, re.MULTILINE)
    return shlex.split(line)


@pytest.fixture
def lab(tmp_path):
    """The guide's command, run in a course folder, on a free port of 127.0.0.1."""
    course = tmp_path / "course"
    course.mkdir()
    (course / "nbgrader_config.py").write_text(
        (Path(__file__).resolve().parents[1] / "course" / "nbgrader_config.py").read_text()
    )
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [str(BIN / "jupyter"), *guide_command()[1:], "--no-browser", "--ip=127.0.0.1"]
    command += [f"--port={port}", f"--IdentityProvider.token={TOKEN}"]
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}", HOME=str(tmp_path))
    env.pop("JUPYTER_CONFIG_PATH", None)  # the instructor's lab, not the student's
    log = tmp_path / "lab.log"
    with log.open("w") as out:
        process = subprocess.Popen(command, cwd=course, env=env, stdout=out, stderr=out)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            assert process.poll() is None, log.read_text()  # it stopped: as root, without the flag
            try:
                urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=5)
                break
            except OSError:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_the_guides_lab_starts_and_offers_one_formgrader(lab, chromium):
    from playwright.sync_api import sync_playwright

    assert "--allow-root" in guide_command()  # what lets it start as root
    executable, args = chromium
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=args)
        try:
            page = browser.new_page()
            page.goto(f"{lab}/lab?token={TOKEN}", timeout=300_000)
            page.locator("#jp-MainMenu .lm-MenuBar-itemLabel", has_text="Nbgrader").click(
                timeout=300_000
            )
            items = page.locator("#jp-mainmenu-nbgrader .lm-Menu-item")
            items.first.wait_for(timeout=60_000)
            shown = [
                items.nth(i).inner_text().strip()
                for i in range(items.count())
                if items.nth(i).is_visible()
            ]
        finally:
            browser.close()
    assert [s for s in shown if s.startswith("Formgrader")] == ["Formgrader"], shown
    assert "Assignment List" in shown
