"""The exercises' checks: the reference passes, each named wrong answer gets its own diagnosis,
an exception or an endless loop gets a clear message, and no message shows the solution."""

from __future__ import annotations

import html
import inspect
import json
import math
import re
import string
import textwrap
import threading
import time
import unicodedata
from pathlib import Path

import nbformat
import pytest
import torch
from torch import nn

from gradacc_lessons.exercises import EXERCISES, progress, runner
from gradacc_lessons.exercises.words import MESSAGES
from tools.site import exercise_output, lesson_paths, prepare_for_site


@pytest.fixture(autouse=True)
def progress_in(tmp_path, monkeypatch):
    """Each test keeps the learner's results in its own file, never in the home folder."""
    path = tmp_path / "progress" / "exercises.json"
    monkeypatch.setenv("GRADACC_PROGRESS", str(path))
    return path


# ---- wrong answers a learner writes (the catalogue of pitfalls of lessons 1, 2, 3 and 5) ----


def off_by_one(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    optimizer.zero_grad()
    for i, (x, y) in enumerate(micro_batches):
        (loss_fn(model(x), y) / accumulation_steps).backward()
        if i % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()


def not_divided(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    optimizer.zero_grad()
    for i, (x, y) in enumerate(micro_batches):
        loss_fn(model(x), y).backward()
        if (i + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()


def not_cleared_after(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    optimizer.zero_grad()
    for i, (x, y) in enumerate(micro_batches):
        (loss_fn(model(x), y) / accumulation_steps).backward()
        if (i + 1) % accumulation_steps == 0:
            optimizer.step()


def not_cleared_first(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    for i, (x, y) in enumerate(micro_batches):
        (loss_fn(model(x), y) / accumulation_steps).backward()
        if (i + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()


def cleared_each_micro_batch(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    for i, (x, y) in enumerate(micro_batches):
        optimizer.zero_grad()
        (loss_fn(model(x), y) / accumulation_steps).backward()
        if (i + 1) % accumulation_steps == 0:
            optimizer.step()


def step_every_micro_batch(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    for x, y in micro_batches:
        optimizer.zero_grad()
        (loss_fn(model(x), y) / accumulation_steps).backward()
        optimizer.step()


def divided_twice(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    optimizer.zero_grad()
    for i, (x, y) in enumerate(micro_batches):
        (loss_fn(model(x), y) / accumulation_steps / accumulation_steps).backward()
        if (i + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()


def divided_by_all_micro_batches(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    optimizer.zero_grad()
    for i, (x, y) in enumerate(micro_batches):
        (loss_fn(model(x), y) / len(micro_batches)).backward()
        if (i + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()


def window_by_n(model, loss_fn, window):
    for x, y in window:
        (loss_fn(model(x), y) / len(window)).backward()


def window_unweighted(model, loss_fn, window):
    for x, y in window:
        loss_fn(model(x), y).backward()


def window_times_samples(model, loss_fn, window):
    for x, y in window:
        (loss_fn(model(x), y) * len(x)).backward()


def window_by_samples(model, loss_fn, window):
    batch = sum(len(x) for x, _ in window)
    for x, y in window:
        (loss_fn(model(x), y) * len(x) / batch).backward()


def _window_loop(micro_batches, accumulation_steps, model, optimizer, loss_fn, at_step):
    optimizer.zero_grad()
    for i, (x, y) in enumerate(micro_batches):
        (loss_fn(model(x), y) / accumulation_steps).backward()
        at_step("micro-batch")
        if (i + 1) % accumulation_steps == 0:
            at_step("window")
            optimizer.zero_grad()


def scheduler_per_micro_batch(model, optimizer, scheduler, loss_fn, mbs, n, max_norm):
    def at(when):
        if when == "micro-batch":
            scheduler.step()
        else:
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            optimizer.step()

    _window_loop(mbs, n, model, optimizer, loss_fn, at)


def clip_per_micro_batch(model, optimizer, scheduler, loss_fn, mbs, n, max_norm):
    def at(when):
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        if when == "window":
            optimizer.step()
            scheduler.step()

    _window_loop(mbs, n, model, optimizer, loss_fn, at)


def clip_after_step(model, optimizer, scheduler, loss_fn, mbs, n, max_norm):
    def at(when):
        if when == "window":
            optimizer.step()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scheduler.step()

    _window_loop(mbs, n, model, optimizer, loss_fn, at)


def scheduler_before_step(model, optimizer, scheduler, loss_fn, mbs, n, max_norm):
    def at(when):
        if when == "window":
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scheduler.step()
            optimizer.step()

    _window_loop(mbs, n, model, optimizer, loss_fn, at)


def _replace_batch_norms(model, make):
    for name, module in list(model.named_children()):
        if isinstance(module, nn.BatchNorm1d):
            setattr(model, name, make(module))
    return model


def batch_norm_kept(model):
    return model


def batch_norm_in_eval(model):
    return model.eval()


def norm_removed(model):
    return _replace_batch_norms(model, lambda m: nn.Identity())


def wrong_width(model):
    return _replace_batch_norms(model, lambda m: nn.LayerNorm(m.num_features + 1).double())


def group_norm(model):
    """Another right answer: GroupNorm also normalises each sample alone."""
    return _replace_batch_norms(model, lambda m: nn.GroupNorm(2, m.num_features).double())


def _arguments(micro_batch_size, steps, lightning_name="accumulate_grad_batches"):
    """The three frameworks' arguments as a learner writes them, right or wrong."""
    return {
        "TrainingArguments": {
            "per_device_train_batch_size": micro_batch_size,
            "gradient_accumulation_steps": steps,
        },
        "Accelerator": {"gradient_accumulation_steps": steps},
        "lightning.Trainer": {lightning_name: steps},
    }


def _plan_steps(plan, batch, rounding=math.ceil):
    return None if plan.micro_batch_size is None else rounding(batch / plan.micro_batch_size)


def n_rounded_down(plan, batch):
    return _plan_steps(plan, batch, math.floor), plan.peak_bytes <= plan.usable_bytes


def n_of_the_plan(plan, batch):
    return plan.accumulation_steps, plan.peak_bytes <= plan.usable_bytes


def reserve_forgotten(plan, batch):
    return _plan_steps(plan, batch), plan.peak_bytes <= plan.budget_bytes


def whole_batch_compared(plan, batch):
    return _plan_steps(plan, batch), plan.no_accumulation_bytes <= plan.usable_bytes


def floor_compared(plan, batch):
    return _plan_steps(plan, batch), plan.floor_bytes <= plan.usable_bytes


def none_forgotten(plan, batch):
    return math.ceil(batch / plan.micro_batch_size), plan.peak_bytes <= plan.usable_bytes


# (exercise, wrong answer, a fragment of its own diagnosis, computed from the cases' numbers)
WRONG = [
    ("l1_loop", off_by_one, "first step came after micro-batch 1, not 4: `i % N == 0`"),
    ("l1_loop", not_divided, "4.0× the full batch's: the loss is not divided by N = 4"),
    ("l1_loop", not_cleared_after, "Window 2's gradient holds window 1's: clear"),
    ("l1_loop", not_cleared_first, "holds what was in .grad before your loop"),
    ("l1_loop", cleared_each_micro_batch, "only its window's last micro-batch"),
    ("l1_loop", step_every_micro_batch, "after every micro-batch, not once per window of 4"),
    ("l1_loop", divided_twice, "1/4 of the full batch's: the loss is divided by N twice"),
    (
        "l1_loop",
        divided_by_all_micro_batches,
        "Window 1's gradient points the right way but is 0.333×",
    ),
    ("l1_window_end", lambda i, m, n: i % n == 0, "first step came after micro-batch 1, not 4"),
    ("l1_window_end", lambda i, m, n: (i + 1) % n == 0, "the last window holds only 2"),
    ("l1_window_end", lambda i, m, n: True, "after every micro-batch, not once per window of 4"),
    ("l1_window_end", lambda i, m, n: i == m - 1, "only after the last micro-batch: one step"),
    ("l1_window_end", lambda i, m, n: int((i + 1) % n == 0), "returned a int: return True"),
    ("l2_uneven", window_by_n, f"a sample of the micro-batch of 16 counts {64 / (3 * 16):.2f}"),
    ("l2_uneven", window_unweighted, "sum of the 3 micro-batches' mean gradients"),
    ("l2_uneven", window_times_samples, "not divided by the window's 64"),
    ("l2_tokens", window_by_n, "divided by N = 4 (the 2024 Transformers bug)"),
    ("l2_tokens", window_by_samples, "weighted by its share of the samples"),
    ("l2_tokens", window_unweighted, "sum of the 4 micro-batches' mean gradients"),
    ("l2_schedule", scheduler_per_micro_batch, "moved 4 steps between two optimizer steps"),
    ("l2_schedule", clip_per_micro_batch, "clipped before the window was complete"),
    ("l2_schedule", clip_after_step, "it was not clipped before the step"),
    ("l2_schedule", scheduler_before_step, "scheduler.step() ran before optimizer.step()"),
    ("l3_safe", batch_norm_kept, "Layer `1` of the returned network is still a BatchNorm1d"),
    ("l3_safe", batch_norm_in_eval, "put in eval mode"),
    ("l3_safe", norm_removed, "had 2 normalization layers and now has 0"),
    ("l3_safe", wrong_width, "normalized_shape=[33]"),
    ("l4_peak", lambda f, a, b, n: f + b * a, "the peak of the whole batch in one step"),
    ("l4_peak", lambda f, a, b, n: math.ceil(b / n) * a, "(300 MiB, the floor) stay in memory"),
    ("l4_peak", lambda f, a, b, n: f + b * a // n, "its largest micro-batch, of 34 samples"),
    ("l4_peak", lambda f, a, b, n: (f + b * a) // n, "the floor was divided by N = 4 too"),
    ("l4_budget", lambda b, f, a: b // a, "you chose 341 samples: the whole budget"),
    ("l4_budget", lambda b, f, a: math.ceil((b - f) / a), "242 samples of 3 MiB on a floor"),
    ("l4_budget", lambda b, f, a: (b - f) // a, "when not even one sample fits, return 0"),
    ("l7_arguments", lambda b, m, p: _arguments(m, b // m), "would be 2× too large. It is 32"),
    ("l7_arguments", lambda b, m, p: _arguments(b // p, 1), "per_device_train_batch_size is 256"),
    (
        "l7_arguments",
        lambda b, m, p: _arguments(m, b // (m * p), "gradient_accumulation_steps"),
        "lightning.Trainer got no accumulate_grad_batches (you gave gradient_accumulation_steps)",
    ),
    ("l5_steps", lambda b, n, e: b * e, "you counted 300, the micro-batches"),
    ("l5_steps", lambda b, n, e: b // n * e, "holds 2 micro-batches and still gets its step"),
    ("l5_steps", lambda b, n, e: math.ceil(b * e / n), "you counted 5, the right count is 6"),
    ("l5_steps", lambda b, n, e: float(math.ceil(b / n) * e), "75.0 is the right count as a float"),
    ("l9_plan", n_rounded_down, "you chose N = 4: 4 × 13 = 52 samples, short of 64"),
    ("l9_plan", n_of_the_plan, "For 100 samples you returned N = 5, the plan's N"),
    (
        "l9_plan",
        lambda p, b: (b / p.micro_batch_size, True),
        "13 is 4.92: a loop runs a whole number",
    ),
    ("l9_plan", reserve_forgotten, "over the 1.872 MiB left once the reserve of 1.128 MiB"),
    ("l9_plan", whole_batch_compared, "6.753 MiB is the peak of the whole effective batch"),
    ("l9_plan", floor_compared, "the floor of 3.797 KiB fits, yet the activations"),
    ("l9_plan", none_forgotten, "TypeError: unsupported operand type(s) for /: 'int' and"),
    (
        "l9_plan",
        lambda p, b: [_plan_steps(p, b), True],
        "returned a list: return two values, N and",
    ),
]


def fresh(exercise_id: str) -> runner.Exercise:
    """The exercise with no attempt yet (the module's own keeps a notebook's attempts)."""
    e = EXERCISES[exercise_id]
    return runner.Exercise(e.id, e.lesson, e.diagnose, e.reference, e.hint_key)


@pytest.mark.parametrize("exercise_id", list(EXERCISES))
def test_the_reference_solution_passes(exercise_id):
    verdict = fresh(exercise_id).check(EXERCISES[exercise_id].reference)
    assert verdict.passed is True, verdict.text


def test_another_right_answer_passes():
    assert fresh("l3_safe").check(group_norm).passed is True


@pytest.mark.parametrize(("exercise_id", "wrong", "fragment"), WRONG)
def test_each_named_wrong_answer_gets_its_diagnosis(exercise_id, wrong, fragment):
    verdict = fresh(exercise_id).check(wrong)
    assert verdict.passed is False
    assert fragment in verdict.text, verdict.text


def test_every_exercise_recognises_three_wrong_answers_at_least():
    counts = {e: sum(w[0] == e for w in WRONG) for e in EXERCISES}
    assert min(counts.values()) >= 3, counts


def _unwritten(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    """The learner's cell as the notebook gives it."""
    ...


@pytest.mark.parametrize("exercise_id", list(EXERCISES))
def test_an_unwritten_function_is_not_written_yet_and_not_an_attempt(exercise_id):
    exercise = fresh(exercise_id)
    verdict = exercise.check(_unwritten, lang="yo")
    assert verdict.passed is None and "`...`" in verdict.text
    assert exercise.tries == 0 and exercise.first_right is None
    assert "Ìdáhùn" in exercise.solution(lang="yo").text  # still hidden: "check an attempt first"
    assert "def " not in exercise.solution().text


def _raises(*args):
    numbers = [1, 2]
    return numbers[len(args) + 5]


@pytest.mark.parametrize("exercise_id", list(EXERCISES))
def test_an_exception_names_the_learners_line_not_ours(exercise_id):
    verdict = fresh(exercise_id).check(_raises)
    line = inspect.getsourcelines(_raises)[1] + 2
    assert verdict.passed is False
    assert f"IndexError: list index out of range (line {line}: `return numbers" in verdict.text
    assert "gradacc_lessons" not in verdict.text and "Traceback" not in verdict.text


def _endless(*args):
    while True:
        pass


@pytest.mark.parametrize("exercise_id", list(EXERCISES))
def test_an_endless_loop_is_stopped_by_the_time_limit(exercise_id, monkeypatch):
    monkeypatch.setattr(runner, "TIME_LIMIT_S", 0.2)
    verdict = fresh(exercise_id).check(_endless)
    assert verdict.passed is False
    assert "stopped your function after 0.2 s" in verdict.text


def test_a_loop_that_steps_forever_is_stopped_by_counting_steps():
    def steps_forever(model, optimizer, loss_fn, micro_batches, accumulation_steps):
        while True:
            optimizer.step()

    verdict = fresh("l1_loop").check(steps_forever)
    assert "optimizer.step() was called 120 times" in verdict.text  # 10 × its 12 micro-batches


def test_the_time_limit_holds_off_the_main_thread_too():
    stop = threading.Event()

    def waits(*args):
        while not stop.is_set():
            time.sleep(0.01)

    said = {}
    worker = threading.Thread(target=lambda: said.update(key=_call_in_thread(waits)))
    worker.start()
    worker.join()
    stop.set()
    assert said["key"] == "time_limit"


def _call_in_thread(function):
    try:
        runner.call_learner(function, limit_s=0.1)
    except runner.Failed as failed:
        return failed.key
    return "finished"


def test_the_first_try_counts_and_the_solution_follows_an_attempt():
    exercise = fresh("l5_steps")
    assert "def " not in exercise.solution().text
    assert exercise.check(lambda b, n, e: b * e).passed is False
    assert exercise.check(EXERCISES["l5_steps"].reference).passed is True
    assert (exercise.tries, exercise.first_right, exercise.right) == (2, False, True)
    assert "return windows * epochs" in exercise.solution().text


def _solution_lines(exercise) -> list[str]:
    """The lines of the reference's body that give the answer away: a computation or a test.

    A bare call such as `optimizer.step()` names a method a message may name too.
    """
    body = inspect.getsource(exercise.reference).splitlines()[1:]
    lines = [line.split("#")[0].strip() for line in body]
    telling = ("=", "/", "*", "%", "for ", "if ", "return ")
    return [line for line in lines if len(line) >= 12 and any(t in line for t in telling)]


@pytest.mark.parametrize("lang", ["en", "yo"])
def test_no_check_output_shows_the_solution(lang):
    for exercise_id, wrong, _ in WRONG:
        exercise = fresh(exercise_id)
        texts = [exercise.check(wrong, lang=lang).text, exercise.hint(lang=lang).text]
        assert len(_solution_lines(exercise)) >= 1
        for line in _solution_lines(exercise):
            for text in texts:
                assert line not in text, (exercise_id, line)


def test_every_message_is_in_both_languages_with_the_same_fields():
    fields = string.Formatter()
    for key, texts in MESSAGES.items():
        assert set(texts) == {"en", "yo"}, key
        names = [{f for _, f, _, _ in fields.parse(t) if f} for t in texts.values()]
        assert names[0] == names[1], key
        assert unicodedata.is_normalized("NFC", texts["yo"]), key
        assert texts["yo"] != texts["en"], key


def test_a_verdict_shows_as_text_and_as_markdown():
    verdict = fresh("l5_steps").check(lambda b, n, e: b * e)
    assert repr(verdict) == verdict.text
    assert verdict._repr_markdown_().startswith("✘ ")


def test_check_wants_the_function_itself():
    verdict = fresh("l5_steps").check(3)
    assert verdict.passed is False and "not a value of type int" in verdict.text


# ---- the exercises as the lessons give them ----


def _exercise_cells() -> list[tuple[str, str, str]]:
    """(lesson, the learner's cell, the check cell) of every exercise of every lesson."""
    found = []
    for path in lesson_paths():
        cells = {c.id: c.source for c in nbformat.read(path, as_version=4).cells}
        for cell_id, source in cells.items():
            if cell_id.endswith("-check") and "-exercise-" in cell_id:
                found.append((path.name, cells[cell_id.replace("-check", "-code")], source))
    return found


def test_every_exercise_is_in_its_lesson_with_a_one_line_check():
    cells = _exercise_cells()
    checked = {
        e.id for e in EXERCISES.values() for _, code, _ in cells if e.reference.__name__ in code
    }
    assert checked == set(EXERCISES)
    assert all("\n" not in check.strip() for _, _, check in cells)


@pytest.mark.parametrize(("lesson", "code", "check"), _exercise_cells(), ids=lambda v: v[:14])
def test_a_lessons_exercise_runs_unwritten_then_passes_with_the_solution(lesson, code, check):
    namespace: dict = {}
    exec(compile(code, f"<{lesson}>", "exec"), namespace)
    unwritten = eval(check, namespace)  # the notebook runs on: a verdict, no exception
    assert unwritten.passed is None and "Not written yet" in unwritten.text
    name = check.split(".check(")[1].rstrip(")")
    exercise = next(e for e in EXERCISES.values() if e.reference.__name__ == name)
    assert code.endswith("\n    ...")  # the body the learner replaces
    written = code.removesuffix("    ...") + textwrap.indent(_body(exercise.reference), "    ")
    exec(compile(written, f"<{lesson}>", "exec"), namespace)
    assert eval(check, namespace).passed is True


def _body(function) -> str:
    """The source of `function`'s body, dedented."""
    lines = inspect.getsource(function).splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.rstrip().endswith(":")) + 1
    return textwrap.dedent("".join(lines[start:]))


def test_every_message_a_check_raises_exists():
    source = "".join(p.read_text() for p in Path(runner.__file__).parent.glob("*.py"))
    keys = set(re.findall(r'Failed\(\s*"(\w+)"', source))
    keys |= {f"divided_by_n_{unit}" for unit in ("samples", "tokens")}  # Failed(f"...{unit}")
    assert len(keys) >= 30 and keys <= set(MESSAGES)


# ---- lesson 8's score ----


def test_the_score_counts_the_first_try_across_kernels(progress_in):
    fresh("l5_steps").check(lambda b, n, e: b * e)  # lesson 5's kernel: wrong first
    fresh("l5_steps").check(EXERCISES["l5_steps"].reference)  # a later kernel: right
    fresh("l1_loop").check(EXERCISES["l1_loop"].reference)  # right at once
    fresh("l2_uneven").check(_unwritten)  # not written: not an attempt
    saved = json.loads(progress_in.read_text(encoding="utf-8"))
    assert saved == {
        "l5_steps": {"tries": 2, "first_right": False, "right": True},
        "l1_loop": {"tries": 1, "first_right": True, "right": True},
    }
    total = len(EXERCISES)
    score = progress.exercise_score()
    assert (
        score.title
        == f"Exercises: 1 / {total} right at the first try · 2 / {total} right in the end"
    )
    rows = {row[1]: row for row in score.rows}
    assert rows["l5_steps"][2:] == (2, "no", "yes") and rows["l2_uneven"][2] == "not checked yet"
    assert "ìgbìyànjú àkọ́kọ́" in progress.exercise_score("yo").title


def test_a_broken_results_file_says_what_to_do(progress_in):
    progress_in.parent.mkdir(parents=True)
    progress_in.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="delete it to start afresh"):
        progress.load()


def test_a_home_that_cannot_be_written_still_gets_its_verdict(progress_in):
    progress_in.parent.write_text("a file where the folder should be", encoding="utf-8")
    verdict = fresh("l5_steps").check(EXERCISES["l5_steps"].reference)
    assert verdict.passed is True and not progress_in.exists()


# ---- the site ----


def test_the_site_shows_each_check_with_its_hint_and_solution_folded():
    path = next(p for p in lesson_paths() if p.name.startswith("02_"))
    page = prepare_for_site(nbformat.read(path, as_version=4), path.name)
    checks = [c for c in page.cells if c.id.endswith("-check") and "-exercise-" in c.id]
    assert len(checks) == 3
    for cell in checks:
        (output,) = cell.outputs
        shown = output["data"]["text/html"]
        name = cell.source.split("(")[1].rstrip(")")
        reference = next(e for e in EXERCISES.values() if e.reference.__name__ == name).reference
        solution = html.escape(inspect.getsource(reference))
        assert f"<summary>Solution</summary><pre><code>{solution}</code></pre></details>" in shown
        assert shown.index("<details") > shown.index("JupyterLab or Colab")


def test_a_check_cell_of_no_exercise_is_refused_by_the_site():
    with pytest.raises(ValueError, match="checks no exercise"):
        exercise_output("quiz.check(my_function)", "x.ipynb, cell 3")


def test_a_function_returning_a_constant_is_an_attempt_not_unwritten():
    # `return True` compiles to the same bytecode as `...`; only the constant differs
    verdict = fresh("l1_window_end").check(lambda i, micro_batches, n: True)
    assert verdict.passed is False and "after every micro-batch" in verdict.text
