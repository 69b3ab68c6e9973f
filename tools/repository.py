"""The command that rewrites the copies of the course's repository address.

The address is set once in pyproject.toml's `[tool.gradacc]` table (read by
tools/course_config.py). After changing it, `python -m tools.repository` rewrites the copies:
every lesson's setup cell and the README's table of launch links.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tools.course_config import ROOT, Repository, course_repository
from tools.setup_cell import update_setup_cell
from tools.site import lesson_paths

# The README's launch links live between these two lines; `python -m tools.repository` writes them.
LINKS_START = "<!-- launch links: written by `python -m tools.repository` -->"
LINKS_END = "<!-- end of launch links -->"


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


def update_readme(readme: Path, links: str) -> bool:
    """Replace the launch links of `readme` by `links`; True if the file changed."""
    text = readme.read_text(encoding="utf-8")
    start, end = text.find(LINKS_START), text.find(LINKS_END)
    if start < 0 or end < start:
        raise ValueError(
            f"{readme} has no launch links: put {LINKS_START!r} ... {LINKS_END!r} in it"
        )
    updated = text[:start] + links + text[end + len(LINKS_END) :]
    if updated != text:
        readme.write_text(updated, encoding="utf-8")
    return updated != text


def main() -> int:
    lessons = [path.relative_to(ROOT).as_posix() for path in lesson_paths()]
    links = launch_links(course_repository(), lessons)
    print("README.md", "updated" if update_readme(ROOT / "README.md", links) else "up to date")
    for path in lessons:
        print(path, "updated" if update_setup_cell(ROOT / path) else "up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
