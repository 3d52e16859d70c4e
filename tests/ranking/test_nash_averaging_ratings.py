"""Nash averaging: max-entropy Nash by hand, invariance to copies, and against OpenSpiel."""

import numpy as np
import pandas as pd
import pyspiel
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from open_spiel.python.algorithms.nash_averaging import (
    nash_averaging as openspiel_nash_averaging,
)
from scipy.optimize import linprog

from games import NormalFormGame, catalog
from ranking import max_entropy_nash, nash_averaging
from ranking.nash_averaging_ratings import agent_task_scores, antisymmetric_payoffs

RPS = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])
TRANSITIVE = np.array([[0.0, -1.0, -1.0], [1.0, 0.0, -1.0], [1.0, 1.0, 0.0]])
# OpenSpiel's nash_averaging_test: agent 3 dominates the others.
GAME0 = np.array([[0.0, 234., 34., -270.], [-234., 0., -38., -464.],
                  [-34., 38., 0., -270.], [270., 464., 270., 0.]])


def entropy(p):
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def with_copy(a, i):
    idx = list(range(a.shape[0])) + [i]
    return a[np.ix_(idx, idx)]


def random_antisymmetric(seed, n, integer):
    x = np.random.default_rng(seed).standard_normal((n, n))
    if integer:  # ties and degenerate supports
        x = np.round(x)
    return x - x.T


def test_rps_is_uniform_with_zero_ratings():
    out = nash_averaging(RPS)
    np.testing.assert_allclose(out["nash"], 1 / 3, atol=1e-12)
    np.testing.assert_allclose(out["rating"], 0.0, atol=1e-12)
    out = nash_averaging(catalog.rock_paper_scissors())
    assert list(out.index) == ["rock", "paper", "scissors"]
    np.testing.assert_allclose(out["nash"], 1 / 3, atol=1e-12)


def test_transitive_game_puts_all_mass_on_the_best_agent():
    out = nash_averaging(TRANSITIVE)
    np.testing.assert_allclose(out["nash"], [0, 0, 1], atol=1e-12)
    np.testing.assert_allclose(out["rating"], [-1, -1, 0], atol=1e-12)
    np.testing.assert_allclose(max_entropy_nash(GAME0), [0, 0, 0, 1], atol=1e-12)


def test_two_best_agents_share_mass_equally():
    # 2 and 3 tie with each other and beat 0 and 1: max entropy splits evenly.
    a = np.array([[0, 1, -1, -1], [-1, 0, -1, -2], [1, 1, 0, 0], [1, 2, 0, 0]], dtype=float)
    np.testing.assert_allclose(max_entropy_nash(a), [0, 0, 0.5, 0.5], atol=1e-12)


def test_max_entropy_sits_on_a_facet_when_it_must():
    # Optimal set is {(0, t, 1 - t, 0...)} cut by column 3: t <= 1/3; unconstrained max would be 1/2.
    a = np.array([[0, 0, 0, 1], [0, 0, 0, -2], [0, 0, 0, 1], [-1, 2, -1, 0]], dtype=float)
    a[0, 1] = a[0, 2] = -1  # agent 0 loses to 1 and 2, so it leaves the support
    a[1, 0] = a[2, 0] = 1
    p = max_entropy_nash(a)
    np.testing.assert_allclose(p, [0, 1 / 3, 2 / 3, 0], atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_adding_a_copy_changes_no_rating(seed):
    a = random_antisymmetric(seed, 6, integer=False)
    base = nash_averaging(a)
    copied = nash_averaging(with_copy(a, int(base["nash"].to_numpy().argmax())))
    np.testing.assert_allclose(copied["rating"].to_numpy()[:6], base["rating"], atol=1e-10)
    i = int(base["nash"].to_numpy().argmax())
    assert abs(copied["rating"].to_numpy()[6] - base["rating"].to_numpy()[i]) < 1e-10
    # The copy and the original share the original's mass equally.
    q = copied["nash"].to_numpy()
    assert abs(q[i] - q[6]) < 1e-10 and abs(q[i] + q[6] - base["nash"].to_numpy()[i]) < 1e-10


@pytest.mark.parametrize("a", [RPS, TRANSITIVE, GAME0], ids=["rps", "transitive", "game0"])
def test_matches_openspiel_on_its_test_games(a):
    ref_p, ref_v = openspiel_nash_averaging(pyspiel.create_matrix_game(a, -a))
    out = nash_averaging(a)
    np.testing.assert_allclose(out["nash"], ref_p.ravel(), atol=1e-5)
    np.testing.assert_allclose(out["rating"], ref_v.ravel(), atol=1e-5 * np.abs(a).max())


@pytest.mark.parametrize("seed", range(8))
def test_matches_openspiel_on_random_games(seed):
    a = random_antisymmetric(seed, 3 + seed, integer=seed % 2 == 1)
    if seed % 3 == 0:
        a = with_copy(a, 0)
    ref_p, _ = openspiel_nash_averaging(pyspiel.create_matrix_game(a, -a))
    ref_p = ref_p.ravel()
    p = max_entropy_nash(a)
    # OpenSpiel's interior-point answer is accurate to ~1e-7 on generic games and ~1e-4 on
    # degenerate (integer) ones; ours is feasible to rounding and has at least its entropy.
    np.testing.assert_allclose(p, ref_p, atol=1e-4 if seed % 2 else 1e-6)
    assert (a.T @ p).min() > -1e-12 * np.abs(a).max()
    assert entropy(p) > entropy(np.clip(ref_p, 0, None)) - 1e-5


def max_over_nash_set(a, c, support):
    """max c.T p over the Nash set {p >= 0, sum p = 1, a.T p >= 0} restricted to ``support``."""
    n = a.shape[0]
    bounds = [(0, None) if s else (0, 0) for s in support]
    res = linprog(-c, A_ub=-a.T, b_ub=np.zeros(n), A_eq=np.ones((1, n)), b_eq=[1.0], bounds=bounds,
                  method="highs")
    assert res.status == 0
    return -res.fun


@settings(max_examples=30)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 10), integer=st.booleans())
@example(seed=168, n=6, integer=False)
def test_max_entropy_nash_optimality_certificate(seed, n, integer):
    a = random_antisymmetric(seed, n, integer)
    a /= max(np.abs(a).max(), 1.0)
    p = max_entropy_nash(a)
    assert abs(p.sum() - 1) < 1e-12 and p.min() >= 0
    ratings = a @ p
    assert ratings.max() < 1e-12  # a Nash equilibrium: no agent beats the mixture
    support = p > 0
    assert np.all(np.abs(ratings[support]) < 1e-12)
    # (1) No Nash equilibrium puts mass outside our support ...
    assert max_over_nash_set(a, (~support).astype(float), np.ones(n, bool)) < 1e-9
    # (2) ... and within it, the entropy's gradient -log p - 1 has no ascent direction in the
    # Nash set: first-order optimality of a concave objective on a convex set, checked by an LP.
    grad = np.zeros(n)
    grad[support] = -np.log(p[support])
    assert max_over_nash_set(a, grad, support) <= grad @ p + 1e-9


@settings(max_examples=10)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 8), integer=st.booleans())
def test_exact_agrees_with_cvxpy(seed, n, integer):
    a = random_antisymmetric(seed, n, integer)
    p = max_entropy_nash(a)
    pc = max_entropy_nash(a, method="cvxpy")
    assert np.abs(p - pc).max() < 5e-4  # Clarabel's accuracy on degenerate games
    # Clarabel leaves ~1e-7 on agents outside the support (worth ~1e-6 of entropy).
    assert entropy(p) > entropy(pc) - 1e-5


def test_win_probability_inputs():
    p = np.array([[0.5, 0.9, 0.2], [0.1, 0.5, 0.6], [0.8, 0.4, 0.5]])
    _, a = antisymmetric_payoffs(p)
    np.testing.assert_allclose(a, np.log(p / (1 - p)) * (1 - np.eye(3)), atol=1e-12)
    _, a = antisymmetric_payoffs(p, transform="centered")
    np.testing.assert_allclose(a, p - 0.5, atol=1e-12)
    game = NormalFormGame.from_bimatrix(p, p.T)
    pd.testing.assert_frame_equal(nash_averaging(game).reset_index(drop=True),
                                  nash_averaging(p).reset_index(drop=True))
    # From counts: P = (wins + draws / 2 + s) / (games + 2 s).
    wins = np.array([[0, 9, 2], [1, 0, 6], [8, 4, 0]])
    counts_a = antisymmetric_payoffs(wins, matrix="wins", smoothing=0.0)[1]
    np.testing.assert_allclose(counts_a, antisymmetric_payoffs(p)[1], atol=1e-12)
    df = pd.DataFrame({"agent_a": ["x"] * 9 + ["y"], "agent_b": ["y"] * 9 + ["x"], "score_a": [1.0] * 10})
    names, a = antisymmetric_payoffs(df, smoothing=0.5)
    assert names == ("x", "y") and abs(a[0, 1] - np.log(9.5 / 1.5)) < 1e-12


def test_bad_input():
    with pytest.raises(ValueError, match="antisymmetric"):
        nash_averaging(np.array([[0.0, 2.0], [1.0, 0.0]]))
    with pytest.raises(ValueError, match="antisymmetric"):
        max_entropy_nash([[0.0, 1.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match="NaN"):
        nash_averaging(np.array([[0.0, np.nan], [np.nan, 0.0]]))
    with pytest.raises(ValueError, match="infinite logit"):
        nash_averaging(np.array([[0.5, 1.0], [0.0, 0.5]]))
    with pytest.raises(ValueError, match="square"):
        nash_averaging(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="negative"):
        nash_averaging([[0, -1], [1, 0]], matrix="wins")
    with pytest.raises(ValueError, match="zero-sum"):
        nash_averaging(catalog.prisoners_dilemma())
    with pytest.raises(ValueError, match="symmetric"):
        nash_averaging(catalog.bach_or_stravinsky())
    with pytest.raises(ValueError, match="agent_b"):
        nash_averaging(pd.DataFrame({"agent_a": ["x"], "score_a": [1.0]}))
    with pytest.raises(ValueError, match="method"):
        max_entropy_nash(RPS, method="simplex")


# OpenSpiel's nash_averaging_test AvT tables: rows 0..2 are dominated by row 3 (game1);
# rows 3 and 4 are identical dominant agents (game2).
GAME1 = np.array([[0.0, 0.0, 0.0], [1.0, 10.0, 100.0], [2.0, 20.0, 200.0], [3.0, 30.0, 300.0]])


GAME2 = np.vstack([GAME1, GAME1[3]])


def avt(scores, **kw):
    return nash_averaging(scores, mode="agent_vs_task", **kw)


def test_specialists_and_a_generalist_by_hand():
    # Optimal agent mixes x satisfy x0 + x2/2 >= 1/2 and x1 + x2/2 >= 1/2, i.e. x0 = x1 = t;
    # entropy -2t log t - (1-2t) log(1-2t) peaks at t = 1/3. The tasks' only optimum is (1/2, 1/2).
    out = avt([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    np.testing.assert_allclose(out.agents["nash"], [1 / 3] * 3, atol=1e-12)
    np.testing.assert_allclose(out.agents["rating"], [0.5] * 3, atol=1e-12)
    np.testing.assert_allclose(out.tasks["nash"], [0.5, 0.5], atol=1e-12)
    np.testing.assert_allclose(out.tasks["rating"], [-0.5, -0.5], atol=1e-12)
    assert abs(out.value - 0.5) < 1e-12


def test_openspiel_dominated_and_dominant_agents():
    out = avt(GAME1)
    np.testing.assert_allclose(out.agents["nash"], [0, 0, 0, 1], atol=1e-12)
    out = avt(GAME2)
    np.testing.assert_allclose(out.agents["nash"], [0, 0, 0, 0.5, 0.5], atol=1e-12)
    np.testing.assert_allclose(out.agents["rating"].iloc[3:], 1.0, atol=1e-12)
    # Every task is equally hard for the dominant agents (normalised score 1): tasks spread uniformly.
    np.testing.assert_allclose(out.tasks["nash"], 1 / 3, atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_matches_openspiel_avt(seed):
    rng = np.random.default_rng(seed)
    s = rng.standard_normal((3 + seed % 3, 2 + seed % 4))
    if seed % 2:
        s = np.round(2 * s)  # ties
        s[0, :] = s.min(axis=0)  # keep every column non-constant
        s[1, :] = s.max(axis=0) + 1
    (ref_x, ref_y), (ref_va, ref_vt) = openspiel_nash_averaging(pyspiel.create_matrix_game(s, -s), a_v_a=False)
    out = avt(s)
    np.testing.assert_allclose(out.agents["nash"], ref_x.ravel(), atol=1e-4)
    np.testing.assert_allclose(out.tasks["nash"], ref_y.ravel(), atol=1e-4)
    np.testing.assert_allclose(out.agents["rating"], ref_va.ravel(), atol=1e-4)
    np.testing.assert_allclose(out.tasks["rating"], ref_vt.ravel(), atol=1e-4)


def test_labels_from_a_dataframe_and_a_game():
    table = pd.DataFrame([[1.0, 0.0], [0.0, 1.0]], index=["ann", "bob"], columns=["pong", "go"])
    out = avt(table)
    assert list(out.agents.index) == ["ann", "bob"] and list(out.tasks.index) == ["pong", "go"]
    assert list(out.agents.columns) == ["nash", "rating"] and list(out.tasks.columns) == ["nash", "rating"]
    game = NormalFormGame(np.stack([GAME1, -GAME1]))
    np.testing.assert_allclose(avt(game).agents["nash"], [0, 0, 0, 1], atol=1e-12)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="same score"):
        avt([[1.0, 2.0], [1.0, 3.0]])
    with pytest.raises(ValueError, match="NaN"):
        avt([[1.0, np.nan], [0.0, 1.0]])
    with pytest.raises(ValueError, match="zero-sum"):
        avt(NormalFormGame(np.stack([GAME1, GAME1])))
    with pytest.raises(ValueError, match="mode"):
        nash_averaging(GAME1, mode="agents")
    with pytest.raises(ValueError, match="normalize"):
        avt(GAME1, normalize="rank")
    with pytest.raises(ValueError, match="2-D"):
        avt([1.0, 2.0])


def random_table(seed, m, n, integer):
    s = np.random.default_rng(seed).standard_normal((m, n))
    return np.round(s) if integer else s


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), m=st.integers(1, 5), n=st.integers(1, 5), integer=st.booleans())
def test_optimality_and_copy_invariance(seed, m, n, integer):
    s = random_table(seed, m, n, integer)
    out = avt(s, normalize="none")
    x, y = out.agents["nash"].to_numpy(), out.tasks["nash"].to_numpy()
    assert abs(x.sum() - 1) < 1e-12 and abs(y.sum() - 1) < 1e-12 and x.min() >= 0 and y.min() >= 0
    # Both sides optimal: no task is harder for x than the value, no agent does better against y.
    scale = max(1.0, np.abs(s).max())
    assert (x @ s).min() >= out.value - 1e-9 * scale and (s @ y).max() <= out.value + 1e-9 * scale
    if integer:
        return  # ties: max entropy spreads over tied strategies, so copies may move mass
    # Generic scores: a copy of a task changes no agent's rating, a copy of an agent no task's rating.
    t = int(np.argmax(y))
    more_tasks = avt(np.column_stack([s, s[:, t]]), normalize="none")
    np.testing.assert_allclose(more_tasks.agents["rating"], out.agents["rating"], atol=1e-8 * scale)
    a = int(np.argmax(x))
    more_agents = avt(np.vstack([s, s[a]]), normalize="none")
    np.testing.assert_allclose(more_agents.tasks["rating"], out.tasks["rating"], atol=1e-8 * scale)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), offset=st.floats(-1e3, 1e3), log_scale=st.floats(-3, 3))
def test_per_task_affine_changes_are_invisible(seed, offset, log_scale):
    s = random_table(seed, 4, 3, integer=False)
    base = avt(s)
    # Any positive affine change of one task's units, and a common offset: same normalised table.
    changed = s.copy()
    changed[:, 1] = changed[:, 1] * 10.0 ** log_scale + offset
    out = avt(changed + offset)
    np.testing.assert_allclose(out.agents.to_numpy(), base.agents.to_numpy(), atol=1e-9)
    np.testing.assert_allclose(out.tasks.to_numpy(), base.tasks.to_numpy(), atol=1e-9)
    # Unnormalised, an offset moves every agent rating and the value by the offset.
    raw, shifted = avt(s, normalize="none"), avt(s + offset, normalize="none")
    np.testing.assert_allclose(shifted.agents["nash"], raw.agents["nash"], atol=1e-9)
    np.testing.assert_allclose(shifted.agents["rating"], raw.agents["rating"] + offset, atol=1e-9 * max(1, abs(offset)))


def test_scores_helper_doc():
    assert agent_task_scores([[0.0, 10.0], [1.0, 20.0]], normalize="none").to_numpy().tolist() == [[0, 10], [1, 20]]
