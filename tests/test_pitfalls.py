"""Each scaling pitfall: the broken loop really deviates from the full batch, the fix matches it.

References are computed here, independently of the loops: each window's samples
concatenated into one batch, one loss, torch.autograd.grad.
"""

import inspect

import pytest
import torch
import torch.nn.functional as F

from gradacc_lessons.accumulate import token_loss
from gradacc_lessons.compare import relative_error
from gradacc_lessons.data import make_classification, make_lengths, make_sequences
from gradacc_lessons.demos import loops as pitfalls
from gradacc_lessons.demos import loss_scale, loss_weighting, token_pitfalls
from gradacc_lessons.demos import pitfalls as damage
from gradacc_lessons.demos.pitfalls import StepRecorder, record, uneven_sizes
from gradacc_lessons.models import MLP, TinySequenceModel


def problem(sizes, dtype, seed=0):
    x, y = make_classification(samples=sum(sizes), features=20, classes=4, seed=seed, dtype=dtype)
    torch.manual_seed(seed)
    model = MLP(20, 4, hidden=32).to(dtype)
    return model, list(zip(torch.split(x, sizes), torch.split(y, sizes)))


def reference_gradients(model, loss_fn, micro_batches, steps):
    """One batch per window: the gradient that each optimizer step should see."""
    refs = []
    for start in range(0, len(micro_batches), steps):
        window = micro_batches[start : start + steps]
        x, y = torch.cat([x for x, _ in window]), torch.cat([y for _, y in window])
        params = list(model.parameters())
        grads = torch.autograd.grad(loss_fn(model(x), y), params)
        refs.append(dict(zip([n for n, _ in model.named_parameters()], grads)))
    return refs


def matches(reference, got, dtype):
    """float64: rtol 1e-10, atol 1e-12; float32: max|Δ| <= 1e-4 max|g| (docs/measurements.md)."""
    for name, g in reference.items():
        if dtype == torch.float64:
            if not torch.allclose(got[name], g, rtol=1e-10, atol=1e-12):
                return False
        elif (got[name] - g).abs().max() > 1e-4 * g.abs().max():
            return False
    return True


def relative(reference, got):
    diff = sum(float(((got[n] - reference[n]) ** 2).sum()) for n in reference)
    return (diff / sum(float((reference[n] ** 2).sum()) for n in reference)) ** 0.5


DTYPES = [torch.float64, torch.float32]


@pytest.mark.parametrize("dtype", DTYPES)
def test_uneven_micro_batches(dtype):
    model, micro_batches = problem([24, 24, 16, 10, 30, 24], dtype)
    refs = reference_gradients(model, F.cross_entropy, micro_batches, 3)
    broken = record(pitfalls.divide_by_n_loop, model, F.cross_entropy, micro_batches, 3)
    fixed = record(pitfalls.weight_by_samples_loop, model, F.cross_entropy, micro_batches, 3)
    for step, ref in enumerate(refs):
        assert relative(ref, broken.gradients[step]) > 1e-2, f"step {step}"
        assert matches(ref, fixed.gradients[step], dtype), f"step {step}"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sort", [False, True])
def test_token_mean_divided_by_n(dtype, sort):
    lengths = make_lengths(24, 10, spread=0.9, seed=2, sort=sort)
    tokens, targets = make_sequences(lengths, seed=2)
    torch.manual_seed(0)
    model = TinySequenceModel().to(dtype)
    micro_batches = list(zip(tokens.split(4), targets.split(4)))  # 6 micro-batches, N = 3

    def full_token_mean(logits, y):  # the whole window's mean over its real tokens
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))

    refs = reference_gradients(model, full_token_mean, micro_batches, 3)
    broken = record(pitfalls.divide_by_n_loop, model, token_loss, micro_batches, 3)
    fixed = record(pitfalls.weight_by_tokens_loop, model, token_loss, micro_batches, 3)
    for step, ref in enumerate(refs):
        assert relative(ref, broken.gradients[step]) > 1e-2, f"step {step}"
        assert matches(ref, fixed.gradients[step], dtype), f"step {step}"


def test_token_loop_skips_a_micro_batch_of_padding_only():
    tokens, targets = make_sequences(torch.tensor([3, 5, 2, 4]), seed=1)
    targets[:2] = -100  # the first micro-batch holds no real token
    model = TinySequenceModel().double()
    micro_batches = list(zip(tokens.split(2), targets.split(2)))
    ref = reference_gradients(model, token_loss, micro_batches, 2)[0]
    fixed = record(pitfalls.weight_by_tokens_loop, model, token_loss, micro_batches, 2)
    assert matches(ref, fixed.gradients[0], torch.float64)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("count", [9, 10, 11])
def test_last_incomplete_window(dtype, count):
    model, micro_batches = problem([8] * count, dtype)
    refs = reference_gradients(model, F.cross_entropy, micro_batches, 4)
    broken = record(pitfalls.last_window_loop, model, F.cross_entropy, micro_batches, 4)
    fixed = record(pitfalls.weight_by_samples_loop, model, F.cross_entropy, micro_batches, 4)
    assert len(broken.gradients) == len(fixed.gradients) == len(refs) == 3
    for step in (0, 1):  # full windows: the broken loop is right there
        assert matches(refs[step], broken.gradients[step], dtype), f"step {step}"
    assert relative(refs[2], broken.gradients[2]) > 1e-2, "step 2 (the short window)"
    for step, ref in enumerate(refs):
        assert matches(ref, fixed.gradients[step], dtype), f"step {step}"


@pytest.mark.parametrize("dtype", DTYPES)
def test_clipping_once_per_window(dtype):
    model, micro_batches = problem([16] * 8, dtype)
    refs = reference_gradients(model, F.cross_entropy, micro_batches, 4)
    norm = min(sum(float((g**2).sum()) for g in ref.values()) ** 0.5 for ref in refs)
    max_norm = 0.2 * norm
    clipped = []
    for ref in refs:  # clip_grad_norm_ by hand: scale by max_norm / (norm + 1e-6) when larger
        total = sum(float((g**2).sum()) for g in ref.values()) ** 0.5
        clipped.append({n: g * min(1.0, max_norm / (total + 1e-6)) for n, g in ref.items()})
    kwargs = {"max_norm": max_norm}
    broken_loop = pitfalls.clip_per_micro_batch_loop
    broken = record(broken_loop, model, F.cross_entropy, micro_batches, 4, **kwargs)
    fixed = record(pitfalls.clip_once_loop, model, F.cross_entropy, micro_batches, 4, **kwargs)
    for step, ref in enumerate(clipped):
        assert relative(ref, broken.gradients[step]) > 1e-2, f"step {step}"
        assert matches(ref, fixed.gradients[step], dtype), f"step {step}"


@pytest.mark.parametrize("dtype", DTYPES)
def test_logged_loss_of_the_effective_batch(dtype):
    model, micro_batches = problem([16] * 8, dtype)
    truth = []
    with torch.no_grad():
        for start in (0, 4):
            window = micro_batches[start : start + 4]
            x, y = torch.cat([x for x, _ in window]), torch.cat([y for _, y in window])
            truth.append(F.cross_entropy(model(x), y).item())
    broken = record(pitfalls.log_last_micro_batch_loop, model, F.cross_entropy, micro_batches, 4)
    fixed = record(pitfalls.log_window_loss_loop, model, F.cross_entropy, micro_batches, 4)
    rtol = 1e-10 if dtype == torch.float64 else 1e-5
    for step, t in enumerate(truth):
        assert abs(broken.logged[step] - t) > 1e-2 * t, f"step {step}"
        assert abs(fixed.logged[step] - t) <= rtol * t, f"step {step}"


def test_scheduler_stepped_per_optimizer_step():
    steps, warmup_steps, windows = 4, 8, 12
    model, micro_batches = problem([8] * (steps * windows), torch.float64)

    broken_loop = pitfalls.scheduler_per_micro_batch_loop

    def run(loop):
        recorder = StepRecorder(model, lr=0.5)
        scheduler = torch.optim.lr_scheduler.LambdaLR(recorder, lambda k: min(1, (k + 1) / 8))
        # PyTorch itself warns when a scheduler steps before the first optimizer step
        expected = pytest.warns(UserWarning) if loop is broken_loop else _no_warning()
        with expected:
            loop(model, recorder, F.cross_entropy, micro_batches, steps, scheduler=scheduler)
        return recorder.lrs

    intended = [0.5 * min(1.0, (k + 1) / warmup_steps) for k in range(windows)]  # by hand
    broken, fixed = (
        run(pitfalls.scheduler_per_micro_batch_loop),
        run(pitfalls.scheduler_per_step_loop),
    )
    assert fixed == pytest.approx(intended, rel=1e-12)
    # by hand: N scheduler steps per optimizer step, the first N before the first step
    too_fast = [0.5 * min(1.0, ((k + 1) * steps + 1) / warmup_steps) for k in range(windows)]
    assert broken == pytest.approx(too_fast, rel=1e-12)
    assert max(abs(b - i) / i for b, i in zip(broken, intended)) > 1e-2
    assert broken.index(0.5) < fixed.index(0.5) == warmup_steps - 1


class _no_warning:
    def __enter__(self):
        import warnings

        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("error")

    def __exit__(self, *exc):
        return self._catch.__exit__(*exc)


def test_recorder_leaves_parameters_alone():
    model, micro_batches = problem([8] * 4, torch.float64)
    before = [p.clone() for p in model.parameters()]
    recorder = record(pitfalls.weight_by_samples_loop, model, F.cross_entropy, micro_batches, 2)
    assert len(recorder.gradients) == 2 and recorder.lrs == [1.0, 1.0]
    assert all(torch.equal(a, p) for a, p in zip(before, model.parameters()))
    assert all(p.grad is None for p in model.parameters())


@pytest.mark.parametrize(
    "measure",
    [
        damage.compute_uneven_damage,
        damage.compute_last_window_damage,
        damage.compute_clipping_damage,
        damage.compute_logging_damage,
        lambda: damage.schedule_damage(damage.compute_schedules()),
    ],
)
def test_measured_damage_of_each_pitfall(measure):
    result = measure()
    assert result.broken > 1e-2 and result.fixed < 1e-10, result


def test_reductions_and_uneven_curves():
    errors = loss_weighting.compute_reduction_errors(accumulation_steps=4)
    assert errors.mean_divided < 1e-12 and errors.sum_not_divided < 1e-12
    assert errors.mean_not_divided == pytest.approx(3.0)  # 4x the gradient: error N - 1
    assert errors.sum_divided == pytest.approx(0.75)  # 1/4 of it: error 1 - 1/N
    assert "mean loss, no scaling 3.0e+00" in " ".join(repr(errors).split())
    curves = loss_weighting.compute_uneven_curves(accumulation_steps=(2, 4), spreads=(0.0, 0.9))
    assert curves.naive_by_spread[0] < 1e-12 < 1e-2 < curves.naive_by_spread[1]
    assert max(curves.samples_by_n + curves.samples_by_spread) < 1e-12
    assert [line.split()[:3] for line in repr(curves).splitlines()[2:]] == [
        ["N", "=", "2"],
        ["N", "=", "4"],
        ["spread", "0", "0.0%"],
        ["spread", "0.9", f"{curves.naive_by_spread[1]:.1%}"],
    ]


@pytest.mark.parametrize(
    "batch, n, spread", [(64, 4, 0.0), (64, 3, 0.5), (10, 10, 0.9), (65, 8, 0.99)]
)
def test_uneven_sizes(batch, n, spread):
    sizes = uneven_sizes(batch, n, spread, seed=3)
    assert len(sizes) == n and sum(sizes) == batch and min(sizes) >= 1
    if spread == 0.0 and batch % n == 0:
        assert sizes == [batch // n] * n
    with pytest.raises(ValueError, match="spread"):
        uneven_sizes(batch, n, 1.0)
    with pytest.raises(ValueError, match="accumulation_steps"):
        uneven_sizes(batch, batch + 1, 0.5)


def test_loops_are_short():
    loops = [f for name, f in inspect.getmembers(pitfalls, inspect.isfunction) if "loop" in name]
    assert len(loops) == 13  # lesson 1's three and lesson 2's ten
    for loop in loops:
        assert len(inspect.getsource(loop).splitlines()) <= 20, loop.__name__


@pytest.mark.parametrize("loop", [pitfalls.weight_by_samples_loop, pitfalls.divide_by_n_loop])
def test_loops_train_like_the_full_batch_with_a_real_optimizer(loop):
    """With SGD and momentum: the fix trains exactly like one batch per window, the bug does not."""
    model, micro_batches = problem([24, 24, 16, 10, 30, 24], torch.float64)
    reference = MLP(20, 4, hidden=32).double()
    reference.load_state_dict(model.state_dict())
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.5, momentum=0.9)
    for start in (0, 3):  # by hand: one batch per window
        window = micro_batches[start : start + 3]
        x, y = torch.cat([x for x, _ in window]), torch.cat([y for _, y in window])
        ref_opt.zero_grad()
        F.cross_entropy(reference(x), y).backward()
        ref_opt.step()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    loop(model, optimizer, F.cross_entropy, micro_batches, 3)
    trained = dict(model.named_parameters())
    close = matches(dict(reference.named_parameters()), trained, torch.float64)
    assert close == (loop is pitfalls.weight_by_samples_loop)


def _adam_first_update(gradient: dict, lr: float, eps: float = 1e-8) -> dict:
    """Adam's (and AdamW's, but for weight decay) first step, by hand: m = g, v = g^2 after
    bias correction, so the update is lr * g / (|g| + eps)."""
    return {n: lr * g / (g.abs() + eps) for n, g in gradient.items()}


@pytest.mark.parametrize("seed", [0, 1])
def test_a_loss_scale_moves_sgd_linearly_and_adam_only_through_eps(seed):
    model, x, y = damage.classification_problem(64, seed)
    micro_batches = list(zip(x.tensor_split(4), y.tensor_split(4)))
    names, params = zip(*model.named_parameters())
    gradient = dict(zip(names, torch.autograd.grad(F.cross_entropy(model(x), y), params)))
    sgd = lambda p: torch.optim.SGD(p, lr=0.1)  # noqa: E731
    adam = lambda p: torch.optim.Adam(p, lr=1e-3)  # noqa: E731
    loss_fn = F.cross_entropy
    # SGD: the update is lr x gradient, so a loss x 4 moves 4 x as far: error exactly 3.
    assert loss_scale.update_difference(
        sgd, model, loss_fn, micro_batches, 4, 4.0
    ) == pytest.approx(3.0, rel=1e-9)
    # Adam, by hand: only eps tells g from 4g.
    one, four = (
        _adam_first_update(gradient, 1e-3),
        _adam_first_update({n: 4 * g for n, g in gradient.items()}, 1e-3),
    )
    by_hand = relative_error(one, four)
    measured = loss_scale.update_difference(adam, model, loss_fn, micro_batches, 4, 4.0)
    assert measured == pytest.approx(by_hand, rel=1e-6), (measured, by_hand)
    assert measured < 1e-3


def test_clipping_makes_the_scale_matter_to_adam_and_caps_sgd():
    model, x, y = damage.classification_problem(64, 2)
    micro_batches = list(zip(x.tensor_split(4), y.tensor_split(4)))
    grads = torch.autograd.grad(F.cross_entropy(model(x), y), list(model.parameters()))
    norm = sum(float((g**2).sum()) for g in grads) ** 0.5
    sgd = lambda p: torch.optim.SGD(p, lr=0.1)  # noqa: E731
    # By hand, one window, max_norm = 2 x the norm: the right gradient is not clipped,
    # the 4 x gradient is cut to 2 x: SGD moves twice as far, an error of exactly 1.
    one_window = loss_scale.update_difference(
        sgd, model, F.cross_entropy, micro_batches, 4, 4.0, max_grad_norm=2 * norm
    )
    assert one_window == pytest.approx(1.0, rel=1e-6)
    effects = loss_scale.compute_loss_scale_effects(epochs=10, seed=2)
    # Without clipping Adam hardly notices (eps only); with clipping the clip factor changes
    # from window to window and Adam's moments mix them: a visible change.
    assert effects.adamw < 1e-3 < effects.adamw_clipped
    assert effects.sgd > 0.3 and effects.sgd_clipped > 0.3
    assert "update error after 10 windows" in repr(effects)


def _optimum_test_loss(short, long, lengths, normalize, grouped, steps=4):
    """By hand: the test loss of the best table of logits for the weighted objective.

    Each training token gets the weight the normalisation gives it (1 / all tokens, or
    1 / (N x its micro-batch's tokens)); for each input token value k, the best model
    predicts the short rule (k -> k) with the weighted share of k's short-rule tokens and
    the long rule with the rest. The test loss is then a mean of -log over test tokens."""
    x, y = token_pitfalls.make_two_rule_sequences(short, long, 8, lengths, 0)
    if grouped:
        order = (y != -100).sum(dim=1).argsort(stable=True)
        x, y = x[order], y[order]
    short_rule, weight_of = torch.zeros(8, dtype=torch.float64), torch.zeros(8, dtype=torch.float64)
    total = int((y != -100).sum())
    for xb, yb in zip(x.tensor_split(steps), y.tensor_split(steps)):
        real = yb != -100
        w = 1 / total if normalize == "tokens" else 1 / (steps * int(real.sum()))
        for token, target in zip(xb[real].tolist(), yb[real].tolist()):
            weight_of[token] += w
            short_rule[token] += w * (target == token)
    p_short = short_rule / weight_of
    test_x, test_y = token_pitfalls.make_two_rule_sequences(10 * short, 10 * long, 8, lengths, 1)
    real = test_y != -100
    tokens, targets = test_x[real], test_y[real]
    chosen = torch.where(targets == tokens, p_short[tokens], 1 - p_short[tokens])
    return float(-chosen.log().mean())


@pytest.mark.parametrize(  # four training runs each: make check trains one mix, make test all
    "short, long, lengths",
    [
        (48, 16, (2, 22)),
        pytest.param(40, 24, (3, 15), marks=pytest.mark.slow),
        pytest.param(36, 28, (4, 12), marks=pytest.mark.slow),
    ],
)
def test_the_token_bug_trains_the_optimum_of_the_wrong_weights(short, long, lengths):
    share = short * lengths[0] / (short * lengths[0] + long * lengths[1])  # by hand
    results = {}
    for normalize in ("tokens", "naive"):
        for grouped in (True, False):
            result = token_pitfalls.train_two_rule_model(
                normalize, grouped, steps=300, short=short, long=long, lengths=lengths
            )
            results[normalize, grouped] = result
            weight = result.short_token_weight
            if normalize == "tokens":
                assert weight == pytest.approx(share, rel=1e-12)
            # Trained to the end, the model sits at the optimum of the weights it was given
            # (300 Adam steps leave ~1e-3 of probability on the other classes; 3 % covers it).
            optimum = _optimum_test_loss(short, long, lengths, normalize, grouped)
            assert result.test_loss == pytest.approx(optimum, rel=0.03), (normalize, grouped)
    # Grouped by length, the buggy weights are the micro-batches' (1/N each), far from the
    # tokens' share: a worse model than the fix, and worse than the bug on shuffled data.
    worst = results["naive", True]
    assert abs(worst.short_token_weight - share) > 0.15
    assert worst.test_loss > results["naive", False].test_loss
    assert worst.test_loss > 1.1 * results["tokens", True].test_loss
