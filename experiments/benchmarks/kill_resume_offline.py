"""Kill-and-resume trials of COffeE-PSRO and offline PSRO: SIGKILL ``psro run`` at varied points, ``psro resume``.

    python -m experiments.benchmarks.kill_resume_offline [--trials 20] [--iterations 4] [--seed 0] [--out FILE]

For each algorithm, one uninterrupted ``psro run`` of a Kuhn poker dataset is the reference. Each trial starts the
same run in a fresh directory and SIGKILLs it at a point drawn from ``--seed``: once its checkpoint has reached
iteration ``k`` (``k`` uniform in ``0 .. iterations - 1``), after a further delay uniform in ``[0, 1.5)`` times one
iteration's wall time, so kills land between checkpoints, during a write, or after the run ended (then the trial
counts as "finished before the kill" and is resumed all the same: ``psro resume`` of a finished run is a no-op).
``psro resume`` then finishes it, and its ``population.npz`` (every array, bit for bit) and ``history.csv`` (every
column but the timing ones) are compared with the reference's. The table counts, per algorithm, trials identical
to the uninterrupted run.

``--quick`` runs one trial per algorithm on runs of 2 iterations and writes under ``runs/``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from experiments import harness

harness.pin_threads()

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from psro.loop.state import untimed  # noqa: E402

ALGORITHMS = ("coffee_psro", "offline_psro")


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=str(harness.REPO_ROOT), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
                MKL_NUM_THREADS="1")


def _psro(*args: str) -> list:
    return [sys.executable, "-m", "psro.run.cli", *args]


def write_config(folder: Path, algorithm: str, iterations: int) -> Path:
    """A Kuhn poker dataset (400 uniform episodes) and a config of ``algorithm`` on it, in ``folder``."""
    import pyspiel

    from games.datasets import collect
    from games.trajectories import save_trajectories

    data = folder / "kuhn.csv"
    if not data.exists():
        game = pyspiel.load_game("kuhn_poker")
        save_trajectories(collect(game, pyspiel.UniformRandomPolicy(game), episodes=400, seed=3), data)
    config = folder / f"{algorithm}.yaml"
    config.write_text(f"game: kuhn_poker\nalgorithm: {algorithm}\nseed: 1\niterations: {iterations}\n"
                      f"algorithm_options:\n  dataset: {data}\n  members: 3\n")
    return config


def checkpoint_iteration(run_dir: Path) -> int:
    """The iteration of the checkpoint in ``run_dir`` (an offline loop's or any other loop's; -1 without one, or
    while it is being replaced)."""
    for name in ("offline_checkpoint.json", "checkpoint.json"):
        try:
            return int(json.loads((run_dir / "checkpoint" / name).read_bytes())["iteration"])
        except (OSError, ValueError, KeyError):
            continue
    return -1


def killed_run(config: Path, run_dir: Path, after: int, delay: float) -> str:
    """Start ``psro run`` and SIGKILL it ``delay`` seconds after its checkpoint reached ``after``; say how it ended."""
    proc = subprocess.Popen(_psro("run", str(config), "--out", str(run_dir)), env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 300
    while proc.poll() is None and checkpoint_iteration(run_dir) < after and time.time() < deadline:
        time.sleep(0.005)
    time.sleep(delay)
    if proc.poll() is not None:
        proc.wait()
        return "finished before the kill"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    return f"killed after iteration {checkpoint_iteration(run_dir)}"


def same_outputs(reference: Path, run_dir: Path) -> list:
    """What differs between two run directories' population.npz and history.csv (empty: identical)."""
    problems = []
    with np.load(reference / "population.npz") as a, np.load(run_dir / "population.npz") as b:
        if sorted(a.files) != sorted(b.files):
            problems.append(f"population.npz keys {sorted(set(a.files) ^ set(b.files))}")
        for key in sorted(set(a.files) & set(b.files)):
            x, y = a[key], b[key]
            nan_ok = x.dtype.kind == "f" and y.dtype.kind == "f"
            if x.shape != y.shape or x.dtype != y.dtype or not np.array_equal(x, y, equal_nan=nan_ok):
                problems.append(f"population.npz[{key!r}]")
    ha, hb = (untimed(pd.read_csv(d / "history.csv")) for d in (reference, run_dir))
    if not ha.equals(hb):
        problems.append("history.csv")
    return problems


def trial(config: Path, reference: Path, run_dir: Path, after: int, delay: float) -> dict:
    """One kill-and-resume trial: how it was killed, whether the resume succeeded, and what differs."""
    how = killed_run(config, run_dir, after, delay)
    if checkpoint_iteration(run_dir) < 0:
        return {"killed": how, "resumed": False, "differences": "no checkpoint (killed before the first)"}
    proc = subprocess.run(_psro("resume", str(run_dir)), env=_env(), capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        return {"killed": how, "resumed": False, "differences": proc.stderr.strip().splitlines()[-1]}
    return {"killed": how, "resumed": True, "differences": "; ".join(same_outputs(reference, run_dir))}


def trials_of(label: str, key: str, config: Path, folder: Path, trials: int, iterations: int, rng) -> list:
    """The uninterrupted reference run of ``config`` in ``folder``, then ``trials`` kill-and-resume trials of it
    (killed after a checkpoint at a uniform iteration ``< iterations``, plus a delay of up to 1.5 iterations' wall
    time, drawn from ``rng``); one row per trial, ``{key: label, ...}``."""
    reference = folder / "reference"
    start = time.perf_counter()
    subprocess.run(_psro("run", str(config), "--out", str(reference)), env=_env(), check=True,
                   stdout=subprocess.DEVNULL)
    history = pd.read_csv(reference / "history.csv")
    per_iteration = float(history["wall_time"].diff().iloc[1:].mean())
    print(f"{label}: reference run {time.perf_counter() - start:.1f} s, {per_iteration:.3f} s per iteration, "
          f"final gap {history['gap'].iloc[-1]:.4f}", flush=True)
    rows = []
    for t in range(trials):
        after = int(rng.integers(0, iterations))
        delay = float(rng.uniform(0.0, 1.5)) * per_iteration
        row = {key: label, "trial": t, "after_iteration": after, "delay_s": round(delay, 4),
               **trial(config, reference, folder / f"trial-{t}", after, delay)}
        row["identical"] = row["resumed"] and not row["differences"]
        rows.append(row)
        print(f"  trial {t}: {row['killed']}; identical: {row['identical']} {row['differences']}", flush=True)
    return rows


def write_trials(rows: list, key: str, out: Path) -> None:
    """Print the trials counted per ``key`` (killed, identical) and write them to the CSV ``out``."""
    table = pd.DataFrame(rows)
    summary = table.groupby(key, sort=False).agg(trials=("trial", "size"), killed=("killed", lambda k: int(
        k.str.startswith("killed").sum())), identical=("identical", "sum"))
    print(summary.to_string(), flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out, index=False)
    print(f"wrote {out}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20, help="kill-and-resume trials per algorithm")
    parser.add_argument("--iterations", type=int, default=4, help="iterations of each run")
    parser.add_argument("--seed", type=int, default=0, help="seeds the kill points")
    parser.add_argument("--quick", action="store_true", help="one trial per algorithm, 2 iterations")
    parser.add_argument("--out", type=Path, default=None,
                        help="CSV of the trials (default: kill_resume_offline.csv under results/ for a default run, "
                             "a new folder under runs/ otherwise)")
    args = parser.parse_args(argv)
    out = harness.output_path(parser, args, harness.BENCHMARKS / "results" / "kill_resume_offline.csv")
    if args.quick:
        args.trials, args.iterations = 1, 2
    rng = np.random.default_rng(args.seed)
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        for algorithm in ALGORITHMS:
            config = write_config(scratch, algorithm, args.iterations)
            folder = scratch / algorithm
            folder.mkdir()
            rows += trials_of(algorithm, "algorithm", config, folder, args.trials, args.iterations, rng)
    write_trials(rows, "algorithm", out)

if __name__ == "__main__":
    main()
