"""The sources page (docs/sources.md) against the versions the course pins and installs.

Every statement a lesson makes about a library and no cell runs cites a row of that page. A row
of a pinned project names its pinned version, and the cited line of the installed file still holds
the cited text: an upgrade that moves or changes it fails here and names the sentence to re-read.
A row of a project the course does not install must say so ("read, not pinned").
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest

from tools.site import lesson_paths

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "docs" / "sources.md"
HEADER = "| claim | statement | project | version | status | file | line | contains |"
COLUMNS = [column.strip() for column in HEADER.strip("|").split("|")]
NOT_PINNED = "read, not pinned"


def pinned_versions() -> dict[str, str]:
    """Project -> the version the course pins: the `frameworks` extra, and the Makefile's torch."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = {}
    for requirement in extras["optional-dependencies"]["frameworks"]:
        name, version = requirement.split(";")[0].split("==")
        pins[name.strip()] = version.strip()
    torch = re.search(r"^TORCH_VERSION \?= (\S+)$", (ROOT / "Makefile").read_text(), re.M)
    assert torch, "the Makefile sets TORCH_VERSION ?= <version>"
    pins["torch"] = torch.group(1)
    return pins


def sections() -> dict[str, list[dict[str, str]]]:
    """The page's tables: heading ("Lesson 6") -> its rows, as {column: text}."""
    tables, heading, rows = {}, None, None
    for line in SOURCES.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            heading = line[3:].strip()
        elif line.strip() == HEADER:
            rows = tables.setdefault(heading, [])
        elif rows is not None and line.startswith("| ") and not line.startswith("| ---"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            assert len(cells) == len(COLUMNS), f"{heading}: a row of {len(cells)} cells: {line}"
            rows.append(dict(zip(COLUMNS, cells)))
        elif not line.startswith("|"):
            rows = None
    return tables


ROWS = [row for rows in sections().values() for row in rows]
PINS = pinned_versions()


def unquoted(cell: str) -> str:
    """A table cell's text without the backticks of its inline code."""
    assert cell.startswith("`") and cell.endswith("`"), f"write it as inline code: {cell}"
    return cell[1:-1]


def test_the_page_has_rows_and_unique_claims():
    assert len(ROWS) >= 20, "the sources page lost its tables (or their header changed)"
    claims = [row["claim"] for row in ROWS]
    assert len(claims) == len(set(claims)), "two rows share a claim name"


@pytest.mark.parametrize("row", ROWS, ids=[row["claim"] for row in ROWS])
def test_each_citation_names_a_pinned_version_or_says_it_is_not_pinned(row):
    project = row["project"]
    if project in PINS:
        assert row["version"] == PINS[project], (
            f"{row['claim']}: cites {project} {row['version']}, the course pins {PINS[project]}: "
            f"re-read the file, then update the statement and the row"
        )
        assert row["status"] == "installed", f"{row['claim']}: a pinned project is 'installed'"
    else:
        assert row["status"] == NOT_PINNED, (
            f"{row['claim']}: {project} is not pinned by the course: its status must say "
            f"{NOT_PINNED!r}"
        )
        assert row["version"], f"{row['claim']}: name the release or page that was read"
        assert row["file"], f"{row['claim']}: name the file or page that was read"


INSTALLED = [row for row in ROWS if row["status"] == "installed"]


@pytest.mark.parametrize("row", INSTALLED, ids=[row["claim"] for row in INSTALLED])
def test_each_installed_citation_still_holds_its_text_at_its_line(row):
    project, path = row["project"], unquoted(row["file"])
    installed = importlib.metadata.version(project).split("+")[0]  # torch's "2.13.0+cpu"
    assert installed == PINS[project], (
        f"{project} {installed} is installed, the course pins {PINS[project]}: `make install`"
    )
    package = importlib.util.find_spec(path.split("/")[0])
    assert package and package.submodule_search_locations, f"{path}: not an installed package"
    file = Path(package.submodule_search_locations[0]).parent / path
    assert file.is_file(), f"{row['claim']}: {project} {installed} has no {path}"
    lines = file.read_text(encoding="utf-8").splitlines()
    number = int(row["line"])
    assert 1 <= number <= len(lines), f"{row['claim']}: {path} has {len(lines)} lines"
    assert unquoted(row["contains"]) in lines[number - 1], (
        f"{row['claim']} ({row['statement']}): {path}:{number} now reads "
        f"{lines[number - 1].strip()!r}; re-read the source, then fix the lesson and the row"
    )


def lesson_markdown() -> dict[int, str]:
    """Lesson number -> the text of its markdown cells."""
    lessons = {}
    for path in lesson_paths():
        notebook = nbformat.read(path, as_version=4)
        text = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
        lessons[int(path.name[:2])] = text
    return lessons


def test_lessons_link_to_their_section_of_the_page_and_every_link_has_one():
    headings = {heading for heading in sections() if heading}
    lessons = lesson_markdown()
    for heading in headings:
        number = int(heading.removeprefix("Lesson "))
        assert f"../docs/sources.md#lesson-{number}" in lessons[number], (
            f"lesson {number} cites the sources page's '{heading}' but never links to it"
        )
    for number, text in lessons.items():
        for anchor in re.findall(r"\.\./docs/sources\.md#([\w-]+)", text):
            assert anchor == f"lesson-{number}", f"lesson {number} links to #{anchor}"


@pytest.mark.slow  # a Sphinx build in a process
def test_the_site_lists_the_page_and_resolves_its_anchors(tmp_path):
    """Lesson 6's links, staged as tools/site.py stages them, land on the page's heading."""
    from tools.site import prepare_for_site

    index = (ROOT / "docs" / "index.md").read_text()
    assert re.search(r"^sources$", index, re.M), "docs/index.md's toctree lists sources"
    source = tmp_path / "source"
    (source / "notebooks").mkdir(parents=True)
    shutil.copy(SOURCES, source / "sources.md")
    (source / "index.md").write_text(
        "# Site\n\n```{toctree}\nnotebooks/06_beyond_one_device\nsources\n```\n"
    )
    lesson = nbformat.read(ROOT / "notebooks" / "06_beyond_one_device.ipynb", as_version=4)
    lesson.cells = [cell for cell in lesson.cells if cell.cell_type == "markdown"]
    page = source / "notebooks" / "06_beyond_one_device.ipynb"
    nbformat.write(prepare_for_site(lesson, page.name), page)
    build = [
        sys.executable,
        "-m",
        "sphinx",
        "-q",
        "-W",
        "-c",
        ROOT / "docs",
        source,
        tmp_path / "html",
    ]
    done = subprocess.run(build, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "html" / "notebooks" / "06_beyond_one_device.html").read_text()
    assert 'href="../sources.html#lesson-6"' in html
    assert 'id="lesson-6"' in (tmp_path / "html" / "sources.html").read_text()
