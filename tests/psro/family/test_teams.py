"""Team games: the team view, team exploitability (hand-derived values, the tree enumeration against the normal
form) and the decentralised team learner ``team_pg``."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest

from games import catalog
from psro.family.teams import team_exploitability, team_gains
from psro.oracles.base import Target
from psro.oracles.team_pg import TeamPolicyGradient, member_marginals
from psro.policies.population import Population, Provenance
from psro.sequence_form.game_tree import build_game_tree
from psro.sequence_form.matrix_game import to_openspiel_game
from psro.sequence_form.team_view import check_team_game, team_payoffs
from solvers import nash_conv

FXP, TEAMS = catalog.fxp_example(), catalog.fxp_teams(3)
ALL0, ALL1 = np.eye(8)[0], np.eye(8)[7]


def test_team_view_orders_joint_actions_in_c_order_over_the_members():
    g = catalog.fxp_example(team_size=2)
    view = team_payoffs(g, [[0, 1], [2, 3]])
    assert view.shape == (4, 4) and view.strategy_names[0] == ("0,0", "0,1", "1,0", "1,1")
    for a in np.ndindex(2, 2, 2, 2):
        assert view.payoffs[0][2 * a[0] + a[1], 2 * a[2] + a[3]] == g.payoffs[0][a]
        assert view.payoffs[1][2 * a[0] + a[1], 2 * a[2] + a[3]] == g.payoffs[2][a]
    # teams listed out of order: the view follows the listed member order
    swapped = team_payoffs(g, [[2, 3], [1, 0]])
    assert swapped.payoffs[0][1, 2] == g.payoffs[2][0, 1, 0, 1]   # team (2, 3) plays (0, 1); team (1, 0) (1, 0)


def test_teams_must_cover_the_players_and_share_payoffs():
    with pytest.raises(ValueError, match="teams: must cover"):
        check_team_game(FXP, [[0, 1, 2], [3, 4]])
    with pytest.raises(ValueError, match="player 3 does not share the payoffs of player 0"):
        check_team_game(FXP, [[0, 1, 3], [2, 4, 5]])
    with pytest.raises(TypeError, match="NormalFormGame"):
        check_team_game("kuhn_poker", [[0], [1]])


def test_team_exploitability_of_hand_derived_profiles():
    assert team_exploitability(FXP, [ALL1, ALL1], TEAMS) == pytest.approx(0.1, abs=1e-12)   # both teams gain C
    assert team_exploitability(FXP, [ALL0, ALL0], TEAMS) == pytest.approx(0.0, abs=1e-12)
    assert team_gains(FXP, [ALL0, ALL1], TEAMS).tolist() == pytest.approx([0.0, 0.1], abs=1e-12)
    # per-player vectors give the same as the team's product distribution
    ones = [np.array([0.0, 1.0])] * 6
    assert team_exploitability(FXP, ones, TEAMS) == pytest.approx(0.1, abs=1e-12)


def test_a_correlated_team_strategy_differs_from_its_members_playing_independently():
    # team A: all-0 or all-1 with probability 1/2 each (correlated), team B all-1. A gets C/2 and could get C: gain
    # 0.05. B gets -C/2; against A's mixture B's all-0 gets +C/2 (the best: other b lose), so B's gain is C: 0.1.
    mixed = 0.5 * (ALL0 + ALL1)
    assert team_gains(FXP, [mixed, ALL1], TEAMS).tolist() == pytest.approx([0.05, 0.1], abs=1e-12)
    independent = [np.array([0.5, 0.5])] * 3 + [np.array([0.0, 1.0])] * 3
    assert team_exploitability(FXP, independent, TEAMS) != pytest.approx(0.075, abs=1e-3)


@pytest.mark.parametrize("seed", range(4))
def test_teams_of_one_player_give_nash_conv_over_the_number_of_players(seed):
    rng = np.random.default_rng(seed)
    game = catalog.random_game((3, 2, 4), rng=rng)
    profile = [rng.dirichlet(np.ones(k)) for k in game.shape]
    assert team_exploitability(game, profile, [[0], [1], [2]]) == pytest.approx(nash_conv(game, profile) / 3,
                                                                                  abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_the_tree_enumeration_gives_the_normal_form_value(seed):
    rng = np.random.default_rng(seed)
    game = catalog.fxp_example(team_size=2, C=0.2)
    tree = build_game_tree(to_openspiel_game(game))
    profile = [rng.dirichlet(np.ones(2)) for _ in range(4)]
    tabular = [p[None, :] for p in profile]
    expected = team_exploitability(game, profile, [[0, 1], [2, 3]])
    assert expected > 0.01
    assert team_exploitability(tree, tabular, [[0, 1], [2, 3]]) == pytest.approx(expected, abs=1e-12)
    assert team_exploitability(tree.game, tabular, [[1, 0], [3, 2]]) == pytest.approx(expected, abs=1e-12)


def test_the_tree_enumeration_refuses_teams_without_a_shared_return_and_too_many_deviations():
    tree = build_game_tree(to_openspiel_game(catalog.fxp_example(team_size=2)))
    uniform = [np.full((1, 2), 0.5)] * 4
    with pytest.raises(ValueError, match="do not share their returns"):
        team_exploitability(tree, uniform, [[0, 2], [1, 3]])
    with pytest.raises(ValueError, match="max_deviations"):
        team_exploitability(tree, uniform, [[0, 1], [2, 3]], max_deviations=3)


def test_a_profile_of_the_wrong_shape_is_refused():
    with pytest.raises(ValueError, match="profile: give one mixed strategy per player"):
        team_exploitability(FXP, [ALL0], TEAMS)
    with pytest.raises(ValueError, match="probability vector"):
        team_exploitability(FXP, [ALL0 * 2, ALL1], TEAMS)


def _team_tree_and_populations(opponent: np.ndarray):
    tree = build_game_tree(to_openspiel_game(team_payoffs(FXP, TEAMS)))
    pops = [Population(i) for i in tree.infostates]
    for pop in pops:
        pop.add(opponent[None, :], Provenance(0, "initial"))
    return tree, pops


def test_team_pg_from_uniform_climbs_to_all_one_against_uniform_and_all_one_opponents():
    # against uniform opponents, or all-1 ones, a member's 1 is better than its 0 while its teammates are uniform
    for opponent in (np.full(8, 1 / 8), ALL1):
        tree, pops = _team_tree_and_populations(opponent)
        oracle = TeamPolicyGradient(tree, members=[[2, 2, 2], [2, 2, 2]])
        target = Target(0, pops, mixtures=(np.ones(1),) * 2, initial_policy=np.full((1, 8), 1 / 8))
        br = oracle.respond(0, target)
        assert br.policy[0, 7] > 0.99
        # the value is the team's exact payoff of the learned product policy
        view = team_payoffs(FXP, TEAMS)
        assert br.value == pytest.approx(float(br.policy[0] @ view.payoffs[0] @ opponent), abs=1e-12)


def test_team_pg_fresh_starts_are_seeded_and_reach_both_basins_against_all_one():
    tree, pops = _team_tree_and_populations(ALL1)
    oracle = TeamPolicyGradient(tree, seed=0, members=[[2, 2, 2], [2, 2, 2]])
    target = Target(0, pops, mixtures=(np.ones(1),) * 2)
    policies = [oracle.respond(0, target, key=(1, k)).policy for k in range(16)]
    again = TeamPolicyGradient(tree, seed=0, members=[[2, 2, 2], [2, 2, 2]]).respond(0, target, key=(1, 3))
    assert np.array_equal(again.policy, policies[3])
    ends = {int(p.argmax()) for p in policies}
    assert {0, 7} <= ends   # decentralised learners: some starts reach the all-0 optimum (C), others stay at all-1
    assert all(p.max() > 0.99 for p in policies if int(p.argmax()) in (0, 7))


def test_member_marginals_of_a_product_rebuild_it():
    rng = np.random.default_rng(1)
    members = [rng.dirichlet(np.ones(k)) for k in (2, 3, 2)]
    joint = np.einsum("a,b,c->abc", *members).ravel()
    for got, want in zip(member_marginals(joint, (2, 3, 2)), members):
        assert got == pytest.approx(want, abs=1e-12)


def test_team_pg_refuses_what_it_cannot_learn():
    tree, pops = _team_tree_and_populations(ALL1)
    with pytest.raises(ValueError, match="members: give per player the action counts"):
        TeamPolicyGradient(tree, members=[[2, 2], [2, 2, 2]])
    with pytest.raises(ValueError, match="one infostate each"):
        TeamPolicyGradient(build_game_tree(pyspiel.load_game("kuhn_poker")))
    joint = Target(0, pops, profiles=np.zeros((1, 2), dtype=int), weights=np.ones(1))
    with pytest.raises(ValueError, match="product targets"):
        TeamPolicyGradient(tree, members=[[2, 2, 2], [2, 2, 2]]).respond(0, joint)


def test_team_pg_of_one_learner_per_player_finds_a_dominant_action():
    game = catalog.prisoners_dilemma()   # defect (action 1) dominates
    tree = build_game_tree(to_openspiel_game(game))
    pops = [Population(i) for i in tree.infostates]
    for pop in pops:
        pop.add(np.array([[0.5, 0.5]]), Provenance(0, "initial"))
    br = TeamPolicyGradient(tree, seed=2).respond(1, Target(1, pops, mixtures=(np.ones(1),) * 2), key=(0, 0))
    assert br.policy[0, 1] > 0.99
