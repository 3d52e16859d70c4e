"""Pipeline PSRO (P2SRO) on Leduc poker with 1 worker against 2: the same NashConv, in how much wall time.

For every seed, the run of ``experiments/configs/leduc_pipeline_psro.yaml`` (two active PPO levels per player, four
training chunks per iteration, Monte Carlo meta-game, exact NashConv of the fixed policies' meta-Nash every
iteration) is made twice, each in a fresh Python process: with the serial executor (1 worker) and with a process pool
of 2 workers (the four chunks of an iteration, and the meta-game's evaluation batches, mapped over them). For a
fixed seed P2SRO's result does not depend on the engine, so the two histories must be identical (checked: every
column but the clocks); what differs is the time. Reported per run: the final NashConv, the wall seconds of the run
(construction included: worker start-up is part of the parallel cost), the same without the measuring phase
(``time_metric``: the exact NashConv, which only the benchmark needs), the wall seconds of iterations 2 onwards
(the loop's own clock: the steady state, after the start-up of torch in the workers, or in the serial process, which
the first chunks pay), and the CPU seconds of the run's process and
all its children (the pool's workers). The order of the two runs alternates with the seed, and the load average is
recorded before each run, with the CPUs two processes get together at that moment (:func:`parallel_capacity`: 2.0
on an idle 2-core machine): on a shared machine the wall times say as much about the other jobs as about P2SRO.

Run (one command; at the defaults six runs of 20-30 CPU-seconds each)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python -m experiments.benchmarks.pipeline_psro_workers

``--seeds 0 1 2`` (default), ``--iterations`` (default 8), ``--steps`` (PPO steps per chunk, default 8192): the
budget. Results: ``results/pipeline_psro_workers.{csv,md}`` with the default options, else under ``runs/``.
``--quick`` makes the two runs of seed 0 only, of 2 iterations with chunks of 1024 steps.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from experiments import harness

harness.pin_threads()

logger = logging.getLogger("pipeline_psro_workers")

CONFIG = harness.REPO_ROOT / "experiments" / "configs" / "leduc_pipeline_psro.yaml"
RESULTS = harness.BENCHMARKS / "results" / "pipeline_psro_workers.md"
CLOCKS = ("time_meta_solve", "time_oracle", "time_evaluation", "time_metric", "wall_time", "cpu_time",
          "approx_gap_time")
WORKERS = (1, 2)


def single_run(seed: int, workers: int, iterations: int, steps: int) -> dict:
    """One run in this process: the config with ``seed``, ``workers`` (1: serial) and the budget."""
    import yaml

    from psro import PSROConfig
    from psro.variants.pipeline import PipelinePSRO

    fields = yaml.safe_load(CONFIG.read_text())
    fields.update(seed=seed, progress=False, time_limit=None, iterations=iterations,
                  executor=str(workers),   # ("1": the serial executor; "2": a pool of 2 processes)
                  oracle_options=dict(fields["oracle_options"], total_steps=steps))
    start = time.perf_counter()
    with PipelinePSRO(PSROConfig.from_dict(fields)) as solver:
        history = solver.run(iterations=iterations)
        fixed = [len(pop) for pop in solver.populations]
    wall = time.perf_counter() - start
    return {"history": history.drop(columns=[c for c in CLOCKS if c in history]).to_json(orient="split"),
            "nash_conv": float(history["gap"].iloc[-1]), "wall_s": wall,
            "wall_s_without_measuring": wall - float(history["time_metric"].sum()),
            "steady_wall_s": float(history["wall_time"].iloc[-1] - history["wall_time"].iloc[1]), "populations": fixed}


def measured_run(seed: int, workers: int, iterations: int, steps: int) -> dict:
    """:func:`single_run` in a fresh process; its CPU seconds are that process's and its children's."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load, capacity = os.getloadavg()[0], parallel_capacity()
    # (as a module from the repository root: run by its path, the script cannot import the experiments package)
    out = subprocess.run([sys.executable, "-m", __spec__.name, "--single", str(seed), str(workers), "--iterations",
                          str(iterations), "--steps", str(steps)], cwd=harness.REPO_ROOT, check=True,
                         capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result.update(seed=seed, workers=workers, load_before=load, parallel_capacity=capacity,
                  cpu_s=(after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return result


def _busy(_) -> int:
    total = 0
    for i in range(5_000_000):
        total += i
    return total


def parallel_capacity() -> float:
    """How many CPUs two processes get together right now: ``2 t1 / t2``, where ``t1`` is the wall time of one
    pure-Python unit of work in one process and ``t2`` of one unit in each of two processes side by side (2.0 on
    an idle machine with two free cores, about 1.0 when the other jobs leave the equivalent of one)."""
    from concurrent.futures import ProcessPoolExecutor

    times = []
    for n in (1, 2):
        with ProcessPoolExecutor(n) as pool:
            list(pool.map(_busy, range(n)))   # (the workers start before the clock)
            start = time.perf_counter()
            list(pool.map(_busy, range(n)))
            times.append(time.perf_counter() - start)
    return 2 * times[0] / times[1]


def table(rows: list) -> list:
    lines = ["| seed | workers | NashConv | wall s | wall s without measuring | wall s of iterations 2.. | CPU s | "
             "load before | CPUs for 2 processes | fixed policies |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['seed']} | {r['workers']} | {r['nash_conv']:.4f} | {r['wall_s']:.1f} | "
                     f"{r['wall_s_without_measuring']:.1f} | {r['steady_wall_s']:.1f} | {r['cpu_s']:.1f} | "
                     f"{r['load_before']:.2f} | {r['parallel_capacity']:.2f} | {r['populations']} |")
    return lines


def summary(rows: list) -> list:
    lines = ["| workers | median NashConv | median wall s | median wall s without measuring | median wall s of "
             "iterations 2.. | median CPU s |", "|---|---|---|---|---|---|"]
    for w in WORKERS:
        mine = [r for r in rows if r["workers"] == w]
        lines.append(f"| {w} | {statistics.median(r['nash_conv'] for r in mine):.4f} | "
                     f"{statistics.median(r['wall_s'] for r in mine):.1f} | "
                     f"{statistics.median(r['wall_s_without_measuring'] for r in mine):.1f} | "
                     f"{statistics.median(r['steady_wall_s'] for r in mine):.1f} | "
                     f"{statistics.median(r['cpu_s'] for r in mine):.1f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--iterations", type=int, default=8)
    parser.add_argument("--steps", type=int, default=8192, help="PPO steps per training chunk")
    parser.add_argument("--single", type=int, nargs=2, metavar=("SEED", "WORKERS"), help=argparse.SUPPRESS)
    parser.add_argument("--out", default=None, help="where to write the markdown table (the CSV beside it)")
    parser.add_argument("--quick", action="store_true", help="seed 0 only, 2 iterations, chunks of 1024 steps")
    args = parser.parse_args()
    if args.single is not None:
        print(json.dumps(single_run(*args.single, args.iterations, args.steps)))
        return
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    path = harness.output_path(parser, args, RESULTS)
    if args.quick:
        args.seeds, args.iterations, args.steps = [0], 2, 1024
    rows = []
    for seed in args.seeds:
        order = WORKERS if seed % 2 == 0 else WORKERS[::-1]
        runs = {w: measured_run(seed, w, args.iterations, args.steps) for w in order}
        same = runs[1]["history"] == runs[2]["history"]
        for w in WORKERS:
            runs[w]["same_history"] = same
            rows.append(runs[w])
            logger.info("seed %d, %d worker(s): NashConv %.4f, wall %.1f s, CPU %.1f s, same history: %s", seed, w,
                        runs[w]["nash_conv"], runs[w]["wall_s"], runs[w]["cpu_s"], same)
    path.parent.mkdir(parents=True, exist_ok=True)
    import pandas as pd

    pd.DataFrame([{k: v for k, v in r.items() if k != "history"} for r in rows]).to_csv(path.with_suffix(".csv"),
                                                                                      index=False)
    identical = all(r["same_history"] for r in rows)
    text = ["# Pipeline PSRO on Leduc poker: 1 worker against 2", "",
            f"`experiments/benchmarks/pipeline_psro_workers.py --seeds {' '.join(map(str, args.seeds))} "
            f"--iterations {args.iterations} --steps {args.steps}`, "
            f"config `{CONFIG.relative_to(harness.REPO_ROOT)}`, measured "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {os.cpu_count()} CPUs.", "",
            f"Histories identical (every column but the clocks) with 1 and 2 workers for every seed: **{identical}**.",
            "", *summary(rows), "", *table(rows), ""]
    Path(path).write_text("\n".join(text))
    logger.info("wrote %s", path)


if __name__ == "__main__":
    main()
