"""The course's guide, written once (docs/guide.html), shown twice: the front page, and the
first cell of lesson 1, which opens the course in the notebooks.

    python -m tools.guide   # after editing docs/guide.html: writes docs/index.md and lesson 1

The guide's parts (overview, deep dive, uses, future, FAQ) each hold a Yorùbá and an English
`<div lang>`: side by side on a wide screen, one above the other on a phone (docs/_static/
gradacc.css). The front page gets the file as it is (its Listen buttons are docs/_static/
guide.js's). The notebook gets the same parts: no Listen buttons (a notebook runs no page
script), links to the lessons' notebooks instead of their pages, and its own class so that the
site's script and styles leave the cell alone. tests/test_guide_text.py checks that both hold
the file's text.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "guide.html"
FRONT_PAGE = ROOT / "docs" / "index.md"
LESSON_1 = ROOT / "notebooks" / "01_accumulation_is_a_full_batch.ipynb"
CELL_ID = "lesson1-guide"
# the block ends at the first "</div>" line followed by a blank line (HTML in Markdown has none)
_BLOCK = re.compile(r'<div class="gradacc-guide">\n.*?\n</div>\n(?=\n|\Z)', re.S)


def front_page(index: str, guide: str) -> str:
    """The front page's Markdown `index` with its guide block replaced by `guide`."""
    if len(_BLOCK.findall(index)) != 1:
        raise ValueError('docs/index.md must hold one <div class="gradacc-guide"> block')
    return _BLOCK.sub(lambda _: guide, index)


def notebook_cell(guide: str) -> str:
    """The guide as lesson 1's first cell: no Listen buttons, links to the notebooks.

    >>> notebook_cell('<div class="gradacc-guide">\\n<p class="gradacc-guide-tools">x</p>\\n'
    ...               '<a href="notebooks/02_a.html">2</a>\\n</div>\\n')
    '<div class="gradacc-guide-cell">\\n<a href="02_a.ipynb">2</a>\\n</div>\\n'
    """
    cell = re.sub(r'<p class="gradacc-guide-tools">.*?</p>\n', "", guide, flags=re.S)
    cell = re.sub(r'href="notebooks/([\w-]+)\.html', r'href="\1.ipynb', cell)
    return cell.replace('class="gradacc-guide"', 'class="gradacc-guide-cell"', 1)


def write() -> list[str]:
    """Write the guide into the front page and lesson 1; the files that changed."""
    guide = GUIDE.read_text(encoding="utf-8")
    changed = []
    index = FRONT_PAGE.read_text(encoding="utf-8")
    if front_page(index, guide) != index:
        FRONT_PAGE.write_text(front_page(index, guide), encoding="utf-8")
        changed.append(str(FRONT_PAGE.relative_to(ROOT)))
    notebook = nbformat.read(LESSON_1, as_version=4)
    cells = [c for c in notebook.cells if c.get("id") == CELL_ID]
    if not cells:
        cells = [nbformat.v4.new_markdown_cell("", id=CELL_ID)]
        notebook.cells.insert(0, cells[0])
    if cells[0].source != notebook_cell(guide):
        cells[0].source = notebook_cell(guide)
        nbformat.write(notebook, LESSON_1)
        changed.append(str(LESSON_1.relative_to(ROOT)))
    return changed


if __name__ == "__main__":
    print("\n".join(write()) or "the front page and lesson 1 already hold docs/guide.html")
    sys.exit(0)
