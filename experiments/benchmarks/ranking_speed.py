"""Benchmarks of the rankers against OpenSpiel, side by side in one process.

Run with BLAS pinned to one thread::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python -m experiments.benchmarks.ranking_speed [--quick] [--out PATH]

The script is a list of benchmark functions (``BENCHMARKS``); each takes the
parsed options and returns :class:`Row` objects. All rows are printed and
written as one markdown table to ``--out``.

alpha-Rank: ``ranking.alpharank`` against ``open_spiel.python.egt.alpharank.compute``
on the same seeded random games (payoffs uniform in [-1, 1], local selection
model). Reported: median wall time of each, the ratio OpenSpiel / ours, and the
largest ``|pi_ours - pi_openspiel|``. Two larger cases are timed for ours alone.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from experiments import harness

# Run as a script, this file's folder would come first on sys.path and its name
# would shadow the ``ranking`` package; put the repository root there instead.
from ranking import alpharank  # noqa: E402

logger = logging.getLogger("benchmarks.ranking")

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "ranking_speed.md"


@dataclass(frozen=True)
class Row:
    """One line of the results table (``nan`` where a column does not apply)."""

    benchmark: str
    case: str
    ours_s: float
    reference_s: float = float("nan")
    max_abs_diff: float = float("nan")
    note: str = ""

    @property
    def ratio(self) -> float:
        return self.reference_s / self.ours_s

    def markdown(self) -> str:
        def f(x, spec):
            return "-" if np.isnan(x) else format(x, spec)

        ratio = f(self.ratio, ".0f") + ("x" if not np.isnan(self.ratio) else "")
        return (f"| {self.benchmark} | {self.case} | {f(self.ours_s, '.4f')} | {f(self.reference_s, '.3f')} "
                f"| {ratio} | {f(self.max_abs_diff, '.1e')} | {self.note} |")


def _median_time(fn: Callable[[], object], repeats: int, budget_s: float = float("inf")):
    """Median wall time of up to ``repeats`` runs (fewer once ``budget_s`` is spent), result, runs."""
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
        if sum(times) > budget_s:
            break
    return statistics.median(times), out, len(times)


# ------------------------------------------------------------------ alpha-Rank
def _alpharank_cases(quick: bool):
    """(label, payoff tables, alpha, m) of the side-by-side cases."""
    cases = []
    sizes_1pop = [100, 400] if quick else [100, 400, 1000]
    for n in sizes_1pop:
        rng = np.random.default_rng([1, n])
        cases.append((f"1-pop N={n}", [rng.uniform(-1, 1, (n, n))], 1.0, 50))
    for shape in [(20, 20), (40, 40), (10, 10, 10)]:
        rng = np.random.default_rng([len(shape), *shape])
        tables = list(rng.uniform(-1, 1, (len(shape), *shape)))
        cases.append((f"{len(shape)}-pop {'x'.join(map(str, shape))}", tables, 1.0, 50))
    return cases


def alpharank_vs_openspiel(args) -> list[Row]:
    """Ours and OpenSpiel's ``alpharank.compute`` on the same random games."""
    from open_spiel.python.egt import alpharank as os_alpharank

    rows = []
    for label, tables, alpha, m in _alpharank_cases(args.quick):
        t_ours, ours, runs = _median_time(lambda t=tables, a=alpha, m=m: alpharank(t, alpha=a, population_size=m),
                                          args.repeats)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            t_os, ref, ref_runs = _median_time(lambda t=tables, a=alpha, m=m: os_alpharank.compute(t, m=m, alpha=a),
                                               args.reference_repeats, args.reference_budget)
        diff = float(np.abs(ours.pi - ref[2]).max())
        note = f"alpha={alpha:g}, m={m}, solver={ours.info['solver']}, runs {runs}/{ref_runs}"
        rows.append(Row("alpharank", label, t_ours, t_os, diff, note))
        logger.info("%s", rows[-1].markdown())
    return rows


def alpharank_large(args) -> list[Row]:
    """Ours alone on chains too large for OpenSpiel (each must finish in under 5 s)."""
    rows = []
    rng = np.random.default_rng(2000)
    big = [("1-pop N=2000", [rng.uniform(-1, 1, (2000, 2000))])]
    rng = np.random.default_rng(8000)
    big.append(("3-pop 20x20x20", list(rng.uniform(-1, 1, (3, 20, 20, 20)))))
    for label, tables in big:
        t, res, _ = _median_time(lambda t=tables: alpharank(t, alpha=1.0, population_size=50), args.repeats)
        note = (f"alpha=1, m=50, solver={res.info['solver']}, residual={res.info['residual']:.1e}, "
                f"{'OK' if t < 5.0 else 'OVER'} the 5 s bar")
        rows.append(Row("alpharank (ours only)", label, t, note=note))
        logger.info("%s", rows[-1].markdown())
    return rows


def alpharank_where_openspiel_fails(args) -> list[Row]:
    """Inputs on which OpenSpiel raises: a stiff chain at alpha=100 and the unscaled RRPS table."""
    from open_spiel.python.egt import alpharank as os_alpharank

    from games.datasets import rrps_game

    rng = np.random.default_rng([2, 20, 20])
    cases = [("2-pop 20x20, alpha=100", list(rng.uniform(-1, 1, (2, 20, 20))), 100.0)]
    try:
        cases.append(("RRPS 43 bots unscaled, alpha=10", [rrps_game(scale=1.0).payoffs[0]], 10.0))
    except FileNotFoundError as exc:  # the data directory is optional for this script
        logger.warning("skipping RRPS: %s", exc)
    rows = []
    for label, tables, alpha in cases:
        t_ours, ours, _ = _median_time(lambda t=tables, a=alpha: alpharank(t, alpha=a, population_size=50),
                                       args.repeats)
        start = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                os_alpharank.compute(tables, m=50, alpha=alpha)
            verdict = "OpenSpiel returned"
        except ValueError as exc:
            verdict = f"OpenSpiel raised ValueError: {str(exc)[:60]}"
        t_os = time.perf_counter() - start
        note = (f"ours: {ours.info['stationary']}, {len(ours.recurrent_classes)} class(es), "
                f"balance={ours.info.get('balance', 0.0):.0e}; {verdict}")
        rows.append(Row("alpharank (OpenSpiel fails)", label, t_ours, t_os, note=note))
        logger.info("%s", rows[-1].markdown())
    return rows


#: The benchmark functions, run in order. Add new ones (e.g. ResponseGraphUCB) here.
BENCHMARKS: list[Callable[[argparse.Namespace], list[Row]]] = [
    alpharank_vs_openspiel,
    alpharank_large,
    alpharank_where_openspiel_fails,
]


def write_markdown(rows: list[Row], path: Path, args) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    threads = {k: os.environ.get(k, "unset") for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    lines = [
        "# Ranking benchmarks against OpenSpiel",
        "",
        (f"Median of {args.repeats} runs (ours) and up to {args.reference_repeats} (reference; fewer once "
         f"{args.reference_budget:g} s are spent, see 'runs ours/reference'), one process, "
         f"threads: {threads}. Ratio = reference / ours. Random games, payoffs uniform in [-1, 1], seeded."),
        "",
        "| benchmark | case | ours (s) | reference (s) | ratio | max abs diff | note |",
        "|---|---|---|---|---|---|---|",
        *(r.markdown() for r in rows),
        "",
    ]
    path.write_text("\n".join(lines))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer cases and runs")
    parser.add_argument("--repeats", type=int, default=None, help="runs of ours per case (default 7, quick 3)")
    parser.add_argument("--reference-repeats", type=int, default=None,
                        help="runs of the reference per case (default 3, quick 1)")
    parser.add_argument("--reference-budget", type=float, default=30.0,
                        help="stop repeating a reference case once its runs took this many seconds")
    parser.add_argument("--out", type=Path, default=None,
                        help="markdown table to write (default: ranking_speed.md under results/ for a default run, "
                             "a new folder under runs/ otherwise)")
    parser.add_argument("--only", nargs="*", default=None, help="names of benchmark functions to run")
    args = parser.parse_args(argv)
    args.out = harness.output_path(parser, args, DEFAULT_OUT)
    args.repeats = args.repeats or (3 if args.quick else 7)
    args.reference_repeats = args.reference_repeats or (1 if args.quick else 3)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    rows = []
    for bench in BENCHMARKS:
        if args.only and bench.__name__ not in args.only:
            continue
        rows.extend(bench(args))
    write_markdown(rows, args.out, args)
    logger.info("wrote %s", args.out)


if __name__ == "__main__":
    main()
