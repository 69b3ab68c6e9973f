"""Pure-bfloat16 weights: updates lost to rounding, against sums computed here in float64."""

from __future__ import annotations

import pytest
import torch

from gradacc_lessons.demos.bf16_updates import WAYS, stochastic_round, update_rounding_errors


def test_an_update_below_half_the_gap_is_lost_when_rounded_and_kept_by_kahan():
    result = update_rounding_errors(steps=1000, lr=1e-3, size=100)
    assert set(result.errors) == set(WAYS)
    # by hand: 1 + 0.001 is nearer 1 than 1 + 2**-7, so bfloat16 gives back 1
    assert (torch.tensor(1.0, dtype=torch.bfloat16) + 1e-3).item() == 1.0
    assert result.errors["bfloat16, rounded"] > 0.5
    assert result.errors["float32 weights"] < 1e-5
    assert result.errors["bfloat16, Kahan"] < 1e-3 < result.errors["bfloat16, stochastic"] < 0.2


def test_stochastic_rounding_is_unbiased_and_lands_on_a_neighbour():
    gap = 2.0**-7  # between bfloat16 numbers in [1, 2)
    x = torch.full((20_000,), 1 + 0.3 * gap)
    rounded = stochastic_round(x, torch.Generator().manual_seed(1)).double()
    assert set(rounded.unique().tolist()) == {1.0, 1 + gap}
    assert rounded.mean().item() == pytest.approx(1 + 0.3 * gap, abs=0.02 * gap)
    negative = stochastic_round(-x, torch.Generator().manual_seed(1)).double()
    assert negative.mean().item() == pytest.approx(-(1 + 0.3 * gap), abs=0.02 * gap)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="float32"):
        stochastic_round(torch.ones(2, dtype=torch.float64), torch.Generator())
    with pytest.raises(ValueError, match="lr"):
        update_rounding_errors(lr=0)
