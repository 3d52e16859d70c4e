"""Our PSRO against OpenSpiel's psro_v2 on Leduc poker, for the same wall-time budget, in one process.

Both use a Nash meta-solver and exact best responses (pyspiel's C++
TabularBestResponse for psro_v2, through its BestResponseOracle). psro_v2
estimates each new meta-game entry from ``--sims-per-entry`` sampled episodes
(1000 by default, as in its example script); ``--openspiel-exact`` also runs
psro_v2 with that sampling replaced by exact expected returns (OpenSpiel's own
``expected_game_score.policy_value``).

The NashConv of psro_v2's meta-strategy is measured after every iteration
with OpenSpiel's policy_aggregator and pyspiel.nash_conv, with its clock
stopped; ours is computed inside the loop and counted in our time.

Run with BLAS pinned::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python -m experiments.benchmarks.psro_leduc --budget 120

``--quick`` is a 20-second smoke run.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

CHECKPOINTS = (5, 10, 30, 60, 120, 185, 300, 600)


def run_ours(game_name: str, budget: float) -> pd.DataFrame:
    """Our PSRO; times include building the game tree."""
    from psro import PSRO

    wall0, cpu0 = time.perf_counter(), time.process_time()
    solver = PSRO(game_name, meta_solver="nash", oracle="exact", progress=False)
    setup_wall, setup_cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    history = solver.run(time_limit=budget - setup_wall, target_gap=0.0)
    return pd.DataFrame({
        "iteration": history["iteration"],
        "wall_time": history["wall_time"] + setup_wall,
        "cpu_time": history["cpu_time"] + setup_cpu,
        "nash_conv": history["gap"],
    })


def run_openspiel(game_name: str, budget: float, sims_per_entry: int, exact: bool, seed: int = 0) -> pd.DataFrame:
    """OpenSpiel's psro_v2 as in its example script (Nash meta-solver, BR oracle, probabilistic selector)."""
    import pyspiel
    from open_spiel.python import policy
    from open_spiel.python.algorithms import expected_game_score, policy_aggregator
    from open_spiel.python.algorithms.psro_v2 import (
        best_response_oracle,
        psro_v2,
        strategy_selectors,
    )

    _use_highs_for_openspiel_lp()
    np.random.seed(seed)
    game = pyspiel.load_game(game_name)

    class ExactPSROSolver(psro_v2.PSROSolver):
        """psro_v2 with every meta-game entry computed exactly instead of sampled."""

        def sample_episodes(self, policies, num_episodes):
            return np.asarray(expected_game_score.policy_value(game.new_initial_state(), policies))

    wall, cpu = 0.0, 0.0
    w0, c0 = time.perf_counter(), time.process_time()
    uniform = policy.TabularPolicy(game)
    oracle = best_response_oracle.BestResponseOracle(game=game, policy=uniform)
    agents = [uniform.__copy__() for _ in range(game.num_players())]
    cls = ExactPSROSolver if exact else psro_v2.PSROSolver
    solver = cls(game, oracle, initial_policies=agents,
                 training_strategy_selector=strategy_selectors.probabilistic, rectifier="",
                 sims_per_entry=sims_per_entry, number_policies_selected=1, meta_strategy_method="nash",
                 sample_from_marginals=True, symmetric_game=False)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    rows = []
    iteration = 0
    while wall < budget:
        w0, c0 = time.perf_counter(), time.process_time()
        solver.iteration()
        wall += time.perf_counter() - w0
        cpu += time.process_time() - c0
        iteration += 1
        # measurement, off the clock
        aggregated = policy_aggregator.PolicyAggregator(game).aggregate(
            range(game.num_players()), solver.get_policies(), solver.get_meta_strategies())
        table = {key: list(probs.items()) for per_player in aggregated.policy for key, probs in per_player.items()}
        rows.append({"iteration": iteration, "wall_time": wall, "cpu_time": cpu,
                     "nash_conv": pyspiel.nash_conv(game, pyspiel.TabularPolicy(table))})
    return pd.DataFrame(rows)


def _use_highs_for_openspiel_lp() -> None:
    """OpenSpiel's lp_solver defaults to cvxpy's ECOS, which is not installed here; give it HiGHS instead."""
    import cvxpy as cp
    from open_spiel.python.algorithms import lp_solver

    if "ECOS" not in cp.installed_solvers():
        lp_solver.LinearProgram.solve.__defaults__ = (cp.HIGHS, {})


def at_checkpoints(curve: pd.DataFrame, budget: float, clock: str = "wall_time") -> dict:
    """NashConv (and iteration) of the last iteration finished by each checkpoint time."""
    out = {}
    for t in [c for c in CHECKPOINTS if c < budget] + [budget]:
        done = curve[curve[clock] <= t]
        out[t] = (done["nash_conv"].iloc[-1], int(done["iteration"].iloc[-1])) if len(done) else (np.nan, 0)
    return out


def main() -> None:
    # Run as a script, this folder is first on sys.path and its solvers.py would shadow the solvers package.
    # (experiments/reproduce/psro_vs_openspiel.py loads this file by path and does not call main.)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=float, default=120.0, help="wall-clock seconds for each implementation")
    parser.add_argument("--quick", action="store_true", help="a 20-second smoke run")
    parser.add_argument("--game", default="leduc_poker")
    parser.add_argument("--sims-per-entry", type=int, default=1000)
    parser.add_argument("--openspiel-exact", action="store_true", help="also run psro_v2 with exact evaluation")
    parser.add_argument("--skip-openspiel", action="store_true")
    parser.add_argument("--csv", help="write all curves to this CSV")
    args = parser.parse_args()
    budget = 20.0 if args.quick else args.budget

    curves = {"ours": run_ours(args.game, budget)}
    if not args.skip_openspiel:
        curves["psro_v2 (sampled)"] = run_openspiel(args.game, budget, args.sims_per_entry, exact=False)
        if args.openspiel_exact:
            curves["psro_v2 (exact eval)"] = run_openspiel(args.game, budget, args.sims_per_entry, exact=True)

    for clock, label in (("wall_time", "wall s"), ("cpu_time", "CPU s")):
        print(f"\nNashConv of the meta-strategy on {args.game} against {label[:-2]} time "
              f"(budget {budget:g} wall s each); (iterations) in brackets")
        table = {name: at_checkpoints(c, budget, clock) for name, c in curves.items()}
        print(f"{label:>8} " + " ".join(f"{name:>24}" for name in table))
        for t in next(iter(table.values())):
            cells = [f"{v[0]:>16.4g} ({v[1]:>4d})" for v in (table[name][t] for name in table)]
            print(f"{t:>8g} " + " ".join(f"{c:>24}" for c in cells))
    hit = curves["ours"][curves["ours"]["nash_conv"] <= 1e-6]
    if len(hit):
        print(f"ours: NashConv <= 1e-6 first at iteration {int(hit['iteration'].iloc[0])}, "
              f"{hit['wall_time'].iloc[0]:.1f} s wall, {hit['cpu_time'].iloc[0]:.1f} s CPU")
    for name, c in curves.items():
        last = c.iloc[-1]
        print(f"{name}: {int(last['iteration'])} iterations, final NashConv {last['nash_conv']:.4g}, "
              f"wall {last['wall_time']:.1f} s, CPU {last['cpu_time']:.1f} s")
    ours_final = curves["ours"]["nash_conv"].iloc[-1]
    for name, c in curves.items():
        if name != "ours":
            print(f"ratio NashConv {name} / ours at {budget:g} s: {c['nash_conv'].iloc[-1] / ours_final:.3g}")
    if args.csv:
        pd.concat([c.assign(implementation=name) for name, c in curves.items()]).to_csv(args.csv, index=False)


if __name__ == "__main__":
    main()
