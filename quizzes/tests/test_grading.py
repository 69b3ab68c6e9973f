"""gradacc-grade against dishonest and broken submissions, in the bubblewrap sandbox.

One class of students is graded once (module fixture) with the documented command,
three students at a time (--jobs 3), then given feedback with `nbgrader generate_feedback`:
an honest student, honest variations (helpers and extra cells, renamed variables, copied
cells), and one student per attack (reading the hidden tests and /proc, writing the
gradebook and outside the scratch folder, the network, monkeypatching, input transformers,
a pre_run_cell hook that prints every cell and fake report lines, a function that walks the
stack for the reference, always-equal answers, fork bomb and memory hog, a killed kernel, a
hang, a corrupt file, links to the source notebook and to an instructor-only file, a named
pipe, a module named like a library, user namespaces). Each test then checks one protection
against what the run left behind: the gradebook, the autograded notebooks, the feedback, the
course folder, a TCP listener. Expected scores are what each submission really earned.
"""

from __future__ import annotations

import copy
import html
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import pytest
from gradacc_grader.draw import LETTERS
from gradacc_grader.sandbox import Limits, SandboxError, find_bwrap

try:
    find_bwrap()
except SandboxError:  # a fresh machine: one clear line, not a dozen failures after minutes
    pytest.fail(
        "the grader's tests need bubblewrap: sudo apt-get install bubblewrap", pytrace=False
    )

# One autograde takes 5-10 s on an idle machine, several times that on a loaded one; the
# class below also waits --timeout for the student whose kernel hangs.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]

BIN = Path(sys.executable).parent
ASSIGNMENT = "gradacc_faq"
AUTOGRADED = 8.0  # five questions of 1 point and the loop exercise of 3; 2 more by hand
LOOP = "faq3_loop"  # the loop exercise's cells: faq3_loop_answer, faq3_loop_test
# The CPU limit is above the cell timeout (60 s, in the class below) and the kernel's start:
# a cell that runs too long must be stopped by the timeout, so that the student's other cells
# keep their points. When the bomb's endless cell computed (`while True: pass`), a CPU limit of
# 60 s killed its kernel first whenever it had a core to itself ("Kernel died", 0 instead of 4).
GRADE = [str(BIN / "gradacc-grade"), "--cpu-seconds", "120", "--memory-mb", "2048"]
SECRET = "INSTRUCTOR-ONLY 7f3a9c"  # the content of a file only the instructor may read


def _env(path: str | None = None) -> dict:
    return dict(os.environ, PATH=path if path is not None else f"{BIN}:{os.environ['PATH']}")


@pytest.fixture(scope="module")
def built_faq(tmp_path_factory, course_with_secret, cli) -> Path:
    """A course with gradacc_faq built by gradacc-build (the tests' fixed secret), no students."""
    course = course_with_secret(tmp_path_factory.mktemp("faq") / "course")
    done = cli(["gradacc-build", "--course", str(course), "--assignment", ASSIGNMENT])
    assert done.returncode == 0, done.stdout + done.stderr
    return course


@pytest.fixture
def faq(built_faq, tmp_path) -> Path:
    """A copy of the built course (gradebook included) for one test."""
    return Path(shutil.copytree(built_faq, tmp_path / "course", symlinks=True))


def right_letters(course: Path) -> dict[int, str]:
    """FAQ number -> its right letter, from the answer key gradacc-build wrote."""
    key = json.loads((course / "keys" / f"{ASSIGNMENT}.json").read_text(encoding="utf-8"))
    return {int(c["variable"][-1]): c["letter"] for c in key["cells"] if c["kind"] == "choice"}


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


def wrong_answers(nb, course: Path, keep_right: tuple[int, ...] = ()):
    for k, right in right_letters(course).items():
        wrong = LETTERS[(LETTERS.index(right) + 1) % len(LETTERS)]
        set_cell(nb, f"faq{k}_answer", f'answer_faq{k} = "{right if k in keep_right else wrong}"')
    return nb


NO_LOOP = "def train_with_accumulation(model, optimizer, loss_fn, micro_batches, steps):\n    pass"

SNOOP_READ = r"""
import glob, json, os, re
patterns = ["../../../source/**/*", "../../../release/**/*", "../../../submitted/**/*",
            "../../../autograded/**/*", "../../../gradebook.db", "../../*/**/*.ipynb",
            "../../../keys/*", "../../../instructor.secret"]
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
            if name.endswith(".db") or name == "instructor.secret":
                databases.append(path)
            if name.endswith((".py", ".ipynb", ".json", ".pyc")):
                try:
                    text = open(path, "rb").read()
                except OSError:
                    continue
                key = b'"grade_id"' in text and b'"letter"' in text  # an answer key
                if b"BEGIN HIDDEN TESTS" in text or b"BEGIN SOLUTION" in text or key:
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
    return [] if ("gradacc" in text or "Graded outside" in text) else lines

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
# A cell that never ends, stopped by the cell timeout. It waits rather than computes: the
# timeout interrupts both alike (KeyboardInterrupt), and a loop that computes would burn a core
# of the test machine for the whole timeout. test_sandbox.py shows a computing loop stopped by
# the CPU limit, in a few seconds.
ENDLESS = 'answer_faq5 = "A"\nimport time\nwhile True:\n    time.sleep(1)'
USERNS = """
import ctypes, os
made = ctypes.CDLL(None, use_errno=True).unshare(0x10000000) == 0  # CLONE_NEWUSER
print("USERNS", "made" if made else os.strerror(ctypes.get_errno()))
"""
SHADOW = "print('SHADOW torch loaded from the submission')\nraise SystemExit('fake torch')\n"


HOOK = """
# Issue 20, item 2: a hook sees the source of every cell that runs after it, and prints it;
# it also prints a report line for every letter, hoping one of them is taken.
def _leak(info):
    print("LEAK", info.raw_cell.replace("\\n", " | ")[:2000])
    for k in range(1, 6):
        for letter in "ABCD":
            print(f"gradacc-report answer_faq{k} {letter!r}")

get_ipython().events.register("pre_run_cell", _leak)
"""

# Issue 20, item 3: the function looks up the stack (and the heap) for the reference
FRAMES = """
import gc, sys

def train_with_accumulation(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    found, frame = [], sys._getframe(1)
    while frame is not None:
        names = ("expected", "reference", "_gradacc_module", "_gradacc_scoring")
        found += [v for k, v in frame.f_globals.items() if k in names]
        frame = frame.f_back
    for o in gc.get_objects():
        try:
            if getattr(o, "__name__", None) == "expected":
                found.append(o)
        except Exception:  # some of torch's objects raise on getattr
            pass
    if not found:
        raise LookupError("no reference in reach")
"""

# Everything the student's process can read about itself and its neighbours, printed in the
# kernel and raised from the harness (whose errors reach the feedback): /proc, the files
# beside the notebook, the sandbox's own scripts.
PROC = """
import glob, os

def _dump():
    texts = []
    paths = ["/proc/self/environ", "/proc/self/cmdline", *glob.glob("/proc/[0-9]*/cmdline"),
             *glob.glob("/proc/[0-9]*/environ"), *glob.glob("./*"), *glob.glob("../*"),
             *glob.glob("../../*"), *glob.glob("/opt/gradacc/inside/*.py"), "/proc/self/maps"]
    for path in paths:
        try:
            with open(path, "rb") as file:
                texts.append(path + " " + file.read(20_000).decode("utf-8", "replace"))
        except OSError:
            pass
    return "\\n".join(texts).replace("\\0", " ")

print("PROC", _dump())

def train_with_accumulation(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    raise RuntimeError(" ".join(sorted(os.listdir("/opt/gradacc/inside"))) + " | " + _dump()[-200:])
"""

# Tampering with the report channel: print fake report lines in its own cells, and hedge in
# every report through a patched print.
FORGE = """
import builtins
for k in range(1, 6):
    for letter in "ABCD":
        print(f"gradacc-report answer_faq{k} {letter!r}")
_print = builtins.print

def _hedging_print(*args, **kwargs):
    if args and args[0] == "gradacc-report":
        for letter in "ABCD":
            _print(args[0], args[1], repr(letter), **kwargs)
    else:
        _print(*args, **kwargs)

builtins.print = _hedging_print
"""


def varied_notebook(course: Path):
    """An honest student who works their own way: helpers in cells of their own, extra
    cells anywhere, answers through other variables and functions."""
    nb = honest_notebook(course)
    right = right_letters(course)
    loop = _cells_by_id(nb)[f"{LOOP}_answer"].source
    helper = "def window_mean(loss, window):\n    return loss / len(window)"
    set_cell(
        nb, f"{LOOP}_answer", loop.replace("(loss / len(window))", "window_mean(loss, window)")
    )
    add_cell_after(nb, "setup", helper)
    add_cell_after(nb, "setup", f"my_choices = {right!r}  # worked out on paper")
    add_cell_after(nb, "intro", "import math\nprint(math.sqrt(2))  # scratch")
    set_cell(nb, "faq1_answer", "pick = my_choices[1]\nanswer_faq1 = pick\nprint(answer_faq1)")
    set_cell(
        nb,
        "faq2_answer",
        f"def choose():\n    return {right[2]!r}.lower()\n\nanswer_faq2 = choose()",
    )
    set_cell(nb, "faq4_answer", f"answer_faq4 = ' {right[4]} '")
    add_cell_after(nb, "faq5_test", "print('the end')")
    nb.cells.append(nbformat.v4.new_markdown_cell("My notes: *done*."))
    for cell in nb.cells:
        cell.pop("id", None)
    return nb


def copied_notebook(course: Path):
    """An honest student who copied cells: an answer cell twice (the same grade id), the
    loop's answer cell with a first try above the final one, a test cell copied upwards."""
    nb = honest_notebook(course)
    cells = _cells_by_id(nb)
    index = {id(c): i for i, c in enumerate(nb.cells)}
    first_try = copy.deepcopy(cells[f"{LOOP}_answer"])
    first_try.source = (
        cells[f"{LOOP}_answer"].source.split("    optimizer.zero_grad()")[0] + "    pass"
    )
    nb.cells.insert(index[id(cells[f"{LOOP}_answer"])], first_try)
    index = {id(c): i for i, c in enumerate(nb.cells)}
    nb.cells.insert(index[id(cells["faq1_answer"])] + 1, copy.deepcopy(cells["faq1_answer"]))
    index = {id(c): i for i, c in enumerate(nb.cells)}
    nb.cells.insert(index[id(cells["faq2_answer"])], copy.deepcopy(cells["faq2_test"]))
    return nb


def deleted_notebook(course: Path):
    """Cells deleted: an answer (its question scores 0), a test cell and the written answer
    (both put back; the written answer empty, never with the source's model answer)."""
    nb = honest_notebook(course)
    gone = {"faq1_answer", "faq2_test", "faq5_written"}
    nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") not in gone]
    return nb


def submissions(course: Path, port: int) -> dict:
    """Student id -> notebook (or raw bytes) and the autograded points it really earned."""
    honest = lambda: honest_notebook(course)  # noqa: E731
    snoop = wrong_answers(honest_notebook(course), course)
    for k in range(1, 6):
        set_cell(snoop, f"faq{k}_answer", "# answers come from whatever the snoop found")
    set_cell(snoop, f"{LOOP}_answer", NO_LOOP)
    add_cell_after(snoop, "setup", f"PORT = {port}\n{SNOOP_NETWORK}")
    add_cell_after(snoop, "setup", SNOOP_WRITE)
    add_cell_after(snoop, "setup", SNOOP_READ)
    patcher = set_cell(wrong_answers(honest(), course), f"{LOOP}_answer", NO_LOOP)
    add_cell_after(patcher, "setup", PATCH)
    blanker = set_cell(wrong_answers(honest(), course, (1,)), f"{LOOP}_answer", NO_LOOP)
    add_cell_after(blanker, "setup", BLANK)
    always = honest()
    for k in range(1, 6):
        value = "_Yes()" if k <= 3 else '_Str("A")'
        set_cell(always, f"faq{k}_answer", YES.format(k=k, value=value))
    hooker = add_cell_after(honest(), "setup", HOOK)  # every choice hedged: 0; the loop: 3
    framer = set_cell(wrong_answers(honest(), course), f"{LOOP}_answer", FRAMES)
    proc = set_cell(wrong_answers(honest(), course), f"{LOOP}_answer", PROC)
    forger = add_cell_after(honest(), "setup", FORGE)  # every choice hedged: 0; the loop: 3
    # _Str("A") is the letter A, whatever its methods say: it earns what "A" earns
    str_a = sum(1.0 for k in (4, 5) if right_letters(course)[k] == "A")
    bomb = wrong_answers(honest(), course, keep_right=(1,))
    add_cell_after(bomb, "faq1_test", BOMB)
    set_cell(bomb, "faq5_answer", ENDLESS)
    return {
        "honest": (honest(), AUTOGRADED),
        "snoop": (snoop, 0.0),
        "patcher": (patcher, 0.0),
        "blanker": (blanker, 0.0),  # its own report cells blanked: nothing reported
        "always_equal": (always, 3.0 + str_a),  # the loop, and "A" where A is right
        "varied": (varied_notebook(course), AUTOGRADED),
        "copier": (copied_notebook(course), AUTOGRADED),
        "deleter": (deleted_notebook(course), AUTOGRADED - 1),
        "hooker": (hooker, 3.0),
        "framer": (framer, 0.0),
        "proc": (proc, 0.0),
        "forger": (forger, 3.0),
        "bomb": (bomb, 4.0),  # FAQ 1 and the loop
        "killer": (add_cell_after(honest(), "faq2_test", KILL), 0.0),
        # "a_": graded first (gradacc-grade takes students in alphabetical order): its wait
        # is the class's longest, and the other jobs grade the rest meanwhile
        "a_hanger": (add_cell_after(honest(), "faq2_test", HANG), 0.0),
        "corrupt": (b'{"cells": [ this is not a notebook', 0.0),
        "userns": (add_cell_after(honest(), "setup", USERNS), AUTOGRADED),
        "shadow": (honest(), AUTOGRADED),  # and a torch.py beside the notebook
        "linker": (None, 0.0),  # the notebook is a link to the source (solutions and all)
        "leaker": (honest(), 0.0),  # and notes.txt, a link to an instructor-only file
        "piper": (honest(), 0.0),  # and a named pipe
    }


REFUSED = {
    "linker": "gradacc_faq.ipynb is a symbolic link",
    "leaker": "notes.txt is a symbolic link",
    "piper": "pipe is a named pipe",
}


def plant(course: Path, student: str, secret: Path) -> None:
    """What the notebook alone cannot hold: links, a named pipe, a module beside it."""
    folder = course / "submitted" / student / ASSIGNMENT
    if student == "linker":
        source = course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        (folder / f"{ASSIGNMENT}.ipynb").symlink_to(source)
    elif student == "leaker":
        (folder / "notes.txt").symlink_to(secret)
    elif student == "piper":
        os.mkfifo(folder / "pipe")
    elif student == "shadow":
        (folder / "torch.py").write_text(SHADOW)


def submit(course: Path, student: str, notebook) -> None:
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    path = folder / f"{ASSIGNMENT}.ipynb"
    if isinstance(notebook, bytes):
        path.write_bytes(notebook)
    elif notebook is not None:
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
def graded(tmp_path_factory, listener, built_faq):
    """The class, graded once with the documented command."""
    course = Path(shutil.copytree(built_faq, tmp_path_factory.mktemp("class") / "course"))
    secret = course.parent / "instructor-only.txt"
    secret.write_text(SECRET)
    secret.chmod(0o600)
    expected = {}
    for student, (notebook, points) in submissions(course, listener[0]).items():
        submit(course, student, notebook)
        plant(course, student, secret)
        expected[student] = points
    # The course's 30 s per cell and 15 s for a cell's last output fail honest notebooks on a
    # machine loaded ten times over (a shared 2-core test machine: the setup cell's torch import
    # alone took over 30 s); the hanger still ends in about 1.5 minutes, well before --timeout.
    with (course / "nbgrader_config.py").open("a", encoding="utf-8") as config:
        config.write("c.Execute.timeout = 60\nc.Execute.iopub_timeout = 60\n")
    before = {p.relative_to(course) for p in course.rglob("*")}
    # Three at a time on two cores: two of the first four students only wait (the hanger about
    # 95 s, the bomb's endless cell 60 s), and with two jobs the cores idled meanwhile.
    command = [*GRADE, "--jobs", "3", "--timeout", "180", "--course", str(course), ASSIGNMENT]
    done = subprocess.run(command, env=_env(), capture_output=True, text=True, timeout=2400)
    feedback = subprocess.run(
        [str(BIN / "nbgrader"), "generate_feedback", ASSIGNMENT],
        cwd=course,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=1200,
    )
    return {
        "course": course,
        "run": done,
        "expected": expected,
        "before": before,
        "feedback": feedback,
    }


def test_the_run_completes_and_prints_every_student(graded):
    done = graded["run"]
    # exit 1: some submissions failed (killer, a_hanger, corrupt) or were refused
    assert done.returncode == 1, done.stdout + done.stderr
    table = done.stdout.splitlines()
    for student in graded["expected"]:
        assert any(line.startswith(student + " ") for line in table), done.stdout
    failed = {line.split()[0] for line in table if "failed" in line}
    assert failed == {"killer", "a_hanger", "corrupt"}, done.stdout
    # the hanger's kernel, killed for ignoring the timeout's interrupt, is reported as dead
    # (its dropped connection once read as a message over the size limit)
    hanger = next(line for line in table if line.startswith("a_hanger "))
    assert "Kernel died" in hanger, hanger


def test_every_student_gets_exactly_what_they_earned(graded):
    got = {student: sum(cells.values()) for student, cells in scores(graded["course"]).items()}
    for student, points in graded["expected"].items():
        assert got.get(student, 0.0) == points, (student, got, graded["run"].stdout)


def test_honest_student_gets_full_marks_in_the_sandbox(graded):
    cells = scores(graded["course"])["honest"]
    assert set(cells) == {f"faq{k}_test" for k in range(1, 6)} | {f"{LOOP}_test"}
    assert sum(cells.values()) == AUTOGRADED, cells
    line = next(x for x in graded["run"].stdout.splitlines() if x.startswith("honest "))
    assert "graded" in line and "to do" in line, line  # the written answer awaits a hand


def _outputs(course: Path, student: str) -> str:
    """Everything the autograded notebook's code cells printed or raised, as text.

    A cell's outputs are joined as a reader sees them: one print can reach the notebook as
    two stream outputs ("FORKS" and " 53 BlockingIOError", from a kernel busy forking).
    """
    nb = nbformat.read(course / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    cells = []
    for cell in nb.cells:
        texts = []
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if output.output_type == "stream":
                texts.append(output.text)
            elif output.output_type == "error":
                texts.append(f"{output.ename}: {output.evalue}\n")
            else:
                texts.append(json.dumps(output.get("data", {})) + "\n")
        cells.append("".join(texts))
    return "\n".join(cells)


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
    assert {p.parts[0] for p in new} <= {"autograded", "feedback", ".nbgrader.log"}, sorted(
        map(str, new)
    )


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


def test_the_table_says_why_points_were_lost(graded):
    """The grader's own scoring, outside the sandbox, names each lost cell and why."""
    table = graded["run"].stdout

    def notes(student: str) -> str:  # the indented lines under the student's row
        lines = table.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith(student + " "))
        rest = []
        for line in lines[start + 1 :]:
            if not line.startswith(" "):
                break
            rest.append(line)
        return "\n".join(rest)

    assert f"{LOOP}_test: 0 / 3" in notes("patcher"), table
    assert "faq2_test: 0 / 1 (answer_faq2 is not set to a string)" in notes("blanker"), table
    assert "answer_faq1 reported 4 times" in notes("forger"), table
    assert re.search(r"answer_faq1 reported \d\d times", notes("hooker")), table
    assert "no reference in reach" in notes("framer"), table


def test_no_grade_cell_is_left_without_a_score(graded):
    """Issue 20, item 7: a copied answer cell left auto_score None, which certify refused."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{graded['course'] / 'gradebook.db'}") as gradebook:
        for submission in gradebook.assignment_submissions(ASSIGNMENT):
            for grade in submission.notebooks[0].grades:
                if grade.cell.cell_type == "code":
                    assert grade.auto_score is not None, (submission.student.id, grade.name)


def _key_texts(course: Path) -> dict[str, list[str]]:
    """What no student may see unless they earned it: every choice's explanation by question,
    the instructor's secret, the answer key's fields, the reference's code."""
    key = json.loads((course / "keys" / f"{ASSIGNMENT}.json").read_text(encoding="utf-8"))
    whys = {c["variable"]: list(c["why"].values()) for c in key["cells"] if c["kind"] == "choice"}
    secret = (course / "instructor.secret").read_text().strip()
    instructor = [secret, '"letter"', "def expected", "torch.cat([x for x, _ in window])"]
    return {"whys": [w for texts in whys.values() for w in texts], "instructor": instructor}


ATTACKERS = ("snoop", "patcher", "blanker", "hooker", "framer", "proc", "forger")


def _feedback_page(course: Path, student: str) -> str:
    path = course / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html"
    return html.unescape(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("student", ATTACKERS)
def test_nothing_of_the_key_reaches_an_attacker_nor_their_kernel(graded, student):
    """No explanation (none of them chose right and was not hedging), no key, no secret, no
    reference: not in what their kernel and harness printed or raised (the autograded
    notebook), not in the feedback they receive."""
    course = graded["course"]
    texts = _key_texts(course)
    printed = _outputs(course, student)
    page = _feedback_page(course, student)
    own = (course / "submitted" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text()
    for text in texts["whys"] + texts["instructor"]:
        if json.dumps(text)[1:-1] in own:  # the snoop's own code searches for '"letter"'
            continue
        assert text not in printed, (student, text)
        assert text not in page, (student, text)


def test_what_the_attacks_saw_holds_no_secret(graded):
    """Item 2: the hook saw every cell that ran after it, report cells included; item 3: the
    function found no reference; /proc and the sandbox's own scripts hold none either."""
    course = graded["course"]
    leaked = _outputs(course, "hooker")
    assert "LEAK" in leaked  # (what it printed in the test cells gave way to the grader's)
    dump = _outputs(course, "proc")
    assert "PROC" in dump and "/opt/gradacc/inside/window_loop.py" in dump, dump[:2000]
    assert "def cases" in dump and "def expected" not in dump
    assert "window_loop.py" in _feedback_page(course, "proc")  # the harness's error, as data
    assert "no reference in reach" in _feedback_page(course, "framer")


def test_a_deleted_written_answer_comes_back_without_the_model_answer(graded):
    course = graded["course"]
    path = course / "autograded" / "deleter" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    cells = _cells_by_id(nbformat.read(path, 4))
    assert "faq5_written" in cells and "faq2_test" in cells  # put back
    for text in ("Model answer", "Rubric"):
        assert text not in path.read_text() and text not in _feedback_page(course, "deleter")


def test_feedback_is_written_and_explains_only_after_the_deadline(graded):
    """The default setting: a wrong choice is marked wrong, its explanation waits."""
    assert graded["feedback"].returncode == 0, graded["feedback"].stderr[-3000:]
    page = _feedback_page(graded["course"], "framer")
    assert "explained once this assignment has a due date" in page  # none is set
    honest = _feedback_page(graded["course"], "honest")
    assert "Right (1 / 1)" in honest and "3 / 3 points" in honest


def test_grading_refuses_without_bwrap(faq, tmp_path):
    course = faq
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


def test_a_submission_holding_anything_but_regular_files_is_refused_with_the_reason(graded):
    table = graded["run"].stdout.splitlines()
    for student, reason in REFUSED.items():
        line = next(x for x in table if x.startswith(student + " "))
        assert f"refused: {reason}" in line, line
    assert not any((graded["course"] / "autograded" / s).exists() for s in REFUSED)


def test_no_instructor_file_reaches_a_student_visible_output(graded):
    course = graded["course"]
    for path in course.rglob("*"):
        if path.is_file() and not path.is_symlink() and "submitted" not in path.parts:
            assert SECRET not in path.read_text(errors="replace"), path
    linked = course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert "BEGIN HIDDEN TESTS" in linked.read_text()  # what the linker pointed at
    assert scores(course).get("linker", {}) == {}  # never graded, so never 8/8


def test_a_module_named_like_a_library_never_loads(graded):
    assert "SHADOW" not in _outputs(graded["course"], "shadow")
    assert sum(scores(graded["course"])["shadow"].values()) == AUTOGRADED


def test_student_code_cannot_create_user_namespaces(graded):
    report = re.search(r"USERNS (.*)", _outputs(graded["course"], "userns"))
    assert report and report.group(1) != "made", report


def test_links_and_pipes_survive_nbgrader_collect_and_are_refused(faq, tmp_path):
    """nbgrader's own collect copies what a link points to; ours keeps the link."""
    course = faq
    secret = tmp_path / "instructor-only.txt"
    secret.write_text(SECRET)
    secret.chmod(0o600)
    stamp = "2026-11-30 10:00:00.000000 UTC"
    inbound = tmp_path / "exchange" / "gradacc" / "inbound" / f"eve+{ASSIGNMENT}+{stamp}+1a2b"
    inbound.mkdir(parents=True)
    nbformat.write(honest_notebook(course), inbound / f"{ASSIGNMENT}.ipynb")
    (inbound / "timestamp.txt").write_text(stamp)
    (inbound / "notes.txt").symlink_to(secret)  # the student's folder in the exchange is theirs
    os.mkfifo(inbound / "pipe")
    exchange = f"--Exchange.root={tmp_path / 'exchange'}"
    collect = [str(BIN / "nbgrader"), "collect", ASSIGNMENT, exchange]
    done = subprocess.run(collect, cwd=course, env=_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    submitted = course / "submitted" / "eve" / ASSIGNMENT
    assert os.readlink(submitted / "notes.txt") == str(secret) and (submitted / "pipe").is_fifo()
    command = [*GRADE, "--course", str(course), "--student", "eve", ASSIGNMENT]
    done = subprocess.run(command, env=_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "refused: notes.txt is a symbolic link; pipe is a named pipe" in done.stdout
    readable = [p for p in course.rglob("*") if p.is_file() and not p.is_symlink()]
    assert not any(SECRET in p.read_text(errors="replace") for p in readable)


# A class of 30 by default, as the guide quotes; GRADACC_BENCH_CLASS=6 for a quick look.
CLASS = int(os.environ.get("GRADACC_BENCH_CLASS", "30"))


def _seconds(command: list[str], course: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=course, env=_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return time.perf_counter() - start


@pytest.mark.benchmark
@pytest.mark.timeout(7200)
def test_class_and_student_grading_times(faq):
    """Per student and for a class: seconds, and the ratios the targets name (make bench).

    Targets (issue 12), on 2 cores: a class with --jobs 2 in <= 0.6 x the time of --jobs 1;
    gradacc-grade --student <= 1.5 x plain `nbgrader autograde --student` (the same notebook,
    no sandbox, no re-check). One student is timed three times each way, in turns, and the
    medians compared: a shared machine's load changes from minute to minute.
    """
    course = faq
    for index in range(CLASS):
        submit(course, f"s{index:02d}", honest_notebook(course))
    grade = [str(BIN / "gradacc-grade"), "--course", str(course), ASSIGNMENT]
    plain = [str(BIN / "nbgrader"), "autograde", ASSIGNMENT, "--force"]
    plain.append("--Autograde.exporter_class=nbconvert.exporters.NotebookExporter")  # refused else
    pairs = [
        (
            _seconds([*plain, "--student=s00"], course),
            _seconds([*grade, "--student", "s00"], course),
        )
        for _ in range(3)
    ]
    one_plain, one = (statistics.median(times) for times in zip(*pairs))
    times = {
        "plain nbgrader, 1 student (median)": one_plain,
        "gradacc-grade, 1 student (median)": one,
        f"plain nbgrader, class of {CLASS}": _seconds(plain, course),
        f"gradacc-grade --jobs 1, class of {CLASS}": _seconds([*grade, "--jobs", "1"], course),
        f"gradacc-grade --jobs 2, class of {CLASS}": _seconds([*grade, "--jobs", "2"], course),
    }
    *_, class_plain, jobs1, jobs2 = times.values()
    print(f"\n{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    for name, seconds in times.items():
        each = seconds / (CLASS if "class" in name else 1)
        print(f"  {name:<40} {seconds:7.1f} s  ({each:.1f} s a student)")
    print(f"  1 student, sandboxed / plain:      {one / one_plain:.2f} (target <= 1.5)")
    print(f"  class, --jobs 2 / --jobs 1:        {jobs2 / jobs1:.2f} (target <= 0.6)")
    print(f"  class, --jobs 1 / plain:           {jobs1 / class_plain:.2f}")
    assert one / one_plain <= 1.5 and jobs2 / jobs1 <= 0.6
