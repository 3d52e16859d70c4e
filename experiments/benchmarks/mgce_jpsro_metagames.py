"""The maximum-Gini CE on the degenerate meta-games of CE-JPSRO on three-player Kuhn poker.

Two steps:

``--capture``
    Runs CE-JPSRO (``meta_solver="mgce"``, ``br_selection="largest_gap"``, seed 0)
    on ``kuhn_poker(players=3)`` and saves the mean meta-game of the iterations
    whose population sizes are in ``--sizes`` to
    ``results/mgce_metagames/kuhn3_ce_<k>.npz`` (key ``payoffs``).
``--bench`` (the default)
    Loads every saved meta-game and, for MGCE and MGCCE, times ours
    (``solvers.solve(game, "mgce")``, median of ``--repeats``), the same call
    with the dual solver of git revision ``--baseline-rev`` (the code before
    this change, loaded from git and patched in), an independent
    high-accuracy solve of the same QP with cvxpy + Clarabel (tolerances 1e-12,
    on the CE rows built here), and OpenSpiel's ``jpsro._mgce`` / ``_mgcce``
    (its cvxpy program, ``--openspiel-repeats`` runs, off by default: about
    100 s for one 8x8x8 MGCE), and prints the
    iterations (interior point + Newton), the largest difference from
    Clarabel and the CE/CCE gap of our answer.
``--jpsro``
    Wall time of CE-JPSRO on three-player Kuhn until the gap is at most
    ``--target`` (median of ``--repeats`` runs), now and with the baseline solver.

Run with BLAS threads pinned::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m experiments.benchmarks.mgce_jpsro_metagames --capture
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m experiments.benchmarks.mgce_jpsro_metagames --bench
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m experiments.benchmarks.mgce_jpsro_metagames --jpsro

``--quick`` runs each asked step once, ``--bench`` on the smallest saved meta-game only and ``--jpsro`` with a
10-second budget; it writes nothing (it refuses ``--capture``, which writes the committed meta-games).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

# this folder holds scripts named like packages (solvers.py); keep them from shadowing the packages
sys.path = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

GAME = "kuhn_poker(players=3)"
OUT = Path(__file__).resolve().parent / "results" / "mgce_metagames"


def baseline_dual(rev: str):
    """The correlated-dual module at git revision ``rev``, loaded as a separate module.

    It is ``solvers/correlated/correlated_dual.py``, or ``solvers/correlated_dual.py`` at revisions before
    ``solvers/`` was grouped into subpackages.
    """
    root = Path(__file__).resolve().parents[2]
    for where in ("solvers/correlated/correlated_dual.py", "solvers/correlated_dual.py"):
        shown = subprocess.run(["git", "show", f"{rev}:{where}"], cwd=root, capture_output=True, text=True)
        if shown.returncode == 0:
            break
    shown.check_returncode()
    source = shown.stdout
    path = Path(tempfile.mkdtemp()) / "correlated_dual_baseline.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("correlated_dual_baseline", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module   # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


def _as_current(solve_regularised_dual):
    """``solve_regularised_dual`` of an older revision, its result as today's ``DualSolution``: revisions before
    the interior point had no ``method`` field, which ``solvers.correlated.equilibria`` reads (its default, the
    dual projected Newton method, is what they ran)."""
    import dataclasses

    from solvers.correlated.correlated_dual import DualSolution

    def solve(*args, **kwargs):
        sol = solve_regularised_dual(*args, **kwargs)
        return DualSolution(**{f.name: getattr(sol, f.name) for f in dataclasses.fields(sol)})

    return solve


@contextlib.contextmanager
def patched_dual(module):
    """Make ``solvers.correlated.equilibria`` call ``module.solve_regularised_dual`` (``None``: leave it)."""
    import solvers.correlated.equilibria as correlated

    original = correlated.solve_regularised_dual
    if module is not None:
        correlated.solve_regularised_dual = _as_current(module.solve_regularised_dual)
    try:
        yield
    finally:
        correlated.solve_regularised_dual = original


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


def bench(repeats: int, openspiel_repeats: int, baseline, games: int | None = None) -> None:
    """Time the solvers on the first ``games`` saved meta-games, smallest first (``None``: all of them)."""
    from games import NormalFormGame
    from solvers import cce_gap, ce_gap, solve
    from solvers.correlated.correlated_constraints import correlated_constraints

    files = sorted(OUT.glob("kuhn3_ce_*.npz"), key=lambda f: int(f.stem.rsplit("_", 1)[1]))[:games]
    if not files:
        raise SystemExit(f"no meta-games under {OUT}; run with --capture first")
    print(f"{'game':>13} {'solver':>6} {'ours s':>8} {'iters':>5} {'conv':>5} {'|x-clar|':>9} {'gap':>9} "
          f"{'before s':>8} {'iters':>5} {'solver before':>24} {'clarabel s':>10} {'openspiel s':>11} "
          f"{'OS/ours':>7} {'before/ours':>11}")
    for path in files:
        game = NormalFormGame(np.load(path)["payoffs"])
        for concept in ("ce", "cce"):
            name = "mg" + concept
            t_ours, eq = _median_time(lambda: solve(game, name), repeats)
            with patched_dual(baseline):
                t_before, eq_before = _median_time(lambda: solve(game, name), repeats)
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
            print(f"{str(game.shape):>13} {name:>6} {t_ours:8.4f} {eq.info['iterations']:5d} "
                  f"{str(eq.info['converged']):>5} {diff:9.2e} {gap:9.2e} {t_before:8.4f} "
                  f"{eq_before.info['iterations']:5d} {eq_before.info['solver'][:24]:>24} {t_cl:10.3f} "
                  f"{t_os:11.3f} {t_os / t_ours:7.1f} {t_before / t_ours:11.1f}", flush=True)


def jpsro_time_to_gap(repeats: int, target: float, budget: float, baseline) -> None:
    """Median wall time (setup included) of CE-JPSRO on 3-player Kuhn until the gap is at most ``target``."""
    from psro import PSRO

    for label, module in (("now", None), ("before", baseline)):
        times = []
        for _ in range(repeats):
            with patched_dual(module):
                start = time.perf_counter()
                solver = PSRO(GAME, meta_solver="mgce", br_selection="largest_gap", seed=0, progress=False)
                history = solver.run(target_gap=target, time_limit=budget)
                elapsed = time.perf_counter() - start
            reached = bool(history["gap"].iloc[-1] <= target)
            times.append(elapsed if reached else float("inf"))
            print(f"{label}: {elapsed:.2f} s, {len(history) - 1} iterations, final gap {history['gap'].iloc[-1]:.3g}, "
                  f"meta-game {solver.meta_game.shape}", flush=True)
        print(f"{label}: median time to gap <= {target:g}: {np.median(times):.2f} s over {repeats} runs", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--capture", action="store_true", help="run JPSRO and save meta-games")
    parser.add_argument("--bench", action="store_true", help="time the solvers on the saved meta-games")
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 12, 15])
    parser.add_argument("--time-limit", type=float, default=300.0, help="capture budget in seconds")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--openspiel-repeats", type=int, default=0,
                        help="runs of OpenSpiel's jpsro._mgce/_mgcce per game (about 100 s each at 8^3)")
    parser.add_argument("--jpsro", action="store_true", help="time CE-JPSRO to --target, now and before")
    parser.add_argument("--target", type=float, default=1e-3)
    parser.add_argument("--budget", type=float, default=120.0, help="wall seconds per JPSRO run")
    parser.add_argument("--baseline-rev", default="f576def", help="git revision of the solver to compare with")
    parser.add_argument("--quick", action="store_true",
                        help="one run of each step: --bench on the smallest meta-game, --jpsro for at most 10 s")
    args = parser.parse_args()
    games = None
    if args.quick:
        if args.capture:
            parser.error("--quick --capture: a capture writes the committed meta-games; run it without --quick")
        args.repeats, args.budget, games = 1, min(args.budget, 10.0), 1
    baseline = baseline_dual(args.baseline_rev) if args.baseline_rev else None
    if args.capture:
        capture(args.sizes, args.time_limit)
    if args.bench or not (args.capture or args.jpsro):
        bench(args.repeats, args.openspiel_repeats, baseline, games)
    if args.jpsro:
        jpsro_time_to_gap(args.repeats, args.target, args.budget, baseline)


if __name__ == "__main__":
    main()
