"""Lesson 3: train-mode BatchNorm breaks the equivalence; per-sample norms and eval mode do not."""

import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from gradacc_lessons.accumulate import accumulated_gradients
from gradacc_lessons.demos.batchnorm import (
    biases_before_batchnorm,
    compensating_momentum,
    compute_batchnorm_errors,
    compute_fixes,
    compute_running_stats,
    digits_problem,
    forward_difference,
    replicas_vs_accumulation,
    running_stats_error,
    set_batchnorm_momentum,
    single_sample_error,
    single_sample_facts,
)
from gradacc_lessons.demos.dropout import DropoutMLP, compute_dropout_comparison, with_masks


def hand_full_batch(model, x, y):
    params = dict(model.named_parameters())
    grads = torch.autograd.grad(F.cross_entropy(model(x), y), list(params.values()))
    return dict(zip(params, grads))


def relative(reference, got):
    diff = sum(float(((got[n] - reference[n]) ** 2).sum()) for n in reference)
    return (diff / sum(float((reference[n] ** 2).sum()) for n in reference)) ** 0.5


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
@pytest.mark.parametrize("n", [2, 4, 8])
def test_train_mode_batchnorm_does_not_match(kind, n):
    model, x, y = digits_problem(kind, "batch")
    reference = hand_full_batch(model, x, y)
    got = accumulated_gradients(model, F.cross_entropy, x, y, n)
    for name in biases_before_batchnorm(model):
        # BatchNorm subtracts the mean: the bias before it has a zero gradient
        assert reference[name].abs().max() < 1e-12, name
        del reference[name], got[name]
    assert relative(reference, got) > 1e-2


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
@pytest.mark.parametrize("norm", ["layer", "group", "none"])
@pytest.mark.parametrize("n", [2, 4, [10, 30, 24]])
def test_per_sample_norms_match_in_float64(kind, norm, n):
    model, x, y = digits_problem(kind, norm)
    reference = hand_full_batch(model, x, y)
    how = {"sizes": n} if isinstance(n, list) else {"accumulation_steps": n}
    got = accumulated_gradients(model, F.cross_entropy, x, y, **how)
    for name, g in reference.items():
        torch.testing.assert_close(got[name], g, rtol=1e-10, atol=1e-12, msg=name)


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_eval_mode_batchnorm_matches_and_float32_within_tolerance(kind):
    model, x, y = digits_problem(kind, "batch")
    with torch.no_grad():  # non-trivial running statistics, as after some training
        model(x)
    model.eval()
    for dtype in (torch.float64, torch.float32):
        m, xs = copy.deepcopy(model).to(dtype), x.to(dtype)
        reference = hand_full_batch(m, xs, y)
        got = accumulated_gradients(m, F.cross_entropy, xs, y, 4)
        for name, g in reference.items():
            if dtype == torch.float64:
                torch.testing.assert_close(got[name], g, rtol=1e-10, atol=1e-12, msg=name)
            else:  # docs/measurements.md: max|Δ| <= 1e-4 max|g| for float32
                assert (got[name] - g).abs().max() <= 1e-4 * g.abs().max(), name


def test_errors_against_n():
    errors = compute_batchnorm_errors(accumulation_steps=(1, 2, 8, 32))
    assert errors.accumulation_steps == [1, 2, 8, 32]
    bn1d, bn2d = errors.batchnorm_mlp, errors.batchnorm_cnn
    assert bn1d[0] < 1e-12 and bn2d[0] < 1e-12  # N = 1 is the full batch
    assert bn1d[1] < bn1d[2] < bn1d[3]  # smaller micro-batches, worse statistics
    assert min(bn1d[1:] + bn2d[1:]) > 1e-2
    assert max(errors.layernorm_mlp + errors.groupnorm_cnn) < 1e-12
    assert "BatchNorm1d MLP" in repr(errors) and "<table>" in errors._repr_html_()
    assert f"{bn1d[3]:.2e}" in repr(errors).splitlines()[-1]  # N = 32, micro-batches of 2


def test_fixes_table():
    fixes = compute_fixes(accumulation_steps=4)
    exact = [v for k, v in vars(fixes).items() if k.endswith(("eval", "norm_mlp", "norm_cnn"))]
    assert len(exact) == 6 and max(exact) < 1e-12
    assert fixes.batchnorm_mlp_train > 1e-2 and fixes.batchnorm_cnn_train > 1e-2
    row = ["BatchNorm1d,", "train", "mode", f"{fixes.batchnorm_mlp_train:.1e}"]
    assert row in [line.split() for line in repr(fixes).splitlines()]


def test_forward_itself_depends_on_the_split():
    assert forward_difference("mlp", "batch", 4) > 1e-2
    assert forward_difference("cnn", "batch", 4) > 1e-2
    assert forward_difference("cnn", "group", 4) < 1e-12


def test_bias_names():
    model, _, _ = digits_problem("cnn", "batch")
    assert biases_before_batchnorm(model) == {"0.bias", "3.bias"}
    assert biases_before_batchnorm(digits_problem("mlp", "layer")[0]) == set()


def test_running_stats_by_hand():
    """One micro-batch update by hand for the first BatchNorm: r <- (1 - m) r + m mean."""
    model, x, y = digits_problem("mlp", "batch")
    m = compensating_momentum(0.1, 4)
    expected = torch.zeros(64, dtype=torch.float64)
    with torch.no_grad():
        for xb in x.split(16):
            expected = (1 - m) * expected + m * model[0](xb).mean(0)
    acc = copy.deepcopy(model)
    acc[1].momentum = acc[4].momentum = m
    with torch.no_grad():
        for xb in x.split(16):
            acc(xb)
    torch.testing.assert_close(acc[1].running_mean, expected, rtol=1e-10, atol=1e-12)


def test_running_stats_errors_and_compensation():
    stats = compute_running_stats(accumulation_steps=(1, 2, 8))
    assert stats.weight_on_new_data == pytest.approx([0.1, 0.19, 1 - 0.9**8])
    assert stats.mean_error[0] < 1e-12
    assert stats.mean_error[2] > 1.0  # 57 % of the weight instead of 10 %
    assert "0.0131" in repr(stats).splitlines()[-1]  # m_N at N = 8: 1 - 0.9 ** (1/8)
    for plain, fixed in zip(stats.mean_error[1:], stats.mean_error_compensated[1:]):
        assert fixed < 0.05 < plain
    assert running_stats_error(8, momentum=compensating_momentum(0.1, 8))["var"] < 0.05


def test_compensating_momentum_formula():
    for n in (1, 2, 4, 8, 16):
        m = compensating_momentum(0.1, n)
        assert (1 - m) ** n == pytest.approx(0.9, rel=1e-12)  # same weight left on the past
    with pytest.raises(ValueError, match="momentum"):
        compensating_momentum(1.5, 4)


def test_micro_batch_of_one_with_batchnorm1d_fails():
    message = single_sample_error()
    assert message.startswith("ValueError: Expected more than 1 value per channel when training")
    model, x, y = digits_problem("mlp", "layer", samples=4)
    accumulated_gradients(model, F.cross_entropy, x, y, 4)  # LayerNorm is fine with one sample


def test_dropout_matches_in_distribution_and_exactly_with_shipped_masks():
    result = compute_dropout_comparison(seeds=40)
    assert result.mean_cosine < 0.95  # the same seed still draws other masks
    averaged = result.cosine_of_averages
    assert averaged > result.mean_cosine and averaged > 0.9
    assert result.masks_with_samples < 1e-12 and result.eval_mode < 1e-12
    assert "cosine of the averages over 40 seeds" in repr(result)


def test_shipped_masks_by_hand():
    torch.manual_seed(0)
    model = DropoutMLP(3, 2, hidden=4, p=0.5).double()
    x = torch.randn(6, 3, dtype=torch.float64)
    inputs = with_masks(x, model, seed=1)
    keep1, keep2 = inputs[:, 3:7], inputs[:, 7:]
    h = F.relu(model.layers[0](x)) * keep1 * 2
    h = F.relu(model.layers[1](h)) * keep2 * 2
    torch.testing.assert_close(model(inputs), model.layers[2](h))
    assert torch.equal(model(inputs), model(inputs))  # no fresh randomness
    with pytest.raises(ValueError, match="columns"):
        model(torch.zeros(2, 5, dtype=torch.float64))
    model.eval()
    assert torch.equal(model(inputs), model(x))  # eval mode: no dropout either way


def test_same_seed_dropout_masks_differ_between_split_and_full_batch():
    torch.manual_seed(0)
    model = DropoutMLP(20, 4).double()
    x = torch.randn(64, 20, dtype=torch.float64)
    torch.manual_seed(5)
    full = model(x)
    torch.manual_seed(5)
    pieces = torch.cat([model(xb) for xb in x.split(16)])
    assert not torch.allclose(full, pieces)
    assert isinstance(model.layers, nn.ModuleList)


def test_one_value_per_channel_collapses_to_beta_and_pytorch_refuses_only_that():
    facts = single_sample_facts(channels=6, length=4, seed=3)
    assert facts.output_minus_beta == 0.0
    assert facts.gradient_before == 0.0
    assert "more than 1 value per channel" in facts.one_value_per_channel
    # (1, C, L): PyTorch normalises each channel over the L positions of the one sample;
    # the same by hand.
    layer, x = nn.BatchNorm1d(6).train(), torch.randn(1, 6, 4, dtype=torch.float64)
    layer = layer.double()
    mean, var = x.mean(dim=(0, 2), keepdim=True), x.var(dim=(0, 2), unbiased=False, keepdim=True)
    torch.testing.assert_close(layer(x), (x - mean) / torch.sqrt(var + layer.eps))
    assert "trains" in facts.several_values_per_channel


def test_set_batchnorm_momentum_reaches_every_batchnorm():
    model = nn.Sequential(nn.BatchNorm1d(3), nn.Linear(3, 3), nn.Sequential(nn.BatchNorm2d(2)))
    assert set_batchnorm_momentum(model, 0.05) == 2
    assert [m.momentum for m in model.modules() if hasattr(m, "momentum")] == [0.05, 0.05]


@pytest.mark.parametrize("kind, replicas, micro_batch_size", [("mlp", 8, 32), ("cnn", 4, 16)])
def test_accumulating_n_micro_batches_is_n_devices_with_plain_batchnorm(
    kind, replicas, micro_batch_size
):
    errors = replicas_vs_accumulation(replicas, micro_batch_size, kind)
    # The same computation in another order: float64 rounding at most.
    assert errors.plain_batchnorm < 1e-12
    # SyncBatchNorm normalises with all samples: the full batch, which accumulation misses.
    assert errors.sync_batchnorm > 1e-3
