"""Each scaling pitfall: the broken loop really deviates from the full batch, the fix matches it.

References are computed here, independently of the loops: each window's samples
concatenated into one batch, one loss, torch.autograd.grad.
"""

import inspect

import pytest
import torch
import torch.nn.functional as F

from gradacc_lessons.accumulate import token_loss
from gradacc_lessons.data import make_classification, make_lengths, make_sequences
from gradacc_lessons.demos import loops as pitfalls
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
    """float64: rtol 1e-10, atol 1e-12; float32: max|Δ| <= 1e-4 max|g| (measured-facts.md)."""
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
    errors = damage.compute_reduction_errors(accumulation_steps=4)
    assert errors["mean loss, divided by N"] < 1e-12 and errors["sum loss, no scaling"] < 1e-12
    assert errors["mean loss, no scaling"] == pytest.approx(3.0)  # 4x the gradient: error N - 1
    assert errors["sum loss, divided by N"] == pytest.approx(0.75)  # 1/4 of it: error 1 - 1/N
    curves = damage.compute_uneven_curves(ns=(2, 4), spreads=(0.0, 0.9))
    assert curves["spread"]["naive"][0] < 1e-12 < 1e-2 < curves["spread"]["naive"][1]
    assert max(curves["n"]["samples"] + curves["spread"]["samples"]) < 1e-12


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
