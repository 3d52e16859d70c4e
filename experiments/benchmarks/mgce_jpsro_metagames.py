"""The maximum-Gini CE on the degenerate meta-games of CE-JPSRO on three-player Kuhn poker.

Two steps:

``--capture``
    Runs CE-JPSRO (``meta_solver="mgce"``, ``br_selection="largest_gap"``, seed 0)
    on ``kuhn_poker(players=3)`` and saves the mean meta-game of the iterations
    whose population sizes are in ``--sizes`` to
    ``results/mgce_metagames/kuhn3_ce_<k>.npz`` (key ``payoffs``).
``--bench`` (the default)
    Loads every saved meta-game and, for MGCE and MGCCE, times ours
    (``solvers.solve(game, "mgce")``, median of ``--repeats``), an independent
    high-accuracy solve of the same QP with cvxpy + Clarabel (tolerances 1e-12,
    on the CE rows built here), and OpenSpiel's ``jpsro._mgce`` / ``_mgcce``
    (its cvxpy program, ``--openspiel-repeats`` runs), and prints the
    iterations of the dual Newton method, the largest difference from
    Clarabel and the CE/CCE gap of our answer.

Run with BLAS threads pinned::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python experiments/benchmarks/mgce_jpsro_metagames.py --capture
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python experiments/benchmarks/mgce_jpsro_metagames.py --bench
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

# this folder holds scripts named like packages (solvers.py); keep them from shadowing the packages
sys.path = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

GAME = "kuhn_poker(players=3)"
OUT = Path(__file__).resolve().parent / "results" / "mgce_metagames"


def capture(sizes: list, time_limit: float) -> None:
    """Run CE-JPSRO and save the meta-games whose (largest) population size is in ``sizes``."""
    from psro import PSRO

    OUT.mkdir(parents=True, exist_ok=True)
    solver = PSRO(GAME, meta_solver="mgce", br_selection="largest_gap", seed=0, progress=False)
    wanted = set(sizes)

    def save(row: dict) -> None:
        game = solver.meta_game.mean_game()
        k = max(game.shape)
        if k in wanted and min(game.shape) == k:
            wanted.discard(k)
            np.savez_compressed(OUT / f"kuhn3_ce_{k}.npz", payoffs=game.payoffs)
            print(f"saved {game.shape} at iteration {row.get('iteration')} (gap {row['gap']:.3g})")

    start = time.perf_counter()
    while wanted and time.perf_counter() - start < time_limit:
        solver.run(iterations=1, callback=save)
        if max(solver.meta_game.shape) > max(sizes):
            break
    print(f"capture took {time.perf_counter() - start:.1f} s; missing sizes: {sorted(wanted)}")


def clarabel_gini(a, e) -> np.ndarray:
    """``min ||x||^2`` over ``{x >= 0, sum x = 1, a x <= e}`` with Clarabel at tight tolerances."""
    import cvxpy as cp

    x = cp.Variable(a.shape[1], nonneg=True)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(x)), [cp.sum(x) == 1, a @ x <= e])
    problem.solve(solver="CLARABEL", tol_gap_abs=1e-13, tol_gap_rel=1e-13, tol_feas=1e-13,
                  tol_ktratio=1e-10, max_iter=500)
    return np.asarray(x.value)


def _median_time(fn, repeats: int):
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), out


def bench(repeats: int, openspiel_repeats: int) -> None:
    from games import NormalFormGame
    from solvers import cce_gap, ce_gap, solve
    from solvers.correlated_constraints import correlated_constraints

    files = sorted(OUT.glob("kuhn3_ce_*.npz"), key=lambda f: int(f.stem.rsplit("_", 1)[1]))
    if not files:
        raise SystemExit(f"no meta-games under {OUT}; run with --capture first")
    print(f"{'game':>16} {'solver':>6} {'ours s':>8} {'iters':>5} {'conv':>5} {'status':>9} {'|x-clar|':>9} "
          f"{'gap':>9} {'clarabel s':>10} {'openspiel s':>11} {'ratio':>7}")
    for path in files:
        game = NormalFormGame(np.load(path)["payoffs"])
        for concept in ("ce", "cce"):
            name = "mg" + concept
            t_ours, eq = _median_time(lambda: solve(game, name), repeats)
            c = correlated_constraints(game, concept)
            a = c.matrix
            t_cl, x_cl = _median_time(lambda: clarabel_gini(a, np.zeros(a.shape[0])), 1)
            diff = float(np.abs(eq.joint.ravel() - x_cl).max())
            gap = (ce_gap if concept == "ce" else cce_gap)(game, eq.joint)
            t_os = float("nan")
            if openspiel_repeats > 0:
                from open_spiel.python.algorithms import jpsro

                fn = jpsro._mgce if concept == "ce" else jpsro._mgcce
                repeats_pp = [np.ones(k, dtype=int) for k in game.shape]
                t_os, _ = _median_time(lambda: fn(game.payoffs, repeats_pp, ignore_repeats=True), openspiel_repeats)
            print(f"{str(game.shape):>16} {name:>6} {t_ours:8.4f} {eq.info['iterations']:5d} "
                  f"{str(eq.info['converged']):>5} {eq.info['status']:>9} {diff:9.2e} {gap:9.2e} {t_cl:10.3f} "
                  f"{t_os:11.3f} {t_os / t_ours:7.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--capture", action="store_true", help="run JPSRO and save meta-games")
    parser.add_argument("--bench", action="store_true", help="time the solvers on the saved meta-games")
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 12, 15])
    parser.add_argument("--time-limit", type=float, default=300.0, help="capture budget in seconds")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--openspiel-repeats", type=int, default=1)
    args = parser.parse_args()
    if args.capture:
        capture(args.sizes, args.time_limit)
    if args.bench or not args.capture:
        bench(args.repeats, args.openspiel_repeats)


if __name__ == "__main__":
    main()
