"""Replicator and Boltzmann-Q fields and trajectories: OpenSpiel egt and Nashpy as references, closed forms."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nashpy.learning.replicator_dynamics import asymmetric_replicator_dynamics, replicator_dynamics
from open_spiel.python.egt import dynamics as egt

from games import NormalFormGame, catalog
from solvers.dynamics.evolutionary_dynamics import boltzmann_q, replicator, rest_points, trajectory, vector_field

RPS = catalog.rock_paper_scissors()


def random_state(rng, sizes):
    return np.concatenate([rng.dirichlet(np.ones(k)) for k in sizes])


@pytest.mark.parametrize("seed", range(3))
def test_fields_match_openspiel_egt(seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((4, 4))
    x = rng.dirichlet(np.ones(4))
    single = egt.SinglePopulationDynamics(np.stack([a, a.T]), egt.replicator)
    np.testing.assert_allclose(replicator(a, x), single(x), atol=1e-14)
    single_q = egt.SinglePopulationDynamics(np.stack([a, a.T]), lambda s, f: egt.boltzmannq(s, f, 0.3))
    np.testing.assert_allclose(boltzmann_q(a, x, temperature=0.3), single_q(x), atol=1e-13)
    game = catalog.random_game((2, 3, 4), rng=rng)
    state = random_state(rng, game.shape)
    multi = egt.MultiPopulationDynamics(game.payoffs, egt.replicator)
    np.testing.assert_allclose(replicator(game, state), multi(state), atol=1e-14)
    multi_q = egt.MultiPopulationDynamics(game.payoffs, lambda s, f: egt.boltzmannq(s, f, 2.0))
    np.testing.assert_allclose(vector_field(game, state, "boltzmann_q", temperature=2.0), multi_q(state), atol=1e-13)


def test_trajectories_match_nashpy():
    # Nashpy's documented replicator example game, with and without a mutation matrix.
    a = np.array([[4.0, 3.0], [2.0, 1.0]])
    times = np.linspace(0, 10, 101)
    ref = replicator_dynamics(a, y0=np.array([0.5, 0.5]), timepoints=times)
    ours = trajectory(a, [0.5, 0.5], t_max=10, num_points=101)
    np.testing.assert_allclose(ours.states, ref, atol=1e-6)
    q = np.array([[0.9, 0.1], [0.2, 0.8]])
    ref = replicator_dynamics(a, y0=np.array([0.2, 0.8]), timepoints=times, mutation_matrix=q)
    ours = trajectory(a, [0.2, 0.8], t_max=10, num_points=101, mutation=q)
    np.testing.assert_allclose(ours.states, ref, atol=1e-6)
    # two populations: Nashpy's asymmetric replicator dynamics on a 3x2 bimatrix game
    b_a = np.array([[5.0, 4.0], [2.0, 1.0], [3.0, 3.0]])
    b_b = np.array([[1.0, 3.0], [4.0, 2.0], [2.0, 2.0]])
    x0, y0 = np.array([0.2, 0.5, 0.3]), np.array([0.6, 0.4])
    ref_x, ref_y = asymmetric_replicator_dynamics(b_a, b_b, x0=x0, y0=y0, timepoints=times)
    ours = trajectory(NormalFormGame(np.stack([b_a, b_b])), np.concatenate([x0, y0]), t_max=10, num_points=101)
    np.testing.assert_allclose(ours.population(0), ref_x, atol=1e-6)
    np.testing.assert_allclose(ours.population(1), ref_y, atol=1e-6)


def test_mutation_per_population_and_by_rate():
    game = catalog.random_game((2, 3), rng=1, low=0.0, high=1.0)
    x = np.array([0.3, 0.7, 0.2, 0.3, 0.5])
    q0, q1 = np.array([[0.9, 0.1], [0.3, 0.7]]), np.full((3, 3), 0.1) + 0.7 * np.eye(3)
    field = replicator(game, x, mutation=[q0, q1])
    f0, f1 = game.payoffs[0] @ x[2:], game.payoffs[1].T @ x[:2]
    np.testing.assert_allclose(field[:2], (x[:2] * f0) @ q0 - x[:2] * (x[:2] @ f0), atol=1e-15)
    np.testing.assert_allclose(field[2:], (x[2:] * f1) @ q1 - x[2:] * (x[2:] @ f1), atol=1e-15)
    # a rate mu: an offspring mutates to each other type with probability mu / (k - 1)
    by_rate = replicator(game, x, mutation=0.3)
    q1_rate = np.full((3, 3), 0.15) + 0.55 * np.eye(3)
    np.testing.assert_allclose(by_rate[2:], (x[2:] * f1) @ q1_rate - x[2:] * (x[2:] @ f1), atol=1e-15)


def test_logistic_closed_form_and_rps_constant_of_motion():
    traj = trajectory([[1, 1], [0, 0]], [0.1, 0.9], t_max=5, num_points=11)
    t = traj.t
    np.testing.assert_allclose(traj.states[:, 0], 0.1 * np.exp(t) / (0.9 + 0.1 * np.exp(t)), atol=1e-8)
    # Zero-sum RPS: the product x_1 x_2 x_3 is a constant of motion, so orbits are closed.
    traj = trajectory(RPS, [0.6, 0.3, 0.1], t_max=30, num_points=300, single_population=True, rtol=1e-10,
                      atol=1e-12)
    product = traj.states.prod(axis=1)
    np.testing.assert_allclose(product, 0.6 * 0.3 * 0.1, rtol=1e-6)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), k=st.integers(2, 4), two=st.booleans(), offset=st.floats(-50, 50),
       scale=st.sampled_from([1e-3, 0.5, 3.0, 1e3]))
def test_field_properties(seed, k, two, offset, scale):
    rng = np.random.default_rng(seed)
    game = catalog.random_game((k, k + 1), rng=rng) if two else rng.standard_normal((k, k))
    sizes = (k, k + 1) if two else (k,)
    x = random_state(rng, sizes)
    splits = np.cumsum(sizes)[:-1]
    for field in (replicator(game, x), boltzmann_q(game, x, temperature=0.7), replicator(game, x, mutation=0.1)):
        assert all(abs(part.sum()) < 1e-12 * max(1, np.abs(field).max()) for part in np.split(field, splits))
    # the replicator ignores offsets and scales with the payoffs; Boltzmann-Q with temperature scaled alike
    payoffs = game.payoffs if two else game
    moved = NormalFormGame(scale * payoffs + offset) if two else scale * payoffs + offset
    np.testing.assert_allclose(replicator(moved, x), scale * replicator(game, x), atol=1e-9 * scale * 50)
    np.testing.assert_allclose(boltzmann_q(moved, x, temperature=0.7 * scale), boltzmann_q(game, x, temperature=0.7),
                               atol=1e-9 * 50)
    # faces are invariant: an extinct strategy stays extinct
    x0 = x.copy()
    x0[0] = 0.0
    x0[:k] /= x0[:k].sum()
    assert replicator(game, x0)[0] == 0.0


def test_rest_points_of_rps_and_two_by_two_games():
    pts = rest_points(RPS, single_population=True)
    assert len(pts) == 4
    interior = [p for p in pts if p.state.min() > 0]
    np.testing.assert_allclose(interior[0].state, 1 / 3, atol=1e-12)
    assert interior[0].stability == "neutral"
    np.testing.assert_allclose(np.abs(interior[0].eigenvalues.imag), 1 / np.sqrt(3), atol=1e-6)  # a centre
    assert all(p.stability == "unstable" for p in pts if p.state.max() == 1)   # saddles at the vertices
    # stag hunt (4 0 / 3 2): both pure equilibria attract, the mixed one (2/3 stag) is a saddle
    by_state = {tuple(p.state.round(6)): p.stability for p in rest_points(catalog.stag_hunt())}
    assert by_state[(1, 0, 1, 0)] == "stable" and by_state[(0, 1, 0, 1)] == "stable"
    assert by_state[(1, 0, 0, 1)] == "unstable" and by_state[(0.666667, 0.333333, 0.666667, 0.333333)] == "unstable"
    assert len(by_state) == 5
    # matching pennies: the mixed equilibrium is a centre of the two-population replicator
    mp = [p for p in rest_points(catalog.matching_pennies()) if p.state.min() > 0]
    np.testing.assert_allclose(mp[0].state, 0.5, atol=1e-12)
    assert mp[0].stability == "neutral"


def test_boltzmann_rest_points_are_logit_fixed_points():
    tau = 0.2
    pts = rest_points(catalog.stag_hunt(), "boltzmann_q", temperature=tau)
    assert sorted(p.stability for p in pts) == ["stable", "stable", "unstable"]
    u = catalog.stag_hunt().payoffs
    for p in pts:
        x, y = p.state[:2], p.state[2:]
        logit = lambda f: np.exp(f / tau) / np.exp(f / tau).sum()  # noqa: E731
        np.testing.assert_allclose(x, logit(u[0] @ y), atol=1e-9)
        np.testing.assert_allclose(y, logit(u[1].T @ x), atol=1e-9)
    # with exploration the RPS centre becomes an attractor
    (centre,) = rest_points(RPS, "boltzmann_q", single_population=True, temperature=0.5)
    np.testing.assert_allclose(centre.state, 1 / 3, atol=1e-10)
    assert centre.stability == "stable"


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="state must be a flat vector of length 3"):
        replicator(RPS, [0.5, 0.5], single_population=True)
    with pytest.raises(ValueError, match="symmetric two-player"):
        replicator(catalog.random_game((2, 3), rng=0), [0.5, 0.5], single_population=True)
    with pytest.raises(ValueError, match="temperature"):
        boltzmann_q(RPS, np.ones(6) / 3, temperature=0)
    with pytest.raises(ValueError, match="dynamics must be one of"):
        vector_field(RPS, np.ones(6) / 3, "logit")
    with pytest.raises(ValueError, match="unknown option"):
        vector_field(RPS, np.ones(6) / 3, "replicator", temperature=1.0)
    with pytest.raises(ValueError, match="row-stochastic|rows"):
        replicator([[1, 0], [0, 1]], [0.5, 0.5], mutation=[[1, 1], [0, 1]])
    game = catalog.random_game((2, 3), rng=0)
    with pytest.raises(ValueError, match="population 1 must be \\(3, 3\\)"):
        replicator(game, [0.5, 0.5, 0.2, 0.3, 0.5], mutation=[[0.9, 0.1], [0.2, 0.8]])
    with pytest.raises(ValueError, match="rate in \\[0, 1\\]"):
        replicator(game, [0.5, 0.5, 0.2, 0.3, 0.5], mutation=1.5)
    with pytest.raises(ValueError, match="initial: population 0"):
        trajectory([[1, 0], [0, 1]], [0.7, 0.7])
