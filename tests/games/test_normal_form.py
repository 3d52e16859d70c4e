"""games.NormalFormGame refuses payoffs that are not real numbers (issue 15, item 11)."""

import numpy as np
import pytest

from games import NormalFormGame


@pytest.mark.parametrize("payoffs", [
    np.array([[[1, 0], [0, 1]], [[1, 0], [0, 1]]], dtype=complex),
    [[[1 + 2j, 0], [0, 1]], [[1, 0], [0, 1]]],
    np.array([[[1, 0], [0, 1]], [[1, 0], [0, 1]]], dtype=object) + 0j,
])
def test_complex_payoffs_are_refused_not_truncated(payoffs):
    with pytest.raises(TypeError, match=r"^payoffs is complex; payoffs must be real numbers"):
        NormalFormGame(payoffs)


@pytest.mark.parametrize("payoffs", [
    [[["1", "0"], ["0", "1"]], [["1", "0"], ["0", "1"]]],
    [[[1, "0"], [0, 1]], [[1, 0], [0, 1]]],
    np.array([[[1, 0], [0, 1]], [[1, 0], [0, 1]]]).astype(str),
    np.array([[[1, b"0"], [0, 1]], [[1, 0], [0, 1]]], dtype=object),
])
def test_numeric_strings_are_refused(payoffs):
    with pytest.raises(TypeError, match=r"^payoffs holds text; .* numeric strings"):
        NormalFormGame(payoffs)


def test_the_bimatrix_constructor_names_its_argument():
    with pytest.raises(TypeError, match=r"^col is complex"):
        NormalFormGame.from_bimatrix([[1, 0], [0, 1]], [[1j, 0], [0, 1]])
    with pytest.raises(TypeError, match=r"^row holds text"):
        NormalFormGame.from_bimatrix([["1", "0"], ["0", "1"]])


def test_real_payoffs_of_every_numeric_kind_are_accepted():
    ints = [[[1, 0], [0, 2]], [[2, 0], [0, 1]]]
    reference = NormalFormGame(np.array(ints, dtype=float)).payoffs
    for payoffs in (ints, np.array(ints, dtype=np.int8), np.array(ints, dtype=np.uint16),
                    np.array(ints, dtype=object), np.array(ints, dtype=np.float32)):
        np.testing.assert_array_equal(NormalFormGame(payoffs).payoffs, reference)
    big = NormalFormGame([[[2**70, 0], [0, 1]], [[0, 1], [1, 0]]])   # beyond int64: Python ints, still numbers
    assert big.payoffs[0, 0, 0] == float(2**70)
    assert NormalFormGame(np.array(ints, dtype=bool)).payoffs.dtype == np.float64
