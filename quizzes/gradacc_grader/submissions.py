"""A submission is regular files in folders, nothing else; every copy of it keeps it so.

nbgrader follows symbolic links wherever it copies a submission: `nbgrader collect`
copies what a link in the exchange points to, with the instructor's rights, and
`autograde` copies `submitted/` into `autograded/` and the feedback. A link to the
source notebook scored full marks; a link to an instructor-only file had its content
copied into the student's feedback. So:

- the grader copies a submission only with `copy_regular_files`, which opens every
  entry without following links and refuses the submission, naming each entry that
  is not a regular file or a folder (a link, a named pipe, a socket, a device);
- `nbgrader collect` uses `KeepLinksCollect` (nbgrader_config.py), which copies a
  link as a link and a pipe or socket as an empty one of its kind, never what they
  point to, so that the grader sees what the student handed in and refuses it.

A submission is also bounded (`SubmissionLimits`): how deep its folders go, how many
entries and bytes it holds, how large and how long its notebooks are. One over a limit
is refused with the reason, for that student alone, before nbgrader parses or copies
it. `nbgrader collect` copies a submission up to one step past a limit, so that the
grader refuses it with the same reason; it refuses outright a folder in the exchange
made by another user than the student it names (see `KeepLinksCollect`).

The time of a submission is the exchange's, never the student's: nbgrader takes it from the
folder's name and the `timestamp.txt` in it, both written by the student's own `nbgrader
submit` (a student backdates them at will). `nbgrader collect` here takes the time the folder
and what it holds last changed (`exchange_time`, their inode change times, which only the
kernel sets) and writes it into `submitted/<student>/<assignment>/timestamp.txt`, which
autograde reads for the late penalty.
"""

from __future__ import annotations

import datetime
import itertools
import json
import os
import pwd
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import ignore_patterns

from gradacc_grader.folders import KINDS, TOO_DEEP, open_folder, remove_tree, unreadable, walk
from gradacc_grader.terminal_text import visible
from gradacc_grader.untrusted_output import is_student_id


@dataclass(frozen=True)
class SubmissionLimits:
    """The most one submission may hold; quizzes/GRADING.md says why each is what it is.

    >>> SubmissionLimits().cells
    1000
    """

    depth: int = 8  # folders inside folders
    entries: int = 200  # files and folders, all together
    total_bytes: int = 50 << 20  # all its files together
    notebook_bytes: int = 8 << 20  # one notebook
    cells: int = 1000  # cells of one notebook


def copy_regular_files(
    source: Path, dest: Path, notebooks_only: bool = False, limits=SubmissionLimits()
) -> list[str]:
    """Copy a submission's files and folders into a new folder `dest`; or why it is refused.

    Returns one line per entry below `source` (whatever its name) that is not a regular
    file or a folder, or the limit it is over; then nothing is copied. No link is ever
    followed, not even `source` itself. `notebooks_only`: copy only the `*.ipynb` files
    at the top.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> (folder / "in").mkdir()
    >>> (folder / "in" / "notes").symlink_to("/etc/passwd")
    >>> copy_regular_files(folder / "in", folder / "out"), (folder / "out").exists()
    (['notes is a symbolic link'], False)
    """
    try:
        top = open_folder(source)
    except OSError as error:  # the folder itself: missing, a link, a pipe, ...
        return [f"the submission {source.name} is {_kind_of(source, error)}"]
    entries: list[tuple[str, str, int | None]] = []
    try:
        try:
            problems = _check(walk(top, limits.depth), limits, entries)
        except OSError as error:  # a folder it may not list, a file gone meanwhile
            problems = [f"the submission could not be read ({error.strerror})"]
        if not problems:
            _copy(entries, dest, notebooks_only)
    finally:
        for _, _, fd in entries:
            if fd is not None:
                os.close(fd)
    return problems


def _check(found, limits: SubmissionLimits, entries: list) -> list[str]:
    """Take the walk's entries into `entries`; what is wrong with them (stops at a limit)."""
    problems, size = [], 0
    for path, kind, fd in found:
        entries.append((path, kind, fd))
        if kind == "file":
            size += os.fstat(fd).st_size
        over = _over_limit(path, kind, fd, len(entries), size, limits)
        if over:
            found.close()
            return [*problems, over]
        if kind not in ("file", "folder"):
            problems.append(f"{path} is {kind}")
    return problems


def _over_limit(path: str, kind: str, fd, count: int, size: int, limits) -> str | None:
    """Why the submission is over a limit once this entry is in, or None."""
    if kind == TOO_DEEP:
        return f"its folders are nested more than {limits.depth} deep ({_short(path)})"
    if count > limits.entries:
        return f"it holds more than {limits.entries} files and folders"
    if size > limits.total_bytes:
        return f"it holds more than {_mib(limits.total_bytes)} of files"
    if kind == "file" and _top_notebook(path):
        if os.fstat(fd).st_size > limits.notebook_bytes:
            return f"{path} is larger than {_mib(limits.notebook_bytes)}"
        cells = count_cells(fd, limits.cells)
        if cells > limits.cells:
            return f"{path} has {cells} cells, more than {limits.cells}"
    return None


def count_cells(fd: int, most: int) -> int:
    """The number of cells of an open notebook file, read only when it may be over `most`.

    Each cell has one "cell_type" key; in the file's JSON, a quote inside a string is
    escaped, so counting `"cell_type"` counts the cells (and any string that is exactly
    cell_type). Only when that count is over `most` is the file parsed to be sure; a
    file that is not JSON counts as 0 here (nbgrader then fails it with its reason).
    """
    data = os.pread(fd, os.fstat(fd).st_size, 0)
    if data.count(b'"cell_type"') <= most:
        return 0
    try:
        cells = json.loads(data).get("cells")
    except (ValueError, RecursionError, AttributeError):
        return 0
    return len(cells) if isinstance(cells, list) else 0


def old_formats(folder: Path) -> list[str]:
    """Each notebook at the top of a submission that is not nbformat 4, and what it is.

    nbgrader upgrades an older notebook as it reads it, and nbformat's v3 upgrade builds a
    heading's `'#' * level`: a 184-byte notebook with level 10**8 took the grader to 8 GB, past
    every size check. So such a notebook is refused before nbgrader reads it. This parse is the
    grading process's, under its own memory limit (gradacc-grade --grader-memory-mb).

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.ipynb").write_text('{"nbformat": 3, "worksheets": []}')
    >>> old_formats(folder)
    ['a.ipynb is nbformat 3, not 4 (open it in Jupyter 7 and save it again)']
    """
    problems = []
    for path in sorted(folder.glob("*.ipynb")):
        if path.is_symlink() or not path.is_file():
            continue  # refused by copy_regular_files already
        try:
            notebook = json.loads(path.read_bytes())
        except (ValueError, RecursionError):
            continue  # not JSON: nbgrader fails it with its reason, and reads nothing more
        version = notebook.get("nbformat") if isinstance(notebook, dict) else None
        if type(version) is not int or version != 4:
            shown = repr(version)[:20]
            problems.append(
                f"{path.name} is nbformat {shown}, not 4 (open it in Jupyter 7 and save it again)"
            )
    return problems


def _short(path: str) -> str:
    return path if len(path) <= 60 else f"{path[:60]}..."


def _mib(size: int) -> str:
    return f"{size / (1 << 20):g} MiB"


def _copy(entries: list, dest: Path, notebooks_only: bool) -> None:
    dest.mkdir(parents=True)
    for path, kind, fd in entries:
        if notebooks_only and not (kind == "file" and _top_notebook(path)):
            continue
        if kind == "file":
            _write(fd, dest / path)
        elif kind == "folder":
            (dest / path).mkdir()


def _top_notebook(path: str) -> bool:
    return "/" not in path and path.endswith(".ipynb")


def _kind_of(path: Path, error: OSError) -> str:
    """What a submission folder that could not be opened as one is."""
    try:
        return KINDS.get(stat.S_IFMT(path.lstat().st_mode), unreadable(error))
    except OSError:
        return unreadable(error)


def _write(fd: int, dest: Path) -> None:
    os.lseek(fd, 0, os.SEEK_SET)
    with os.fdopen(os.dup(fd), "rb") as source, open(dest, "xb") as target:
        shutil.copyfileobj(source, target)


def copy_as_is(source: Path, dest: Path, ignore=None, limits=SubmissionLimits()) -> str | None:
    """Copy a folder the way it is: regular files with their content, a link as the same
    link, a named pipe or socket as an empty one of its kind; no link is ever followed.

    `ignore(folder, names) -> names to skip`, as for shutil.copytree. The copy stops one
    step past a limit (a folder one level too deep, left empty; one entry too many; the
    file that crosses the size limit), so that the grader refuses it with that reason.
    Returns why it stopped early, or None.
    """
    if source.is_symlink() or not source.is_dir():  # the whole submission: the grader refuses it
        _recreate(source, dest)
        return None
    dest.mkdir(parents=True)
    skipped: set[str] = set()
    count, size = 0, 0
    found = walk(open_folder(source), limits.depth)
    for path, kind, fd in found:
        parent, name = os.path.split(path)
        if ignore and (parent in skipped or name in ignore(str(source / parent), [name])):
            skipped.add(path)
        elif kind in ("folder", TOO_DEEP):
            (dest / path).mkdir()
        elif kind == "file":
            size += os.fstat(fd).st_size
            _write(fd, dest / path)
        else:
            _recreate(source / path, dest / path)
        if fd is not None:
            os.close(fd)
        count += path not in skipped
        why = _stop_copying(kind, count, size, limits)
        if why:
            found.close()
            return why
    return None


def _stop_copying(kind: str, count: int, size: int, limits: SubmissionLimits) -> str | None:
    if kind == TOO_DEEP:
        return f"folders nested more than {limits.depth} deep"
    if count > limits.entries:
        return f"more than {limits.entries} files and folders"
    if size > limits.total_bytes:
        return f"more than {_mib(limits.total_bytes)} of files"
    return None


def _recreate(source: Path, dest: Path) -> None:
    """An entry of the same kind with nothing in it: a link, a named pipe, a socket, a file."""
    mode = source.lstat().st_mode
    if stat.S_ISLNK(mode):
        os.symlink(os.readlink(source), dest)
    elif stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        os.mknod(dest, stat.S_IFMT(mode) | 0o600)
    elif stat.S_ISREG(mode):
        dest.touch()  # a file where a folder was expected
    # a device: left out (students cannot make one)


def exchange_time(path: Path, most: int = SubmissionLimits.entries + 1) -> datetime.datetime:
    """When a folder of the exchange last changed, in UTC without a zone (as nbgrader's times).

    The latest inode change time (ctime) of the folder and of what it holds (at most `most`
    entries; links are not followed). A student chooses a file's name, content and modification
    time (`touch -d`); its ctime is set by the kernel to the time of every change, and no user
    can set it back.
    """
    latest, seen, folders = os.lstat(path).st_ctime, 0, [os.fspath(path)]
    while folders and seen < most:
        try:
            with os.scandir(folders.pop()) as entries:
                found = list(itertools.islice(entries, most - seen))
        except OSError:  # a folder it may not read: the time of what it can
            continue
        for entry in found:
            seen += 1
            latest = max(latest, entry.stat(follow_symlinks=False).st_ctime)
            if entry.is_dir(follow_symlinks=False):
                folders.append(entry.path)
    return datetime.datetime.fromtimestamp(latest, datetime.UTC).replace(tzinfo=None)


def write_timestamp(submission: Path, when: datetime.datetime) -> None:
    """Write `when` as the submission's timestamp.txt, in nbgrader's format, in place of the
    student's (a link or a folder of that name is removed, never followed)."""
    if submission.is_symlink() or not submission.is_dir():
        return  # a link or a pipe handed in as the submission: gradacc-grade refuses it
    target = submission / "timestamp.txt"
    if target.is_dir() and not target.is_symlink():
        remove_tree(target)
    elif target.is_symlink() or target.exists():
        target.unlink()
    with open(target, "x", encoding="utf-8") as file:  # "x": never through a link
        file.write(when.strftime("%Y-%m-%d %H:%M:%S.%f UTC"))


class KeepLinksCollect(ExchangeCollect):
    """`nbgrader collect` that copies links, pipes and sockets as such, never their targets,
    copies a submission only up to its limits, and never takes a folder in the exchange
    made by another user than the student it names. A submission's time is the exchange's
    (`exchange_time`), written into its timestamp.txt in submitted/.

    nbgrader's own collect only warns about such a folder (CollectApp.check_owner) and
    then replaces that student's submission with it. Here it is refused with an error
    in the log, and the student's own newest submission is collected instead (if they
    made one); what is in submitted/ stays as it is. The folder's owner must be the
    student's user (same name) or the instructor running collect. With
    `--ExchangeCollect.check_owner=False` (students without Unix users of their own) no
    owner is checked, as in nbgrader.
    """

    def _path_to_record(self, path):
        # nbgrader's record, with the exchange's time: nbgrader parses the time in the folder's
        # name, which the student wrote (and a name that is no time stopped the whole collect)
        filename = os.path.basename(path)
        record = {
            "username": filename.rsplit("+", 3)[0],  # as nbgrader splits it: ids may hold '+'
            "filename": filename,
            "timestamp": exchange_time(Path(path)),
        }
        record["foreign"] = self._not_a_student(record["username"]) or self._made_by_another(
            path, record["username"]
        )
        if record["foreign"]:
            # the folder's name is the student's choice: its control characters are shown
            self.log.error(
                "refused %s: %s; the submission of %s already in submitted/ (if any) is "
                "kept as it is",
                visible(record["filename"]),
                record["foreign"],
                visible(record["username"]),
            )
        return record

    @staticmethod
    def _not_a_student(name: str) -> str | None:
        """Why the name a folder of the exchange gives is not a student id (None if it is)."""
        if is_student_id(name):
            return None
        return "the student id it names is not a plain name (letters, digits, . _ - @)"

    def _sort_by_timestamp(self, records):
        """Newest first, a student's own submissions before any made by someone else."""
        own = [r for r in records if not r["foreign"]]
        foreign = [r for r in records if r["foreign"]]
        return super()._sort_by_timestamp(own) + super()._sort_by_timestamp(foreign)

    def copy_files(self):
        """Collect all but the submissions made by another user (refused above)."""
        self.src_records = [r for r in self.src_records if not r["foreign"]]
        super().copy_files()

    def _made_by_another(self, path: str, student: str) -> str | None:
        """Why the folder is not the student's own (None if it is, or if not checked)."""
        if not self.check_owner:
            return None
        owner = os.lstat(path).st_uid
        try:
            if owner in (os.geteuid(), pwd.getpwnam(student).pw_uid):
                return None
        except KeyError:  # the student has no user of that name here
            if owner == os.geteuid():
                return None
        try:
            name = pwd.getpwuid(owner).pw_name
        except KeyError:
            name = f"uid {owner}"
        return f"it was made by {name}, not by {student}"

    def do_copy(self, src, dest, log=None):
        """Copy one submission from the exchange into submitted/ (see copy_as_is)."""
        coursedir = self.coursedir
        ignore = ignore_patterns(
            exclude=coursedir.ignore,
            include=coursedir.include,
            max_file_size=coursedir.max_file_size,
            log=self.log,
        )
        stopped = copy_as_is(Path(src), Path(dest), ignore)
        write_timestamp(Path(dest), exchange_time(Path(src)))
        if stopped:
            self.log.error(
                "%s holds %s: copied only that far; gradacc-grade will refuse it", src, stopped
            )
