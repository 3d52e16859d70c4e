"""Sampled meta-game evaluation on Leduc poker: serial, process pool and Ray engines, and OpenSpiel's sampling.

For ``--policies`` random tabular policies per player (``--policies ** 2``
profiles) it times :class:`psro.evaluation.MonteCarloEvaluator` playing
``--episodes`` episodes of every profile (median of ``--repeats`` runs, after
one warm-up run that starts the workers), with

* the serial executor,
* a local process pool with ``--workers`` processes,
* a Ray executor with ``--workers`` CPUs (a local instance started here),

checks that the three engines give bitwise identical statistics, and reports
the speed-ups over serial. Runs are interleaved (one of each engine in turn), so
a drift of the machine's load hits all engines alike. Ray workers run at
niceness ``--ray-niceness`` (0, like the driver and the process pool; Ray's
default of 15 starves them when other processes load the machine). It then times OpenSpiel's sampled meta-game
estimation (psro_v2's ``sample_episode`` / ``sample_episodes``, Python
``TabularPolicy`` objects) on the first ``--openspiel-profiles`` profiles with
the same number of episodes per entry, and reports the time per episode of
both and their ratio. The load of the machine (``os.getloadavg``) is printed
with the figures.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python -m experiments.benchmarks.ray_speedup --policies 10 --episodes 1000

``--quick`` times 2 x 2 profiles of 100 episodes once per engine (OpenSpiel's sampling on one profile), leaving Ray
out (with a line saying so) where it is not installed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from experiments import harness

# This folder holds a script named solvers.py; keep it from shadowing the solvers package.


def median_time(fn, repeats: int):
    """Warm-up call, then the median of ``repeats`` timed calls; returns (median seconds, last result)."""
    return harness.median_time(fn, repeats, warmup=True)


def random_populations(tree, k: int, seed: int):
    from psro.policies.population import Population, Provenance

    rng = np.random.default_rng(seed)
    pops = []
    for info in tree.infostates:
        raw = rng.random((k, info.num_infostates, info.num_actions)) * info.legal_mask
        pop = Population(info)
        pop.add(raw / raw.sum(axis=2, keepdims=True), [Provenance(0, "initial")] * k)
        pops.append(pop)
    return pops


def openspiel_policy(game, policy_array, infostates):
    """An OpenSpiel Python ``TabularPolicy`` playing ``policy_array`` at ``infostates`` (uniform elsewhere)."""
    from open_spiel.python import policy as os_policy

    tab = os_policy.TabularPolicy(game)
    for row, key in enumerate(infostates.keys):
        tab.policy_for_key(key)[:] = policy_array[row]
    return tab


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} CPUs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="leduc_poker")
    parser.add_argument("--policies", type=int, default=10, help="policies per player")
    parser.add_argument("--episodes", type=int, default=1000, help="episodes per profile")
    parser.add_argument("--episodes-per-task", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--openspiel-profiles", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--engines", default="serial,process,ray")
    parser.add_argument("--ray-niceness", type=int, default=0,
                        help="niceness of the Ray workers (Ray's default, 15, starves them on a loaded machine)")
    parser.add_argument("--quick", action="store_true",
                        help="2 x 2 profiles of 100 episodes, one run per engine; no Ray if not installed")
    args = parser.parse_args()
    names = args.engines.split(",")
    if args.quick:
        args.policies, args.episodes, args.repeats, args.openspiel_profiles = 2, 100, 1, 1
        ray = "ray" not in names or harness.installed("ray", "ray_speedup --quick", "the ray engine", "-e '.[ray]'")
        names = [name for name in names if ray or name != "ray"]

    import pyspiel
    from open_spiel.python.algorithms.psro_v2.abstract_meta_trainer import (
        sample_episode,
    )

    from games import EmpiricalGame
    from games.executors import make_executor
    from psro.evaluation import MonteCarloEvaluator
    from psro.sequence_form.game_tree import build_game_tree

    game = pyspiel.load_game(args.game)
    tree = build_game_tree(game)
    pops = random_populations(tree, args.policies, args.seed)
    k = args.policies
    block = [range(k), range(k)]
    total_episodes = k * k * args.episodes
    print(f"{args.game}: {k} x {k} profiles x {args.episodes} episodes = {total_episodes} episodes per run, "
          f"tasks of {args.episodes_per_task} episodes, median of {args.repeats} runs")
    print(f"before: {load()}")

    specs = {
        "serial": "serial",
        "process": {"engine": "process", "workers": args.workers},
        "ray": {"engine": "ray", "num_cpus": args.workers, "worker_niceness": args.ray_niceness,
                "init_options": {"log_to_driver": False}},
    }
    executors = {name: make_executor(specs[name]) for name in names}
    evaluators = {name: MonteCarloEvaluator(tree, episodes_per_profile=args.episodes, executor=ex, seed=args.seed,
                                            episodes_per_task=args.episodes_per_task)
                  for name, ex in executors.items()}

    def run(name):
        meta = EmpiricalGame((k, k))
        evaluators[name].evaluate(pops, block, meta_game=meta)
        return meta

    stats = {name: run(name) for name in names}          # warm-up: starts the workers
    times = {name: [] for name in names}
    for _ in range(args.repeats):                        # interleaved, so drifts of the load hit every engine
        for name in names:
            start = time.perf_counter()
            run(name)
            times[name].append(time.perf_counter() - start)
    for ex in executors.values():
        ex.close()
    results = {name: statistics.median(t) for name, t in times.items()}
    for name in names:
        seconds = results[name]
        print(f"  {name:<8} {seconds * 1e3:9.1f} ms   {seconds / total_episodes * 1e6:7.3f} us/episode   "
              f"speed-up over serial {results.get('serial', np.nan) / seconds:5.2f}x   "
              f"(runs: {', '.join(f'{t * 1e3:.0f}' for t in times[name])} ms)")
    stats = {name: (m.count, m.total, m.total_sq) for name, m in stats.items()}
    identical = all(all(np.array_equal(a, b) for a, b in zip(stats[names[0]], stats[n])) for n in names[1:])
    print(f"identical statistics across engines: {identical}")
    print(f"after: {load()}")

    # OpenSpiel psro_v2 sampled estimation of the same entries, same number of episodes per entry.
    profiles = [(i // k, i % k) for i in range(min(args.openspiel_profiles, k * k))]
    if not profiles:   # --openspiel-profiles 0: engines only
        print(f"end: {load()}")
        return
    os_pols = [[openspiel_policy(game, np.asarray(pop.policies[i]), pop.infostates) for i in range(k)]
               for pop in pops]
    np.random.seed(args.seed)   # psro_v2's sampling draws from numpy's global generator

    def openspiel_run():
        out = []
        for a, b in profiles:
            pols = [os_pols[0][a], os_pols[1][b]]
            totals = np.zeros(2)
            for _ in range(args.episodes):
                totals += sample_episode(game.new_initial_state(), pols).reshape(-1)
            out.append(totals / args.episodes)
        return out

    os_repeats = max(1, args.repeats // 2)
    os_seconds, os_means = median_time(openspiel_run, os_repeats)
    os_per_episode = os_seconds / (len(profiles) * args.episodes)
    ours_per_episode = results.get("serial", min(results.values())) / total_episodes
    print(f"OpenSpiel psro_v2 sample_episode: {len(profiles)} profiles x {args.episodes} episodes, median of "
          f"{os_repeats}: {os_per_episode * 1e6:.1f} us/episode; ours (serial) {ours_per_episode * 1e6:.3f} "
          f"us/episode; ratio {os_per_episode / ours_per_episode:.0f}x")
    # Both estimate the same payoffs: compare with our (serial) means within sampling error.
    mean = stats[names[0]][1] / stats[names[0]][0]
    err = max(abs(os_means[j][0] - mean[0][a, b]) for j, (a, b) in enumerate(profiles))
    print(f"largest |OpenSpiel mean - ours| over those profiles (player 0): {err:.3f}")
    print(f"end: {load()}")


if __name__ == "__main__":
    main()
