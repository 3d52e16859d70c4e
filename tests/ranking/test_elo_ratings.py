"""Elo: online updates by hand, batch MLE against OpenSpiel, bootstrap, input checks."""

import math

import numpy as np
import pandas as pd
import pyspiel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import EmpiricalGame, NormalFormGame
from ranking import elo, elo_win_probabilities, online_elo, online_elo_history
from ranking.elo_ratings import bradley_terry_strengths
from ranking.match_records import as_match_counts, count_matrices


def pyspiel_elo(wins, draws, smoothing=0.01, max_iterations=None, convergence_delta=None):
    options = pyspiel.elo.default_elo_options()
    options.smoothing_factor = smoothing
    if max_iterations is not None:
        options.max_iterations = max_iterations
    if convergence_delta is not None:
        options.convergence_delta = convergence_delta
    return np.array(pyspiel.elo.compute_ratings_from_matrices(
        win_matrix=np.asarray(wins, dtype=int).tolist(), draw_matrix=np.asarray(draws, dtype=int).tolist(),
        options=options))


def random_counts(seed, n, never_wins=False, never_loses=False):
    rng = np.random.default_rng(seed)
    wins = rng.integers(0, 15, (n, n))
    draws = rng.integers(0, 4, (n, n))
    draws = draws + draws.T
    np.fill_diagonal(wins, 0)
    np.fill_diagonal(draws, 0)
    if never_wins:  # agent 0 loses every match it plays
        wins[0, :] = 0
        draws[0, :] = draws[:, 0] = 0
    if never_loses:  # agent n-1 wins every match it plays
        wins[:, n - 1] = 0
        draws[n - 1, :] = draws[:, n - 1] = 0
    return wins, draws


# ------------------------------------------------------------------ online Elo by hand
def test_online_elo_two_matches_by_hand():
    # Match 1: a beats b, both at 1500: E_a = 1/2, so a = 1500 + 32 * 0.5 = 1516, b = 1484.
    # Match 2: b draws c (1500): E_b = 1 / (1 + 10**(16/400)) = 1 / 2.0964782 = 0.4769904,
    # so b gains 32 * (0.5 - 0.4769904) = 0.7363068 and c loses as much.
    df = pd.DataFrame({"agent_a": ["a", "b"], "agent_b": ["b", "c"], "score_a": [1.0, 0.5]})
    out = online_elo(df, k=32, initial=1500)
    e_b = 1.0 / (1.0 + 10 ** 0.04)
    assert abs(e_b - 0.4769904) < 1e-7
    np.testing.assert_allclose(out.loc[["a", "b", "c"], "rating"],
                               [1516.0, 1484.0 + 0.7363068, 1500.0 - 0.7363068], atol=1e-6)
    assert out["matches"].tolist() == [1, 2, 1]
    hist = online_elo_history(df, k=32, initial=1500)
    assert hist["expected_a"].tolist()[0] == 0.5
    assert abs(hist["expected_a"].tolist()[1] - 0.4769904) < 1e-7
    np.testing.assert_allclose(hist["rating_a_after"], [1516.0, 1484.7363068], atol=1e-6)


def test_online_elo_conserves_rating_sum_and_reads_returns():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"agent_a": rng.integers(0, 5, 200), "agent_b": rng.integers(0, 5, 200),
                       "score_a": rng.normal(size=200)})  # returns: the sign decides
    out = online_elo(df, k=20, initial=1000)
    assert abs(out["rating"].sum() - 1000 * len(out)) < 1e-8
    signs = df.assign(score_a=0.5 * (1 + np.sign(df["score_a"])))
    np.testing.assert_allclose(online_elo(signs, k=20, initial=1000)["rating"], out["rating"])


# ------------------------------------------------------------------ batch Elo by hand
def test_two_agents_closed_form():
    # a beat b twice, b beat a once, one draw: points 2.5 to 1.5, MLE odds (2.5 + s) / (1.5 + s).
    df = pd.DataFrame({"agent_a": ["a", "a", "b", "b"], "agent_b": ["b", "b", "a", "a"],
                       "score_a": [1, 1, 1, 0.5]})
    for s in (0.0, 0.01, 1.0):
        r = elo(df, smoothing=s)
        assert r.loc["b", "rating"] == 0.0
        assert abs(r.loc["a", "rating"] - 400 * np.log10((2.5 + s) / (1.5 + s))) < 1e-9
    assert elo(df, anchor="mean")["rating"].sum() == pytest.approx(0, abs=1e-9)
    assert elo(df, anchor="a", offset=1000).loc["a", "rating"] == 1000


def test_game_input_uses_win_probabilities():
    p = np.array([[0.5, 0.8], [0.2, 0.5]])
    g = NormalFormGame.from_bimatrix(p, p.T)
    r = elo(g, smoothing=0.0)["rating"].to_numpy()
    assert abs(r[0] - r[1] - 400 * np.log10(4.0)) < 1e-9
    u = 2 * p - 1  # the same as zero-sum returns in [-1, 1]
    r2 = elo(NormalFormGame.from_bimatrix(u, -u), smoothing=0.0)["rating"].to_numpy()
    np.testing.assert_allclose(r2, r, atol=1e-9)


def test_empirical_game_input_counts_both_seatings():
    # Zero-sum returns (win 1, loss -1). Profile (0, 1): agent 0 wins 3 of 4. Profile (1, 0):
    # agent 1 (row) loses both. So agent 0 scored 3 + 2 = 5 points and agent 1 scored 1 + 0 = 1.
    eg = EmpiricalGame((2, 2))
    eg.add_samples((0, 1), [[1, -1], [1, -1], [1, -1], [-1, 1]])
    eg.add_samples((1, 0), [[-1, 1], [-1, 1]])
    r = elo(eg, smoothing=0.0, single_population=True)["rating"].to_numpy()
    assert abs(r[0] - r[1] - 400 * np.log10(5.0)) < 1e-9


# ------------------------------------------------------------------ against OpenSpiel
@settings(max_examples=30)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 8), never_wins=st.booleans(), never_loses=st.booleans(),
       smoothing=st.sampled_from([0.01, 0.1, 1.0]))
def test_mm_matches_pyspiel_to_1e6(seed, n, never_wins, never_loses, smoothing):
    wins, draws = random_counts(seed, n, never_wins, never_loses)
    ref = pyspiel_elo(wins, draws, smoothing)
    ours = elo(wins, draws, smoothing=smoothing, method="mm")["rating"].to_numpy()
    np.testing.assert_allclose(ours, ref, atol=1e-6, rtol=0)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("case", ["plain", "never_wins", "never_loses"])
def test_newton_matches_converged_pyspiel(seed, case):
    # OpenSpiel's default stopping rule (max change of normalised strengths < 1e-10, at most 2000
    # iterations) can stop tens of Elo points early for an agent that never loses; run the
    # reference to convergence and compare with the exact (Newton) maximiser.
    wins, draws = random_counts(seed, 3 + seed % 4, case == "never_wins", case == "never_loses")
    ref = pyspiel_elo(wins, draws, 0.01, max_iterations=300_000, convergence_delta=1e-300)
    ours = elo(wins, draws)["rating"].to_numpy()
    np.testing.assert_allclose(ours, ref, atol=1e-6, rtol=0)


def test_pyspiel_default_stops_early_for_an_undefeated_agent():
    wins, draws = random_counts(0, 10, never_loses=True)
    default = pyspiel_elo(wins, draws)
    converged = pyspiel_elo(wins, draws, max_iterations=300_000, convergence_delta=1e-300)
    ours = elo(wins, draws)["rating"].to_numpy()
    assert np.abs(default - converged).max() > 1.0  # the reference's own truncation error
    np.testing.assert_allclose(ours, converged, atol=1e-6, rtol=0)
    np.testing.assert_allclose(elo(wins, draws, method="mm")["rating"], default, atol=1e-6, rtol=0)
    assert ours.argmax() == 9  # smoothing keeps the undefeated agent finite and on top


def test_match_records_match_pyspiel_records():
    rng = np.random.default_rng(7)
    names = ["ann", "bob", "cyd", "dee"]
    a = rng.integers(0, 4, 300)
    b = (a + rng.integers(1, 4, 300)) % 4
    res = rng.choice([1.0, 0.5, 0.0], size=300, p=[0.45, 0.1, 0.45])
    df = pd.DataFrame({"agent_a": np.array(names)[a], "agent_b": np.array(names)[b], "score_a": res})
    outcome = {1.0: pyspiel.elo.MatchOutcome.FIRST_PLAYER_WIN, 0.0: pyspiel.elo.MatchOutcome.FIRST_PLAYER_LOSS,
               0.5: pyspiel.elo.MatchOutcome.DRAW}
    records = [pyspiel.elo.MatchRecord(x, y, outcome[s]) for x, y, s in zip(df.agent_a, df.agent_b, res)]
    ref = pyspiel.elo.compute_ratings_from_match_records(records)
    ours = elo(df, method="mm")["rating"]
    for name in names:
        assert abs(ours[name] - ref[name]) < 1e-6
    np.testing.assert_allclose(elo(df)["rating"], ours, atol=1e-5)


@given(seed=st.integers(0, 10**6), n=st.integers(2, 12))
def test_newton_is_a_stationary_point(seed, n):
    wins, draws = random_counts(seed, n)
    s = wins + 0.5 * draws + 0.01
    np.fill_diagonal(s, 0)
    theta = bradley_terry_strengths(s)
    p = 1 / (1 + np.exp(theta[None, :] - theta[:, None]))
    grad = s.sum(1) - ((s + s.T) * p).sum(1)
    assert np.abs(grad).max() < 1e-9 * s.sum()
    perm = np.random.default_rng(seed).permutation(n)
    theta_perm = bradley_terry_strengths(s[np.ix_(perm, perm)])
    np.testing.assert_allclose(theta_perm, theta[perm], atol=1e-9)


def test_no_mle_without_smoothing_for_undefeated_agent():
    wins, draws = random_counts(1, 4, never_loses=True)
    with pytest.raises(ValueError, match="smoothing"):
        elo(wins, draws, smoothing=0.0)


def test_win_probabilities():
    p = elo_win_probabilities(pd.DataFrame({"rating": [400.0, 0.0, 0.0]}))
    np.testing.assert_allclose(p[0, 1], 10 / 11)
    np.testing.assert_allclose(p + p.T, 1.0)


# ------------------------------------------------------------------ bootstrap
def sampled_matches(num, seed):
    rng = np.random.default_rng(seed)
    strength = np.array([0.0, 0.5, 1.0, 1.5])
    a = rng.integers(0, 4, num)
    b = (a + rng.integers(1, 4, num)) % 4
    p = 1 / (1 + np.exp(strength[b] - strength[a]))
    return pd.DataFrame({"agent_a": a, "agent_b": b, "score_a": (rng.random(num) < p).astype(float)})


def test_bootstrap_intervals_contain_estimate_and_shrink():
    small = elo(sampled_matches(200, 0), anchor="mean", bootstrap=300, rng=1)
    large = elo(sampled_matches(5000, 0), anchor="mean", bootstrap=300, rng=1)
    for out in (small, large):
        assert (out["lower"] <= out["rating"]).all() and (out["rating"] <= out["upper"]).all()
        assert (out["std"] > 0).all()
    width_small = (small["upper"] - small["lower"]).to_numpy()
    width_large = (large["upper"] - large["lower"]).to_numpy()
    assert (width_large < 0.5 * width_small).all()  # about sqrt(25) = 5 times narrower
    again = elo(sampled_matches(200, 0), anchor="mean", bootstrap=300, rng=1)
    pd.testing.assert_frame_equal(again, small)


def test_bootstrap_needs_integer_counts():
    g = NormalFormGame.from_bimatrix([[0.5, 0.7], [0.3, 0.5]], [[0.5, 0.3], [0.7, 0.5]])
    with pytest.raises(ValueError, match="integer counts"):
        elo(g, bootstrap=10)


# ------------------------------------------------------------------ bad input
def test_bad_input_errors():
    with pytest.raises(ValueError, match="score_a"):
        elo(pd.DataFrame({"agent_a": ["x"], "agent_b": ["y"]}))
    with pytest.raises(ValueError, match="agent_b"):
        online_elo(pd.DataFrame({"agent_a": ["x"], "score_a": [1.0]}))
    with pytest.raises(ValueError, match="NaN"):
        elo(pd.DataFrame({"agent_a": ["x", "y"], "agent_b": ["y", "x"], "score_a": [1.0, np.nan]}))
    with pytest.raises(ValueError, match="negative"):
        elo([[0, -1], [2, 0]])
    with pytest.raises(ValueError, match="NaN"):
        elo([[0, np.nan], [2, 0]])
    with pytest.raises(ValueError, match="symmetric"):
        elo([[0, 1], [2, 0]], draws=[[0, 1], [0, 0]])
    with pytest.raises(ValueError, match="square"):
        elo(np.ones((2, 3)))
    with pytest.raises(ValueError, match="smoothing"):
        elo([[0, 1], [2, 0]], smoothing=-1)
    with pytest.raises(ValueError, match="not 1 \\(win\\)"):
        elo(pd.DataFrame({"agent_a": ["x"], "agent_b": ["y"], "score_a": [2.0]}), scores="outcome")
    with pytest.raises(ValueError, match="k must be"):
        online_elo(pd.DataFrame({"agent_a": ["x"], "agent_b": ["y"], "score_a": [1.0]}), k=0)
    with pytest.raises(TypeError, match="DataFrame"):
        online_elo([[0, 1], [1, 0]])


def test_score_conversion_rules():
    df = pd.DataFrame({"agent_a": ["x", "x", "y"], "agent_b": ["y", "y", "x"],
                       "score_a": [3.0, 1.0, 2.0], "score_b": [1.0, 1.0, 5.0]})
    c = count_matrices(df)  # returns: x won, drew, and won (y scored 2 < 5)
    assert c.wins.tolist() == [[0, 2], [0, 0]]
    assert c.draws.tolist() == [[0, 1], [1, 0]]
    outcomes = pd.DataFrame({"agent_a": ["x", "y"], "agent_b": ["y", "x"], "score_a": [1.0, 0.5],
                             "score_b": [0.0, 0.5]})
    c = count_matrices(outcomes)
    assert c.wins.tolist() == [[0, 1], [0, 0]] and c.draws.tolist() == [[0, 1], [1, 0]]


@pytest.mark.parametrize("empty", [np.zeros((0, 0)), [], [[]]])
def test_an_empty_win_matrix_is_a_clear_error(empty):
    with pytest.raises(ValueError, match=r"^data is empty .* at least two agents"):
        elo(empty)


def test_empty_match_records_are_a_clear_error():
    with pytest.raises(ValueError, match="at least two agents"):
        elo(pd.DataFrame({"agent_a": [], "agent_b": [], "score_a": []}))


@pytest.mark.parametrize("scale", [1e-300, 1e-8, 1.0, 1e8, 1e300])
def test_win_counts_of_any_magnitude_give_the_odds_rating(scale):
    """i beat j three times as often as j beat i: the rating gap is 400 log10(3) whatever the unit of counting."""
    ratings = elo(np.array([[0.0, 3.0], [1.0, 0.0]]) * scale, smoothing=0.0)["rating"].to_numpy()
    assert ratings[0] - ratings[1] == pytest.approx(400 * math.log10(3), abs=1e-9)


@given(st.floats(-300, 300), st.integers(2, 5), st.integers(0, 2**32 - 1))
def test_bradley_terry_is_invariant_to_the_unit_of_the_scores(exponent, n, seed):
    rng = np.random.default_rng(seed)
    scores = rng.integers(1, 20, size=(n, n)).astype(float)
    reference = bradley_terry_strengths(scores)
    scaled = bradley_terry_strengths(scores * 10.0 ** exponent)
    np.testing.assert_allclose(scaled, reference, atol=1e-9)


def test_a_one_agent_score_matrix_is_refused():
    with pytest.raises(ValueError, match="at least 2 x 2"):
        bradley_terry_strengths([[0.0]])


def test_self_matches_are_refused_naming_the_row():
    # issue 23 item 12: a row where an agent plays itself was silently dropped
    df = pd.DataFrame({"agent_a": ["a", "a", "b"], "agent_b": ["b", "a", "a"], "score_a": [1, 1, 0]})
    with pytest.raises(ValueError, match=r"data row 1 is a self-match \('a' against itself\)"):
        elo(df)
    with pytest.raises(ValueError, match=r"data\[1, 1\] = 3: a win matrix's diagonal counts self-matches"):
        elo([[0, 2], [1, 3]])


@pytest.mark.parametrize("bootstrap", [0, 10])
@pytest.mark.parametrize("confidence", [1.5, 0.0, 1.0, float("nan")])
def test_confidence_out_of_range_is_refused_with_or_without_a_bootstrap(confidence, bootstrap):
    with pytest.raises(ValueError, match="confidence must be"):
        elo([[0, 2], [1, 0]], confidence=confidence, bootstrap=bootstrap)


def test_a_ragged_win_matrix_is_refused_in_words():
    with pytest.raises(ValueError, match="data is a ragged win matrix"):
        elo([[0, 1, 2], [1, 0]])


def test_a_two_population_meta_game_is_rated_per_population_and_never_merged_by_a_guess():
    # issue 36 item 2: a 3x3 zero-sum game with distinct row and column strategies came back as 3 merged agents
    u = np.array([[0.0, 1.0, -1.0], [0.5, 0.0, 0.2], [-0.3, 0.4, 0.0]])
    game = NormalFormGame.from_bimatrix(u, -u)
    with pytest.raises(ValueError, match="single_population: this 3x3 two-player game is not symmetric"):
        elo(game)
    two = elo(game, single_population=False, smoothing=0.0)
    assert two.index.names == ["population", "agent"] and len(two) == 6
    # only cross pairs meet: p0's s1 scores (1.5 + 1 + 1.2) / 2 of its 3 matches against p1's strategies
    counts = as_match_counts(game, single_population=False)
    assert counts.wins[1, 3:].sum() == pytest.approx((1.5 + 1.0 + 1.2) / 2) and counts.wins[:3, :3].sum() == 0
    assert two.loc[("p0", "s1"), "rating"] > two.loc[("p0", "s2"), "rating"] > two.loc[("p0", "s0"), "rating"]
    with pytest.raises(ValueError, match=r"single_population=True needs .* \(square\)"):
        elo(NormalFormGame.from_bimatrix(u[:2], -u[:2]), single_population=True)
    symmetric = NormalFormGame.from_bimatrix(u - u.T, u.T - u)   # (symmetric: one population, as documented)
    assert len(elo(symmetric)) == 3

