"""gradacc-grade: autograde a class in a sandbox, then score outside it, where nothing is faked.

    gradacc-grade --course quizzes/course gradacc_faq [--jobs 2] [--student ID ...]
    gradacc-grade --course quizzes/course lesson1_full_batch lesson2_loss_scaling --jobs 2

Several assignments are graded one after the other, each with its table, in one run (one
sandbox self-test, and the grader's imports once). Each student is graded in a process and a
folder of their own (gradacc_grader.results), `--jobs` of them at a time:

0. A submission holding anything but regular files and folders (a link, a named pipe,
   a socket) is refused, each such entry named (gradacc_grader.submissions).
1. nbgrader runs the notebook; the student's kernel runs inside bubblewrap
   (gradacc_grader.sandbox): it sees only a scratch copy of the notebook, no course
   files, no network, with bounded CPU time, memory and processes. Its test cells hold
   nothing secret: they only report the answers' values.
2. The grader scores every autograded cell outside the kernel (gradacc_grader.trusted),
   from the answer key: the reported choices, and each exercise's function run again on
   fresh cases in a sandboxed harness. Those scores replace nbgrader's in the gradebook;
   its messages replace the test cells' outputs (what the feedback shows):
   gradacc_grader.gradebook_scores.
3. The student's scores and autograded/ folder are merged into the course.

A submission that hangs, kills its kernel or is corrupt fails alone: its autograded
scores are set to 0, the rest of the class is graded.

For a class spread over machines: `--results DIR` on each (for instance one
`--student` per job of a job array) grades into DIR without touching the course;
`--merge DIR` then merges them all. See quizzes/GRADING.md.

Past 400 lines on purpose: the command reads top to bottom, from the checks of its options to
the process each student is graded in and the table it prints.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import multiprocessing
import multiprocessing.connection
import os
import resource
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

from gradacc_grader.folders import remove_tree
from gradacc_grader.gradebook_scores import no_due_date_warning, record, sanitize
from gradacc_grader.names import unsafe_names
from gradacc_grader.plain_autograde import EXPORTER as PLAIN_EXPORTER
from gradacc_grader.private import make_course_private, make_private, private_umask
from gradacc_grader.results import Outcome, load, merge, prepare, save
from gradacc_grader.sandbox import (
    Limits,
    Sandbox,
    SandboxError,
    find_bwrap,
    start_harness,
    stop_harnesses,
)
from gradacc_grader.selftest import self_test
from gradacc_grader.submissions import old_formats
from gradacc_grader.terminal_text import one_line, scrub_log, visible
from gradacc_grader.untrusted_output import is_student_id

# address space of one student's grading process: it holds nbgrader and torch (about 0.8 GiB),
# the student's notebooks a few times over and the outputs its kernel sent (4 MiB a cell)
GRADER_MEMORY_MB = 3072


def main(argv: list[str] | None = None) -> int:
    """Grade as the command line asks: 0 when every submission was graded, 1 if any
    failed, 2 if refused."""
    args = _parser().parse_args(argv)
    with private_umask():  # the gradebook, autograded copies and results: yours only
        return _grade(args)


def main_then_exit_now() -> None:
    """The console script: main, then end the process without tearing down its modules.

    Everything is written, closed and flushed by then; unloading nbgrader's and torch's
    modules one by one took 2 to 4 s a run on two cores, a tenth of grading a student.
    """
    code = main()
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _grade(args) -> int:
    course = args.course.resolve()
    assignments = list(dict.fromkeys(args.assignment))  # each once, in the order given
    problem = _check_one_assignment(args, assignments)
    for assignment in assignments:
        problem = problem or _check_course(course, assignment)
        problem = problem or _check_students(course, assignment, args.student or [])
    if problem:
        print(f"gradacc-grade: {problem}", file=sys.stderr)
        return 2
    make_course_private(course)  # a course or results made before, under a looser umask
    for results in (args.results, args.merge):
        if results is not None:
            make_private(results)
    if args.merge:
        folders = sorted(p.parent for p in args.merge.glob("*/outcome.json"))
        if not folders:
            print(f"gradacc-grade: {args.merge} holds no results to merge", file=sys.stderr)
            return 2
        return _report([merge(course, assignments[0], folder) for folder in folders])
    sandbox = _sandbox(args, course)
    if sandbox is None:
        return 2
    _warn(course, assignments)
    classes = {
        assignment: args.student
        or sorted(p.parent.name for p in (course / "submitted").glob(f"*/{assignment}"))
        for assignment in assignments
    }
    _preload(torch_too=sum(map(len, classes.values())) > 1)
    return _grade_classes(args, course, classes, sandbox)


def _grade_classes(args, course: Path, classes: dict[str, list[str]], sandbox: Sandbox) -> int:
    """Grade each assignment's students and print its table; the worst exit code."""
    codes = []
    with tempfile.TemporaryDirectory(prefix="gradacc-grade-") as scratch:
        for assignment, students in classes.items():
            if len(classes) > 1:  # above its students' progress (stderr) and its table
                print(f"{assignment}:", flush=True)
            results = args.results.resolve() if args.results else Path(scratch) / assignment
            outcomes = grade_class(
                course,
                assignment,
                students,
                sandbox,
                args.jobs,
                args.timeout,
                results,
                merge_into_course=args.results is None,
                grader_memory_mb=args.grader_memory_mb,
            )
            codes.append(_report(outcomes))
    return max(codes)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gradacc-grade", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    add = parser.add_argument
    add("assignment", nargs="+", help="the assignment(s) to grade, e.g. gradacc_faq")
    add("--course", type=Path, required=True, help="the nbgrader course folder")
    add("--jobs", type=_positive, default=1, help="students graded at the same time (cores)")
    add("--student", action="append", help="grade only this student (repeat for more)")
    add("--results", type=Path, help="grade into this folder, not the course (merge later)")
    add("--merge", type=Path, help="merge the results folder of earlier --results runs")
    add("--timeout", type=float, default=600, help="seconds one student may take in all")
    add("--cpu-seconds", type=int, default=Limits.cpu_seconds, help="CPU seconds per kernel")
    add("--memory-mb", type=int, default=Limits.memory_bytes >> 20, help="address space, MiB")
    add(
        "--grader-memory-mb",
        type=_positive,
        default=GRADER_MEMORY_MB,
        help="address space of each student's grading process (nbgrader, the scoring), MiB",
    )
    add(
        "--unsafe-no-sandbox",
        action="store_true",
        help="grade WITHOUT the sandbox, with your own rights (only for code you trust)",
    )
    return parser


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def _check_one_assignment(args, assignments: list[str]) -> str | None:
    """Why the options cannot take several assignments (None if they can)."""
    if len(assignments) > 1 and (args.results or args.merge):
        return (
            f"--results and --merge take one assignment at a time (got {len(assignments)}: "
            f"{' '.join(assignments)}): nothing graded"
        )
    return None


def _check_course(course: Path, assignment: str) -> str | None:
    if not (course / "nbgrader_config.py").is_file():
        return f"{course} is not an nbgrader course: it has no nbgrader_config.py"
    if not (course / "source" / assignment).is_dir():
        return f"{course}/source/{assignment} does not exist: no such assignment"
    if not (course / "gradebook.db").is_file():
        return (
            f"{course}/gradebook.db does not exist: run `nbgrader generate_assignment "
            f"{assignment}` in {course} first"
        )
    return None


def _check_students(course: Path, assignment: str, students: list[str]) -> str | None:
    """Why a --student cannot be graded (None if all can): not an id, or no submission.

    `--student ""` once came from a batch script reading past the end of its list: it named
    the results folder itself, which was then emptied for that "student".
    """
    for student in students:
        # a folder name (a student id with markup is refused for that student alone, later)
        if not student.strip() or student in (".", "..") or "/" in student:
            return (
                f"--student {student!r} is not a student id (a folder name of submitted/): "
                "nothing graded"
            )
        if not (course / "submitted" / student / assignment).is_dir():
            return (
                f"{student} has no submission of {assignment} "
                f"({course}/submitted/{student}/{assignment}/ does not exist): nothing graded"
            )
    return None


def _sandbox(args, course: Path) -> Sandbox | None:
    """The sandbox to grade in, after its self-test; None (and why, printed) if refused."""
    limits = Limits(cpu_seconds=args.cpu_seconds, memory_bytes=args.memory_mb << 20)
    exchange = exchange_root(course)  # every student's submissions: never in a sandbox
    hidden = (course, exchange)
    sandbox = Sandbox(hidden=hidden, limits=limits, unsafe=args.unsafe_no_sandbox)
    if sandbox.unsafe:
        print(
            "gradacc-grade: WARNING: --unsafe-no-sandbox: student code runs with YOUR rights "
            "and can read the solutions and rewrite the gradebook.",
            file=sys.stderr,
        )
        return sandbox
    try:
        find_bwrap()
        self_test(sandbox, exchange)
    except SandboxError as error:
        print(f"gradacc-grade: refusing to grade without a sandbox: {error}", file=sys.stderr)
        return None
    return sandbox


def exchange_root(course: Path) -> Path:
    """nbgrader's exchange folder as the course's nbgrader_config.py sets it (or nbgrader's)."""
    from nbgrader.exchange.default.exchange import Exchange
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    root = config.Exchange.root if "root" in config.Exchange else Exchange.root.default_value
    return Path(root).resolve()


def _warn(course: Path, assignments: list[str]) -> None:
    """Print what the instructor should fix, though grading goes on: a missing due date, a
    student's name with markup or control characters already in the gradebook."""
    warnings = [no_due_date_warning(course, assignment) for assignment in assignments]
    for line in unsafe_names(course / "gradebook.db"):
        warnings.append(f"{line} (fix it: nbgrader db student add <id> --first-name ...)")
    for warning in filter(None, warnings):
        print(f"gradacc-grade: warning: {warning}", file=sys.stderr)


def _preload(torch_too: bool) -> None:
    """Import what every student's grading needs once, before the students' processes fork.

    torch only for a class: one student's process imports it while its kernel runs
    (_import_torch_meanwhile), which takes it off the time the instructor waits.
    """
    import nbgrader.apps  # noqa: F401  (autograde and the kernel client)

    import gradacc_grader.trusted  # noqa: F401

    if torch_too:
        _import_torch()


def _import_torch() -> None:
    # torch for the re-check's references, with torch._dynamo, which a torch optimizer
    # imports on first use (1.3 s a student otherwise).
    import torch._dynamo  # noqa: F401


def _import_torch_meanwhile() -> threading.Thread | None:
    """Import torch in a thread of this process unless it is imported; the thread, or None."""
    if "torch._dynamo" in sys.modules:
        return None
    thread = threading.Thread(target=_import_torch, name="import-torch", daemon=True)
    thread.start()
    return thread


def _report(outcomes: list[Outcome]) -> int:
    print(score_table(outcomes))
    return 0 if all(o.ok for o in outcomes) else 1


def grade_class(
    course: Path,
    assignment: str,
    students: list[str],
    sandbox: Sandbox,
    jobs: int,
    timeout: float,
    results: Path,
    merge_into_course: bool = True,
    grader_memory_mb: int = 0,
) -> list[Outcome]:
    """Grade each student in a process of their own, `jobs` at a time; their outcomes.

    Each result is merged into the course as soon as it is there (unless
    merge_into_course is False: then it stays in `results/<student>/`). Each student's
    process may use `grader_memory_mb` of address space (0: GRADER_MEMORY_MB).
    """
    memory = (grader_memory_mb or GRADER_MEMORY_MB) << 20
    waiting, running, outcomes = list(students), {}, []
    while waiting or running:
        while waiting and len(running) < jobs:
            student = waiting.pop(0)
            if not is_student_id(student):  # never a folder, a gradebook row or an option
                outcomes.append(_refuse_name(student))
                continue
            folder = results / student
            try:
                refused = prepare(course, assignment, folder.name, folder)
            except Exception as error:  # a bug of ours, a full disk: this student alone fails
                outcomes.append(_failed(student, "preparing", error))
                continue
            if refused:
                save(folder, record(folder, assignment, folder.name, refused, course))
                outcomes.append(_conclude(course, assignment, folder, merge_into_course))
            else:
                # A core no other student waits for: the re-check's harness starts with the
                # kernel and imports torch meanwhile (one student, or the last ones).
                spare = not waiting and len(running) + 1 < (os.cpu_count() or 1)
                end = time.monotonic() + timeout
                graded = replace(sandbox, deadline=end)
                process = _start(course, assignment, graded, folder, spare, memory)
                running[process.sentinel] = (process, folder, end)
        for key in _ended(running):
            process, folder, _ = running.pop(key)
            try:
                _finish(process, course, assignment, folder, timeout)
                outcomes.append(_conclude(course, assignment, folder, merge_into_course))
            except Exception as error:  # this student alone: the class is graded to the end
                outcomes.append(_failed(folder.name, "recording", error))
    return sorted(outcomes, key=lambda outcome: outcome.student)


def _refuse_name(student: str) -> Outcome:
    """The outcome of a submission whose folder name is not a student id (nothing else read)."""
    status = (
        "refused: the folder name is not a student id (letters of one script, digits, "
        ". _ - @; not first '-' or '.'): rename the folder to the student's id"
    )
    print(f"  {visible(student)}: {status}", file=sys.stderr, flush=True)
    return Outcome(student, status)


def _failed(student: str, step: str, error: Exception) -> Outcome:
    status = f"failed: the grader's {step} failed: {type(error).__name__}: {error}"
    print(f"  {visible(student)}: {one_line(status)}", file=sys.stderr, flush=True)
    return Outcome(student, status)


def _ended(running: dict) -> list:
    """Wait until a grading process ends or runs out of time; the keys of those."""
    if not running:
        return []
    deadline = min(end for _, _, end in running.values())
    ready = multiprocessing.connection.wait(list(running), max(0.0, deadline - time.monotonic()))
    now = time.monotonic()
    return [key for key, (_, _, end) in running.items() if key in ready or now >= end]


def _start(course: Path, assignment: str, sandbox: Sandbox, folder: Path, spare: bool, memory):
    """Start grading the student's folder in a forked process.

    Forked, not spawned: the child has nbgrader and torch imported already (main
    imported them), which saves seconds per student.
    """
    context = multiprocessing.get_context("fork")
    args = (course, assignment, sandbox, folder, spare, memory)
    process = context.Process(target=_grade_here, args=args, name=f"grade-{folder.name}")
    process.start()
    return process


def _finish(process, course: Path, assignment: str, folder: Path, timeout: float) -> None:
    """Make sure the student's outcome is saved: if the process hung or died, zeros and why."""
    hung = process.is_alive()
    if hung:
        process.kill()  # its kernel and re-check die with it (bwrap --die-with-parent)
    process.join()
    scrub_log(folder / "grading.log")  # the kernel's chatter: no escape sequences for a terminal
    if (folder / "outcome.json").is_file():
        return
    sanitize(folder, assignment)  # the child ended before it did
    if hung:
        status = f"failed: took more than {timeout:.0f} s"
    else:  # a bug of the grader's: its traceback ends the student's log
        log = folder / "grading.log"
        last = log.read_text(errors="replace").strip().splitlines()[-1:] if log.exists() else []
        status = f"failed: grading ended with exit code {process.exitcode}: {last}"
        if process.exitcode < 0 or "MemoryError" in str(last) or "OUT OF MEMORY" in str(last):
            status += " (past its memory limit, --grader-memory-mb, or killed)"
    save(folder, record(folder, assignment, folder.name, status, course))


def _conclude(course: Path, assignment: str, folder: Path, merge_into_course: bool) -> Outcome:
    outcome = merge(course, assignment, folder) if merge_into_course else load(folder)
    print(f"  {visible(outcome.student)}: {one_line(outcome.status)}", file=sys.stderr, flush=True)
    return outcome


def _grade_here(
    course: Path, assignment: str, sandbox: Sandbox, folder: Path, spare: bool, memory: int
):
    """In the child: autograde the student's folder, score outside the sandbox, save."""
    limit_memory(memory)
    log = os.open(folder / "grading.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log, 1)  # the kernel's and nbgrader's chatter goes to the student's log
    os.dup2(log, 2)
    # The harness's sandbox hides the student's folder too (it holds the test cells); its
    # deadline is the student's, when the parent kills this process.
    sandbox = replace(sandbox, hidden=(*sandbox.hidden, folder), ready=[])
    if spare:
        start_harness(sandbox)
    # The kernels' folders (with their Unix sockets) under a short path: a socket's path
    # holds at most 107 bytes, and a --results folder can be deep.
    kernels = Path(tempfile.mkdtemp(prefix="gradacc-kernels-"))
    kernels.chmod(0o711)  # the sandbox's user may pass through, not list
    importing = _import_torch_meanwhile()  # the kernel's client mostly waits: a core is free
    try:
        submitted = folder / "submitted" / folder.name / assignment
        old = old_formats(submitted)  # before nbgrader reads (and upgrades) them
        status = (
            f"refused: {'; '.join(old)}"
            if old
            else _autograde(folder, assignment, sandbox, kernels)
        )
    finally:
        with contextlib.suppress(OSError):  # the kernel may have nested folders in it, deep
            remove_tree(kernels)
    if importing is not None:
        importing.join()
    outcome = record(folder, assignment, folder.name, status, course, sandbox)
    stop_harnesses(sandbox)
    save(folder, outcome)


def limit_memory(most: int) -> None:
    """Bound this process's address space (soft limit): past it, MemoryError, or the process dies.

    The grading process reads what the student handed in and what their kernel sent; its
    worst case costs that student a zero with the reason, never the machine. Only the soft
    limit: the sandboxes it starts set their own (jail.py).
    """
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (most if hard < 0 else min(most, hard), hard))


def _autograde(folder: Path, assignment: str, sandbox: Sandbox, kernels: Path) -> str:
    """Run nbgrader's autograde in this process on the student's folder; "graded" or why not."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    config = PyFileConfigLoader("nbgrader_config.py", path=str(folder)).load_config()
    config.CourseDirectory.root = str(folder)
    # the course refuses nbgrader's plain autograde; this one is sandboxed and scored outside
    config.Autograde.exporter_class = PLAIN_EXPORTER
    if not sandbox.unsafe:
        config.Execute.kernel_manager_class = "gradacc_grader.kernel.SandboxKernelManager"
        manager = config.SandboxKernelManager
        manager.course_root, manager.hidden = str(folder), [str(p) for p in sandbox.hidden]
        manager.scratch_root = str(kernels)
        manager.cpu_seconds = sandbox.limits.cpu_seconds
        manager.memory_bytes = sandbox.limits.memory_bytes
    api = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)
    result = api.autograde(assignment, folder.name, force=True, create=True)
    return "graded" if result["success"] else f"failed: {_reason(result.get('log') or '')}"


def _reason(log: str) -> str:
    """The most telling line of a failed nbgrader log."""
    for key in ("DeadKernelError", "CellTimeoutError", "Kernel died", "timed out", "Error"):
        for line in reversed(log.splitlines()):
            if key in line:
                return line.strip()[-160:]
    return (log.strip().splitlines() or ["nbgrader failed"])[-1][-160:]


def score_table(outcomes: list[Outcome]) -> str:
    """The class's scores as a plain-text table, one row per student, each score as the
    gradebook holds it (never rounded to fewer digits).

    >>> print(score_table([Outcome("ada", "graded", 4.25, 12.0, True)]))
    student  score    max  manual  status
    ada       4.25     12  to do   graded
    """
    width = max([len("student"), *(len(visible(o.student)) for o in outcomes)])
    lines = [f"{'student':<{width}}  score    max  manual  status"]
    for o in outcomes:  # a student's text cannot move the cursor or add a row
        manual = "to do" if o.needs_manual_grade else "done"
        student, status = visible(o.student), one_line(o.status)
        lines.append(f"{student:<{width}}  {o.score:5g}  {o.max_score:5g}  {manual:<6}  {status}")
        lines += [f"{'':<{width}}    {one_line(note)}" for note in o.notes]
    return "\n".join(lines)


if __name__ == "__main__":
    main_then_exit_now()
