"""The double oracle on zero-sum matrix games: ours against OpenSpiel's ``DoubleOracleSolver``.

Same games, same start (strategy 0 for both players), run to convergence.
Ours: :func:`psro.double_oracle` (restricted games solved by the exact LP of
``solvers``, best responses by one ``deviation_payoffs`` call). OpenSpiel:
``open_spiel.python.algorithms.double_oracle.DoubleOracleSolver`` with its
``lp_solver`` (cvxpy; HiGHS as backend since ECOS is not installed), with
``max_steps = k_1 + k_2`` and tolerance 1e-7 on its value estimate. Reported:
median wall time of ``--repeats`` runs, the ratio, iterations, the final
NashConv in the full game and both values against the full LP.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python -m experiments.benchmarks.double_oracle

``--quick`` runs the 20x20 games once each and writes under ``runs/``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
from pathlib import Path

import numpy as np

from experiments import harness

RESULTS = Path(__file__).resolve().parent / "results"
# scripts next to this one (e.g. solvers.py) must not shadow the library's packages


def timed(fn, repeats: int):
    seconds, out = harness.median_time(fn, repeats)
    return out, seconds


def games_to_run(sizes, seed: int):
    from games import NormalFormGame, catalog

    rng = np.random.default_rng(seed)
    for k in sizes:
        yield f"random zero-sum {k}x{k}", catalog.random_game((k, k), kind="zero_sum", rng=rng)
    for k in sizes:
        a = rng.uniform(-1, 1, size=(k, k))
        keep = rng.choice(k, size=5, replace=False)
        small = rng.uniform(-1, 1, size=(5, 5))
        a[:, :] = -2.0 + rng.uniform(0, 0.5, size=(k, k))   # row strategies outside `keep` lose...
        a[np.ix_(keep, keep)] = small                         # ...the game lives on a 5x5 block
        a[np.ix_(keep, np.setdiff1d(np.arange(k), keep))] = 2.0   # column strategies outside it lose
        yield f"5x5 core in {k}x{k}", NormalFormGame.from_bimatrix(a)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 200, 500])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="20x20 games, one run each")
    parser.add_argument("--out", type=Path, default=None,
                        help="markdown file to write (default: results/double_oracle.md for a default run, "
                             "a new folder under runs/ otherwise)")
    args = parser.parse_args()
    out = harness.output_path(parser, args, RESULTS / "double_oracle.md")
    if args.quick:
        args.sizes, args.repeats = [20], 1

    import cvxpy as cp
    from open_spiel.python.algorithms import lp_solver
    from open_spiel.python.algorithms.double_oracle import DoubleOracleSolver

    from psro import double_oracle
    from solvers import nash_conv
    from solvers.nash.zero_sum import solve_zero_sum

    if "ECOS" not in cp.installed_solvers():  # OpenSpiel's default LP backend; HiGHS is what is installed
        lp_solver.LinearProgram.solve.__defaults__ = (cp.HIGHS, {})

    lines = ["# Double oracle on zero-sum matrix games: ours vs OpenSpiel's DoubleOracleSolver", "",
             f"Median of {args.repeats} runs, one BLAS thread, machine shared with other jobs.", "",
             ("| game | ours s | OpenSpiel s | ratio | ours iters | OS iters | ours NashConv | OS NashConv | "
              "ours - LP value | OS - LP value |"), "|---|---|---|---|---|---|---|---|---|---|"]
    for label, game in games_to_run(args.sizes, args.seed):
        lp = solve_zero_sum(game.payoffs[0]).value
        ours, t_ours = timed(lambda game=game: double_oracle(game), args.repeats)
        os_game = game.to_pyspiel()
        k = sum(game.shape)

        def run_openspiel(os_game=os_game, k=k):
            with contextlib.redirect_stdout(io.StringIO()):
                return DoubleOracleSolver(os_game).solve(max_steps=k, tolerance=1e-7, verbose=False)

        (os_solution, os_iters, _), t_os = timed(run_openspiel, args.repeats)
        os_solution = [np.asarray(x, dtype=np.float64) / np.sum(x) for x in os_solution]
        os_value = float(os_solution[0] @ game.payoffs[0] @ os_solution[1])
        row = (f"| {label} | {t_ours:.4f} | {t_os:.4f} | {t_os / t_ours:.1f} | {ours.iterations} | {os_iters} | "
               f"{ours.equilibrium.gap:.1e} | {nash_conv(game, os_solution):.1e} | "
               f"{ours.equilibrium.values[0] - lp:.1e} | {os_value - lp:.1e} |")
        print(row, flush=True)
        lines.append(row)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
