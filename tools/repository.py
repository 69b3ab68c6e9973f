"""The course's repository address, set once in pyproject.toml's `[tool.gradacc]` table.

The setup cell installs the package from it; the README's and the site's Colab and Binder
links open its notebooks. After changing it, `python -m tools.repository` rewrites the copies:
every lesson's setup cell and the README's table of launch links.
"""

from __future__ import annotations

import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_GITHUB = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+")
# The README's launch links live between these two lines; `python -m tools.repository` writes them.
LINKS_START = "<!-- launch links: written by `python -m tools.repository` -->"
LINKS_END = "<!-- end of launch links -->"


@dataclass(frozen=True)
class Repository:
    """A GitHub repository and the branch whose notebooks the launch links open.

    >>> repo = Repository("https://github.com/me/gradacc", "main")
    >>> repo.install_url
    'git+https://github.com/me/gradacc.git'
    >>> repo.colab_url("notebooks/01_x.ipynb")
    'https://colab.research.google.com/github/me/gradacc/blob/main/notebooks/01_x.ipynb'
    >>> repo.binder_url("notebooks/01_x.ipynb")
    'https://mybinder.org/v2/gh/me/gradacc/main?urlpath=lab/tree/notebooks/01_x.ipynb'
    """

    url: str
    branch: str

    def __post_init__(self):
        # Colab opens notebooks from GitHub only, so the course's address must be one.
        if not _GITHUB.fullmatch(self.url):
            raise ValueError(
                f"repository must look like https://github.com/OWNER/NAME, got {self.url!r}: "
                "fix [tool.gradacc] in pyproject.toml"
            )

    @property
    def slug(self) -> str:
        """OWNER/NAME, as Colab and Binder spell the repository."""
        return self.url.removeprefix("https://github.com/")

    @property
    def install_url(self) -> str:
        """What `pip install` takes to install the course from the repository."""
        return f"git+{self.url}.git"

    def colab_url(self, path: str) -> str:
        """The address that opens the notebook at `path` (from the root) on Colab."""
        return f"https://colab.research.google.com/github/{self.slug}/blob/{self.branch}/{path}"

    def binder_url(self, path: str) -> str:
        """The address that opens the notebook at `path` (from the root) in JupyterLab on Binder."""
        return f"https://mybinder.org/v2/gh/{self.slug}/{self.branch}?urlpath=lab/tree/{path}"


def course_repository(pyproject: Path = ROOT / "pyproject.toml") -> Repository:
    """The repository set in the `[tool.gradacc]` table of `pyproject`."""
    with open(pyproject, "rb") as file:
        table = tomllib.load(file)["tool"]["gradacc"]
    return Repository(table["repository"], table["branch"])


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
    from tools.setup_cell import update_setup_cell
    from tools.site import lesson_paths

    lessons = [path.relative_to(ROOT).as_posix() for path in lesson_paths()]
    links = launch_links(course_repository(), lessons)
    print("README.md", "updated" if update_readme(ROOT / "README.md", links) else "up to date")
    for path in lessons:
        print(path, "updated" if update_setup_cell(ROOT / path) else "up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
