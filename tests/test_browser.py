"""The course in a real browser: JupyterLab driven in Debian's Chromium by Playwright.

Each test opens a notebook, runs all its cells as a student would (Run -> Run All Cells),
then uses its widgets: answers the self-check quiz and moves the explorers' sliders.
Screenshots go to test-artifacts/browser/. The module starts its own JupyterLab (random
token, temporary Jupyter folders, a copy of notebooks/ so that nothing is saved into the
repository) and its own Chromium, and stops both, also when a test fails.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest
from PIL import Image
from playwright.sync_api import Page, expect, sync_playwright

from gradacc_lessons.quiz.attempts import format_number
from gradacc_lessons.quiz.language import ENGLISH, Words, translated, words_for
from gradacc_lessons.quiz.questions import (
    Prediction,
    Question,
    faq_questions,
    lesson_questions,
    questions_for,
)
from tools.system_tools import CHROMIUM, CHROMIUM_ARGS

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(420)]

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts" / "browser"
KERNEL_NAME = "Python 3 (ipykernel)"
QUIZ_NOTEBOOK = "08_self_study_quiz.ipynb"
RUN_TIMEOUT_MS = 180_000  # lesson 1 runs in ~20 s alone; the test machine is shared and loaded

# User settings of the temporary JupyterLab: no news pop-up over the notebook, no autosave
# (the copy would be saved anyway, but a save dialog must never appear), every cell rendered
# (windowed notebooks detach off-screen cells, which then cannot be found or screenshot).
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


@dataclass
class Explorer:
    """A slider explorer of a lesson, and what its output must say for a slider value."""

    notebook: str
    slider: str  # CSS class of the slider
    output: str  # CSS class of the output that follows it
    says: str  # what the output says for the slider's value: a format with {value}
    plots: int  # how many plots the output shows at any value
    parse: Callable[[str], object] = str  # the slider's readout text -> the {value} to format


EXPLORERS = [
    Explorer(
        "01_accumulation_is_a_full_batch.ipynb",
        "gradacc-n-slider",
        "gradacc-explorer-output",
        says="N = {value},",
        plots=1,
    ),
    Explorer(
        "02_scaling_the_loss.ipynb",
        "gradacc-spread-slider",
        "gradacc-spread-output",
        says="spread of lengths {value}:",
        plots=0,
    ),
    Explorer(
        "04_peak_memory.ipynb",
        "gradacc-budget-slider",
        "gradacc-budget-output",
        says="budget {value:.3f} MiB",
        plots=0,
        parse=float,
    ),
]


@dataclass
class Lab:
    url: str
    token: str
    process: subprocess.Popen
    root: Path  # the folder it serves, with a copy of notebooks/


@dataclass
class Tab:
    """A browser page, the console errors it logged and how long each phase took."""

    page: Page
    errors: list[str] = field(default_factory=list)
    phases: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)
    widgets_restored: bool = False  # the kernel answered the widget manager's comm_info_request

    def watch_kernel(self, websocket) -> None:
        """Note the kernel's comm_info_reply, which ends the widget manager's restore."""

        def received(payload) -> None:
            data = payload if isinstance(payload, bytes) else payload.encode()
            if re.search(rb'"msg_type":\s*"comm_info_reply"', data):
                self.widgets_restored = True

        websocket.on("framereceived", received)

    def mark(self, phase: str) -> None:
        """Note the time since the page opened (in test-artifacts/browser/*-timings.txt)."""
        self.phases.append(f"{time.monotonic() - self.started:6.1f} s  {phase}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_settings(folder: Path) -> None:
    for name, values in LAB_SETTINGS.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")


def _api(lab: Lab, path: str, method: str = "GET"):
    request = urllib.request.Request(
        f"{lab.url}{path}", method=method, headers={"Authorization": f"token {lab.token}"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        body = response.read()
    return json.loads(body) if body else None


def _wait_until_ready(lab: Lab, log: Path, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if lab.process.poll() is not None:
            pytest.fail(f"JupyterLab exited with {lab.process.returncode}:\n{log.read_text()}")
        try:
            _api(lab, "/api/status")
            return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"JupyterLab did not answer within {seconds} s:\n{log.read_text()}")


def _stop(process: subprocess.Popen) -> None:
    """Stop the server's process group and every process it started (kernels get sessions)."""
    try:
        started = psutil.Process(process.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        started = []
    for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(wait)
            break
        except subprocess.TimeoutExpired:
            continue
    for child in started:
        with contextlib.suppress(psutil.NoSuchProcess):
            child.kill()
    _, alive = psutil.wait_procs(started, timeout=10)
    assert not alive, f"processes left running: {alive}"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab of our own on 127.0.0.1, serving a copy of notebooks/."""
    base = tmp_path_factory.mktemp("jupyter")
    root = base / "root"
    shutil.copytree(ROOT / "notebooks", root / "notebooks")
    _write_settings(base / "settings")
    env = dict(os.environ)
    env.update(
        JUPYTER_CONFIG_DIR=str(base / "config"),
        # what `make lab` adds: the student's lab without nbgrader's menus and extensions
        JUPYTER_CONFIG_PATH=str(ROOT / "tools" / "lab_config"),
        # The venv's kernelspec and widget extension live in sys.prefix/share/jupyter,
        # which Jupyter searches whatever JUPYTER_DATA_DIR says.
        JUPYTER_DATA_DIR=str(base / "data"),
        JUPYTER_RUNTIME_DIR=str(base / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(base / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(base / "workspaces"),
        IPYTHONDIR=str(base / "ipython"),
        GRADACC_PROGRESS=str(base / "exercises.json"),  # the exercises' results: not in ~
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
    )
    port, token = _free_port(), secrets.token_hex(24)
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        "--ServerApp.ip=127.0.0.1",
        "--allow-root",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.user_settings_dir={base / 'settings'}",
        f"--LabApp.workspaces_dir={base / 'workspaces'}",
    ]
    log = base / "jupyterlab.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    server = Lab(f"http://127.0.0.1:{port}", token, process, root)
    try:
        _wait_until_ready(server, log)
        yield server
    finally:
        _stop(process)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(log, ARTIFACTS / "jupyterlab.log")


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """Debian's Chromium, headless, with a fresh profile."""
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 1000},
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def tab(browser, lab, request):
    """A fresh page that records console errors; kernels are shut down after the test."""
    page = browser.new_page()
    page.set_default_timeout(30_000)
    result = Tab(page)
    page.on("console", lambda m: result.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: result.errors.append(f"uncaught: {e}"))
    page.on("websocket", result.watch_kernel)
    try:
        yield result
    finally:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        name = request.node.name.replace("/", "_")
        try:
            page.screenshot(path=ARTIFACTS / f"{name}-last.png")
        finally:
            (ARTIFACTS / f"{name}-console-errors.txt").write_text("\n".join(result.errors))
            (ARTIFACTS / f"{name}-timings.txt").write_text("\n".join(result.phases))
            page.close()
            for session in _api(lab, "/api/sessions"):
                _api(lab, f"/api/sessions/{session['id']}", method="DELETE")


def open_and_run_all(tab: Tab, lab: Lab, notebook: str) -> None:
    """Open a notebook, wait until its kernel is ready, Run -> Run All Cells, wait for the end."""
    page = tab.page
    page.goto(f"{lab.url}/lab/tree/notebooks/{notebook}?reset&token={lab.token}")
    panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
    # The toolbar says "idle" while the kernel still starts; then Run All does nothing.
    expect(panel.locator(".jp-KernelName")).to_have_text(KERNEL_NAME, timeout=90_000)
    expect(page.locator("#jp-main-statusbar")).to_contain_text("Idle", timeout=90_000)
    # The notebook's widget manager asks the new kernel for its widgets (comm_info_request)
    # and builds them side by side; one waiting for another gives up after 2 s (`get_model` of
    # @jupyter-widgets/base-manager in jupyterlab_widgets 3.0.17). On a busy machine, cells
    # run before its answer likely made widgets it built a second time: "widget model not
    # found" in the console. So Run All waits for that answer.
    deadline = time.monotonic() + 60
    while not tab.widgets_restored and time.monotonic() < deadline:
        page.wait_for_timeout(100)  # Playwright delivers the page's events meanwhile
    assert tab.widgets_restored, f"{notebook}: the widget manager never asked for the widgets"
    tab.mark(f"{notebook}: kernel ready")
    page.locator("#jp-MainMenu").get_by_text("Run", exact=True).click()
    page.locator(".lm-Menu-itemLabel").get_by_text("Run All Cells", exact=True).click()
    # The collapsed setup cell shows a placeholder without a prompt number: skip it.
    prompts = panel.locator(".jp-CodeCell .jp-InputPrompt:not(.jp-Placeholder-prompt)")
    expect(prompts.first).to_have_text(re.compile(r"\[[\d*]+\]"), timeout=30_000)
    page.wait_for_function(
        """() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden)'
                   + ' .jp-CodeCell .jp-InputPrompt:not(.jp-Placeholder-prompt)')]
                 .every(p => /\\[\\d+\\]/.test(p.textContent))""",
        timeout=RUN_TIMEOUT_MS,
    )
    expect(page.locator("#jp-main-statusbar")).to_contain_text("Idle", timeout=30_000)
    tab.mark(f"{notebook}: all cells ran")
    errors = panel.locator(".jp-OutputArea-output", has_text="Traceback")
    assert errors.count() == 0, f"a cell raised:\n{errors.first.inner_text()}"


def assert_quiz_measures(tab: Tab, questions: list, stem: str, words: Words = ENGLISH) -> None:
    """Drive a quiz as a learner: the first answer counts, the hint comes before the answer.

    With choice questions a, b, c: a wrong then right (0 at the first try, 1 in the end),
    b right at once (1 and 2), c wrong twice (the answer is shown, the score stays).
    """
    page = tab.page
    a, b, c = [q for q in questions if isinstance(q, Question)][:3]
    quiz = page.locator(".gradacc-selfcheck", has=page.locator(f".gradacc-question-{a.id}"))
    expect(quiz.locator(".gradacc-question")).to_have_count(len(questions))
    score = quiz.locator(".gradacc-score")
    expect(score).to_have_text(_score(words, 0, 0, len(questions)))

    said = _choose(quiz, a, _a_wrong_choice(a))
    expect(said).to_have_text(f"{words.not_quite} {words.hint} {a.hint} {words.try_again}")
    expect(said).not_to_contain_text(a.choices[a.answer])  # the hint, not the answer
    expect(score).to_have_text(_score(words, 0, 0, len(questions)))
    said = _choose(quiz, a, a.answer)
    expect(said).to_have_text(f"{words.right} {words.first_counts} {a.explanation}")
    expect(score).to_have_text(_score(words, 0, 1, len(questions)))

    expect(_choose(quiz, b, b.answer)).to_have_text(f"{words.right} {b.explanation}")
    expect(score).to_have_text(_score(words, 1, 2, len(questions)))

    _choose(quiz, c, _a_wrong_choice(c))
    said = _choose(quiz, c, _a_wrong_choice(c, second=True))
    expect(said).to_contain_text(f"{words.not_quite} {words.answer_is.split('{')[0]}")
    expect(said).to_contain_text(f"{c.choices[c.answer]}. {c.explanation}")
    expect(score).to_have_text(_score(words, 1, 2, len(questions)))
    screenshot(quiz, f"{stem}-quiz.png")
    tab.mark("quiz answered")


def assert_predictions_are_checked(tab: Tab, questions: list, stem: str) -> None:
    """A number within the tolerance is right; a wrong one gets which way and the hint, then
    Show the answer gives the number and its computation. Call after assert_quiz_measures."""
    page = tab.page
    right, wrong = [q for q in questions if isinstance(q, Prediction)][:2]
    quiz = page.locator(".gradacc-selfcheck", has=page.locator(f".gradacc-question-{right.id}"))
    score = quiz.locator(".gradacc-score")
    card = quiz.locator(f".gradacc-question-{right.id}")
    expect(card.locator(".gradacc-tolerance")).to_contain_text("±" if right.tolerance else "exact")
    said = _type(card, format_number(right.value + 0.5 * right.tolerance))
    expect(said).to_contain_text(f"{ENGLISH.right} {_computes(right)} {right.explanation}")
    expect(said.locator("pre")).to_have_text(right.computation)
    expect(score).to_have_text(_score(ENGLISH, 2, 3, len(questions)))

    card = quiz.locator(f".gradacc-question-{wrong.id}")
    low = format_number(wrong.value - 2 * wrong.tolerance - 1)
    said = _type(card, low)
    expect(said).to_have_text(
        f"{ENGLISH.not_quite} {ENGLISH.too_low.format(guess=low)} {ENGLISH.hint} {wrong.hint} "
        f"{ENGLISH.try_again}"
    )
    expect(said.locator("pre")).to_have_count(0)  # no computation before the answer
    card.locator(".gradacc-reveal").click()
    expect(said).to_contain_text(f"{_computes(wrong)} {wrong.explanation}")
    expect(said.locator("pre")).to_have_text(wrong.computation)
    expect(score).to_have_text(_score(ENGLISH, 2, 3, len(questions)))
    screenshot(quiz, f"{stem}-predictions.png")
    tab.mark("predictions answered")


def _score(words: Words, first: int, final: int, total: int) -> str:
    return words.score.format(first=first, final=final, total=total)


def _computes(q: Prediction) -> str:
    return ENGLISH.value_is.format(value=format_number(q.value))


def _a_wrong_choice(q: Question, second: bool = False) -> int:
    return [i for i in range(len(q.choices)) if i != q.answer][int(second)]


def _choose(quiz, q: Question, choice: int):
    """Check a choice, found by its text: the quiz drew its letter, the test does not know it."""
    card = quiz.locator(f".gradacc-question-{q.id}")
    text = re.escape(q.choices[choice]).replace("/", r"\/")  # Playwright writes /regex/
    name = re.compile(rf"^[A-H]\. {text}$")
    card.get_by_role("radio", name=name).check()
    card.locator(".gradacc-check").click()
    return card.locator(".gradacc-feedback")


def _type(card, number: str):
    card.locator(".gradacc-number input").fill(number)
    card.locator(".gradacc-check").click()
    return card.locator(".gradacc-feedback")


# Resolves once the element's images are decoded and a frame is painted, so that a
# screenshot never catches a plot half drawn.
_PAINTED = """async el => {
    await Promise.all([...el.querySelectorAll('img')].map(img => img.decode().catch(() => null)));
    await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
}"""


def screenshot(element, name: str) -> None:
    """Screenshot an element whole: the notebook scrolls inside the page, so make it tall."""
    page = element.page
    viewport = page.viewport_size
    height = element.bounding_box()["height"]
    page.set_viewport_size({"width": viewport["width"], "height": int(height) + 400})
    try:
        element.scroll_into_view_if_needed()
        element.evaluate(_PAINTED)
        element.screenshot(path=ARTIFACTS / name)
    finally:
        page.set_viewport_size(viewport)


def _output_state(output) -> tuple[str, tuple[str, ...]] | None:
    """What an explorer shows, its text and its images; None while an image is still loading."""
    text, images = output.evaluate(
        """el => [el.innerText, [...el.querySelectorAll('img')]
                  .map(img => img.complete && img.naturalWidth > 0 ? img.src : null)]"""
    )
    return None if None in images else (text, tuple(images))


def _settle(page: Page, output, quiet_s: float = 1.0, timeout_s: float = 60) -> tuple:
    """The output once the kernel is idle and the output stayed unchanged for quiet_s."""
    deadline = time.monotonic() + timeout_s
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        state = _output_state(output)
        idle = "Idle" in page.locator("#jp-main-statusbar").inner_text()
        if state is None or state != last or not idle:
            last, since = state, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return state
        time.sleep(0.25)
    pytest.fail(f"the explorer's output kept changing for {timeout_s} s")


def _press(page: Page, handle, key: str, times: int, delay_s: float = 0.0) -> None:
    handle.focus()
    for _ in range(times):
        page.keyboard.press(key)
        if delay_s:
            time.sleep(delay_s)


def assert_explorer_follows_its_slider(tab: Tab, explorer: Explorer, stem: str) -> None:
    """Move the slider one step, then quickly several and back: the output follows the value.

    Back at the start value, the output must be the one shown at first, text and plots: an
    explorer that reads state changed by later cells (a model trained further down the
    notebook), or that lets a stale callback finish last, shows something else.
    """
    page = tab.page
    cell = page.locator(".jp-Cell", has=page.locator(f".{explorer.slider}"))
    handle = cell.locator(f".{explorer.slider} .noUi-handle")
    readout = cell.locator(f".{explorer.slider} .widget-readout")
    output = cell.locator(f".{explorer.output}")
    handle.scroll_into_view_if_needed()
    first, start = _settle(page, output), readout.inner_text()
    _assert_says(explorer, start, first)
    at_max = handle.get_attribute("aria-valuenow") == handle.get_attribute("aria-valuemax")
    key, back = ("ArrowLeft", "ArrowRight") if at_max else ("ArrowRight", "ArrowLeft")

    _press(page, handle, key, 1)  # one step: the output must change, and say the new value
    expect(readout).not_to_have_text(start)
    moved = _settle(page, output)
    assert moved != first, "moving the slider did not change the explorer's output"
    _assert_says(explorer, readout.inner_text(), moved)
    screenshot(cell, f"{stem}-{explorer.slider}.png")
    tab.mark(f"{explorer.slider}: one step")

    _press(page, handle, key, 4)  # quickly: the kernel gets the events faster than it draws
    fast_value = readout.inner_text()
    _assert_says(explorer, fast_value, _settle(page, output))
    tab.mark(f"{explorer.slider}: fast steps")

    for _ in range(20):  # quickly back to the start value, without waiting for the kernel
        if readout.inner_text() == start:
            break
        _press(page, handle, back, 1)
    assert readout.inner_text() == start, "the slider did not come back to its start value"
    assert _settle(page, output) == first, "back at the start value, the output differs"
    tab.mark(f"{explorer.slider}: fast steps back")


def _is_blank(src: str) -> bool:
    """Whether an image (a data: URL) has a single colour, e.g. a fully transparent plot."""
    image = Image.open(io.BytesIO(base64.b64decode(src.split(",", 1)[1]))).convert("RGBA")
    low, high = zip(*image.getextrema())
    return low == high or high[3] == 0


def _assert_says(explorer: Explorer, value: str, state: tuple[str, tuple[str, ...]]) -> None:
    """The output states the slider's value, raised nothing and shows its plots once."""
    text, images = state
    assert "Traceback" not in text, f"the explorer raised:\n{text}"
    assert explorer.says.format(value=explorer.parse(value)) in text, (
        f"slider at {value}, output:\n{text}"
    )
    assert len(images) == explorer.plots, f"{len(images)} plots shown, {explorer.plots} expected"
    blank = [i for i, src in enumerate(images) if _is_blank(src)]
    assert not blank, f"slider at {value}: plot(s) {blank} of the output are blank images"


def assert_no_console_errors(tab: Tab) -> None:
    assert tab.errors == [], "the browser console logged errors:\n" + "\n".join(tab.errors)


def screenshot_figures(tab: Tab, stem: str, limit: int = 12) -> int:
    """Screenshot every cell that shows a plot or a widget; return how many."""
    cells = tab.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell").filter(
        has=tab.page.locator(".jp-OutputArea-output img, .jupyter-widgets")
    )
    count = min(cells.count(), limit)
    for i in range(count):
        screenshot(cells.nth(i), f"{stem}-cell{i + 1:02d}.png")
    return count


def test_lesson_1_runs_and_its_quiz_and_explorer_respond(tab, lab):
    stem = "lesson01"
    open_and_run_all(tab, lab, EXPLORERS[0].notebook)
    menus = tab.page.locator("#jp-MainMenu")
    expect(menus).to_contain_text("Kernel")
    expect(menus).not_to_contain_text("Nbgrader")  # the instructor's tools stay out
    assert screenshot_figures(tab, stem) >= 2, "lesson 1 shows no plots or widgets"
    tab.mark("screenshots")
    assert_quiz_measures(tab, questions_for(lesson=1), stem)
    assert_explorer_follows_its_slider(tab, EXPLORERS[0], stem)
    assert_no_console_errors(tab)


LOOP_IMPORT = "from gradacc_lessons.exercises.lesson1 import ACCUMULATION_LOOP as loop_exercise"
# What a learner types into lesson 1's exercise: first with the off-by-one bug, then right.
LOOP = """{import_line}


def accumulation_loop(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    optimizer.zero_grad()
    for i, (inputs, targets) in enumerate(micro_batches):
        (loss_fn(model(inputs), targets) / accumulation_steps).backward()
        if {condition}:
            optimizer.step()
            optimizer.zero_grad()"""


def test_an_exercise_written_in_the_lab_gets_its_diagnosis_then_passes(tab, lab):
    open_and_run_all(tab, lab, EXPLORERS[0].notebook)
    page = tab.page
    panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
    code = panel.locator(".jp-CodeCell", has_text="def accumulation_loop")
    verdict = panel.locator(".jp-CodeCell", has_text="loop_exercise.check(").locator(
        ".jp-OutputArea-output"
    )
    expect(verdict).to_contain_text("Not written yet")  # Run All went on past it
    attempts = [
        ("i % accumulation_steps == 0", "The first step came after micro-batch 1, not 4"),
        ("(i + 1) % accumulation_steps == 0", "Right: on fresh cases your function matches"),
    ]
    for condition, said in attempts:
        code.locator(".cm-content").click()
        page.keyboard.press("Control+A")
        page.keyboard.insert_text(LOOP.format(import_line=LOOP_IMPORT, condition=condition))
        page.keyboard.press("Shift+Enter")  # runs the function's cell, moves to the check
        page.keyboard.press("Shift+Enter")  # runs the check
        expect(verdict).to_contain_text(said, timeout=60_000)
        screenshot(verdict, f"lesson01-exercise-{len(tab.phases)}.png")
        tab.mark(f"exercise checked: {said[:20]}")
    assert_no_console_errors(tab)


def test_self_study_quiz_counts_first_tries_hints_first_and_checks_predictions(tab, lab):
    stem = "quiz08"
    open_and_run_all(tab, lab, QUIZ_NOTEBOOK)
    expect(tab.page.locator(".gradacc-selfcheck")).to_have_count(2)  # the FAQ, then the lessons
    assert_quiz_measures(tab, lesson_questions(), f"{stem}-lessons")
    assert_predictions_are_checked(tab, lesson_questions(), f"{stem}-lessons")
    assert_quiz_measures(tab, faq_questions(), f"{stem}-faq")
    tab.page.screenshot(path=ARTIFACTS / f"{stem}-page.png")
    assert_no_console_errors(tab)


def test_the_faq_quiz_taken_in_yoruba(tab, lab):
    stem = "quiz08-yoruba"
    page = tab.page
    open_and_run_all(tab, lab, QUIZ_NOTEBOOK)
    switch = page.locator(".gradacc-language").first  # the FAQ's (the lessons' quiz has one too)
    switch.get_by_role("button", name="Yorùbá", exact=True).click()
    yoruba = [translated(q, "yo") for q in faq_questions()]
    quiz = page.locator(".gradacc-selfcheck", has_text=yoruba[0].prompt)
    expect(quiz.locator(".gradacc-check").first).to_have_text(words_for("yo").check)
    expect(quiz.locator(".gradacc-question-faq1_what")).to_contain_text("Kini ikojọpọ Gradient?")
    assert_quiz_measures(tab, yoruba, stem, words_for("yo"))
    switch.get_by_role("button", name="English", exact=True).click()  # its own score, untouched
    english = page.locator(".gradacc-selfcheck", has_text=faq_questions()[0].prompt)
    expect(english.locator(".gradacc-score")).to_have_text(_score(ENGLISH, 0, 0, 5))
    assert_no_console_errors(tab)


@pytest.mark.parametrize("explorer", EXPLORERS[1:], ids=lambda e: e.slider)
def test_explorer_keeps_up_with_fast_moves(tab, lab, explorer):
    stem = explorer.notebook.split("_")[0]
    open_and_run_all(tab, lab, explorer.notebook)
    screenshot_figures(tab, f"lesson{stem}")
    assert_explorer_follows_its_slider(tab, explorer, f"lesson{stem}")
    assert_no_console_errors(tab)
