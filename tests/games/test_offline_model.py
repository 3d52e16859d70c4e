"""games.offline_model: the empirical tree, its ensemble, payoff and count intervals, best responses, model games.

Reference values are derived by hand on a four-episode table; on Kuhn poker the model is checked against
OpenSpiel (expected returns and best responses in the model game, true values in the real game).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyspiel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from open_spiel.python import policy as openspiel_policy
from open_spiel.python.algorithms import best_response as openspiel_best_response
from open_spiel.python.algorithms.expected_game_score import policy_value

from games.datasets import collect
from games.offline_model import fit_model


def _hand_table(repeat: int = 1) -> pd.DataFrame:
    """Chance draws card 0 or 1, then player 0 acts (infostate c<card>) and the episode ends.

    Episodes: (0, a0) -> (1, -1) twice, (0, a1) -> (-2, 2), (1, a1) -> (3, -3); action 0 at card 1 is never tried.
    """
    episodes = [(0, 0, "1.0 -1.0"), (0, 0, "1.0 -1.0"), (0, 1, "-2.0 2.0"), (1, 1, "3.0 -3.0")] * repeat
    rows = []
    for e, (card, action, reward) in enumerate(episodes):
        rows.append((e, 0, -1, "", "", "0 1", card, "0.0 0.0", False))
        rows.append((e, 1, 0, f"c{card}", str(card), "0 1", action, reward, True))
    return pd.DataFrame(rows, columns=["episode", "step", "player", "infostate", "history", "legal_actions",
                                       "action", "reward", "done"])


def _hand_width(episodes: int, delta: float = 0.05) -> float:
    """The chance width of the hand table: k = 2 outcomes, one chance history (M = 1), utility range [-3, 3]."""
    eps = math.sqrt(2 * (math.log(2 ** 2 - 2) + math.log(1 / delta)) / episodes)
    return eps * 6 / 2


HALF = {"c0": [0.5, 0.5], "c1": [0.5, 0.5]}


def test_hand_table_counts_and_mean_model():
    model = fit_model(_hand_table(), members=0)
    assert model.num_players == 2 and model.num_actions == 2 and model.num_episodes == 4
    assert (model.min_utility, model.max_utility, model.constant_sum) == (-3.0, 3.0, 0.0)
    assert model.visits(()) == 4 and model.visits("0") == 3 and model.visits("0 0") == 2 and model.visits("1 0") == 0
    assert model.infostates(0) == ["c0", "c1"] and model.infostates(1) == []
    assert model.action_counts(0, "c0").tolist() == [2.0, 1.0] and model.action_counts(0, "c1").tolist() == [0.0, 1.0]
    assert repr(model) == "GameModel(episodes=4, histories=6, players=2, members=0)"  # root, 0, 1, 0 0, 0 1, 1 1
    with pytest.raises(ValueError, match="not in the dataset"):
        model.action_counts(1, "c0")
    # chance 3/4, 1/4; at c1 the untried action pays the mean observed through c1: (3, -3)
    v = model.expected_payoffs([HALF, None])
    np.testing.assert_allclose(v, [0.75 * (0.5 * 1 - 0.5 * 2) + 0.25 * 3, -(0.75 * -0.5 + 0.75)])
    # pessimistic: the actor gets min_utility there, the other the rest of the zero sum
    v = model.expected_payoffs([HALF, None], kind="pessimistic")
    np.testing.assert_allclose(v, [0.75 * -0.5 + 0.25 * (0.5 * -3 + 0.5 * 3), 0.375])
    assert model.uncovered([HALF, None]) == [(1, 0)]
    assert model.uncovered([{"c0": [1, 0], "c1": [0, 1]}, None]) == []


def test_hand_table_count_interval_by_hand():
    model = fit_model(_hand_table(repeat=100), members=0)
    w = _hand_width(400)
    e = w / 3 / 2  # half the L1 radius: the mass the robust bound may move (w = radius * 6 / 2)
    low, high = model.count_interval([HALF, None], delta=0.05, method="additive")
    # player 0: the untried action is worth -3 (low) or 3 (high); the chance width is w either way
    assert low[0] == pytest.approx(0.75 * -0.5 + 0.25 * (0.5 * -3 + 0.5 * 3) - w)
    assert high[0] == pytest.approx(0.75 * -0.5 + 0.25 * (0.5 * 3 + 0.5 * 3) + w)
    # player 1's true payoff there is unknown too: [-3, 3]
    assert low[1] == pytest.approx(0.75 * 0.5 + 0.25 * (0.5 * -3 - 0.5 * 3) - w)
    assert high[1] == pytest.approx(0.75 * 0.5 + 0.25 * (0.5 * 3 - 0.5 * 3) + w)
    # robust: card 0 is worth -0.5 to player 0, card 1 worth 0 (low) or 3 (high); the chance probabilities
    # 3/4, 1/4 move by e towards the worse (better) card
    low, high = model.count_interval([HALF, None], delta=0.05)
    assert low[0] == pytest.approx(-0.5 * (0.75 + e) + 0.0 * (0.25 - e))
    assert high[0] == pytest.approx(-0.5 * (0.75 - e) + 3.0 * (0.25 + e))
    assert low[1] == pytest.approx(0.5 * (0.75 - e) - 3.0 * (0.25 + e))
    assert high[1] == pytest.approx(0.5 * (0.75 + e) + 0.0 * (0.25 - e))
    # a smaller delta widens it, and 4 episodes give an interval clipped to the utility range
    assert model.count_interval([HALF, None], delta=0.001).width[0] > high[0] - low[0]
    small = fit_model(_hand_table(), members=0).count_interval([HALF, None], method="additive")
    assert small.low[0] == -3.0 and _hand_width(4) > 3


def test_hand_table_deviation_interval_by_hand():
    model = fit_model(_hand_table(repeat=100), members=0)
    e = _hand_width(400) / 6
    low, high, deviation = model.deviation_interval(0, None)
    # above: a deviator seeing the card gets 1 with card 0 and 3 with card 1, the mass e moved to card 1
    assert high == pytest.approx(1 * (0.75 - e) + 3 * (0.25 + e))
    # below: the response to the lower bound (action 1 with card 1) at the mass moved to card 0
    assert low == pytest.approx(1 * (0.75 + e) + 3 * (0.25 - e))
    assert deviation.bound == "upper" and deviation.policy["c0"].tolist() == [1.0, 0.0]


def test_hand_table_best_responses():
    model = fit_model(_hand_table(repeat=100), members=0)
    br = model.best_response(0, None)
    # c0: 1 (action 0) beats -2; c1: the untried action's mean 3 ties action 1's 3, ties go to action 0
    assert br.value == pytest.approx(0.75 * 1 + 0.25 * 3)
    assert br.policy["c0"].tolist() == [1.0, 0.0] and br.policy["c1"].tolist() == [1.0, 0.0]
    upper = model.best_response(0, None, bound="upper")
    assert upper.value == pytest.approx(0.75 * 1 + 0.25 * 3 + _hand_width(400))
    lower = model.best_response(0, None, bound="lower")
    assert lower.value == pytest.approx(0.75 * 1 + 0.25 * 3 - _hand_width(400))
    assert lower.policy["c1"].tolist() == [0.0, 1.0]  # the untried action is worth -3 to the lower bound
    pessimistic = model.best_response(0, None, penalty=-3.0)
    assert pessimistic.policy["c1"].tolist() == [0.0, 1.0]


def test_bootstrap_members_are_seeded_resamples():
    table = _hand_table(repeat=5)
    a, b = fit_model(table, members=6, seed=3), fit_model(table, members=6, seed=3)
    ia, ib = a.payoff_interval([HALF, None]), b.payoff_interval([HALF, None])
    np.testing.assert_array_equal(ia.values, ib.values)
    assert ia.values.shape == (7, 2) and len(np.unique(ia.values[:, 0])) > 1  # the members differ
    mean = a.expected_payoffs([HALF, None])
    assert (ia.low <= mean).all() and (mean <= ia.high).all()
    np.testing.assert_allclose(ia.values[-1], mean)  # the last entry is the count-based model
    np.testing.assert_allclose(ia.values[2], a.expected_payoffs([HALF, None], kind=2))
    other = fit_model(table, members=6, seed=4).payoff_interval([HALF, None]).values
    assert not np.array_equal(other, ia.values)


def test_a_saved_table_fits_the_same_model(tmp_path):
    from games.trajectories import save_trajectories

    table = _hand_table(repeat=3)
    path = save_trajectories(table, tmp_path / "hand.csv")
    a, b = fit_model(table, members=2, seed=1), fit_model(str(path), members=2, seed=1)
    np.testing.assert_array_equal(a.payoff_interval([HALF, None]).values, b.payoff_interval([HALF, None]).values)


def test_inconsistent_tables_and_bad_policies_are_refused():
    table = _hand_table()
    table.loc[3, "infostate"] = "c9"  # episode 1 records history "0" with another infostate
    with pytest.raises(ValueError, match="recorded differently"):
        fit_model(table)
    model = fit_model(_hand_table(), members=1)
    with pytest.raises(ValueError, match="one policy per player"):
        model.expected_payoffs([HALF])
    with pytest.raises(ValueError, match="expected 2"):
        model.expected_payoffs([{"c0": [1.0, 0.0, 0.0]}, None])
    with pytest.raises(ValueError, match=r"expected \(2, 2\)"):
        model.expected_payoffs([np.ones((3, 2)), None])
    with pytest.raises(ValueError, match="no probability to a legal action"):
        model.expected_payoffs([{"c0": [0.0, 0.0]}, None])
    with pytest.raises(ValueError, match="member index"):
        model.expected_payoffs([HALF, None], kind=5)
    with pytest.raises(ValueError, match="bound"):
        model.best_response(0, None, bound="best")
    with pytest.raises(ValueError, match="players"):
        fit_model(_hand_table(), game="kuhn_poker(players=3)")
    with pytest.raises(ValueError, match="outside the game's utility range"):
        fit_model(_hand_table(), game="kuhn_poker")  # returns of 3 do not fit Kuhn's [-2, 2]


# ------------------------------------------------------------------ Kuhn poker against OpenSpiel
@pytest.fixture(scope="module")
def kuhn():
    game = pyspiel.load_game("kuhn_poker")
    data = collect(game, pyspiel.UniformRandomPolicy(game), episodes=4000, seed=0)
    return game, fit_model(data, members=3, seed=0, game=game)


def _random_profile(model, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    return [{s: rng.dirichlet(np.ones(model.num_actions)) for s in model.infostates(p)} for p in range(2)]


def _openspiel_policy(game, profile):
    """A profile of dicts as a policy of ``game`` (infostates not in the dicts: uniform)."""
    class Profile(openspiel_policy.Policy):
        def __init__(self):
            super().__init__(game, list(range(game.num_players())))

        def action_probabilities(self, state, player_id=None):
            player = state.current_player()
            legal = state.legal_actions()
            row = profile[player].get(state.information_state_string(player))
            probs = np.ones(len(legal)) if row is None else np.asarray(row, dtype=float)[legal]
            return dict(zip(legal, probs / probs.sum()))
    return Profile()


def test_model_game_expected_returns_equal_the_model(kuhn):
    game, model = kuhn
    profile = _random_profile(model, 1)
    for kind in ("mean", "pessimistic", 1):
        g = model.model_game(kind).to_pyspiel()
        got = policy_value(g.new_initial_state(), [_openspiel_policy(g, profile)] * 2)
        np.testing.assert_allclose(got, model.expected_payoffs(profile, kind=kind), atol=1e-12)
    # every Kuhn history is in 4000 uniform episodes: the model has the true tree and the real infostates
    assert model.num_histories == 1 + 3 + 6 + 12 + 24 + 12  # root, first card, deals, then 1, 2 and 3 bets
    assert sorted(model.infostates(1)) == ["0b", "0p", "1b", "1p", "2b", "2p"]


def test_best_responses_equal_openspiel_in_the_model_game(kuhn):
    game, model = kuhn
    profile = _random_profile(model, 2)
    for kind, bound in (("mean", "mean"), (2, "mean"), ("upper", "upper"), ("lower", "lower")):
        for player in (0, 1):
            g = model.model_game(kind, player=player).to_pyspiel()
            expected = openspiel_best_response.BestResponsePolicy(g, player, _openspiel_policy(g, profile))
            mine = model.best_response(player, profile, bound=bound, kind=kind if bound == "mean" else "mean")
            assert mine.value == pytest.approx(expected.value(g.new_initial_state()), abs=1e-10)


def test_count_interval_holds_the_true_values_and_narrows_with_data(kuhn):
    game, model = kuhn
    small = fit_model(collect(game, pyspiel.UniformRandomPolicy(game), episodes=500, seed=1), game=game)
    for seed in range(4):
        profile = _random_profile(model, 10 + seed)
        true = policy_value(game.new_initial_state(), [_openspiel_policy(game, profile)] * 2)
        low, high = model.count_interval(profile)
        assert (low <= true).all() and (true <= high).all()
        assert (small.count_interval(profile).width > high - low).all()
        additive = model.count_interval(profile, method="additive")
        assert (additive.low <= low).all() and (high <= additive.high).all()  # robust is the tighter
        for player in (0, 1):
            br_true = openspiel_best_response.BestResponsePolicy(game, player, _openspiel_policy(game, profile))
            best = br_true.value(game.new_initial_state())
            assert model.best_response(player, profile, bound="lower").value <= best
            assert best <= model.best_response(player, profile, bound="upper").value
            d_low, d_high, _ = model.deviation_interval(player, profile)
            assert d_low <= best <= d_high
            assert d_high <= model.best_response(player, profile, bound="upper").value


def test_mixture_opponents_average_the_best_response_targets(kuhn):
    game, model = kuhn
    a, b = _random_profile(model, 3), _random_profile(model, 4)
    mixed = model.best_response(0, [(0.25, a), (0.75, b)])
    # the response to the mixture is worth, against each part, what the mixture says
    va = model.expected_payoffs([mixed.policy, a[1]])[0]
    vb = model.expected_payoffs([mixed.policy, b[1]])[0]
    assert mixed.value == pytest.approx(0.25 * va + 0.75 * vb)
    # and no worse than responding to either part alone
    for p in (a, b):
        alone = model.best_response(0, p).policy
        assert 0.25 * model.expected_payoffs([alone, a[1]])[0] + 0.75 * model.expected_payoffs([alone, b[1]])[0] \
            <= mixed.value + 1e-12


# ------------------------------------------------------------------ properties
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), episodes=st.integers(5, 120))
def test_intervals_and_responses_are_ordered_on_any_dataset(seed, episodes):
    game = pyspiel.load_game("kuhn_poker")
    rng = np.random.default_rng(seed)
    bias = rng.uniform(0.05, 0.95, size=2)
    behaviour = [lambda state, player, b=b: {0: b, 1: 1 - b} for b in bias]
    model = fit_model(collect(game, behaviour, episodes=episodes, seed=seed), members=2, seed=seed, game=game)
    profile = _random_profile(model, seed)
    mean = model.expected_payoffs(profile)
    low, high = model.count_interval(profile)
    assert (low <= mean + 1e-12).all() and (mean <= high + 1e-12).all()
    assert (model.min_utility <= low).all() and (high <= model.max_utility).all()
    band = model.payoff_interval(profile)
    assert (band.low <= mean + 1e-12).all() and (mean <= band.high + 1e-12).all()
    for player in (0, 1):
        values = [model.best_response(player, profile, bound=b).value for b in ("lower", "mean", "upper")]
        assert values[0] <= values[1] + 1e-12 <= values[2] + 2e-12
        assert values[1] >= mean[player] - 1e-12  # a best response is no worse than the profile's own policy
        d_low, d_high, _ = model.deviation_interval(player, profile)
        assert d_low <= values[1] + 1e-12 and values[1] <= d_high + 1e-12
        robust = model.count_interval(profile)
        assert robust.low[player] <= d_high + 1e-12 and robust.low[player] <= mean[player] + 1e-12


def test_members_past_the_memory_limit_are_refused_before_allocating(monkeypatch):
    # issue 23 item 5: offline members: 10**7 grew to 8.7 GB and died with SIGSEGV
    import tracemalloc

    game = pyspiel.load_game("kuhn_poker")
    data = collect(game, pyspiel.UniformRandomPolicy(game), episodes=100, seed=0)
    monkeypatch.setenv("PSRO_MAX_MEMORY", "1G")
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"members=10000000 bootstrap members of a model of \d+ nodes needs about "
                                             r"[0-9.]+ GiB, above the memory limit of 1 GiB"):
            fit_model(data, members=10**7)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20
