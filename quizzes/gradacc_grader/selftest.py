"""The sandbox's self-test: a tiny Python in each sandbox reports what it can do.

`gradacc-grade` runs it before grading and refuses to grade if either sandbox (the
kernel's, the re-check's) can reach the network, see a hidden folder, create a user
namespace, has its working folder on sys.path or runs as root (GRADING.md, "What it
needs").
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

from gradacc_grader.bwrap import exposed
from gradacc_grader.sandbox import PYTHON, Running, Sandbox, SandboxError, give_to_sandbox

_PROBE = """
import ctypes, json, os, socket, sys
fd, hidden = int(sys.argv[-1]), sys.argv[1:-1]
found = {"uid": os.getuid(), "cwd": os.getcwd()}
with open("probe.txt", "w") as f:
    f.write("ok")
found["wrote_scratch"] = open("probe.txt").read() == "ok"
try:
    socket.create_connection(("1.1.1.1", 80), timeout=2).close()
    found["network"] = True
except OSError:
    found["network"] = False
# a hidden folder inside a bound one is there as an empty tmpfs: seen if it shows more
found["sees"] = [p for p in hidden if os.path.isfile(p) or os.path.isdir(p) and os.listdir(p)]
found["devices"] = len(open("/dev/urandom", "rb").read(8)) == 8  # torch needs it
found["userns"] = ctypes.CDLL(None, use_errno=True).unshare(0x10000000) == 0  # CLONE_NEWUSER
found["cwd_on_path"] = [p for p in sys.path if p in ("", ".", os.getcwd())]
os.write(fd, json.dumps(found).encode())
"""


def check_exchange(exchange: Path | None) -> None:
    """SandboxError if nbgrader's exchange lies where the sandbox shows everything (the venv).

    The exchange holds every student's submission, and its inbound/ is writable by all: under
    /usr (nbgrader's default) the sandbox leaves it out (bwrap.bind_around); inside Python,
    its venv or the course package, which the sandbox shows whole, it cannot.
    """
    where = exposed(exchange) if exchange is not None else None
    if where is not None:
        raise SandboxError(
            f"nbgrader's exchange {exchange} lies inside {where}, which the sandbox shows to "
            "student code: every classmate's submission would be readable. Move the exchange "
            "(c.Exchange.root in nbgrader_config.py) out of it, e.g. to /srv/nbgrader/exchange."
        )


def self_test(sandbox: Sandbox, exchange: Path | None = None) -> dict[str, dict]:
    """Probe both sandboxes, the kernel's and the re-check's; SandboxError if anything is off.

    Each must start, write its scratch folder, read /dev/urandom, and must not reach
    the network, see a hidden folder or nbgrader's `exchange`, create a user namespace, have
    its working folder on sys.path, or run as root; its answer comes on the grader's pipe.
    An exchange inside what the sandbox shows whole is refused first (`check_exchange`).
    Returns what each probe found, by sandbox.
    """
    check_exchange(exchange)
    if exchange is not None and exchange not in sandbox.hidden:
        sandbox = replace(sandbox, hidden=(*sandbox.hidden, exchange))
    found = {}
    with tempfile.TemporaryDirectory(prefix="gradacc-selftest-") as sockets:
        give_to_sandbox(Path(sockets))
        command = [*PYTHON, "-c", _PROBE, *map(str, sandbox.hidden)]
        # Started together, answered in turn: the two probes overlap.
        kernel = Running(sandbox, command, shared=(Path(sockets),))  # as SandboxKernelManager
        recheck = Running(sandbox, command)  # as run_exercise
        for kind, running in (("kernel", kernel), ("re-check", recheck)):
            found[kind] = _judge(kind, running.answer(b"", 60))
    return found


def _judge(kind: str, found: dict) -> dict:
    if "error" in found:
        raise SandboxError(
            f"bubblewrap is installed but the {kind} sandbox's self-test failed: "
            f"{found['error']}.\nOn Ubuntu 24.04+ unprivileged user namespaces may be "
            "restricted by AppArmor (sysctl kernel.apparmor_restrict_unprivileged_userns); "
            "run as a user allowed to use bwrap, or pass --unsafe-no-sandbox explicitly."
        )
    problems = [
        text
        for bad, text in [
            (not found.get("wrote_scratch"), "cannot write its scratch folder"),
            (not found.get("devices"), "cannot read /dev/urandom"),
            (found.get("network") is not False, "can open a network connection"),
            (found.get("sees") != [], f"can see {found.get('sees')}"),
            (found.get("userns") is not False, "can create a user namespace"),
            (found.get("cwd_on_path") != [], "has its working folder on sys.path"),
            (found.get("uid") == 0, "runs student code as root"),
        ]
        if bad
    ]
    if problems:
        raise SandboxError(f"the {kind} sandbox's self-test failed: it " + "; ".join(problems))
    return found
