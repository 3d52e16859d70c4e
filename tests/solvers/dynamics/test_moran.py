"""Moran process: closed-form fixation probabilities and both simulators against them."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import catalog
from solvers.dynamics.moran import fixation_probability, moran_fixation, moran_process

STAG = catalog.stag_hunt()   # stag: 4 vs stag, 0 vs hare; hare: 3 vs stag, 2 vs hare


def test_closed_forms():
    # neutral drift: i / N
    assert fixation_probability([[2, 2], [2, 2]], 20, initial_mutants=7) == pytest.approx(7 / 20, abs=1e-15)
    assert fixation_probability(STAG, 20, selection_intensity=0.0, initial_mutants=3) == pytest.approx(0.15)
    # constant fitness r: (1 - r^-i) / (1 - r^-N)
    for r, n, i in ((1.5, 10, 1), (0.8, 7, 3), (3.0, 30, 2)):
        expected = (1 - r ** -i) / (1 - r ** -n)
        assert fixation_probability([[r, r], [1, 1]], n, initial_mutants=i) == pytest.approx(expected, rel=1e-12)
    # Nowak et al. 2004 for N = 2: rho = f_1 / (f_1 + g_1) with F_1 = b, G_1 = c
    a, b, c, d, w = 3.0, 1.0, 2.0, 5.0, 0.3
    f1, g1 = 1 - w + w * b, 1 - w + w * c
    assert fixation_probability([[a, b], [c, d]], 2, w) == pytest.approx(f1 / (f1 + g1), rel=1e-14)


@given(r=st.floats(0.2, 5.0), n=st.integers(2, 40), w=st.floats(0, 1))
@settings(max_examples=40, deadline=None)
def test_fixation_properties(r, n, w):
    game = [[r, r], [1.0, 1.0]]
    rho = [fixation_probability(game, n, w, initial_mutants=i) for i in range(1, n)]
    assert all(0 <= x <= 1 for x in rho) and np.all(np.diff(rho) >= -1e-15)   # more mutants, likelier to fix
    # a single B invading A against a single A invading B: rho_B / rho_A = prod_j g_j / f_j (Nowak et al.),
    # here ((1 - w + w) / (1 - w + w r))^(N - 1)
    rho_b = fixation_probability(game, n, w, mutant=1, resident=0)
    ratio = (1 - w + w * 1.0) / (1 - w + w * r)
    assert rho_b == pytest.approx(rho[0] * ratio ** (n - 1), rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("fitness, w", [("linear", 0.5), ("exponential", 0.4)])
def test_simulated_fixation_matches_the_closed_form(fitness, w):
    for mutant, resident in ((0, 1), (1, 0)):
        exact = fixation_probability(STAG, 12, w, mutant=mutant, resident=resident, fitness=fitness)
        sim = moran_fixation(STAG, 12, trials=20_000, rng=np.random.default_rng(mutant), selection_intensity=w,
                             mutant=mutant, resident=resident, fitness=fitness)
        assert abs(sim.probability - exact) < 4 * max(sim.stderr, 1e-3), (sim, exact)


def test_step_by_step_process_matches_the_closed_form():
    rng = np.random.default_rng(5)
    game = [[1.5, 1.5], [1.0, 1.0]]
    runs = [moran_process(game, 6, rng, initial_mutants=2) for _ in range(1500)]
    assert all(r[0] == 2 and r[-1] in (0, 6) and np.all(np.abs(np.diff(r)) <= 1) for r in runs)
    fixed = np.mean([r[-1] == 6 for r in runs])
    exact = fixation_probability(game, 6, initial_mutants=2)
    assert abs(fixed - exact) < 4 * np.sqrt(exact * (1 - exact) / len(runs))
    # the same seed gives the same run
    assert np.array_equal(moran_process(game, 6, 11), moran_process(game, 6, 11))


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="population_size must be at least 2"):
        fixation_probability(STAG, 1)
    with pytest.raises(ValueError, match="non-positive"):
        fixation_probability([[-5, 0], [0, 0]], 5, selection_intensity=1.0)
    with pytest.raises(ValueError, match="different strategies"):
        fixation_probability(STAG, 5, mutant=1, resident=1)
    with pytest.raises(ValueError, match="initial_mutants must be below"):
        moran_fixation(STAG, 5, trials=10, selection_intensity=0.5, initial_mutants=5)
    with pytest.raises(ValueError, match="symmetric"):
        fixation_probability(catalog.random_game((2, 2), rng=0), 5)
    with pytest.raises(ValueError, match="fitness must be one of"):
        fixation_probability(STAG, 5, fitness="fermi")
