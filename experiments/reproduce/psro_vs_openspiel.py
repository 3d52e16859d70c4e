"""PSRO on Kuhn and Leduc poker: NashConv against wall time, ours against OpenSpiel's psro_v2, one plot.

The runs reuse ``experiments/benchmarks/psro_leduc.py`` (``run_ours`` and
``run_openspiel``): both use a Nash meta-solver and exact best responses;
psro_v2 estimates each new meta-game entry from ``--sims-per-entry`` sampled
episodes, as in its example script, and its NashConv is measured with its
clock stopped. Reference: Lanctot et al. (2017) / OpenSpiel's psro_v2 example;
the claim compared is "PSRO with exact best responses drives NashConv to 0
on Kuhn poker and down on Leduc poker".

Run: ``python -m experiments.reproduce.psro_vs_openspiel [--quick] [--budget SECONDS] [--out DIR]``.
"""

from __future__ import annotations

import pandas as pd

from experiments.benchmarks import psro_leduc as _bench
from experiments.reproduce.common import Summary, parse_args

run_ours, run_openspiel = _bench.run_ours, _bench.run_openspiel


def main() -> None:
    def extra(parser):
        parser.add_argument("--budget", type=float, default=90.0, help="wall seconds per implementation and game")
        parser.add_argument("--sims-per-entry", type=int, default=1000)

    args = parse_args("psro_vs_openspiel", __doc__.split("\n\n")[0], extra)
    s = Summary("PSRO against OpenSpiel's psro_v2 on Kuhn and Leduc poker", args.out, args.quick)
    budget = 1.0 if args.quick else args.budget
    sims = 100 if args.quick else args.sims_per_entry
    curves = []
    for game in ("kuhn_poker", "leduc_poker"):
        curves.append(run_ours(game, budget).assign(game=game, implementation="ours"))
        curves.append(run_openspiel(game, budget, sims, exact=False)
                      .assign(game=game, implementation=f"psro_v2 ({sims} sims/entry)"))
    table = pd.concat(curves, ignore_index=True)
    s.csv(table, "nashconv_vs_time.csv")
    final = (table.groupby(["game", "implementation"], sort=False)
             .agg(iterations=("iteration", "max"), final_nash_conv=("nash_conv", "last"),
                  wall_time=("wall_time", "max"), min_nash_conv=("nash_conv", "min")).reset_index())
    s.add(f"Budget: {budget:g} wall seconds per implementation and game (BLAS threads as set by the caller; "
          "the machine may be loaded, so compare the curves rather than absolute times).", "",
          "Paper / reference: with exact best responses, PSRO's NashConv on Kuhn poker reaches 0 (up to the "
          "meta-solver's tolerance) within a few iterations, and on Leduc it falls steadily; psro_v2's "
          "sampled meta-game keeps its NashConv above the exact solution's.", "")
    s.table(final)

    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, (game, grp) in zip(axes, table.groupby("game", sort=False)):
        for impl, g in grp.groupby("implementation", sort=False):
            ax.plot(g.wall_time, g.nash_conv.clip(lower=1e-10), marker=".", label=impl)
        ax.set_yscale("log")
        ax.set_xlabel("wall time (s)")
        ax.set_ylabel("NashConv")
        ax.set_title(game)
        ax.legend()
    s.figure(fig, "psro_vs_openspiel.png")
    s.add("Deviations: a wall-time budget instead of an iteration count; NashConv below 1e-10 is drawn at 1e-10.")
    print(s.write())


if __name__ == "__main__":
    main()
