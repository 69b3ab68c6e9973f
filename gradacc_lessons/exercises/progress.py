"""The learner's exercise results, kept in a file on their own machine for lesson 8's score.

Each lesson runs in its own kernel, so a check writes its verdict to a small JSON file
(`~/.gradacc/exercises.json`, or the path in GRADACC_PROGRESS); lesson 8 reads it. As the
quiz does, the score counts each exercise's FIRST checked attempt; later ones can make it
right "in the end". Nothing is sent anywhere.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from gradacc_lessons.display import Table
from gradacc_lessons.exercises.words import say


def progress_file() -> Path:
    """Where the results are kept: GRADACC_PROGRESS, else ~/.gradacc/exercises.json."""
    chosen = os.environ.get("GRADACC_PROGRESS")
    return Path(chosen) if chosen else Path.home() / ".gradacc" / "exercises.json"


def load() -> dict[str, dict]:
    """{exercise id: {"tries", "first_right", "right"}}; empty when nothing was checked yet."""
    path = progress_file()
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except (OSError, ValueError) as error:
        raise ValueError(
            f"{path} is not a file of exercise results ({error}): delete it to start afresh"
        ) from None
    return results if isinstance(results, dict) else {}


def record(exercise_id: str, passed: bool) -> None:
    """Add a checked attempt; the first one decides first_right, for good."""
    if not isinstance(exercise_id, str) or not isinstance(passed, bool):
        raise ValueError(
            f"exercise_id must be an exercise's id and passed a bool, got {exercise_id!r} and "
            f"passed={passed!r}"
        )
    try:
        results = load()
    except ValueError:  # a broken file: lesson 8 says so; the check still answers
        return
    earlier = results.get(exercise_id, {"tries": 0, "first_right": None, "right": False})
    results[exercise_id] = {
        "tries": earlier["tries"] + 1,
        "first_right": passed if earlier["first_right"] is None else earlier["first_right"],
        "right": earlier["right"] or passed,
    }
    path = progress_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(results, indent=1, sort_keys=True), encoding="utf-8")
    except OSError:  # a read-only home (some hosted notebooks): the check still answers
        pass


def exercise_score(lang: str = "en") -> Table:
    """Every exercise of the course: checked or not, right at the first try, right in the end."""
    from gradacc_lessons.exercises import EXERCISES

    results = load()
    rows = []
    for exercise in EXERCISES.values():
        got = results.get(exercise.id)
        if got is None:
            rows.append((exercise.lesson, exercise.id, say("not_checked", lang), "", ""))
            continue
        yes, no = say("yes", lang), say("no", lang)
        rows.append((
            exercise.lesson, exercise.id, got["tries"],
            yes if got["first_right"] else no, yes if got["right"] else no,
        ))  # fmt: skip
    first = sum(bool(r.get("first_right")) for i, r in results.items() if i in EXERCISES)
    final = sum(bool(r.get("right")) for i, r in results.items() if i in EXERCISES)
    title = say("exercise_score", lang, first=first, final=final, total=len(EXERCISES))
    headers = tuple(say(h, lang) for h in ("col_lesson", "col_exercise", "col_tries"))
    headers += (say("col_first", lang), say("col_final", lang))
    return Table(headers, rows, title=title)
