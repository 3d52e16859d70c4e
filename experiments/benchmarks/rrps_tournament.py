"""Benchmark: the live RRPS tournament loop against pyspiel's ``evaluate_bots`` alone.

The floor is ``pyspiel.evaluate_bots`` in a tight loop over prebuilt bots, with
no reseeding and no bookkeeping. Our per-match cost is that of
``games.roshambo._play_chunk`` (a worker's task: bot construction, ``srandom``
per match, result array) on the same ordered pairs and seeds. Both run in this
process, alternately, several times; reported are medians of CPU time per
match and their ratio.

With ``--full`` it then plays the whole tournament (10 matches per ordered pair
of the 43 bots) on ``--workers`` processes and reports wall time, the CPU-seconds
of all tasks and the load average.

    OMP_NUM_THREADS=1 python -m experiments.benchmarks.rrps_tournament [--pairs 60] [--repeats 3] [--full]

``--quick`` compares on 5 pairs, one match each, once (``--full`` still plays the whole tournament).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from experiments import harness

harness.pin_threads()

import numpy as np  # noqa: E402
import pyspiel  # noqa: E402

from games.executors import make_executor  # noqa: E402
from games.roshambo import (  # noqa: E402
    GAME_STRING,
    _play_chunk,
    bot_names,
    compare_with_published,
    play_tournament,
)


def floor_loop(pairs, seeds, num_throws: int) -> float:
    """CPU seconds of evaluate_bots alone on prebuilt bots (no srandom, no bookkeeping)."""
    game = pyspiel.load_game(GAME_STRING.format(throws=num_throws))
    names = {n for pair in pairs for n in pair}
    bots = {(p, n): pyspiel.make_roshambo_bot(p, n, num_throws) for p in range(2) for n in names}
    states = [game.new_initial_state() for _ in range(seeds.size)]
    row = 0
    t = time.process_time()
    for (a, b), pair_seeds in zip(pairs, seeds.tolist()):
        players = [bots[0, a], bots[1, b]]
        for s in pair_seeds:
            pyspiel.evaluate_bots(states[row], players, s & 0x7FFFFFFF)
            row += 1
    return time.process_time() - t


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=60, help="random ordered pairs in the per-match comparison")
    parser.add_argument("--matches", type=int, default=2, help="matches per pair in the comparison")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--full", action="store_true", help="also play the full 43-bot tournament")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="5 pairs, one match each, one repeat")
    args = parser.parse_args(argv)
    if args.quick:
        args.pairs, args.matches, args.repeats = 5, 1, 1
    names = bot_names()
    rng = np.random.default_rng(0)
    idx = rng.integers(0, len(names), size=(args.pairs, 2))
    pairs = [(names[i], names[j]) for i, j in idx]
    seeds = np.random.SeedSequence(1).generate_state(args.pairs * args.matches).reshape(args.pairs, args.matches)
    n = seeds.size
    floor, ours = [], []
    for _ in range(args.repeats):
        floor.append(floor_loop(pairs, seeds, 1000) / n)
        t = time.process_time()
        _play_chunk((pairs, seeds, 1000))
        ours.append((time.process_time() - t) / n)
    ratios = [o / f for o, f in zip(ours, floor)]
    print(f"{n} matches on {args.pairs} random ordered pairs, {args.repeats} repeats (CPU time per match):")
    print(f"  evaluate_bots alone (floor): median {1e3 * statistics.median(floor):.2f} ms  "
          f"{[round(1e3 * x, 2) for x in floor]}")
    print(f"  games.roshambo task        : median {1e3 * statistics.median(ours):.2f} ms  "
          f"{[round(1e3 * x, 2) for x in ours]}")
    print(f"  ratio ours / floor         : median {statistics.median(ratios):.3f}  {[round(r, 3) for r in ratios]}")
    if args.full:
        load_before = os.getloadavg()
        start = time.perf_counter()
        with make_executor(args.workers) as ex:
            result = play_tournament(matches=10, executor=ex, progress=False)
        wall = time.perf_counter() - start
        c = compare_with_published(result)
        m = len(result.matches)
        print(
            f"full tournament: {m} matches, {args.workers} workers, {wall:.1f} s wall, "
            f"{result.info['cpu_seconds']:.1f} CPU-seconds in tasks ({1e3 * result.info['cpu_seconds'] / m:.2f} ms "
            f"per match); load average before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f}"
        )
        print(
            f"vs published: {100 * c.fraction_within_3se:.1f}% of noisy pairs within 3 SE, max |z| "
            f"{c.max_abs_z:.1f}, correlation {c.correlation:.4f}, deterministic pairs equal "
            f"{c.deterministic_equal}/{c.deterministic_pairs}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
