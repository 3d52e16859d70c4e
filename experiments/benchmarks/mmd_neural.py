"""Neural MMD self-play against tabular MMD on Kuhn and Leduc poker, by exact NashConv of the last iterate.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python -m experiments.benchmarks.mmd_neural

* tabular: :func:`psro.family.mmd.magnetic_mirror_descent` (sequence form, dilated entropy) with temperature
  ``alpha`` 0.05 and 0.1 at OpenSpiel's default step, the last iterate's NashConv after 1,000 iterations (its
  fixed point is the alpha-QRE, whose NashConv is the floor a last iterate with that entropy can reach);
* neural: ``algorithm: mmd`` (:class:`psro.family.policy_gradient.MMDSelfPlay`) with its defaults but networks of
  one hidden layer of 64, seeds 0-2 (no tuning: the defaults are the phantom tic-tac-toe benchmark's), for
  ``--seconds`` wall seconds per game on one core; the history's ``gap`` is the exact NashConv of the current
  policies (the tree fits), reported at a quarter and half of the budget and on the last row (median of the
  seeds).

``--quick`` runs Kuhn only, 20 s and one seed, and writes under ``runs/``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from experiments import harness

harness.pin_threads()

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

SECONDS = {"kuhn_poker": 60.0, "leduc_poker": 180.0}


def neural(game: str, seconds: float, seed: int) -> pd.DataFrame:
    from psro.family.policy_gradient import MMDSelfPlay

    loop = MMDSelfPlay(game, progress=False, seed=seed, algorithm_options={"hidden": [64]})
    return loop.run(time_limit=seconds)[["iteration", "gap", "wall_time", "env_steps"]]


def gap_at(history: pd.DataFrame, seconds: float) -> float:
    """The gap of the last row measured by ``seconds`` of wall time."""
    rows = history[history["wall_time"] <= seconds]
    return float(rows["gap"].iloc[-1]) if len(rows) else float("nan")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=None, help="wall seconds per neural run (default: per game)")
    parser.add_argument("--seeds", type=int, default=3, help="neural seeds 0..n-1")
    parser.add_argument("--quick", action="store_true", help="Kuhn only, 20 s, one seed")
    parser.add_argument("--out", type=Path, default=None,
                        help="markdown (default: mmd_neural.md under results/ for a default run, runs/ otherwise)")
    args = parser.parse_args(argv)
    out = harness.output_path(parser, args, harness.BENCHMARKS / "results" / "mmd_neural.md")
    games = dict(SECONDS)
    if args.quick:
        games, args.seeds = {"kuhn_poker": 20.0}, 1
    if args.seconds is not None:
        games = dict.fromkeys(games, args.seconds)
    from psro.family.mmd import magnetic_mirror_descent

    rows = []
    for game, seconds in games.items():
        for alpha in (0.05, 0.1):
            result = magnetic_mirror_descent(game, iterations=1000, alpha=alpha, nash_conv_every=0)
            rows.append({"game": game, "side": f"tabular MMD, alpha {alpha}, 1,000 iterations",
                         "NashConv": round(float(result.nash_conv[-1]), 4), "at 1/4": "", "at 1/2": "",
                         "decisions": ""})
            print(rows[-1], flush=True)
        runs = [neural(game, seconds, seed) for seed in range(args.seeds)]
        rows.append({"game": game, "side": f"neural MMD (algorithm: mmd), {seconds:g} s, median of {args.seeds}",
                     "NashConv": round(float(np.median([h["gap"].iloc[-1] for h in runs])), 4),
                     "at 1/4": round(float(np.median([gap_at(h, seconds / 4) for h in runs])), 4),
                     "at 1/2": round(float(np.median([gap_at(h, seconds / 2) for h in runs])), 4),
                     "decisions": int(np.median([h["env_steps"].iloc[-1] for h in runs]))})
        rows[-1]["seeds"] = " ".join(f"{h['gap'].iloc[-1]:.4f}" for h in runs)
        print(rows[-1], flush=True)
    table = pd.DataFrame(rows).fillna("")
    text = (f"# Neural MMD self-play against tabular MMD\n\n`{harness.command_line()}`\n\n"
            "Exact NashConv of the last iterate (the uniform profile's: Kuhn 0.9167, Leduc 4.7472). Uniform "
            "starting networks, one core.\n\n" + harness.pipe_table(table) + "\n")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(text)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
