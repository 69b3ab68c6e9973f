"""gradacc-grade against dishonest and broken submissions, in the bubblewrap sandbox.

One class of students is graded once (module fixture) with the documented command:
an honest student, and one student per attack (reading the hidden tests, writing the
gradebook and outside the scratch folder, the network, monkeypatching, input
transformers that blank the tests, always-equal answers, fork bomb and memory hog,
a killed kernel, a hang, a corrupt file). Each test then checks one protection
against what the run left behind: the gradebook, the autograded notebooks, the course
folder, a TCP listener. Expected scores are what each submission really earned.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import nbformat
import pytest
from gradacc_grader.sandbox import Limits, bwrap_command, give_to_sandbox
from gradacc_grader.trusted import compare_loop_results, literal_answer, run_loop_in_sandbox

from gradacc_lessons.quiz.questions import faq_questions

# One autograde takes 5-10 s on an idle machine, several times that on a loaded one; the
# class below also waits --timeout for the student whose kernel hangs.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]

ROOT = Path(__file__).resolve().parents[2]  # the repository
COURSE = ROOT / "quizzes" / "course"  # the nbgrader course folder
BIN = Path(sys.executable).parent
ASSIGNMENT = "gradacc_faq"
AUTOGRADED = 8.0  # five questions of 1 point and the loop exercise of 3; 2 more by hand
LETTERS = {q.faq: q.letter for q in faq_questions()}
GRADE = [str(BIN / "gradacc-grade"), "--cpu-seconds", "60", "--memory-mb", "2048"]


def _env(path: str | None = None) -> dict:
    return dict(os.environ, PATH=path if path is not None else f"{BIN}:{os.environ['PATH']}")


def _new_course(folder: Path) -> Path:
    """A copy of quizzes/ (config and source only) with the assignment generated."""
    course = folder / "quizzes"
    course.mkdir(parents=True)
    shutil.copy(COURSE / "nbgrader_config.py", course)
    shutil.copytree(COURSE / "source", course / "source")
    generate = [str(BIN / "nbgrader"), "generate_assignment", ASSIGNMENT, "--force"]
    done = subprocess.run(generate, cwd=course, env=_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return course


def _cells_by_id(nb) -> dict:
    return {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}


def honest_notebook(course: Path):
    """The released notebook with every solution cell answered as the source's solution."""
    released = nbformat.read(course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    source = _cells_by_id(nbformat.read(course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4))
    for cell in released.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and cell.cell_type == "code":
            lines = source[meta["grade_id"]].source.splitlines()
            cell.source = "\n".join(line for line in lines if "### " not in line)
        elif meta.get("solution"):
            cell.source = "BatchNorm normalises each micro-batch with its own statistics."
    return released


def set_cell(nb, grade_id: str, text: str):
    _cells_by_id(nb)[grade_id].source = text
    return nb


def add_cell_after(nb, grade_id: str, text: str):
    index = [c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells].index(grade_id)
    cell = nbformat.v4.new_code_cell(text)
    if nb.nbformat_minor < 5:
        del cell["id"]  # cell ids came with nbformat 4.5
    nb.cells.insert(index + 1, cell)
    return nb


def wrong_answers(nb, keep_right: tuple[int, ...] = ()):
    for k in range(1, 6):
        letter = LETTERS[k] if k in keep_right else "A"  # no FAQ answer is A
        set_cell(nb, f"faq{k}_answer", f'answer_faq{k} = "{letter}"')
    return nb


NO_LOOP = "def train_with_accumulation(model, optimizer, loss_fn, micro_batches, steps):\n    pass"

SNOOP_READ = r"""
import glob, json, os, re
patterns = ["../../../source/**/*", "../../../release/**/*", "../../../submitted/**/*",
            "../../../autograded/**/*", "../../../gradebook.db", "../../*/**/*.ipynb"]
own = os.getcwd()  # its own scratch copy is fair game
found = [p for pattern in patterns for p in glob.glob(pattern, recursive=True)
         if not os.path.realpath(p).startswith(own)]
hidden, databases = [], []
for top in ["/home", "/tmp", "/root", "/work", "/srv", "/opt", "/mnt", "/var", "/etc"]:
    for folder, dirs, files in os.walk(top):
        if folder.startswith(own):
            continue
        dirs[:] = [d for d in dirs if d not in ("site-packages", "lib", "include", "share")]
        for name in files:
            path = os.path.join(folder, name)
            if name.endswith(".db"):
                databases.append(path)
            if name.endswith((".py", ".ipynb", ".json", ".pyc")):
                try:
                    text = open(path, "rb").read()
                except OSError:
                    continue
                if b"BEGIN HIDDEN TESTS" in text or b"BEGIN SOLUTION" in text:
                    hidden.append(path)
                    for k, letter in re.findall(rb'answer_faq(\d) = "([A-D])"', text):
                        globals()["answer_faq" + k.decode()] = letter.decode()
print("SNOOP found", json.dumps(found + databases))
print("SNOOP hidden", json.dumps(hidden))
"""

SNOOP_WRITE = r"""
import json, os, sqlite3
written = []
for path in ["../../../gradebook.db", *[p for p in found + databases if p.endswith(".db")]]:
    try:
        db = sqlite3.connect(path)
        db.execute("UPDATE grade SET auto_score = 1000")
        db.commit()
        written.append(path)
    except Exception:
        pass
for path in ["../../../PWNED", "../../PWNED", "/PWNED", "/work/PWNED", "/root/PWNED",
             os.path.expanduser("~/../PWNED")]:
    try:
        open(path, "w").write("pwned")
        written.append(path)
    except OSError:
        pass
print("SNOOP written", json.dumps(written))
"""

SNOOP_NETWORK = r"""
import json, socket
try:
    socket.create_connection(("127.0.0.1", PORT), timeout=3).close()
    network = "connected"
except OSError as error:
    network = str(error)
print("SNOOP network", json.dumps(network))
"""

PATCH = """
import builtins, torch
torch.allclose = lambda *args, **kwargs: True
torch.equal = lambda *args, **kwargs: True
torch.Tensor.__sub__ = lambda self, other: torch.zeros(())
builtins.abs = lambda value: 0.0 * value
builtins.sum = lambda *args, **kwargs: 0.0
"""

BLANK = """
def _blank_tests(lines):
    text = "".join(lines)
    return [] if ("_gradacc" in text or "Hidden test" in text) else lines

get_ipython().input_transformers_cleanup.append(_blank_tests)
"""

YES = """
class _Yes:
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __hash__(self): return 0
    def strip(self): return self
    def upper(self): return self

class _Str(str):
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    __hash__ = str.__hash__
    def strip(self): return self
    def upper(self): return self

answer_faq{k} = {value}
"""

BOMB = """
import os, signal
children = []
try:
    while len(children) < 10_000:
        pid = os.fork()
        if pid == 0:
            signal.pause()
        children.append(pid)
except OSError as error:
    print("FORKS", len(children), type(error).__name__)
for pid in children:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
try:
    hog = bytearray(16 << 30)
    print("MEMORY 16 GiB allocated")
except MemoryError:
    print("MEMORY refused")
"""

KILL = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"
HANG = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(100_000)"
SPIN = 'answer_faq5 = "A"\nwhile True:\n    pass'


def submissions(course: Path, port: int) -> dict:
    """Student id -> notebook (or raw bytes) and the autograded points it really earned."""
    honest = lambda: honest_notebook(course)  # noqa: E731
    snoop = wrong_answers(honest_notebook(course))
    for k in range(1, 6):
        set_cell(snoop, f"faq{k}_answer", "# answers come from whatever the snoop found")
    set_cell(snoop, "loop_answer", NO_LOOP)
    add_cell_after(snoop, "setup", f"PORT = {port}\n{SNOOP_NETWORK}")
    add_cell_after(snoop, "setup", SNOOP_WRITE)
    add_cell_after(snoop, "setup", SNOOP_READ)
    patcher = set_cell(wrong_answers(honest_notebook(course)), "loop_answer", NO_LOOP)
    add_cell_after(patcher, "setup", PATCH)
    blanker = set_cell(wrong_answers(honest(), keep_right=(1,)), "loop_answer", NO_LOOP)
    add_cell_after(blanker, "setup", BLANK)
    always = honest()
    for k in range(1, 6):
        value = "_Yes()" if k <= 3 else '_Str("A")'
        set_cell(always, f"faq{k}_answer", YES.format(k=k, value=value))
    bomb = wrong_answers(honest(), keep_right=(1,))
    add_cell_after(bomb, "faq1_test", BOMB)
    set_cell(bomb, "faq5_answer", SPIN)
    return {
        "honest": (honest(), AUTOGRADED),
        "snoop": (snoop, 0.0),
        "patcher": (patcher, 0.0),
        "blanker": (blanker, 1.0),
        "always_equal": (always, 3.0),  # only the loop, which is right
        "bomb": (bomb, 4.0),  # FAQ 1 and the loop
        "killer": (add_cell_after(honest(), "faq2_test", KILL), 0.0),
        "hanger": (add_cell_after(honest(), "faq2_test", HANG), 0.0),
        "corrupt": (b'{"cells": [ this is not a notebook', 0.0),
    }


def submit(course: Path, student: str, notebook) -> None:
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    path = folder / f"{ASSIGNMENT}.ipynb"
    if isinstance(notebook, bytes):
        path.write_bytes(notebook)
    else:
        nbformat.write(notebook, path)


def scores(course: Path) -> dict[str, dict[str, float]]:
    """Autograded score of every grade cell, per student, as the gradebook holds it."""
    from nbgrader.api import Gradebook

    result = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for submission in gradebook.assignment_submissions(ASSIGNMENT):
            grades = submission.notebooks[0].grades
            result[submission.student.id] = {  # None: never graded, counts as 0
                g.name: g.auto_score or 0.0 for g in grades if g.cell.cell_type == "code"
            }
    return result


@pytest.fixture(scope="module")
def listener():
    """A TCP server on 127.0.0.1 that counts the connections it gets."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    got, stop = [], threading.Event()

    def serve():
        while not stop.is_set():
            try:
                got.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], got
    stop.set()
    thread.join()
    server.close()


@pytest.fixture(scope="module")
def graded(tmp_path_factory, listener):
    """The class, graded once with the documented command."""
    course = _new_course(tmp_path_factory.mktemp("class"))
    expected = {}
    for student, (notebook, points) in submissions(course, listener[0]).items():
        submit(course, student, notebook)
        expected[student] = points
    before = {p.relative_to(course) for p in course.rglob("*")}
    command = [*GRADE, "--timeout", "180", "--course", str(course), ASSIGNMENT]
    done = subprocess.run(command, env=_env(), capture_output=True, text=True, timeout=2400)
    return {"course": course, "run": done, "expected": expected, "before": before}


def test_the_run_completes_and_prints_every_student(graded):
    done = graded["run"]
    # exit 1: some submissions failed (killer, hanger, corrupt); the others are graded
    assert done.returncode == 1, done.stdout + done.stderr
    table = done.stdout.splitlines()
    for student in graded["expected"]:
        assert any(line.startswith(student + " ") for line in table), done.stdout
    failed = {line.split()[0] for line in table if "failed" in line}
    assert failed == {"killer", "hanger", "corrupt"}, done.stdout


def test_every_student_gets_exactly_what_they_earned(graded):
    got = {student: sum(cells.values()) for student, cells in scores(graded["course"]).items()}
    for student, points in graded["expected"].items():
        assert got.get(student, 0.0) == points, (student, got, graded["run"].stdout)


def test_honest_student_gets_full_marks_in_the_sandbox(graded):
    cells = scores(graded["course"])["honest"]
    assert set(cells) == {f"faq{k}_test" for k in range(1, 6)} | {"loop_test"}
    assert sum(cells.values()) == AUTOGRADED, cells
    line = next(x for x in graded["run"].stdout.splitlines() if x.startswith("honest "))
    assert "graded" in line and "to do" in line, line  # the written answer awaits a hand


def _outputs(course: Path, student: str) -> str:
    """Everything the autograded notebook's code cells printed or raised, as text."""
    nb = nbformat.read(course / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    texts = []
    for cell in nb.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if output.output_type == "stream":
                texts.append(output.text)
            elif output.output_type == "error":
                texts.append(f"{output.ename}: {output.evalue}")
            else:
                texts.append(json.dumps(output.get("data", {})))
    return "\n".join(texts)


def _snoop_report(course: Path) -> dict:
    text = _outputs(course, "snoop")
    report = dict(re.findall(r"SNOOP (\w+) (.*)", text))
    assert set(report) == {"found", "hidden", "written", "network"}, text[:2000]
    return {key: json.loads(value) for key, value in report.items()}


def test_student_code_cannot_read_course_files_nor_hidden_tests(graded):
    report = _snoop_report(graded["course"])
    assert report["found"] == [], report  # no source/, release/, submitted/, gradebook
    assert report["hidden"] == [], report  # no file with hidden tests or solutions anywhere
    assert "BEGIN HIDDEN TESTS" not in _outputs(graded["course"], "snoop")


def test_student_code_cannot_write_the_gradebook_nor_outside_its_scratch(graded):
    course = graded["course"]
    assert _snoop_report(course)["written"] == []
    assert not list(course.rglob("PWNED")) and not Path("/PWNED").exists()
    assert max(sum(cells.values()) for cells in scores(course).values()) <= AUTOGRADED
    # nothing new in the course folder but nbgrader's own autograded copies
    new = {p.relative_to(course) for p in course.rglob("*")} - graded["before"]
    assert {p.parts[0] for p in new} <= {"autograded", ".nbgrader.log"}, sorted(map(str, new))


def test_student_code_has_no_network(graded, listener):
    report = _snoop_report(graded["course"])
    assert report["network"] != "connected", report
    assert listener[1] == []  # the listener on the grader's loopback never saw it


def test_fork_bomb_and_memory_hog_are_bounded(graded):
    text = _outputs(graded["course"], "bomb")
    forks = re.search(r"FORKS (\d+) (\w+)", text)
    assert forks and int(forks.group(1)) < Limits.processes, text[:2000]
    assert "MEMORY refused" in text, text[:2000]
    assert "CellTimeoutError" in text or "KeyboardInterrupt" in text  # the endless loop stopped


def test_trusted_recheck_takes_back_what_the_kernel_faked(graded):
    """The blanker's input transformer made nbgrader pass every test; the grader took it back."""
    stdout = graded["run"].stdout
    notes = [line for line in stdout.splitlines() if "trusted re-check" in line]
    assert any("loop_test: 3 -> 0" in line for line in notes), stdout
    assert any("faq2_test: 1 -> 0" in line for line in notes), stdout
    assert scores(graded["course"])["blanker"]["faq1_test"] == 1.0  # earned, kept


def test_grading_refuses_without_bwrap(tmp_path):
    course = _new_course(tmp_path)
    submit(course, "honest", honest_notebook(course))
    command = [*GRADE, "--course", str(course), ASSIGNMENT]
    # PATH without bwrap (the venv's bin only: nbgrader needs alembic from it)
    done = subprocess.run(command, env=_env(str(BIN)), capture_output=True, text=True)
    assert done.returncode == 2
    assert "bubblewrap (bwrap) is not installed" in done.stderr
    assert "--unsafe-no-sandbox" in done.stderr
    assert scores(course) == {}  # nothing was graded

    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text(
        "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"
    )
    (fake / "bwrap").chmod(0o755)
    done = subprocess.run(
        command, env=_env(f"{fake}:{BIN}:/usr/bin:/bin"), capture_output=True, text=True
    )
    assert done.returncode == 2 and "self-test failed" in done.stderr, done.stderr
    assert "Permission denied" in done.stderr and scores(course) == {}

    # Unsandboxed grading happens only when asked for by name, and says what it means.
    unsafe = [*command[:-1], "--unsafe-no-sandbox", ASSIGNMENT]
    done = subprocess.run(unsafe, env=_env(str(BIN)), capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING: --unsafe-no-sandbox" in done.stderr
    assert sum(scores(course)["honest"].values()) == AUTOGRADED


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('answer_faq1 = "B"', "B"),
        ('# the second\nanswer_faq1 = "C"  # sure', "C"),
        ("answer_faq1 = _Yes()", None),
        ('answer_faq1 = _Str("B")', None),
        ('answer_faq1 = "B"\nanswer_faq1 = "C"', None),
        ('answer_faq1 = "B"\nglobals()["answer_faq1"] = 1', None),
        ('if True:\n    answer_faq1 = "B"', None),
        ('answer_faq1 = "B"\ndel answer_faq1', None),
        ('answer_faq1 = b"B"', None),
        ("answer_faq1 = 'B' +", None),
    ],
)
def test_multiple_choice_answers_are_read_as_plain_literals(source, expected):
    assert literal_answer(["import torch", source], "answer_faq1") == expected


def test_an_answer_rebound_in_another_cell_does_not_count():
    right = 'answer_faq1 = "B"'
    assert literal_answer([right, "assert answer_faq1 == 'B'"], "answer_faq1") == "B"
    assert literal_answer([right, "answer_faq1 = _Yes()"], "answer_faq1") is None
    assert literal_answer([right, "for answer_faq1 in 'AB': pass"], "answer_faq1") is None
    assert literal_answer([right, "%time answer_faq1 = 'C'"], "answer_faq1") is None
    assert literal_answer(["x = 1", "x = 2"], "answer_faq1") is None  # never set


RIGHT_LOOP = """
def train_with_accumulation(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    optimizer.zero_grad()
    for start in range(0, len(micro_batches), accumulation_steps):
        window = micro_batches[start : start + accumulation_steps]
        for inputs, targets in window:
            (loss_fn(model(inputs), targets) / len(window)).backward()
        optimizer.step()
        optimizer.zero_grad()
"""
WRONG_LOOPS = {
    "last window divided by N": RIGHT_LOOP.replace(
        "len(window)).backward", "accumulation_steps).backward"
    ),
    "no clearing at the start": RIGHT_LOOP.replace("    optimizer.zero_grad()\n    for", "    for"),
    "patches torch, does nothing": "import torch\ntorch.allclose = lambda *a, **k: True\n"
    + NO_LOOP.replace("steps", "accumulation_steps"),
}


def test_loop_recheck_passes_a_right_loop_and_fails_wrong_ones():
    seed = 20261129
    assert compare_loop_results(run_loop_in_sandbox(RIGHT_LOOP, seed, Limits()), seed)[0]
    for name, source in WRONG_LOOPS.items():
        ok, why = compare_loop_results(run_loop_in_sandbox(source, seed, Limits()), seed)
        assert not ok, name


def test_sandbox_shows_nothing_of_the_course(tmp_path):
    scratch = tmp_path / "work"
    scratch.mkdir()
    give_to_sandbox(scratch)
    probe = f"import os; print(sorted(os.listdir('/')), os.path.exists({str(COURSE)!r}))"
    command = bwrap_command([sys.executable, "-I", "-c", probe], scratch, hidden=(COURSE,))
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("False"), done.stdout
