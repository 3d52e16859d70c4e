"""mElo: recovers intransitive (rock-paper-scissors) win rates that Elo cannot."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import check_grad
from scipy.special import expit

from games import NormalFormGame
from ranking import elo, elo_win_probabilities, melo, online_elo, online_melo
from ranking.melo_ratings import MElo, _objective, omega

# Each agent beats the next with probability 0.9: rock < paper < scissors < rock.
RPS_P = np.array([[0.5, 0.1, 0.9], [0.9, 0.5, 0.1], [0.1, 0.9, 0.5]])


def rps_records(per_pair_wins=9, per_pair_losses=1):
    """Deterministic records: for each pair, exactly 9 wins of the favourite out of 10."""
    rows = []
    for i, j in [(1, 0), (2, 1), (0, 2)]:  # i beats j with probability 0.9
        rows += [(i, j, 1.0)] * per_pair_wins + [(i, j, 0.0)] * per_pair_losses
    return pd.DataFrame(rows, columns=["agent_a", "agent_b", "score_a"])


def test_omega_is_block_antisymmetric():
    om = omega(3)
    np.testing.assert_array_equal(om, -om.T)
    np.testing.assert_array_equal(om @ om, -np.eye(6))
    assert om[0, 1] == 1 and om[2, 3] == 1 and om[0, 3] == 0


def test_melo_fits_rps_exactly_where_elo_predicts_one_half():
    df = rps_records()
    fit = melo(df, smoothing=0.0, agents=[0, 1, 2])
    np.testing.assert_allclose(fit.win_probabilities(), RPS_P, atol=1e-6)
    # (With three agents r and c are not separately identifiable: every 3x3 antisymmetric
    # matrix has rank 2, so only the predictions are checked.)
    elo_p = elo_win_probabilities(elo(df, smoothing=0.0))
    np.testing.assert_allclose(elo_p, 0.5, atol=1e-9)  # Elo: every pair is a coin flip


def test_melo_and_online_melo_on_sampled_rps():
    rng = np.random.default_rng(0)
    n = 6000
    a = rng.integers(0, 3, n)
    b = (a + rng.integers(1, 3, n)) % 3
    df = pd.DataFrame({"agent_a": a, "agent_b": b, "score_a": (rng.random(n) < RPS_P[a, b]).astype(float)})
    agents = [0, 1, 2]
    batch = melo(df, agents=agents)
    assert np.abs(batch.win_probabilities() - RPS_P).max() < 0.03
    online = online_melo(df, agents=agents, lr_vector=0.05, rng=1)
    assert np.abs(online.win_probabilities() - RPS_P).max() < 0.1
    elo_p = elo_win_probabilities(elo(df, agents=agents))
    assert np.abs(elo_p - 0.5).max() < 0.05
    assert np.abs(elo_p - RPS_P).max() > 0.35
    online_elo_p = elo_win_probabilities(online_elo(df, agents=agents, k=4))
    assert np.abs(online_elo_p - RPS_P).max() > 0.3


@settings(max_examples=15)
@given(seed=st.integers(0, 10**6), n=st.integers(3, 7), k=st.integers(1, 2))
def test_melo_recovers_a_planted_model(seed, n, k):
    rng = np.random.default_rng(seed)
    r = rng.normal(0, 1, n)
    c = rng.normal(0, 1, (n, 2 * k))
    logits = r[:, None] - r[None, :] + c @ omega(k) @ c.T
    p = expit(logits)
    game = NormalFormGame.from_bimatrix(p, p.T)
    fit = melo(game, k=k, smoothing=0.0, games_per_pair=100, restarts=4, rng=seed)
    assert fit.info["converged"]
    np.testing.assert_allclose(fit.win_probabilities(), p, atol=1e-5)


def test_objective_gradient():
    rng = np.random.default_rng(2)
    n, k = 5, 2
    s = rng.random((n, n)) * 10
    np.fill_diagonal(s, 0)
    x = rng.normal(size=n + n * 2 * k)
    err = check_grad(lambda v: _objective(v, s, omega(k), 0.3)[0],
                     lambda v: _objective(v, s, omega(k), 0.3)[1], x)
    assert err < 1e-4 * np.linalg.norm(_objective(x, s, omega(k), 0.3)[1])


def test_online_melo_without_vectors_is_online_elo():
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"agent_a": rng.integers(0, 4, 300), "agent_b": rng.integers(0, 4, 300),
                       "score_a": rng.choice([0.0, 0.5, 1.0], 300)})
    m = online_melo(df, lr_rating=24.0, init_scale=0.0)
    e = online_elo(df, k=24.0, initial=0.0, agents=m.agents)
    np.testing.assert_allclose(m.rating, e["rating"] - e["rating"].mean(), atol=1e-9)
    np.testing.assert_array_equal(m.vectors, 0.0)


def test_melo_result_table_and_probabilities():
    m = MElo(("a", "b", "c"), np.array([100.0, 0.0, -100.0]), np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]))
    p = m.win_probabilities()
    np.testing.assert_allclose(p + p.T, 1.0)
    # a vs b: logit = 100 * ln(10) / 400 + c_a^T Omega c_b = 0.5756 + 1.
    assert abs(p[0, 1] - expit(100 * np.log(10) / 400 + 1.0)) < 1e-12
    assert list(m.to_frame().columns) == ["rating", "c0", "c1"]


def test_melo_bad_input():
    with pytest.raises(ValueError, match="k"):
        melo(rps_records(), k=0)
    with pytest.raises(ValueError, match="l2"):
        melo(rps_records(), l2=-1.0)
    with pytest.raises(ValueError, match="score_a"):
        online_melo(pd.DataFrame({"agent_a": [0], "agent_b": [1]}))
    with pytest.raises(ValueError, match="lr_vector"):
        online_melo(rps_records(), lr_vector=np.nan)
    with pytest.raises(ValueError, match="negative"):
        melo([[0, -2], [1, 0]])
