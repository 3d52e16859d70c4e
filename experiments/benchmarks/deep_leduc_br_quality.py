"""How far the learned oracles' responses are from best responses, on Leduc poker and liar's dice: the error
behind deep PSRO's NashConv plateau (issues #28 and #35).

Deep PSRO's output can only be as unexploitable as its responses are good: a response that gains ``e`` less than
a best response leaves up to ``e`` of NashConv per player that the population never answers. This script measures
``e`` for every learned oracle against the targets a real run meets:

1. a deep PSRO run (``--config``; by default the PPO-tuned one, ``deep_leduc_tuning/B.yaml``, on Leduc, and
   ``experiments/configs/liars_dice_deep.yaml`` on liar's dice; serial, no game tree in training) runs on a tuning
   seed (``--seed``, default 10) and its populations and meta-strategy are kept at the iterations ``--at`` (default
   15 and 30 on Leduc, 5 and 10 on liar's dice);
2. for every kept target, player and candidate setting (:data:`CANDIDATES`: the model-based response ``model_br``
   and the neural response ``neural_br`` at three budgets each, PPO and DQN), the oracle's learner trains a
   response against the opponent's meta-strategy mixture (its real population members, neural networks) on
   sampled play, ``--train-seeds`` times;
3. each response is tabulated over the tree built for measuring (``experiments.benchmarks.leduc.measure.Measure``)
   and its exact value against the mixture is compared with the exact best response's: ``error = best-response value
   - its value``. The cost is the CPU-seconds of the training call (training and its evaluation episodes).

Run (about 30 minutes on one core for Leduc, most of it the PPO run that makes the targets)::

OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python -m experiments.benchmarks.deep_leduc_br_quality
OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python -m experiments.benchmarks.deep_leduc_br_quality \\
--game liars_dice

Results: ``results/deep_leduc_br_quality.{csv,md}`` and ``results/deep_liars_dice_br_quality.{csv,md}`` (every
response; the median error per setting).

``--quick`` keeps the target of iteration 1 of a run with small responses and trains one response per setting of
:data:`QUICK_CANDIDATES` (a few thousand steps each), writing under ``runs/``.
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path

import numpy as np

from experiments import harness

logger = logging.getLogger("deep_leduc_br_quality")

#: Per game: the committed results file, the run whose targets are used, and the iterations kept.
GAMES = {
    "leduc_poker": (harness.BENCHMARKS / "results" / "deep_leduc_br_quality.md",
                    harness.BENCHMARKS / "deep_leduc_tuning" / "B.yaml", [15, 30]),
    "liars_dice": (harness.BENCHMARKS / "results" / "deep_liars_dice_br_quality.md",
                   harness.REPO_ROOT / "experiments" / "configs" / "liars_dice_deep.yaml", [5, 10]),
}

#: The settings tried: ``(learner, options, warm start)``; options are fields of ``ModelBRConfig``, ``PPOConfig`` or
#: ``DQNConfig``. ``model_br 300k`` is the ``model_br`` oracle's default.
CANDIDATES = {
    "model_br 100k": ("model", dict(total_steps=100_000), False),
    "model_br 300k (default)": ("model", dict(), False),
    "model_br 1M": ("model", dict(total_steps=1_000_000), False),
    "ppo 40k warm (tuned)": ("ppo", dict(total_steps=40_000, num_envs=64), True),
    "ppo 100k fresh": ("ppo", dict(total_steps=100_000, num_envs=64), False),
    "ppo 100k fresh, greedy": ("ppo greedy", dict(total_steps=100_000, num_envs=64), False),
    "dqn 100k fresh": ("dqn", dict(total_steps=100_000), False),
    "neural_br 100k": ("neural", dict(total_steps=100_000), False),
    "neural_br 300k (default)": ("neural", dict(), False),
    "neural_br 1M": ("neural", dict(total_steps=1_000_000), False),
    "neural_br 1M, [128, 128]": ("neural", dict(total_steps=1_000_000, hidden=(128, 128)), False),
    "neural_br 600k, [128, 128]": ("neural", dict(total_steps=600_000, hidden=(128, 128)), False),
    "neural_br 1M, [128, 128], 15 epochs": ("neural", dict(total_steps=1_000_000, hidden=(128, 128), epochs=15),
                                            False),
}

#: ``--quick``: every learner (and a warm start) at a tiny budget, against the target of iteration 1 of a run whose
#: fields are :data:`QUICK_RUN` over its config's.
QUICK_CANDIDATES = {
    "model_br 2k": ("model", dict(total_steps=2_000, num_envs=64), False),
    "ppo 1k warm": ("ppo", dict(total_steps=1_024, num_envs=16), True),
    "ppo 1k fresh, greedy": ("ppo greedy", dict(total_steps=1_024, num_envs=16), False),
    "dqn 1k fresh": ("dqn", dict(total_steps=1_000), False),
    "neural_br 2k": ("neural", dict(total_steps=2_000, num_envs=64), False),
}
QUICK_RUN = {"oracle_options.total_steps": 1_024, "episodes_per_profile": 20}


def targets(config: Path, seed: int, at: list, game: str, **fields) -> dict:
    """The run's ``(members, meta-strategy marginals)`` after each iteration in ``at`` (``fields`` over the
    config's)."""
    from experiments.benchmarks.leduc.measure import population_members
    from experiments.benchmarks.leduc.toolkit_adapter import configured_solver

    solver, kept = configured_solver(seed, config, game=game, executor="serial", **fields), {}

    def keep(row):
        if row["iteration"] in at:
            state = solver.state
            kept[row["iteration"]] = ([population_members(pop) for pop in state.populations],
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
    from psro.oracles.learned.model_based import ModelBRConfig, train_model_br
    from psro.oracles.learned.neural_br import NeuralBRConfig, train_neural_br
    from psro.oracles.learned.ppo import PPOConfig, train_ppo
    from psro.policies.population import tabular_policy

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
        learners = {"ppo": (train_ppo, PPOConfig, {}), "ppo greedy": (train_ppo, PPOConfig, {"mode": "greedy"}),
                    "dqn": (train_dqn, DQNConfig, {}), "model": (train_model_br, ModelBRConfig, {}),
                    "neural": (train_neural_br, NeuralBRConfig, {})}
        for name, (learner, options, warm) in candidates.items():
            train, config, how = learners[learner]
            for seed in seeds:
                start = time.process_time()
                result = train(measure.game, player, opponents, replace(config(eval_episodes=200, **options),
                                                                          seed=seed),
                               **({"initial": members[player][-1]} if warm else {}), **how)
                seconds = time.process_time() - start
                table = tabular_policy(result.policy, measure.tree, player)
                profile = list(mixture)
                profile[player] = measure.plan_of(player, table)
                value = float(evaluator.payoffs([x[None] for x in profile]).reshape(2)[player])
                rows.append({"candidate": name, "player": player, "train_seed": seed, "best_response": best,
                             "value": value, "error": best - value, "seconds": seconds})
                logger.info("player %d, %s, seed %d: best response %.3f, response %.3f, error %.3f (%.1f s)",
                            player, name, seed, best, value, best - value, seconds)
    return rows


def summary(frame, command: str, game: str, config: str) -> str:
    """The median error per candidate (over targets, players and training seeds), and its range."""
    table = frame.groupby("candidate", sort=False).agg(error=("error", "median"), low=("error", "min"),
                                                        high=("error", "max"), seconds=("seconds", "median"))
    lines = [f"# Best-response error of the learned oracles on {game}", "", f"Command: `{command}`", "",
             "Error = exact best-response value - the response's exact value, against the meta-strategy mixtures of "
             f"the deep PSRO run `{config}` after iterations {sorted(frame['iteration'].unique().tolist())} (seed "
             f"{int(frame['seed'].iloc[0])}), both players, training seeds "
             f"{sorted(frame['train_seed'].unique().tolist())}. A NashConv of 0.5 needs errors well below 0.25 per "
             "player.", "",
             "| setting | median error | lowest | highest | CPU-seconds per response |", "|---|---|---|---|---|"]
    lines += [f"| {name} | {r.error:.3f} | {r.low:.3f} | {r.high:.3f} | {r.seconds:.1f} |"
              for name, r in table.iterrows()]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = harness.script_parser(__doc__)
    parser.add_argument("--game", choices=list(GAMES), default="leduc_poker")
    parser.add_argument("--config", help="the deep PSRO run whose targets are used (default: the game's, GAMES)")
    parser.add_argument("--seed", type=int, default=10, help="its seed (a tuning seed, not the benchmark's 0-2)")
    parser.add_argument("--at", type=int, nargs="+", help="iterations whose targets are used (default: GAMES)")
    parser.add_argument("--train-seeds", type=int, default=2, help="responses trained per setting and target")
    parser.add_argument("--candidates", nargs="+", choices=list(CANDIDATES), default=list(CANDIDATES))
    parser.add_argument("--out", help="markdown summary path (the CSV goes next to it)")
    parser.add_argument("--quick", action="store_true",
                        help="iteration 1 of a run with small responses, one training seed, QUICK_CANDIDATES")
    args = parser.parse_args()
    import pandas as pd
    import pyspiel
    import torch

    from experiments.benchmarks.leduc.measure import Measure

    results, config, at = GAMES[args.game]
    config = Path(args.config) if args.config else config
    at, train_seeds, fields = args.at or at, args.train_seeds, {}
    candidates = {k: CANDIDATES[k] for k in args.candidates}
    if args.quick:
        at, train_seeds, candidates, fields = [1], 1, QUICK_CANDIDATES, QUICK_RUN
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    measure = Measure(pyspiel.load_game(args.game))
    rows = []
    for iteration, (members, marginals) in targets(config, args.seed, at, args.game, **fields).items():
        rows += [dict(r, iteration=iteration, seed=args.seed) for r in response_errors(
            members, marginals, list(range(train_seeds)), candidates, measure)]
    out = harness.output_path(parser, args, results)
    out.parent.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame(rows)
    frame.to_csv(out.with_suffix(".csv"), index=False)
    command = harness.command_line()
    out.write_text(summary(frame, command, args.game, config.relative_to(harness.REPO_ROOT).as_posix()))
    sys.stdout.write(out.read_text())


if __name__ == "__main__":
    main()
