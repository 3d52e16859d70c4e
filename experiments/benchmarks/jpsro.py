"""JPSRO on three-player Kuhn poker: ours against OpenSpiel's ``jpsro.run_loop``, gap against wall time.

Both run in this process on the same game with the same meta-solvers (MGCCE for
CCE-JPSRO, MGCE for CE-JPSRO; OpenSpiel's are its cvxpy programs, ours the
solvers of this toolkit), exact best responses and exact meta-game payoffs.
Each run stops at the time budget or the target gap. The gap is the one
OpenSpiel's loop reports (sum over players of the deviation incentives of the
training meta-distribution, see :mod:`psro.measures.metrics`). For each implementation
and concept the script prints the gap trace of the first run, then the median
over ``--repeats`` runs of the wall time to reach each threshold, and the ratio.

OpenSpiel's loop is stopped from its callback, so one of its iterations can
overrun the budget. Run with BLAS threads pinned::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m experiments.benchmarks.jpsro --budget 60

``--quick`` gives each implementation one run of a 3-second budget per concept.
"""

from __future__ import annotations

import argparse
import logging
import time

import numpy as np

# this folder holds scripts named like packages (solvers.py); keep them from shadowing the packages

GAME = "kuhn_poker(players=3)"
THRESHOLDS = (1e-1, 1e-2, 3e-3, 1e-3)
SOLVERS = {"cce": "mgcce", "ce": "mgce"}
BR_SELECTION = {"cce": "all", "ce": "largest_gap"}   # OpenSpiel's default br_selection is largest_gap


class _Stop(Exception):
    pass


def run_ours(concept: str, budget: float, target: float) -> list:
    """[(wall seconds, gap)] of our JPSRO, setup (tree walk) included in the clock."""
    from psro import PSRO

    start = time.perf_counter()
    solver = PSRO(GAME, meta_solver=SOLVERS[concept], br_selection=BR_SELECTION[concept], progress=False)
    trace = []
    solver.run(target_gap=target, time_limit=budget,
               callback=lambda row: trace.append((time.perf_counter() - start, row["gap"])))
    return trace


def run_openspiel(concept: str, budget: float, target: float) -> list:
    """[(wall seconds, gap)] of ``open_spiel.python.algorithms.jpsro.run_loop``."""
    import pyspiel
    from open_spiel.python.algorithms import jpsro

    game = pyspiel.load_game(GAME)
    trace = []
    start = time.perf_counter()

    def callback(iteration, per_player_repeats, per_player_policies, joint_policies, joint_returns, meta_games,
                 train_meta_dists, eval_meta_dists, train_meta_values, eval_meta_values, train_meta_gaps,
                 eval_meta_gaps, kwargs, checkpoint):
        gap = float(np.sum(train_meta_gaps[-1]))
        trace.append((time.perf_counter() - start, gap))
        if gap <= target or time.perf_counter() - start >= budget:
            raise _Stop
        return checkpoint

    try:
        jpsro.run_loop(game=game, game_name=GAME, seed=0, iterations=10_000, policy_init="uniform",
                       update_players_strategy="all", target_equilibrium=concept,
                       br_selection=BR_SELECTION[concept], train_meta_solver=SOLVERS[concept],
                       eval_meta_solver=SOLVERS[concept], ignore_repeats=False, callback=callback)
    except _Stop:
        pass
    return trace


def time_to(trace: list, threshold: float) -> float:
    hits = [t for t, gap in trace if gap <= threshold]
    return hits[0] if hits else float("nan")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budget", type=float, default=60.0, help="wall seconds per run")
    parser.add_argument("--repeats", type=int, default=5, help="runs of ours per concept")
    parser.add_argument("--openspiel-repeats", type=int, default=1,
                        help="runs of OpenSpiel's per concept (each can take minutes)")
    parser.add_argument("--target", type=float, default=1e-3)
    parser.add_argument("--concepts", default="cce,ce")
    parser.add_argument("--quick", action="store_true", help="one run of 3 s per implementation and concept")
    args = parser.parse_args(argv)
    if args.quick:
        args.budget, args.repeats, args.openspiel_repeats = 3.0, 1, 1
    logging.getLogger().setLevel(logging.WARNING)
    for concept in args.concepts.split(","):
        results = {}
        for name, runner, repeats in (("ours", run_ours, args.repeats),
                                      ("openspiel", run_openspiel, args.openspiel_repeats)):
            traces = [runner(concept, args.budget, args.target) for _ in range(repeats)]
            results[name] = traces
            print(f"\n{concept.upper()}-JPSRO ({SOLVERS[concept]}), {name}: gap against wall time (first run)")
            print("  iter   wall_s        gap")
            for i, (t, gap) in enumerate(traces[0]):
                print(f"  {i:4d} {t:8.2f} {gap:10.3e}")
        print(f"\n{concept.upper()}-JPSRO: median wall seconds to reach each gap ({args.repeats} runs of ours, "
              f"{args.openspiel_repeats} of OpenSpiel's; budget {args.budget:g} s, checked between iterations; "
              "nan = not reached)")
        print("   gap <=      ours  openspiel   ratio")
        for threshold in THRESHOLDS:
            ours = float(np.median([time_to(tr, threshold) for tr in results["ours"]]))
            theirs = float(np.median([time_to(tr, threshold) for tr in results["openspiel"]]))
            print(f"  {threshold:7.0e} {ours:9.2f} {theirs:10.2f} {theirs / ours:7.1f}x")


if __name__ == "__main__":
    main()
