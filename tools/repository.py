"""The command that rewrites what the README and the setup cells copy from the course's lists.

The address is set once in pyproject.toml's `[tool.gradacc]` table (read by
tools/course_config.py), the lessons once in `gradacc_lessons/lessons.py`. After changing
either, `python -m tools.repository` rewrites the copies: every lesson's setup cell, the
README's course table and its table of launch links.
"""

from __future__ import annotations

import sys
from pathlib import Path

from gradacc_lessons.lessons import LESSONS, Lesson
from tools.course_config import ROOT, Repository, course_repository
from tools.setup_cell import update_setup_cell
from tools.site import lesson_paths

# The README's tables live between these pairs of lines; `python -m tools.repository` writes them.
TABLE_START = "<!-- course table: written by `python -m tools.repository` -->"
TABLE_END = "<!-- end of course table -->"
LINKS_START = "<!-- launch links: written by `python -m tools.repository` -->"
LINKS_END = "<!-- end of launch links -->"


def course_table(lessons: tuple[Lesson, ...] = LESSONS) -> str:
    """The README's table of the lessons and what each shows, markers included.

    >>> print(course_table(LESSONS[:1]).splitlines()[3][:39])
    | 1 | `01_accumulation_is_a_full_batch`
    """
    rows = [f"| {lesson.number} | `{lesson.stem}` | {lesson.shows} |" for lesson in lessons]
    header = ["| # | notebook | what it shows, with numbers it measures |", "| --- | --- | --- |"]
    return "\n".join([TABLE_START, *header, *rows, TABLE_END])


def launch_links(repository: Repository, lessons: list[str]) -> str:
    """The README's table of launch links for `lessons` (paths from the root), markers included.

    >>> links = launch_links(Repository("https://github.com/me/c", "dev"), ["nb/01_x.ipynb"])
    >>> print(links.splitlines()[3])  # doctest: +NORMALIZE_WHITESPACE
    | `01_x` | [open on Colab](https://colab.research.google.com/github/me/c/blob/dev/nb/01_x.ipynb)
    | [open on Binder](https://mybinder.org/v2/gh/me/c/dev?urlpath=lab/tree/nb/01_x.ipynb) |
    """
    rows = [
        f"| `{Path(path).stem}` | [open on Colab]({repository.colab_url(path)}) "
        f"| [open on Binder]({repository.binder_url(path)}) |"
        for path in lessons
    ]
    header = ["| lesson | Colab | Binder |", "| --- | --- | --- |"]
    return "\n".join([LINKS_START, *header, *rows, LINKS_END])


def update_readme(readme: Path, block: str) -> bool:
    """Replace the block of `readme` between `block`'s first and last lines; True if it changed."""
    lines = block.splitlines()
    first, last = lines[0], lines[-1]
    text = readme.read_text(encoding="utf-8")
    start, end = text.find(first), text.find(last)
    if start < 0 or end < start:
        raise ValueError(f"{readme} has no place for this table: put {first!r} ... {last!r} in it")
    updated = text[:start] + block + text[end + len(last) :]
    if updated != text:
        readme.write_text(updated, encoding="utf-8")
    return updated != text


def main() -> int:
    lessons = [path.relative_to(ROOT).as_posix() for path in lesson_paths()]
    for block in (course_table(), launch_links(course_repository(), lessons)):
        changed = update_readme(ROOT / "README.md", block)
        print("README.md", block.splitlines()[0], "updated" if changed else "up to date")
    for path in lessons:
        print(path, "updated" if update_setup_cell(ROOT / path) else "up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
