"""compare_gradients by hand, and lesson 1's printed loops against a full-batch run."""

import copy

import pytest
import torch
from torch import nn

from gradacc_lessons.compare import accumulation_errors, compare_gradients, parameters_of
from gradacc_lessons.loops import (
    count_steps,
    full_batch_loop,
    micro_batches_of,
    off_by_one_loop,
    textbook_loop,
    windows_as_batches,
)
from gradacc_lessons.models import MLP


def test_comparison_by_hand():
    a = {"w": torch.tensor([[1.0, -4.0], [2.0, 0.0]]), "b": torch.tensor([0.5])}
    b = {"w": torch.tensor([[1.0, -3.0], [2.0, 0.0]]), "b": torch.tensor([0.5])}
    comparison = compare_gradients(a, b)
    assert [row.name for row in comparison.rows] == ["w", "b"]
    assert comparison.rows[0].max_abs == 1.0 and comparison.rows[0].max_rel == 0.25
    assert comparison.rows[1].max_abs == 0.0
    assert comparison.max_abs == 1.0 and comparison.max_rel == 0.25
    assert not comparison.allclose() and comparison.allclose(rtol=0.0, atol=1.0)
    text, html = str(comparison), comparison._repr_html_()
    assert "w" in text and "2.500e-01" in text and "overall" in text
    assert "<table>" in html and "<code>w</code>" in html


def test_a_zero_reference_with_a_difference_is_infinitely_off():
    comparison = compare_gradients({"b": torch.zeros(2)}, {"b": torch.tensor([0.0, 1e-9])})
    assert comparison.max_rel == float("inf")


def test_comparison_refuses_different_names_and_shapes():
    with pytest.raises(ValueError, match="only in the first: \\['a'\\]"):
        compare_gradients({"a": torch.zeros(1)}, {"b": torch.zeros(1)})
    with pytest.raises(ValueError, match="shape"):
        compare_gradients({"a": torch.zeros(2)}, {"a": torch.zeros(3)})


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
    micro_batches = micro_batches_of(x, y, 6)  # 8 micro-batches, 2 windows of 4
    # the reference written out here, independent of the loops under test
    batches = [(x[:24], y[:24]), (x[24:], y[24:])]
    assert all(
        torch.equal(a, b) and torch.equal(c, d)
        for (a, c), (b, d) in zip(windows_as_batches(micro_batches, 4), batches)
    )
    reference, reference_steps = train(full_batch_loop, start, batches)
    good, good_steps = train(textbook_loop, start, micro_batches, 4)
    bad, bad_steps = train(off_by_one_loop, start, micro_batches, 4)
    assert reference_steps == good_steps == bad_steps == 2
    assert compare_gradients(reference, good).max_rel < 1e-12
    assert compare_gradients(reference, bad).max_rel > 1e-2


def test_micro_batches_of_refuses_a_size_below_one():
    with pytest.raises(ValueError, match="size"):
        micro_batches_of(torch.zeros(3), torch.zeros(3), 0)
