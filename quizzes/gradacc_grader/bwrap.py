"""The bubblewrap command line of a sandbox: what student code sees, and as whom it runs.

A read-only copy of the system, of Python and its venv, of the student package
(`gradacc_lessons`) and of the scripts in `inside/` (at INSIDE); an empty in-memory home
(its working folder, WORK, in it), /tmp and /dev/shm, each of a bounded size; nothing else
of the machine: not the course, not the grader's work folders, not this package. How the
processes in it are started and read is gradacc_grader.sandbox.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gradacc_grader.sandbox import Sandbox

HOME = "/home/student"
WORK = f"{HOME}/work"  # the working folder inside the sandbox (in the home's tmpfs)
INSIDE = "/opt/gradacc"  # where inside/ (and, for root, bwrap) appear inside the sandbox
NOBODY = 65534  # the user the code runs as when the grader is started as root
# -I: no PYTHON* variables, no user site, and neither the script's folder nor the working
# folder on sys.path (a student's `torch.py` never shadows torch); -B: writes no .pyc files.
PYTHON = (sys.executable, "-I", "-B")
INSIDE_SOURCE = Path(__file__).resolve().with_name("inside")
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC = ("passwd", "group", "nsswitch.conf", "ld.so.cache", "ld.so.conf", "localtime", "fonts")


class SandboxError(RuntimeError):
    """The sandbox cannot be set up on this machine."""


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
    """What the sandbox sees read-only besides the system: Python, its venv, gradacc_lessons."""
    paths = {Path(sys.base_prefix).resolve(), Path(sys.prefix), Path(sys.prefix).resolve()}
    spec = importlib.util.find_spec("gradacc_lessons")  # an editable install lives elsewhere
    if spec and spec.submodule_search_locations:
        paths.add(Path(list(spec.submodule_search_locations)[0]).resolve())
    return sorted(paths)


def bwrap_args(sandbox: Sandbox, files: tuple, shared: tuple, readonly: tuple) -> list[str]:
    size = str(sandbox.limits.tmpfs_bytes)
    hidden = tuple(Path(h).resolve() for h in sandbox.hidden)
    args = [find_bwrap(), *_system_binds(hidden), "--dev", "/dev", "--proc", "/proc"]
    # /dev is a tmpfs as large as half the machine's memory, writable when the grader is not
    # root: read-only, but for a small /dev/shm (Python's multiprocessing needs one).
    args += ["--perms", "1777", "--size", str(sandbox.limits.shm_bytes), "--tmpfs", "/dev/shm"]
    args += ["--remount-ro", "/dev"]
    # Writable by anyone inside, like a real /tmp: the code may run as `nobody`.
    args += ["--perms", "1777", "--size", size, "--tmpfs", "/tmp"]
    args += _parents([HOME, *readonly_paths(), f"{INSIDE}/inside", *shared, *readonly])
    # WORK lies in the home's tmpfs: what the code writes there is bounded with the home,
    # never on the grader's disk (a folder bound from the disk let one student fill it).
    args += ["--perms", "1777", "--size", size, "--tmpfs", HOME, "--perms", "1777", "--dir", WORK]
    for path in files:  # the submitted notebook, read-only, under its own name
        args += ["--ro-bind", str(path), f"{WORK}/{Path(path).name}"]
    # This package is hidden too: installed into the venv, it would show through it.
    args += _python_binds((*sandbox.hidden, Path(__file__).resolve().parent))
    args += ["--ro-bind", str(INSIDE_SOURCE), f"{INSIDE}/inside", "--chdir", WORK]
    for folder in shared:
        args += ["--bind", str(folder), str(folder)]
    for path in readonly:
        args += ["--ro-bind", str(path), str(path)]
    args += ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    args += ["--unshare-cgroup-try", "--die-with-parent", "--new-session", "--clearenv"]
    args += _environment()
    if os.geteuid() != 0:
        args += ["--unshare-user", "--disable-userns"]
    else:
        # Started by root, bwrap keeps no capability but these two, which jail.py uses to
        # become `nobody` for good before userns_guard's inner bwrap starts.
        args += ["--ro-bind", str(Path(find_bwrap()).resolve()), f"{INSIDE}/bwrap"]
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    # Last, once every mount point is made: bwrap's root is a tmpfs as large as half the
    # machine's memory, and the folders it made there (/opt, ...) are the sandbox user's
    # when the grader is not root.
    return [*args, "--remount-ro", "/"]


def userns_guard() -> list[str]:
    """As root: become `nobody`, then an inner bwrap that forbids new user namespaces.

    --disable-userns needs a user namespace made for the sandbox, and one made by root
    maps to root outside, where RLIMIT_NPROC does not bind. So the outer sandbox (root,
    no user namespace) turns into `nobody`, whose inner bwrap makes the user namespace
    with the outer sandbox's files as they are (/ bound on /, devices included).
    """
    if os.geteuid() != 0:
        return []
    drop = [*PYTHON, "-S", f"{INSIDE}/inside/jail.py", f"--uid={NOBODY}", f"--gid={NOBODY}"]
    inner = [f"{INSIDE}/bwrap", "--dev-bind", "/", "/", "--unshare-user", "--disable-userns"]
    return [*drop, "--", *inner, "--die-with-parent", "--"]


def _system_binds(hidden: tuple[Path, ...] = ()) -> list[str]:
    args = []
    for name in _SYSTEM:
        path = Path(name)
        if path.is_symlink():  # merged /usr: /bin -> usr/bin
            args += ["--symlink", os.readlink(path), name]
        elif path.exists():
            args += bind_around(path, hidden)
    for name in _ETC:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    return args


def bind_around(path: Path, hidden: tuple[Path, ...]) -> list[str]:
    """Bind `path` read-only, leaving out each hidden folder under it: its siblings are bound
    one by one, the folder itself is not there.

    nbgrader's exchange is `/usr/local/share/nbgrader/exchange` by default: binding all of
    /usr showed every classmate's submission to student code.

    >>> bind_around(Path("/usr"), (Path("/srv/course"),))
    ['--ro-bind', '/usr', '/usr']
    >>> args = bind_around(Path("/usr"), (Path("/usr/local/share/nbgrader/exchange"),))
    >>> "/usr/local/share/nbgrader" in args, "/usr/lib" in args, "/usr" in args
    (False, True, True)
    """
    inside = [h for h in hidden if h.is_relative_to(path)]
    if not inside:
        return ["--ro-bind", str(path), str(path)]
    if path in inside or path.is_symlink() or not path.is_dir():
        return []  # the hidden folder itself (or a link or file over it): left out
    args = ["--perms", "0755", "--dir", str(path)]
    for entry in sorted(path.iterdir()):
        if entry.is_symlink():
            args += ["--symlink", os.readlink(entry), str(entry)]
        else:
            args += bind_around(entry, tuple(inside))
    return args


def exposed(folder: Path) -> Path | None:
    """The path the sandbox shows whole (Python, its venv, gradacc_lessons) that `folder` lies
    in, or None: an exchange or course there would be shown to student code."""
    folder = folder.resolve()
    system = [Path(name) for name in _SYSTEM]  # a Python of the system's: /usr is bound around
    shown = [p for p in readonly_paths() if not any(p.is_relative_to(s) for s in system)]
    return next((p for p in shown if folder.is_relative_to(p)), None)


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


def _python_binds(hidden: tuple[Path, ...]) -> list[str]:
    """Python, its venv and gradacc_lessons read-only; a hidden folder inside them covered."""
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
            args += ["--tmpfs", str(secret)]  # an empty folder where it was
    package = Path(__file__).resolve().parent  # installed into the venv: references, hints
    if any(package.is_relative_to(p) for p in paths):
        args += ["--tmpfs", str(package)]  # (inside/ is bound apart, at /opt/gradacc/inside)
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
