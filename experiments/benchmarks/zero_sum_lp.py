"""Time the zero-sum LP variants against OpenSpiel's ``lp_solver.solve_zero_sum_matrix_game``.

Run with BLAS pinned to one thread, e.g.::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python -m experiments.benchmarks.zero_sum_lp --sizes 200 1000 --repeats 3

Every variant solves the same random zero-sum games (uniform payoffs in
[-1, 1], seeded) in one process. The table reports the median wall time, the
ratio to OpenSpiel's median, the worst NashConv relative to the payoff range
and the largest difference between the value and OpenSpiel's value.

``--quick`` solves one 50x50 game with every variant.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time

import numpy as np

# this folder holds scripts named like packages (solvers.py); keep them from shadowing the packages
from solvers.nash.zero_sum import solve_zero_sum  # noqa: E402

logger = logging.getLogger("zero_sum_lp")


def _openspiel_backend() -> str:
    """Make OpenSpiel's LP usable here and name its cvxpy backend.

    OpenSpiel defaults to ECOS, which recent cvxpy no longer ships; when ECOS is
    missing its ``LinearProgram.solve`` returns None. We then set its default to
    Clarabel (ECOS's successor interior point, installed with cvxpy), leaving
    OpenSpiel's model building (its cost) unchanged.
    """
    import cvxpy as cp
    from open_spiel.python.algorithms import lp_solver

    if "ECOS" in cp.installed_solvers():
        return "ECOS"
    lp_solver.LinearProgram.solve.__defaults__ = (cp.CLARABEL, {})
    return "CLARABEL"


def openspiel_lp(a: np.ndarray):
    """OpenSpiel's reference LP (cvxpy), on a pyspiel matrix game built from ``a``."""
    import pyspiel
    from open_spiel.python.algorithms import lp_solver

    game = pyspiel.create_matrix_game(a.tolist(), (-a).tolist())
    x, y, _, _ = lp_solver.solve_zero_sum_matrix_game(game)
    x = np.clip(np.asarray(x, dtype=float).ravel(), 0, None)
    y = np.clip(np.asarray(y, dtype=float).ravel(), 0, None)
    return x / x.sum(), y / y.sum()


def highspy_packing(a: np.ndarray, strategy: int = 1):
    """The packing formulation ``max 1^T w, g w <= 1, w >= 0`` (g > 0) passed densely to highspy.

    ``strategy`` is HiGHS's ``simplex_strategy`` (1 dual, 4 primal).
    """
    import highspy

    lo, hi = a.min(), a.max()
    g = (a - lo) / (hi - lo) + 1.0
    k1, k2 = g.shape
    h = highspy.Highs()
    h.silent()
    h.setOptionValue("presolve", "off")
    h.setOptionValue("simplex_strategy", strategy)
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = k2, k1
    lp.col_cost_ = np.ones(k2)
    lp.col_lower_ = np.zeros(k2)
    lp.col_upper_ = np.full(k2, highspy.kHighsInf)
    lp.row_lower_ = np.full(k1, -highspy.kHighsInf)
    lp.row_upper_ = np.ones(k1)
    lp.sense_ = highspy.ObjSense.kMaximize
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.arange(0, k1 * k2 + 1, k1, dtype=np.int32)
    lp.a_matrix_.index_ = np.tile(np.arange(k1, dtype=np.int32), k2)
    lp.a_matrix_.value_ = np.ascontiguousarray(g.T).ravel()
    h.passModel(lp)
    h.run()
    sol = h.getSolution()
    w = np.clip(np.array(sol.col_value), 0, None)
    u = np.abs(np.array(sol.row_dual))
    return u / u.sum(), w / w.sum()


def ours(lp_method: str):
    def run(a):
        sol = solve_zero_sum(a, lp_method=lp_method)
        return sol.x, sol.y

    return run


VARIANTS = {
    "openspiel": openspiel_lp,
    "auto": ours("auto"),
    "dense-ipm": ours("dense-ipm"),
    "scipy-highs-ds": ours("highs-ds"),
    "scipy-highs-ipm": ours("highs-ipm"),
    "highspy-packing-ds": highspy_packing,
}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 1000])
    parser.add_argument("--repeats", type=int, default=3, help="games (seeds) per size; one run each")
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="one 50x50 game")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.repeats = [50], 1
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if "openspiel" in args.variants:
        print(f"OpenSpiel lp_solver backend: {_openspiel_backend()}")
    print(f"{'size':>6} {'variant':>20} {'median s':>10} {'ratio':>8} "
          f"{'max NashConv/range':>19} {'max |v - v_os|':>15}")
    for n in args.sizes:
        rng = np.random.default_rng([args.seed, n])
        games = [rng.uniform(-1, 1, (n, n)) for _ in range(args.repeats)]
        times, values, gaps = {}, {}, {}
        for name in args.variants:
            times[name], values[name], gaps[name] = [], [], []
            for a in games:
                start = time.perf_counter()
                x, y = VARIANTS[name](a)
                times[name].append(time.perf_counter() - start)
                values[name].append(float(x @ a @ y))
                gaps[name].append(float(((a @ y).max() - (x @ a).min()) / np.ptp(a)))
                logger.debug("%d %s %.3fs", n, name, times[name][-1])
        base = statistics.median(times["openspiel"]) if "openspiel" in times else float("nan")
        ref = values.get("openspiel")
        for name in args.variants:
            med = statistics.median(times[name])
            dv = max(abs(v - r) for v, r in zip(values[name], ref)) if ref else float("nan")
            print(f"{n:>6} {name:>20} {med:>10.3f} {base / med:>7.1f}x {max(gaps[name]):>19.2e} {dv:>15.2e}",
                  flush=True)


if __name__ == "__main__":
    main()
