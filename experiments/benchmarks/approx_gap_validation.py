"""Validation of ``approx_gap`` where the truth is known: the lower bound against the exact gap of the same
meta-strategy, at every measured row.

Deep PSRO (``oracle="ppo"``, Monte Carlo meta-game, Nash meta-solver) runs on games whose tree fits, so every
row has both the exact NashConv of the eval meta-strategy (``gap``, the tree) and ``approx_gap`` with its
standard error ``se`` (learned responses and sampled play, :mod:`psro.measures.approximate_gap`, measured every
``--every`` iterations and on the last row, with its default budget). For each game, oracle budget (PPO steps per
response: the default 20,000 and a small one) and seed, every measured row is checked:

* **validity** (a lower bound): ``approx_gap - 2 se <= gap`` and ``approx_gap - 3 se <= gap``;
* **never below the meta-game's own regret**: ``approx_gap + 2 se >= max(0, meta_gap)``;
* **strength**: ``approx_gap / gap``, and on Leduc whether ``approx_gap >= 0.5 gap`` at every row with
  ``gap >= 0.3``.

The rows go to ``results/approx_gap_validation.csv``, the summary to ``results/approx_gap_validation.md``.

Run with BLAS pinned::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python -m experiments.benchmarks.approx_gap_validation

``--share`` sets ``approx_gap_options``' ``share``: by default null, so that every due row is measured with the
full estimator (fresh and warm-started responses); ``--share 0.2``, a run's default, measures what the share
allows (the best member and the step's own responses where training does not fit) and skips rows it does not.

``--lbr 32`` adds a local best response to the candidates (:mod:`psro.measures.local_best_response`).

``--quick`` is a smoke run (Kuhn, one seed, the small budget, 2 iterations); ``--games`` picks games from
:data:`GAMES` (``goofspiel5``: 5 cards, descending point order, imperfect information, whose tree fits).
"""

from __future__ import annotations

import argparse
import itertools
import logging
import math
import time
from pathlib import Path

from experiments import harness

harness.pin_threads()

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

RESULTS = harness.BENCHMARKS / "results" / "approx_gap_validation"

#: The games (their tree fits, so the exact gap is known) by short name
GAMES = {"kuhn": "kuhn_poker", "leduc": "leduc_poker", "liars_dice": "liars_dice(numdice=1)",
         "goofspiel5": "goofspiel(num_cards=5,points_order=descending,imp_info=True)"}


def run_one(game: str, steps: int, seed: int, iterations: int, every: int, episodes_per_profile: int,
            share: float | None = None, lbr: int | None = None, oracle: str = "ppo",
            responder: str | None = None) -> list:
    """The measured rows of one deep-PSRO run with ``oracle`` (``steps`` per response); ``responder`` names
    ``approx_gap_options``' oracle (None: its default, :func:`psro.measures.approx_gap_settings.default_responder`)."""
    from psro import PSRO

    solver = PSRO(GAMES[game], oracle=oracle, evaluator="monte_carlo", episodes_per_profile=episodes_per_profile,
                  oracle_options={"eval_episodes": 200, **({"total_steps": steps} if steps else {})},
                  exact_gap=True, approx_gap_every=every,
                  approx_gap_options={"share": share, "lbr": lbr, "oracle": responder}, seed=seed,
                  progress=False, rank_population=False)
    history = solver.run(iterations=iterations)
    rows = []
    for _, row in history[history["approx_gap"].notna()].iterrows():
        rows.append(dict(game=game, oracle=oracle, oracle_steps=steps, seed=seed, iteration=int(row["iteration"]),
                         gap=float(row["gap"]), meta_gap=float(row["meta_gap"]),
                         approx_gap=float(row["approx_gap"]), se=float(row["approx_gap_stderr"]),
                         approx_gap_time=float(row["approx_gap_time"])))
    return rows


def checks(table: pd.DataFrame) -> pd.DataFrame:
    """The per-row checks of the module docstring."""
    out = table.copy()
    out["valid_2se"] = out["approx_gap"] - 2 * out["se"] <= out["gap"]
    out["valid_3se"] = out["approx_gap"] - 3 * out["se"] <= out["gap"]
    out["above_meta"] = out["approx_gap"] + 2 * out["se"] >= np.maximum(0.0, out["meta_gap"])
    out["ratio"] = out["approx_gap"] / out["gap"]
    out["strong"] = ~(out["gap"] >= 0.3) | (out["approx_gap"] >= 0.5 * out["gap"])
    out["found_0.8"] = ~(out["gap"] >= 0.3) | (out["approx_gap"] >= 0.8 * out["gap"])
    return out


def summary(table: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (game, oracle, steps), part in table.groupby(["game", "oracle", "oracle_steps"], sort=False):
        big = part[part["gap"] >= 0.3]
        rows.append({"game": game, "oracle": oracle, "oracle steps": steps, "rows": len(part),
                     "approx - 2se <= gap": f"{int(part['valid_2se'].sum())}/{len(part)}",
                     "approx - 3se <= gap": f"{int(part['valid_3se'].sum())}/{len(part)}",
                     "approx + 2se >= max(0, meta_gap)": f"{int(part['above_meta'].sum())}/{len(part)}",
                     "approx/gap median": round(float(part["ratio"].median()), 3),
                     "approx/gap min": round(float(part["ratio"].min()), 3),
                     "rows gap >= 0.3 with approx >= 0.5 gap": f"{int((big['approx_gap'] >= 0.5 * big['gap']).sum())}"
                                                               f"/{len(big)}",
                     "rows gap >= 0.3 with approx >= 0.8 gap": f"{int((big['approx_gap'] >= 0.8 * big['gap']).sum())}"
                                                               f"/{len(big)}",
                     "median se": round(float(part["se"].median()), 4),
                     "median approx_gap s": round(float(part["approx_gap_time"].median()), 1)})
    return pd.DataFrame(rows)


def markdown(table: pd.DataFrame, args, seconds: float) -> str:
    lines = ["# approx_gap against the exact gap (validation where the truth is known)", "",
             "Command: `" + " ".join(["OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python",
                                      "-m experiments.benchmarks.approx_gap_validation",
                                      *([] if args.merge else args.argv)]) + "`"
             + (f" ({_options(args)}) in two processes at once, each with some of the games and `--out ...`; their "
                "rows joined with `--merge`" if args.merge else ""), "",
             f"Deep PSRO ({' and '.join(args.oracles)} oracle, Monte Carlo meta-game with {args.episodes} episodes "
             "per profile, Nash "
             f"meta-solver), {args.iterations} iterations, seeds {list(range(args.seeds))}; `approx_gap` (a lower "
             f"bound) measured every {args.every} iterations and on the last row with its default budget (per "
             "target the best of the best member, the step's own response, a fresh response of "
             + (f"`{args.responder}`" if args.responder else "the default responder (model_br: "
                "psro.measures.approx_gap_settings.default_responder)")
             + ", a warm-started one where the responder trained the member, and the networks' greedy versions, "
             "raced by successive halving on selection episodes, the winner valued on 2,000 fresh ones; "
             + ("no share limit" if getattr(args, "share", None) is None else
                f"share {args.share}: fresh responses only where they fit, due rows skipped where nothing does")
             + ("" if getattr(args, "lbr", None) is None else
                f"; a local best response with {args.lbr} playouts per action one more candidate")
             + "); `gap` is the exact NashConv of the same "
             "meta-strategy." + ("" if math.isnan(seconds) else f" {seconds / 60:.1f} minutes wall on a shared 2-core "
                                                           "machine."), "",
             harness.pipe_table(summary(table)), "",
             "Every measured row (`ratio` = approx_gap / gap):", "",
             harness.pipe_table(table[["game", "oracle", "oracle_steps", "seed", "iteration", "gap", "meta_gap",
                                       "approx_gap", "se", "ratio", "valid_3se", "above_meta", "strong",
                                       "found_0.8"]]), ""]
    return "\n".join(lines)


def _options(args) -> str:
    given = [f"`--{name} {getattr(args, name)}`" for name in ("share", "lbr", "responder")
             if getattr(args, name, None) is not None]
    return " ".join(given) or "the defaults"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", nargs="+", default=["kuhn", "leduc", "liars_dice"], choices=list(GAMES))
    parser.add_argument("--oracles", nargs="+", default=["ppo"], choices=["ppo", "dqn", "neural_br", "model_br"],
                        help="the runs' oracles (one run per oracle and budget)")
    parser.add_argument("--steps", nargs="+", type=int, default=[20000, 2000],
                        help="steps (learner decisions) per response of the run's oracle, 0 for its own default "
                             "(one run per value)")
    parser.add_argument("--responder", default=None,
                        help="approx_gap_options' oracle (default: its default, model_br for these oracles; 'ppo' "
                             "measured the runs before it)")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--every", type=int, default=3)
    parser.add_argument("--episodes", type=int, default=300, help="Monte Carlo episodes per meta-game profile")
    parser.add_argument("--share", type=float, default=None,
                        help="approx_gap_options' share (default: none, every due row with the full estimator)")
    parser.add_argument("--lbr", type=int, default=None,
                        help="approx_gap_options' lbr: a local best response candidate with this many playouts per "
                             "action (default: none)")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, default=None,
                        help="where the .csv and .md go (default: results/ for a default run, else under runs/)")
    parser.add_argument("--merge", nargs="+", type=Path, default=None,
                        help="write the tables of these rows' CSV files (runs split across processes) and stop")
    args = parser.parse_args(argv)
    import sys

    args.argv = sys.argv[1:] if argv is None else list(argv)
    # a default run (or --merge of a default run's pieces) writes results/; any other option a scratch folder
    args.out = RESULTS if args.merge and args.out is None else harness.output_path(parser, args, RESULTS)
    if args.quick:
        args.games, args.steps, args.seeds, args.iterations, args.every = ["kuhn"], [2000], 1, 2, 1
    if args.merge:
        merged = pd.concat([pd.read_csv(path) for path in args.merge], ignore_index=True)
        if "oracle" not in merged:   # (rows written before --oracles: PPO runs)
            merged.insert(1, "oracle", "ppo")
        table = checks(merged.drop_duplicates(["game", "oracle", "oracle_steps", "seed", "iteration"]))
        table.to_csv(args.out.with_suffix(".csv"), index=False)
        args.out.with_suffix(".md").write_text(markdown(table, args, math.nan))
        print(summary(table).to_string(index=False))
        return
    logging.basicConfig(level=logging.WARNING)
    start, rows = time.perf_counter(), []
    for game, oracle, steps in itertools.product(args.games, args.oracles, args.steps):
        for seed in range(args.seeds):
            t = time.perf_counter()
            rows.extend(run_one(game, steps, seed, args.iterations, args.every, args.episodes, args.share,
                                args.lbr, oracle, args.responder))
            logging.warning("%s %s steps=%d seed=%d: %.0fs", game, oracle, steps, seed, time.perf_counter() - t)
            table = checks(pd.DataFrame(rows))
            args.out.parent.mkdir(parents=True, exist_ok=True)
            table.to_csv(args.out.with_suffix(".csv"), index=False)
            args.out.with_suffix(".md").write_text(markdown(table, args, time.perf_counter() - start))
    print(summary(table).to_string(index=False))


if __name__ == "__main__":
    main()
