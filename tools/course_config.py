"""The course's repository address, set once in pyproject.toml's `[tool.gradacc]` table.

The setup cell installs the package from it; the README's and the site's Colab and Binder
links open its notebooks. This module only reads it; `python -m tools.repository` (the
command, in tools/repository.py) rewrites the copies after a change.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_GITHUB = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+")


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
