# ruff: noqa: B023  (each timed closure is called within its own loop iteration)
"""Benchmark: batch Elo, bootstrap Elo and Nash averaging against OpenSpiel, same inputs, one process.

Run with BLAS threads pinned::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python -m experiments.benchmarks.bench_elo_nash_averaging

Prints the median wall time of several runs for each side, the ratio
(OpenSpiel / ours) and the largest difference between the two answers.

``--quick`` runs the smallest sizes only, one timed run each, 20 bootstrap resamples.
"""

from __future__ import annotations

import argparse
import logging
import time

import numpy as np
import pyspiel
from open_spiel.python.algorithms import elo as openspiel_elo
from open_spiel.python.algorithms.nash_averaging import (
    nash_averaging as openspiel_nash_averaging,
)

from ranking.elo_ratings import elo  # noqa: E402
from ranking.nash_averaging_ratings import max_entropy_nash  # noqa: E402


def median_time(fn, repeats: int) -> tuple:
    out = fn()  # warm-up, and the answer
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times)), out


def random_counts(rng, n, games=20):
    wins = rng.binomial(games, rng.random((n, n)))
    wins = np.triu(wins, 1)
    wins = wins + np.triu(games - wins, 1).T  # wins[j, i] = games - wins[i, j]
    draws = np.zeros((n, n), dtype=int)
    return wins, draws


#: Sizes (players) of each table; ``--quick`` keeps the smallest of each.
SIZES = {"elo": (10, 50, 200), "bootstrap": (10, 30), "nash_averaging": (5, 10, 20, 40)}


def bench_elo(repeats, sizes=SIZES["elo"]):
    print("\n## Batch Elo (Bradley-Terry MLE), smoothing 0.01")
    print(f"{'n':>5} {'openspiel ms':>13} {'ours newton ms':>15} {'ratio':>7} {'ours mm ms':>11} "
          f"{'|newton - os|':>14} {'|mm - os|':>10}")
    for n in sizes:
        rng = np.random.default_rng(n)
        wins, draws = random_counts(rng, n)
        t_os, r_os = median_time(lambda: openspiel_elo.compute_ratings_from_matrices(wins, draws), repeats)
        t_nt, r_nt = median_time(lambda: elo(wins, draws)["rating"].to_numpy(), repeats)
        t_mm, r_mm = median_time(lambda: elo(wins, draws, method="mm")["rating"].to_numpy(), max(3, repeats // 3))
        print(f"{n:>5} {1e3 * t_os:>13.3f} {1e3 * t_nt:>15.3f} {t_os / t_nt:>7.2f} {1e3 * t_mm:>11.3f} "
              f"{np.abs(r_nt - r_os).max():>14.2e} {np.abs(r_mm - r_os).max():>10.2e}")


def bench_bootstrap(repeats, resamples=200, sizes=SIZES["bootstrap"]):
    print(f"\n## Bootstrap Elo, {resamples} resamples of the matches (OpenSpiel: one call per resample)")
    print(f"{'n':>5} {'openspiel loop ms':>18} {'ours ms':>9} {'ratio':>7}")
    for n in sizes:
        rng = np.random.default_rng(n)
        wins, draws = random_counts(rng, n)
        off = ~np.eye(n, dtype=bool)
        cells = wins[off].astype(float)

        def openspiel_loop():
            r = np.random.default_rng(0)
            out = []
            for counts in r.multinomial(int(cells.sum()), cells / cells.sum(), size=resamples):
                w = np.zeros((n, n), dtype=int)
                w[off] = counts
                out.append(openspiel_elo.compute_ratings_from_matrices(w, draws))
            return np.array(out)

        t_os, _ = median_time(openspiel_loop, max(3, repeats // 3))
        t_us, _ = median_time(lambda: elo(wins, draws, bootstrap=resamples, rng=0), max(3, repeats // 3))
        print(f"{n:>5} {1e3 * t_os:>18.1f} {1e3 * t_us:>9.1f} {t_os / t_us:>7.2f}")


def bench_nash_averaging(repeats, sizes=SIZES["nash_averaging"]):
    print("\n## Nash averaging (max-entropy Nash of an antisymmetric game)")
    print(f"{'n':>5} {'kind':>8} {'openspiel ms':>13} {'ours ms':>9} {'ratio':>7} {'|p - p_os|':>11} "
          f"{'os violation':>13} {'our violation':>14}")
    for n in sizes:
        for kind in ("float", "integer"):
            rng = np.random.default_rng(n)
            x = rng.standard_normal((n, n))
            if kind == "integer":
                x = np.round(x)
            a = x - x.T
            game = pyspiel.create_matrix_game(a, -a)
            t_os, (p_os, _) = median_time(lambda: openspiel_nash_averaging(game), repeats)
            t_us, p = median_time(lambda: max_entropy_nash(a), repeats)
            p_os = p_os.ravel()
            print(f"{n:>5} {kind:>8} {1e3 * t_os:>13.2f} {1e3 * t_us:>9.2f} {t_os / t_us:>7.2f} "
                  f"{np.abs(p - p_os).max():>11.1e} {max(0.0, -(a.T @ p_os).min()):>13.1e} "
                  f"{max(0.0, -(a.T @ p).min()):>14.1e}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="the smallest sizes, 1 repeat, 20 resamples")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    repeats, resamples, sizes = args.repeats, 200, SIZES
    if args.quick:
        repeats, resamples, sizes = 1, 20, {name: all_sizes[:1] for name, all_sizes in SIZES.items()}
    bench_elo(repeats, sizes["elo"])
    bench_bootstrap(repeats, resamples, sizes["bootstrap"])
    bench_nash_averaging(repeats, sizes["nash_averaging"])


if __name__ == "__main__":
    main()
