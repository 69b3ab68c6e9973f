"""Execute the lessons headless and render them to HTML: `python -m tools.course notebooks site`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tools.notebooks import execute_notebook


def render_html(notebook, destination: Path) -> None:
    """Write an executed notebook as a standalone HTML page."""
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_notebook_node(notebook)
    destination.write_text(body, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("notebooks", type=Path, help="folder of the lesson notebooks")
    parser.add_argument("site", type=Path, help="folder to write the HTML pages to")
    args = parser.parse_args(argv)
    args.site.mkdir(parents=True, exist_ok=True)
    paths = sorted(args.notebooks.glob("[0-9]*.ipynb"))
    if not paths:
        print(f"no lesson notebooks (NN_name.ipynb) in {args.notebooks}", file=sys.stderr)
        return 1
    pages = []
    for path in paths:
        run = execute_notebook(path)
        notebook, seconds = run.notebook, run.seconds
        page = path.with_suffix(".html").name
        render_html(notebook, args.site / page)
        pages.append((page, path.stem, seconds))
        print(f"{path.name:<45} executed in {seconds:5.1f} s", flush=True)
    write_index(args.site / "index.html", pages)
    print(f"open {args.site / 'index.html'} in a browser")
    return 0


def write_index(destination: Path, pages: list[tuple[str, str, float]]) -> None:
    """A table of contents of the rendered lessons, with their execution times."""
    items = "".join(
        f'<li><a href="{page}">{title}</a> <small>(executed in {seconds:.1f} s)</small></li>'
        for page, title, seconds in pages
    )
    destination.write_text(
        f"<!doctype html><title>gradacc</title><h1>gradacc: the course</h1><ol>{items}</ol>",
        encoding="utf-8",
    )


if __name__ == "__main__":
    sys.exit(main())
