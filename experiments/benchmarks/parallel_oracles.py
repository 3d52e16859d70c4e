"""PSRO with a learned oracle: the oracle jobs serially, on a process pool and on Ray.

Times ``PSRO(game, oracle=--oracle, oracle_options={"total_steps": --steps, ...})``
for ``--iterations`` iterations (after the initial step, which trains responses too) with

* the serial executor,
* a local process pool with ``--workers`` processes,
* a Ray executor with ``--workers`` CPUs (a local instance started here),

reports the median of ``--repeats`` runs of each (after one untimed warm-up
run per engine that starts its workers; runs are interleaved, one of each
engine in turn, so a drift of the machine's load hits all alike), the
speed-ups over serial, and checks that every engine gives bit-for-bit the same
populations, meta-game and gaps. Each iteration maps the jobs of all players
(one per player and target) in one call, so with two players at most two
workers are busy. The load of the machine (``os.getloadavg``) is printed with
the figures. Ray is imported only when its engine is asked for.

``--oracle exact --dispatch executor`` measures what sending the exact
oracle's (millisecond) jobs through an engine costs, against ``--dispatch
auto``, which calls it in-process (PSRO's default for exact oracles).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python -m experiments.benchmarks.parallel_oracles --oracle ppo --steps 8192 --iterations 3

``--quick`` times one iteration of 512-step responses once per engine, leaving Ray out (with a line saying so)
where it is not installed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from experiments import harness

harness.pin_threads()

import numpy as np  # noqa: E402


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} CPUs"


def fingerprint(solver) -> list:
    """Everything that must agree across engines, as arrays (a network member by its weights)."""
    def weights(policy) -> np.ndarray:
        if hasattr(policy, "to_arrays"):
            return np.concatenate([a.ravel() for a in policy.to_arrays().values()])
        return np.asarray(policy)

    arrays = [weights(member) for pop in solver.populations for member in pop.policies]
    arrays += [solver.meta_game.count, solver.meta_game.total, solver.meta_game.total_sq]
    arrays.append(solver.history["gap"].to_numpy())
    return arrays


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="kuhn_poker")
    parser.add_argument("--oracle", default="ppo", choices=("ppo", "dqn", "exact"))
    parser.add_argument("--dispatch", default="auto", choices=("auto", "executor", "in_process"),
                        help="PSRO's oracle_dispatch: 'executor' sends exact oracles' jobs through the engine too")
    parser.add_argument("--steps", type=int, default=8192, help="training steps of every learned response")
    parser.add_argument("--eval-episodes", type=int, default=500)
    parser.add_argument("--meta-solver", default="nash")
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--engines", default="serial,process,ray")
    parser.add_argument("--ray-niceness", type=int, default=0,
                        help="niceness of the Ray workers (Ray's default, 15, starves them on a loaded machine)")
    parser.add_argument("--quick", action="store_true",
                        help="one iteration of 512-step responses, one run per engine; no Ray if not installed")
    args = parser.parse_args()
    if args.quick:
        args.steps, args.eval_episodes, args.iterations, args.repeats = 512, 20, 1, 1

    from games.executors import make_executor
    from psro import PSRO

    specs = {
        "serial": "serial",
        "process": {"engine": "process", "workers": args.workers},
        "ray": {"engine": "ray", "num_cpus": args.workers, "worker_niceness": args.ray_niceness,
                "init_options": {"log_to_driver": False}},
    }
    names = args.engines.split(",")
    unknown = sorted(set(names) - set(specs))
    if unknown:
        parser.error(f"--engines: unknown engine(s) {unknown}; choose from {sorted(specs)}")
    if args.quick:
        ray = "ray" not in names or harness.installed("ray", "parallel_oracles --quick", "the ray engine",
                                                      "-e '.[ray]'")
        names = [name for name in names if ray or name != "ray"]
    learned = args.oracle != "exact"
    options = {"total_steps": args.steps, "eval_episodes": args.eval_episodes} if learned else {}
    budget = f" with {args.steps} steps and {args.eval_episodes} evaluation episodes per response" if learned else ""
    print(f"PSRO on {args.game}, meta-solver {args.meta_solver}, oracle {args.oracle}{budget}, oracle_dispatch "
          f"{args.dispatch!r}, {args.iterations} iterations; {args.workers} workers; median of {args.repeats} runs")
    print(f"before: {load()}")
    executors = {name: make_executor(specs[name]) for name in names}

    def run(name):
        solver = PSRO(args.game, meta_solver=args.meta_solver, oracle=args.oracle, oracle_options=options,
                      executor=executors[name], oracle_dispatch=args.dispatch, seed=args.seed, progress=False)
        solver.run(iterations=args.iterations)
        return solver

    try:
        results = {name: run(name) for name in names}       # warm-up: starts the workers
        times = {name: [] for name in names}
        oracle_times = {name: [] for name in names}
        for _ in range(args.repeats):                        # interleaved
            for name in names:
                start = time.perf_counter()
                solver = run(name)
                times[name].append(time.perf_counter() - start)
                oracle_times[name].append(float(solver.history["time_oracle"].sum()))
    finally:
        for ex in executors.values():
            ex.close()
    medians = {name: statistics.median(t) for name, t in times.items()}
    oracle_medians = {name: statistics.median(t) for name, t in oracle_times.items()}
    for name in names:
        print(f"  {name:<8} run {medians[name]:7.2f} s  (oracle phase {oracle_medians[name]:6.2f} s)   "
              f"speed-up over serial: run {medians.get('serial', np.nan) / medians[name]:4.2f}x, "
              f"oracle phase {oracle_medians.get('serial', np.nan) / oracle_medians[name]:4.2f}x   "
              f"(runs: {', '.join(f'{t:.2f}' for t in times[name])} s)")
    reference = fingerprint(results[names[0]])
    identical = all(all(np.array_equal(a, b) for a, b in zip(reference, fingerprint(results[n]))) for n in names)
    print(f"identical populations, meta-game and gaps across engines: {identical}")
    print(f"final gap {results[names[0]].history['gap'].iloc[-1]:.4f}, populations "
          f"{[len(p) for p in results[names[0]].populations]}")
    print(f"after: {load()}")


if __name__ == "__main__":
    main()
