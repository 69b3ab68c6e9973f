"""Lesson 7's claims about the frameworks, each measured against a float64 reference by hand.

The references here are written out in this file (float64 SGD, the loss shifted and averaged
by hand, clipping by hand), independent of `gradacc_lessons`. Each test names the claim of the
lesson it checks: when an upgrade of Transformers, Accelerate or Lightning changes a behaviour,
the failure says which sentence of lesson 7 no longer holds.

Tolerances: a float32 run against its float64 reference, 3 or fewer SGD steps of this model,
measured at most 7e-7 (update error, L2 relative); FLOAT32 = 1e-5 leaves room for other
thread counts and machines. The smallest wrong recipe the lesson shows is 3e-2 (the Trainer's
count for GPT-2), so WRONG = 1e-2 separates the two by a factor of 1,000.
"""

from __future__ import annotations

import copy
import functools
import math
import os
import random
from dataclasses import replace

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from gradacc_lessons.data import PAD
from gradacc_lessons.demos import frameworks

FLOAT32 = 1e-5  # float32 vs float64 update error, measured <= 7e-7 (see the module docstring)
WRONG = 1e-2  # every wrong recipe of the lesson is above 3e-2
FLOAT64 = 1e-12  # two float64 computations of the same update, in a different order

TEXT = frameworks.zen_of_python()
VOCABULARY = frameworks.make_vocabulary(TEXT)


def chunks(count, micro_batch_size, n, **settings):
    ids, labels = frameworks.make_chunks(TEXT, VOCABULARY, count, 16)
    return frameworks.Recipe(ids, labels, micro_batch_size, n, **settings)


def lines(count, micro_batch_size, n, **settings):
    ids, labels = frameworks.make_padded_lines(TEXT, VOCABULARY, count)
    return frameworks.Recipe(ids, labels, micro_batch_size, n, **settings)


# --- the references, by hand ---------------------------------------------------------------


def _windows(recipe):
    micro = list(
        zip(
            recipe.input_ids.split(recipe.micro_batch_size),
            recipe.labels.split(recipe.micro_batch_size),
        )
    )
    n = recipe.accumulation_steps
    return [micro[i : i + n] for i in range(0, len(micro), n)]


def _mean_loss(model, ids, labels):
    # the causal loss written out: position t predicts label t + 1, padding (-100) skipped
    logits = model(ids).logits[:, :-1]
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1))


def _clip(grads, max_norm):
    total = math.sqrt(sum(float((g**2).sum()) for g in grads))
    scale = min(1.0, max_norm / (total + 1e-6))  # torch.nn.utils.clip_grad_norm_'s rule
    return [g * scale for g in grads]


def _lr(recipe, step, length):
    return recipe.lr * (1.0 if recipe.schedule == "constant" else max(0.0, 1 - step / length))


def hand_sgd(model, recipe, weight, *, skip_short_window=False, clip_each=False, length=None):
    """Float64 SGD by hand: a window's gradient is sum_i weight(window, i) * grad(mean loss_i).

    Returns the update (parameters after minus before) and, per step, the loss of the last
    micro-batch of the window.
    """
    model = copy.deepcopy(model).double()
    params = list(model.parameters())
    before = [p.detach().clone() for p in params]
    length = length or recipe.schedule_steps or len(_windows(recipe))
    last_losses = []
    for step, window in enumerate(_windows(recipe)):
        if skip_short_window and len(window) < recipe.accumulation_steps:
            break
        grads = [torch.zeros_like(p) for p in params]
        for i, (ids, labels) in enumerate(window):
            loss = _mean_loss(model, ids, labels)
            micro = torch.autograd.grad(loss * weight(window, i), params)
            grads = [g + m for g, m in zip(grads, micro)]
            if clip_each and recipe.max_grad_norm:
                grads = _clip(grads, recipe.max_grad_norm)
        last_losses.append(loss.item())
        if recipe.max_grad_norm and not clip_each:
            grads = _clip(grads, recipe.max_grad_norm)
        with torch.no_grad():
            for p, g in zip(params, grads):
                p -= _lr(recipe, step, length) * g
    return _named(model, [p.detach() - b for p, b in zip(params, before)]), last_losses


def hand_full_batch(model, recipe):
    """The truth by hand: each window concatenated into one batch, float64; its loss per step."""
    model = copy.deepcopy(model).double()
    params = list(model.parameters())
    before = [p.detach().clone() for p in params]
    window_losses = []
    for step, window in enumerate(_windows(recipe)):
        ids, labels = (torch.cat(parts) for parts in zip(*window))
        loss = _mean_loss(model, ids, labels)
        grads = list(torch.autograd.grad(loss, params))
        window_losses.append(loss.item())
        if recipe.max_grad_norm:
            grads = _clip(grads, recipe.max_grad_norm)
        with torch.no_grad():
            for p, g in zip(params, grads):
                p -= _lr(recipe, step, len(_windows(recipe))) * g
    return _named(model, [p.detach() - b for p, b in zip(params, before)]), window_losses


def _named(model, tensors):
    return {name: t for (name, _), t in zip(model.named_parameters(), tensors)}


def _targets(labels):
    return int((labels[:, 1:] != -100).sum())


def by_tokens(window, i):  # the truth, micro-batch by micro-batch
    return _targets(window[i][1]) / sum(_targets(y) for _, y in window)


def by_n(n):  # what accelerator.backward and Lightning do: every loss / N
    return lambda window, i: 1 / n


def by_sequences(window, i):  # train_accumulated: a micro-batch's share of the samples
    return len(window[i][0]) / sum(len(x) for x, _ in window)


def by_labels(window, i):  # the window's summed token loss / its labels counted before the shift
    return _targets(window[i][1]) / sum(int((y != -100).sum()) for _, y in window)


def error(reference, run, model):
    """run's update against a reference update, as the lesson measures it (relative L2)."""
    start = {n: p.detach().double() for n, p in model.named_parameters()}
    diff = sum(float(((run.parameters[n] - start[n] - reference[n]) ** 2).sum()) for n in start)
    norm = sum(float((reference[n] ** 2).sum()) for n in start)
    return math.sqrt(diff / norm)


def holds(claim, value, bound, *, above=False):
    ok = value > bound if above else value < bound
    relation = ">" if above else "<"
    assert ok, (
        f"lesson 7 says: {claim} -- no longer holds: "
        f"measured {value:.3g}, expected {relation} {bound:g}"
    )


# --- runs, measured once per recipe -------------------------------------------------------

ALL_WAYS = (
    *frameworks.FOUR_WAYS,
    "textbook loop",
    "Accelerate + token weights",
    "Lightning + token weights",
)
EVEN = [(24, 2, 4), (18, 3, 2)]  # (sequences, micro_batch_size, N): every window full
TAILS = [
    (20, 2, 4),
    (14, 2, 3),
    (11, 2, 4),
]  # last windows of 2, 1 and 2 micro-batches (one of 1 row)
PADDED = [(16, 2, 4), (19, 3, 2)]  # lines of the Zen, padded; the second ends on a window of 1 line


@functools.cache
def model_of(kind):
    return frameworks.tiny_causal_lm(len(VOCABULARY), kind=kind, seed=0)


@functools.cache
def measured(maker, shape, ways=frameworks.FOUR_WAYS, kind="llama", **settings):
    recipe = {"chunks": chunks, "lines": lines}[maker](*shape, **settings)
    return recipe, frameworks.measure(model_of(kind), recipe, ways)


# --- the references themselves ----------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("shape", TAILS)
def test_the_two_hand_references_agree_in_float64(shape):
    recipe = chunks(*shape)
    whole, _ = hand_full_batch(model_of("llama"), recipe)
    weighted, _ = hand_sgd(model_of("llama"), recipe, by_tokens)
    diff = max(float((whole[n] - weighted[n]).abs().max()) for n in whole)
    assert diff < FLOAT64 * max(float(t.abs().max()) for t in whole.values())


@pytest.mark.slow
def test_the_lessons_error_is_this_files_error():
    # what the lesson prints is the update error computed here, against the hand truth
    recipe, measurement = measured("chunks", TAILS[0], ("Accelerate",))
    truth, _ = hand_full_batch(model_of("llama"), recipe)
    mine = error(truth, measurement.runs["Accelerate"], model_of("llama"))
    assert measurement.errors["Accelerate"] == pytest.approx(mine, rel=1e-6)


# --- section 2: even windows -----------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("shape", EVEN)
@pytest.mark.parametrize("way", frameworks.FOUR_WAYS)
def test_even_windows_are_the_full_batch(shape, way):
    recipe, measurement = measured("chunks", shape, schedule="linear")
    truth, _ = hand_full_batch(model_of("llama"), recipe)
    run = measurement.runs[way]
    holds(
        f"on even windows {way} is the full batch (shape {shape})",
        error(truth, run, model_of("llama")),
        FLOAT32,
    )
    assert len(run.learning_rates) == len(_windows(recipe)), f"{way}: one step per window"


# --- section 3: a short last window -----------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("shape", TAILS)
def test_the_trainer_and_the_course_get_the_short_last_window_right(shape):
    recipe, measurement = measured("chunks", shape, ALL_WAYS)
    truth, _ = hand_full_batch(model_of("llama"), recipe)
    for way in (
        "Trainer",
        "train_accumulated",
        "Accelerate + token weights",
        "Lightning + token weights",
    ):
        holds(
            f"{way} gets a short last window right (shape {shape})",
            error(truth, measurement.runs[way], model_of("llama")),
            FLOAT32,
        )


@pytest.mark.slow
@pytest.mark.parametrize("shape", TAILS)
@pytest.mark.parametrize("way", ["Accelerate", "Lightning"])
def test_accelerate_and_lightning_divide_a_short_last_window_by_n(shape, way):
    recipe, measurement = measured("chunks", shape, ALL_WAYS)
    run, model = measurement.runs[way], model_of("llama")
    divided, _ = hand_sgd(model, recipe, by_n(recipe.accumulation_steps))
    truth, _ = hand_full_batch(model, recipe)
    claim = f"{way} steps on a short last window but divides its losses by N (shape {shape})"
    holds(claim, error(divided, run, model), FLOAT32)
    holds(claim + ", so it misses the full batch", error(truth, run, model), WRONG, above=True)
    assert len(run.learning_rates) == len(_windows(recipe)), claim


@pytest.mark.slow
@pytest.mark.parametrize("shape", TAILS)
def test_the_textbook_loop_drops_a_short_last_window(shape):
    recipe, measurement = measured("chunks", shape, ALL_WAYS)
    run, model = measurement.runs["textbook loop"], model_of("llama")
    dropped, _ = hand_sgd(model, recipe, by_n(recipe.accumulation_steps), skip_short_window=True)
    claim = f"the textbook loop never steps on a short last window (shape {shape})"
    holds(claim, error(dropped, run, model), FLOAT32)
    assert len(run.learning_rates) == len(_windows(recipe)) - 1, claim


# --- section 4: tokens -------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("shape", PADDED)
def test_only_token_weights_match_padded_lines(shape):
    ways = (*frameworks.FOUR_WAYS, "Accelerate + token weights", "Lightning + token weights")
    recipe, measurement = measured("lines", shape, ways)
    model = model_of("llama")
    truth, _ = hand_full_batch(model, recipe)
    mean_of_means, _ = hand_sgd(model, recipe, by_n(recipe.accumulation_steps))
    by_samples, _ = hand_sgd(model, recipe, by_sequences)
    expected = {
        "Trainer": truth,
        "Accelerate + token weights": truth,
        "Lightning + token weights": truth,
        "Accelerate": mean_of_means,
        "Lightning": mean_of_means,
        "train_accumulated": by_samples,
    }
    for way, reference in expected.items():
        run = measurement.runs[way]
        holds(
            f"on padded lines {way} matches its weighting (shape {shape})",
            error(reference, run, model),
            FLOAT32,
        )
        if reference is not truth:
            holds(
                f"on padded lines {way} misses the full batch (shape {shape})",
                error(truth, run, model),
                WRONG,
                above=True,
            )


@pytest.mark.slow
@pytest.mark.parametrize("shape", PADDED)
def test_the_trainer_counts_shifted_labels_for_llama(shape):
    recipe, measurement = measured("lines", shape, ("Trainer",))
    expected = [sum(_targets(y) for _, y in window) for window in _windows(recipe)]
    assert measurement.runs["Trainer"].token_counts == expected, (
        "lesson 7 says: the Trainer counts the shifted labels of a LlamaForCausalLM "
        "-- no longer holds"
    )
    assert recipe.window_tokens() == expected


@pytest.mark.slow
@pytest.mark.parametrize("shape", PADDED)
def test_the_trainer_counts_unshifted_labels_for_gpt2(shape):
    recipe, measurement = measured("lines", shape, ("Trainer",), kind="gpt2")
    run, model = measurement.runs["Trainer"], model_of("gpt2")
    labels = [sum(int((y != -100).sum()) for _, y in window) for window in _windows(recipe)]
    claim = "the Trainer counts GPT2LMHeadModel's labels before the shift (loss_type None)"
    assert model.loss_type is None, claim
    assert run.token_counts == labels, f"lesson 7 says: {claim} -- no longer holds"
    assert recipe.window_labels() == labels
    holds(claim, error(hand_sgd(model, recipe, by_labels)[0], run, model), FLOAT32)
    holds(
        claim + ", so it misses the full batch",
        error(hand_full_batch(model, recipe)[0], run, model),
        WRONG,
        above=True,
    )


@pytest.mark.slow
def test_telling_gpt2_its_loss_type_fixes_the_trainers_count():
    model = copy.deepcopy(model_of("gpt2"))
    model.loss_type = "ForCausalLM"
    recipe = lines(*PADDED[0])
    run = frameworks.train_hf_trainer(model, recipe)
    holds(
        "with loss_type='ForCausalLM' the Trainer is right for GPT-2",
        error(hand_full_batch(model, recipe)[0], run, model),
        FLOAT32,
    )
    assert run.token_counts == recipe.window_tokens()


# --- section 5: what each one logs -------------------------------------------------------------


@pytest.mark.slow
def test_what_each_one_logs_as_the_loss():
    recipe, measurement = measured("chunks", EVEN[0], schedule="linear")
    model = model_of("llama")
    _, window_losses = hand_full_batch(model, recipe)
    _, last_losses = hand_sgd(model, recipe, by_tokens)
    # the two must differ for the claims to mean anything
    assert min(abs(a - b) for a, b in zip(window_losses, last_losses)) > 1e-3
    expected = {
        "Trainer": window_losses,
        "train_accumulated": window_losses,
        "Lightning": last_losses,
        "Accelerate": last_losses,
    }
    for way, losses in expected.items():
        what = "the window's loss" if losses is window_losses else "the last micro-batch's loss"
        logged = measurement.runs[way].logged_losses
        assert logged == pytest.approx(losses, rel=1e-5), (
            f"lesson 7 says: {way} logs {what} at each optimizer step -- no longer holds: "
            f"{logged} vs {losses}"
        )


# --- section 6: the scheduler ------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("shape", [EVEN[0], TAILS[0], TAILS[2]])
def test_schedulers_advance_once_per_optimizer_step(shape):
    recipe, measurement = measured("chunks", shape, schedule="linear")
    steps = math.ceil(len(recipe.micro_batches()) / recipe.accumulation_steps)
    expected = [recipe.lr * (1 - k / steps) for k in range(steps)]
    for way, run in measurement.runs.items():
        claim = f"{way} advances its scheduler once per optimizer step (shape {shape})"
        assert run.scheduler_steps == steps, f"lesson 7 says: {claim} -- got {run.scheduler_steps}"
        assert run.learning_rates == pytest.approx(expected, rel=1e-6), claim
        assert run.schedule_length == steps, f"{way} sizes its schedule in optimizer steps"


@pytest.mark.slow
def test_a_schedule_sized_by_micro_batches_is_a_quarter_done():
    recipe = chunks(*EVEN[0], schedule="linear")
    micro_batches = len(recipe.micro_batches())
    run = frameworks.train_accelerate(
        model_of("llama"), replace(recipe, schedule_steps=micro_batches)
    )
    steps = len(_windows(recipe))
    assert run.scheduler_steps == steps
    assert run.learning_rates[-1] == pytest.approx(1 - (steps - 1) / micro_batches), (
        "lesson 7 says: Accelerate steps a schedule once per window, whatever it was sized for"
    )


# --- section 7: clipping ------------------------------------------------------------------------


@pytest.mark.slow
def test_every_framework_clips_once_per_window():
    recipe, measurement = measured(
        "chunks",
        EVEN[0],
        (*frameworks.FOUR_WAYS, "Accelerate, clip every micro-batch"),
        max_grad_norm=0.3,
    )
    model = model_of("llama")
    truth, _ = hand_full_batch(model, recipe)
    assert min(measurement.runs["Trainer"].grad_norms) > 0.3, "the limit must clip every step"
    for way in frameworks.FOUR_WAYS:
        holds(
            f"{way} clips the window's summed gradient once, before the step",
            error(truth, measurement.runs[way], model),
            FLOAT32,
        )
    each, _ = hand_sgd(model, recipe, by_tokens, clip_each=True)
    run = measurement.runs["Accelerate, clip every micro-batch"]
    holds(
        "clip_grad_norm_ on every micro-batch clips partial sums", error(each, run, model), FLOAT32
    )
    holds(
        "clipping every micro-batch misses the full batch",
        error(truth, run, model),
        WRONG,
        above=True,
    )


# Reading the defaults imports Transformers, Accelerate and Lightning: 3 s (`make test`).
@pytest.mark.slow
def test_the_defaults_the_lesson_names():
    rows = {
        (cls, setting): default for cls, setting, default in frameworks.framework_defaults().rows
    }
    assert rows[("Trainer", "max_grad_norm")] == 1.0, "lesson 7 says: the Trainer clips at 1.0"
    assert rows[("Lightning Trainer", "gradient_clip_val")] is None, "Lightning does not clip"
    # Lightning's signature says None, and its Trainer.__init__ turns None into 50.
    assert rows[("Lightning Trainer", "log_every_n_steps")] == "None (means 50)"
    assert rows[("Trainer", "average_tokens_across_devices")] is True
    assert rows[("Trainer", "lr_scheduler_type")] == "linear"


@pytest.mark.slow
def test_the_trainer_divides_by_the_windows_micro_batches_without_a_token_count():
    # the translation table: "else / the micro-batches in the window"
    model = copy.deepcopy(model_of("llama"))
    model.accepts_loss_kwargs = False  # a model whose forward takes no num_items_in_batch
    recipe = lines(*PADDED[1])
    run = frameworks.train_hf_trainer(model, recipe)
    per_window, _ = hand_sgd(model, recipe, lambda window, i: 1 / len(window))
    claim = "without a token count the Trainer divides by the micro-batches in the window"
    assert run.token_counts == [None] * len(_windows(recipe)), claim
    holds(claim, error(per_window, run, model), FLOAT32)


@pytest.mark.slow
def test_the_course_records_each_windows_last_micro_batch_loss():
    recipe, measurement = measured("chunks", EVEN[0], schedule="linear")
    _, last_losses = hand_sgd(model_of("llama"), recipe, by_tokens)
    course = measurement.runs["train_accumulated"]
    assert course.last_micro_batch_losses == pytest.approx(last_losses, rel=1e-5)


# --- what the lesson shows ------------------------------------------------------------------------


@pytest.mark.slow
def test_tables_show_every_row_and_column():
    recipe, measurement = measured("chunks", EVEN[0], schedule="linear")
    text = repr(measurement)
    assert text.splitlines()[0].split() == ["way", "optimizer", "steps", "update", "error", "vs",
                                            "full", "batch"]  # fmt: skip
    assert [line.split()[0] for line in text.splitlines()[2:]] == [
        "train_accumulated", "Trainer", "Accelerate", "Lightning"]  # fmt: skip
    assert "<td>Accelerate</td>" in measurement._repr_html_()
    losses = frameworks.logged_loss_table(measurement)
    assert len(losses.rows) == len(_windows(recipe))
    schedule = frameworks.schedule_table(*measurement.runs.values())
    assert [row[0] for row in schedule.rows] == list(frameworks.FOUR_WAYS)


@pytest.mark.slow
def test_token_count_table_lines_up_windows_and_counts():
    recipe, measurement = measured("lines", PADDED[0], ("Trainer",))
    table = frameworks.token_count_table(recipe, {"Llama": measurement.runs["Trainer"]})
    assert table.headers == ("window", "labels", "next-token targets", "Llama counted")
    assert [row[2] for row in table.rows] == [row[3] for row in table.rows]


def test_the_data_the_lesson_trains_on():
    ids, labels = frameworks.make_padded_lines(TEXT, VOCABULARY, 16)
    lengths = [len(line) for line in TEXT.splitlines() if line][:16]
    assert [int((row != -100).sum()) for row in labels] == lengths
    assert all(int((row != PAD).sum()) <= n for row, n in zip(ids, lengths))
    decoded = "".join(VOCABULARY[i] for i in ids[0, : lengths[0]])
    assert decoded == TEXT.splitlines()[0]
    ids, labels = frameworks.make_chunks(TEXT, VOCABULARY, 4, 16)
    assert "".join(VOCABULARY[i] for i in ids.flatten()) == " ".join(TEXT.split())[:64]
    assert torch.equal(ids, labels)


def test_causal_loss_is_the_models_own_loss():
    model = model_of("gpt2")
    ids, labels = frameworks.make_padded_lines(TEXT, VOCABULARY, 4)
    mine = frameworks.causal_loss(model(ids), frameworks.next_token_targets(labels))
    assert torch.allclose(mine, model(ids, labels=labels).loss, rtol=1e-6)
    assert torch.allclose(mine, _mean_loss(model, ids, labels), rtol=1e-6)


# --- leaving the process as it was -------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "call",
    [
        lambda: frameworks.tiny_causal_lm(len(VOCABULARY), kind="gpt2", seed=3),
        lambda: frameworks.measure(model_of("llama"), chunks(6, 2, 2), frameworks.FOUR_WAYS),
        lambda: frameworks.framework_defaults(),
        lambda: frameworks.versions(),
    ],
    ids=["model", "measure", "defaults", "versions"],
)
def test_global_state_is_left_alone(call):
    torch.set_num_threads(1)
    before = (random.getstate(), np.random.get_state()[1].copy(), torch.random.get_rng_state())
    environment, threads = dict(os.environ), torch.get_num_threads()
    call()
    assert random.getstate() == before[0], "Python's random generator moved"
    assert (np.random.get_state()[1] == before[1]).all(), "NumPy's random generator moved"
    assert torch.equal(torch.random.get_rng_state(), before[2]), "torch's generator moved"
    assert dict(os.environ) == environment and torch.get_num_threads() == threads


def test_the_same_seed_gives_the_same_model():
    a, b = (frameworks.tiny_causal_lm(30, seed=5) for _ in range(2))
    c = frameworks.tiny_causal_lm(30, seed=6)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert not all(torch.equal(p, q) for p, q in zip(a.parameters(), c.parameters()))


# --- bad input ------------------------------------------------------------------------------------

IDS, LABELS = frameworks.make_chunks(TEXT, VOCABULARY, 8, 4)


@pytest.mark.parametrize(
    "settings, named",
    [
        ({"micro_batch_size": 0}, "micro_batch_size"),
        ({"micro_batch_size": True}, "micro_batch_size"),
        ({"micro_batch_size": 2.0}, "micro_batch_size"),
        ({"accumulation_steps": -1}, "accumulation_steps"),
        ({"accumulation_steps": False}, "accumulation_steps"),
        ({"lr": 0.0}, "lr"),
        ({"lr": float("nan")}, "lr"),
        ({"max_grad_norm": -1.0}, "max_grad_norm"),
        ({"max_grad_norm": 0}, "max_grad_norm"),
        ({"schedule": "cosine"}, "schedule"),
        ({"schedule_steps": 0}, "schedule_steps"),
        ({"labels": LABELS[:, :3]}, "input_ids and labels"),
        ({"input_ids": IDS[:0], "labels": LABELS[:0]}, "at least one sequence"),
        ({"labels": LABELS.float()}, "token ids"),
    ],
)
def test_a_bad_recipe_says_what_to_fix(settings, named):
    given = {"input_ids": IDS, "labels": LABELS, "micro_batch_size": 2, "accumulation_steps": 2}
    with pytest.raises(ValueError, match=named):
        frameworks.Recipe(**{**given, **settings})


def test_numpy_integers_are_counts():
    recipe = frameworks.Recipe(IDS, LABELS, np.int64(2), np.int32(2))
    assert (recipe.micro_batch_size, recipe.accumulation_steps) == (2, 2)
    assert recipe.window_sizes() == [2, 2]


@pytest.mark.parametrize(
    "call, named",
    [
        (lambda: frameworks.tiny_causal_lm(40, kind="bert"), "kind"),
        (lambda: frameworks.tiny_causal_lm(0), "vocab_size"),
        (lambda: frameworks.tiny_causal_lm(40, width=18), "width"),
        (lambda: frameworks.tiny_causal_lm(40, layers=True), "layers"),
        (lambda: frameworks.make_chunks(TEXT, VOCABULARY, 1000, 16), "count"),
        (lambda: frameworks.make_chunks(TEXT, VOCABULARY, 4, 0), "length"),
        (lambda: frameworks.make_padded_lines(TEXT, VOCABULARY, 100), "count"),
        (lambda: frameworks.encode("héllo", VOCABULARY), "vocabulary"),
        (lambda: frameworks.measure(model_of("llama"), chunks(4, 2, 2), ["Keras"]), "ways"),
        (lambda: frameworks.measure(model_of("llama"), chunks(4, 2, 2), []), "ways"),
        (
            lambda: frameworks.train_textbook(
                model_of("llama"), chunks(4, 2, 2, schedule="linear")
            ),
            "schedule",
        ),  # fmt: skip
    ],
)
def test_bad_input_says_what_to_fix(call, named):
    with pytest.raises(ValueError, match=named):
        call()


@pytest.mark.slow
def test_a_window_of_padding_only_says_what_to_fix():
    labels = LABELS.clone()
    labels[4:] = -100  # the second window (sequences 4 to 7) holds no target
    recipe = frameworks.Recipe(IDS, labels, 2, 2)
    with pytest.raises(ValueError, match="window 1 has no next-token target"):
        frameworks.train_accelerate(model_of("llama"), recipe, weigh_tokens=True)


@pytest.mark.slow
def test_logged_loss_table_needs_the_course_loop():
    _, measurement = measured("chunks", TAILS[0], ALL_WAYS)
    only = frameworks.Measurement(
        measurement.recipe, measurement.reference, {"Trainer": measurement.runs["Trainer"]}, {}
    )
    with pytest.raises(ValueError, match="train_accumulated"):
        frameworks.logged_loss_table(only)


# --- lesson 7's self-check --------------------------------------------------------------------


@pytest.mark.slow
def test_lesson_7_has_self_check_questions_with_hints():
    from gradacc_lessons.quiz.questions import Prediction, questions_for

    questions = questions_for(lesson=7)
    assert len(questions) >= 5
    assert all(q.hint and q.explanation for q in questions)
    predictions = [q for q in questions if isinstance(q, Prediction)]
    assert predictions, "every lesson asks to predict one number"
    recipe = lines(*PADDED[0])
    gpt2_count = frameworks.train_hf_trainer(model_of("gpt2"), recipe).token_counts[1]
    assert predictions[0].value == gpt2_count, "the predicted number is the Trainer's own count"
