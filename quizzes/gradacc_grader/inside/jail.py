"""Run a command with resource limits, as another user when started as root.

Runs INSIDE the bubblewrap sandbox, as a plain script (it imports nothing of the
package, so it starts in milliseconds):

    python jail.py --cpu 120 --memory 4294967296 --nproc 64 --fsize 268435456 \
        [--uid 65534 --gid 65534] -- python -m ipykernel_launcher -f kernel.json

Limits are set before the user is dropped, so the student's code cannot raise them.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys


def _parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    if "--" not in argv:
        raise SystemExit("usage: jail.py [limits] -- command ...")
    split = argv.index("--")
    parser = argparse.ArgumentParser(prog="jail.py")
    for name in ("cpu", "memory", "nproc", "fsize"):
        parser.add_argument(f"--{name}", type=int, required=True)
    parser.add_argument("--uid", type=int)
    parser.add_argument("--gid", type=int)
    return parser.parse_args(argv[:split]), argv[split + 1 :]


def main(argv: list[str]) -> None:
    args, command = _parse(argv)
    limits = {
        # CPU seconds: SIGXCPU (kills the kernel) once spent, even if SIGINT is ignored.
        resource.RLIMIT_CPU: args.cpu,
        # Address space: a memory hog gets MemoryError instead of the machine's RAM.
        resource.RLIMIT_AS: args.memory,
        # Processes and threads of this user: a fork bomb gets "Resource temporarily unavailable".
        resource.RLIMIT_NPROC: args.nproc,
        # Largest file it may write: the scratch folder cannot fill the disk in one go.
        resource.RLIMIT_FSIZE: args.fsize,
        resource.RLIMIT_CORE: 0,
    }
    for kind, value in limits.items():
        resource.setrlimit(kind, (value, value))
    if args.uid is not None:
        # Started as root: become an unprivileged user for good (real, effective, saved).
        os.setgroups([])
        os.setresgid(args.gid, args.gid, args.gid)
        os.setresuid(args.uid, args.uid, args.uid)
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
