"""Write the example notebooks of this folder (``python experiments/notebooks/make_notebooks.py``).

The notebooks are generated so that their source stays reviewable as Python, then executed top to bottom
(nbclient, from the repository root, BLAS threads pinned) and written with their outputs, so that a reader sees the
figures without running anything; ``--no-execute`` writes them without outputs. ``tests/test_notebooks.py``
executes each one again and checks that the committed ones carry their figures.
"""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

SETUP = """\
import sys
import numpy as np
import pandas as pd
import matplotlib.pyplot as plt
%matplotlib inline
print(sys.executable)"""

QUICKSTART = [
    new_markdown_cell("# Quickstart\n\nA custom game, PSRO on Kuhn poker with a small budget, rankings "
                      "(Elo, alpha-Rank) and plots. Every cell runs in seconds."),
    new_code_cell(SETUP),
    new_markdown_cell("## A custom normal-form game\n\n`games.from_payoff_function` evaluates a payoff "
                      "function at every pure profile. Here: a Cournot duopoly with quantities 0..4, price "
                      "`8 - q0 - q1` and unit cost 1."),
    new_code_cell("""\
import games
from solvers import solve, nash_conv

cournot = games.from_payoff_function(
    lambda q: [(8 - q[0] - q[1] - 1) * q[0], (8 - q[0] - q[1] - 1) * q[1]],
    [range(5), range(5)], name="cournot")
eq = solve(cournot, "nash")
print(cournot.shape, [m.round(3).tolist() for m in eq.marginals], "NashConv", nash_conv(cournot, eq.marginals))
assert nash_conv(cournot, eq.marginals) < 1e-8"""),
    new_markdown_cell("## A custom sequential game: the trust dilemma\n\nImporting "
                      "`games.examples.trust_dilemma` registers a sequential stag hunt written with "
                      "`games.SequentialGame`; `games.check_game` checks it like OpenSpiel's own games."),
    new_code_cell("""\
import games.examples.trust_dilemma  # registers "trust_dilemma"
from games import catalog

trust = games.load("trust_dilemma")
print(games.check_game(trust).ok)
stag_hunt = catalog.stag_hunt()
for method in ("nash", "rae"):
    e = solve(stag_hunt, method)
    print(method, [m.round(3).tolist() for m in e.marginals])"""),
    new_markdown_cell("## PSRO on Kuhn poker"),
    new_code_cell("""\
from psro import PSRO

solver = PSRO("kuhn_poker", meta_solver="nash", progress=False, seed=0)
history = solver.run(iterations=6)
history[["iteration", "gap", "population_0", "population_1", "wall_time"]]"""),
    new_code_cell("""\
fig, ax = plt.subplots(figsize=(5, 3))
ax.semilogy(history["iteration"], history["gap"].clip(lower=1e-12), marker="o")
ax.set_xlabel("iteration"); ax.set_ylabel("NashConv"); ax.set_title("PSRO on Kuhn poker")
plt.show()
assert history["gap"].iloc[-1] < history["gap"].iloc[0]"""),
    new_markdown_cell("## Rankings\n\nalpha-Rank of the PSRO meta-game (two populations), and Elo of the "
                      "soccer meta-game (win probabilities) from Rowland et al. (2019)."),
    new_code_cell("""\
from ranking import alpharank, elo
from ranking.alpha_rank.alpharank_plots import plot_response_graph

meta = solver.meta_game.mean_game()
ar = alpharank(meta, alpha=10.0)
print("alpha-Rank mass of the top profiles:", np.sort(ar.pi)[::-1][:3].round(3))
plot_response_graph(ar, top=6)
plt.show()"""),
    new_code_cell("""\
soccer = games.datasets.load_soccer()
ratings = elo(soccer).sort_values("rating", ascending=False)
ax = ratings["rating"].plot.barh(figsize=(5, 3), title="Elo of the soccer agents")
plt.show()
ratings.head()"""),
]

ANALYSE = [
    new_markdown_cell("# Analyse a PSRO run directory\n\nSet `PSRO_RUN_DIR` to analyse an existing run of any "
                      "game (`psro run CONFIG` writes one under `runs/`); otherwise the notebook first writes a "
                      "tiny Kuhn poker run into a temporary folder. Nothing below depends on the game: payoff "
                      "ranges come from the run, and every figure stays readable with 50 policies (top-k "
                      "legends and labels)."),
    new_code_cell(SETUP),
    new_code_cell("""\
import json, os, tempfile
from pathlib import Path

import yaml

run_dir = os.environ.get("PSRO_RUN_DIR")
if run_dir is None:
    from psro import PSRO, PSROConfig
    from psro.run.run_dir import write_run

    config = PSROConfig(game="kuhn_poker", iterations=5)
    solver = PSRO(config.game, meta_solver=config.meta_solver, progress=False, seed=0)
    solver.run(iterations=config.iterations)
    run_dir = tempfile.mkdtemp(prefix="psro_run_")
    write_run(run_dir, config, solver)
run_dir = Path(run_dir)
run_config = yaml.safe_load((run_dir / "config.yaml").read_text())
TOP = 8   # policies named in legends and labels (the rest are drawn, unnamed)
print(run_config["game"], sorted(p.name for p in run_dir.iterdir()))"""),
    new_markdown_cell("## Gap curves"),
    new_code_cell("""\
history = pd.read_csv(run_dir / "history.csv")
fig, axes = plt.subplots(1, 2, figsize=(9, 3))
for ax, x in zip(axes, ("iteration", "wall_time")):
    if history["gap"].notna().any():
        ax.semilogy(history[x], history["gap"].clip(lower=1e-12), marker="o", label="gap")
    if "train_gap" in history and history["train_gap"].notna().any():
        ax.semilogy(history[x], history["train_gap"].clip(lower=1e-12), ls="--", label="train_gap")
    if ax.lines:
        ax.legend()
    else:   # (a run without a tree: no exact gap; see the approximate gap below)
        ax.text(0.5, 0.5, "no exact gap (no game tree)", ha="center", transform=ax.transAxes)
    ax.set_xlabel(x); ax.set_ylabel("gap")
plt.show()
history.tail()"""),
    new_markdown_cell("## Learning curves\n\nA run that trains networks (PPO, DQN, NFSP) writes `learners.csv`: one "
                      "row per training chunk of every learned response, on the run's environment-step axis. One "
                      "thin line per response, a colour per player, readable with 50 responses "
                      "(`psro report` draws the same figure as `learning_curves.png`)."),
    new_code_cell("""\
from psro.run.learning_curves import read_learning_curves

learners = read_learning_curves(run_dir)
fig, axes = plt.subplots(1, 2, figsize=(9, 3))
for (learner, player, iteration, index), rows in learners.groupby(["learner", "player", "iteration", "index"]):
    for ax, y in zip(axes, ("loss", "episode_return")):
        ax.plot(rows["env_steps"], rows[y], color=f"C{player % 10}", lw=0.8, alpha=0.7,
                marker="." if len(rows) == 1 else None)
for ax, y in zip(axes, ("loss", "mean episode return")):
    ax.set_xlabel("environment steps of the run"); ax.set_ylabel(y)
    if learners.empty:   # (an exact oracle trains no network)
        ax.text(0.5, 0.5, "no learned responses in this run", ha="center", transform=ax.transAxes)
for player in sorted(learners["player"].unique()):
    axes[1].plot([], [], color=f"C{player % 10}", label=f"player {player}")
if len(learners):
    axes[1].legend(fontsize=8)
plt.show()
learners.groupby(["learner", "player"])[["loss", "episode_return", "value"]].mean() if len(learners) else None"""),
    new_markdown_cell("## Approximate gap\n\nWhere the run measured `approx_gap` (fresh learned best responses "
                      "against the meta-strategy), its value with a 95% interval (1.96 standard errors); where "
                      "there is an exact gap too, both."),
    new_code_cell("""\
fig, ax = plt.subplots(figsize=(6, 3))
measured = history[history["approx_gap"].notna()] if "approx_gap" in history else history.iloc[:0]
if len(measured):
    ax.errorbar(measured["iteration"], measured["approx_gap"], yerr=1.96 * measured["approx_gap_stderr"],
                fmt="o", capsize=3, label="approx_gap (95% interval)")
if history["gap"].notna().any():
    ax.plot(history["iteration"], history["gap"], label="exact gap")
if not len(measured) and not history["gap"].notna().any():
    ax.text(0.5, 0.5, "no gap measured in this run", ha="center", transform=ax.transAxes)
ax.axhline(0, color="grey", lw=0.5); ax.set_xlabel("iteration"); ax.set_ylabel("gap"); ax.legend(fontsize=8)
plt.show()"""),
    new_markdown_cell("## Meta-strategy over time\n\nThe run directory keeps the final meta-strategy and the "
                      "whole meta-game. Since the populations grow with every iteration, the meta-game "
                      "of iteration `t` is its leading block: re-solving it gives the meta-strategy over time "
                      "(a Nash equilibrium). The legend names the policies with the most final mass."),
    new_code_cell("""\
from games import EmpiricalGame, NormalFormGame
from solvers import solve

meta_game = EmpiricalGame.load(run_dir / "meta_game.npz").mean_game()
final = json.loads((run_dir / "meta_strategy.json").read_text())
marginals = [np.asarray(m) for m in final["marginals"]]
method = "nash_zero_sum" if meta_game.is_zero_sum() else "nash"
sizes = history[[c for c in history.columns if c.startswith("population_")]].to_numpy()
rows = []
for size in sizes:
    sub = meta_game.payoffs[(slice(None),) + tuple(slice(0, int(k)) for k in size)]
    eq = solve(NormalFormGame(sub), method)
    rows.append(np.pad(eq.marginals[0], (0, int(sizes[-1][0]) - len(eq.marginals[0]))))
over_time = np.array(rows)
ranked = np.argsort(-marginals[0], kind="stable")[:TOP].tolist()
top = set(ranked)
colours = [plt.cm.tab10(ranked.index(i) % 10) if i in top else ("0.75" if i % 2 else "0.85")
           for i in range(over_time.shape[1])]   # the top policies in colour, the rest in greys
fig, ax = plt.subplots(figsize=(7, 3))
ax.stackplot(np.arange(len(over_time)), over_time.T, colors=colours,
             labels=[f"policy {i}" if i in top else "_" for i in range(over_time.shape[1])])
ax.set_xlabel("iteration"); ax.set_ylabel("player 0 meta-strategy")
ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1), title=f"top {min(TOP, len(top))}")
fig.tight_layout()
plt.show()
print("final (from meta_strategy.json):", np.round(marginals[0], 3)[:20])"""),
    new_markdown_cell("## Meta-game heatmap\n\nPlayer 0's payoff against player 1's policies (for more players, "
                      "averaged over the others' final meta-strategies), rows and columns ordered by final "
                      "meta-strategy mass, so the support sits in the top-left corner."),
    new_code_cell("""\
u = meta_game.payoffs[0]
for k in range(u.ndim - 1, 1, -1):   # average out players 2, 3, ... under their final meta-strategies
    u = np.tensordot(u, marginals[k], axes=([k], [0]))
rows_order = np.argsort(-marginals[0], kind="stable")
cols_order = np.argsort(-marginals[1], kind="stable")
heat = u[np.ix_(rows_order, cols_order)]
bound = float(np.abs(heat).max()) or 1.0
grow = min(4.0, max(heat.shape) / 15)   # larger cells for large populations, so the top labels fit
fig, ax = plt.subplots(figsize=(6 + grow, 5 + grow))
image = ax.imshow(heat, cmap="RdBu_r", vmin=-bound, vmax=bound, interpolation="nearest")
fig.colorbar(image, ax=ax, label="player 0 payoff")
for axis, order, marg in ((ax.yaxis, rows_order, marginals[0]), (ax.xaxis, cols_order, marginals[1])):
    shown = np.arange(min(TOP, len(order)))
    axis.set_ticks(shown, [f"{order[i]} ({marg[order[i]]:.2f})" for i in shown], fontsize=7)
ax.tick_params(axis="x", labelrotation=90)
ax.set_ylabel("player 0 policy (mass)"); ax.set_xlabel("player 1 policy (mass)")
plt.show()"""),
    new_markdown_cell("## Response graph\n\nalpha-Rank of the final meta-game, drawn with the plot helper."),
    new_code_cell("""\
from ranking import alpharank
from ranking.alpha_rank.alpharank_plots import plot_response_graph

ar = alpharank(meta_game, alpha=10.0)
plot_response_graph(ar, top=TOP)
plt.show()"""),
    new_markdown_cell("## Rating confidence intervals (Elo bootstrap)\n\nMatches between player 0's and "
                      "player 1's policies are simulated as wins with probability `(u - lo) / (hi - lo)`, where "
                      "`[lo, hi]` is the game's declared payoff range when it is an OpenSpiel game, else the "
                      "range the run's meta-game observed; Elo with a bootstrap of the matches gives intervals. "
                      "The figure shows the best and the worst policies; the table has them all."),
    new_code_cell("""\
import pyspiel
from ranking import elo

lo, hi = float(meta_game.payoffs[0].min()), float(meta_game.payoffs[0].max())
game_name = str(run_config["game"]).split("(")[0]
if game_name in pyspiel.registered_names():   # (never imports code named in a run directory)
    game = pyspiel.load_game(run_config["game"])
    lo, hi = float(game.min_utility()), float(game.max_utility())
hi = hi if hi > lo else lo + 1.0
rng = np.random.default_rng(0)
u = meta_game.payoffs[0] if meta_game.num_players == 2 else u
records = []
for i in range(u.shape[0]):
    for j in range(u.shape[1]):
        wins = rng.random(40) < np.clip((u[i, j] - lo) / (hi - lo), 0, 1)
        records += [{"agent_a": f"p0:{i}", "agent_b": f"p1:{j}", "score_a": float(w)} for w in wins]
ratings = elo(pd.DataFrame(records), bootstrap=100, rng=0).sort_values("rating")
shown = ratings if len(ratings) <= 2 * TOP else pd.concat([ratings.head(TOP), ratings.tail(TOP)])
fig, ax = plt.subplots(figsize=(6, 0.25 * len(shown) + 1))
ax.errorbar(shown["rating"], np.arange(len(shown)), fmt="o",
            xerr=[shown["rating"] - shown["lower"], shown["upper"] - shown["rating"]])
ax.set_yticks(np.arange(len(shown)), shown.index, fontsize=7)
ax.set_xlabel(f"Elo (95% bootstrap interval); payoffs in [{lo:g}, {hi:g}]")
fig.tight_layout()
plt.show()
assert (ratings["lower"] <= ratings["upper"]).all()
ratings.tail()"""),
]

NOISY = [
    new_markdown_cell("# Ranking the soccer meta-game under noise\n\nThe soccer meta-game (Rowland et al. "
                      "2019) gives win probabilities; we only see Bernoulli match outcomes. How many matches "
                      "fix its response graph, and how certain is alpha-Rank?"),
    new_code_cell(SETUP),
    new_code_cell("""\
from games import datasets, EmpiricalGame
from ranking import alpharank, response_graph, response_graph_ucb, count_wrong_edges

soccer = datasets.load_soccer()
exact = alpharank(soccer, alpha=10.0, single_population=True)
names = soccer.strategy_names[0]
print("exact alpha-Rank:", dict(zip(names, exact.pi.round(3))))"""),
    new_markdown_cell("## Bernoulli sampling\n\n`n` matches per profile; the alpha-Rank of the sample means."),
    new_code_cell("""\
rng = np.random.default_rng(0)

def sampled_game(n):
    eg = EmpiricalGame(soccer.shape)
    wins = rng.binomial(n, soccer.payoffs[0])
    for prof in np.ndindex(*soccer.shape):
        w = float(wins[prof])
        eg.add_statistics(prof, n, [w, n - w], [w, n - w])
    return eg

from games import NormalFormGame

for n in (10, 100, 1000):
    row = sampled_game(n).mean()[0]   # P(i beats j) estimated from player 0's outcomes
    pi = alpharank(NormalFormGame.from_bimatrix(row, row.T), alpha=10.0, single_population=True).pi
    print(n, "matches/profile: L1 distance to the exact masses", np.abs(pi - exact.pi).sum().round(3))"""),
    new_markdown_cell("## ResponseGraphUCB\n\nAdaptive sampling until every edge of the response graph is "
                      "resolved (epsilon-relaxed Hoeffding bounds: soccer has near-ties)."),
    new_code_cell("""\
ref = response_graph(soccer)
rows = []
for scheme in ("uniform-exhaustive", "count-weighted"):
    r = response_graph_ucb(soccer, delta=0.1, bound="hoeffding-relaxed", eps=0.1, scheme=scheme, rng=0)
    rows.append({"scheme": scheme, "samples": r.total_samples, "resolved": r.resolved,
                 "wrong_edges": count_wrong_edges(r.graph, ref), "edges": r.num_edges})
ucb = r
pd.DataFrame(rows)"""),
    new_code_cell("""\
fig, ax = plt.subplots(figsize=(5.5, 4.8), layout="constrained")
im = ax.imshow(ucb.samples, cmap="viridis")
ax.set_xticks(range(len(names)), names, rotation=90); ax.set_yticks(range(len(names)), names)
ax.set_xlabel("column agent"); ax.set_ylabel("row agent")
ax.set_title("ResponseGraphUCB samples per profile\\n(count-weighted)"); fig.colorbar(im, ax=ax, label="samples")
fig.canvas.draw()   # lay the figure out, then check that the title fits inside it
title_box, figure_box = ax.title.get_window_extent(), fig.bbox
assert figure_box.x0 <= title_box.x0 and title_box.x1 <= figure_box.x1 and title_box.y1 <= figure_box.y1
plt.show()"""),
    new_markdown_cell("## alpha-Rank with confidence intervals\n\nSound outer bounds over the Hoeffding box "
                      "(`alpharank_mass_bounds`) and a parametric bootstrap (`bootstrap_alpharank`) on the "
                      "samples ResponseGraphUCB drew."),
    new_code_cell("""\
from ranking import alpharank_mass_bounds, bootstrap_alpharank

eg = ucb.empirical_game
bounds = alpharank_mass_bounds(eg, alpha=10.0, single_population=True, rng=0)
boot = bootstrap_alpharank(eg, 50, alpha=10.0, single_population=True, rng=0)
table = pd.DataFrame({"exact": exact.pi, "estimate": bounds.point, "outer_lower": bounds.outer_lower,
                      "outer_upper": bounds.outer_upper, "boot_lower": boot.lower, "boot_upper": boot.upper},
                     index=names)
order = np.argsort(-table["estimate"].to_numpy())
t = table.iloc[order]
fig, ax = plt.subplots(figsize=(6, 3))
x = np.arange(len(t))
ax.vlines(x - 0.1, t.outer_lower, t.outer_upper, color="grey", label="outer bounds")
ax.vlines(x + 0.1, t.boot_lower, t.boot_upper, color="C0", lw=3, label="bootstrap 95%")
ax.plot(x, t.exact, "k*", label="exact")
ax.set_xticks(x, t.index, rotation=45); ax.set_ylabel("alpha-Rank mass"); ax.legend(fontsize=7)
plt.show()
assert ((table.outer_lower <= table.exact + 1e-9) & (table.exact <= table.outer_upper + 1e-9)).mean() >= 0.9
t"""),
]

DYNAMICS = [
    new_markdown_cell("# Evolutionary dynamics\n\nReplicator and Boltzmann-Q vector fields "
                      "(`solvers.dynamics.evolutionary_dynamics`), trajectories integrated with "
                      "`scipy.integrate.solve_ivp`, "
                      "rest points with their stability, phase portraits (`ranking.dynamics_plots`) and the Moran "
                      "process (`solvers.dynamics.moran`)."),
    new_code_cell(SETUP),
    new_markdown_cell("## Rock-paper-scissors on the 2-simplex\n\nOne population. Under the replicator the "
                      "orbits are closed around the centre (a neutral rest point; `x1 x2 x3` is conserved) and "
                      "the vertices are saddles; Q-learning's exploration (Boltzmann-Q) makes the centre attract."),
    new_code_cell("""\
from games import catalog
from ranking.dynamics_plots import plot_simplex_portrait, plot_square_portrait
from solvers.dynamics.evolutionary_dynamics import rest_points, trajectory

rps = catalog.rock_paper_scissors()
fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
plot_simplex_portrait(rps, "replicator", ax=axes[0], t_max=15)
plot_simplex_portrait(rps, "boltzmann_q", ax=axes[1], temperature=0.3, t_max=15)
plt.show()
orbit = trajectory(rps, [0.6, 0.3, 0.1], t_max=30, single_population=True, rtol=1e-10, atol=1e-12)
assert np.allclose(orbit.states.prod(axis=1), 0.018, rtol=1e-6)"""),
    new_markdown_cell("## 2x2 games on the unit square\n\nTwo populations, one per player. The stag hunt has two "
                      "attracting pure equilibria separated by the saddle at the mixed one; matching pennies cycles "
                      "around its mixed equilibrium."),
    new_code_cell("""\
fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
plot_square_portrait(catalog.stag_hunt(), ax=axes[0], initial_states=[(0.5, 0.9), (0.6, 0.5)])
plot_square_portrait(catalog.matching_pennies(), ax=axes[1], initial_states=[(0.8, 0.5)])
plt.show()
table = pd.DataFrame([(p.state.round(4).tolist(), p.stability) for p in rest_points(catalog.stag_hunt())],
                     columns=["state (p0 stag, p0 hare, p1 stag, p1 hare)", "stability"])
assert (table.stability == "stable").sum() == 2
table"""),
    new_markdown_cell("## The Moran process\n\nA single stag hunter invading hunters of hare, in populations "
                      "of size N: the closed-form fixation probability against 20 000 simulated invasions each "
                      "(explicit `rng`). Neutral drift would give 1/N."),
    new_code_cell("""\
from solvers.dynamics.moran import fixation_probability, moran_fixation

rng = np.random.default_rng(0)
sizes = [4, 6, 8, 12, 16, 24]
exact = [fixation_probability(catalog.stag_hunt(), n, 0.2) for n in sizes]
sims = [moran_fixation(catalog.stag_hunt(), n, trials=20_000, rng=rng, selection_intensity=0.2) for n in sizes]
fig, ax = plt.subplots(figsize=(5, 3.5))
ax.plot(sizes, exact, "k-", label="closed form")
ax.errorbar(sizes, [s.probability for s in sims], yerr=[2 * s.stderr for s in sims], fmt="o", label="simulated")
ax.plot(sizes, [1 / n for n in sizes], ":", color="grey", label="neutral 1/N")
ax.set_xlabel("population size N"); ax.set_ylabel("fixation probability of one stag hunter"); ax.legend()
plt.show()
assert all(abs(s.probability - e) < 4 * s.stderr + 1e-3 for s, e in zip(sims, exact))"""),
]


COMPARE = [
    new_markdown_cell("# Compare the runs of a sweep\n\nSet `PSRO_SWEEP_DIR` to a sweep directory (`psro sweep "
                      "CONFIG --seeds 0-4 --grid ...` writes one) or to a folder of run directories; otherwise the "
                      "notebook first runs a tiny sweep: PSRO on Kuhn poker with two meta-solvers over three "
                      "seeds. Curves are means (or interquartile means) over seeds with percentile-bootstrap "
                      "bands, runs aligned by interpolation on the chosen axis and never extrapolated "
                      "(`psro.run.analysis`; `psro compare` is the same from the command line)."),
    new_code_cell(SETUP),
    new_code_cell("""\
import os, tempfile
from pathlib import Path

sweep_dir = os.environ.get("PSRO_SWEEP_DIR")
if sweep_dir is None:
    from psro import PSROConfig
    from psro.run.sweep import run_sweep

    config = PSROConfig(game="kuhn_poker", iterations=6, target_gap=None, rank_population=False)
    sweep_dir = run_sweep(config, tempfile.mkdtemp(prefix="psro_sweep_"), seeds="0-2",
                          grid={"meta_solver": ["nash", "uniform"]}).directory
sweep_dir = Path(sweep_dir)
sorted(p.name for p in sweep_dir.iterdir())"""),
    new_markdown_cell("## One tidy table\n\nOne row per history row of every run, with its group (what differs "
                      "between runs other than the seed), algorithm and seed."),
    new_code_cell("""\
from psro.run.analysis import aggregate_curves, final_values, load_histories

table = load_histories([sweep_dir])
table[["group", "seed", "iteration", "gap", "wall_time"]].head()"""),
    new_markdown_cell("## Curves with bands\n\nThe gap against iteration (any numeric column works as the x "
                      "axis: `wall_time`, `cpu_time`, `env_steps` where the runs record it)."),
    new_code_cell("""\
curves = aggregate_curves(table, x="iteration", y="gap", statistic="mean", resamples=1000)
fig, ax = plt.subplots(figsize=(6, 3.5))
for group, curve in curves.groupby("group"):
    (line,) = ax.plot(curve["x"], curve["estimate"], label=f"{group} ({int(curve['of'].iloc[0])} seeds)")
    ax.fill_between(curve["x"], curve["low"], curve["high"], color=line.get_color(), alpha=0.25, linewidth=0)
ax.set_yscale("log"); ax.set_xlabel("iteration"); ax.set_ylabel("gap (mean, 95% bootstrap CI)"); ax.legend()
plt.show()
final_values(table, y="gap", resamples=1000)"""),
]


NOTEBOOKS = (("quickstart.ipynb", QUICKSTART), ("analyse_run.ipynb", ANALYSE), ("noisy_ranking.ipynb", NOISY),
             ("dynamics.ipynb", DYNAMICS), ("compare_runs.ipynb", COMPARE))


def write(name: str, cells: list, execute: bool = True) -> Path:
    """Write notebook ``name`` from ``cells``; executed first (outputs kept) unless ``execute`` is False."""
    nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                            "language": "python"}})
    if execute:
        from nbclient import NotebookClient

        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(var, "1")
        for var in ("PSRO_RUN_DIR", "PSRO_SWEEP_DIR"):   # (the notebooks make their own small runs)
            os.environ.pop(var, None)
        NotebookClient(nb, kernel_name="python3", timeout=600,
                       resources={"metadata": {"path": str(HERE.parents[1])}}).execute()
    path = HERE / name
    nbformat.write(nb, path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-execute", action="store_true", help="write the notebooks without their outputs")
    parser.add_argument("names", nargs="*", help="only these notebooks (default: all)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for name, cells in NOTEBOOKS:
        if not args.names or name in args.names:
            logging.info("wrote %s", write(name, cells, execute=not args.no_execute))


if __name__ == "__main__":
    main()
