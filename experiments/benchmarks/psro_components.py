"""The phases of one PSRO iteration on Leduc poker, ours against OpenSpiel's, on the same inputs.

For a population of ``--policies`` random tabular policies per player and a
random meta-strategy, it times (median of ``--repeats`` runs, BLAS pinned):

* aggregate: the behaviour policy of a mixture (ours: realization plans and one
  matrix product; OpenSpiel: ``policy_aggregator.PolicyAggregator``);
* best response: ours (sequence form, numpy) against ``pyspiel.TabularBestResponse``
  (constructed once, then ``set_policy`` + actions + value, as psro_v2's oracle reuses it);
* evaluation: the payoffs of one new row of the meta-game (ours: sequence form;
  OpenSpiel: ``pyspiel.expected_returns`` per profile);
* meta-solve: the zero-sum Nash LP of a meta-game grown by one strategy per
  player (ours warm-started, ours cold, OpenSpiel's ``lp_solver``).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python -m experiments.benchmarks.psro_components

``--quick`` times each phase once, for 5 policies per player and a 21x21 meta-game.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from experiments import harness

# scripts next to this one (e.g. solvers.py) must not shadow the library's packages


def median_time(fn, repeats: int) -> float:
    return harness.median_time(fn, repeats, warmup=True)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="leduc_poker")
    parser.add_argument("--policies", type=int, default=50)
    parser.add_argument("--meta-size", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="5 policies, a 21x21 meta-game, one timed run")
    args = parser.parse_args()
    if args.quick:
        args.policies, args.meta_size, args.repeats = 5, 20, 1

    import cvxpy as cp
    import pyspiel
    from open_spiel.python import policy as os_policy
    from open_spiel.python.algorithms import lp_solver
    from open_spiel.python.algorithms.policy_aggregator import PolicyAggregator

    from psro.evaluation import SequenceFormEvaluator
    from psro.meta.warm_start_lp import WarmStartZeroSumLP
    from psro.oracles.exact import best_response
    from psro.policies import aggregate, realization_plans, to_openspiel_dict
    from psro.sequence_form.game_tree import build_game_tree
    from solvers.nash.zero_sum import solve_zero_sum
    if "ECOS" not in cp.installed_solvers():  # OpenSpiel's default LP backend; HiGHS is what is installed
        lp_solver.LinearProgram.solve.__defaults__ = (cp.HIGHS, {})

    rng = np.random.default_rng(0)
    game = pyspiel.load_game(args.game)
    tree = build_game_tree(game)
    k = args.policies
    pols = []
    for info in tree.infostates:
        r = rng.random((k, info.num_infostates, info.num_actions)) * info.legal_mask
        pols.append(r / r.sum(-1, keepdims=True))
    weights = [rng.dirichlet(np.ones(k)) for _ in range(2)]
    plans = [realization_plans(p, i) for p, i in zip(pols, tree.infostates)]

    rows = []

    # aggregate (player 0's mixture)
    os_pols = []
    for p, info in enumerate(tree.infostates):
        per_player = []
        for i in range(k):
            tab = os_policy.TabularPolicy(game)
            for s, key in enumerate(info.keys):
                tab.action_probability_array[tab.state_lookup[key]] = pols[p][i, s]
            per_player.append(tab)
        os_pols.append(per_player)
    ours = median_time(lambda: aggregate(realization_plans(pols[0], tree.infostates[0]), weights[0],
                                         tree.infostates[0]), args.repeats)
    theirs = median_time(lambda: PolicyAggregator(game).aggregate([0], os_pols, [list(w) for w in weights]),
                         max(1, args.repeats // 2))
    rows.append(("aggregate (incl. realization plans)", ours, "policy_aggregator", theirs))

    # best response of player 0 to player 1's aggregate
    agg1 = aggregate(plans[1], weights[1], tree.infostates[1])
    agg1_plan = weights[1] @ plans[1]
    table = to_openspiel_dict(agg1, tree.infostates[1])
    responder = pyspiel.TabularBestResponse(game, 0, table)
    root = game.new_initial_state().history_str()

    def openspiel_br():
        responder.set_policy(to_openspiel_dict(agg1, tree.infostates[1]))
        responder.get_best_response_actions()
        return responder.value(root)

    ours = median_time(lambda: best_response(tree, 0, [None, agg1_plan]), args.repeats)
    theirs = median_time(openspiel_br, args.repeats)
    assert abs(best_response(tree, 0, [None, agg1_plan]).value - openspiel_br()) < 1e-9
    rows.append(("best response", ours, "TabularBestResponse", theirs))

    # evaluation of one new row: 1 x k profiles
    evaluator = SequenceFormEvaluator(tree)
    tabs = [[pyspiel.TabularPolicy(to_openspiel_dict(pols[p][i], tree.infostates[p])) for i in range(k)]
            for p in range(2)]
    state = game.new_initial_state()
    ours = median_time(lambda: evaluator.payoffs([plans[0][:1], plans[1]]), args.repeats)
    theirs = median_time(lambda: [pyspiel.expected_returns(state, [tabs[0][0], tabs[1][j]], -1, True)
                                  for j in range(k)], max(1, args.repeats // 2))
    rows.append((f"evaluation (1 x {k} profiles)", ours, "expected_returns", theirs))

    # meta-solve: a meta-game grown by one strategy per player
    n = args.meta_size
    a = rng.normal(size=(n + 1, n + 1))
    lp = WarmStartZeroSumLP()

    def warm():
        lp.solve(a[:n, :n])
        start = time.perf_counter()
        lp.solve(a)
        return time.perf_counter() - start

    warm()
    ours = statistics.median(warm() for _ in range(args.repeats))
    cold = median_time(lambda: solve_zero_sum(a), args.repeats)
    mg = pyspiel.create_matrix_game(a, -a)
    theirs = median_time(lambda: lp_solver.solve_zero_sum_matrix_game(mg), max(1, args.repeats // 2))
    rows.append((f"meta-solve {n + 1}x{n + 1}, warm (cold: {cold * 1e3:.1f} ms)", ours, "lp_solver (cvxpy/HiGHS)",
                 theirs))

    print(f"{args.game}, {k} policies per player, median of {args.repeats} (OpenSpiel: of {max(1, args.repeats // 2)}"
          " for the slow ones)")
    print(f"{'phase':<48} {'ours ms':>10} {'OpenSpiel':>22} {'ms':>10} {'ratio':>8}")
    for name, t_ours, ref, t_ref in rows:
        print(f"{name:<48} {t_ours * 1e3:>10.3f} {ref:>22} {t_ref * 1e3:>10.3f} {t_ref / t_ours:>8.1f}x")


if __name__ == "__main__":
    main()
