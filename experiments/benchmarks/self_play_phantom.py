"""PPO self-play and MMD self-play on phantom tic-tac-toe from their shipped configs: a timed run, a resume with
more time, the exact gap on the rows asked for, and kill-and-resume trials.

    python -m experiments.benchmarks.self_play_phantom [--seconds 120] [--more 60] [--trials 2] [--quick] [--out FILE]

For each config of :data:`CONFIGS`:

* **timed**: ``psro run CONFIG --time-limit SECONDS`` then ``psro resume RUN --time-limit W`` where ``W`` is the
  first part's ``wall_time`` plus ``--more`` (the limit counts the whole run, resumed parts included); the table
  gives each part's iterations, decisions and last row's exact gap (the compiled evaluator measures the last row
  of each ``run`` call, ``exact_gap_every: 1000``) and its seconds;
* **kill**: the config with ``iterations: 3``, no exact or approximate gap and 64 episodes per profile; an
  uninterrupted reference and ``--trials`` runs SIGKILLed at a seeded point and finished with ``psro resume``
  (:func:`experiments.benchmarks.kill_resume_offline.trials_of`), compared with the reference (``population.npz``
  bit for bit, ``history.csv`` but its time columns).

``--quick`` runs 20 s parts and one trial per config, and writes under ``runs/``.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

from experiments import harness

harness.pin_threads()

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import yaml  # noqa: E402

from experiments.benchmarks.kill_resume_offline import _env, _psro, trials_of  # noqa: E402

CONFIGS = {"ppo_self_play": "phantom_ttt_ppo_self_play.yaml", "mmd": "phantom_ttt_mmd.yaml"}


def timed(config: Path, run_dir: Path, seconds: float, more: float) -> list:
    """The two parts of the timed run (see the module docstring): one row each."""
    rows = []
    subprocess.run(_psro("run", str(config), "--out", str(run_dir), "--time-limit", str(seconds)), env=_env(),
                   check=True, stdout=subprocess.DEVNULL)
    for part in ("run", "resume"):
        if part == "resume":
            limit = float(pd.read_csv(run_dir / "history.csv")["wall_time"].iloc[-1]) + more
            subprocess.run(_psro("resume", str(run_dir), "--time-limit", str(limit)), env=_env(), check=True,
                           stdout=subprocess.DEVNULL)
        history = pd.read_csv(run_dir / "history.csv")
        measured = history[history["gap"].notna()]
        last = history.iloc[-1]
        rows.append({"part": part, "rows": len(history), "last_iteration": int(last["iteration"]),
                     "decisions": int(last["env_steps"]), "wall_time_s": round(float(last["wall_time"]), 1),
                     "exact_gap_rows": " ".join(str(int(i)) for i in measured["iteration"]),
                     "last_gap": round(float(last["gap"]), 6),
                     "last_exact_gap_time_s": round(float(last["exact_gap_time"]), 1)})
    return rows


def small(shipped: Path, folder: Path) -> Path:
    config = yaml.safe_load(shipped.read_text())
    config.update(iterations=3, time_limit=None, exact_gap=False, approx_gap_every=None, episodes_per_profile=64)
    path = folder / shipped.name
    path.write_text(yaml.safe_dump(config))
    return path


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=120.0, help="time limit of the first part")
    parser.add_argument("--more", type=float, default=60.0, help="seconds the resumed part adds")
    parser.add_argument("--trials", type=int, default=2, help="kill-and-resume trials per config")
    parser.add_argument("--seed", type=int, default=0, help="seeds the kill points")
    parser.add_argument("--quick", action="store_true", help="20 s parts, one trial")
    parser.add_argument("--out", type=Path, default=None,
                        help="markdown of the tables (default: self_play_phantom.md under results/ for a default "
                             "run, a new folder under runs/ otherwise)")
    args = parser.parse_args(argv)
    out = harness.output_path(parser, args, harness.BENCHMARKS / "results" / "self_play_phantom.md")
    if args.quick:
        args.seconds, args.more, args.trials = 20.0, 10.0, 1
    configs = harness.REPO_ROOT / "experiments" / "configs"
    rng = np.random.default_rng(args.seed)
    timed_rows, kill_rows = [], []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, file in CONFIGS.items():
            for row in timed(configs / file, folder / f"{name}-timed", args.seconds, args.more):
                timed_rows.append({"algorithm": name, **row})
                print(timed_rows[-1], flush=True)
            (folder / name).mkdir()
            kill_rows += trials_of(name, "algorithm", small(configs / file, folder / name), folder / name,
                                   args.trials, 3, rng)
    kills = pd.DataFrame(kill_rows)[["algorithm", "trial", "after_iteration", "delay_s", "killed", "resumed",
                                     "identical", "differences"]]
    text = (f"# PPO self-play and MMD self-play on phantom tic-tac-toe\n\n`{harness.command_line()}`\n\n"
            f"## Timed run ({args.seconds:g} s), then resumed with {args.more:g} s more\n\n"
            f"{harness.pipe_table(pd.DataFrame(timed_rows))}\n\n"
            f"## Kill and resume (3 iterations, SIGKILL at a seeded point)\n\n{harness.pipe_table(kills)}\n")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(text)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
