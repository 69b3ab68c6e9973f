"""The grader's own process is bounded, odd folders are refused alone, a plain user can grade.

One small class is graded once (module fixture) by a user who is not root, with the guide's
command (`gradacc-grade --jobs 2`), while this test samples the memory of the grading
processes. Besides an honest student: folder names that are no student id (a space, bytes that
are not UTF-8, `аda` with a Cyrillic а, `-h`), the 184-byte nbformat-3 notebook whose heading
level is 10**8, one output message of 1,024 frames of almost 4 MiB (4 GiB), a markdown cell of
8 MB of `<`, and a cell that hangs. Each is refused or cut with its reason, for that student
alone; the others get what they earned. Run as root, the test plays the plain user in a user
namespace of its own (uid 1000, no capability; what root owns reads as that user's own, as
nbgrader's 0444 autograded copies do for an instructor), since a user made with useradd
cannot reach a Python installed under /root.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import nbformat
import psutil
import pytest
from gradacc_grader.bwrap import exposed
from gradacc_grader.grading import grade_class
from gradacc_grader.sandbox import Sandbox, SandboxError
from gradacc_grader.selftest import self_test
from gradacc_grader.submissions import old_formats
from gradacc_grader.terminal_text import visible

pytestmark = pytest.mark.timeout(1800)

BIN = Path(sys.executable).parent
ASSIGNMENT = "gradacc_faq"
AUTOGRADED = 8.0  # five questions of 1 point and the loop exercise of 3
GRADER_MIB = 2048  # the grading process's limit here (--grader-memory-mb)
# the 184-byte nbformat-3 notebook of issue 35: nbformat's upgrade builds '#' * level
V3_BOMB = json.dumps(
    {
        "nbformat": 3,
        "nbformat_minor": 0,
        "metadata": {},
        "worksheets": [
            {
                "cells": [
                    {"cell_type": "heading", "level": 10**8, "source": "x" * 11, "metadata": {}}
                ],
                "metadata": {},
            }
        ],
    }
)
# one output message of 1,024 frames of almost 4 MiB (ZMQ checks 4 MiB per frame): 4 GiB,
# sent without a copy in the kernel (the same bytes each frame)
FRAMES = """
kernel = get_ipython().kernel
frame = b"x" * ((4 << 20) - (64 << 10))
kernel.session.send(kernel.iopub_socket, "stream", {"name": "stdout", "text": "hi"},
                    parent=kernel.get_parent("shell"), buffers=[frame] * 1024)
"""
HANG = "import time\ntime.sleep(10**6)  # hangs: nbgrader's timeout interrupts it"
CELL_TIMEOUT = 60  # c.Execute.timeout of this class


@pytest.fixture(scope="module")
def built(tmp_path_factory, course_with_secret) -> Path:
    """A course with gradacc_faq built by gradacc-build with the tests' secret."""
    course = course_with_secret(tmp_path_factory.mktemp("bounds-built") / "course")
    command = [str(BIN / "gradacc-build"), "--course", str(course), "--assignment", ASSIGNMENT]
    done = subprocess.run(command, env=_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return course


def honest_notebook(course: Path):
    """The released notebook with every solution cell answered as the source's solution."""
    released = nbformat.read(course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    source = nbformat.read(course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    solutions = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source for c in source.cells}
    for cell in released.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and cell.cell_type == "code":
            lines = solutions[meta["grade_id"]].splitlines()
            cell.source = "\n".join(line for line in lines if "### " not in line)
        elif meta.get("solution"):
            cell.source = "BatchNorm normalises each micro-batch with its own statistics."
    return released


def with_cell(nb, text: str):
    """The notebook with a code cell of `text` after its setup cell."""
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells]
    cell = nbformat.v4.new_code_cell(text)
    if nb.nbformat_minor < 5:
        del cell["id"]
    nb.cells.insert(ids.index("setup") + 1, cell)
    return nb


def submit(course: Path, student: str, notebook) -> None:
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    path = folder / f"{ASSIGNMENT}.ipynb"
    if isinstance(notebook, str):
        path.write_text(notebook, encoding="utf-8")
    else:
        nbformat.write(notebook, path)


def _plain_user(command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return command
    return ["unshare", "--user", "--map-user=1000", "--map-group=1000", "--", *command]


def _env() -> dict:
    return dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}")


def _peaks(process: subprocess.Popen, peaks: dict, stop: threading.Event) -> None:
    """The largest resident memory of each grading process (the unshare'd tree's Pythons)."""
    top = psutil.Process(process.pid)
    while not stop.wait(0.1):
        try:
            children = top.children(recursive=True)
        except psutil.NoSuchProcess:
            return
        for child in children:
            try:
                if child.name().startswith(("python", "gradacc-grade")) and "bwrap" not in [
                    p.name() for p in child.parents()
                ]:
                    peaks[child.pid] = max(peaks.get(child.pid, 0), child.memory_info().rss)
            except psutil.Error:
                continue


@pytest.fixture(scope="module")
def graded(tmp_path_factory, built):
    course = Path(shutil.copytree(built, tmp_path_factory.mktemp("bounds") / "course"))
    with open(course / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write(f"c.Execute.iopub_timeout = 120\nc.Execute.timeout = {CELL_TIMEOUT}\n")
    honest = lambda: honest_notebook(course)  # noqa: E731
    angle = honest()
    angle.cells.append(nbformat.v4.new_markdown_cell("<" * 8_000_000))
    students = {
        "ada": honest(),
        "frames": with_cell(honest(), FRAMES),
        "angle": angle,
        "hanger": with_cell(honest(), HANG),
        "v3bomb": V3_BOMB,
        " ": honest(),
        "\u0430da": honest(),  # a Cyrillic а
        "-h": honest(),
    }
    for student, notebook in students.items():
        submit(course, student, notebook)
    odd = os.fsencode(course / "submitted") + b"/\xff\xfeodd"  # not UTF-8
    os.makedirs(odd + b"/" + ASSIGNMENT.encode())
    shutil.copy(
        course / "submitted" / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb",
        odd + f"/{ASSIGNMENT}/{ASSIGNMENT}.ipynb".encode(),
    )
    grade = [str(BIN / "gradacc-grade"), "--cpu-seconds", "20", "--memory-mb", "2048"]
    grade += ["--grader-memory-mb", str(GRADER_MIB), "--jobs", "2", "--timeout", "900"]
    command = _plain_user([*grade, "--course", str(course), ASSIGNMENT])
    process = subprocess.Popen(
        command, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    peaks: dict[int, int] = {}
    stop = threading.Event()
    watcher = threading.Thread(target=_peaks, args=(process, peaks, stop))
    watcher.start()
    try:
        stdout, stderr = process.communicate(timeout=1700)
    finally:
        stop.set()
        watcher.join()
    rows = {}  # each student's row of the table, by id (not " ", whose row starts blank)
    for line in stdout.splitlines():
        for name in [*students, "\udcff\udcfeodd"]:
            if name.strip() and line.startswith(f"{visible(name)} "):
                rows[name] = line
    return {
        "course": course,
        "stdout": stdout,
        "stderr": stderr,
        "code": process.returncode,
        "peaks": peaks,
        "rows": rows,
    }


@pytest.mark.slow  # the class graded once
def test_the_class_is_graded_to_the_end_by_a_plain_user(graded):
    assert graded["code"] == 1, graded["stdout"] + graded["stderr"][-3000:]
    rows = graded["rows"]
    assert rows["ada"].split()[1:3] == [f"{AUTOGRADED:g}", "10"], graded["stdout"]
    assert rows["ada"].endswith("graded"), rows["ada"]
    # the markdown bomb is shown as text, bounded; the student keeps every point earned
    assert rows["angle"].split()[1] == f"{AUTOGRADED:g}", graded["stdout"]
    notebook = graded["course"] / "autograded" / "angle" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert notebook.stat().st_size < 4 << 20  # 8 MB of `<` once became 41 MB


@pytest.mark.slow  # the class graded once
@pytest.mark.parametrize("student", [" ", "\u0430da", "-h", "\udcff\udcfeodd"])
def test_a_folder_name_that_is_no_student_id_is_refused_alone(graded, student):
    # as gradacc-grade reports each student (stderr), the name's control bytes escaped
    why = "refused: the folder name is not a student id"
    assert f"  {visible(student)}: {why}" in graded["stderr"], graded["stderr"][-3000:]
    if student.strip():
        assert why in graded["rows"][student], graded["stdout"]
    assert not (graded["course"] / "autograded" / student).exists()
    # the table has every student, graded or not: no one was lost
    assert len(graded["stdout"].strip().splitlines()) >= 1 + 9, graded["stdout"]


@pytest.mark.slow  # the class graded once
def test_an_nbformat3_heading_bomb_is_refused_before_any_upgrade(graded):
    assert len(V3_BOMB) == 184
    line = graded["rows"]["v3bomb"]
    assert "refused: gradacc_faq.ipynb is nbformat 3, not 4" in line, line
    assert not (graded["course"] / "autograded" / "v3bomb").exists()


@pytest.mark.slow  # the class graded once
def test_a_message_of_many_frames_fails_that_student_and_the_grader_stays_bounded(graded):
    line = graded["rows"]["frames"]
    assert line.split()[1] == "0" and "failed:" in line, line
    # no grading process held the 4 GiB message: each stays under its own limit
    peaks = {pid: rss >> 20 for pid, rss in graded["peaks"].items()}
    assert len(peaks) >= 4 and max(peaks.values()) < GRADER_MIB, peaks


@pytest.mark.slow  # the class graded once
def test_a_hanging_cell_costs_its_timeout_once_not_again_in_the_recheck(graded):
    # the loop exercise (3 points) is scored by the re-check: it ran the cells without the
    # hanging one (else it would have slept until the student's time ran out, scoring 0)
    line = graded["rows"]["hanger"]
    assert line.split()[1] == f"{AUTOGRADED:g}" and line.endswith("graded"), graded["stdout"]


def test_an_exchange_inside_what_the_sandbox_shows_is_refused_by_name(tmp_path):
    exchange = Path(tempfile.mkdtemp(prefix="exchange-", dir=sys.prefix))
    try:
        assert exposed(exchange) is not None
        with pytest.raises(SandboxError, match="exchange .* lies inside .*Move the exchange"):
            self_test(Sandbox(hidden=(tmp_path,)), exchange)
    finally:
        shutil.rmtree(exchange)


def test_an_exchange_under_usr_is_not_in_the_sandbox(tmp_path):
    # nbgrader's default place is /usr/local/share/nbgrader/exchange; the sandbox once bound /usr
    share = Path("/usr/local/share")
    exchange = Path(tempfile.mkdtemp(prefix="gradacc-test-exchange-", dir=share))
    try:
        exchange.chmod(0o755)  # as nbgrader's: anyone may walk in
        (exchange / "inbound").mkdir(mode=0o777)
        (exchange / "inbound" / "bob+gradacc_faq+2026").write_text("bob's answers")
        found = self_test(Sandbox(hidden=(tmp_path,)), exchange)
    finally:
        shutil.rmtree(exchange)
    assert [probe["sees"] for probe in found.values()] == [[], []], found


def test_odd_names_are_refused_before_anything_is_made_for_them(tmp_path):
    names = [" ", "\udcff\udcfeodd", "\u0430da", "-h", ".hidden", "Ade\u0301"]
    results = tmp_path / "results"
    outcomes = grade_class(tmp_path, ASSIGNMENT, names, Sandbox(hidden=()), 2, 60, results)
    assert sorted(o.student for o in outcomes) == sorted(names)
    assert all(
        o.status.startswith("refused: the folder name is not a student id") for o in outcomes
    )
    assert not results.exists()  # no folder, no gradebook row, no process


def test_an_nbformat3_notebook_is_refused_without_being_read_by_nbformat(tmp_path):
    (tmp_path / "a.ipynb").write_text(V3_BOMB, encoding="utf-8")
    nbformat.write(nbformat.v4.new_notebook(), tmp_path / "b.ipynb")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert old_formats(tmp_path) == [
        "a.ipynb is nbformat 3, not 4 (open it in Jupyter 7 and save it again)"
    ]
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before  # KiB
    assert grown < 50 << 10  # nbformat's upgrade would have built a string of 100 MB
