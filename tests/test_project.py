"""The project's own rules: one environment, clean notebooks, a self-sufficient first cell."""

import json
import os
import re
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest
import yaml

from tools.setup_cell import SETUP_CELL, URL_VARIABLE, setup_cell_for

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
COMMITTED_NOTEBOOKS = LESSONS + sorted((ROOT / "quizzes" / "course" / "source").glob("*/*.ipynb"))
COMMITTED_NOTEBOOKS += sorted((ROOT / "notebooks" / "yo").glob("*.ipynb"))  # generated in Yorùbá


def test_there_are_lessons():
    assert len(LESSONS) >= 1


def test_environment_yml_lists_the_dependencies_of_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = set(project["dependencies"]) | set(project["optional-dependencies"]["lab"])
    environment = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    listed = {requirement for requirement in pip if not requirement.startswith("-e")}
    assert listed == wanted, (
        f"only in environment.yml: {listed - wanted}; only in pyproject: {wanted - listed}"
    )
    assert "-e ." in pip, "environment.yml must install the course itself"


@pytest.mark.parametrize("path", COMMITTED_NOTEBOOKS, ids=lambda p: p.name)
def test_notebooks_are_committed_without_outputs(path):
    notebook = json.loads(path.read_text())
    dirty = [
        i
        for i, cell in enumerate(notebook["cells"])
        if cell.get("outputs") or cell.get("execution_count") is not None
    ]
    assert not dirty, f"{path.name}: cells {dirty} carry outputs; clear them before committing"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_each_lesson_starts_with_the_setup_cell(path):
    notebook = json.loads(path.read_text())
    first_code = next(c for c in notebook["cells"] if c["cell_type"] == "code")
    assert "".join(first_code["source"]) == setup_cell_for(path.name)


def pip_installs(target: str = "install", *make_args: str) -> list[str]:
    """The installs `make TARGET` would run on a fresh clone (a dry run, with a venv that does
    not exist), in order: pip installing uv, then uv installing the packages."""
    dry_run = subprocess.run(
        ["make", "-n", target, "VENV=.venv-that-does-not-exist", *make_args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line for line in dry_run.splitlines() if " pip install " in line]


def makefile_torch_version() -> str:
    """The torch that `make` installs: the Makefile's TORCH_VERSION, the one place it is pinned."""
    pin = re.search(r"^TORCH_VERSION \?= (\S+)$", (ROOT / "Makefile").read_text(), re.M)
    assert pin, "the Makefile must set TORCH_VERSION ?= <version>"
    return pin[1]


def test_make_installs_the_torch_of_this_venv_with_the_course():
    import torch

    pin = makefile_torch_version()
    installs = pip_installs()
    course = [line for line in installs if re.search(r"-e \S*\.", line)]
    assert course, installs
    # every install that resolves the course's "torch>=2.2" names the pinned torch with it, so
    # the resolver keeps it instead of fetching the default (CUDA) build
    for line in course:
        pinned = re.search(r'"torch==([\w.+]+)"', line)
        assert pinned and pinned[1] == torch.__version__.split("+")[0] == pin, line
    # the pin can be changed on the command line, as the Makefile's header says
    changed = [line for line in pip_installs("install", "TORCH_VERSION=2.5.1") if "-e " in line]
    assert changed and all('"torch==2.5.1"' in line for line in changed)
    # uv (which installs them) comes first, from pip, at the pinned version
    assert re.search(r'pip install --quiet "uv==\d+\.\d+\.\d+"', installs[0]), installs


def test_make_lab_installs_the_students_part_and_make_install_the_rest():
    lab = pip_installs("lab")
    assert lab[-1].endswith(' -e ".[lab,frameworks]"'), lab
    assert not [line for line in lab if "quizzes" in line or "dev" in line or "site" in line]
    everything = pip_installs("install")
    assert everything[: len(lab)] == lab  # the student's part first, then the rest
    assert everything[-1].endswith('-e ".[lab,dev,frameworks,site]" -e "./quizzes[test]"')
    assert pip_installs("test")[-1] == everything[-1]


@pytest.mark.slow
def test_setup_cell_installs_the_course_where_it_is_missing(tmp_path):
    """The Colab path: a Python where torch is present but gradacc_lessons is not."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # torch and friends come from the course's venv; the course itself (an editable install,
    # whose own .pth is not read from an added folder) does not
    Path(site, "borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    missing = subprocess.run([python, "-c", "import gradacc_lessons"], cwd=tmp_path)
    assert missing.returncode != 0, "the test venv must start without gradacc_lessons"

    env = {**os.environ, URL_VARIABLE: str(ROOT), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    script = SETUP_CELL + "\nimport gradacc_lessons\nimport torch\nprint(torch.get_num_threads())\n"
    script += "print(gradacc_lessons.__file__)\n"
    run = subprocess.run(
        [python, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr[-3000:]
    threads, where = run.stdout.strip().splitlines()[-2:]
    assert threads == "1", "the setup cell sets one CPU thread (make_repeatable)"
    installed_at = Path(where)
    assert installed_at.is_relative_to(venv), f"imported from {installed_at}, not the new venv"


def test_make_lab_keeps_nbgrader_out_of_the_students_lab():
    """The venv holds nbgrader for the instructor; `make lab` turns off all it turns on."""
    config = ROOT / "tools" / "lab_config"
    assert (
        f'JUPYTER_CONFIG_PATH="$(CURDIR)/{config.relative_to(ROOT)}"'
        in (ROOT / "Makefile").read_text()
    )
    installed = Path(sysconfig.get_path("data")) / "etc/jupyter/jupyter_server_config.d"
    enabled = json.loads((installed / "nbgrader.json").read_text())["ServerApp"]
    ours = json.loads((config / "jupyter_server_config.json").read_text())["ServerApp"]
    assert set(enabled["jpserver_extensions"]) == set(ours["jpserver_extensions"])
    assert not any(ours["jpserver_extensions"].values())
    page = json.loads((config / "labconfig" / "page_config.json").read_text())
    assert page["disabledExtensions"] == {"@jupyter/nbgrader": True}


# What a clone of this repository does not have: the workplace's shared folder beside it, with the
# guide's source text and the authors' notes (their figures are in docs/measurements.md).
OUTSIDE = re.compile(r"\.\./shared\b|shared/(?:seed|notes|tools)\b|measured-[f]acts")


def _outside_references(text: str) -> list[str]:
    """The places in `text` that name a file outside the repository."""
    return OUTSIDE.findall(text)


def test_no_file_names_a_path_outside_the_repository():
    """A contributor who clones the repository sees only what is in it (docs/design.md)."""
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.split("\0")
    outside = {}
    for name in filter(None, tracked):
        path = ROOT / name
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue  # fonts, images: no text to name a path in
        if found := _outside_references(text):
            outside[name] = sorted(set(found))
    assert not outside, f"files name paths outside the repository: {outside}"


def test_the_outside_path_check_finds_what_it_should():
    shared, notes = "../" + "shared", "measured" + "-facts"  # not named whole in this file
    assert _outside_references(f"see {shared}/DESIGN.md") == [shared]
    assert _outside_references(f"(notes/{notes}.md)") == [notes]
    assert _outside_references("cd notebooks && ../.venv/bin/jupyter") == []
    assert _outside_references("python -m tools.site, then open site/index.html") == []


def test_the_readme_quotes_no_timings_and_names_the_bench_report():
    """Seconds go stale: they live in the report `make bench` writes, which the README names."""
    from .test_benchmarks import REPORT

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    timings = re.findall(r"\b\d[\d,.]*\s?(?:s|seconds|min|minutes)\b", readme)
    assert not timings, f"move these timings to `make bench`'s report: {timings}"
    report = REPORT.relative_to(ROOT).as_posix()
    assert f"`{report}`" in readme
    assert report in (ROOT / "Makefile").read_text(encoding="utf-8")
