"""alpha-Rank at the sizes PSRO makes: time and residual of the chains held by blocks.

Run with BLAS pinned to one thread (the default here)::

    python -m experiments.benchmarks.alpharank_scale [--cases random500 leduc_like single463] [--alphas 10 100]

Cases (payoffs uniform in [-1, 1], seed 0, population size 50, local selection):

- ``random500``: a two-population 500 x 500 general-sum game, 250,000
  profiles (OpenSpiel's dense method cannot hold this chain);
- ``zero_sum463``: a two-population 463 x 463 zero-sum game, the size of the
  final population of ``experiments/configs/leduc_poker.yaml``;
- ``single463``: one population of 463 strategies (a symmetric game).

For each case and alpha it prints the wall time (the block build and the
whole call), the CPU time of the process (all threads: the block build and
products run on up to 4 threads, so on an idle two-core machine the wall time
is about half of it), the solver, ``info["stationary"]`` and the residual
``||pi Q||_1 / max(out)`` (an upper bound of ``||pi C - pi||_1``), which the
issue's bar asks to be at most 1e-9. Nothing is written.

``--quick`` runs each case at a small size (still past the dense solver's limit where the full case is) for alpha 10.
"""

from __future__ import annotations

import argparse
import time

from experiments import harness

harness.pin_threads()

from games import catalog  # noqa: E402
from ranking import alpharank  # noqa: E402

CASES = {
    "random500": lambda k=500: catalog.random_game((k, k), rng=0),
    "zero_sum463": lambda k=463: catalog.random_game((k, k), kind="zero_sum", rng=0),
    "single463": lambda k=463: catalog.random_game((k, k), kind="symmetric", rng=0),
}
#: Strategies per population of each case under ``--quick`` (the two-population ones keep more profiles than
#: ``ranking.alpha_rank.alpharank_stationary.DENSE_LIMIT``, so their chains take the same solver path).
QUICK_SIZES = {"random500": 30, "zero_sum463": 30, "single463": 60}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--alphas", nargs="+", type=float, default=[10.0, 100.0])
    parser.add_argument("--quick", action="store_true", help="small games (QUICK_SIZES), alpha 10 only")
    args = parser.parse_args(argv)
    if args.quick:
        args.alphas = [10.0]
    print(f"{'case':<12} {'alpha':>6} {'profiles':>9} {'build_s':>8} {'total_s':>8} {'solver':<13} "
          f"{'stationary':<11} {'residual':>9} {'cpu_s':>7}")
    for name in args.cases:
        game = CASES[name](QUICK_SIZES[name]) if args.quick else CASES[name]()
        for alpha in args.alphas:
            start, cpu = time.perf_counter(), time.process_time()
            res = alpharank(game, alpha=alpha, population_size=50, progress=False)
            total, cpu = time.perf_counter() - start, time.process_time() - cpu
            build = res.info.get("build_time", float("nan"))
            print(f"{name:<12} {alpha:>6g} {len(res.pi):>9} {build:>8.2f} {total:>8.2f} {res.info['solver']:<13} "
                  f"{res.info['stationary']:<11} {res.info['residual']:>9.1e} {cpu:>7.2f}", flush=True)


if __name__ == "__main__":
    main()
