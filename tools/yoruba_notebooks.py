"""The lessons in Yorùbá, generated from the English notebooks and the site's catalogues.

    python -m tools.yoruba_notebooks           # writes notebooks/yo/*.ipynb (never edit them)
    python -m tools.yoruba_notebooks --check   # says which generated notebook is out of date
    make lab LANG=yo                           # opens them in JupyterLab

One translation for the site and the notebooks: locales/yo/LC_MESSAGES/notebooks/*.po, which
`make catalogues` keeps in step with the English and a translator fills. Each markdown cell is
cut into the pieces Sphinx's gettext builder makes of it (MyST-NB parses a cell with
markdown-it: a heading, a paragraph, a list item's paragraph, a table cell is one message, its
text the message's msgid, line breaks as spaces), and each piece the catalogue translates is
replaced by its msgstr; a piece it does not (yet) translate stays English, and raw HTML, math
and code stay as they are. Code cells are copied untouched. A lesson's Yorùbá summary cell goes
where the English summary it duplicates is translated, as on the site (tools/site.py).

The notebooks sit in notebooks/yo/, beside each other as the English ones do, so links between
lessons keep working and Colab opens them from the repository; tests/test_yoruba_notebooks.py
fails when one falls behind its English notebook or its catalogue.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin

from tools.catalogues import LANGUAGE, LOCALES, read_po
from tools.site import ROOT, drop_duplicate_summary, lesson_paths

OUT = ROOT / "notebooks" / LANGUAGE
# Links to docs/'s pages: the catalogue holds them as the site stages them (`../sources.md`);
# a notebook in notebooks/yo/ reaches them two folders up.
SITE_DOCS_LINK, NOTEBOOK_DOCS_LINK = "](../", "](../../docs/"
_PARSER = MarkdownIt("commonmark").enable("table").use(dollarmath_plugin)


def _key(text: str) -> str:
    """A message as the catalogue's lookup compares it: whitespace runs as one space."""
    return " ".join(text.split())


def translations(po: Path) -> dict[str, str]:
    """{msgid: msgstr} of the catalogue's translated messages (fuzzy and empty ones left out)."""
    if not po.is_file():
        return {}
    return {_key(i): s for i, (s, fuzzy) in read_po(po).items() if s and not fuzzy}


def translate_markdown(source: str, translated: dict[str, str]) -> str:
    """`source` with each heading, paragraph and table cell the catalogue has in Yorùbá replaced.

    >>> text = ("## Summary\\n\\n- Weight each loss\\n  by its share.\\n- Clear first.\\n\\n"
    ...         "| a | b |\\n|---|---|\\n| x | y |")
    >>> yo = {"Summary": "Àkótán", "Weight each loss by its share.": "Fi ìpín rẹ̀ sọ ọ́ di púpọ̀.",
    ...       "x": "ẹ"}
    >>> print(translate_markdown(text, yo))
    ## Àkótán
    <BLANKLINE>
    - Fi ìpín rẹ̀ sọ ọ́ di púpọ̀.
    - Clear first.
    <BLANKLINE>
    | a | b |
    |---|---|
    | ẹ | y |
    """
    lines = source.split("\n")
    replaced: dict[int, tuple[int, str]] = {}  # first line -> (line after the piece, new line)
    row = 0
    tokens = _PARSER.parse(source)
    for before, token in zip(tokens, tokens[1:]):
        if before.type == "tr_open":
            row = before.map[0]
        yoruba = translated.get(_key(token.content)) if token.type == "inline" else None
        if not yoruba:
            continue
        if before.type in ("paragraph_open", "heading_open") and before.map:
            start, end = before.map
            at = lines[start].find(token.content.split("\n")[0])
            if at >= 0:  # what precedes the text stays: "## ", "- ", "1. ", "> "
                replaced[start] = (end, lines[start][:at] + yoruba)
        elif before.type in ("th_open", "td_open"):  # a table cell, in its row's one line
            line = replaced.get(row, (row + 1, lines[row]))[1]
            cells = line.split("|")
            for index, cell in enumerate(cells):
                if cell.strip() == token.content.strip():
                    cells[index] = f" {yoruba.replace('|', '&#124;')} "
                    break
            replaced[row] = (row + 1, "|".join(cells))
    out: list[str] = []
    index = 0
    while index < len(lines):
        end, new = replaced.get(index, (index + 1, lines[index]))
        out.append(new)
        index = end
    return "\n".join(out)


def yoruba_notebook(english: Path, locales: Path = LOCALES):
    """The Yorùbá notebook generated from the lesson at `english` and its catalogue."""
    po = locales / LANGUAGE / "LC_MESSAGES" / "notebooks" / f"{english.stem}.po"
    translated = translations(po)
    notebook = nbformat.read(english, as_version=4)
    drop_duplicate_summary(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            staged = cell.source.replace("](../docs/", SITE_DOCS_LINK)  # as the catalogue has it
            yoruba = translate_markdown(staged, translated)
            cell.source = yoruba.replace(SITE_DOCS_LINK, NOTEBOOK_DOCS_LINK)
    relative = english.relative_to(ROOT).as_posix()
    notebook.metadata["gradacc"] = {
        "generated_from": [relative, po.relative_to(locales.parent).as_posix()],
        "by": "python -m tools.yoruba_notebooks: edit those, not this notebook",
    }
    return notebook


def expected(locales: Path = LOCALES) -> dict[str, str]:
    """{file name: the text of its generated Yorùbá notebook}, for every lesson."""
    return {p.name: nbformat.writes(yoruba_notebook(p, locales)) + "\n" for p in lesson_paths()}


def out_of_date(out: Path = OUT) -> list[str]:
    """The generated notebooks in `out` that differ from what the English and catalogues give."""
    wanted = expected()
    found = [n for n, text in wanted.items() if _read(out / n) != text]
    found += [p.name for p in sorted(out.glob("*.ipynb")) if p.name not in wanted]
    return found


def _read(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.is_file() else None


def write(out: Path = OUT) -> list[str]:
    """Write every generated notebook to `out`, remove stale ones; the files that changed."""
    out.mkdir(parents=True, exist_ok=True)
    changed = out_of_date(out)
    wanted = expected()
    for name in changed:
        if name in wanted:
            (out / name).write_text(wanted[name], encoding="utf-8")
        else:
            (out / name).unlink()
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say what is out of date")
    args = parser.parse_args(argv)
    if args.check:
        stale = out_of_date()
        print("\n".join(stale) or "every Yorùbá notebook is up to date")
        return 1 if stale else 0
    print("\n".join(write()) or "every Yorùbá notebook was already up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
