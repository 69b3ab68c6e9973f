"""One repository address (pyproject.toml's [tool.gradacc]), copied into setup cell and README."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from tools.course_config import Repository, course_repository
from tools.repository import launch_links, update_readme
from tools.setup_cell import SETUP_CELL
from tools.site import lesson_paths

ROOT = Path(__file__).resolve().parent.parent
LAUNCH_LINK = re.compile(r"https://(?:colab\.research\.google\.com|mybinder\.org)/[^)\s]+")


def test_the_address_is_read_from_pyproject():
    table = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["gradacc"]
    repository = course_repository()
    assert (repository.url, repository.branch) == (table["repository"], table["branch"])


def test_the_setup_cell_installs_from_the_configured_repository():
    assert f'"git+{course_repository().url}.git"' in SETUP_CELL


def test_every_lesson_has_a_colab_and_a_binder_link_in_the_readme():
    readme = (ROOT / "README.md").read_text()
    links = set(LAUNCH_LINK.findall(readme))
    repository = course_repository()
    for path in lesson_paths():
        name = path.relative_to(ROOT).as_posix()
        assert repository.colab_url(name) in links, f"README: no Colab link to {name}"
        assert repository.binder_url(name) in links, f"README: no Binder link to {name}"
    slug = f"/{repository.slug}/"
    stale = [link for link in links if slug not in link]
    assert not stale, f"README links to another repository: {stale}; run python -m tools.repository"


def test_the_readme_block_is_rewritten_for_a_fork(tmp_path):
    readme = tmp_path / "README.md"
    lessons = ["notebooks/01_a.ipynb"]
    old = launch_links(Repository("https://github.com/gradacc/gradacc", "main"), lessons)
    readme.write_text(f"intro\n{old}\noutro\n")
    fork = Repository("https://github.com/someone/gradacc-fork", "teaching")
    assert update_readme(readme, launch_links(fork, lessons))
    text = readme.read_text()
    assert text.startswith("intro\n") and text.endswith("\noutro\n")
    assert "github/someone/gradacc-fork/blob/teaching/notebooks/01_a.ipynb" in text
    assert "gradacc/gradacc" not in text
    assert not update_readme(readme, launch_links(fork, lessons)), "a second run changes nothing"


@pytest.mark.parametrize(
    "url", ["https://gitlab.com/me/gradacc", "github.com/me/gradacc", "https://github.com/me"]
)
def test_a_repository_outside_github_is_refused_with_the_fix(url):
    # Colab opens notebooks from GitHub only
    with pytest.raises(ValueError, match=r"https://github.com/OWNER/NAME.*\[tool.gradacc\]"):
        Repository(url, "main")
