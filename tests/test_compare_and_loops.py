"""compare_tensors by hand, and lesson 1's printed loops against a full-batch run."""

import copy

import pytest
import torch
from torch import nn

from gradacc_lessons.accumulate import merge_windows, split_batch
from gradacc_lessons.compare import (
    accumulation_errors,
    compare_tensors,
    parameters_of,
    relative_error,
)
from gradacc_lessons.demos.loops import (
    count_steps,
    full_batch_loop,
    off_by_one_loop,
    textbook_loop,
)
from gradacc_lessons.models import MLP


def test_comparison_by_hand():
    # w: difference (0, 1, 0, 0), reference norm sqrt(1 + 16 + 4) = sqrt(21); b: no difference.
    a = {"w": torch.tensor([[1.0, -4.0], [2.0, 0.0]]), "b": torch.tensor([0.5])}
    b = {"w": torch.tensor([[1.0, -3.0], [2.0, 0.0]]), "b": torch.tensor([0.5])}
    comparison = compare_tensors(a, b)
    assert [row.name for row in comparison.rows] == ["w", "b"]
    assert comparison.rows[0].max_abs == 1.0
    assert comparison.rows[0].relative == pytest.approx(1 / 21**0.5)
    assert comparison.rows[1].max_abs == 0.0 and comparison.rows[1].relative == 0.0
    assert comparison.max_abs == 1.0
    assert comparison.relative == pytest.approx(1 / (21 + 0.25) ** 0.5)
    text, html = repr(comparison), comparison._repr_html_()
    assert text.splitlines()[1].split() == ["w", "1.000e+00", f"{1 / 21**0.5:.3e}"]
    assert text.splitlines()[-1].split()[0] == "all"
    assert "<table>" in html and "<td>w</td>" in html


def test_relative_error_by_hand():
    reference = {"w": torch.tensor([3.0, 4.0]), "b": torch.tensor([0.0])}
    other = {"w": torch.tensor([3.0, 4.0]), "b": torch.tensor([1.0])}
    assert relative_error(reference, other) == pytest.approx(1 / 5)  # |(0, 0, 1)| / |(3, 4, 0)|
    assert relative_error(reference, reference) == 0.0


def test_a_zero_reference_with_a_difference_is_infinitely_off():
    comparison = compare_tensors({"b": torch.zeros(2)}, {"b": torch.tensor([0.0, 1e-9])})
    assert comparison.relative == float("inf")


def test_comparison_refuses_different_names_and_shapes():
    with pytest.raises(ValueError, match="only in the reference: \\['a'\\]"):
        compare_tensors({"a": torch.zeros(1)}, {"b": torch.zeros(1)})
    with pytest.raises(ValueError, match="shape"):
        compare_tensors({"a": torch.zeros(2)}, {"a": torch.zeros(3)})


def test_accumulation_errors_separate_the_recipes():
    torch.manual_seed(0)
    model = MLP(5, 3, hidden=8).double()
    x, y = torch.randn(12, 5, dtype=torch.float64), torch.randint(3, (12,))
    samples = accumulation_errors(model, nn.CrossEntropyLoss(), x, y, [2, 5], "samples")
    naive = accumulation_errors(model, nn.CrossEntropyLoss(), x, y, [2, 5], "naive")
    assert max(samples) < 1e-12
    assert naive[0] < 1e-12  # 12 / 2 is even
    assert naive[1] > 1e-2  # 12 / 5 is not


def train(loop, start, *args):
    model = copy.deepcopy(start)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.3, momentum=0.5)
    steps = count_steps(optimizer, lambda: loop(model, optimizer, nn.CrossEntropyLoss(), *args))
    return parameters_of(model), steps


def test_textbook_loop_is_full_batch_and_off_by_one_is_not():
    torch.manual_seed(1)
    start = MLP(5, 3, hidden=8).double()
    x, y = torch.randn(48, 5, dtype=torch.float64), torch.randint(3, (48,))
    micro_batches = split_batch(x, y, 8)  # 8 micro-batches of 6, 2 windows of 4
    # the reference written out here, independent of the loops under test
    batches = [(x[:24], y[:24]), (x[24:], y[24:])]
    assert all(
        torch.equal(a, b) and torch.equal(c, d)
        for (a, c), (b, d) in zip(merge_windows(micro_batches, 4), batches)
    )
    reference, reference_steps = train(full_batch_loop, start, batches)
    good, good_steps = train(textbook_loop, start, micro_batches, 4)
    bad, bad_steps = train(off_by_one_loop, start, micro_batches, 4)
    assert reference_steps == good_steps == bad_steps == 2
    assert relative_error(reference, good) < 1e-12
    assert relative_error(reference, bad) > 1e-2
