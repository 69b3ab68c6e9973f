"""What the grader decides outside the sandbox, from the answer key (the sandbox is tested apart).

The sandboxed harness is replaced here by the same steps run in this process (build the cases
from the seed, run the cells in order, run the function on each case), so that these tests pin
down the decisions: which checks a key gives, what a reported choice is worth, and the
per-case points of an exercise run from the notebook's cells.
"""

from __future__ import annotations

import json

import pytest
from gradacc_grader import sandbox as sandbox_module
from gradacc_grader import trusted
from gradacc_grader.bank.faq import LOOP
from gradacc_grader.build import answer_key
from gradacc_grader.draw import draw_release
from gradacc_grader.inside import loop_harness

WHYS = {
    "A": "it replaces .grad",
    "B": "it averages",
    "C": "the sum, the whole batch's gradient",
    "D": "it clears",
}
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
            "why": WHYS,
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


def _in_process(cells, module, seed, sandbox, timeout=120):
    """The harness's steps without the sandbox: cases first, then the cells, then each case."""
    import importlib

    import torch

    exercise = importlib.import_module(f"gradacc_grader.inside.{module}")
    return loop_harness.run_cells(exercise, exercise.cases(seed), cells, torch)


@pytest.fixture
def course(tmp_path, monkeypatch):
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "quiz.json").write_text(json.dumps(KEY))
    monkeypatch.setattr(sandbox_module, "run_exercise", _in_process, raising=False)
    return tmp_path


def cell(source: str = "", grade_id: str | None = None, outputs=(), **meta) -> dict:
    nbgrader = {"grade_id": grade_id, **meta} if grade_id else {}
    return {
        "cell_type": "code",
        "source": source,
        "metadata": {"nbgrader": nbgrader},
        "outputs": list(outputs),
    }


def printed(text: str, name: str = "stdout") -> dict:
    return {"output_type": "stream", "name": name, "text": text}


def report_cell(*lines: str) -> dict:
    return cell("", "q1_test", [printed(line + "\n") for line in lines], grade=True, locked=True)


def test_the_key_gives_one_check_per_autograded_cell(course):
    checks = trusted.checks_for("quiz", course, sandbox=None)
    assert [c.grade_id for c in checks] == ["q1_test", "faq3_loop_test"]
    assert trusted.checks_for("other", course, sandbox=None) == []


def test_a_link_in_place_of_the_key_is_not_read(course, tmp_path):
    (course / "keys" / "linked.json").symlink_to(course / "keys" / "quiz.json")
    assert trusted.checks_for("linked", course, sandbox=None) == []


@pytest.mark.parametrize(
    ("lines", "points"),
    [
        (["gradacc-report answer_q1 'C'"], 1.0),
        (["gradacc-report answer_q1 ' c '"], 1.0),  # spaces and case, as before
        (["some chatter", "gradacc-report answer_q1 'C'"], 1.0),  # other lines are ignored
        (["gradacc-report answer_q1 'B'"], 0.0),
        ([], 0.0),  # the cell raised NameError: never set
        (["gradacc-report answer_q1 <__main__._Yes object at 0x7f>"], 0.0),  # not a string
        (["gradacc-report answer_q1 b'C'"], 0.0),  # bytes
        (["gradacc-report answer_q1 'CC'"], 0.0),  # not a letter
        # a hook or a patched print that hedges: every report line counts, so 0
        (["gradacc-report answer_q1 'C'", "gradacc-report answer_q1 'B'"], 0.0),
        (["gradacc-report answer_q1 'C'", "gradacc-report answer_q1 'C'"], 0.0),
        (["gradacc-report answer_q1 'C'", "fake gradacc-report line"], 0.0),
        (["gradacc-report answer_q1 __import__('os').system('true')"], 0.0),  # never evaluated
    ],
)
def test_a_choice_is_the_one_value_its_report_cell_printed(course, lines, points):
    check = trusted.checks_for("quiz", course, sandbox=None)[0]
    assert check.run([cell('answer_q1 = "C"'), report_cell(*lines)]).points == points


def test_reports_printed_by_other_cells_do_not_count(course):
    """A fake report line in the student's own cell, or in a copy of the test cell that
    nbgrader's DeduplicateIds stripped of its metadata, is not the test cell's output."""
    check = trusted.checks_for("quiz", course, sandbox=None)[0]
    fake = cell("print(...)", outputs=[printed("gradacc-report answer_q1 'C'\n")])
    assert check.run([fake, report_cell("gradacc-report answer_q1 'A'")]).points == 0.0
    assert check.run([fake, report_cell()]).points == 0.0
    assert check.run([fake]).points == 0.0  # no test cell at all


def test_a_wrong_choice_is_explained_only_when_the_setting_says_so(course):
    key = KEY["cells"][0]
    cells = [report_cell("gradacc-report answer_q1 'A'")]
    later = trusted.multiple_choice("q1_test", "answer_q1", "C", WHYS, 1, explain=False)
    now = trusted.multiple_choice("q1_test", "answer_q1", "C", WHYS, 1, explain=True)
    assert WHYS["A"] not in later.run(cells).message
    assert "explained once this assignment has a due date" in later.run(cells).message
    assert WHYS["A"] in now.run(cells).message
    for check in (later, now):  # never which choice is right
        message = check.run(cells).message
        assert WHYS[key["letter"]] not in message and "'C'" not in message
    right = now.run([report_cell("gradacc-report answer_q1 'C'")])
    assert right.points == 1.0 and WHYS["C"] in right.message


def test_the_cells_before_the_test_cell_are_the_ones_run_again():
    cells = [
        cell("import torch", "setup", locked=True),
        cell("def helper():\n    return 2"),
        cell("def f():\n    return helper()", "e_answer", solution=True),
        cell("f()", "e_check", locked=True),
        cell("", "q_test", grade=True, locked=True),
        cell("", "e_test", grade=True, locked=True),
        cell("after = 1"),
    ]
    assert trusted.cells_before(cells, "e_test") == [
        "import torch",
        "def helper():\n    return 2",
        "def f():\n    return helper()",
    ]


def _loop_cells(body: str, before=(), after=()) -> list[dict]:
    answer = cell(f"{LOOP.starter}\n{body}", "faq3_loop_answer", solution=True)
    test = cell("", "faq3_loop_test", grade=True, locked=True)
    return [*map(cell, before), answer, *map(cell, after), test]


def test_the_loop_is_scored_case_by_case(course):
    check = trusted.checks_for("quiz", course, sandbox=None)[1]
    for body, points in [(LOOP.solution, 3.0), (LOOP.partial, 2.0)]:
        scored = check.run(_loop_cells(body))
        assert scored.points == points, scored.why
        assert "3 points" in scored.message or "/ 3" in scored.message
    scored = check.run(_loop_cells("    raise RuntimeError('not yet')"))
    assert scored.points == 0.0 and "RuntimeError: not yet" in scored.why


def test_honest_variations_of_the_loop_earn_every_point(course):
    check = trusted.checks_for("quiz", course, sandbox=None)[1]
    # a helper in a cell of its own, before the answer
    helper = "def scaled(loss, window):\n    return loss / len(window)"
    body = LOOP.solution.replace(
        "(loss / len(window)).backward()", "scaled(loss, window).backward()"
    )
    assert check.run(_loop_cells(body, before=[helper])).points == 3.0
    # the helper defined between the answer and the test cell
    assert check.run(_loop_cells(body, after=[helper])).points == 3.0
    # extra cells that raise, print or use magics do not stop it
    extra = ["raise ValueError('scratch')", "print('hi')", "%time x = 1"]
    assert check.run(_loop_cells(LOOP.solution, before=extra)).points == 3.0
    # the answer cell copied: the last definition before the test cell is the one graded
    copy = f"{LOOP.starter}\n    pass"
    assert check.run(_loop_cells(LOOP.solution, before=[copy])).points == 3.0
    assert (
        check.run(_loop_cells("    pass", after=[f"{LOOP.starter}\n{LOOP.solution}"])).points == 3.0
    )


def test_points_for_nothing_are_impossible_the_harness_holds_no_reference():
    """Item 3 of issue 20: the exercise function walked up the stack to the reference."""
    from gradacc_grader.inside import window_loop

    for name in ("expected", "disagrees", "HINTS"):
        assert not hasattr(window_loop, name)
    frame_walker = """\
import sys
def train_with_accumulation(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    frame, seen = sys._getframe(1), []
    while frame is not None:
        seen += [v for k, v in frame.f_globals.items() if k in ("expected", "reference")]
        frame = frame.f_back
    if seen:
        raise SystemExit("found a reference")
"""
    import torch

    outcomes = loop_harness.run_cells(window_loop, window_loop.cases(4), [frame_walker], torch)
    assert all("error" not in outcome for outcome in outcomes.values()), outcomes


def test_the_builders_key_and_the_checks_agree():
    from gradacc_grader.bank import ASSIGNMENTS

    for assignment in ASSIGNMENTS:
        key = answer_key(draw_release(assignment, b"9" * 64))
        for entry in key["cells"]:
            assert entry["kind"] in {"choice", "exercise", "written"}
            if entry["kind"] == "choice":
                assert set(entry["why"]) == {"A", "B", "C", "D"} and entry["letter"] in "ABCD"
            if entry["kind"] == "exercise":
                check = trusted.exercise(entry["grade_id"], entry["module"], entry["points"], None)
                assert check.grade_id == entry["grade_id"]


WRONG_LOOPS = {  # the loop, its cases: points it deserves out of 3
    LOOP.solution: 3.0,
    LOOP.partial: 2.0,  # the last window divided by N: "a short last window" fails
    LOOP.solution.replace("    optimizer.zero_grad()  # leftover", "    pass  # leftover"): 2.0,
    "    import torch\n    torch.allclose = lambda *a, **k: True  # patches, trains nothing": 0.0,
}


@pytest.mark.slow
def test_the_real_sandbox_grades_the_loop_case_by_case(tmp_path):
    from gradacc_grader.sandbox import Sandbox

    check = trusted.exercise("faq3_loop_test", "window_loop", 3, Sandbox(hidden=(tmp_path,)))
    for body, deserved in WRONG_LOOPS.items():
        scored = check.run(_loop_cells(body, before=["import torch"]))
        assert scored.points == deserved, scored.why
