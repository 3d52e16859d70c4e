"""League training against NFSP, fictitious self-play, FXP and PSRO with the same learner-step budget.

Issue #13's ``league_vs_psro`` reproduction. Every algorithm trains PPO (NFSP: its own DQN and average networks)
on the same budget of **learner steps**: the decisions its learning networks took in training (each oracle call's
``training_steps``, counted by wrapping the run's oracle; NFSP's ``decisions``, all seats learning in the same
games). Evaluation is not counted, for any algorithm: the evaluator's meta-game episodes, League's win-rate games,
the exact gap and the approximate gap's fresh responses. An algorithm runs iteration by iteration until its count
reaches the budget (it may pass it by at most one iteration; the table gives the count).

1. **Leduc poker** (the tree fits): the exact NashConv of each output, the history's ``gap`` (League: the main
   agents' latest snapshots; NFSP: the latest average policies; fictitious self-play: the uniform mixture of its
   iterates; FXP and PSRO: the Nash mixture of their meta-game), against the steps spent.
2. **Phantom tic-tac-toe** (far too large for the tree): ``approx_gap`` of each output (fresh PPO best responses
   with the same budget for all, :func:`psro.measures.approximate_gap.approximate_gap`) and a cross-play alpha-Rank of
   the
   outputs: each output against each other in both seats (members drawn from its mixture every episode), the
   symmetrised mean returns ranked by single-population alpha-Rank (:func:`ranking.alpharank`).

The algorithms come from ``psro.loop.algorithms`` and are imported when used; one that is missing is reported as such
in the summary, and the others still run.

Run: ``python -m experiments.reproduce.league_vs_psro [--quick] [--out DIR]``.
"""

from __future__ import annotations

import logging
import math
import time
import traceback

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from experiments.reproduce.common import Summary, parse_args

#: The compared algorithms: label -> (psro.loop.algorithms name, its own fields).
ALGORITHMS = {
    "League": ("league", {}),
    "NFSP": ("nfsp", {}),
    "FSP": ("fictitious_self_play", {"warm_start": True}),   # (the learner continues from its latest network)
    "FXP": ("fxp", {}),
    "PSRO": ("psro", {}),
}

QUICK = {"steps": 7168, "large_steps": 2048, "call_steps": 512, "eval_episodes": 32, "num_envs": 16, "hidden": [32],
         "win_rate_episodes": 40, "episodes_per_profile": 40, "approx_steps": 1024, "approx_episodes": 100,
         "cross_episodes": 40}
DEFAULT = {"steps": 196608, "large_steps": 196608, "call_steps": 8192, "eval_episodes": 100, "num_envs": 32,
           "hidden": [64], "win_rate_episodes": 100, "episodes_per_profile": 100, "approx_steps": 32768,
           "approx_episodes": 500, "cross_episodes": 200}
GAMES = {"leduc": "leduc_poker", "large": "phantom_ttt"}
#: Seeds per game: Leduc's exact NashConv is cheap to measure, so it gets three in the default run.
SEEDS = {"quick": {"leduc": [0], "large": [0]}, "default": {"leduc": [0, 1, 2], "large": [0]}}


def build(label: str, game: str, budget: dict, seed: int):
    """The solver of ``label`` on ``game`` with the budget's settings (ImportError when it is not there)."""
    from psro.loop.algorithms import algorithm_class

    name, own = ALGORITHMS[label]
    cls = algorithm_class(name)
    tree = game == GAMES["leduc"]
    common = dict(seed=seed, progress=False, approx_gap_every=None, exact_gap="auto" if tree else False)
    if not tree:
        common["episodes_per_profile"] = budget["episodes_per_profile"]
    if name == "nfsp":   # (six copies of the average policies: its meta-game grows with every iteration)
        options = {"steps_per_iteration": budget["steps"] // 6, "num_envs": budget["num_envs"],
                   "hidden": budget["hidden"]}
        return cls(game, algorithm_options=options, **common)
    oracle_options = {"total_steps": budget["call_steps"], "num_envs": budget["num_envs"], "num_steps": 32,
                      "eval_episodes": budget["eval_episodes"], "hidden": budget["hidden"]}
    fields = dict(oracle="ppo", oracle_options=oracle_options, oracle_dispatch="in_process", **common, **own)
    if tree:
        fields.update(evaluator="sequence_form")   # exact meta-game entries of the tabularised networks
    else:
        fields.update(evaluator="monte_carlo")
    if name == "league":
        fields["algorithm_options"] = {"win_rate_episodes": budget["win_rate_episodes"],
                                       "snapshot_steps": 2 * budget["call_steps"]}
    return cls(game, **fields)


def train(label: str, game: str, budget: dict, seed: int) -> tuple:
    """Run ``label`` until its learner steps reach the budget: ``(solver, curve rows, seconds)``."""
    solver = build(label, game, budget, seed)
    start, rows = time.process_time(), []
    while True:
        history = solver.run(iterations=1)
        last = history.iloc[-1]
        steps = int(last["env_steps"])   # (every loop's history counts its learner decisions)
        rows.append({"game": game, "algorithm": label, "seed": seed, "iteration": int(last["iteration"]),
                     "learner_steps": steps, "gap": float(last["gap"]), "train_gap": float(last["train_gap"]),
                     "population": int(last.get("population_0", 0))})
        if steps >= budget["steps"]:
            return solver, rows, time.process_time() - start


def leduc_table(leduc: pd.DataFrame) -> pd.DataFrame:
    """Per algorithm: the median exact NashConv over the seeds and each seed's value (plus League's Nash mixture
    over its league, the ``train_gap`` of the same runs)."""
    rows = []
    for label in dict.fromkeys(leduc.algorithm):
        runs = leduc[leduc.algorithm == label]
        measures = [("nash_conv", label)] + ([("train_gap", "League (Nash over its league)")]
                                             if label == "League" else [])
        for column, name in measures:
            rows.append({"algorithm": name, "learner_steps": int(runs.learner_steps.median()),
                         "NashConv (median)": float(runs[column].median()),
                         "per seed": " / ".join(f"{v:.3f}" for v in runs[column]),
                         "seeds": len(runs), "cpu_seconds (median)": float(runs.cpu_seconds.median())})
    return pd.DataFrame(rows)


def findings(table: pd.DataFrame | None, large: pd.DataFrame) -> list:
    """Markdown bullets read off the tables (which output is least exploitable, where League stands)."""
    lines = []
    if table is not None:
        order = table.sort_values("NashConv (median)")
        ranked = ", ".join(f"{a} {v:.3f}" for a, v in zip(order.algorithm, order["NashConv (median)"]))
        lines.append(f"- Leduc, median exact NashConv at equal learner steps, lowest first: {ranked}.")
        if "League (Nash over its league)" in set(table.algorithm):
            main, nash = (float(table.set_index("algorithm").loc[a, "NashConv (median)"])
                          for a in ("League", "League (Nash over its league)"))
            if main > nash:
                lines.append(f"- League's main agents alone ({main:.3f}) are more exploitable than the Nash mixture "
                             f"of its league ({nash:.3f}): the main agent trains on a third of the steps (the "
                             "exploiters take the rest), and its newest snapshot is still waiting to join.")
            else:
                lines.append(f"- League's main agents alone ({main:.3f}) are no more exploitable than the Nash "
                             f"mixture of its league ({nash:.3f}).")
    if len(large) and large.approx_gap.notna().any():
        best = large.loc[large.approx_gap.idxmin()]
        lines.append(f"- {GAMES['large']}: the lowest approx_gap is {best.algorithm}'s ({best.approx_gap:.3f} +- "
                     f"{best.approx_gap_stderr:.3f}).")
        if "alpharank_mass" in large:
            top = large.loc[large.alpharank_mass.idxmax()]
            lines.append(f"- Cross-play: {top.algorithm} has the most alpha-Rank mass ({top.alpharank_mass:.3g}) "
                         f"and a mean return of {top.cross_play_return:+.3f} against the other outputs; beating "
                         "the other outputs and being hard to exploit are different measures, and need not agree.")
    return lines


def output_of(solver):
    """The output as ``(solution, populations)``: its eval meta-strategy over its populations."""
    state = solver.state
    solution = state.eval_meta_strategy if state.eval_meta_strategy is not None else state.meta_strategy
    return solution, state.populations


def approx_gap(solver, game: str, budget: dict, seed: int) -> tuple:
    """``(approx_gap, stderr)`` of the output: fresh PPO responses, the same budget and seeds for every output."""
    from psro.measures.approximate_gap import approximate_gap, responder_seed
    from psro.oracles import make_oracle

    oracle = make_oracle("ppo", None, seed=responder_seed(seed), game=game,
                         total_steps=budget["approx_steps"], num_envs=budget["num_envs"], num_steps=32,
                         eval_episodes=budget["eval_episodes"], hidden=budget["hidden"])
    solution, populations = output_of(solver)
    result = approximate_gap(game, "product", solution, populations,
                             lambda p, target, i: oracle.respond(p, target, key=(10 ** 6, i)),
                             episodes=budget["approx_episodes"], seed=seed, iteration=10 ** 6)
    return float(result.gap), float(result.stderr)


def cross_play(solvers: dict, game: str, episodes: int, seed: int) -> pd.DataFrame:
    """Mean return of each output against each other, both seats: ``score[a][b]`` = a's mean return against b
    (the mean of a in seat 0 against b in seat 1 and a in seat 1 against b in seat 0)."""
    from psro.evaluation.env_play import sample_returns

    labels = list(solvers)
    outputs = {label: output_of(solver) for label, solver in solvers.items()}
    seat = np.zeros((2, len(labels), len(labels)))   # seat[p][i, j]: seat p's return, i in seat 0, j in seat 1
    for i, a in enumerate(labels):
        for j, b in enumerate(labels):
            rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(i, j)))
            draws = [rng.choice(len(outputs[x][1][p]), size=episodes, p=outputs[x][0].marginals[p])
                     for p, x in enumerate((a, b))]
            total = np.zeros(2)
            pairs, counts = np.unique(np.stack(draws, axis=1), axis=0, return_counts=True)
            for (m0, m1), count in zip(pairs.tolist(), counts.tolist()):
                profile = [outputs[a][1][0].policies[m0], outputs[b][1][1].policies[m1]]
                total += sample_returns(game, profile, count, seed=np.random.SeedSequence(
                    seed, spawn_key=(i, j, m0, m1))).sum(axis=0)
            seat[:, i, j] = total / episodes
    score = 0.5 * (seat[0] + seat[1].T)
    return pd.DataFrame(score, index=labels, columns=labels)


def main() -> None:
    args = parse_args("league_vs_psro", __doc__.split("\n\n")[0])
    logging.basicConfig(level=logging.WARNING)
    budget = QUICK if args.quick else DEFAULT
    seeds = SEEDS["quick" if args.quick else "default"]
    s = Summary("League vs NFSP, FSP, FXP and PSRO with equal learner steps (issue #13)", args.out, args.quick)
    s.add("## Paper", "",
          "AlphaStar's league (Vinyals et al., Nature 2019) trains main agents with prioritised fictitious "
          "self-play against a league of past players, main exploiters and league exploiters, to avoid the "
          "cycles of plain self-play. The issue asks how its output compares, in exploitability, with NFSP "
          "(Heinrich & Silver 2016), fictitious self-play, FXP (Xu et al. 2023) and PSRO at the same budget of "
          "environment steps, on Leduc (exact NashConv) and on a game too large for its tree (approx_gap and a "
          "cross-play alpha-Rank).", "",
          f"Budget: {budget['steps']} learner steps per algorithm and run on Leduc, {budget['large_steps']} on "
          f"{GAMES['large']} (PPO calls of {budget['call_steps']} steps; NFSP: six iterations of a sixth of "
          f"them); seeds {seeds['leduc']} on Leduc, "
          f"{seeds['large']} on {GAMES['large']}. What counts: the decisions the learning networks took in "
          "training; evaluation episodes (meta-game, League's win-rate games, gaps) do not count, for any "
          "algorithm.", "")

    curves, finals, missing, solvers_large = [], [], {}, {}
    for key in ("leduc", "large"):
        game = GAMES[key]
        game_budget = budget if key == "leduc" else {**budget, "steps": budget["large_steps"]}
        for seed in seeds[key]:
            for label in ALGORITHMS:
                if label in missing:
                    continue
                try:
                    solver, rows, seconds = train(label, game, game_budget, seed)
                except (ImportError, AttributeError) as exc:   # (an algorithm another session has not built yet)
                    missing[label] = f"{type(exc).__name__}: {exc}"
                    logging.warning("%s is missing: %s", label, exc)
                    continue
                except Exception as exc:   # noqa: BLE001 - one failing algorithm must not hide the others'
                    missing[label] = f"failed on {game}: {type(exc).__name__}: {exc}"
                    logging.error("%s failed on %s:\n%s", label, game, traceback.format_exc())
                    continue
                curves.extend(rows)
                final = {"game": game, "algorithm": label, "seed": seed, "learner_steps": rows[-1]["learner_steps"],
                         "iterations": rows[-1]["iteration"], "population": rows[-1]["population"],
                         "cpu_seconds": seconds, "nash_conv": rows[-1]["gap"], "train_gap": rows[-1]["train_gap"],
                         "approx_gap": math.nan, "approx_gap_stderr": math.nan}
                if key == "large":
                    final["approx_gap"], final["approx_gap_stderr"] = approx_gap(solver, game, budget, seed)
                    if seed == seeds[key][0]:
                        solvers_large[label] = solver
                finals.append(final)
                logging.warning("%s on %s, seed %d: %d steps, gap %.4f, %.1f s", label, game, seed,
                                final["learner_steps"], final["nash_conv"], seconds)

    curves, finals = pd.DataFrame(curves), pd.DataFrame(finals)
    s.csv(curves, "curves.csv")
    s.csv(finals, "final.csv")
    leduc = finals[finals.game == GAMES["leduc"]] if len(finals) else finals
    s.add("## Leduc poker: exact NashConv of each output", "")
    if len(leduc):
        table = leduc_table(leduc)
        s.csv(table, "leduc_table.csv")
        s.table(table)
        s.add("League's output is its main agents' latest snapshot; the row \"League (Nash over its league)\" is "
              "the Nash mixture of the snapshots' meta-game (the run's `train_gap`), from the same runs.", "")
    large = finals[finals.game == GAMES["large"]] if len(finals) else finals
    large = large[large.seed == seeds["large"][0]] if len(large) else large
    if len(solvers_large) >= 2:
        from ranking import alpharank

        score = cross_play(solvers_large, GAMES["large"], budget["cross_episodes"], seeds["large"][0])
        ranked = alpharank(score.to_numpy(), alpha=10.0, single_population=True)
        mass = dict(zip(score.index, ranked.pi))
        others = (score.sum(axis=1) / (len(score) - 1)).to_dict()
        large = large.assign(cross_play_return=[others.get(a, math.nan) for a in large.algorithm],
                             alpharank_mass=[mass.get(a, math.nan) for a in large.algorithm])
        s.csv(score.reset_index().rename(columns={"index": "row_vs_column"}), "cross_play.csv")
    s.add(f"## {GAMES['large']}: approx_gap and cross-play alpha-Rank of the outputs", "")
    if len(large):
        columns = ["algorithm", "learner_steps", "iterations", "approx_gap", "approx_gap_stderr"] + \
            (["cross_play_return", "alpharank_mass"] if "alpharank_mass" in large else [])
        s.table(large[columns])
        s.add("Cross-play: each output against each other in both seats (cross_play.csv: the row's mean return "
              "against the column; `cross_play_return`: its mean over the other outputs); alpha-Rank (alpha = 10, "
              "one population) of that symmetric zero-sum table.", "")

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    if len(curves):
        for k, (label, grp) in enumerate(curves[curves.game == GAMES["leduc"]].groupby("algorithm")):
            for n, (seed, run) in enumerate(grp.groupby("seed")):
                axes[0].plot(run.learner_steps, run.gap, marker="o", color=f"C{k}", alpha=1.0 if n == 0 else 0.4,
                             label=label if n == 0 else None)
                if label == "League":
                    axes[0].plot(run.learner_steps, run.train_gap, ls="--", color=f"C{k}",
                                 alpha=1.0 if n == 0 else 0.4, label="League (Nash over its league)" if n == 0
                                 else None)
        axes[0].set(xlabel="learner steps", ylabel="exact NashConv (faint: other seeds)", title="Leduc poker",
                    yscale="log")
        axes[0].ticklabel_format(axis="x", style="sci", scilimits=(0, 0))
        axes[0].legend()
    if len(large):   # (the first seed)
        axes[1].bar(large.algorithm, large.approx_gap, yerr=2 * large.approx_gap_stderr)
        axes[1].set(ylabel="approx_gap (+- 2 stderr)", title=GAMES["large"])
    s.figure(fig, "league_vs_psro.png")

    s.add("## Findings", "", *findings(leduc_table(leduc) if len(leduc) else None, large), "")
    s.add("## Deviations", "",
          "- Few seeds (see above); PPO networks of one hidden layer; no tuning per algorithm.",
          "- League: one main agent, one main exploiter and one league exploiter per seat (the defaults of "
          "psro.family.league.LeagueOptions), snapshots every two calls unless a 70% win rate comes first.",
          "- Learner steps are the decisions of learning networks in training; evaluation is free for all.",
          "- FSP continues its learner from its latest network (warm start); PSRO and FXP's counters start fresh.")
    if missing:
        s.add("", "Missing or failed algorithms (not in the tables):", "")
        s.add(*[f"- {label}: {why}" for label, why in missing.items()])
    s.add("")
    print(s.write())


if __name__ == "__main__":
    main()
