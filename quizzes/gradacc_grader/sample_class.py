"""A sample class of dry-run submissions, to rehearse grading before real students submit.

    gradacc-build --course rehearsal --sample-class

writes, for every assignment, `submitted/<student>/<assignment>/<assignment>.ipynb` for:

- `sample-honest`: every answer right, the bank's solutions, a good written answer;
- `sample-partly`: every other question wrong, each exercise with one classic bug (it fails
  the cases that bug breaks and passes the others), a weak written answer;
- `sample-cheater`: answers that try to fool the grader (an object equal to every letter, an
  answer read from the instructor's files, torch patched so that any weights look right);
- `sample-blank`: the release as handed out.

and `sample_class_expected.csv`: the autograded points each of them deserves per grade cell
(written answers are left to the instructor). Grade with `gradacc-grade`, then compare.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import nbformat

from gradacc_grader.bank.core import Written
from gradacc_grader.draw import LETTERS, Asked, Release, Seeded

STUDENTS = ("sample-honest", "sample-partly", "sample-cheater", "sample-blank")
EXPECTED_FILE = "sample_class_expected.csv"
GOOD_WRITTEN = (
    "In training mode BatchNorm normalises each micro-batch with that micro-batch's own mean and "
    "variance, so the forward pass itself differs from the full batch and no loss scaling can "
    "fix it. GroupNorm or LayerNorm normalise each sample on its own and match."
)
WEAK_WRITTEN = "The gradients are not divided by four, so they come out four times too large."
CHEAT_CHOICE = """\
class _Yes(str):
    def __eq__(self, other):
        return True
    __hash__ = str.__hash__
    def strip(self, *args):
        return self
    def upper(self):
        return self
import glob, json
_keys = glob.glob("../../../keys/*.json") + glob.glob("../../keys/*.json")  # the course's keys
{variable} = json.load(open(_keys[0]))["cells"][0]["letter"] if _keys else _Yes("{letter}")"""
CHEAT_CODE = """\
import torch
torch.allclose = lambda *args, **kwargs: True
torch.Tensor.__sub__ = lambda self, other: torch.zeros_like(self)
{starter}
    return None"""


def _wrong_letter(asked: Asked) -> str:
    return LETTERS[(asked.answer + 1) % len(LETTERS)]


def answers(release: Release, student: str) -> tuple[dict[str, str], dict[str, float]]:
    """(new source per answer cell, deserved points per grade cell) of one sample student.

    >>> from gradacc_grader.bank.lesson4 import LESSON4
    >>> from gradacc_grader.draw import draw_release
    >>> sources, points = answers(draw_release(LESSON4, b"s" * 64), "sample-partly")
    >>> points["l4_plan_test"]  # its planner fails one case of four: "an exact fit"
    2.25
    """
    sources, points = {}, {}
    for number, item in enumerate(release.items):
        if isinstance(item, Asked):
            variable, gid = f"answer_{item.item.id}", f"{item.item.id}_test"
            right = student == "sample-honest" or (student == "sample-partly" and number % 2 == 0)
            letter = item.letter if right else _wrong_letter(item)
            if student == "sample-cheater":
                sources[f"{item.item.id}_answer"] = CHEAT_CHOICE.format(
                    variable=variable, letter=letter
                )
            elif student != "sample-blank":
                sources[f"{item.item.id}_answer"] = f'{variable} = "{letter}"'
            points[gid] = float(item.item.points) if right and student != "sample-cheater" else 0.0
        elif isinstance(item, Seeded):
            exercise, gid = item.item, f"{item.item.id}_test"
            if student == "sample-honest":
                sources[f"{exercise.id}_answer"] = f"{exercise.starter}\n{exercise.solution}"
                points[gid] = float(exercise.points)
            elif student == "sample-partly":
                sources[f"{exercise.id}_answer"] = f"{exercise.starter}\n{exercise.partial}"
                share = 1 - len(exercise.partial_fails) / _case_count(exercise)
                points[gid] = round(exercise.points * share, 2)
            else:
                if student == "sample-cheater":  # sample-blank leaves the cell as released
                    sources[f"{exercise.id}_answer"] = CHEAT_CODE.format(starter=exercise.starter)
                points[gid] = 0.0
        elif isinstance(item, Written) and student in ("sample-honest", "sample-partly"):
            sources[item.id] = GOOD_WRITTEN if student == "sample-honest" else WEAK_WRITTEN
    return sources, points


def _case_count(exercise) -> int:
    from importlib import import_module

    module = import_module(f"gradacc_grader.inside.{exercise.module}")
    return len(module.cases(0))


def submission(released, sources: dict[str, str]):
    """The released notebook with the given cells' sources replaced."""
    notebook = nbformat.from_dict(json.loads(json.dumps(released)))
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in sources:
            cell.source = sources[grade_id]
    return notebook


def write_sample_class(course: Path, releases: list[Release]) -> Path:
    """Write every sample student's submissions and the expected scores; returns the CSV."""
    rows = []
    for release in releases:
        name = release.assignment.name
        released = nbformat.read(course / "release" / name / f"{name}.ipynb", as_version=4)
        for student in STUDENTS:
            sources, points = answers(release, student)
            folder = course / "submitted" / student / name
            folder.mkdir(parents=True, exist_ok=True)
            nbformat.write(submission(released, sources), folder / f"{name}.ipynb")
            rows += [(student, name, gid, score) for gid, score in points.items()]
    path = course / EXPECTED_FILE
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(["student", "assignment", "grade_id", "expected_points"])
        writer.writerows(rows)
    return path
