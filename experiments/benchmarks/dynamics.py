"""Time the learning dynamics against OpenSpiel's ``projected_replicator_dynamics`` and ``regret_matching``.

Run with BLAS pinned to one thread, e.g.::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python -m experiments.benchmarks.dynamics --repeats 5

Both sides run in one process on the same seeded random games. Two tables:

* ``fixed``: the same number of steps with the same step size (PRD: the
  results agree to round-off; regret matching: OpenSpiel starts its regrets at
  1e-6 instead of 0, so the strategies differ slightly). This is the cost per
  step.
* ``meta-solver``: what a PSRO meta-solver call costs. OpenSpiel's PRD with
  its defaults (1e5 steps of dt=1e-3, the setting of ``psro_v2``) against ours
  with its defaults (the same horizon in 5,000 steps of dt=0.02, stopping once
  the NashConv of the average is <= 1e-2). The NashConv of both outputs is
  reported next to the times.

``--quick`` runs 200 fixed steps once per shape, and the meta-solver call on rock-paper-scissors only.
"""

from __future__ import annotations

import argparse
import logging

import numpy as np

from experiments.harness import median_time
from games import catalog  # noqa: E402
from solvers import nash_conv  # noqa: E402
from solvers.dynamics.regret_matching import regret_matching  # noqa: E402
from solvers.dynamics.replicator import prd  # noqa: E402

logger = logging.getLogger("dynamics_benchmark")


def _tensors(game):
    return [np.array(game.payoffs[p]) for p in range(game.num_players)]


def main(argv=None) -> None:
    from open_spiel.python.algorithms.projected_replicator_dynamics import projected_replicator_dynamics
    from open_spiel.python.algorithms.regret_matching import regret_matching as os_regret_matching

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--os-repeats", type=int, default=1, help="runs of OpenSpiel's 1e5-step PRD (slow)")
    parser.add_argument("--shapes", nargs="*", default=["10x10", "3x3x3", "2x2x2x2"])
    parser.add_argument("--quick", action="store_true",
                        help="200 steps, one run, the meta-solver call on rock-paper-scissors only")
    args = parser.parse_args(argv)
    if args.quick:
        args.repeats, args.steps, args.os_repeats = 1, 200, 1
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("solvers").setLevel(logging.WARNING)  # the solvers' "stopped after" notes
    shapes = [tuple(int(k) for k in s.split("x")) for s in args.shapes]

    logger.info("fixed steps (%d), median of %d runs", args.steps, args.repeats)
    logger.info("%-10s %-16s %12s %12s %8s %12s", "shape", "method", "ours [ms]", "openspiel", "ratio", "max |diff|")
    for shape in shapes:
        game = catalog.random_game(shape, rng=0)
        t_ours, ours = median_time(lambda game=game: prd(game, iterations=args.steps, dt=0.01, tol=0.0,
                                                check_every=10**9), args.repeats)
        t_os, ref = median_time(lambda game=game: projected_replicator_dynamics(
            _tensors(game), prd_iterations=args.steps, prd_dt=0.01), args.repeats)
        diff = max(float(np.abs(a - b).max()) for a, b in zip(ours.marginals, ref))
        logger.info("%-10s %-16s %12.1f %12.1f %8.1f %12.2e", "x".join(map(str, shape)), "prd",
                    1e3 * t_ours, 1e3 * t_os, t_os / t_ours, diff)
        t_ours, ours = median_time(lambda game=game: regret_matching(game, iterations=args.steps, tol=0.0, plus=False,
                                                            check_every=10**9), args.repeats)
        t_os, ref = median_time(lambda game=game: os_regret_matching(_tensors(game), iterations=args.steps, gamma=0.0),
                                 args.repeats)
        diff = max(float(np.abs(a - b).max()) for a, b in zip(ours.marginals, ref))
        logger.info("%-10s %-16s %12.1f %12.1f %8.1f %12.2e", "x".join(map(str, shape)), "regret_matching",
                    1e3 * t_ours, 1e3 * t_os, t_os / t_ours, diff)

    logger.info("")
    logger.info("meta-solver call with defaults, median of %d runs", args.repeats)
    logger.info("%-22s %12s %12s %8s %12s %12s", "game", "ours [ms]", "openspiel", "ratio", "ours gap", "os gap")
    games = {"rock_paper_scissors": catalog.rock_paper_scissors(),
             "biased_rps": catalog.biased_rock_paper_scissors(),
             "zero_sum 10x10": catalog.random_game((10, 10), kind="zero_sum", rng=1),
             "general 3x3x3": catalog.random_game((3, 3, 3), rng=2)}
    if args.quick:   # (OpenSpiel's 1e5 PRD steps take seconds per game)
        games = {"rock_paper_scissors": games["rock_paper_scissors"]}
    for name, game in games.items():
        t_ours, ours = median_time(lambda game=game: prd(game), args.repeats)
        t_os, ref = median_time(lambda game=game: projected_replicator_dynamics(_tensors(game)), args.os_repeats)
        logger.info("%-22s %12.1f %12.1f %8.1f %12.2e %12.2e", name, 1e3 * t_ours, 1e3 * t_os, t_os / t_ours,
                    ours.gap, nash_conv(game, [r / r.sum() for r in ref]))


if __name__ == "__main__":
    main()
