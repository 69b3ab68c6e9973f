"""Build the course site: `python -m tools.site` (what `make site` runs), then open site/index.html.

1. Run every lesson (notebooks/0*.ipynb) headless with tools/notebooks.py, the course's one
   runner, the one the notebook tests use, and print the time each lesson took. (MyST-NB can
   execute too, but it would be a second runner, and its cache keys on the cells' source: a
   change in gradacc_lessons would leave stale outputs on the site.) With `--executed FOLDER`,
   the lessons are taken as already executed from FOLDER instead (the site test passes the
   runs the lesson tests made, so a test run executes each lesson once).
2. Stage the executed lessons beside docs/'s pages and the instructors' guides (quizzes/*.md),
   at the paths they have in the repository, so that a lesson's launch buttons open its file.
3. Render them with Sphinx and MyST-NB (docs/conf.py); any Sphinx warning fails the build.
   Twice: the English site into site/, and its Yorùbá edition, translated by the gettext
   catalogues of locales/yo (tools/catalogues.py), into site/yo/.

With `--unexecuted` the lessons are staged as the repository holds them, without running them:
their text, in both editions, in seconds (a translator's preview; the front page's tests).
"""

from __future__ import annotations

import argparse
import posixpath
import re
import shutil
import sys
from pathlib import Path

import nbformat

from gradacc_lessons.display import WIDGET_VIEW
from gradacc_lessons.lessons import LESSONS
from tools.course_config import Repository, course_repository
from tools.notebooks import execute_notebook

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
# A lesson asks for a guess in the text above a cell whose output is the answer ("Guess before
# you run the cell"). A notebook shows that output only once the cell runs; a page shows it at
# once, right under the question: the page folds it, to be opened after the guess.
GUESS_FIRST = "Guess before you run"
# The Yorùbá summary a lesson holds as one cell after its English one (gradacc_lessons/quiz/
# yoruba_summaries.py), for a notebook reader: on the site, each edition shows one summary.
_YORUBA_SUMMARY = re.compile(r'\A<div lang="yo">\s*### Àkótán')
_ENGLISH_SUMMARY = re.compile(r"^## (Summary|Where next)$", re.M)
# A markdown link (not an image) to a relative path: ](path) or ](path#anchor)
_RELATIVE_LINK = re.compile(r"(?<!!)(\[[^\]]*\]\()(?![a-z]+:|#)([^)#\s]+)(#[^)\s]*)?\)")


# A lesson's exercise check (`name.check(your_function)`): a page cannot run it, so it shows
# what the check does, with the hint and the reference solution folded.
EXERCISE_CHECK = re.compile(r"-exercise-[\w-]+-check$")


def exercise_output(check_source: str, where: str):
    """The page's output of an exercise's check cell: `static_html` of the exercise it checks."""
    from nbformat.v4 import new_output

    from gradacc_lessons.exercises import EXERCISES
    from gradacc_lessons.exercises.runner import static_html

    checked = re.fullmatch(r"\s*\w+\.check\((\w+)\)\s*", check_source)
    found = [e for e in EXERCISES.values() if checked and e.reference.__name__ == checked[1]]
    if not found:
        raise ValueError(f"{where}: {check_source!r} checks no exercise of gradacc_lessons")
    page = static_html(found[0])
    return new_output("display_data", {"text/html": page, "text/plain": "exercise"})


def lesson_paths(root: Path = ROOT) -> list[Path]:
    """The lessons' notebooks, in reading order, as `gradacc_lessons.lessons` declares them.

    >>> lesson_paths()[0].name
    '01_accumulation_is_a_full_batch.ipynb'
    """
    return [root / "notebooks" / lesson.notebook for lesson in LESSONS]


def prepare_for_site(notebook, name: str):
    """Ready an executed lesson for a page read without a kernel; return the notebook.

    A cell the notebook shows collapsed (the setup cell) is collapsed on the page too. A
    widget output must carry a text/html fallback (`display.show_widget` adds it): a page
    cannot draw the live widget, so without one the reader would see an empty area. A link
    to a page of docs/ (`../docs/sources.md`) points where the site stages it (`../sources.md`).
    The output of a cell the text above asks the reader to guess (`GUESS_FIRST`) is folded.
    The Yorùbá summary cell goes where the lesson has an English summary: the Yorùbá edition
    shows that one translated (locales/yo), so each edition shows one summary.

    >>> from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
    >>> cell = new_code_cell("quiz()", metadata={"jupyter": {"source_hidden": True}})
    >>> cell.outputs = [new_output("display_data", {WIDGET_VIEW: {}, "text/plain": "VBox()"})]
    >>> prepare_for_site(new_notebook(cells=[cell]), "08_quiz.ipynb")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: 08_quiz.ipynb, cell 0: a widget without a static fallback; display it with ...
    >>> cell.outputs[0].data["text/html"] = "<p>the quiz</p>"
    >>> prepare_for_site(new_notebook(cells=[cell]), "08_quiz.ipynb").cells[0].metadata.tags
    ['hide-input']
    >>> text = new_markdown_cell("[sources](../docs/sources.md#lesson-6)")
    >>> prepare_for_site(new_notebook(cells=[text]), "06_x.ipynb").cells[0].source
    '[sources](../sources.md#lesson-6)'
    >>> ask = new_markdown_cell("How many steps? Guess before you run the cell.")
    >>> guessed = prepare_for_site(new_notebook(cells=[ask, new_code_cell("3")]), "07_x.ipynb")
    >>> guessed.cells[1].metadata.tags
    ['hide-output']
    >>> summaries = [new_markdown_cell("## Summary\\n\\n- sum"), new_markdown_cell(
    ...     '<div lang="yo">\\n\\n### Àkótán ní Yorùbá\\n\\n- àpapọ̀\\n\\n</div>')]
    >>> [c.source[:10] for c in prepare_for_site(new_notebook(cells=summaries), "01_x").cells]
    ['## Summary']
    >>> len(prepare_for_site(new_notebook(cells=summaries[1:]), "04_x.ipynb").cells)
    1
    """
    drop_duplicate_summary(notebook)
    asks_a_guess = False
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code" and EXERCISE_CHECK.search(cell.get("id", "")):
            cell.outputs = [exercise_output(cell.source, f"{name}, cell {index}")]
        if cell.cell_type == "code" and asks_a_guess:
            tags = cell.metadata.setdefault("tags", [])
            if "hide-output" not in tags:  # MyST-NB folds the output, with a button to open it
                tags.append("hide-output")
        asks_a_guess = cell.cell_type == "markdown" and GUESS_FIRST in cell.source
        if cell.cell_type == "markdown":  # docs/'s pages are staged at the site's root
            cell.source = cell.source.replace("](../docs/", "](../")
            # the guide's cell (tools/guide.py) links the lessons' notebooks: here, their pages
            cell.source = re.sub(r'href="(0\d_[\w-]+)\.ipynb"', r'href="\1.html"', cell.source)
        if cell.metadata.get("jupyter", {}).get("source_hidden"):
            tags = cell.metadata.setdefault("tags", [])
            if "hide-input" not in tags:  # MyST-NB's name for a folded cell source
                tags.append("hide-input")
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_VIEW in data and "text/html" not in data:
                raise ValueError(
                    f"{name}, cell {index}: a widget without a static fallback; display it "
                    "with gradacc_lessons.display.show_widget(widget, fallback_html)"
                )
    notebook.metadata.pop("widgets", None)  # the live widgets' state: nothing reads it here
    return notebook


def drop_duplicate_summary(notebook) -> None:
    """Remove the lesson's Yorùbá summary cell where it has an English summary (which the
    Yorùbá edition and notebooks show translated): one summary per page, per language."""
    if any(_ENGLISH_SUMMARY.search(c.source) for c in notebook.cells if c.cell_type == "markdown"):
        notebook.cells = [c for c in notebook.cells if not _YORUBA_SUMMARY.match(c.source)]


def link_repository_files(markdown: str, path: str, pages: set[str], repository: Repository) -> str:
    """Point the links of the guide at `path` to files that are no page of the site at GitHub.

    A guide links to the repository's files (`course/nbgrader_config.py`); the site holds
    only its `pages` (paths from the root), so those links open the file in the repository.

    >>> repo = Repository("https://github.com/me/c", "main")
    >>> text = "[guide](GRADING.md#sandbox), [cfg](course/nbgrader_config.py), [up](../README.md)"
    >>> print(link_repository_files(text, "quizzes/README.md", {"quizzes/GRADING.md"}, repo))
    ... # doctest: +NORMALIZE_WHITESPACE
    [guide](GRADING.md#sandbox), [cfg](https://github.com/me/c/blob/main/quizzes/course/nbgrader_config.py),
    [up](https://github.com/me/c/blob/main/README.md)
    """

    def relink(match: re.Match) -> str:
        target = posixpath.normpath(posixpath.join(posixpath.dirname(path), match[2]))
        if target in pages:
            return match[0]
        return f"{match[1]}{repository.url}/blob/{repository.branch}/{target}{match[3] or ''})"

    return _RELATIVE_LINK.sub(relink, markdown)


def stage(source: Path) -> None:
    """Copy docs/'s pages and the instructors' guides into `source`, at their repository paths."""
    ignore = shutil.ignore_patterns("conf.py", "_static", "_templates", "__pycache__")
    shutil.copytree(DOCS, source, ignore=ignore)
    guides = [guide.relative_to(ROOT).as_posix() for guide in sorted(ROOT.glob("quizzes/*.md"))]
    (source / "quizzes").mkdir(exist_ok=True)
    for guide in guides:
        text = link_repository_files(
            (ROOT / guide).read_text(), guide, set(guides), course_repository()
        )
        (source / guide).write_text(text)


def execute_lessons(source: Path, executed: Path | None = None) -> None:
    """Run each lesson and write it, ready for the site, to `source`/notebooks/.

    With `executed`, a folder of the lessons already executed (same file names), take them
    from there instead of running them; a lesson missing from it is a ValueError.
    """
    (source / "notebooks").mkdir(parents=True, exist_ok=True)
    for path in lesson_paths():
        if executed is None:
            run = execute_notebook(path)
            notebook = run.notebook
            print(f"{path.name:<45} executed in {run.seconds:5.1f} s", flush=True)
        elif (executed / path.name).is_file():
            notebook = nbformat.read(executed / path.name, as_version=4)
        else:
            raise ValueError(f"--executed {executed}: no {path.name} there; execute every lesson")
        nbformat.write(prepare_for_site(notebook, path.name), source / "notebooks" / path.name)


def stage_lessons_unexecuted(source: Path) -> None:
    """Write each lesson as the repository holds it (no outputs), ready for the site, to
    `source`/notebooks/: the text alone, for the catalogues, a translator's preview and the
    tests of the front page and the editions (a build in seconds instead of minutes)."""
    (source / "notebooks").mkdir(parents=True, exist_ok=True)
    for path in lesson_paths():
        notebook = prepare_for_site(nbformat.read(path, as_version=4), path.name)
        nbformat.write(notebook, source / "notebooks" / path.name)


def render(source: Path, work: Path, out: Path, language: str = "en") -> int:
    """Render the staged `source` to HTML in `out` with Sphinx; Sphinx's exit code.

    `language` "yo": the Yorùbá edition, from the catalogues in locales/yo (tools/catalogues.py).
    """
    from sphinx.cmd.build import build_main

    html = work / f"html-{language}"  # MyST-NB writes images beside its output: keep in `work`
    edition = [] if language == "en" else ["-D", f"language={language}"]
    status = build_main(
        ["-b", "html", "-W", "--keep-going", "-q", "-c", str(DOCS), *edition]
        + ["-d", str(work / f"doctrees-{language}"), str(source), str(html)]
    )
    if status == 0:
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(html, out)
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "site", help="the site's folder")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "site", help="scratch folder")
    parser.add_argument(
        "--executed", type=Path, help="a folder of the lessons already executed: not run again"
    )
    parser.add_argument(
        "--unexecuted", action="store_true", help="the lessons' text only, not run: seconds"
    )
    args = parser.parse_args(argv)
    shutil.rmtree(args.work, ignore_errors=True)
    source = args.work / "source"
    stage(source)
    if args.unexecuted:
        stage_lessons_unexecuted(source)
    else:
        execute_lessons(source, args.executed)
    status = render(source, args.work, args.out)
    if status == 0:  # the Yorùbá edition, under site/yo/
        status = render(source, args.work, args.out / "yo", "yo")
    if status == 0:
        print(f"open {args.out / 'index.html'} (Yorùbá: {args.out / 'yo' / 'index.html'})")
    return status


if __name__ == "__main__":
    sys.exit(main())
