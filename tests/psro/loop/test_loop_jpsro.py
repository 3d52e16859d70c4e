"""JPSRO: joint-target best responses and CE/CCE gaps against pyspiel.cce_dist; the loop's options."""

import itertools

import numpy as np
import pyspiel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import NormalFormGame
from psro import PSRO
from psro.measures.metrics import joint_gap
from psro.meta.solvers import get_meta_solver, known_names
from psro.meta.targets import meta_targets
from psro.oracles import make_oracle
from psro.oracles.exact import best_response, joint_best_response
from psro.policies import to_openspiel_dict, uniform_policy
from psro.policies.population import Population, Provenance
from psro.sequence_form.game_tree import build_game_tree
from solvers import make_equilibrium

KUHN3 = pyspiel.load_game("kuhn_poker(players=3)")
TREE3 = build_game_tree(KUHN3)


def random_populations(tree, sizes, rng):
    """Populations of random deterministic policies (the uniform one first)."""
    pops = []
    for info, k in zip(tree.infostates, sizes):
        pop = Population(info)
        pop.add(uniform_policy(info), Provenance(0, "initial"))
        for _ in range(k - 1):
            pol = np.zeros((info.num_infostates, info.num_actions))
            for s in range(info.num_infostates):
                pol[s, rng.choice(np.flatnonzero(info.legal_mask[s]))] = 1.0
            pop.add(pol, Provenance(1, "random"))
        pops.append(pop)
    return pops


def tabular(pop, i):
    return pyspiel.TabularPolicy(to_openspiel_dict(pop.policies[i], pop.infostates))


def cce_dist_info(game, pops, profiles, weights, player):
    """pyspiel.cce_dist on the distribution ``weights`` over the joint profiles ``profiles``."""
    mu = [(float(w), pyspiel.to_joint_tabular_policy([tabular(pop, int(i)) for pop, i in zip(pops, row)], True))
          for row, w in zip(profiles, weights) if w > 0]
    return pyspiel.cce_dist(game, mu, player, prob_cut_threshold=0.0, action_value_tolerance=-1.0)


def exact_meta_game(tree, pops):
    from psro.evaluation import SequenceFormEvaluator

    return SequenceFormEvaluator(tree).payoffs([pop.plans for pop in pops])


# ------------------------------------------------------------ joint best responses
@settings(max_examples=8)
@given(seed=st.integers(0, 2**32 - 1), player=st.integers(0, 2))
def test_joint_best_response_value_matches_cce_dist_on_three_player_kuhn(seed, player):
    rng = np.random.default_rng(seed)
    pops = random_populations(TREE3, (3, 3, 3), rng)
    profiles = np.array(list(itertools.product(range(3), repeat=3)))
    weights = rng.dirichlet(np.full(len(profiles), 0.3))
    ours = joint_best_response(TREE3, player, [p.plans for p in pops], profiles, weights)
    reference = cce_dist_info(KUHN3, pops, profiles, weights, player)
    assert ours.value == pytest.approx(reference.best_response_values[0], abs=1e-12)
    # our policy attains that value against the correlated opponents (evaluated independently, in C++)
    mine = pyspiel.TabularPolicy(to_openspiel_dict(ours.policy, TREE3.infostates[player]))
    root = KUHN3.new_initial_state()
    value = sum(w * pyspiel.expected_returns(
        root, [mine if q == player else tabular(pops[q], int(row[q])) for q in range(3)], -1, True)[player]
        for row, w in zip(profiles, weights))
    assert value == pytest.approx(ours.value, abs=1e-12)
    # and the openspiel oracle (cce_dist) agrees through the same interface
    target = meta_targets(make_equilibrium(NormalFormGame(exact_meta_game(TREE3, pops)),
                                           joint=weights.reshape(3, 3, 3), concept="cce", method="test"),
                          "cce", pops, exact_meta_game(TREE3, pops), player)[0]
    assert make_oracle("openspiel", TREE3).respond(player, target).value == pytest.approx(ours.value, abs=1e-12)


@settings(max_examples=10)
@given(seed=st.integers(0, 2**32 - 1))
def test_a_product_joint_gives_the_product_best_response(seed):
    rng = np.random.default_rng(seed)
    pops = random_populations(TREE3, (2, 3, 2), rng)
    marginals = [rng.dirichlet(np.ones(len(p))) for p in pops]
    joint = np.einsum("i,j,k->ijk", *marginals)
    profiles = np.argwhere(joint > 0)
    for p in range(3):
        ours = joint_best_response(TREE3, p, [pop.plans for pop in pops], profiles, joint[tuple(profiles.T)])
        product = best_response(TREE3, p, [w @ pop.plans for w, pop in zip(marginals, pops)])
        assert ours.value == pytest.approx(product.value, abs=1e-12)
        # no population policy does better than the best response (it is optimal among all policies)
        payoffs = exact_meta_game(TREE3, pops)[p]
        others = np.moveaxis(joint, p, 0).sum(axis=0)
        deviations = np.tensordot(np.moveaxis(payoffs, p, 0), others, axes=2)
        assert deviations.max() <= ours.value + 1e-12


def test_joint_best_response_rejects_bad_weights():
    plans = [pop.plans for pop in random_populations(TREE3, (1, 1, 1), np.random.default_rng(0))]
    with pytest.raises(ValueError, match="weights"):
        joint_best_response(TREE3, 0, plans, [[0, 0, 0]], [0.5])
    with pytest.raises(ValueError, match="profiles"):
        joint_best_response(TREE3, 0, plans, [[0, 0]], [1.0])


# ------------------------------------------------------------ gaps against cce_dist
def test_cce_and_ce_gaps_match_a_cce_dist_computation():
    rng = np.random.default_rng(7)
    pops = random_populations(TREE3, (3, 2, 3), rng)
    payoffs = exact_meta_game(TREE3, pops)
    joint = rng.dirichlet(np.full(18, 0.5)).reshape(3, 2, 3)
    game = NormalFormGame(payoffs)
    all_profiles = np.array(list(itertools.product(*map(range, joint.shape))))
    # CCE gap: sum_p max(0, BR value against the others' marginal joint - value of the joint)
    expected_cce = 0.0
    for p in range(3):
        info = cce_dist_info(KUHN3, pops, all_profiles, joint.ravel(), p)
        expected_cce += max(0.0, info.best_response_values[0] - float(np.sum(joint * payoffs[p])))
    eq = make_equilibrium(game, joint=joint, concept="cce", method="test")
    assert joint_gap(TREE3, pops, eq, "cce", payoffs) == pytest.approx(expected_cce, abs=1e-12)
    # CE gap: sum_p sum_i P(i) max(0, BR against the conditional on i - conditional value)
    expected_ce = 0.0
    for p in range(3):
        for i in range(joint.shape[p]):
            rows = all_profiles[:, p] == i
            mass = joint.ravel()[rows].sum()
            conditional = joint.ravel()[rows] / mass
            info = cce_dist_info(KUHN3, pops, all_profiles[rows], conditional, p)
            on_policy = float(conditional @ payoffs[p].ravel()[rows])
            expected_ce += mass * max(0.0, info.best_response_values[0] - on_policy)
    eq = make_equilibrium(game, joint=joint, concept="ce", method="test")
    assert joint_gap(TREE3, pops, eq, "ce", payoffs) == pytest.approx(expected_ce, abs=1e-12)
    assert expected_ce >= expected_cce - 1e-12   # a CE deviation is at least as strong as a CCE one


def test_loop_gap_matches_independent_recomputation_every_iteration():
    for meta_solver, kind in (("mgcce", "cce"), ("mwce", "ce")):
        solver = PSRO(KUHN3, meta_solver=meta_solver, br_selection="largest_gap", progress=False)
        for _ in range(4):
            history = solver.run(iterations=1)
            payoffs = solver.meta_game.mean()
            assert np.abs(payoffs - exact_meta_game(TREE3, solver.populations)).max() <= 1e-14
            assert history["gap"].iloc[-1] == pytest.approx(
                joint_gap(TREE3, solver.populations, solver.meta_strategy, kind, payoffs), abs=1e-12)


# ------------------------------------------------------------ the loop on 3-player Kuhn
def test_cce_jpsro_reaches_1e_3_on_three_player_kuhn():
    history = PSRO("kuhn_poker(players=3)", meta_solver="mgcce", progress=False).run(iterations=30, target_gap=1e-3)
    assert history["gap"].iloc[-1] <= 1e-3
    assert history["gap"].iloc[0] == pytest.approx(history["train_gap"].iloc[0])
    # the uniform profile: its CCE gap is its NashConv, computed by OpenSpiel
    uniform = pyspiel.TabularPolicy({k: v for info in TREE3.infostates
                                     for k, v in to_openspiel_dict(uniform_policy(info), info).items()})
    assert history["gap"].iloc[0] == pytest.approx(pyspiel.nash_conv(KUHN3, uniform), abs=1e-12)


def test_ce_jpsro_targets_one_conditional_per_recommendation():
    solver = PSRO("kuhn_poker(players=3)", meta_solver="mwce", br_selection="all", progress=False)
    solver.run(iterations=3)
    joint = solver.meta_strategy.joint
    for p in range(3):
        targets = meta_targets(solver.meta_strategy, "ce", solver.populations, solver.meta_game.mean(), p)
        recommended = np.flatnonzero(joint.sum(axis=tuple(q for q in range(3) if q != p)) > 1e-12)
        assert [t.recommendation for t in targets] == recommended.tolist()
        assert sum(t.mass for t in targets) == pytest.approx(1.0)
        assert all((t.profiles[:, p] == t.recommendation).all() for t in targets)


def test_br_selection_options():
    sizes = {}
    for selection in ("all", "novel", "largest_gap"):
        solver = PSRO("kuhn_poker(players=3)", meta_solver="mwce", br_selection=selection, progress=False)
        history = solver.run(iterations=4)
        sizes[selection] = history[[f"population_{p}" for p in range(3)]].to_numpy()
        for pop in solver.populations:   # "novel" and "largest_gap" never add a policy twice
            flat = pop.policies.reshape(len(pop), -1)
            if selection != "all":
                assert len(np.unique(flat, axis=0)) == len(pop)
    assert (np.diff(sizes["largest_gap"], axis=0) <= 1).all()
    assert (sizes["all"] >= sizes["novel"]).all() and (sizes["novel"] >= sizes["largest_gap"]).all()


def test_update_players_cycle_and_random():
    history = PSRO("kuhn_poker(players=3)", meta_solver="mgcce", update_players="cycle",
                   progress=False).run(iterations=6)
    pops = history[[f"population_{p}" for p in range(3)]].to_numpy()
    assert pops[-1].tolist() == [3, 3, 3]
    assert (np.diff(pops, axis=0).sum(axis=1) == 1).all()   # one player per iteration, in turn
    assert np.diff(pops, axis=0).argmax(axis=1).tolist() == [0, 1, 2, 0, 1, 2]
    runs = [PSRO("kuhn_poker(players=3)", meta_solver="mgcce", update_players="random", seed=s,
                 progress=False).run(iterations=6)[[f"population_{p}" for p in range(3)]].to_numpy()
            for s in (3, 3, 4)]
    assert np.array_equal(runs[0], runs[1])            # the same seed gives the same run
    assert (np.diff(runs[0], axis=0).sum(axis=1) == 1).all()


def test_separate_eval_meta_solver():
    solver = PSRO("kuhn_poker(players=3)", meta_solver="mgcce", eval_meta_solver="mwcce", progress=False)
    history = solver.run(iterations=4)
    payoffs = solver.meta_game.mean()
    assert history["gap"].iloc[-1] == pytest.approx(
        joint_gap(TREE3, solver.populations, solver.eval_meta_strategy, "cce", payoffs), abs=1e-12)
    assert history["train_gap"].iloc[-1] == pytest.approx(
        joint_gap(TREE3, solver.populations, solver.meta_strategy, "cce", payoffs), abs=1e-12)


def test_every_registered_meta_solver_drives_the_loop():
    for name in known_names():
        meta = get_meta_solver(name)
        spec_two_player = name in ("nash_zero_sum", "lemke_howson", "support_enumeration")
        game = "kuhn_poker" if spec_two_player else "kuhn_poker(players=3)"
        solver = PSRO(game, meta_solver=name, progress=False)
        history = solver.run(iterations=2)
        assert len(history) == 3 and np.isfinite(history["gap"]).all() and (history["gap"] >= -1e-9).all(), name
        assert solver.kind == meta.kind
        for m in solver.meta_strategy.marginals:
            assert m.min() >= 0 and m.sum() == pytest.approx(1.0)


def test_nash_alias_uses_the_n_player_dispatcher_on_general_sum_games():
    solver = PSRO("kuhn_poker(players=3)", meta_solver="nash", progress=False)
    history = solver.run(iterations=3)
    assert solver.meta_strategy.method != "nash_zero_sum"
    assert np.isfinite(history["gap"]).all()


def test_general_sum_games_reach_gap_zero():
    import games.examples.trust_dilemma  # noqa: F401  (registers the custom Python game "trust_dilemma")

    for game in ("trust_dilemma", "trade_comm(num_items=2)"):
        for meta_solver in ("mgcce", "mgce", "nash"):
            solver = PSRO(game, meta_solver=meta_solver, br_selection="novel", progress=False)
            history = solver.run(iterations=20, target_gap=1e-9)
            assert history["gap"].iloc[-1] <= 1e-9, (game, meta_solver)
    # the stag hunt: against the uniform opponent hare (2.5) beats stag (2), so hare joins first
    solver = PSRO("trust_dilemma", meta_solver="mgcce", progress=False)
    solver.run(iterations=1)
    assert [pop.policies[1].argmax(axis=1).tolist() for pop in solver.populations] == [[1], [1]]
