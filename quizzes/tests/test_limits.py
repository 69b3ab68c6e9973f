"""No student can stop, slow or erase another: hostile submissions against the limits.

One class is graded once (module fixture) with the guide's commands (`gradacc-build` with
the tests' secret, `gradacc-grade --jobs 2`), while this test samples the memory of the
grading processes: a student per way of stopping or slowing the class (each otherwise
honest, so that those graded to the end show the points they earned): 1,100 nested folders,
a notebook of 100,000 cells, a notebook over the size limit, 1 GiB printed at once, 3 MiB
printed slowly, /dev/shm filled, thousands of folders nested in the kernel's own folder,
files written to fill the grader's disk; and a patient student whose cells sleep, as honest
experiments do, longer than the CPU limit in all. Each is graded to the end or refused with
its reason, for that student alone; the others get what they earned. A separate test shows
`nbgrader collect` refusing an exchange folder made by another user.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import nbformat
import psutil
import pytest
from gradacc_grader.folders import remove_tree
from gradacc_grader.kernel import OutputLimits
from gradacc_grader.sandbox import Limits
from gradacc_grader.submissions import SubmissionLimits

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]

BIN = Path(sys.executable).parent
ASSIGNMENT = "gradacc_faq"
AUTOGRADED = 8.0  # five questions of 1 point and the loop exercise of 3
FLOOD_MIB = 1024
# 20 s of CPU per kernel: more than five times what an honest notebook of this class takes (this
# class passed with 4 s on the 2026 test machine), and less than the patient student's sleeps
# below add up to.
GRADE = [str(BIN / "gradacc-grade"), "--cpu-seconds", "20", "--memory-mb", "2048"]

FLOOD = f"""
import sys
chunk = "x" * (64 << 20)
for _ in range({FLOOD_MIB} // 64):  # each print a message of 64 MiB
    print(chunk)
    sys.stdout.flush()
"""
SHM = """
import json, os
found = {}
for folder in ["/dev/shm", "/dev", "/tmp"]:
    written = 0
    try:
        for index in range(8):
            with open(f"{folder}/fill{index}", "wb") as out:
                for _ in range(64):
                    out.write(bytes(1 << 20))
                    out.flush()
                    written += 1
    except OSError as error:
        found[folder] = [written, error.strerror]
    for index in range(8):
        if os.path.exists(f"{folder}/fill{index}"):
            os.unlink(f"{folder}/fill{index}")
print("FILLED", json.dumps(found))
"""
NEST = """
import os
for folder in (".", "/tmp"):
    fd = os.open(folder, os.O_RDONLY)
    for _ in range(3000):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)
print("NESTED")
"""
CHATTY = """
import sys, time
for _ in range(12):  # 3 MiB, a quarter MiB at a time: each piece a message of its own
    print("y" * (1 << 18))
    sys.stdout.flush()
    time.sleep(0.3)
"""
# After conftest's disk-filling cell (`fill_disk`), before the loop's answer, in its cell:
# the answer is defined only when the total was bounded, so the re-check (its harness runs the
# cell again) scores the loop only if the harness's folder is bounded too.
DISK_REPORT = """
print("DISK", json.dumps(found))
assert found["work"][0] <= BOUND, "the working folder is not bounded"
""".replace("BOUND", str(Limits.tmpfs_bytes >> 20))
# Experiments of 8 s each, every one within the class's limit per cell (120 s): 24 s in all,
# more than the --cpu-seconds (20) that once bounded the re-check's harness in time.
PATIENT = "import time\ntime.sleep(8)  # a try by hand"


def _env() -> dict:
    return dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}")


def _cli(command: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run(command, cwd=cwd, env=_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
def built(tmp_path_factory, course_with_secret) -> Path:
    """A course with gradacc_faq built by gradacc-build with the tests' secret."""
    course = course_with_secret(tmp_path_factory.mktemp("limits") / "course")
    _cli([str(BIN / "gradacc-build"), "--course", str(course), "--assignment", ASSIGNMENT])
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


def with_loop_prefix(nb, text: str):
    """The notebook with `text` first in the loop's answer cell."""
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "faq3_loop_answer":
            cell.source = text + "\n" + cell.source
    return nb


def nest(folder: Path, depth: int) -> None:
    """`depth` folders, one inside the other, in `folder` (no path grows long)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)


def submit(course: Path, student: str, notebook) -> Path:
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    path = folder / f"{ASSIGNMENT}.ipynb"
    if isinstance(notebook, str):
        path.write_text(notebook, encoding="utf-8")
    else:
        nbformat.write(notebook, path)
    return folder


def class_of(course: Path, fill_disk: str) -> dict:
    """Student -> (autograded points earned, the start of their status in the table)."""
    honest = lambda: honest_notebook(course)  # noqa: E731
    many = honest()
    many.cells += [nbformat.v4.new_markdown_cell("") for _ in range(100_000)]
    for cell in many.cells[-100_000:]:
        del cell["id"]  # as short as a cell gets: 100,000 of them in about 5 MiB
    many = json.dumps(many, separators=(",", ":"))
    big = with_cell(honest(), "# " + "padding " * (SubmissionLimits.notebook_bytes // 8))
    return {
        "deep": (honest(), 0.0, "refused: its folders are nested more than 8 deep"),
        "many_cells": (many, 0.0, f"refused: {ASSIGNMENT}.ipynb has 100"),
        "big": (big, 0.0, f"refused: {ASSIGNMENT}.ipynb is larger than 8 MiB"),
        "flooder": (with_cell(honest(), FLOOD), 0.0, "failed: "),
        "chatty": (with_cell(honest(), CHATTY), AUTOGRADED, "graded"),
        "shm_filler": (with_cell(honest(), SHM), AUTOGRADED, "graded"),
        "nester": (with_cell(honest(), NEST), AUTOGRADED, "graded"),
        "disk_filler": (with_loop_prefix(honest(), fill_disk + DISK_REPORT), AUTOGRADED, "graded"),
        # "a_": graded first (gradacc-grade takes students in alphabetical order): its sleeps
        # are the class's longest wait (twice 24 s: the kernel, then the harness's re-run),
        # and the other job slot grades the rest meanwhile
        "a_patient": (
            with_cell(with_cell(with_cell(honest(), PATIENT), PATIENT), PATIENT),
            AUTOGRADED,
            "graded",
        ),
    }


def _grading_memory(process: subprocess.Popen, peaks: dict, stop: threading.Event) -> None:
    """Sample the unshared memory (USS) of each student's grading process.

    Those are forked from gradacc-grade (which prepares and merges; no output reaches
    it) and run nbgrader, whose kernel client takes in the output; the sandboxed kernels
    are left out. USS counts the pages a process does not share with its parent.
    """
    top = psutil.Process(process.pid)
    name = top.name()
    while not stop.wait(0.2):
        try:
            children = top.children(recursive=True)
        except psutil.NoSuchProcess:  # the class is graded
            return
        for child in children:
            # a child may end between the listing and the reading (sandboxes come and go all
            # the time): skip it, and go on sampling the others
            try:
                if child.name() == name:
                    peaks[child.pid] = max(peaks.get(child.pid, 0), child.memory_full_info().uss)
            except psutil.Error:
                continue


@pytest.fixture(scope="module")
def graded(tmp_path_factory, built, fill_disk):
    """The class, graded once with the documented command, its memory sampled meanwhile."""
    course = Path(shutil.copytree(built, tmp_path_factory.mktemp("class") / "course"))
    # A test machine shared by many runs can take longer than the course's 15 s between a
    # cell's reply and its last output, which fails an honest notebook (plain nbgrader too):
    # more time here, as the course's config allows (lines after configure(c)).
    with open(course / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write("c.Execute.iopub_timeout = 120\nc.Execute.timeout = 120\n")
    students = class_of(course, fill_disk)
    for student, (notebook, _, _) in students.items():
        folder = submit(course, student, notebook)
        if student == "deep":
            nest(folder, 1100)
    command = [*GRADE, "--jobs", "2", "--timeout", "900", "--course", str(course), ASSIGNMENT]
    process = subprocess.Popen(command, env=_env(), stdout=subprocess.PIPE, text=True)
    peaks: dict[int, int] = {}
    stop = threading.Event()
    watcher = threading.Thread(target=_grading_memory, args=(process, peaks, stop))
    watcher.start()
    try:
        stdout, _ = process.communicate(timeout=2400)
    finally:
        stop.set()
        watcher.join()
    yield {
        "course": course,
        "stdout": stdout,
        "code": process.returncode,
        "peaks": peaks,
        "students": students,
    }
    remove_tree(course / "submitted" / "deep")  # pytest's own clean-up would recurse


def _grades(course: Path) -> dict[str, list]:
    """Student -> (name, auto_score, needs_manual_grade) of each autograded test, raw."""
    from nbgrader.api import Gradebook

    result = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for submission in gradebook.assignment_submissions(ASSIGNMENT):
            grades = submission.notebooks[0].grades
            result[submission.student.id] = [
                (g.name, g.auto_score, g.needs_manual_grade)
                for g in grades
                if g.name.endswith("_test")
            ]
    return result


def test_every_student_is_graded_or_refused_with_the_reason(graded):
    table = graded["stdout"].splitlines()
    assert graded["code"] == 1, graded["stdout"]  # some failed or were refused
    for student, (_, _, status) in graded["students"].items():
        line = next((x for x in table if x.startswith(student + " ")), "")
        assert status in line, (student, graded["stdout"])


def test_each_student_gets_exactly_what_they_earned(graded):
    got = {s: sum(g[1] or 0.0 for g in grades) for s, grades in _grades(graded["course"]).items()}
    for student, (_, points, _) in graded["students"].items():
        assert got.get(student, 0.0) == points, (student, got, graded["stdout"])
    refused = [s for s, (_, _, status) in graded["students"].items() if "refused" in status]
    assert not any(s in got for s in refused)  # nbgrader never saw them
    assert not any((graded["course"] / "autograded" / s).exists() for s in refused)


def test_a_student_whose_grading_failed_gets_zeros_never_none(graded):
    # the flooder's grading fails (tests/test_grading.py's class has a kernel that kills itself)
    tests = _grades(graded["course"])["flooder"]
    assert tests and all(score == 0.0 and not manual for _, score, manual in tests), tests
    for student, grades in _grades(graded["course"]).items():
        assert all(score is not None for _, score, _ in grades), (student, grades)


def test_output_past_a_cells_limit_is_cut_with_a_note(graded):
    course = graded["course"]
    notebook = course / "autograded" / "chatty" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    text = notebook.read_text(encoding="utf-8")
    assert "[output cut: this cell sent more than 1 MiB of output]" in text
    assert notebook.stat().st_size < 2 * OutputLimits.cell_bytes  # 3 MiB printed


def test_a_flood_fails_that_student_alone_and_the_grader_stays_small(graded):
    line = next(x for x in graded["stdout"].splitlines() if x.startswith("flooder "))
    # the grader refuses the first 64 MiB message; or the kernel dies first (its zmq or its
    # address space): either way that student fails, with the reason, and no one else
    refused = "OutputRefusedError: the kernel sent a message of more than 4 MiB"
    assert refused in line or "Kernel died" in line, line
    notebook = graded["course"] / "autograded" / "flooder" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert not notebook.exists() or notebook.stat().st_size < OutputLimits.notebook_bytes
    # no student's grading process held the flood (1 GiB; 300 MiB once took one to 2.1 GiB)
    peaks = {pid: uss >> 20 for pid, uss in graded["peaks"].items()}
    assert len(peaks) >= 6 and max(peaks.values()) < FLOOD_MIB // 4, peaks


def _outputs(course: Path, student: str) -> str:
    nb = nbformat.read(course / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    # a cell's streams joined as a reader sees them: one print can come as two stream outputs
    return "\n".join(
        "".join(o.get("text", "") for o in c.get("outputs", []))
        for c in nb.cells
        if c.cell_type == "code"
    )


def test_dev_shm_and_the_in_memory_folders_are_bounded(graded):
    report = re.search(r"FILLED (.*)", _outputs(graded["course"], "shm_filler"))
    assert report, _outputs(graded["course"], "shm_filler")[:2000]
    found = json.loads(report.group(1))
    assert found["/dev/shm"] == [Limits.shm_bytes >> 20, "No space left on device"], found
    assert found["/dev"] == [0, "Read-only file system"], found
    assert found["/tmp"] == [Limits.tmpfs_bytes >> 20, "No space left on device"], found


def test_no_student_can_fill_the_graders_disk(graded):
    """The kernel's working folder is its home's tmpfs; its sockets' folder takes no file.

    (The harness's bound shows in the score: the loop is defined only if it was bounded.)
    """
    report = re.search(r"DISK (.*)", _outputs(graded["course"], "disk_filler"))
    assert report, _outputs(graded["course"], "disk_filler")[:2000]
    found = json.loads(report.group(1))
    assert found["work"][0] <= Limits.tmpfs_bytes >> 20, found
    assert found["work"][1] == "No space left on device", found
    assert found["sockets"] == [0, "No such file or directory"], found


def test_folders_nested_in_the_kernels_folder_do_not_stop_its_grading(graded):
    assert "NESTED" in _outputs(graded["course"], "nester")
    assert _grades(graded["course"])["nester"]  # graded to the end (points: the test above)
    # and its kernel's folder removed, 3,000 folders deep (shutil.rmtree would recurse)
    assert not list(Path(tempfile.gettempdir()).glob("gradacc-kernels-*/kernel-*/work/d"))


def test_collect_refuses_a_folder_made_by_another_user_and_keeps_the_submission(built, tmp_path):
    """mallory makes inbound/bob+...: nbgrader's own collect replaced bob's submission."""
    assert os.geteuid() == 0, "this test makes a folder owned by another user: run it as root"
    course = Path(shutil.copytree(built, tmp_path / "course"))
    inbound = tmp_path / "exchange" / "gradacc" / "inbound"
    own = inbound / f"bob+{ASSIGNMENT}+2026-11-30 10:00:00.000000 UTC+1a2b"
    own.mkdir(parents=True)
    nbformat.write(honest_notebook(course), own / f"{ASSIGNMENT}.ipynb")
    (own / "timestamp.txt").write_text("2026-11-30 10:00:00.000000 UTC")
    collect = [str(BIN / "nbgrader"), "collect", ASSIGNMENT]
    collect.append(f"--Exchange.root={tmp_path / 'exchange'}")
    _cli(collect, cwd=course)  # the instructor's own folder: taken
    submitted = course / "submitted" / "bob" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    before = submitted.read_bytes()
    forged = inbound / f"bob+{ASSIGNMENT}+2026-11-30 11:00:00.000000 UTC+9f9f"
    forged.mkdir()
    (forged / f"{ASSIGNMENT}.ipynb").write_text('{"cells": []}')
    (forged / "timestamp.txt").write_text("2026-11-30 11:00:00.000000 UTC")
    for path in (forged, *forged.iterdir()):
        os.chown(path, 4242, 4242)  # made by another user (mallory)
    done = _cli([*collect, "--update"], cwd=course)
    assert "refused" in done.stderr and "not by bob" in done.stderr, done.stderr
    assert submitted.read_bytes() == before  # bob's submission is still bob's
