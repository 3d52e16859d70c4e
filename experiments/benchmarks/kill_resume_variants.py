"""Kill-and-resume trials of the PSRO variants from their shipped configs, with a learned oracle and small budgets.

    python -m experiments.benchmarks.kill_resume_variants [--trials 3] [--iterations 3] [--steps 1024] [--seed 0]
        [--only NAME,...] [--out FILE]

Each config of :data:`CONFIGS` is run as shipped but for a small budget (``--iterations``; PPO calls of ``--steps``
steps; 50 episodes per meta-game profile; no time limit; no approximate gap) and, where the shipped config uses an
exact oracle, with ``oracle: ppo`` instead (the issue's bar is the learned path). One uninterrupted ``psro run``
is the reference; each trial starts the same run in a fresh directory, SIGKILLs it at a seeded point (after the
checkpoint of a uniform iteration ``k < iterations``, plus a delay of up to 1.5 iterations' wall time) and finishes
it with ``psro resume``; its ``population.npz`` (every array, bit for bit) and ``history.csv`` (every column but the
timing ones) are compared with the reference's (:mod:`kill_resume_offline`'s trial). The table counts, per
config, the trials identical to the uninterrupted run.

``--quick`` runs one trial of the first config (unless ``--only`` names others) on runs of 2 iterations of 512-step
PPO calls, and writes under ``runs/``.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from experiments import harness

harness.pin_threads()

import numpy as np  # noqa: E402
import yaml  # noqa: E402

from experiments.benchmarks.kill_resume_offline import trials_of, write_trials  # noqa: E402

#: Config name -> shipped config (under experiments/configs/).
CONFIGS = {
    "symmetric (blotto)": "blotto_symmetric.yaml",
    "rectified_psro": "leduc_rectified.yaml",
    "anytime_psro": "leduc_anytime.yaml",
    "self_play_psro": "leduc_self_play_psro.yaml",
    "diverse_psro": "leduc_diverse.yaml",
    "xdo (NXDO)": "leduc_nxdo.yaml",
    "pipeline_psro": "leduc_pipeline_psro.yaml",
}


def small_config(shipped: Path, folder: Path, iterations: int, steps: int) -> Path:
    """``shipped`` with a small budget and a learned oracle (see the module docstring), written into ``folder``."""
    config = yaml.safe_load(shipped.read_text())
    learned = {"total_steps": steps, "num_envs": 16, "num_steps": 32, "eval_episodes": 50, "hidden": [32]}
    if config.get("oracle", "exact") not in ("ppo", "dqn"):
        config.update(oracle="ppo", evaluator="monte_carlo")
    config["oracle_options"] = {**(config.get("oracle_options") or {}), **learned}
    config.update(iterations=iterations, target_gap=None, time_limit=None, episodes_per_profile=50,
                  approx_gap_every=None)
    config.pop("approx_gap_options", None)
    path = folder / shipped.name
    path.write_text(yaml.safe_dump(config))
    return path


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=3, help="kill-and-resume trials per config")
    parser.add_argument("--iterations", type=int, default=3, help="iterations of each run")
    parser.add_argument("--steps", type=int, default=1024, help="steps of each PPO call")
    parser.add_argument("--seed", type=int, default=0, help="seeds the kill points")
    parser.add_argument("--only", default=None, help="comma-separated names of CONFIGS to run (default: all)")
    parser.add_argument("--quick", action="store_true",
                        help="one trial of the first config (or of --only's), 2 iterations of 512-step calls")
    parser.add_argument("--out", type=Path, default=None,
                        help="CSV of the trials (default: kill_resume_variants.csv under results/ for a default run, "
                             "a new folder under runs/ otherwise)")
    args = parser.parse_args(argv)
    out = harness.output_path(parser, args, harness.BENCHMARKS / "results" / "kill_resume_variants.csv")
    names = list(CONFIGS) if args.only is None else args.only.split(",")
    if args.quick:
        args.trials, args.iterations, args.steps = 1, 2, 512
        names = names[:1] if args.only is None else names
    unknown = sorted(set(names) - set(CONFIGS))
    if unknown:
        parser.error(f"--only: unknown {unknown}; choose from {list(CONFIGS)}")
    rng = np.random.default_rng(args.seed)
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        for n, name in enumerate(names):
            folder = scratch / f"config-{n}"
            folder.mkdir()
            config = small_config(harness.REPO_ROOT / "experiments" / "configs" / CONFIGS[name], folder,
                                  args.iterations, args.steps)
            rows += trials_of(name, "config", config, folder, args.trials, args.iterations, rng)
    write_trials(rows, "config", out)

if __name__ == "__main__":
    main()
