"""Check the system programs `make test` needs, and install them where we can.

`python3 -m tools.system_tools` (the first thing `make test` runs, before the two-minute
install): the browser tests drive Debian's `chromium` and sandboxed grading runs
students' code under `bwrap`. Missing ones are installed with apt-get when we are root
on a machine that has it (a fresh CI machine); otherwise this stops at once with one
line saying what to install, instead of failing ten tests six minutes later.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

NEEDED = {"bwrap": "bubblewrap", "chromium": "chromium"}  # program: Debian package

# How the browser tests start that chromium: Playwright's own browser download cannot reach
# its server here. Headless on a shared machine: no sandbox (root in a container), no GPU, and
# none of Chromium's own requests (updates, sync), so a test sees only the pages' requests.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def missing_programs() -> dict[str, str]:
    """The needed programs that are not on PATH, with the Debian package of each.

    >>> set(missing_programs()) <= set(NEEDED)
    True
    """
    return {program: package for program, package in NEEDED.items() if not shutil.which(program)}


def can_install() -> bool:
    """Whether apt-get can install packages here: it exists and we are root."""
    return shutil.which("apt-get") is not None and hasattr(os, "geteuid") and os.geteuid() == 0


def install(packages: list[str]) -> bool:
    """apt-get install the packages, quietly; True when it worked."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *packages]):
        if subprocess.run(command, env=env).returncode != 0:
            return False
    return True


def main() -> int:
    missing = missing_programs()
    if not missing:
        return 0
    packages = sorted(set(missing.values()))
    if can_install():
        print(f"installing {' and '.join(packages)} (needed by the tests)", flush=True)
        if install(packages) and not missing_programs():
            return 0
    print(
        f"make test needs {' and '.join(sorted(missing))}: install them first, "
        f"e.g. `sudo apt-get install {' '.join(packages)}`",
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
