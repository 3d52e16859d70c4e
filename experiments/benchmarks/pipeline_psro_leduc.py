"""Pipeline PSRO beside deep PSRO on Leduc poker: exact NashConv against wall time and against environment steps.

Per seed, two runs, one after the other, each in a fresh Python process and under the same wall-clock budget
(``--seconds``, the loop's ``time_limit``):

* **PSRO**: ``experiments/configs/leduc_deep.yaml`` (PPO responses of 8192 steps on sampled play, Monte Carlo
  meta-game), serial, one core;
* **P2SRO**: ``experiments/configs/leduc_pipeline_psro.yaml`` (two PPO levels per player, chunks of 4096 steps, the
  lowest fixed on a plateau or after 4 chunks) on a process pool of 2 workers (``--workers``).

Both measure the exact NashConv of their meta-Nash every iteration (the tree of Leduc fits; the networks are
tabularised for it), and neither uses the tree to train. P2SRO uses up to two cores and PSRO one, as in the paper's
comparison of parallel methods by wall time; the env-steps axis shows what each learner step bought. The load
average of the (possibly shared) machine is recorded with each run.

Run (about ``seeds x 2 x seconds`` of wall time)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python -m experiments.benchmarks.pipeline_psro_leduc

``--seeds`` (default 0), ``--seconds`` (default 150), ``--workers`` (default 2). Results:
``results/pipeline_psro_leduc.{csv,md,png}`` with the default options, else under ``runs/``. ``--quick`` gives each
side 8 seconds with the small PPO calls of :data:`QUICK_FIELDS`.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import time

from experiments import harness

harness.pin_threads()

logger = logging.getLogger("pipeline_psro_leduc")

CONFIGS = {"PSRO": "leduc_deep.yaml", "P2SRO": "leduc_pipeline_psro.yaml"}
RESULTS = harness.BENCHMARKS / "results" / "pipeline_psro_leduc.md"
COLUMNS = ["iteration", "gap", "wall_time", "cpu_time", "env_steps", "population_0"]
#: ``--quick``: each side's config with PPO calls of one rollout and short evaluations.
QUICK_FIELDS = {"oracle_options.total_steps": 1024, "episodes_per_profile": 20}
QUICK_SECONDS = 8.0


def single_run(side: str, seed: int, seconds: float, workers: int, quick: bool = False) -> dict:
    """One run of ``side`` in this process: its config with ``seed`` and the wall budget (and, ``quick``,
    :data:`QUICK_FIELDS`)."""
    import yaml

    from psro import PSROConfig, algorithm_class
    from psro.config.fields import field_changes

    fields = yaml.safe_load((harness.REPO_ROOT / "experiments" / "configs" / CONFIGS[side]).read_text())
    fields.update(field_changes(dict(seed=seed, progress=False, time_limit=seconds, iterations=None,
                                     approx_gap_every=None, executor="serial" if side == "PSRO" else str(workers),
                                     **(QUICK_FIELDS if quick else {})), fields.get))
    config = PSROConfig.from_dict(fields)
    with algorithm_class(config.algorithm)(config) as solver:
        history = solver.run(time_limit=seconds, iterations=10_000)
    return {"rows": history[COLUMNS].to_dict(orient="list")}


def measured(side: str, seed: int, seconds: float, workers: int, quick: bool = False) -> list:
    load = os.getloadavg()[0]
    # (as a module from the repository root: run by its path, the script cannot import the experiments package)
    out = subprocess.run([sys.executable, "-m", __spec__.name, "--single", side, str(seed), "--seconds", str(seconds),
                          "--workers", str(workers), *(["--quick"] if quick else [])],
                         cwd=harness.REPO_ROOT, check=True, capture_output=True, text=True)
    rows = json.loads(out.stdout.strip().splitlines()[-1])["rows"]
    n = len(rows["iteration"])
    return [{"side": side, "seed": seed, "load_before": load, **{c: rows[c][i] for c in COLUMNS}} for i in range(n)]


def figure(frame, path) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 4))
    axes = fig.subplots(1, 2)
    for (side, seed), group in frame.groupby(["side", "seed"]):
        for ax, x in zip(axes, ("wall_time", "env_steps")):
            ax.plot(group[x], group["gap"], marker=".", label=f"{side} seed {seed}")
    for ax, x in zip(axes, ("wall time (s)", "environment steps")):
        ax.set_xlabel(x)
        ax.set_ylabel("exact NashConv")
        ax.set_yscale("log")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--seconds", type=float, default=150.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--single", nargs=2, metavar=("SIDE", "SEED"), help=argparse.SUPPRESS)
    parser.add_argument("--out", default=None, help="where to write the markdown summary (CSV and PNG beside it)")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_SECONDS:g} s per side, PPO calls of 1024 steps")
    args = parser.parse_args()
    seconds = QUICK_SECONDS if args.quick else args.seconds
    if args.single is not None:
        print(json.dumps(single_run(args.single[0], int(args.single[1]), seconds, args.workers, args.quick)))
        return
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    import pandas as pd

    rows = []
    for seed in args.seeds:
        for side in CONFIGS:
            rows += measured(side, seed, seconds, args.workers, args.quick)
            last = rows[-1]
            logger.info("%s seed %d: NashConv %.4f after %d iterations, %.0f s, %d env steps", side, seed,
                        last["gap"], last["iteration"], last["wall_time"], last["env_steps"])
    frame = pd.DataFrame(rows)
    path = harness.output_path(parser, args, RESULTS)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path.with_suffix(".csv"), index=False)
    figure(frame, path.with_suffix(".png"))
    final = frame.groupby(["side", "seed"]).tail(1)
    lines = ["# Pipeline PSRO beside deep PSRO on Leduc poker", "",
             f"`experiments/benchmarks/pipeline_psro_leduc.py --seeds {' '.join(map(str, args.seeds))} --seconds "
             f"{seconds:g} --workers {args.workers}{' --quick' if args.quick else ''}`, measured "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {os.cpu_count()} CPUs (load average before "
             "each run in the table).", "",
             "| side | seed | iterations | exact NashConv | wall s | env steps | population per player | load before |",
             "|---|---|---|---|---|---|---|---|"]
    for r in final.itertuples(index=False):
        lines.append(f"| {r.side} | {r.seed} | {r.iteration} | {r.gap:.4f} | {r.wall_time:.0f} | {r.env_steps} | "
                     f"{r.population_0} | {r.load_before:.2f} |")
    lines += ["", f"Curves: `{path.with_suffix('.png').name}`; every row: `{path.with_suffix('.csv').name}`.", ""]
    path.write_text("\n".join(lines))
    logger.info("wrote %s", path)


if __name__ == "__main__":
    main()
