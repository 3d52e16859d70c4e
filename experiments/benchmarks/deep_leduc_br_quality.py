"""How far the learned oracles' responses are from best responses on Leduc poker: the error behind deep PSRO's
NashConv plateau (issue #28).

Deep PSRO's output can only be as unexploitable as its responses are good: a response that gains ``e`` less than
a best response leaves up to ``e`` of NashConv per player that the population never answers. This script measures
``e`` for the learned oracles' settings against the targets a real run meets:

1. the tuned deep PSRO (``--config``, by default ``experiments/configs/leduc_deep_tuned.yaml``; serial, no game
   tree in training) runs on a tuning seed (``--seed``, default 10) and its populations and meta-strategy are kept
   at the iterations ``--at`` (default 15 and 30);
2. for every kept target, player and candidate setting (:data:`CANDIDATES`: PPO and DQN, warm-started from the
   player's newest member or from a fresh network), the oracle trains a response against the opponent's
   meta-strategy mixture on sampled play, ``--train-seeds`` times;
3. each response is tabulated over the tree built for measuring (``deep_psro_leduc.Measure``) and its exact value
   against the mixture is compared with the exact best response's: ``error = best-response value - its value``.

Run (about 15 minutes on one core)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python experiments/benchmarks/deep_leduc_br_quality.py

Results: ``results/deep_leduc_br_quality.{csv,md}`` (every response; the median error per setting).
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path

import bench_common
import numpy as np

logger = logging.getLogger("deep_leduc_br_quality")

RESULTS = bench_common.HERE / "results" / "deep_leduc_br_quality.md"
TUNED = bench_common.REPO_ROOT / "experiments" / "configs" / "leduc_deep_tuned.yaml"

#: The settings tried: ``(oracle, options, warm start)``; options are fields of ``PPOConfig`` / ``DQNConfig``.
CANDIDATES = {
    "ppo 40k warm (tuned)": ("ppo", dict(total_steps=40_000, num_envs=64), True),
    "ppo 40k fresh": ("ppo", dict(total_steps=40_000, num_envs=64), False),
    "ppo 100k warm": ("ppo", dict(total_steps=100_000, num_envs=64), True),
    "ppo 100k fresh": ("ppo", dict(total_steps=100_000, num_envs=64), False),
    "ppo 100k fresh, lr 3e-3": ("ppo", dict(total_steps=100_000, num_envs=64, learning_rate=3e-3), False),
    "ppo 100k fresh, 128 units, no entropy": ("ppo", dict(total_steps=100_000, num_envs=64, hidden=(128,),
                                                         ent_coef=0.0), False),
    "ppo 100k fresh, rollouts of 64 steps": ("ppo", dict(total_steps=100_000, num_envs=64, num_steps=64), False),
    "ppo 300k fresh, 128 units, no entropy": ("ppo", dict(total_steps=300_000, num_envs=64, hidden=(128,),
                                                         ent_coef=0.0), False),
    "dqn 100k fresh": ("dqn", dict(total_steps=100_000), False),
}


def targets(config: Path, seed: int, at: list) -> dict:
    """The run's ``(members, meta-strategy marginals)`` after each iteration in ``at``."""
    import deep_psro_leduc as deep

    solver, kept = deep.configured_solver(seed, config, executor="serial"), {}

    def keep(row):
        if row["iteration"] in at:
            state = solver.state
            kept[row["iteration"]] = ([deep._members(pop) for pop in state.populations],
                                      [np.asarray(w, dtype=np.float64) for w in state.meta_strategy.marginals])

    with solver:
        solver.run(iterations=max(at), callback=keep)
    return kept


def response_errors(members: list, marginals: list, seeds: list, candidates: dict, measure) -> list:
    """One row per player, candidate and training seed: the response's exact value against the other player's
    mixture, the best response's, the error and the training seconds."""
    from dataclasses import replace

    from psro.evaluation.exact import SequenceFormEvaluator
    from psro.oracles.exact import best_response
    from psro.oracles.learned.dqn import DQNConfig, train_dqn
    from psro.oracles.learned.env import OpponentMixture
    from psro.oracles.learned.ppo import PPOConfig, train_ppo
    from psro.population import tabular_policy

    evaluator, rows = SequenceFormEvaluator(measure.tree), []
    mixture = [w @ np.stack([measure.plan(("member", p, i), p, lambda p=p, m=m: tabular_policy(m, measure.tree, p))
                             for i, m in enumerate(ms)]) for p, (ms, w) in enumerate(zip(members, marginals))]
    for player in range(2):
        other = 1 - player
        support = np.flatnonzero(marginals[other] > 0)
        seats = [tuple(members[other][i] if q == other else None for q in range(2)) for i in support]
        weights = marginals[other][support] / marginals[other][support].sum()
        opponents = OpponentMixture(tuple(seats), weights)
        best = best_response(measure.tree, player, mixture).value
        for name, (oracle, options, warm) in candidates.items():
            train, config = (train_ppo, PPOConfig) if oracle == "ppo" else (train_dqn, DQNConfig)
            for seed in seeds:
                start = time.perf_counter()
                result = train(measure.game, player, opponents, replace(config(eval_episodes=200, **options),
                                                                          seed=seed),
                               **({"initial": members[player][-1]} if warm else {}))
                seconds = time.perf_counter() - start
                table = tabular_policy(result.policy, measure.tree, player)
                profile = list(mixture)
                profile[player] = measure.plan_of(player, table)
                value = float(evaluator.payoffs([x[None] for x in profile]).reshape(2)[player])
                rows.append({"candidate": name, "player": player, "train_seed": seed, "best_response": best,
                             "value": value, "error": best - value, "seconds": seconds})
                logger.info("player %d, %s, seed %d: best response %.3f, response %.3f, error %.3f (%.1f s)",
                            player, name, seed, best, value, best - value, seconds)
    return rows


def summary(frame, command: str) -> str:
    """The median error per candidate (over targets, players and training seeds), and its range."""
    table = frame.groupby("candidate", sort=False).agg(error=("error", "median"), low=("error", "min"),
                                                        high=("error", "max"), seconds=("seconds", "median"))
    lines = ["# Best-response error of the learned oracles on Leduc poker", "", f"Command: `{command}`", "",
             "Error = exact best-response value - the response's exact value, against the meta-strategy mixtures of "
             f"the tuned deep PSRO after iterations {sorted(frame['iteration'].unique().tolist())} (tuning seed "
             f"{int(frame['seed'].iloc[0])}), both players, training seeds "
             f"{sorted(frame['train_seed'].unique().tolist())}. A NashConv of 0.5 needs errors well below 0.25 per "
             "player.", "",
             "| setting | median error | lowest | highest | seconds per response |", "|---|---|---|---|---|"]
    lines += [f"| {name} | {r.error:.3f} | {r.low:.3f} | {r.high:.3f} | {r.seconds:.1f} |"
              for name, r in table.iterrows()]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = bench_common.script_parser(__doc__)
    parser.add_argument("--config", default=str(TUNED), help="the deep PSRO run whose targets are used")
    parser.add_argument("--seed", type=int, default=10, help="its seed (a tuning seed, not the benchmark's 0-2)")
    parser.add_argument("--at", type=int, nargs="+", default=[15, 30], help="iterations whose targets are used")
    parser.add_argument("--train-seeds", type=int, default=2, help="responses trained per setting and target")
    parser.add_argument("--candidates", nargs="+", choices=list(CANDIDATES), default=list(CANDIDATES))
    parser.add_argument("--out", help="markdown summary path (the CSV goes next to it)")
    args = parser.parse_args()
    import deep_psro_leduc as deep
    import pandas as pd
    import pyspiel
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    measure = deep.Measure(pyspiel.load_game(deep.GAME))
    rows = []
    for iteration, (members, marginals) in targets(Path(args.config), args.seed, args.at).items():
        rows += [dict(r, iteration=iteration, seed=args.seed) for r in response_errors(
            members, marginals, list(range(args.train_seeds)), {k: CANDIDATES[k] for k in args.candidates}, measure)]
    out = bench_common.output_path(parser, args, RESULTS)
    out.parent.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame(rows)
    frame.to_csv(out.with_suffix(".csv"), index=False)
    command = bench_common.command_line()
    out.write_text(summary(frame, command))
    sys.stdout.write(out.read_text())


if __name__ == "__main__":
    main()
