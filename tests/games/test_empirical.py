"""games.EmpiricalGame: sample statistics, growth, missing profiles, saving and exact games."""

import numpy as np
import pytest

from games import EmpiricalGame, catalog


def test_empirical_game_statistics():
    eg = EmpiricalGame((2, 2))
    samples = np.array([[1.0, -1.0], [3.0, -3.0], [2.0, -2.0]])
    eg.add_samples((1, 0), samples)
    np.testing.assert_allclose(eg.mean()[:, 1, 0], [2.0, -2.0])
    np.testing.assert_allclose(eg.variance()[:, 1, 0], [1.0, 1.0])
    np.testing.assert_allclose(eg.standard_error()[:, 1, 0], np.sqrt([1 / 3, 1 / 3]))
    assert np.isnan(eg.mean()[0, 0, 0])
    lo, hi = eg.confidence_interval(0.05, payoff_range=(-3, 3))
    width = 6 * np.sqrt(np.log(2 / 0.05) / 6)
    np.testing.assert_allclose(hi[0, 1, 0] - lo[0, 1, 0], 2 * width)
    assert lo[0, 0, 0] == -np.inf


def test_empirical_game_grow_and_missing():
    eg = EmpiricalGame((1, 1))
    eg.set_exact((0, 0), [0.5, -0.5])
    eg.grow(0)
    eg.grow(1, 2)
    assert eg.shape == (2, 3)
    assert eg.missing_profiles() == [(0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    with pytest.raises(ValueError, match="5 profiles have no samples"):
        eg.mean_game()
    for p in eg.missing_profiles():
        eg.set_exact(p, [1.0, -1.0])
    g = eg.mean_game()
    assert g.payoffs[0, 0, 0] == 0.5 and g.payoffs[0, 1, 2] == 1.0
    assert np.all(eg.variance() == 0.0)


def test_empirical_game_save_load(tmp_path):
    eg = EmpiricalGame((2, 3), strategy_names=[["a", "b"], ["x", "y", "z"]])
    rng = np.random.default_rng(0)
    for p in np.ndindex(2, 3):
        eg.add_samples(p, rng.normal(size=(4, 2)))
    eg.set_exact((1, 2), [0.0, 0.0])
    eg.save(tmp_path / "g.npz")
    back = EmpiricalGame.load(tmp_path / "g.npz")
    np.testing.assert_array_equal(back.total_sq, eg.total_sq)
    np.testing.assert_array_equal(back.exact, eg.exact)
    assert back.strategy_names == eg.strategy_names
    assert back.mean_game() == eg.mean_game()


def test_empirical_game_from_game_is_exact():
    g = catalog.chicken()
    eg = EmpiricalGame.from_game(g)
    np.testing.assert_array_equal(eg.mean_game().payoffs, g.payoffs)
    lo, hi = eg.confidence_interval(0.1)
    np.testing.assert_array_equal(lo, hi)
