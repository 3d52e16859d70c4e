"""psro.oracles.exact: pyspiel's cce_dist behind the joint-target oracle (issue 15, item 12)."""

import numpy as np
import pyspiel
import pytest

from psro import PSRO
from psro.oracles.exact import joint_best_response
from psro.oracles.openspiel import OpenSpielBestResponse
from psro.policies import uniform_policy
from psro.policies.population import Population, Provenance
from psro.sequence_form.game_tree import build_game_tree


def _deterministic(info, action_of_row):
    policy = np.zeros((info.num_infostates, info.num_actions))
    for s in range(info.num_infostates):
        legal = np.flatnonzero(info.legal_mask[s])
        policy[s, legal[action_of_row(s) % legal.size]] = 1.0
    return policy


def test_joint_response_to_a_target_that_makes_infostates_unreachable():
    """Player 1 always bets or checks in a fixed way, so some of player 0's infostates are never reached;
    cce_dist leaves them out of its policy, and the oracle must still answer (lowest legal action there)."""
    tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    pops = [Population(info) for info in tree.infostates]
    for p, pop in enumerate(pops):
        pop.add(uniform_policy(pop.infostates), Provenance(0, "initial"))
        pop.add(_deterministic(pop.infostates, lambda s: 1), Provenance(1, "hand"))   # always the second action
    profiles, weights = np.array([[0, 1]]), np.array([1.0])
    plans = [pop.plans for pop in pops]
    for player in (0, 1):
        prof = profiles.copy()
        prof[:, player] = 0
        ours = OpenSpielBestResponse(tree).joint(player, pops, prof, weights)
        exact = joint_best_response(tree, player, plans, prof, weights)
        assert ours.value == pytest.approx(exact.value, abs=1e-12)
        np.testing.assert_array_equal(ours.policy, exact.policy)
        assert set(np.unique(ours.policy.sum(axis=1))) == {1.0}


@pytest.mark.parametrize("game, meta_solver, iterations", [
    ("kuhn_poker", "mgcce", 4),
    ("kuhn_poker(players=3)", "mgcce", 3),
    ("sheriff", "mgcce", 2),
    ("sheriff", "mwcce", 2),
    ("sheriff", "mgce", 2),
    ("sheriff", "mwce", 2),
])
@pytest.mark.slow
def test_jpsro_with_the_openspiel_oracle_matches_the_sequence_form_oracle(game, meta_solver, iterations):
    runs = {oracle: PSRO(game, meta_solver=meta_solver, oracle=oracle, progress=False)
            for oracle in ("exact", "openspiel")}
    histories = {oracle: solver.run(iterations=iterations) for oracle, solver in runs.items()}
    np.testing.assert_allclose(histories["openspiel"]["gap"], histories["exact"]["gap"], rtol=1e-9, atol=1e-12)
    for a, b in zip(runs["openspiel"].populations, runs["exact"].populations):
        np.testing.assert_array_equal(a.policies, b.policies)
    # Kuhn poker's uniform profile: best responses earn 1/2 (player 0) and 5/12 (player 1); the game is zero-sum,
    # so the on-policy values cancel and the CCE gap is 1/2 + 5/12 = 11/12 (OpenSpiel's NashConv 0.916667)
    if game == "kuhn_poker":
        assert histories["openspiel"]["gap"].iloc[0] == pytest.approx(11 / 12, abs=1e-12)
