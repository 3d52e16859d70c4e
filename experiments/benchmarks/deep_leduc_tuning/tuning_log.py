"""The tuning log of the learned path on Leduc (issue #28, item 4): one row per (candidate, seed) from the CSVs
that ``deep_psro_leduc.py --sides ours --config deep_leduc_tuning/<candidate>.yaml --seed-offset 10 --clock cpu``
wrote, with the candidate's description (its config's first comment line) and its exact NashConv at the report
times of the CPU clock.

Run::

    python experiments/benchmarks/deep_leduc_tuning/tuning_log.py runs/tune/B_s10.csv runs/tune/C_s10.csv ...

It copies each CSV to ``results/deep_leduc_tuning/<name>.csv`` (so the log can be rebuilt from the committed
files: pass those) and writes ``results/deep_leduc_tuning.md``, followed by
``deep_leduc_tuning/notes.md``. A CSV's name is ``<candidate>_s<seed>[_<budget>]``.
"""

from __future__ import annotations

import math
import shutil
import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "results"
TIMES = (60, 120, 300, 600, 900)


def describe(candidate: str) -> str:
    """The first comment line of the candidate's config, without its ``# X:`` prefix."""
    first = (HERE / f"{candidate}.yaml").read_text().splitlines()[0]
    return first.lstrip("# ").split(":", 1)[1].strip()


def value_at(rows: pd.DataFrame, t: float) -> float:
    """NashConv of the last iteration finished by CPU second ``t`` (NaN before the first, or past the budget)."""
    done = rows[rows.cpu_s <= t]
    return math.nan if done.empty or rows.cpu_s.max() < 0.9 * t - 30 else float(done.nash_conv.iloc[-1])


def main(paths: list) -> None:
    (RESULTS / "deep_leduc_tuning").mkdir(parents=True, exist_ok=True)
    lines = ["# Tuning the learned path on Leduc (issue #28, item 4): tuning seeds, CPU clock", "",
             "Each row: `python -m experiments.benchmarks.deep_psro_leduc --sides ours --seeds 1 --seed-offset SEED "
             "--clock cpu --budget BUDGET --config experiments/benchmarks/deep_leduc_tuning/CANDIDATE.yaml`, one "
             "thread per training process, on the shared 2-core machine (the CPU clock makes the budget "
             "independent of the load; how many ran at once, and the wall-clock rows, are in the notes below). "
             "Exact NashConv of the output (PSRO: its meta-strategy; NFSP: its average policies; the tree is built "
             "for measuring only) at CPU seconds; blank: past the run's budget. The candidates' configs are in "
             "`experiments/benchmarks/deep_leduc_tuning/`.", "",
             "| candidate | options | seed | " + " | ".join(f"{t} s" for t in TIMES) + " | iterations | lowest |",
             "|---" * (len(TIMES) + 5) + "|"]
    for path in map(Path, paths):
        kept = RESULTS / "deep_leduc_tuning" / path.name
        if path.resolve() != kept.resolve():
            shutil.copyfile(path, kept)
        rows = pd.read_csv(kept)
        candidate = path.stem.split("_s")[0]
        values = [value_at(rows, t) for t in TIMES]
        lines.append(f"| {candidate} | {describe(candidate)} | {int(rows.seed.iloc[0])} | "
                     + " | ".join("" if math.isnan(v) else f"{v:.3f}" for v in values)
                     + f" | {int(rows.iteration.max())} | {rows.nash_conv.min():.3f} |")
    notes = HERE / "notes.md"   # what the runs showed, written by hand after them
    if notes.exists():
        lines += ["", notes.read_text().rstrip()]
    (RESULTS / "deep_leduc_tuning.md").write_text("\n".join(lines) + "\n")
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
