"""A bubblewrap sandbox for student code: no course files, no network, bounded CPU and memory.

The sandbox sees a read-only copy of the system, of Python and of this package,
an empty in-memory home and /tmp, and one writable folder: the scratch copy of
the student's own submission. Nothing else of the machine exists inside it: not
the course's `source/` or `release/`, not the other students, not the gradebook.
It has no network interface except a loopback that is down.

The kernel that runs a submission talks to nbgrader over Unix sockets (jupyter's
`ipc` transport) in a folder bound into the sandbox, since TCP cannot cross the
network namespace.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import Integer, Unicode

HOME = "/home/student"
WORK = f"{HOME}/work"  # where the scratch folder appears inside the sandbox
NOBODY = 65534  # the user the code runs as when the grader is started as root
_JAIL = Path(__file__).with_name("inside") / "jail.py"
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_SECRET_MARKERS = (b"BEGIN HIDDEN TESTS", b"BEGIN SOLUTION")
_ETC = ("passwd", "group", "nsswitch.conf", "ld.so.cache", "ld.so.conf", "localtime", "fonts")


class SandboxError(RuntimeError):
    """The sandbox cannot be set up on this machine."""


@dataclass(frozen=True)
class Limits:
    """What one sandboxed process tree may use (per process for memory and file size).

    >>> Limits().cpu_seconds
    300
    """

    cpu_seconds: int = 300  # CPU time of the kernel, all cells together
    memory_bytes: int = 4 << 30  # address space: torch + matplotlib need about 1 GiB
    processes: int = 64  # processes and threads of the sandbox's user
    file_bytes: int = 256 << 20  # largest file it may write
    tmpfs_bytes: int = 256 << 20  # size of the in-memory home and /tmp each


def find_bwrap() -> str:
    """The path of the bubblewrap executable, or SandboxError saying how to install it."""
    path = shutil.which("bwrap")
    if path is None:
        raise SandboxError(
            "bubblewrap (bwrap) is not installed or not on PATH, so student code cannot be "
            "sandboxed. Install it (Debian/Ubuntu: sudo apt-get install bubblewrap; Fedora: "
            "sudo dnf install bubblewrap), or pass --unsafe-no-sandbox to grade with the "
            "instructor's own rights (only for submissions you trust)."
        )
    return path


def readonly_paths() -> list[Path]:
    """What the sandbox sees read-only besides the system: Python, the venv, the course's
    student package (an assignment may import it) and this package (its `inside` scripts)."""
    import gradacc_lessons

    paths = {Path(sys.base_prefix).resolve(), Path(sys.prefix), Path(sys.prefix).resolve()}
    paths.add(Path(__file__).resolve().parent)
    paths.add(Path(gradacc_lessons.__file__).resolve().parent)
    return sorted(paths)


def bwrap_command(
    command: list[str],
    scratch: Path,
    limits: Limits = Limits(),
    *,
    shared: tuple[Path, ...] = (),
    hidden: tuple[Path, ...] = (),
) -> list[str]:
    """The bwrap command line that runs `command` in the sandbox, cwd = its scratch folder.

    `shared` folders are bound writable at their own path (the kernel's sockets);
    `hidden` folders (the course) are covered by an empty tmpfs wherever a
    read-only bind would otherwise expose them.

    >>> cmd = bwrap_command(["true"], Path("/tmp/x"))
    >>> "--unshare-net" in cmd and cmd[-1] == "true"
    True
    """
    size = str(limits.tmpfs_bytes)
    args = [find_bwrap(), *_system_binds(), "--dev", "/dev", "--proc", "/proc"]
    # Writable by anyone inside, like a real /tmp: the code may run as `nobody`.
    args += ["--perms", "1777", "--size", size, "--tmpfs", "/tmp"]
    args += _parents([HOME, *readonly_paths(), *shared])
    args += ["--perms", "1777", "--size", size, "--tmpfs", HOME]
    args += _python_binds(hidden) + _masks()
    args += ["--bind", str(scratch), WORK, "--chdir", WORK]
    for folder in shared:
        args += ["--bind", str(folder), str(folder)]
    args += ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    args += ["--unshare-cgroup-try", "--die-with-parent", "--new-session", "--clearenv"]
    args += _environment()
    jail = [sys.executable, "-I", str(_JAIL), *_limit_args(limits)]
    if os.geteuid() == 0:
        # bwrap started by root keeps no capability but these two, which jail.py
        # uses to become `nobody` for good before it starts the student's code.
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        jail += ["--uid", str(NOBODY), "--gid", str(NOBODY)]
    else:
        args += ["--unshare-user"]
    return [*args, "--", *jail, "--", *command]


def limited_command(command: list[str], limits: Limits = Limits()) -> list[str]:
    """`command` with the resource limits only, no sandbox (for --unsafe-no-sandbox).

    >>> limited_command(["true"])[-2:]
    ['--', 'true']
    """
    return [sys.executable, "-I", str(_JAIL), *_limit_args(limits), "--", *command]


def _system_binds() -> list[str]:
    args = []
    for name in _SYSTEM:
        path = Path(name)
        if path.is_symlink():  # merged /usr: /bin -> usr/bin
            args += ["--symlink", os.readlink(path), name]
        elif path.exists():
            args += ["--ro-bind", name, name]
    for name in _ETC:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    return args


def _parents(paths: list) -> list[str]:
    # bwrap creates missing mount points with mode 0700; the unprivileged user
    # inside must be able to walk down to the Python it runs.
    mounted = [Path(p) for p in _SYSTEM]
    made: list[Path] = []
    for path in paths:
        for parent in reversed(Path(path).parents[:-1]):  # [:-1]: not "/"
            if parent == Path("/tmp") or parent in made:
                continue
            if not any(parent.is_relative_to(m) for m in mounted):
                made.append(parent)
    return [arg for parent in made for arg in ("--perms", "0755", "--dir", str(parent))]


def _masks() -> list[str]:
    # This package builds the quizzes, so some of its files hold hidden tests and
    # solutions: the sandbox sees them empty.
    args = []
    for path in sorted(Path(__file__).resolve().parent.rglob("*")):
        if path.is_file() and any(marker in path.read_bytes() for marker in _SECRET_MARKERS):
            args += ["--ro-bind", "/dev/null", str(path)]
    return args


def _python_binds(hidden: tuple[Path, ...]) -> list[str]:
    args = []
    paths = readonly_paths()
    for path in paths:
        args += ["--ro-bind", str(path), str(path)]
    for secret in (Path(h).resolve() for h in hidden):
        inside = [p for p in paths if p.is_relative_to(secret)]
        if inside:
            raise SandboxError(
                f"{inside[0]} lies inside the course folder {secret}: the sandbox would have to "
                "show the course to the student. Keep Python and its venv outside the course."
            )
        if any(secret.is_relative_to(p) for p in paths):
            args += ["--tmpfs", str(secret)]
    return args


def _environment() -> list[str]:
    env = {
        "HOME": HOME,
        "TMPDIR": "/tmp",
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": f"{HOME}/.matplotlib",
        # A thread per core would hit the process limit on a big machine; quizzes are tiny.
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    return [arg for key, value in env.items() for arg in ("--setenv", key, value)]


def _limit_args(limits: Limits) -> list[str]:
    return [
        f"--cpu={limits.cpu_seconds}",
        f"--memory={limits.memory_bytes}",
        f"--nproc={limits.processes}",
        f"--fsize={limits.file_bytes}",
    ]


def give_to_sandbox(path: Path) -> None:
    """Make a folder (and all it holds) writable by the sandbox's user."""
    if os.geteuid() != 0:
        return  # the sandbox runs as the grader's own user
    for root, dirs, files in os.walk(path):
        for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
            os.lchown(name, NOBODY, NOBODY)


_PROBE = """
import json, os, socket
result = {"uid": os.getuid(), "cwd": os.getcwd()}
open("probe.txt", "w").write("ok")
result["wrote_scratch"] = open("probe.txt").read() == "ok"
try:
    socket.create_connection(("1.1.1.1", 80), timeout=2)
    result["network"] = True
except OSError:
    result["network"] = False
result["sees_hidden"] = os.path.exists(os.environ.get("PROBE_HIDDEN", "/nonexistent"))
print(json.dumps(result))
"""


def self_test(hidden: Path | None = None, limits: Limits = Limits()) -> dict:
    """Start a tiny sandboxed Python and check what it can do; SandboxError if anything is off.

    Checks that it starts at all, writes its scratch folder, has no network and
    does not see `hidden` (the course folder).
    """
    with tempfile.TemporaryDirectory(prefix="gradacc-selftest-") as tmp:
        scratch = Path(tmp) / "work"
        scratch.mkdir()
        give_to_sandbox(scratch)
        hide = (hidden,) if hidden else ()
        command = bwrap_command([sys.executable, "-I", "-c", _PROBE], scratch, limits, hidden=hide)
        env_at = command.index("--clearenv") + 1
        command[env_at:env_at] = ["--setenv", "PROBE_HIDDEN", str(hidden or "/nonexistent")]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise SandboxError(
            f"bubblewrap is installed but its self-test failed (exit {done.returncode}): "
            f"{done.stderr.strip()[-500:]}\nOn Ubuntu 24.04+ unprivileged user namespaces may be "
            "restricted by AppArmor (sysctl kernel.apparmor_restrict_unprivileged_userns); "
            "run as a user allowed to use bwrap, or pass --unsafe-no-sandbox explicitly."
        )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    problems = [
        text
        for bad, text in [
            (not result["wrote_scratch"], "cannot write its scratch folder"),
            (result["network"], "can open a network connection"),
            (result["sees_hidden"], f"can see the course folder {hidden}"),
        ]
        if bad
    ]
    if problems:
        raise SandboxError("the sandbox self-test failed: the sandbox " + "; ".join(problems))
    return result


class SandboxKernelManager(AsyncKernelManager):
    """A kernel manager that starts every kernel inside the bubblewrap sandbox.

    nbgrader starts the kernel in `<course>/autograded/<student>/<assignment>`;
    this manager copies `<course>/submitted/<student>/<assignment>` into a fresh
    scratch folder and runs `python -m ipykernel_launcher` there, as the student's
    only writable place. Whatever the notebook's metadata names, the kernel is Python.
    """

    course_root = Unicode(help="the nbgrader course folder, hidden from the kernel").tag(
        config=True
    )
    scratch_root = Unicode(help="folder where each kernel gets its scratch copy").tag(config=True)
    cpu_seconds = Integer(Limits.cpu_seconds).tag(config=True)
    memory_bytes = Integer(Limits.memory_bytes).tag(config=True)
    processes = Integer(Limits.processes).tag(config=True)

    def __init__(self, **kwargs):
        kwargs["kernel_name"] = "python3"  # never a kernel the student's metadata asks for
        super().__init__(**kwargs)

    def _limits(self) -> Limits:
        return Limits(self.cpu_seconds, self.memory_bytes, self.processes)

    async def _async_pre_start_kernel(self, **kw):
        course = Path(self.course_root).resolve()
        student_dir = Path(kw.get("cwd") or os.getcwd()).resolve()
        relative = student_dir.relative_to(course / "autograded")
        folder = Path(tempfile.mkdtemp(prefix="kernel-", dir=self.scratch_root or None))
        scratch, sockets = folder / "work", folder / "sockets"
        submitted = course / "submitted" / relative
        # symlinks=True: a link the student planted is copied as a link, never followed here.
        shutil.copytree(submitted, scratch, symlinks=True)
        sockets.mkdir()
        self.transport, self.ip = "ipc", str(sockets / "kernel")
        self.connection_file = str(sockets / "kernel.json")
        self.kernel_spec.interrupt_mode = "message"  # SIGINT to bwrap would not reach it
        _, kw = await super()._async_pre_start_kernel(**kw)
        give_to_sandbox(folder)
        kernel = [sys.executable, "-m", "ipykernel_launcher", "-f", self.connection_file]
        kernel += ["--HistoryManager.hist_file=:memory:"]
        command = bwrap_command(
            kernel, scratch, self._limits(), shared=(sockets,), hidden=(course,)
        )
        kw["cwd"] = str(folder)
        return command, kw
