"""The Yorùbá notebooks (notebooks/yo/, tools/yoruba_notebooks.py): generated, never edited.

They must match what the English notebooks and the catalogues give today; each translated
message of a lesson's catalogue must reach its notebook (the generator cuts a cell as Sphinx's
gettext builder does, or a message would silently stay English); code cells are the English
ones; and one generated notebook runs top to bottom (slow).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
import pytest

from tools import yoruba_notebooks
from tools.catalogues import LOCALES, extract, read_po
from tools.notebooks import execute_notebook
from tools.site import lesson_paths

ROOT = Path(__file__).resolve().parents[1]
YO = ROOT / "notebooks" / "yo"
CATALOGUES = LOCALES / "yo" / "LC_MESSAGES" / "notebooks"


def test_the_committed_yoruba_notebooks_are_what_the_english_and_catalogues_give():
    stale = yoruba_notebooks.out_of_date()
    assert stale == [], f"run `python -m tools.yoruba_notebooks`: {stale} are out of date"
    assert sorted(p.name for p in YO.glob("*.ipynb")) == [p.name for p in lesson_paths()]


def test_a_changed_catalogue_makes_its_notebook_out_of_date(tmp_path):
    locales = Path(shutil.copytree(LOCALES, tmp_path / "locales"))
    po = locales / "yo" / "LC_MESSAGES" / "notebooks" / "02_scaling_the_loss.po"
    text = po.read_text(encoding="utf-8")
    untranslated = next(  # a heading, written on one line: easy to fill here
        i for i, (s, _) in read_po(po).items() if not s and f'msgid "{i}"\nmsgstr ""' in text
    )
    po.write_text(
        text.replace(f'msgid "{untranslated}"\nmsgstr ""', f'msgid "{untranslated}"\nmsgstr "Ẹ"'),
        encoding="utf-8",
    )
    english = ROOT / "notebooks" / "02_scaling_the_loss.ipynb"
    fresh = nbformat.writes(yoruba_notebooks.yoruba_notebook(english, locales)) + "\n"
    assert fresh != (YO / english.name).read_text(encoding="utf-8")


@pytest.mark.parametrize("english", lesson_paths(), ids=lambda p: p.stem)
def test_every_translated_message_reaches_the_notebook_and_code_stays(english):
    notebook = nbformat.read(YO / english.name, as_version=4)
    markdown = " ".join(
        " ".join(c.source.split()) for c in notebook.cells if c.cell_type == "markdown"
    )
    markdown = markdown.replace("](../../docs/", "](../")  # as the catalogue writes the links
    translated = yoruba_notebooks.translations(CATALOGUES / f"{english.stem}.po")
    missing = [i for i, s in translated.items() if " ".join(s.split()) not in markdown]
    assert missing == [], f"{english.name}: translated but not in the notebook: {missing[:3]}"
    code = [c.source for c in nbformat.read(english, as_version=4).cells if c.cell_type == "code"]
    assert [c.source for c in notebook.cells if c.cell_type == "code"] == code
    # links to docs/ still reach it from notebooks/yo/
    for cell in notebook.cells:
        assert "](../docs/" not in cell.source and "](../sources.md" not in cell.source


@pytest.mark.slow
def test_the_generator_cuts_each_cell_where_sphinx_does(tmp_path):
    """Every message Sphinx extracts from a lesson is a piece the generator finds, math aside."""
    pot = extract(tmp_path / "gettext")
    for english in lesson_paths():
        messages = list(read_po(pot / "notebooks" / f"{english.stem}.pot"))
        marks = {message: f"@@{n}@@" for n, message in enumerate(messages)}
        notebook = nbformat.read(english, as_version=4)
        yoruba_notebooks.drop_duplicate_summary(notebook)
        text = "\n".join(
            yoruba_notebooks.translate_markdown(
                c.source.replace("](../docs/", "](../"),
                {yoruba_notebooks._key(m): mark for m, mark in marks.items()},
            )
            for c in notebook.cells
            if c.cell_type == "markdown"
        )
        # display math ($$...$$) is no prose to translate: it stays as it is
        sources = " ".join(" ".join(c.source.split()) for c in notebook.cells)
        math = [m for m in marks if re.search(r"\$\$ ?" + re.escape(" ".join(m.split())), sources)]
        missed = [m for m, mark in marks.items() if mark not in text and m not in math]
        assert len(math) <= 2, math
        assert missed == [], f"{english.name}: {missed[:3]}"


@pytest.mark.slow
def test_a_generated_yoruba_notebook_runs_top_to_bottom():
    run = execute_notebook(YO / "03_batchnorm.ipynb")
    errors = [
        o for c in run.notebook.cells for o in c.get("outputs", []) if o.output_type == "error"
    ]
    assert errors == [] and run.notebook.cells[0].source.startswith("# Ẹ̀kọ́ 3 — ")
