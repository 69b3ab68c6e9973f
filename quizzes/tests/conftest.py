"""Shared fixtures of the instructor's package tests: a course built once per session."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
TEST_SECRET = "5e" * 32  # a fixed secret: the same release every run

# Debian's Chromium, started as every browser test of the repository starts it. A copy of
# tools/system_tools.py's CHROMIUM and CHROMIUM_ARGS, so that `pip install ./quizzes` is tested
# without the repository's tools/ (tests/test_quizzes_alone.py checks that the two agree).
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# The repository's markers (pyproject.toml), for a run of quizzes/ on its own.
MARKERS = {
    "slow": "executes notebooks or runs the nbgrader pipeline",
    "browser": "drives a real Chromium",
    "distributed": "starts several processes",
    "benchmark": "timings, run by `make bench`",
}


@pytest.fixture(autouse=True)
def _names_unguarded_after_each_test():
    """Each test starts with nbgrader's gradebook as nbgrader makes it.

    A course's config (settings.configure) makes the process that loads it refuse names with
    markup (gradacc_grader.names.guard_gradebook): right in an nbgrader command, but a test
    that loads a course's config in pytest's own process would leave it on for the tests after
    it, some of which write hostile names into a gradebook on purpose.
    """
    yield
    from gradacc_grader.names import FIELDS, _refuse
    from nbgrader.api import Student
    from sqlalchemy import event

    for field in FIELDS:
        if event.contains(getattr(Student, field), "set", _refuse):
            event.remove(getattr(Student, field), "set", _refuse)


def pytest_configure(config):
    known = {line.split(":")[0] for line in config.getini("markers")}
    for name, meaning in MARKERS.items():
        if name not in known:
            config.addinivalue_line("markers", f"{name}: {meaning}")


# A hostile cell: three files of 120 MiB each (under RLIMIT_FSIZE) into its working folder
# and, in a kernel, into the folder of its sockets: both were folders on the grader's disk,
# with no bound on the total. It leaves `found`: the MiB written and the error that stopped
# each, and the working folder's size in MiB.
FILL_DISK = """
import json, os, sys
def fill(folder):
    written = 0  # MiB
    for index in range(3):
        try:
            with open(os.path.join(folder, f"fill{index}.bin"), "wb") as out:
                for _ in range(120):
                    out.write(bytes(1 << 20))
                    written += 1
        except OSError as error:
            return [written, error.strerror]
    return [written, None]
found = {"work": fill("."), "work_size": os.statvfs(".").f_blocks * os.statvfs(".").f_frsize >> 20}
from ipykernel.kernelapp import IPKernelApp
if IPKernelApp.initialized():  # the kernel: the folder where it made its sockets
    found["sockets"] = fill(os.path.dirname(IPKernelApp.instance().ip))
"""


@pytest.fixture(scope="session")
def fill_disk() -> str:
    """The disk-filling cell (FILL_DISK), for the sandbox's tests and the class's."""
    return FILL_DISK


@pytest.fixture(scope="session")
def chromium() -> tuple[str, list[str]]:
    """(executable, arguments) of the Chromium the browser tests start."""
    return CHROMIUM, list(CHROMIUM_ARGS)


def run(command: list[str], cwd: Path | None = None, timeout: float = 1800):
    """Run a console script of the venv (nbgrader, gradacc-build, gradacc-grade) like a user."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(
        [str(BIN / command[0]), *command[1:]],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def new_course(folder: Path, secret: str = TEST_SECRET) -> Path:
    """An empty course folder holding only a known secret (mode 0600)."""
    folder.mkdir(parents=True)
    path = folder / "instructor.secret"
    path.write_text(secret + "\n", encoding="ascii")
    path.chmod(0o600)
    return folder


@pytest.fixture(scope="session")
def cli():
    """run(command, cwd=None, timeout=1800): a console script of the venv, as a user runs it."""
    return run


@pytest.fixture(scope="session")
def course_with_secret():
    """new_course(folder, secret=TEST_SECRET): an empty course folder with a known secret."""
    return new_course


@pytest.fixture(scope="session")
def test_secret() -> str:
    """The secret of the `built` course."""
    return TEST_SECRET


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> Path:
    """A course built by gradacc-build (as `make quizzes` does), with the sample class."""
    course = new_course(tmp_path_factory.mktemp("built") / "course")
    done = run(["gradacc-build", "--course", str(course), "--sample-class"])
    assert done.returncode == 0, done.stdout + done.stderr
    return course


@pytest.fixture
def course_copy(built, tmp_path) -> Path:
    """A copy of the built course (gradebook included) that a test may change."""
    return Path(shutil.copytree(built, tmp_path / "course", symlinks=True))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str) -> str:
    """The body of a GET of `url` (a local server), as text."""
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode("utf-8")


@contextlib.contextmanager
def serve(course: Path, home: Path):
    """A Jupyter server with formgrader serving `course` on 127.0.0.1: (base URL, token)."""
    port, token = _free_port(), secrets.token_hex(16)
    env = {
        "PATH": f"{BIN}{os.pathsep}/usr/bin:/bin",
        "HOME": str(home),
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
    }
    command = [
        str(BIN / "jupyter"),
        "server",
        "--no-browser",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        "--ServerApp.ip=127.0.0.1",
        f"--IdentityProvider.token={token}",
        "--allow-root",
    ]
    log = home / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            command,
            cwd=course,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            with contextlib.suppress(OSError):
                get(f"{base}/api/status?token={token}")
                break
            assert process.poll() is None, log.read_text()
            time.sleep(0.5)
        yield base, token
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


@pytest.fixture(scope="session")
def formgrader():
    """serve(course, home): a context manager running formgrader on `course`, (URL, token)."""
    return serve
