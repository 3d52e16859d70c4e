"""Reproduce Lanctot et al. (2023), "Population-based Evaluation in Repeated Rock-Paper-Scissors as a
Benchmark for Multiagent Reinforcement Learning" (TMLR).

1. The 43-bot cross-table played live (``games.roshambo.play_tournament``,
   a process pool of 2 workers, matches of 1000 throws) against the published
   table: fraction of entries within 3 standard errors, and correlation.
2. Elo, mElo (k=1), alpha-Rank (alpha=10, returns per throw) and Nash-averaging
   rankings of the published table, side by side.
3. Population measures per bot (see the summary for the definitions).

Run: ``python -m experiments.reproduce.rrps_population_eval [--quick] [--out DIR]``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from experiments.reproduce.common import Summary, parse_args
from games import NormalFormGame, datasets, make_executor
from games.roshambo import bot_names, play_tournament
from ranking import alpharank, elo, melo, nash_averaging
from solvers import solve

PAPER_ALPHARANK_TOP3 = ["iocainebot", "greenberg", "shofar"]
QUICK_BOTS = ["iocainebot", "greenberg", "shofar", "rockbot", "rotatebot", "copybot", "randbot"]
SE_FLOOR = 1.0   # return points per match: a floor on the standard error of entries with zero sample variance


def live_comparison(table: NormalFormGame, bots: list, matches: int, seed: int = 0) -> tuple:
    """Play the tournament and compare each entry with the published one."""
    with make_executor(2) as executor:
        result = play_tournament(bots, matches=matches, seed=seed, executor=executor, progress=False)
    eg = result.empirical_game
    ours, se = eg.mean()[0], eg.standard_error()[0]
    names = list(table.strategy_names[0])
    idx = [names.index(b) for b in result.bots]
    published = table.payoffs[0][np.ix_(idx, idx)]
    se_used = np.maximum(se, SE_FLOOR)
    rows = [{"row_bot": a, "col_bot": b, "published": published[i, j], "live_mean": ours[i, j],
             "live_se": se[i, j], "within_3se": abs(ours[i, j] - published[i, j]) <= 3 * se_used[i, j]}
            for i, a in enumerate(result.bots) for j, b in enumerate(result.bots)]
    return pd.DataFrame(rows), result.info


def rankings(game: NormalFormGame) -> pd.DataFrame:
    """Elo, mElo, alpha-Rank and Nash averaging of the published table (see the summary for the inputs)."""
    names = list(game.strategy_names[0])
    m = game.payoffs[0] / 1000.0                       # mean return per throw, in [-1, 1]
    a = (m - m.T) / 2.0                                # antisymmetrised (the table is zero-sum up to noise)
    p = (1.0 + a) / 2.0                                # a throw's expected score as a win probability
    pgame = NormalFormGame.from_bimatrix(p, p.T, strategy_names=(tuple(names),) * 2)
    e = elo(pgame)["rating"]                           # indexed by agent
    me = melo(pgame, k=1).to_frame()["rating"]
    ar = alpharank(NormalFormGame.from_bimatrix(m, m.T, strategy_names=(tuple(names),) * 2), alpha=10.0,
                   population_size=50, single_population=True).pi
    na = nash_averaging(a, agents=names)               # columns "nash" (max-entropy Nash mass), "rating"
    out = pd.DataFrame({"bot": names,
                        "elo": e.reindex(names).to_numpy(),
                        "melo": me.reindex(names).to_numpy(),
                        "alpharank_mass": ar,
                        "nash_averaging": na["rating"].reindex(names).to_numpy(),
                        "nash_mass": na["nash"].reindex(names).to_numpy()})
    for col in ("elo", "melo", "alpharank_mass", "nash_averaging"):
        out[f"rank_{col}"] = out[col].rank(ascending=False, method="min").astype(int)
    return out.sort_values("rank_alpharank_mass").reset_index(drop=True)


def population_measures(game: NormalFormGame) -> tuple:
    """Per-bot population return and worst-case loss; exploitability of the uniform and Nash mixtures."""
    names = list(game.strategy_names[0])
    m = game.payoffs[0]
    off = ~np.eye(len(names), dtype=bool)
    per_bot = pd.DataFrame({
        "bot": names,
        "population_return": np.where(off, m, 0).sum(1) / off.sum(1),          # mean return vs the others
        "worst_case_return": np.where(off, m, np.inf).min(1),                   # min over opponents
        "worst_opponent": [names[j] for j in np.where(off, m, np.inf).argmin(1)],
    })
    per_bot["within_population_exploitability"] = -per_bot["worst_case_return"]
    a = (m - m.T) / 2.0
    uniform = np.full(len(names), 1.0 / len(names))
    nash = solve(NormalFormGame.from_bimatrix(a, -a), "nash_zero_sum").marginals[0]
    mixtures = {"uniform": uniform, "nash (antisymmetrised table)": nash}
    expl = {k: float((a @ w).max()) for k, w in mixtures.items()}   # best bot's mean return against the mixture
    return per_bot.sort_values("population_return", ascending=False).reset_index(drop=True), expl, nash


def main() -> None:
    def extra(parser):
        parser.add_argument("--matches", type=int, default=20, help="live matches per ordered pair")

    args = parse_args("rrps_population_eval", __doc__.split("\n\n")[0], extra)
    s = Summary("Population-based evaluation in repeated RPS (Lanctot et al., TMLR 2023)", args.out, args.quick)
    game = datasets.rrps_game()
    bots = QUICK_BOTS if args.quick else bot_names()
    matches = 2 if args.quick else args.matches

    live, info = live_comparison(game, bots, matches)
    s.csv(live, "live_vs_published.csv")
    corr = float(np.corrcoef(live.published, live.live_mean)[0, 1])
    frac = float(live.within_3se.mean())
    s.add("## 1. Live cross-table against the published one", "",
          f"{len(bots)} bots, {matches} matches of 1000 throws per ordered pair (self-play included), a process "
          f"pool of 2 workers: {info['seconds']:.1f} s wall, {info['cpu_seconds']:.1f} s CPU.",
          f"Entries within 3 standard errors of the published value: **{frac:.1%}** of {len(live)} "
          f"(standard error of our mean over matches, floored at {SE_FLOOR:g} point per match for entries "
          f"with no variance across matches; the published table's own error is not known and not counted). "
          f"Correlation between live and published entries: **{corr:.4f}**.",
          "Paper: the published table is the mean over its own matches; agreement within sampling error is "
          "the expected outcome (the bots' randomness comes from the C library's random(), reseeded per match "
          "here, so matches differ from the paper's).", "")
    worst = live.assign(z=(live.live_mean - live.published).abs() / np.maximum(live.live_se, SE_FLOOR))
    s.table(worst.sort_values("z", ascending=False).head(5)[["row_bot", "col_bot", "published", "live_mean",
                                                             "live_se", "z"]])

    ranks = rankings(game)
    s.csv(ranks, "rankings.csv")
    top3 = ranks.bot.head(3).tolist()
    s.add("## 2. Rankings of the published table", "",
          "Inputs: alpha-Rank on the table scaled to mean return per throw (single population, alpha = 10, "
          "m = 50); Elo and mElo (k = 1) on the antisymmetrised per-throw return a = (M - M^T) / 2000 read as a "
          "win probability (1 + a) / 2 per throw; Nash averaging on a itself (its max-entropy Nash and each "
          "bot's payoff against it).",
          f"Paper (alpha-Rank at alpha = 10): top three {PAPER_ALPHARANK_TOP3}. Ours: **{top3}**"
          f" ({'match' if top3 == PAPER_ALPHARANK_TOP3 else 'differs'}).", "")
    s.table(ranks.head(10)[["bot", "alpharank_mass", "rank_alpharank_mass", "rank_elo", "rank_melo",
                            "rank_nash_averaging", "elo", "nash_averaging", "nash_mass"]])

    per_bot, expl, nash = population_measures(game)
    s.csv(per_bot, "population_measures.csv")
    s.add("## 3. Population measures", "",
          "Definitions (M[i, j]: bot i's mean return per match of 1000 throws against bot j, published table):",
          "- population return of bot i: mean over the 42 other bots j of M[i, j];",
          "- worst-case return of bot i: min over the other bots j of M[i, j]; its within-population "
          "exploitability is minus that (the most any single bot of the population wins from it on average);",
          "- exploitability of a mixture w over the population: max over bots j of (A w)[j], A = (M - M^T) / 2, "
          "the best bot's mean return against a match opponent drawn from w.",
          "Paper: the paper defines population return and within-population exploitability per agent "
          "(names as in the paper; its exact normalisation could not be checked, ours is per match of 1000 "
          "throws).", "")
    s.table(per_bot.head(8))
    s.add(f"Exploitability of the uniform mixture over the 43 bots: {expl['uniform']:.2f}; of the Nash mixture "
          f"of A: {expl['nash (antisymmetrised table)']:.2g} (0 up to the LP tolerance, as A is antisymmetric). "
          f"Nash support: {', '.join(np.array(game.strategy_names[0])[nash > 1e-6])}.", "")

    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    axes[0].errorbar(live.published, live.live_mean, yerr=3 * np.maximum(live.live_se, SE_FLOOR), fmt=".",
                     ms=3, lw=0.5)
    lim = [min(live.published.min(), live.live_mean.min()), max(live.published.max(), live.live_mean.max())]
    axes[0].plot(lim, lim, "k--", lw=0.5)
    axes[0].set_xlabel("published mean return per match")
    axes[0].set_ylabel("live mean (3 SE bars)")
    axes[0].set_title(f"{len(bots)} bots, r = {corr:.3f}")
    top = ranks.head(12)
    axes[1].barh(top.bot[::-1], top.alpharank_mass[::-1])
    axes[1].set_xlabel("alpha-Rank mass (alpha = 10)")
    axes[1].set_title("alpha-Rank of the published table")
    s.figure(fig, "rrps.png")
    s.add("Deviations: --quick plays 7 bots and 2 matches per pair; the default plays all 43 bots with "
          f"{args.matches} matches per pair, fewer than the paper, so our standard errors are larger.")
    print(s.write())


if __name__ == "__main__":
    main()
