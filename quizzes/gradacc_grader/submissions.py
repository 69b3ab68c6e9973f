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
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import ignore_patterns

_KINDS = {
    stat.S_IFLNK: "a symbolic link",
    stat.S_IFIFO: "a named pipe",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
}
_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def copy_regular_files(source: Path, dest: Path, notebooks_only: bool = False) -> list[str]:
    """Copy a submission's files and folders into a new folder `dest`; or why it is refused.

    Returns one line per entry below `source` (whatever its name) that is not a regular
    file or a folder; then nothing is copied. No link is ever followed, not even
    `source` itself. `notebooks_only`: copy only the `*.ipynb` files at the top.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> (folder / "in").mkdir()
    >>> (folder / "in" / "notes").symlink_to("/etc/passwd")
    >>> copy_regular_files(folder / "in", folder / "out"), (folder / "out").exists()
    (['notes is a symbolic link'], False)
    """
    try:
        entries = list(_walk(_open_folder(source, None), ""))
    except OSError as error:  # the folder itself: missing, a link, a pipe, ...
        return [f"the submission {source.name} is {_kind_of(source, error)}"]
    problems = [f"{path} is {kind}" for path, kind, _ in entries if kind not in ("file", "folder")]
    if not problems:
        dest.mkdir(parents=True)
        for path, kind, fd in entries:
            if notebooks_only and not (kind == "file" and _top_notebook(path)):
                continue
            if kind == "file":
                _write(fd, dest / path)
            elif kind == "folder":
                (dest / path).mkdir()
    for _, _, fd in entries:
        if fd is not None:
            os.close(fd)
    return problems


def _top_notebook(path: str) -> bool:
    return "/" not in path and path.endswith(".ipynb")


def _open_folder(path: Path | str, dir_fd: int | None) -> int:
    return os.open(path, _OPEN | os.O_DIRECTORY, dir_fd=dir_fd)


def _walk(folder_fd: int, prefix: str) -> Iterator[tuple[str, str, int | None]]:
    """(relative path, kind, open fd or None) of everything below an open folder.

    Each entry is opened relative to its folder's descriptor with O_NOFOLLOW, and its
    kind taken from the open descriptor: swapping a file for a link meanwhile changes
    nothing. Closes `folder_fd` when done.
    """
    try:
        names = sorted(os.listdir(folder_fd))
        for name in names:
            path = f"{prefix}{name}"
            mode = os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_mode
            if stat.S_IFMT(mode) in _KINDS:  # never opened: a device could do anything
                yield path, _KINDS[stat.S_IFMT(mode)], None
                continue
            try:
                fd = os.open(name, _OPEN, dir_fd=folder_fd)
            except OSError as error:  # ELOOP: it became a link after the stat
                yield path, _unreadable(error), None
                continue
            mode = os.fstat(fd).st_mode
            if stat.S_ISDIR(mode):
                yield path, "folder", None
                yield from _walk(fd, f"{path}/")
            elif stat.S_ISREG(mode):
                yield path, "file", fd
            else:
                os.close(fd)
                yield path, _KINDS.get(stat.S_IFMT(mode), "not a regular file"), None
    finally:
        os.close(folder_fd)


def _kind_of(path: Path, error: OSError) -> str:
    """What a submission folder that could not be opened as one is."""
    try:
        return _KINDS.get(stat.S_IFMT(path.lstat().st_mode), _unreadable(error))
    except OSError:
        return _unreadable(error)


def _unreadable(error: OSError) -> str:
    return "a symbolic link" if error.errno == errno.ELOOP else f"not readable ({error.strerror})"


def _write(fd: int, dest: Path) -> None:
    with os.fdopen(os.dup(fd), "rb") as source, open(dest, "xb") as target:
        shutil.copyfileobj(source, target)


def copy_as_is(source: Path, dest: Path, ignore=None) -> None:
    """Copy a folder the way it is: regular files with their content, a link as the same
    link, a named pipe or socket as an empty one of its kind; no link is ever followed.

    `ignore(folder, names) -> names to skip`, as for shutil.copytree.
    """
    if source.is_symlink() or not source.is_dir():  # the whole submission: the grader refuses it
        _recreate(source, dest)
        return
    dest.mkdir(parents=True)
    skipped: set[str] = set()
    for path, kind, fd in _walk(_open_folder(source, None), ""):
        parent, name = os.path.split(path)
        if ignore and (parent in skipped or name in ignore(str(source / parent), [name])):
            skipped.add(path)
        elif kind == "folder":
            (dest / path).mkdir()
        elif kind == "file":
            _write(fd, dest / path)
        else:
            _recreate(source / path, dest / path)
        if fd is not None:
            os.close(fd)


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


class KeepLinksCollect(ExchangeCollect):
    """`nbgrader collect` that copies links, pipes and sockets as such, never their targets."""

    def do_copy(self, src, dest, log=None):
        """Copy one submission from the exchange into submitted/ (see copy_as_is)."""
        size, most = self.get_size(src), 1000 * self.coursedir.max_dir_size
        if size > most:
            raise RuntimeError(f"Directory size is too big. Size is {size}, maximum is {most}")
        coursedir = self.coursedir
        ignore = ignore_patterns(
            exclude=coursedir.ignore,
            include=coursedir.include,
            max_file_size=coursedir.max_file_size,
            log=self.log,
        )
        copy_as_is(Path(src), Path(dest), ignore)
