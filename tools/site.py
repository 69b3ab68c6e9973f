"""Build the course site: `python -m tools.site` (what `make site` runs), then open site/index.html.

1. Run every lesson (notebooks/0*.ipynb) headless with tools/notebooks.py, the course's one
   runner: the site shows the same outputs the tests check, and the time each lesson took.
2. Stage the executed lessons beside docs/'s pages and the instructors' guides (quizzes/*.md),
   at the paths they have in the repository, so that a lesson's launch buttons open its file.
3. Render them with Sphinx and MyST-NB (docs/conf.py); any Sphinx warning fails the build.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import nbformat

from tools.notebooks import execute_notebook

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def lesson_paths(root: Path = ROOT) -> list[Path]:
    """The lessons, in reading order: notebooks/0*.ipynb.

    >>> lesson_paths()[0].name
    '01_accumulation_is_a_full_batch.ipynb'
    """
    return sorted(root.glob("notebooks/0*.ipynb"))


def prepare_for_site(notebook, name: str):
    """Ready an executed lesson for a page read without a kernel; return the notebook.

    A cell the notebook shows collapsed (the setup cell) is collapsed on the page too. A
    widget output must carry a text/html fallback (`display.show_widget` adds it): a page
    cannot draw the live widget, so without one the reader would see an empty area.

    >>> from nbformat.v4 import new_code_cell, new_notebook, new_output
    >>> cell = new_code_cell("quiz()", metadata={"jupyter": {"source_hidden": True}})
    >>> cell.outputs = [new_output("display_data", {WIDGET_VIEW: {}, "text/plain": "VBox()"})]
    >>> prepare_for_site(new_notebook(cells=[cell]), "08_quiz.ipynb")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: 08_quiz.ipynb, cell 0: a widget without a static fallback; display it with ...
    >>> cell.outputs[0].data["text/html"] = "<p>the quiz</p>"
    >>> prepare_for_site(new_notebook(cells=[cell]), "08_quiz.ipynb").cells[0].metadata.tags
    ['hide-input']
    """
    for index, cell in enumerate(notebook.cells):
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


def stage(source: Path) -> None:
    """Copy docs/'s pages and the instructors' guides into `source`, at their repository paths."""
    shutil.copytree(
        DOCS, source, ignore=shutil.ignore_patterns("conf.py", "_static", "__pycache__")
    )
    for guide in sorted(ROOT.glob("quizzes/*.md")):
        (source / "quizzes").mkdir(exist_ok=True)
        shutil.copy2(guide, source / "quizzes" / guide.name)


def execute_lessons(source: Path) -> None:
    """Run each lesson and write it, ready for the site, to `source`/notebooks/."""
    (source / "notebooks").mkdir(parents=True, exist_ok=True)
    for path in lesson_paths():
        notebook, seconds = execute_notebook(path)
        print(f"{path.name:<45} executed in {seconds:5.1f} s", flush=True)
        nbformat.write(prepare_for_site(notebook, path.name), source / "notebooks" / path.name)


def render(source: Path, work: Path, out: Path) -> int:
    """Render the staged `source` to HTML in `out` with Sphinx; Sphinx's exit code."""
    from sphinx.cmd.build import build_main

    html = work / "html"  # MyST-NB writes images beside its output folder: keep them in `work`
    status = build_main(
        ["-b", "html", "-W", "--keep-going", "-q", "-c", str(DOCS)]
        + ["-d", str(work / "doctrees"), str(source), str(html)]
    )
    if status == 0:
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(html, out)
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "site", help="the site's folder")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "site", help="scratch folder")
    args = parser.parse_args(argv)
    shutil.rmtree(args.work, ignore_errors=True)
    source = args.work / "source"
    stage(source)
    execute_lessons(source)
    status = render(source, args.work, args.out)
    if status == 0:
        print(f"open {args.out / 'index.html'} in a browser")
    return status


if __name__ == "__main__":
    sys.exit(main())
