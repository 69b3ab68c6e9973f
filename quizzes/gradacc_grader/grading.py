"""gradacc-grade: autograde a class in a sandbox, then re-check what student code could fake.

    gradacc-grade --course quizzes gradacc_faq

For each `submitted/<student>/<assignment>`, in turn:

1. `nbgrader autograde` runs in its own process (killed after --timeout seconds);
   the student's kernel runs inside bubblewrap (gradacc_grader.sandbox): it sees
   only a scratch copy of that student's submission, no course files, no network,
   with bounded CPU time, memory and processes.
2. The grader re-checks the autograded answers outside the kernel
   (gradacc_grader.trusted) and keeps, per grade cell, the lower of nbgrader's
   score and its own.

A submission that hangs, kills its kernel or is corrupt fails alone: its autograded
scores are set to 0, the rest of the class is graded. See quizzes/GRADING.md.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from gradacc_grader.sandbox import Limits, SandboxError, find_bwrap, self_test

MAX_NOTEBOOK_BYTES = 20_000_000


@dataclass
class Outcome:
    """What happened to one student's submission."""

    student: str
    status: str  # "graded" or why it failed
    score: float = 0.0
    max_score: float = 0.0
    needs_manual_grade: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "graded"


def main(argv: list[str] | None = None) -> int:
    """The console script; returns 0 when every submission was graded, 1 if any failed."""
    args = _parser().parse_args(argv)
    course = args.course.resolve()
    limits = Limits(cpu_seconds=args.cpu_seconds, memory_bytes=args.memory_mb << 20)
    problem = _check_course(course, args.assignment)
    if problem:
        print(f"gradacc-grade: {problem}", file=sys.stderr)
        return 2
    if args.unsafe_no_sandbox:
        print(
            "gradacc-grade: WARNING: --unsafe-no-sandbox: student code runs with YOUR rights "
            "and can read the solutions and rewrite the gradebook.",
            file=sys.stderr,
        )
    else:
        try:
            find_bwrap()
            self_test(hidden=course, limits=limits)
        except SandboxError as error:
            print(f"gradacc-grade: refusing to grade without a sandbox: {error}", file=sys.stderr)
            return 2
    students = sorted(p.parent.name for p in (course / "submitted").glob(f"*/{args.assignment}"))
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="gradacc-grade-") as scratch:
        for student in students:
            outcome = grade_student(course, args.assignment, student, args, limits, Path(scratch))
            print(f"  {student}: {outcome.status}", file=sys.stderr, flush=True)
            outcomes.append(outcome)
    print(score_table(outcomes))
    return 0 if all(o.ok for o in outcomes) else 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gradacc-grade", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("assignment", help="the assignment to grade, e.g. gradacc_faq")
    parser.add_argument("--course", type=Path, required=True, help="the nbgrader course folder")
    parser.add_argument(
        "--timeout", type=float, default=600, help="seconds one student may take in all"
    )
    parser.add_argument(
        "--cpu-seconds", type=int, default=Limits.cpu_seconds, help="CPU seconds per kernel"
    )
    parser.add_argument(
        "--memory-mb", type=int, default=Limits.memory_bytes >> 20, help="address space, MiB"
    )
    parser.add_argument(
        "--unsafe-no-sandbox",
        action="store_true",
        help="grade WITHOUT the sandbox, with your own rights (only for code you trust)",
    )
    return parser


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


def grade_student(
    course: Path, assignment: str, student: str, args, limits: Limits, scratch: Path
) -> Outcome:
    """Autograde one submission in its own process, then apply the trusted re-checks."""
    if (course / "submitted" / student / assignment).is_symlink():
        status = "refused: the submission folder is a symbolic link"
    else:
        status = _run_autograde(course, assignment, student, args, limits, scratch)
    from gradacc_grader.trusted import checks_for

    checks = checks_for(assignment, limits, sandbox=not args.unsafe_no_sandbox)
    return _record(course, assignment, student, status, checks)


def _run_autograde(course, assignment, student, args, limits, scratch) -> str:
    command = [sys.executable, "-m", "nbgrader", "autograde", assignment, "--force"]
    command += [f"--student={glob.escape(student)}", f"--CourseDirectory.root={course}"]
    if not args.unsafe_no_sandbox:
        command += [
            "--Execute.kernel_manager_class=gradacc_grader.sandbox.SandboxKernelManager",
            f"--SandboxKernelManager.course_root={course}",
            f"--SandboxKernelManager.scratch_root={scratch}",
            f"--SandboxKernelManager.cpu_seconds={limits.cpu_seconds}",
            f"--SandboxKernelManager.memory_bytes={limits.memory_bytes}",
        ]
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    # The log goes to a file, not a pipe: a kernel that outlives nbgrader cannot block us.
    with tempfile.TemporaryFile("w+") as log:
        process = subprocess.Popen(
            command,
            cwd=course,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its own process group, killed as a whole
        )
        try:
            process.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            return f"failed: took more than {args.timeout:.0f} s"
        finally:
            if process.poll() is None:
                # the sandboxed kernel dies with nbgrader (bwrap --die-with-parent)
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        log.seek(0)
        text = log.read()
    if process.returncode != 0:  # nbgrader exits 1 when it could not grade the submission
        return f"failed: {_reason(text)}"
    return "graded"


def _reason(log: str) -> str:
    """The most telling line of a failed nbgrader log."""
    for key in ("DeadKernelError", "CellTimeoutError", "Kernel died", "timed out", "Error"):
        for line in reversed(log.splitlines()):
            if key in line:
                return line.strip()[-160:]
    return (log.strip().splitlines() or ["nbgrader failed"])[-1][-160:]


def _record(course: Path, assignment: str, student: str, status: str, checks) -> Outcome:
    """Apply the trusted checks (or zeros after a failure) to the gradebook; read the totals."""
    from nbgrader.api import Gradebook, MissingEntry

    outcome = Outcome(student, status)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        try:
            submission = gradebook.find_submission(assignment, student)
        except MissingEntry:
            if outcome.ok:
                outcome.status = "failed: nbgrader recorded no submission"
            return outcome
        for notebook in submission.notebooks:
            # nbgrader's autograded copy holds the cells as they ran: locked and test cells
            # put back from the source, the student's own cells as submitted.
            path = course / "autograded" / student / assignment / f"{notebook.name}.ipynb"
            cells, sources = _read_cells(path)
            for grade in notebook.grades:
                if grade.cell.cell_type != "code" or grade.auto_score is None:
                    continue
                check = next((c for c in checks if c.grade_id == grade.name), None)
                if not outcome.ok:
                    trusted, why = 0.0, "submission failed"
                elif check is None or grade.auto_score == 0:
                    continue  # nothing to re-check, or nothing a re-check could take back
                else:
                    passed, why = check.run(cells, sources)
                    trusted = grade.max_score if passed else 0.0
                if grade.auto_score > trusted:
                    outcome.notes.append(
                        f"{grade.name}: {grade.auto_score:g} -> {trusted:g} ({why})"
                    )
                    grade.auto_score = trusted
        gradebook.db.commit()
        submission = gradebook.find_submission(assignment, student)
        outcome.score, outcome.max_score = submission.score, submission.max_score
        outcome.needs_manual_grade = submission.needs_manual_grade
    return outcome


def _read_cells(path: Path):
    from gradacc_grader.trusted import submitted_cells

    try:
        if path.is_symlink() or path.stat().st_size > MAX_NOTEBOOK_BYTES:
            return {}, {}
        return submitted_cells(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, AttributeError, TypeError):
        return {}, {}  # a corrupt notebook: every trusted check fails


def score_table(outcomes: list[Outcome]) -> str:
    """The class's scores as a plain-text table, one row per student.

    >>> print(score_table([Outcome("ada", "graded", 9.0, 12.0, True)]))
    student  score    max  manual  status
    ada        9.0   12.0  to do   graded
    """
    width = max([len("student"), *(len(o.student) for o in outcomes)])
    lines = [f"{'student':<{width}}  score    max  manual  status"]
    for o in outcomes:
        manual = "to do" if o.needs_manual_grade else "done"
        lines.append(
            f"{o.student:<{width}}  {o.score:5.1f}  {o.max_score:5.1f}  {manual:<6}  {o.status}"
        )
        lines += [f"{'':<{width}}    trusted re-check: {note}" for note in o.notes]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
