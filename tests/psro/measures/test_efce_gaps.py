"""EFCE / EFCCE gaps of correlation devices: hand-derived games, pyspiel's ce_dist / cce_dist, CE / CCE gaps."""

import dataclasses

import numpy as np
import pyspiel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import TERMINAL, SequentialGame, catalog
from psro.measures.efce_gaps import extensive_form_gaps, meta_strategy_extensive_form_gaps
from psro.policies import realization_plans
from psro.sequence_form.game_tree import build_game_tree
from psro.sequence_form.matrix_game import resolve_game
from solvers import cce_gap, ce_gap


class HiddenGuess(SequentialGame):
    """Player 1 hides L/R; player 0 guesses it (1 if right). Player 1 gets nothing."""

    name = "test_efce_hidden_guess"
    num_distinct_actions = 2
    max_game_length = 2
    min_utility, max_utility = 0.0, 1.0

    def initial_state(self):
        return ()

    def current_player(self, state):
        return TERMINAL if len(state) == 2 else 1 - len(state)

    def legal_actions(self, state):
        return [0, 1]

    def apply_action(self, state, action):
        return state + (action,)

    def returns(self, state):
        return [float(state[0] == state[1]), 0.0]

    def information_state(self, state, player):
        return f"p{player}"


class TwoStageGuess(HiddenGuess):
    """Player 1 hides L/R; player 0 says x/y (no payoff), then guesses L/R, remembering x/y."""

    name = "test_efce_two_stage_guess"
    max_game_length = 3

    def current_player(self, state):
        return TERMINAL if len(state) == 3 else 1 if not state else 0

    def returns(self, state):
        return [float(state[0] == state[2]), 0.0]

    def information_state(self, state, player):
        return f"p{player}" + ("" if player == 1 or len(state) < 2 else f" said {state[1]}")


def pure(info, choices):
    """A deterministic policy array from {infostate key: action}."""
    policy = np.zeros((info.num_infostates, info.num_actions))
    for key, action in choices.items():
        policy[info.index(key), action] = 1.0
    return policy


def plans_of(tree, policies):
    return [realization_plans(np.stack(pols), info) for pols, info in zip(policies, tree.infostates)]


def device(tree, policies, profiles, weights):
    """The same device as pyspiel's list of (probability, joint TabularPolicy)."""
    out = []
    for k, w in zip(profiles, weights):
        table = {}
        for p, info in enumerate(tree.infostates):
            pol = policies[p][k[p]]
            for s, key in enumerate(info.keys):
                table[key] = [(int(a), float(pol[s, a])) for a in np.flatnonzero(info.legal_mask[s])]
        out.append((float(w), pyspiel.TabularPolicy(table)))
    return out


def test_seeing_the_recommendation_separates_efce_from_efcce():
    # The device sends (guess r, hide L) or (guess l, hide R), each 1/2: following always loses.
    # Seeing the recommendation reveals the hidden move (EFCE gain 1); deciding blind gains 1/2.
    tree = build_game_tree(HiddenGuess().to_pyspiel())
    p0, p1 = tree.infostates
    policies = [[pure(p0, {"p0": 0}), pure(p0, {"p0": 1})], [pure(p1, {"p1": 0}), pure(p1, {"p1": 1})]]
    profiles, weights = [[1, 0], [0, 1]], [0.5, 0.5]
    g = extensive_form_gaps(tree, plans_of(tree, policies), profiles, weights)
    assert (g.efce, g.efcce, g.nfcce) == pytest.approx((1.0, 0.5, 0.5), abs=1e-12)
    assert g.values == pytest.approx((0.0, 0.0))
    mu = device(tree, policies, profiles, weights)
    assert pyspiel.ce_dist(tree.game, mu).dist_value == pytest.approx(1.0)
    assert pyspiel.cce_dist(tree.game, mu).dist_value == pytest.approx(0.5)


def test_deciding_at_a_later_infostate_separates_efcce_from_nfcce():
    # The device: (hide L; say x, then guess R) or (hide R; say y, then guess L). Following loses.
    # At the root the hidden move is a coin flip (NFCCE gain 1/2); after following "say x" the
    # player knows it was L and deviates there (EFCCE and EFCE gain 1).
    tree = build_game_tree(TwoStageGuess().to_pyspiel())
    p0, p1 = tree.infostates
    first = {"p0": 0, "p0 said 0": 1, "p0 said 1": 1}
    second = {"p0": 1, "p0 said 0": 0, "p0 said 1": 0}
    policies = [[pure(p0, first), pure(p0, second)], [pure(p1, {"p1": 0}), pure(p1, {"p1": 1})]]
    profiles, weights = [[0, 0], [1, 1]], [0.5, 0.5]
    g = extensive_form_gaps(tree, plans_of(tree, policies), profiles, weights)
    assert (g.efce, g.efcce, g.nfcce) == pytest.approx((1.0, 1.0, 0.5), abs=1e-12)
    mu = device(tree, policies, profiles, weights)
    assert pyspiel.cce_dist(tree.game, mu).dist_value == pytest.approx(0.5)
    assert pyspiel.ce_dist(tree.game, mu).dist_value == pytest.approx(1.0)


@pytest.mark.parametrize("name", ["chicken", "bach_or_stravinsky", "shapley_game"])
def test_one_infostate_per_player_gives_the_normal_form_ce_and_cce_gaps(name):
    game = catalog.get(name)
    tree = build_game_tree(resolve_game(game)[0])
    joint = np.random.default_rng(len(name)).dirichlet(np.ones(game.payoffs[0].size)).reshape(game.shape)
    # pure policies: population q holds one policy per action, in action order
    pops = [[np.eye(info.num_actions)[[a]] for a in range(info.num_actions)] for info in tree.infostates]
    profiles = np.argwhere(joint > 0)
    g = extensive_form_gaps(tree, plans_of(tree, pops), profiles, joint[tuple(profiles.T)])
    assert g.efce == pytest.approx(ce_gap(game, joint), abs=1e-12)
    assert g.efcce == pytest.approx(cce_gap(game, joint), abs=1e-12)
    assert g.nfcce == pytest.approx(cce_gap(game, joint), abs=1e-12)


def random_kuhn_device(seed, num_policies=3, support=5):
    tree = KUHN
    rng = np.random.default_rng(seed)
    policies = []
    for info in tree.infostates:
        pols = []
        for _ in range(num_policies):
            pol = np.zeros((info.num_infostates, info.num_actions))
            pol[np.arange(info.num_infostates), rng.integers(0, info.num_actions, info.num_infostates)] = 1.0
            pols.append(pol)
        policies.append(pols)
    profiles = rng.integers(0, num_policies, (support, tree.num_players))
    weights = rng.dirichlet(np.ones(support))
    return tree, policies, profiles, weights


KUHN = build_game_tree(pyspiel.load_game("kuhn_poker"))


@pytest.mark.parametrize("seed", range(4))
def test_kuhn_devices_against_pyspiel(seed):
    tree, policies, profiles, weights = random_kuhn_device(seed)
    g = extensive_form_gaps(tree, plans_of(tree, policies), profiles, weights)
    mu = device(tree, policies, profiles, weights)
    nfcce = pyspiel.cce_dist(tree.game, mu).dist_value
    nfce = pyspiel.ce_dist(tree.game, mu).dist_value
    assert g.nfcce == pytest.approx(nfcce, abs=1e-10)
    assert nfcce - 1e-10 <= g.efcce <= g.efce + 1e-10 <= nfce + 2e-10


def test_a_single_joint_profile_has_its_nash_conv_as_every_gap():
    from psro.measures.metrics import nash_conv_of_plans

    tree, policies, profiles, _ = random_kuhn_device(7, support=1)
    plans = plans_of(tree, policies)
    g = extensive_form_gaps(tree, plans, profiles, [1.0])
    expected = nash_conv_of_plans(tree, [plans[p][profiles[0, p]] for p in range(2)])
    assert (g.efce, g.efcce, g.nfcce) == pytest.approx((expected,) * 3, abs=1e-12)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10**6), player=st.integers(0, 1), offset=st.floats(-100, 100),
       scale=st.sampled_from([1e-3, 0.5, 7.0, 1e3]))
def test_offset_and_scale_of_one_players_payoffs(seed, player, offset, scale):
    tree, policies, profiles, weights = random_kuhn_device(seed)
    plans = plans_of(tree, policies)
    base = extensive_form_gaps(tree, plans, profiles, weights)
    returns = tree.terminal_returns.copy()
    returns[:, player] = scale * returns[:, player] + offset
    moved = extensive_form_gaps(dataclasses.replace(tree, terminal_returns=returns), plans, profiles, weights)
    for field in ("efce_per_player", "efcce_per_player", "nfcce_per_player"):
        b, m = np.array(getattr(base, field)), np.array(getattr(moved, field))
        b[player] *= scale
        np.testing.assert_allclose(m, b, atol=1e-9 * max(1.0, scale, abs(offset)))
    assert moved.efcce <= moved.efce + 1e-9 * scale and moved.nfcce <= moved.efcce + 1e-9 * scale


def test_meta_strategy_form_and_bad_input():
    from psro.policies import uniform_policy
    from psro.policies.population import Population, Provenance

    pops = [Population(i) for i in KUHN.infostates]
    for p in pops:
        p.add(uniform_policy(p.infostates), Provenance(0, "initial"))
        p.add(np.eye(2)[np.zeros(p.infostates.num_infostates, int)], Provenance(1, "test"))
    joint = np.array([[0.5, 0.0], [0.0, 0.5]])
    g = meta_strategy_extensive_form_gaps(KUHN, pops, joint)
    direct = extensive_form_gaps(KUHN, [p.plans for p in pops], [[0, 0], [1, 1]], [0.5, 0.5])
    assert g == direct and g.nfcce <= g.efcce <= g.efce
    with pytest.raises(ValueError, match="shape"):
        meta_strategy_extensive_form_gaps(KUHN, pops, np.ones((3, 2)) / 6)
    with pytest.raises(ValueError, match="probability vector"):
        extensive_form_gaps(KUHN, [p.plans for p in pops], [[0, 0]], [0.5])
    with pytest.raises(ValueError, match="index player 1"):
        extensive_form_gaps(KUHN, [p.plans for p in pops], [[0, 2]], [1.0])


def test_a_mixed_policy_equals_its_determinization():
    # Recommendations from a mixed policy are drawn per infostate: the same device as the product
    # distribution over the deterministic policies it mixes (OpenSpiel's DeterminizeCorrDev).
    import itertools

    tree, policies, profiles, weights = random_kuhn_device(3, support=3)
    info0 = tree.infostates[0]
    mixed = np.random.default_rng(0).dirichlet(np.ones(2), info0.num_infostates)
    policies[0][0] = mixed
    profiles[:, 0] = [0, 0, 1]
    g = extensive_form_gaps(tree, plans_of(tree, policies), profiles, weights)
    det_pols, det_probs = [], []
    for choice in itertools.product(range(2), repeat=info0.num_infostates):
        det_pols.append(np.eye(2)[list(choice)])
        det_probs.append(np.prod(mixed[np.arange(info0.num_infostates), list(choice)]))
    pols = [policies[0][1]] + det_pols   # 0: the other policy; 1..: the determinized mixed one
    new_profiles, new_weights = [], []
    for k, w in zip(profiles, weights):
        if k[0] == 0:
            for d, pd in enumerate(det_probs):
                new_profiles.append([d + 1, k[1]])
                new_weights.append(w * pd)
        else:
            new_profiles.append([0, k[1]])
            new_weights.append(w)
    expanded = extensive_form_gaps(tree, plans_of(tree, [pols, policies[1]]), new_profiles, new_weights)
    for field in ("efce", "efcce", "nfcce"):
        assert getattr(expanded, field) == pytest.approx(getattr(g, field), abs=1e-12)


def test_jpsro_meta_strategies_on_three_player_kuhn():
    from psro import PSRO

    # CCE-JPSRO's gap is the NFCCE gap; CE-JPSRO's (one best response per recommended policy) bounds the EFCE gap.
    for meta_solver, kind in (("mgcce", "cce"), ("mgce", "ce")):
        solver = PSRO("kuhn_poker(players=3)", meta_solver=meta_solver, progress=False)
        gap = float(solver.run(iterations=2)["gap"].iloc[-1])
        g = meta_strategy_extensive_form_gaps(solver.tree, solver.populations, solver.eval_meta_strategy)
        assert solver.kind == kind and g.nfcce <= g.efcce + 1e-12 <= g.efce + 2e-12
        if kind == "cce":
            assert g.nfcce == pytest.approx(gap, abs=1e-10)
        else:
            assert g.efce <= gap + 1e-10
