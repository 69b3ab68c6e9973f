"""The digits read straight from scikit-learn's file are the digits scikit-learn loads."""

import numpy as np
import pytest
import torch

from gradacc_lessons.data import load_digits

# Importing scikit-learn takes 2 s, which is what reading its file directly saves: `make test`.
pytestmark = pytest.mark.slow


def test_the_digits_are_scikit_learns():
    from sklearn.datasets import load_digits as sklearn_digits

    digits = sklearn_digits()
    x, y = load_digits(dtype=torch.float64)
    np.testing.assert_array_equal(x.numpy() * 16.0, digits.data)
    np.testing.assert_array_equal(y.numpy(), digits.target)
    images, _ = load_digits(images=True)
    np.testing.assert_array_equal(images.numpy()[:, 0] * 16.0, digits.images)
