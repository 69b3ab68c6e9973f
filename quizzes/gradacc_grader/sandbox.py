"""A bubblewrap sandbox for student code: no course files, no network, bounded CPU and memory.

The sandbox sees a read-only copy of the system, of Python and its venv, of the student
package (`gradacc_lessons`) and of the scripts in `inside/` (at /opt/gradacc), and an
empty in-memory home (its working folder, WORK, in it) and /tmp, each of a bounded size:
nothing it writes reaches the grader's disk. Nothing else of the machine exists in
it: not the course (`source/`, `release/`, the answer keys, other students, the gradebook),
not the grader's work folders, not this package. Its network namespace holds only a
loopback that is down. Student code cannot create user namespaces in it (bwrap's
--disable-userns), so it cannot build a sandbox of its own with other mounts or more rights.
bubblewrap's command line, which makes it so, is gradacc_grader.bwrap.

Two kinds of process run in it, each in a sandbox of its own:

- the kernel that nbgrader drives (`SandboxKernelManager`, in gradacc_grader.kernel),
  which talks to nbgrader over Unix sockets in a folder bound into the sandbox (TCP
  cannot cross the network namespace); its working folder shows the submitted notebook,
  read-only, and nothing else;
- the trusted re-check's harness (`run_exercise`), whose result comes back on a pipe the
  grader created and reads, never through a file the student's code could replace.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from gradacc_grader.bwrap import (
    INSIDE,
    INSIDE_SOURCE,
    NOBODY,
    PYTHON,
    bwrap_args,
    userns_guard,
)
from gradacc_grader.bwrap import SandboxError as SandboxError  # the sandbox's API too
from gradacc_grader.bwrap import find_bwrap as find_bwrap
from gradacc_grader.folders import remove_tree

MAX_RESULT_BYTES = 10_000_000  # the most a sandboxed process may send back
# seconds kept back from a student's deadline for the grader to score and save after the
# re-check (a few tenths of a second on an idle machine; many times that on a loaded one)
RECORD_SECONDS = 20.0


@dataclass(frozen=True)
class Limits:
    """What one sandboxed process tree may use (per process for memory and file size).

    >>> Limits().cpu_seconds
    300
    """

    cpu_seconds: int = 300  # CPU time of the kernel, all cells together
    memory_bytes: int = 4 << 30  # address space: torch + matplotlib need about 1 GiB
    processes: int = 64  # processes and threads, counted in the sandbox's user namespace
    file_bytes: int = 256 << 20  # largest file it may write
    tmpfs_bytes: int = 256 << 20  # size of the in-memory home (with WORK in it) and /tmp each
    shm_bytes: int = 64 << 20  # size of /dev/shm


@dataclass(frozen=True)
class Sandbox:
    """How student code runs: the folders it must not see, its limits, bwrap or not.

    `hidden`: the course folder and the grader's work folders. `unsafe`
    (--unsafe-no-sandbox) keeps the limits and the fresh process but drops bubblewrap:
    the code runs with the grader's rights. `deadline` (a `time.monotonic()`) is when
    the student's grading must end (gradacc-grade's --timeout): the re-check's harness
    may take the time left until then. `ready` holds harnesses started ahead of time by
    `start_harness`, each used once by `run_exercise`.

    >>> cmd = Sandbox(hidden=(Path("/srv/course"),)).command(["true"])
    >>> "--unshare-net" in cmd and cmd[-1] == "true"
    True
    """

    hidden: tuple[Path, ...]
    limits: Limits = Limits()
    unsafe: bool = False
    deadline: float | None = None
    ready: list = field(default_factory=list, compare=False, repr=False)

    def command(
        self, command: list[str], files: tuple = (), shared: tuple = (), readonly: tuple = ()
    ) -> list[str]:
        """The command line that runs `command` in this sandbox, in its folder WORK.

        `files` appear read-only in WORK under their own names (the submitted notebook);
        `shared` folders are bound writable at their own path (the kernel's sockets),
        `readonly` files read-only at their own path (the kernel's connection file).
        """
        limits = [*_limit_args(self.limits), "--"]
        if self.unsafe:
            return [*PYTHON, "-S", str(INSIDE_SOURCE / "jail.py"), *limits, *command]
        jail = [*PYTHON, "-S", f"{INSIDE}/inside/jail.py", *limits]
        bwrap = bwrap_args(self, files, shared, readonly)
        return [*bwrap, "--", *userns_guard(), *jail, *command]

    def seconds_left(self, margin: float = 0.0) -> float:
        """Seconds until the deadline less `margin` (at least 0); without one, the CPU limit.

        >>> Sandbox(hidden=()).seconds_left()
        300.0
        """
        if self.deadline is None:
            return float(self.limits.cpu_seconds)
        return max(0.0, self.deadline - time.monotonic() - margin)

    def run(self, command: list[str], timeout: float, request: bytes = b"", shared=()) -> dict:
        """Run `command` in a new sandbox now, send it `request`; the JSON object it sent back."""
        return Running(self, command, shared).answer(request, timeout)


class Running:
    """A command started in a sandbox of its own (its WORK a fresh in-memory folder).

    The command gets one more argument: the file descriptor of a result pipe that this
    process created and reads. It reads one request on stdin and sends one JSON object
    on that pipe (at most MAX_RESULT_BYTES). Student code in the sandbox can write
    nonsense into the pipe, but it cannot make the grader read anything else (a link,
    /proc/kmsg, a file of the course). Started early, it imports torch while the
    grader does other work; `answer` sends the request and waits.
    """

    def __init__(self, sandbox: Sandbox, command: list[str], shared: tuple[Path, ...] = ()):
        # Sandboxed, it works in its in-memory WORK; without the sandbox, in a folder here.
        self.scratch = Path(tempfile.mkdtemp(prefix="gradacc-run-")) if sandbox.unsafe else None
        # stderr to a file, not a pipe, which a chatty sandbox could fill and block on
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by stop)
        read_end, write_end = os.pipe()
        try:
            self.process = subprocess.Popen(
                sandbox.command([*command, str(write_end)], shared=shared),
                cwd=self.scratch or "/",
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=self.stderr,
                pass_fds=[write_end],
                start_new_session=True,  # its own process group, killed as a whole
            )
        finally:
            os.close(write_end)  # the sandbox holds the only write end: EOF when it is done
        self.result = os.fdopen(read_end, "rb")

    def answer(self, request: bytes, timeout: float) -> dict:
        """Send the request, wait for the result (or {"error": why}), then clean up."""
        try:
            self.process.stdin.write(request)
            self.process.stdin.close()
        except OSError:
            pass  # it ended early: the result below says so
        data = _read_until_eof(self.result, time.monotonic() + timeout)
        self._kill()
        result = _parse_result(data, timeout)
        if "error" in result and not data:  # it died without a word: say what it printed
            result["error"] += f" ({self.last_words()})"
        self.stop()
        return result

    def last_words(self) -> str:
        """The last line the sandbox wrote on stderr (bwrap's complaint, a crash)."""
        self.stderr.seek(max(0, self.stderr.seek(0, os.SEEK_END) - 2000))
        lines = self.stderr.read().decode(errors="replace").strip().splitlines()
        return (lines or ["nothing on stderr"])[-1][-300:]

    def stop(self) -> None:
        """Kill whatever still runs in the sandbox, close its pipes, remove its folder."""
        self._kill()
        for stream in (self.process.stdin, self.result, self.stderr):
            stream.close()
        if self.scratch is not None:
            with contextlib.suppress(OSError):  # student code made it: it may be nested deep
                remove_tree(self.scratch)

    def _kill(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):  # ended meanwhile
                os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


def start_harness(sandbox: Sandbox) -> None:
    """Start a harness ahead of time (it imports torch meanwhile); run_exercise uses it."""
    sandbox.ready.append(Running(sandbox, [*_harness_command(sandbox), "--ahead"]))


def stop_harnesses(sandbox: Sandbox) -> None:
    """Stop the harnesses started ahead of time that no exercise used."""
    while sandbox.ready:
        sandbox.ready.pop().stop()


def run_exercise(cells, module: str, seed: int, sandbox: Sandbox, timeout=None) -> dict:
    """Run a student's cells, then its function on an exercise's cases in a fresh sandbox.

    `module` names an exercise module of inside/ (see inside/loop_harness.py); the
    result is {case name: outcome}, or {"error": why} if the cell or the harness failed.
    `timeout` (seconds) is by default what is left of the student's time (gradacc-grade's
    --timeout), less RECORD_SECONDS to score and save: cells that ran in the kernel (a
    sleep costs time, not CPU) run here again, and the student's other scores are kept
    when this one runs out. Its RLIMIT_CPU is the kernel's.
    """
    timeout = sandbox.seconds_left(RECORD_SECONDS) if timeout is None else timeout
    harness = sandbox.ready.pop() if sandbox.ready else Running(sandbox, _harness_command(sandbox))
    cells = [cells] if isinstance(cells, str) else list(cells)  # one cell, or the notebook's
    request = {"module": module, "seed": seed, "cells": cells}
    return harness.answer(json.dumps(request).encode(), timeout)


def _harness_command(sandbox: Sandbox) -> list[str]:
    folder = INSIDE_SOURCE if sandbox.unsafe else f"{INSIDE}/inside"
    return [*PYTHON, f"{folder}/loop_harness.py"]


def _limit_args(limits: Limits) -> list[str]:
    return [
        f"--cpu={limits.cpu_seconds}",
        f"--memory={limits.memory_bytes}",
        f"--nproc={limits.processes}",
        f"--fsize={limits.file_bytes}",
    ]


def _read_until_eof(pipe, deadline: float) -> bytes | str:
    """What arrives on the pipe until every writer closed it; a reason if it cannot."""
    chunks, size = [], 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([pipe], [], [], left)[0]:
            return "timeout"
        chunk = os.read(pipe.fileno(), 1 << 16)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_RESULT_BYTES:
            return f"more than {MAX_RESULT_BYTES} bytes"
        chunks.append(chunk)


def _parse_result(data: bytes | str, timeout: float) -> dict:
    """The JSON object the sandbox sent, or {"error": why}.

    >>> _parse_result(b'{"a": 1}', 1), _parse_result(b"[1]", 1), _parse_result("timeout", 5)
    ({'a': 1}, {'error': 'its result is not a JSON object'}, {'error': 'it did not finish in 5 s'})
    """
    if data == "timeout":
        return {"error": f"it did not finish in {timeout:.0f} s"}
    if isinstance(data, str):
        return {"error": f"it sent {data}"}
    try:
        result = json.loads(data)
    except (ValueError, RecursionError):
        return {"error": "it sent an unreadable result" if data else "it sent no result"}
    return result if isinstance(result, dict) else {"error": "its result is not a JSON object"}


def give_to_sandbox(path: Path) -> None:
    """Make a folder (and all it holds) writable by the sandbox's user."""
    if os.geteuid() != 0:
        return  # the sandbox runs as the grader's own user
    for root, dirs, files in os.walk(path):
        for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
            os.lchown(name, NOBODY, NOBODY)
