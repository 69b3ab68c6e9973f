"""What the trusted re-check decides, from the answer key (the sandbox itself is tested apart).

The sandbox runner is replaced here by the same steps run in this process (build the cases from
the seed, run the student's cell, run each case), so that these tests pin down the decisions:
which checks an answer key gives, what a choice is worth, and the per-case points of an exercise.
"""

from __future__ import annotations

import json

import pytest
from gradacc_grader import sandbox as sandbox_module
from gradacc_grader import trusted
from gradacc_grader.bank.faq import LOOP
from gradacc_grader.build import answer_key
from gradacc_grader.draw import draw_release
from gradacc_grader.inside import scoring

KEY = {
    "assignment": "quiz",
    "lang": "en",
    "cells": [
        {
            "grade_id": "q1_test",
            "kind": "choice",
            "points": 1,
            "variable": "answer_q1",
            "letter": "C",
        },
        {
            "grade_id": "faq3_loop_test",
            "kind": "exercise",
            "points": 3,
            "answer_cell": "faq3_loop_answer",
            "module": "window_loop",
        },
        {"grade_id": "faq5_written", "kind": "written", "points": 2},
    ],
}


def _in_process(source, module, seed, sandbox, timeout=120):
    """The harness's steps without the sandbox: cases first, then the student's cell."""
    import importlib

    exercise = vars(importlib.import_module(f"gradacc_grader.inside.{module}"))
    built = exercise["cases"](seed)
    namespace: dict = {}
    try:
        exec(source, namespace)
        function = namespace[exercise["FUNCTION"]]
    except Exception as error:
        return {"error": f"{type(error).__name__}: {error}"}
    return {name: scoring.outcome_of(exercise, function, case) for name, case in built}


@pytest.fixture
def course(tmp_path, monkeypatch):
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "quiz.json").write_text(json.dumps(KEY))
    monkeypatch.setattr(sandbox_module, "run_exercise", _in_process, raising=False)
    return tmp_path


def test_the_key_gives_one_check_per_autograded_cell(course):
    checks = trusted.checks_for("quiz", course, sandbox=None)
    assert [c.grade_id for c in checks] == ["q1_test", "faq3_loop_test"]
    assert trusted.checks_for("other", course, sandbox=None) == []


def test_a_link_in_place_of_the_key_is_not_read(course, tmp_path):
    (course / "keys" / "linked.json").symlink_to(course / "keys" / "quiz.json")
    assert trusted.checks_for("linked", course, sandbox=None) == []


@pytest.mark.parametrize(
    ("cell", "points"),
    [
        ('answer_q1 = "C"', 1.0),
        ('answer_q1 = " c "  # spaces and case, as the hidden test allows', 1.0),
        ('answer_q1 = "B"', 0.0),
        ('answer_q1 = "C"\nanswer_q1 = "B"', 0.0),  # set twice: unreadable
        ('answer_q1 = str("C")', 0.0),  # not a literal
        ('globals()["answer_q1"] = "C"', 0.0),
    ],
)
def test_a_choice_counts_only_as_one_plain_literal(course, cell, points):
    check = trusted.checks_for("quiz", course, sandbox=None)[0]
    assert check.run({"q1_answer": cell}, {"q1_answer": [cell]})[0] == points


def _loop_cell(body: str) -> dict:
    return {"faq3_loop_answer": f"{LOOP.starter}\n{body}"}


def test_the_loop_is_scored_case_by_case(course):
    check = trusted.checks_for("quiz", course, sandbox=None)[1]
    for body, points in [(LOOP.solution, 3.0), (LOOP.partial, 2.0)]:
        cells = _loop_cell(body)
        got, why = check.run(cells, {k: [v] for k, v in cells.items()})
        assert got == points, why
    cells = _loop_cell("    raise RuntimeError('not yet')")
    got, why = check.run(cells, {k: [v] for k, v in cells.items()})
    assert got == 0.0 and "RuntimeError: not yet" in why


def test_an_answer_cell_given_twice_is_not_run(course):
    check = trusted.checks_for("quiz", course, sandbox=None)[1]
    cells = _loop_cell(LOOP.solution)
    sources = {"faq3_loop_answer": [cells["faq3_loop_answer"]] * 2}
    assert check.run(cells, sources) == (0.0, "no single code cell faq3_loop_answer")


def test_the_builders_key_and_the_checks_agree():
    from gradacc_grader.bank import ASSIGNMENTS

    for assignment in ASSIGNMENTS:
        key = answer_key(draw_release(assignment, b"9" * 64))
        kinds = {cell["kind"] for cell in key["cells"]}
        assert kinds <= {"choice", "exercise", "written"}
        for cell in key["cells"]:
            if cell["kind"] == "exercise":
                assert (
                    trusted.exercise(
                        cell["grade_id"], cell["answer_cell"], cell["module"], cell["points"], None
                    ).grade_id
                    == cell["grade_id"]
                )


# --- moved here from test_grading.py (by grader): answers read as plain literals, and the real
# sandbox (sandbox.run_exercise, through bubblewrap) behind the exercise check


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('answer_faq1 = "B"', "B"),
        ('# the second\nanswer_faq1 = "C"  # sure', "C"),
        ("answer_faq1 = _Yes()", None),
        ('answer_faq1 = _Str("B")', None),
        ('answer_faq1 = "B"\nanswer_faq1 = "C"', None),
        ('answer_faq1 = "B"\nglobals()["answer_faq1"] = 1', None),
        ('if True:\n    answer_faq1 = "B"', None),
        ('answer_faq1 = "B"\ndel answer_faq1', None),
        ('answer_faq1 = b"B"', None),
        ("answer_faq1 = 'B' +", None),
    ],
)
def test_multiple_choice_answers_are_read_as_plain_literals(source, expected):
    assert trusted.literal_answer(["import torch", source], "answer_faq1") == expected


def test_an_answer_rebound_in_another_cell_does_not_count():
    right = 'answer_faq1 = "B"'
    assert trusted.literal_answer([right, "assert answer_faq1 == 'B'"], "answer_faq1") == "B"
    assert trusted.literal_answer([right, "answer_faq1 = _Yes()"], "answer_faq1") is None
    assert trusted.literal_answer([right, "for answer_faq1 in 'AB': pass"], "answer_faq1") is None
    assert trusted.literal_answer([right, "%time answer_faq1 = 'C'"], "answer_faq1") is None
    assert trusted.literal_answer(["x = 1", "x = 2"], "answer_faq1") is None  # never set


WRONG_LOOPS = {  # the loop, its cases: points it deserves out of 3
    LOOP.solution: 3.0,
    LOOP.partial: 2.0,  # the last window divided by N: "a short last window" fails
    LOOP.solution.replace("    optimizer.zero_grad()  # leftover", "    pass  # leftover"): 2.0,
    "    import torch\n    torch.allclose = lambda *a, **k: True  # patches, trains nothing": 0.0,
}


@pytest.mark.slow
def test_the_real_sandbox_grades_the_loop_case_by_case(tmp_path):
    from gradacc_grader.sandbox import Sandbox

    check = trusted.exercise(
        "faq3_loop_test", "faq3_loop_answer", "window_loop", 3, Sandbox(hidden=(tmp_path,))
    )
    for body, deserved in WRONG_LOOPS.items():
        cells = _loop_cell(body)
        points, why = check.run(cells, {k: [v] for k, v in cells.items()})
        assert points == deserved, why
