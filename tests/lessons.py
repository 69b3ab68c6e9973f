"""Each lesson executed once per test run, shared by every test that reads it and the site test.

A lesson test module names the kernel values it reads when it is imported
(`register(name, expressions)`); pytest imports every test module before any test runs, in
each xdist worker too, so the one execution of a lesson evaluates every expression any test
of the run asks for. `LessonRuns.get` gives the executed notebook and its values.

Where the runs are kept, and why there:
- In the run's own temporary folder (pytest's basetemp; under xdist, the folder above the
  workers' own, which they share), so a run never reuses another run's execution: every
  `make test` executes every lesson it tests, on this machine, today. pytest keeps the last
  three runs' folders and deletes older ones.
- Each file is named by the lesson and a hash of its inputs (the notebook and every file of
  gradacc_lessons), so a lesson edited during the run is executed again, not reused.
- Each lesson has a file lock: the first worker to ask executes the lesson, another worker
  asking meanwhile waits for it and reads the result. A failed run is kept too (its error
  is raised again), so a broken lesson costs one execution, not one per test module.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import nbformat
from filelock import FileLock, Timeout

from tools.notebooks import ExecutedNotebook, NotebookError, execute_notebook

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
PACKAGE = ROOT / "gradacc_lessons"

_WANTED: dict[str, set[str]] = defaultdict(set)  # {lesson file name: expressions to evaluate}


def register(name: str, expressions: Iterable[str]) -> None:
    """Ask for `expressions` from the kernel of lesson `name` (a file name in notebooks/)."""
    _WANTED[name].update(expressions)


def inputs_hash(notebook: Path) -> str:
    """A hash of what a lesson's execution depends on in this repository."""
    digest = hashlib.sha256(notebook.read_bytes())
    for path in sorted(PACKAGE.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(path.relative_to(ROOT).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


class LessonRuns:
    """The lessons of `notebooks` executed in this test run, kept in `folder` (shared by the
    xdist workers)."""

    def __init__(self, folder: Path, notebooks: Path = NOTEBOOKS):
        self.folder, self.notebooks = folder, notebooks
        folder.mkdir(parents=True, exist_ok=True)

    def get(
        self, name: str, expressions: Iterable[str] = (), *, wait: bool = True
    ) -> ExecutedNotebook | None:
        """Lesson `name` executed once, with `expressions` among its values.

        Executes it unless this run has already done so with every expression asked for.
        With wait=False, returns None instead of waiting while another worker executes it.
        """
        register(name, expressions)
        wanted = set(expressions)
        stem = Path(name).stem
        lock = FileLock(self.folder / f"{stem}.lock")
        try:
            lock.acquire(timeout=-1 if wait else 0)
        except Timeout:
            return None
        try:
            entry = self.folder / f"{stem}-{inputs_hash(self.notebooks / name)}.json"
            kept = json.loads(entry.read_text()) if entry.exists() else None
            if kept is None or not wanted <= set(kept["expressions"]):
                evaluated = sorted(_WANTED[name] | set(kept["expressions"] if kept else ()))
                kept = _execute(self.notebooks / name, evaluated)
                part = entry.with_suffix(".part")
                part.write_text(json.dumps(kept))
                part.replace(entry)
        finally:
            lock.release()
        if "error" in kept:
            raise NotebookError(kept["error"])
        notebook = nbformat.from_dict(kept["notebook"])
        return ExecutedNotebook(notebook, kept["seconds"], kept["values"], kept["started"])

    def every_lesson(self, names: list[str]) -> dict[str, ExecutedNotebook]:
        """Each of the lessons `names`, taking first those no other worker is executing."""
        runs = {name: self.get(name, wait=False) for name in names}
        return {name: run or self.get(name) for name, run in runs.items()}


def _execute(notebook: Path, expressions: list[str]) -> dict:
    try:
        run = execute_notebook(notebook, values=expressions)
    except NotebookError as error:
        return {"expressions": expressions, "error": str(error)}
    return {
        "expressions": expressions,
        "notebook": run.notebook,
        "seconds": run.seconds,
        "values": run.values,
        "started": run.started,
    }
