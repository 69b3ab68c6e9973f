"""The coding exercises, graded case by case without nbgrader: the bank's solutions earn every
point, each classic bug loses exactly the cases it breaks, and the quick checks catch the common
bugs with a message that says what to do.

References are computed independently of the student's recipe: each window concatenated into
one batch (loops), or the property the answer must have (momentum), or every micro-batch size
tried in turn (planner).
"""

from __future__ import annotations

import contextlib
import io

import pytest
from gradacc_grader import scoring
from gradacc_grader.bank import ASSIGNMENTS
from gradacc_grader.bank.core import Exercise
from gradacc_grader.bank.faq_loop import LOOP, LOOP_MESSAGES

EXERCISES = [item for a in ASSIGNMENTS for item in a.items if isinstance(item, Exercise)]
SEEDS = (1, 77, 2024)


def _module(exercise):
    return scoring.exercise(exercise.module)


def _function(exercise, body: str):
    namespace: dict = {}
    exec(f"{exercise.starter}\n{body}", namespace)
    return namespace[_module(exercise)["FUNCTION"]]


def _grade(exercise, function, seed):
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        points = scoring.grade(_module(exercise), function, seed, exercise.points, "en")
    return points, printed.getvalue()


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_the_solution_earns_every_point(exercise):
    for seed in SEEDS:
        points, printed = _grade(exercise, _function(exercise, exercise.solution), seed)
        assert points == exercise.points, printed


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_a_classic_bug_loses_only_its_cases_and_gets_a_hint(exercise):
    module = _module(exercise)
    names = [name for name, _ in module["cases"](0)]
    assert set(exercise.partial_fails) < set(names)
    for seed in SEEDS:
        points, printed = _grade(exercise, _function(exercise, exercise.partial), seed)
        share = 1 - len(exercise.partial_fails) / len(names)
        assert points == round(exercise.points * share, 2), printed
        for name in names:
            mark = "\u2717" if name in exercise.partial_fails else "\u2713"
            assert f"{mark} {name}" in printed
        for name in exercise.partial_fails:
            assert module["HINTS"]["en"][name] in printed


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_every_case_has_a_hint_in_every_language(exercise):
    module = _module(exercise)
    names = {name for name, _ in module["cases"](5)}
    for lang in ("en", "yo"):
        assert set(module["HINTS"][lang]) == names


LOOP_BUGS = {
    # loss not divided: every window moves N times too far
    "not divided": ("(loss / len(window)).backward()", "loss.backward()"),
    # a step after every micro-batch
    "step every micro-batch": (
        "            (loss / len(window)).backward()\n        optimizer.step()",
        "            (loss / len(window)).backward()\n            optimizer.step()",
    ),
    # no clearing before the first micro-batch
    "not cleared first": ("    optimizer.zero_grad()  # leftover", "    pass  # leftover"),
}


@pytest.mark.parametrize("bug", LOOP_BUGS)
def test_common_loop_bugs_fail_the_hidden_cases_they_break(bug):
    old, new = LOOP_BUGS[bug]
    assert old in LOOP.solution
    points, printed = _grade(LOOP, _function(LOOP, LOOP.solution.replace(old, new)), 3)
    expected = 2.0 if bug == "not cleared first" else 0.0
    assert points == expected, printed


def test_a_full_batch_forward_pass_fails_every_loop_case():
    body = """\
    optimizer.zero_grad()
    for start in range(0, len(micro_batches), accumulation_steps):
        window = micro_batches[start : start + accumulation_steps]
        inputs = torch.cat([x for x, _ in window])
        targets = torch.cat([y for _, y in window])
        loss_fn(model(inputs), targets).backward()
        optimizer.step()
        optimizer.zero_grad()"""
    function = _function(LOOP, "    import torch\n" + body)
    points, printed = _grade(LOOP, function, 3)
    assert points == 0 and "one micro-batch at a time" in printed


def _quick_check(body: str, lang: str = "en") -> str:
    namespace: dict = {}
    exec(f"{LOOP.starter}\n{body}", namespace)
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        exec(LOOP.check[lang], namespace)
    return printed.getvalue()


@pytest.mark.parametrize(
    ("bug", "message"),
    [
        ("not divided", "divide"),
        ("step every micro-batch", "every"),
        ("not cleared first", "leftover"),
    ],
)
def test_the_quick_check_catches_the_common_loop_bugs(bug, message):
    old, new = LOOP_BUGS[bug]
    with pytest.raises(AssertionError) as caught:
        _quick_check(LOOP.solution.replace(old, new))
    assert str(caught.value) == LOOP_MESSAGES["en"][message]


def test_the_quick_check_catches_gradients_left_after_the_last_step():
    body = LOOP.solution.rsplit("        optimizer.zero_grad()", 1)[0]
    with pytest.raises(AssertionError, match="left in .grad"):
        _quick_check(body)


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_the_quick_check_passes_the_solution_and_fails_the_stub(exercise):
    for lang, check in exercise.check.items():
        namespace: dict = {}
        exec(f"{exercise.starter}\n{exercise.solution}", namespace)
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            exec(check, namespace)
        assert printed.getvalue().strip(), lang
        stub: dict = {}
        exec(f"{exercise.starter}\n    raise NotImplementedError()", stub)
        with pytest.raises(NotImplementedError):
            exec(check, stub)


def test_the_momentum_check_accepts_the_property_not_a_formula():
    from gradacc_grader.exercises import bn_momentum

    reference = {"before": [0.1, None], "accumulation_steps": 4}
    by_hand = 1 - 0.9**0.25  # four updates keep 0.9 of the old value, like one of 0.1
    assert bn_momentum.disagrees({"momenta": [by_hand, None]}, reference) is None
    assert bn_momentum.disagrees({"momenta": [0.025, None]}, reference)  # momentum / N
    assert bn_momentum.disagrees({"momenta": [by_hand, 0.1]}, reference)  # None touched


def test_the_planner_reference_tries_every_size():
    from gradacc_grader.exercises import micro_batch_plan

    mib = 2**20
    case = {
        "effective_batch": 96,
        "floor_bytes": 100 * mib,
        "bytes_per_sample": mib,
        "budget_bytes": 125 * mib,
    }  # 25 samples fit; 24 is the largest divisor of 96
    assert micro_batch_plan.expected(case) == {"plan": [24, 4]}


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_the_sandbox_half_of_an_exercise_holds_no_reference_and_no_hint(exercise):
    """inside/<module>.py is what the sandbox can read: nothing there may know the answers."""
    import importlib
    import inspect

    inside = importlib.import_module(f"gradacc_grader.inside.{exercise.module}")
    assert not {"expected", "disagrees", "HINTS"} & set(vars(inside))
    source = inspect.getsource(inside)
    assert exercise.solution.strip().splitlines()[0].strip() not in source
    for hint in _module(exercise)["HINTS"]["en"].values():
        assert hint[:40] not in source
