"""A submission is regular files in folders: anything else is refused, each entry named.

Unit tests of gradacc_grader.submissions on folders made here (no nbgrader run); the
whole path through `nbgrader collect` and `gradacc-grade` is in test_grading.py.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from gradacc_grader.submissions import copy_as_is, copy_regular_files


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
