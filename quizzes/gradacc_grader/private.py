"""What holds answers or grades is the instructor's alone, whatever their umask.

A course folder holds the answers (`source/`: solutions and hidden tests; `keys/`; the secret)
and the students' work and grades (`submitted/`, `autograded/`, `feedback/`, `exports/`,
`gradebook.db`; `results/` of a batch run). Under the usual umask 022 everything nbgrader and
the grader write is readable by every user of the machine. So:

- gradacc-build and gradacc-grade write under the umask 077 (`private_umask`): new files
  0600, new folders 0700; and they make a course's private parts so when they start
  (`make_course_private`), which repairs a course made before;
- the course's `nbgrader_config.py` calls `use_private_umask()`, so every nbgrader command run
  in the course (autograde, generate_feedback, export, formgrader) does the same;
- nbgrader sets its own modes on the files it writes (`permissions`: 444 for autograded copies,
  644 for feedback); `gradacc_grader.settings` makes them 400 and 600.

`release/` stays readable: it is what students get.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

PRIVATE_UMASK = 0o077
# What a course folder holds that only the instructor may read (the top-level names).
PRIVATE = (
    "instructor.secret",
    "keys",
    "source",
    "submitted",
    "autograded",
    "feedback",
    "exports",
    "results",
    "gradebook.db",
    "certificates.sqlite",
    "grades.csv",
    "sample_class_expected.csv",
    ".nbgrader.log",
)


@contextlib.contextmanager
def private_umask():
    """Within the block, this process creates files 0600 and folders 0700; the umask is put back.

    >>> import tempfile
    >>> with private_umask():
    ...     path = Path(tempfile.mkdtemp()) / "grades.csv"
    ...     _ = path.write_text("ada,10")
    >>> oct(path.stat().st_mode & 0o777)
    '0o600'
    """
    before = os.umask(PRIVATE_UMASK)
    try:
        yield
    finally:
        os.umask(before)


def use_private_umask() -> int:
    """Set THIS PROCESS's umask to 077 for good; returns the old one.

    A course's nbgrader_config.py calls it: nbgrader commands are processes of their own.
    """
    return os.umask(PRIVATE_UMASK)


def make_private(path: Path) -> None:
    """Take every permission of group and others from `path` and all it holds; links are left.

    A folder becomes 0700 (its owner's modes are kept otherwise: a read-only file stays
    read-only).

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp()) / "source"
    >>> (folder / "faq").mkdir(parents=True)
    >>> _ = (folder / "faq" / "faq.ipynb").write_text("{}")
    >>> (folder / "faq" / "faq.ipynb").chmod(0o644)
    >>> make_private(folder)
    >>> [oct(p.stat().st_mode & 0o777) for p in (folder, folder / "faq" / "faq.ipynb")]
    ['0o700', '0o600']
    """
    path = Path(path)
    if path.is_symlink() or not path.exists():
        return
    _restrict(path)
    # a list of folders still to visit, not recursion: a student's submission may nest
    # folders deeper than Python's recursion limit (os.walk recurses)
    pending = [path] if path.is_dir() else []
    while pending:
        folder = pending.pop()
        try:
            entries = list(folder.iterdir())
        except OSError:  # a path longer than the system takes: nothing to read, nothing shown
            continue
        for entry in entries:
            if entry.is_symlink():
                continue
            with contextlib.suppress(OSError):
                _restrict(entry)
                if entry.is_dir():
                    pending.append(entry)


def _restrict(path: Path) -> None:
    mode = stat.S_IMODE(path.lstat().st_mode)
    wanted = 0o700 if path.is_dir() else mode & 0o700
    if mode != wanted:
        path.chmod(wanted)


def make_course_private(course: Path) -> None:
    """Make every private part of a course folder (PRIVATE) private, as gradacc commands start."""
    for name in PRIVATE:
        make_private(Path(course) / name)
