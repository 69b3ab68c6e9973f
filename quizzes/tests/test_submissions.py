"""A submission is regular files in folders: anything else is refused, each entry named.

Unit tests of gradacc_grader.submissions on folders made here (no nbgrader run); the
whole path through `nbgrader collect` and `gradacc-grade` is in test_grading.py.
"""

from __future__ import annotations

import json
import os
import socket
import tracemalloc
from pathlib import Path

import pytest
from gradacc_grader.folders import remove_tree
from gradacc_grader.submissions import SubmissionLimits, copy_as_is, copy_regular_files


def _submission(folder: Path) -> Path:
    """A folder as a student could hand it in: a notebook, a data file in a subfolder."""
    folder.mkdir()
    (folder / "quiz.ipynb").write_text('{"cells": []}')
    (folder / "data").mkdir()
    (folder / "data" / "numbers.csv").write_bytes(b"1,2,3\n")
    return folder


def test_regular_files_and_folders_are_copied_as_they_are(tmp_path):
    source = _submission(tmp_path / "in")
    assert copy_regular_files(source, tmp_path / "out") == []
    assert (tmp_path / "out" / "quiz.ipynb").read_text() == '{"cells": []}'
    assert (tmp_path / "out" / "data" / "numbers.csv").read_bytes() == b"1,2,3\n"


def test_only_top_level_notebooks_reach_a_kernel(tmp_path):
    source = _submission(tmp_path / "in")
    (source / "torch.py").write_text("raise SystemExit('a module named like a library')")
    assert copy_regular_files(source, tmp_path / "out", notebooks_only=True) == []
    assert sorted(os.listdir(tmp_path / "out")) == ["quiz.ipynb"]


def test_every_entry_that_is_not_a_regular_file_is_named_and_nothing_is_copied(tmp_path):
    secret = tmp_path / "instructor-only.txt"
    secret.write_text("the answer key")
    secret.chmod(0o600)
    source = _submission(tmp_path / "in")
    (source / "notes.txt").symlink_to(secret)
    (source / "data" / "solutions").symlink_to(tmp_path)
    os.mkfifo(source / "pipe")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(source / "sock"))
    try:
        problems = copy_regular_files(source, tmp_path / "out")
    finally:
        listener.close()
    assert problems == [
        "data/solutions is a symbolic link",
        "notes.txt is a symbolic link",
        "pipe is a named pipe",
        "sock is a socket",
    ]
    assert not (tmp_path / "out").exists()


def test_a_submission_folder_that_is_a_link_is_refused(tmp_path):
    real = _submission(tmp_path / "real")
    (tmp_path / "linked").symlink_to(real)
    problems = copy_regular_files(tmp_path / "linked", tmp_path / "out")
    assert problems == ["the submission linked is a symbolic link"]
    assert not (tmp_path / "out").exists()


def test_collect_copies_links_and_pipes_as_such_never_their_targets(tmp_path):
    secret = tmp_path / "instructor-only.txt"
    secret.write_text("the answer key")
    source = _submission(tmp_path / "inbound")
    (source / "notes.txt").symlink_to(secret)
    os.mkfifo(source / "pipe")
    (source / ".ipynb_checkpoints").mkdir()
    (source / ".ipynb_checkpoints" / "quiz-checkpoint.ipynb").write_text("{}")

    def ignore(folder, names):
        return [name for name in names if name == ".ipynb_checkpoints"]

    copy_as_is(source, tmp_path / "submitted", ignore)
    copied = tmp_path / "submitted"
    assert os.readlink(copied / "notes.txt") == str(secret)  # the same link, not the text
    assert (copied / "pipe").is_fifo()
    assert not (copied / ".ipynb_checkpoints").exists()
    assert (copied / "data" / "numbers.csv").read_bytes() == b"1,2,3\n"
    # and the grader then refuses it, naming both
    assert copy_regular_files(copied, tmp_path / "graded") == [
        "notes.txt is a symbolic link",
        "pipe is a named pipe",
    ]


@pytest.mark.parametrize("kind", ["file", "folder"])
def test_collect_keeps_a_submission_that_is_itself_a_link_a_link(tmp_path, kind):
    target = tmp_path / "target"
    target.mkdir() if kind == "folder" else target.write_text("x")
    (tmp_path / "inbound").symlink_to(target)
    copy_as_is(tmp_path / "inbound", tmp_path / "submitted")
    assert os.readlink(tmp_path / "submitted") == str(target)
    assert copy_regular_files(tmp_path / "submitted", tmp_path / "graded") == [
        "the submission submitted is a symbolic link"
    ]


def test_collect_keeps_a_submission_that_is_a_named_pipe_a_pipe(tmp_path):
    os.mkfifo(tmp_path / "inbound")  # nbgrader's own collect fails the whole class on it
    copy_as_is(tmp_path / "inbound", tmp_path / "submitted")
    assert (tmp_path / "submitted").is_fifo()
    assert copy_regular_files(tmp_path / "submitted", tmp_path / "graded") == [
        "the submission submitted is a named pipe"
    ]


@pytest.fixture
def nested():
    """nested(top, depth): `depth` folders, one inside the other, under `top`.

    Removed with remove_tree after the test: pytest's own clean-up of its temporary
    folders (shutil.rmtree) would raise RecursionError, in this and later test runs.
    """
    made = []

    def make(top: Path, depth: int) -> Path:
        fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
        for _ in range(depth):  # made relative to the last one: no path grows long
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        os.close(fd)
        made.append(top)
        return top

    yield make
    for top in made:
        if top.exists():
            remove_tree(top)


def test_folders_nested_past_the_limit_are_refused_without_recursion(tmp_path, nested):
    """1,100 nested folders made the grader's own walk raise RecursionError."""
    source = nested(_submission(tmp_path / "in"), 1100)
    problems = copy_regular_files(source, tmp_path / "out")
    deep = "/".join(["d"] * (SubmissionLimits.depth + 1))
    assert problems == [f"its folders are nested more than 8 deep ({deep})"]
    assert not (tmp_path / "out").exists()
    within = nested(_submission(tmp_path / "ok"), SubmissionLimits.depth)
    assert copy_regular_files(within, tmp_path / "copied") == []


def test_a_submission_with_too_many_entries_or_bytes_is_refused(tmp_path):
    many = _submission(tmp_path / "many")  # three entries already
    for index in range(SubmissionLimits.entries - 2):
        (many / f"{index}.txt").write_text("x")
    assert copy_regular_files(many, tmp_path / "out") == [
        f"it holds more than {SubmissionLimits.entries} files and folders"
    ]
    big = _submission(tmp_path / "big")
    for name in ("a.bin", "b.bin"):  # each under the limit, both together over it
        (big / name).write_bytes(bytes(SubmissionLimits.total_bytes // 2 + 1))
    assert copy_regular_files(big, tmp_path / "out") == ["it holds more than 50 MiB of files"]
    assert not (tmp_path / "out").exists()


def test_a_notebook_too_large_or_with_too_many_cells_is_refused_before_it_is_parsed(tmp_path):
    large = _submission(tmp_path / "large")
    (large / "quiz.ipynb").write_bytes(b" " * (SubmissionLimits.notebook_bytes + 1))
    assert copy_regular_files(large, tmp_path / "out") == ["quiz.ipynb is larger than 8 MiB"]
    # 100,000 cells in about 5 MiB: nbgrader once took 780 MiB and 1.5 min on it
    many = _submission(tmp_path / "many")
    cell = {"cell_type": "markdown", "metadata": {}, "source": ""}
    notebook = {"cells": [cell] * 100_000, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (many / "quiz.ipynb").write_text(json.dumps(notebook, separators=(",", ":")))
    tracemalloc.start()
    problems = copy_regular_files(many, tmp_path / "out")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert problems == ["quiz.ipynb has 100000 cells, more than 1000"]
    assert peak < 100 << 20, peak  # the file parsed once at most, nothing more
    # a string that is exactly "cell_type" is no cell: counted only to be sure
    fine = _submission(tmp_path / "fine")
    text = {"cell_type": "markdown", "metadata": {}, "source": ["cell_type"] * 2000}
    (fine / "quiz.ipynb").write_text(json.dumps({"cells": [text], "metadata": {}}))
    assert copy_regular_files(fine, tmp_path / "fine-out") == []


def test_collect_copies_a_deep_submission_only_one_step_past_the_limit(tmp_path, nested):
    source = nested(_submission(tmp_path / "inbound"), 1100)
    stopped = copy_as_is(source, tmp_path / "submitted")
    assert stopped == "folders nested more than 8 deep"
    nested(tmp_path / "submitted", 0)  # removed after the test, like the source
    copied = tmp_path / "submitted" / "/".join(["d"] * (SubmissionLimits.depth + 1))
    assert copied.is_dir() and not list(copied.iterdir())
    assert copy_regular_files(tmp_path / "submitted", tmp_path / "graded")[0].startswith(
        "its folders are nested more than 8 deep"
    )


def test_remove_tree_removes_any_depth_and_never_follows_a_link(tmp_path, nested):
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "file.txt").write_text("not the student's")
    top = tmp_path / "scratch"
    top.mkdir()
    nested(top, 2100)  # past Python's recursion limit, and PATH_MAX (4096 bytes)
    (top / "d" / "link").symlink_to(keep)
    (top / "locked").mkdir()
    (top / "locked" / "inner").mkdir()
    (top / "locked").chmod(0o000)
    remove_tree(top)
    assert not top.exists() and (keep / "file.txt").read_text() == "not the student's"
