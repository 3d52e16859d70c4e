"""Reproduce the JPSRO convergence claims of Marris et al. (ICML 2021), "Multi-Agent Training beyond Zero-Sum
with Correlated Equilibrium Meta-Solvers".

Claim checked (qualitative, from the paper's experiments section): with the
maximum-Gini (MG) CCE/CE meta-solvers, JPSRO drives the CCE/CE gap of the
meta-distribution *in the full game* towards zero on small n-player and
general-sum games (3-player Kuhn poker, sheriff, trade_comm, 3-player
goofspiel), while the uniform meta-solver (fictitious-play-like) and
alpha-Rank do not converge to a small gap.

Runs: ``PSRO(game, meta_solver=...)`` with exact best responses and exact
meta-game payoffs, for the meta-solvers uniform, alpha-Rank (product
solutions: the loop is PSRO), MGCCE, MWCCE (JPSRO(CCE)) and MGCE, MWCE
(JPSRO(CE), ``br_selection="largest_gap"``). The uniform and alpha-Rank runs
report NashConv, so their CCE gap is computed here with
:func:`psro.metrics.joint_gap` on the product meta-distribution of their
meta-strategies. Every run also gets its CCE gap (a CE gap bounds it above).

Run: ``python experiments/reproduce/jpsro.py [--quick] [--out DIR]``.
"""

from __future__ import annotations

import logging
import math
import time

import matplotlib.pyplot as plt
import pandas as pd
import pyspiel
from common import Summary, parse_args

from games import load
from psro import PSRO
from psro.game_tree import build_game_tree
from psro.metrics import joint_gap
from solvers import make_equilibrium

logger = logging.getLogger("jpsro_reproduction")

# (label, meta_solver, kind of its own gap, br_selection)
META_SOLVERS = (
    ("uniform", "uniform", "nash_conv", "all"),
    ("alpharank", "alpharank", "nash_conv", "all"),
    ("MGCCE", "mgcce", "cce", "all"),
    ("MWCCE", "mwcce", "cce", "all"),
    ("MGCE", "mgce", "ce", "largest_gap"),
    ("MWCE", "mwce", "ce", "largest_gap"),
)
MAX_HISTORIES = 200_000   # "small enough for the exact tree"


def load_game(label: str):
    if label.startswith("goofspiel"):
        # simultaneous moves: the exact tree needs the turn-based version
        return pyspiel.convert_to_turn_based(pyspiel.load_game(label))
    return load(label)


def games(quick: bool) -> tuple:
    """The games to run and the notes on those skipped."""
    names = ["kuhn_poker(players=3)", "sheriff"]
    if not quick:
        names += ["trade_comm(num_items=2)", "goofspiel(players=3,num_cards=3)"]
    kept, notes = [], []
    try:
        build_game_tree(load("trade_comm"), max_histories=MAX_HISTORIES)
    except ValueError as exc:
        notes.append(f"The default `trade_comm` (num_items=10) is too large for the exact tree ({exc}); "
                     "`trade_comm(num_items=2)` is used instead.")
    for name in names:
        try:
            tree = build_game_tree(load_game(name), max_histories=MAX_HISTORIES)
        except ValueError as exc:
            notes.append(f"`{name}` skipped: {exc}")
            continue
        sizes = [len(info.keys) for info in tree.infostates]
        kept.append(name)
        notes.append(f"`{name}`: {tree.num_players} players, infostates per player {sizes}.")
    return kept, notes


def run_one(game: str, label: str, meta_solver: str, own_kind: str, br_selection: str,
            iterations: int, time_limit: float) -> pd.DataFrame:
    """One run: per iteration, its own gap and the CCE gap of its meta-distribution in the full game."""
    solver = PSRO(load_game(game), meta_solver=meta_solver, br_selection=br_selection, progress=False, seed=0)
    cce_gaps: list = []

    def record(row: dict) -> None:
        if solver.kind == "cce":
            cce_gaps.append(row["gap"])
            return
        meta_game = solver.meta_game.mean_game()
        eq = make_equilibrium(meta_game, joint=solver.meta_strategy.joint, concept="cce", method=meta_solver)
        cce_gaps.append(joint_gap(solver.tree, solver.populations, eq, "cce", meta_game.payoffs))

    start = time.perf_counter()
    history = solver.run(iterations=iterations, time_limit=time_limit, callback=record)
    logger.info("%s %s: %d iterations in %.1fs", game, label, len(history) - 1, time.perf_counter() - start)
    return pd.DataFrame({
        "game": game, "meta_solver": label, "iteration": history["iteration"],
        "wall_time": history["wall_time"], "own_gap_kind": own_kind, "own_gap": history["gap"],
        "cce_gap": cce_gaps, "population_size": history["population_0"],
    })


def plot(curves: pd.DataFrame, game_names: list):
    fig, axes = plt.subplots(1, len(game_names), figsize=(4.6 * len(game_names), 3.8), squeeze=False)
    for ax, game in zip(axes[0], game_names):
        for label, grp in curves[curves.game == game].groupby("meta_solver", sort=False):
            line, = ax.plot(grp.iteration, grp.cce_gap.clip(lower=1e-12), label=f"{label} (CCE gap)")
            if grp.own_gap_kind.iloc[0] == "ce":
                ax.plot(grp.iteration, grp.own_gap.clip(lower=1e-12), ls="--", color=line.get_color(),
                        label=f"{label} (CE gap)")
        ax.set_yscale("log")
        ax.set_title(game)
        ax.set_xlabel("iteration")
        ax.set_ylabel("gap in the full game")
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    return fig


def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logger.setLevel(logging.INFO)
    args = parse_args("jpsro", __doc__.split("\n\n")[0])
    s = Summary("JPSRO (Marris et al., ICML 2021)", args.out, args.quick)
    iterations, time_limit = (4, 2.0) if args.quick else (60, 20.0)
    names, notes = games(args.quick)
    frames = [run_one(g, label, ms, kind, sel, iterations, time_limit)
              for g in names for label, ms, kind, sel in META_SOLVERS]
    curves = pd.concat(frames, ignore_index=True)
    s.csv(curves, "gap_curves.csv")

    last = curves.sort_values("iteration").groupby(["game", "meta_solver"], sort=False).tail(1)
    best = curves.groupby(["game", "meta_solver"], sort=False).cce_gap.min().rename("min_cce_gap")
    last = last.join(best, on=["game", "meta_solver"])
    final = last[["game", "meta_solver", "iteration", "wall_time", "cce_gap", "min_cce_gap", "own_gap_kind",
                  "own_gap"]]
    final = final.set_index(["game", "meta_solver"]).loc[
        [(g, m[0]) for g in names for m in META_SOLVERS]].reset_index()
    s.csv(final, "final_gaps.csv")

    s.add("## Final gaps", "",
          f"Budget per run: at most {iterations} iterations and {time_limit:g} s (whichever first), exact best "
          "responses, seed 0. `cce_gap`: the CCE gap in the full game of the meta-distribution (for uniform and "
          "alpha-Rank: the product of their meta-strategies, computed with `psro.metrics.joint_gap`); "
          "`min_cce_gap`: the smallest CCE gap over the run (the gap is not monotone: new policies change the "
          "meta-game and its solution); `own_gap`: the gap each run reports (NashConv for product meta-solvers, "
          "CE gap for MGCE/MWCE).", "")
    s.table(final)
    s.add("## Paper vs ours", "",
          "Paper (qualitative): MG(C)CE JPSRO converges to a small CCE/CE gap on these games; the uniform "
          "meta-solver does not; alpha-Rank is not a CCE solver and does not either.", "")
    for game in names:
        f = final[final.game == game].set_index("meta_solver")
        verdict = "yes" if f.loc["MGCCE", "cce_gap"] < f.loc["uniform", "cce_gap"] else "no"
        s.add(f"- {game}: MGCCE CCE gap {f.loc['MGCCE', 'cce_gap']:.3g} vs uniform {f.loc['uniform', 'cce_gap']:.3g} "
              f"and alpha-Rank {f.loc['alpharank', 'cce_gap']:.3g}; MGCE CE gap {f.loc['MGCE', 'own_gap']:.3g} "
              f"(MGCCE below uniform: {verdict}).")
    s.add("")
    s.figure(plot(curves, names), "gap_curves.png")
    s.add("## Deviations", "", *[f"- {n}" for n in notes],
          "- The paper's numbers are read off its figures only qualitatively (no table); its runs use more "
          "iterations. Ours stop at the iteration/time budget above.",
          "- Gaps are exact (sequence-form best responses against the meta-distribution), not sampled; the "
          "figure draws gaps below 1e-12 at 1e-12.", "")
    if any(math.isnan(v) for v in final.cce_gap):
        s.add("Some runs produced no gap (NaN).", "")
    s.write()


if __name__ == "__main__":
    main()
