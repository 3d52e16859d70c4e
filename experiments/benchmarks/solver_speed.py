"""Our meta-solvers against OpenSpiel's on the same inputs, in one process.

Run with BLAS pinned to one thread (the script pins it itself if unset)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python -m experiments.benchmarks.solver_speed --repeats 5

Cases:

- zero-sum Nash: OpenSpiel's ``lp_solver.solve_zero_sum_matrix_game`` vs
  ``solvers.nash.zero_sum.solve_zero_sum`` on random zero-sum games (200x200 and
  1000x1000; OpenSpiel runs once at 1000x1000, it takes tens of seconds);
- JPSRO meta-solvers: OpenSpiel's ``jpsro._mgce``, ``_mgcce``, ``_mwce``,
  ``_mwcce`` vs ``solve(game, "mgce")`` etc. on random games with 3 players x
  10 strategies, 3 x 15 (OpenSpiel once) and 2 x 30.

- maximum entropy (no OpenSpiel counterpart): cvxpy + Clarabel on the
  exponential-cone formulation vs ``solve(game, "mece")`` / ``"mecce"``.

The table gives the median wall time of each side, the ratio (the reference's
median / ours) and the largest absolute difference: of the joint distribution
for the maximum-Gini solvers (unique solutions), of the welfare for the
maximum-welfare ones (the maximiser need not be unique), of the value for the
zero-sum LP, of the entropy for maximum entropy.

OpenSpiel's LPs (``lp_solver`` and jpsro's maximum-welfare solvers) ask cvxpy
for ECOS; when ECOS is installed they run with OpenSpiel's own defaults. Only
when it is missing are they switched to Clarabel (ECOS's successor interior
point, at the 1e-7 tolerances jpsro gives ECOS); the script prints which one
ran and the results file records it. jpsro's maximum-Gini QPs try CVXOPT first
and fall back to OSQP (as jpsro configures it) when CVXOPT is missing: cvxpy
rejects the missing solver before any work, so the failed attempt costs
nothing measurable (``_mgcce`` on 3 players x 10: 0.17 s either way).
"""

from __future__ import annotations

from experiments import harness

# This file is named solvers.py: drop its own folder from the import path so that
# ``import solvers`` finds the package, not this script.
harness.pin_threads()

import argparse  # noqa: E402
import warnings  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from games import catalog  # noqa: E402
from solvers import solve  # noqa: E402
from solvers.nash.zero_sum import solve_zero_sum  # noqa: E402

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "solver_speed.md"


@dataclass(frozen=True)
class Row:
    """One line of the table."""

    case: str
    method: str
    openspiel_s: float
    openspiel_runs: int
    ours_s: float
    ours_runs: int
    max_abs_diff: float
    diff_of: str
    reference_solver: str = ""

    @property
    def ratio(self) -> float:
        return self.openspiel_s / self.ours_s


SOLVER_USED = {"lp": "ECOS", "qp": "OSQP"}  # set by _patch_openspiel_lps


def _patch_openspiel_lps() -> str:
    """Use OpenSpiel's default LP solver (ECOS) when installed, else Clarabel at jpsro's ECOS tolerances.

    Returns a sentence naming the solvers OpenSpiel's LPs and QPs run with.
    """
    import cvxpy as cp
    from open_spiel.python.algorithms import jpsro, lp_solver

    installed = cp.installed_solvers()
    SOLVER_USED["qp"] = "CVXOPT" if "CVXOPT" in installed else "OSQP"
    SOLVER_USED["lp"] = "ECOS" if "ECOS" in installed else "Clarabel"
    qp = ("CVXOPT (jpsro's first choice)" if "CVXOPT" in installed
          else "OSQP (jpsro's fallback: CVXOPT is not installed)")
    if "ECOS" in installed:
        return f"OpenSpiel's LPs use ECOS (its default, installed); its MG QPs use {qp}."
    jpsro.DEFAULT_ECOS_SOLVER_KWARGS = {"solver": "CLARABEL", "tol_gap_abs": 1e-7, "tol_gap_rel": 1e-7,
                                        "tol_feas": 1e-7, "verbose": False}
    lp_solver.LinearProgram.solve.__defaults__ = (cp.CLARABEL, {})
    return f"OpenSpiel's LPs use Clarabel (ECOS is not installed); its MG QPs use {qp}."


def zero_sum_rows(sizes, repeats: int, seed: int) -> list:
    import pyspiel
    from open_spiel.python.algorithms import lp_solver

    rows = []
    for k in sizes:
        a = catalog.random_game((k, k), kind="zero_sum", rng=seed).payoffs[0]
        os_runs = 1 if k >= 1000 else repeats
        game = pyspiel.create_matrix_game(a.tolist(), (-a).tolist())
        t_os, os_out = harness.median_time(lambda: lp_solver.solve_zero_sum_matrix_game(game), os_runs)
        t_us, ours = harness.median_time(lambda: solve_zero_sum(a), repeats)
        value = float(ours.value)
        diff = abs(float(os_out[2]) - value)
        rows.append(Row(f"zero-sum {k}x{k}", "nash LP", t_os, os_runs, t_us, repeats, diff, "value",
                        SOLVER_USED["lp"]))
        print(_format(rows[-1]), flush=True)
    return rows


JPSRO = (("mgce", "_mgce", "joint"), ("mgcce", "_mgcce", "joint"),
         ("mwce", "_mwce", "welfare"), ("mwcce", "_mwcce", "welfare"))


def jpsro_rows(shapes, repeats: int, seed: int, once_above: int) -> list:
    from open_spiel.python.algorithms import jpsro

    rows = []
    for shape in shapes:
        game = catalog.random_game(shape, rng=seed)
        label = f"{len(shape)}p x {shape[0]}"
        repeats_one = [np.ones(k, dtype=int) for k in shape]
        welfare = game.payoffs.sum(axis=0).ravel()
        for name, os_name, diff_of in JPSRO:
            fn = getattr(jpsro, os_name)
            os_runs = 1 if game.num_profiles > once_above else repeats
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t_os, (dist, _) = harness.median_time(lambda: fn(game.payoffs, repeats_one), os_runs)
            t_us, eq = harness.median_time(lambda: solve(game, name), repeats)
            if diff_of == "joint":
                diff = float(np.abs(eq.joint - dist).max())
            else:
                diff = abs(float(welfare @ dist.ravel()) - float(welfare @ eq.joint.ravel()))
            rows.append(Row(label, name, t_os, os_runs, t_us, repeats, diff, diff_of,
                            SOLVER_USED["qp" if name.startswith("mg") else "lp"]))
            print(_format(rows[-1]), flush=True)
    return rows


def entropy_rows(shapes, repeats: int, seed: int) -> list:
    """Max-entropy CE/CCE: our dual Newton vs cvxpy + Clarabel on the exponential-cone form.

    OpenSpiel has no max-entropy solver; this justifies the method choice.
    """
    import cvxpy as cp

    from solvers.correlated.correlated_constraints import correlated_constraints

    rows = []
    for shape in shapes:
        game = catalog.random_game(shape, rng=seed)
        label = f"{len(shape)}p x {shape[0]}"
        for concept in ("ce", "cce"):
            c = correlated_constraints(game, concept)

            def reference():
                x = cp.Variable(game.num_profiles, nonneg=True)
                problem = cp.Problem(cp.Maximize(cp.sum(cp.entr(x))), [cp.sum(x) == 1, c.matrix @ x <= 0])
                problem.solve(solver="CLARABEL")
                return problem.value

            t_ref, value = harness.median_time(reference, 1)
            t_us, eq = harness.median_time(lambda: solve(game, "me" + concept), repeats)
            rows.append(Row(label, f"me{concept} (vs cvxpy+Clarabel exp cone)", t_ref, 1, t_us, repeats,
                            abs(float(value) - eq.info["entropy"]), "entropy", "Clarabel"))
            print(_format(rows[-1]), flush=True)
    return rows


HEADER = ("| case | method | reference solver | reference median (s) | runs | ours median (s) | runs | ratio "
          "| max abs diff |\n|---|---|---|---:|---:|---:|---:|---:|---|")


def _format(row: Row) -> str:
    return (f"| {row.case} | {row.method} | {row.reference_solver} | {row.openspiel_s:.4f} | {row.openspiel_runs} | "
            f"{row.ours_s:.4f} | {row.ours_runs} | {row.ratio:.1f}x | {row.max_abs_diff:.1e} ({row.diff_of}) |")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per case (median reported)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for a smoke test")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-zero-sum", action="store_true")
    parser.add_argument("--skip-jpsro", action="store_true")
    parser.add_argument("--skip-entropy", action="store_true")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"markdown table to write (default: {DEFAULT_OUT.name} under results/ for a default run, "
                             "a new folder under runs/ otherwise)")
    args = parser.parse_args(argv)
    args.out = harness.output_path(parser, args, DEFAULT_OUT)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    solver_note = _patch_openspiel_lps()
    print(solver_note, flush=True)
    if args.quick:
        sizes, shapes, repeats, once_above = (50,), ((4, 4, 4), (6, 6)), min(args.repeats, 2), 10**9
    else:
        sizes, shapes, repeats, once_above = (200, 1000), ((10, 10, 10), (15, 15, 15), (30, 30)), args.repeats, 2000
    print(HEADER, flush=True)
    rows = []
    if not args.skip_zero_sum:
        rows += zero_sum_rows(sizes, repeats, args.seed)
    if not args.skip_jpsro:
        rows += jpsro_rows(shapes, repeats, args.seed, once_above)
    if not args.skip_entropy:
        rows += entropy_rows(shapes, repeats, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    text = [
        "# Meta-solver benchmark: ours vs OpenSpiel",
        "",
        (f"Command: `python -m experiments.benchmarks.solver_speed --repeats {args.repeats}"
         f"{' --quick' if args.quick else ''}`, BLAS threads pinned to 1, random games seeded with {args.seed}."),
        "Reference = OpenSpiel (zero-sum LP, jpsro) or cvxpy + Clarabel (max entropy, which OpenSpiel lacks).",
        "Ratio = reference median / our median. The reference runs once where `runs` is 1 (it takes seconds).",
        solver_note,
        ("OpenSpiel solver per row: zero-sum and mw* rows are LPs, mg* rows QPs (solvers as above); "
         "me* rows compare with cvxpy + Clarabel."),
        "",
        HEADER,
        *(_format(r) for r in rows),
        "",
    ]
    args.out.write_text("\n".join(text))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
