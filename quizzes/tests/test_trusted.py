"""The trusted re-check's decisions: answers read as literals, loops graded case by case.

(Moved here from test_grading.py by "grader"; "assess" owns what the checks decide.)
"""

from __future__ import annotations

import pytest
from gradacc_grader.sandbox import Sandbox
from gradacc_grader.trusted import literal_answer, loop_exercise

NO_LOOP = "def train_with_accumulation(model, optimizer, loss_fn, micro_batches, steps):\n    pass"


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
    assert literal_answer(["import torch", source], "answer_faq1") == expected


def test_an_answer_rebound_in_another_cell_does_not_count():
    right = 'answer_faq1 = "B"'
    assert literal_answer([right, "assert answer_faq1 == 'B'"], "answer_faq1") == "B"
    assert literal_answer([right, "answer_faq1 = _Yes()"], "answer_faq1") is None
    assert literal_answer([right, "for answer_faq1 in 'AB': pass"], "answer_faq1") is None
    assert literal_answer([right, "%time answer_faq1 = 'C'"], "answer_faq1") is None
    assert literal_answer(["x = 1", "x = 2"], "answer_faq1") is None  # never set


RIGHT_LOOP = """
def train_with_accumulation(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    optimizer.zero_grad()
    for start in range(0, len(micro_batches), accumulation_steps):
        window = micro_batches[start : start + accumulation_steps]
        for inputs, targets in window:
            (loss_fn(model(inputs), targets) / len(window)).backward()
        optimizer.step()
        optimizer.zero_grad()
"""
WRONG_LOOPS = {
    "last window divided by N": RIGHT_LOOP.replace(
        "len(window)).backward", "accumulation_steps).backward"
    ),
    "no clearing at the start": RIGHT_LOOP.replace("    optimizer.zero_grad()\n    for", "    for"),
    "patches torch, does nothing": "import torch\ntorch.allclose = lambda *a, **k: True\n"
    + NO_LOOP.replace("steps", "accumulation_steps"),
}


def test_loop_recheck_gives_full_points_to_a_right_loop_and_takes_them_from_wrong_ones(tmp_path):
    check = loop_exercise(Sandbox(hidden=(tmp_path,)))
    points, why = check.run({"loop_answer": RIGHT_LOOP}, {"loop_answer": [RIGHT_LOOP]})
    assert points == 3.0, why
    for name, source in WRONG_LOOPS.items():
        points, why = check.run({"loop_answer": source}, {"loop_answer": [source]})
        assert points < 3.0, (name, why)
