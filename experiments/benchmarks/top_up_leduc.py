"""Sampled PSRO on Leduc poker with and without the Monte Carlo top-up, at equal total episodes.

Every configuration runs ``--iterations`` PSRO iterations (Nash meta-solver,
exact best responses, ``evaluator="monte_carlo"``) from the same seeds:

* ``base``: ``--episodes`` episodes per new profile, no top-up;
* ``more``: no top-up, but ``--episodes + budget / (iterations + 1)`` episodes
  per new profile, so that after the last iteration it has recorded as many
  episodes as the top-up runs (``episodes`` column of the history);
* ``support`` / ``rgucb``: ``--episodes`` per new profile plus ``--budget``
  top-up episodes per iteration (``top_up_method`` ``"support"`` or
  ``"response_graph_ucb"``, ``--rounds`` rounds);
* ``exact``: the sequence-form evaluator, the floor the sampled runs approach.

NashConv (the history's ``gap``) is exact: best responses in the full game to
the meta-strategy of the sampled meta-game. Wall times are those of the
history (``run()`` only; the game tree is built before). The configurations
of one seed run back to back, in one process, after an untimed warm-up run;
the tables report medians over seeds. OpenSpiel's psro_v2 has no top-up (it
samples a fixed ``sims_per_entry`` per new entry, like ``base``), so it is
not part of this comparison; ``psro_leduc.py`` compares the loops.

Run with BLAS pinned::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python -m experiments.benchmarks.top_up_leduc --seeds 5 --iterations 20

``--quick`` is a smoke run (2 seeds, 4 iterations).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from experiments import harness

harness.pin_threads()

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

RESULTS = harness.BENCHMARKS / "results" / "top_up_leduc.md"


def configurations(episodes: int, budget: int, iterations: int, rounds: int) -> dict:
    more = episodes + round(budget / (iterations + 1))
    mc = dict(evaluator="monte_carlo")
    return {
        "base": dict(mc, evaluator_options=dict(episodes_per_profile=episodes)),
        "more": dict(mc, evaluator_options=dict(episodes_per_profile=more)),
        "support": dict(mc, evaluator_options=dict(episodes_per_profile=episodes), top_up_episodes=budget,
                        top_up_method="support", top_up_rounds=rounds),
        "rgucb": dict(mc, evaluator_options=dict(episodes_per_profile=episodes), top_up_episodes=budget,
                      top_up_method="response_graph_ucb", top_up_rounds=rounds),
        "exact": dict(evaluator="sequence_form"),
    }


def run_one(game: str, seed: int, iterations: int, options: dict) -> pd.DataFrame:
    from psro import PSRO

    solver = PSRO(game, meta_solver="nash", oracle="exact", seed=seed, progress=False, **options)
    history = solver.run(iterations=iterations)
    return history[["iteration", "gap", "episodes", "top_up_episodes", "wall_time", "time_evaluation"]]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", default="leduc_poker")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--episodes", type=int, default=100, help="episodes per new profile")
    parser.add_argument("--budget", type=int, default=2000, help="top-up episodes per iteration")
    parser.add_argument("--rounds", type=int, default=4, help="top-up rounds per iteration")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=None,
                        help="markdown report to write, with a .csv beside it (default: top_up_leduc.md under "
                             "results/ for a default run, a new folder under runs/ otherwise)")
    args = parser.parse_args(argv)
    args.out = str(harness.output_path(parser, args, RESULTS))
    if args.quick:
        args.seeds, args.iterations = 2, 4
    configs = configurations(args.episodes, args.budget, args.iterations, args.rounds)
    run_one(args.game, 0, 2, configs["support"])   # warm-up: imports, first solves
    rows = []
    started = time.perf_counter()
    for seed in range(args.seeds):
        for name, options in configs.items():
            history = run_one(args.game, seed, args.iterations, options)
            rows.append(history.assign(config=name, seed=seed))
            print(f"seed {seed} {name:8s} NashConv {history['gap'].iloc[-1]:.4f} "
                  f"episodes {int(history['episodes'].iloc[-1])} wall {history['wall_time'].iloc[-1]:.2f}s",
                  flush=True)
    data = pd.concat(rows, ignore_index=True)
    report = summarise(data, args, time.perf_counter() - started)
    print(report)
    Path(args.out).write_text(report)
    data.to_csv(Path(args.out).with_suffix(".csv"), index=False, float_format="%.6g")
    return 0


def summarise(data: pd.DataFrame, args, seconds: float) -> str:
    checkpoints = sorted({max(1, args.iterations // 4), args.iterations // 2, 3 * args.iterations // 4,
                          args.iterations})
    half = args.iterations // 2
    med = data.groupby(["config", "iteration"]).median(numeric_only=True)
    order = ["exact", "base", "more", "support", "rgucb"]
    lines = [
        f"# Sampled PSRO on {args.game}: Monte Carlo top-up against no top-up at equal total episodes",
        "",
        f"Command: `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python "
        f"-m experiments.benchmarks.top_up_leduc --seeds {args.seeds} --iterations {args.iterations} "
        f"--episodes {args.episodes} --budget {args.budget} --rounds {args.rounds}` "
        f"({seconds:.0f} s; machine shared with other jobs, so compare medians and ratios).",
        "",
        f"Medians over {args.seeds} seeds of the exact NashConv of the meta-strategy, and of the wall seconds of "
        "`run()`, after the given iteration. `more` plays as many episodes per new profile as makes its total "
        "at the last iteration equal to the top-up runs'.",
        "",
        "| config | " + " | ".join(f"NashConv @{t}" for t in checkpoints)
        + f" | mean NashConv @{half}-{args.iterations} | episodes @last | wall s @last"
        " | evaluation s @last iteration |",
        "|---" * (len(checkpoints) + 5) + "|",
    ]
    late = (data[data["iteration"] >= half].groupby(["config", "seed"])["gap"].mean()
            .unstack("config"))   # per seed: the mean NashConv over the second half of the run
    for name in order:
        if name not in med.index.get_level_values(0):
            continue
        m = med.loc[name]
        gaps = " | ".join(f"{m.loc[t, 'gap']:.3f}" for t in checkpoints)
        lines.append(f"| {name} | {gaps} | {late[name].median():.3f} | {int(m.loc[args.iterations, 'episodes'])} | "
                     f"{m.loc[args.iterations, 'wall_time']:.2f} | {m.loc[args.iterations, 'time_evaluation']:.3f} |")
    last = data[data["iteration"] == args.iterations].pivot(index="seed", columns="config", values="gap")
    shown = [c for c in order if c in last.columns]
    lines += ["", f"Per seed, NashConv at the last iteration (and its mean over iterations {half}-{args.iterations}):",
              "", "| seed | " + " | ".join(shown) + " |", "|---" * (1 + len(shown)) + "|"]
    for seed, row in last.iterrows():
        lines.append(f"| {seed} | " + " | ".join(f"{row[c]:.3f} ({late.loc[seed, c]:.3f})" for c in shown) + " |")
    wall = data[data["iteration"] == args.iterations].pivot(index="seed", columns="config", values="wall_time")
    lines += ["", "Against `more` (same total episodes at the last iteration), per seed:", ""]
    for c in ("support", "rgucb"):
        if c not in last.columns:
            continue
        lines.append(
            f"- `{c}`: lower last NashConv on {int((last[c] < last['more']).sum())} of {len(last)} seeds "
            f"(median ratio {statistics.median(last[c] / last['more']):.2f}); lower mean NashConv over "
            f"iterations {half}-{args.iterations} on {int((late[c] < late['more']).sum())} of {len(late)} "
            f"(median ratio {statistics.median(late[c] / late['more']):.2f}); median wall-time ratio "
            f"{statistics.median(wall[c] / wall['more']):.2f}.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    np.seterr(all="ignore")
    raise SystemExit(main())
