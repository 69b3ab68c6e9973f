"""Run a command with resource limits, or as another user; runs INSIDE the sandbox.

A plain script (stdlib only, `python -I -S jail.py`), so it starts in milliseconds:

    python jail.py --cpu=120 --memory=4294967296 --nproc=64 --fsize=268435456 -- command ...
    python jail.py --uid=65534 --gid=65534 -- command ...   (started as root: become nobody)

Limits are set in the process that then becomes the student's code, so that code
cannot raise them again.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys

LIMITS = {
    # CPU seconds: once spent, SIGKILL (soft and hard limit are the same, and Linux sends
    # SIGKILL at the hard one), even if SIGINT is ignored.
    "cpu": resource.RLIMIT_CPU,
    # Address space: a memory hog gets MemoryError instead of the machine's RAM.
    "memory": resource.RLIMIT_AS,
    # Processes and threads of this user (in the sandbox's user namespace): a fork bomb
    # gets "Resource temporarily unavailable".
    "nproc": resource.RLIMIT_NPROC,
    # Largest file it may write: the scratch folder cannot fill the disk in one go.
    "fsize": resource.RLIMIT_FSIZE,
}


def _parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    if "--" not in argv:
        raise SystemExit("usage: jail.py [--cpu=N ...] [--uid=N --gid=N] -- command ...")
    split = argv.index("--")
    parser = argparse.ArgumentParser(prog="jail.py")
    for name in [*LIMITS, "uid", "gid"]:
        parser.add_argument(f"--{name}", type=int)
    return parser.parse_args(argv[:split]), argv[split + 1 :]


def main(argv: list[str]) -> None:
    """Set the limits given, drop to the user given, then become the command."""
    args, command = _parse(argv)
    for name, kind in LIMITS.items():
        value = getattr(args, name)
        if value is not None:
            resource.setrlimit(kind, (value, value))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if args.uid is not None:
        # Started as root: become an unprivileged user for good (real, effective, saved).
        os.setgroups([])
        os.setresgid(args.gid, args.gid, args.gid)
        os.setresuid(args.uid, args.uid, args.uid)
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
