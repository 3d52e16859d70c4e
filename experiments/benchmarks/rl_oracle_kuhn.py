"""PSRO on Kuhn poker with learned (DQN, PPO) best responses against the exact oracle: NashConv per CPU second.

A minimal Nash-PSRO loop built from the library's pieces (populations,
sequence-form evaluation, the zero-sum LP meta-solver) runs with each oracle:

* ``exact``: the sequence-form best response (:func:`psro.oracles.exact.best_response`);
* ``dqn`` / ``ppo``: :class:`psro.oracles.learned.oracle.LearnedOracle`, a fresh network
  trained per response against the opponents' aggregated meta-strategy, its
  greedy tabular form added to the population.

After every iteration the meta-strategy's NashConv in the full game is
measured exactly (sequence-form best responses; this measurement is not
counted in the CPU seconds). At the end, the last meta-strategy's NashConv is
recomputed with OpenSpiel's ``exploitability.nash_conv`` as a cross-check.
Reported: per oracle and seed, the CPU seconds and iterations to reach
NashConv <= ``--target``, and medians over seeds. torch and BLAS run on one thread.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python -m experiments.benchmarks.rl_oracle_kuhn --seeds 3

``--quick`` runs one seed of 3 iterations with 512-step responses and writes under ``runs/``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd

from experiments import harness

RESULTS = Path(__file__).resolve().parent / "results"


def run_psro(tree, oracle_name: str, iterations: int, target: float, seed: int, steps: int,
             eval_episodes: int, overrides: dict | None = None) -> tuple:
    """One PSRO run; returns (history DataFrame, final marginals, populations)."""
    from games import NormalFormGame
    from psro.evaluation import SequenceFormEvaluator
    from psro.oracles.exact import best_response
    from psro.oracles.learned.dqn import DQNConfig
    from psro.oracles.learned.oracle import LearnedOracle
    from psro.oracles.learned.ppo import PPOConfig
    from psro.policies import uniform_policy
    from psro.policies.population import Population, Provenance
    from solvers import solve

    if oracle_name == "exact":
        def oracle(p, plans):
            return best_response(tree, p, plans)
    else:
        config_type = DQNConfig if oracle_name == "dqn" else PPOConfig
        extra = {k: v for k, v in (overrides or {}).items() if k in config_type.__dataclass_fields__}
        config = config_type(total_steps=steps, eval_episodes=eval_episodes, **extra)
        learned = LearnedOracle(tree, oracle_name, config, seed=seed, meta_solver="nash")

        def oracle(p, plans):
            return learned(p, plans, None)

    evaluator = SequenceFormEvaluator(tree)
    pops = [Population(info) for info in tree.infostates]
    for pop in pops:
        pop.add(uniform_policy(pop.infostates), Provenance(0, "initial"))
    rows, cpu = [], 0.0
    for it in range(iterations + 1):
        start = time.process_time()
        payoffs = evaluator.payoffs([pop.plans for pop in pops])          # (2, k0, k1), exact
        eq = solve(NormalFormGame(payoffs), "nash_zero_sum")
        plans = [np.asarray(w) @ pop.plans for w, pop in zip(eq.marginals, pops)]
        cpu += time.process_time() - start

        brs = [best_response(tree, p, plans).value for p in range(2)]   # the metric, not timed
        gap = float(sum(brs) - np.sum(eq.values))
        rows.append({"oracle": oracle_name, "seed": seed, "iteration": it, "nash_conv": gap, "cpu_time": cpu,
                     "population": len(pops[0])})
        if gap <= target or it == iterations:
            break

        start = time.process_time()
        responses = [oracle(p, plans) for p in range(2)]
        for pop, br in zip(pops, responses):
            pop.add(br.policy, Provenance(it + 1, oracle_name, "nash", br.value))
        cpu += time.process_time() - start
    return pd.DataFrame(rows), eq.marginals, pops


def openspiel_nash_conv(tree, pops, marginals) -> float:
    """NashConv of the aggregated meta-strategy by OpenSpiel's exploitability module."""
    from open_spiel.python import policy as os_policy
    from open_spiel.python.algorithms import exploitability

    table = os_policy.TabularPolicy(tree.game)
    for pop, w in zip(pops, marginals):
        agg = pop.aggregate(w)
        for key, row in zip(pop.infostates.keys, agg):
            table.policy_for_key(key)[:] = row
    return float(exploitability.nash_conv(tree.game, table))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--oracles", nargs="+", default=["exact", "ppo", "dqn"])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--target", type=float, default=0.05)
    parser.add_argument("--steps", type=int, default=5000, help="training steps per learned best response")
    parser.add_argument("--eval-episodes", type=int, default=200)
    parser.add_argument("--set", nargs="*", default=[], metavar="FIELD=VALUE",
                        help="override DQNConfig/PPOConfig fields (applied where the field exists)")
    parser.add_argument("--out", default=None,
                        help="path prefix of the .md and _history.csv files (default: results/rl_oracle_kuhn for a "
                             "default run, a new folder under runs/ otherwise)")
    parser.add_argument("--quick", action="store_true", help="one seed, 3 iterations, 512-step responses")
    args = parser.parse_args()
    args.out = str(harness.output_path(parser, args, RESULTS / "rl_oracle_kuhn"))
    if args.quick:
        args.seeds, args.iterations, args.steps, args.eval_episodes = 1, 3, 512, 20

    import pyspiel
    import torch

    from psro.sequence_form.game_tree import build_game_tree

    torch.set_num_threads(1)
    overrides = {}
    for item in args.set:
        key, _, value = item.partition("=")
        overrides[key] = float(value) if any(c in value for c in ".e") else int(value)
    tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    histories, summary = [], []
    for name in args.oracles:
        for seed in range(1 if name == "exact" else args.seeds):
            hist, marginals, pops = run_psro(tree, name, args.iterations, args.target, seed, args.steps,
                                             args.eval_episodes, overrides)
            histories.append(hist)
            last = hist.iloc[-1]
            check = openspiel_nash_conv(tree, pops, marginals)
            summary.append({"oracle": name, "seed": seed, "reached": bool(last.nash_conv <= args.target),
                            "iterations": int(last.iteration), "cpu_time": float(last.cpu_time),
                            "nash_conv": float(last.nash_conv), "openspiel_nash_conv": check})
            print(f"{name:5s} seed {seed}: NashConv {last.nash_conv:.4f} (OpenSpiel {check:.4f}) after "
                  f"{int(last.iteration)} iterations, {last.cpu_time:.1f} CPU s", flush=True)
    table = pd.DataFrame(summary)
    history = pd.concat(histories, ignore_index=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    history.to_csv(f"{args.out}_history.csv", index=False)

    lines = [f"# PSRO on Kuhn poker: learned vs exact best responses (target NashConv <= {args.target})", "",
             (f"Learned oracles: {args.steps} training steps per response, {args.eval_episodes} evaluation "
              f"episodes, overrides {overrides or 'none'}, default DQNConfig/PPOConfig otherwise; one "
              "torch/BLAS thread; machine shared with other jobs. CPU seconds exclude the exact NashConv "
              "measurement."), "",
             "| oracle | runs | reached | median iterations | median CPU s | median final NashConv |",
             "|---|---|---|---|---|---|"]
    for name, grp in table.groupby("oracle", sort=False):
        lines.append(f"| {name} | {len(grp)} | {int(grp.reached.sum())} | {statistics.median(grp.iterations):g} | "
                     f"{statistics.median(grp.cpu_time):.2f} | {statistics.median(grp.nash_conv):.4f} |")
    lines += ["", "Per run (final NashConv ours vs OpenSpiel's `exploitability.nash_conv` on the same policies):", "",
              harness.pipe_table(table), "",
              "NashConv per iteration (median over seeds):", ""]
    curve = history.groupby(["oracle", "iteration"], sort=False)[["nash_conv", "cpu_time"]].median().reset_index()
    by_iteration = curve.pivot(index="iteration", columns="oracle", values="nash_conv").reset_index()
    lines.append(harness.pipe_table(by_iteration, ".4f"))
    lines += ["", "Cumulative CPU seconds per iteration (median over seeds):", ""]
    cpu = curve.pivot(index="iteration", columns="oracle", values="cpu_time").reset_index()
    lines.append(harness.pipe_table(cpu, ".2f"))
    Path(f"{args.out}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
