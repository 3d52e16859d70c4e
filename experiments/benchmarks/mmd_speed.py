"""Tabular magnetic mirror descent: ours (psro.family.mmd) against OpenSpiel's MMDDilatedEnt on Kuhn and Leduc.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python -m experiments.benchmarks.mmd_speed

Both sides run in one process on the same game object with the same temperature ``alpha`` and step size (two
settings: ``alpha=0`` with OpenSpiel's example step 1, mirror descent ascent; ``alpha=0.1`` with OpenSpiel's
default step ``alpha / max|A|^2``), 300 iterations each. Reported per game and setting:

* setup: OpenSpiel's constructor (its sequence-form maps and dense payoff matrix) against our
  ``build_game_tree`` and ``mmd_problem``;
* iterations: OpenSpiel's ``update_sequences`` calls (timed alone, one run) against
  ``magnetic_mirror_descent(..., nash_conv_every=None)`` (median of ``--repeats`` runs), and their ratio;
* the largest difference of an action probability after 100 iterations (and after the last), over the
  last-iterate and the average policies, rows matched by their information-state strings;
* the NashConv of both average policies after the last iteration (OpenSpiel's ``exploitability.nash_conv`` of
  its policy, the sequence-form NashConv of ours).

``--quick`` runs 30 iterations on Kuhn and 5 on Leduc (compared at the last) and writes under ``runs/``.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np

from experiments import harness

RESULTS = Path(__file__).resolve().parent / "results"
GAMES = ("kuhn_poker", "leduc_poker")
#: (alpha, stepsize) pairs; None is OpenSpiel's default step alpha / max|A|^2
SETTINGS = ((0.0, 1.0), (0.1, None))

logger = logging.getLogger("mmd_speed")


def max_difference(openspiel_policy, ours, tree) -> float:
    """The largest |difference| of a legal action's probability, rows found by information-state string."""
    worst = 0.0
    for p, info in enumerate(tree.infostates):
        for key, row, legal in zip(info.keys, ours[p], info.legal_mask):
            theirs = np.asarray(openspiel_policy.policy_for_key(key))
            worst = max(worst, float(np.abs(theirs[legal] - row[legal]).max()))
    return worst


def run_openspiel(game, alpha: float, stepsize, iterations: int, compare_at: int) -> dict:
    """OpenSpiel's MMD: setup and iteration times, policies at ``compare_at`` and at the end."""
    from open_spiel.python.algorithms.mmd_dilated import MMDDilatedEnt

    start = time.perf_counter()
    solver = MMDDilatedEnt(game, alpha, stepsize)
    out = {"setup": time.perf_counter() - start, "iterations": 0.0, "stepsize": solver.stepsize}
    for t in range(1, iterations + 1):
        start = time.perf_counter()
        solver.update_sequences()
        out["iterations"] += time.perf_counter() - start
        if t == compare_at:
            out["compared"] = (solver.get_policies(), solver.get_avg_policies())
        if t % 50 == 0:
            logger.info("  OpenSpiel: %d iterations in %.1f s", t, out["iterations"])
    out["last"] = (solver.get_policies(), solver.get_avg_policies())
    return out


def measure(game_name: str, alpha: float, stepsize, iterations: int, compare_at: int, repeats: int) -> dict:
    """One row of the table: both sides on ``game_name`` with the same settings."""
    import pyspiel
    from open_spiel.python.algorithms import exploitability

    from psro.family.mmd import magnetic_mirror_descent, mmd_problem
    from psro.measures.metrics import nash_conv_of_plans
    from psro.sequence_form.game_tree import build_game_tree

    game = pyspiel.load_game(game_name)
    logger.info("%s, alpha=%s, stepsize=%s: OpenSpiel's %d iterations", game_name, alpha, stepsize, iterations)
    theirs = run_openspiel(game, alpha, stepsize, iterations, compare_at)

    def setup():
        tree = build_game_tree(game)
        return tree, mmd_problem(tree, alpha, stepsize)

    ours_setup, (tree, _) = harness.median_time(setup, repeats)
    ours_time, ours = harness.median_time(
        lambda: magnetic_mirror_descent(tree, iterations, alpha, stepsize, nash_conv_every=None), repeats)
    early = magnetic_mirror_descent(tree, compare_at, alpha, stepsize, nash_conv_every=None)
    differences = {}
    for label, result, (last, average) in (("compared", early, theirs["compared"]), ("last", ours, theirs["last"])):
        differences[label] = max(max_difference(last, result.policies, tree),
                                 max_difference(average, result.average_policies, tree))
    if ours.stepsize != theirs["stepsize"]:
        raise RuntimeError(f"the step sizes differ: ours {ours.stepsize!r}, OpenSpiel's {theirs['stepsize']!r}")
    row = {"game": game_name, "alpha": alpha, "stepsize": theirs["stepsize"], "iterations": iterations,
           "compare_at": compare_at, "os_setup": theirs["setup"], "os_time": theirs["iterations"],
           "ours_setup": ours_setup, "ours_time": ours_time,
           "diff_compared": differences["compared"], "diff_last": differences["last"],
           "os_nash_conv": float(exploitability.nash_conv(game, theirs["last"][1])),
           "ours_nash_conv": nash_conv_of_plans(tree, ours.average_plans)}
    logger.info("  ours %.4f s, OpenSpiel %.2f s (%.0fx); max |diff| at %d: %.1e; average NashConv %.6f / %.6f",
                ours_time, row["os_time"], row["os_time"] / ours_time, compare_at, row["diff_compared"],
                row["ours_nash_conv"], row["os_nash_conv"])
    return row


def markdown(rows: list, repeats: int, command: str) -> str:
    lines = ["# Tabular MMD (dilated entropy): ours vs OpenSpiel's MMDDilatedEnt", "",
             f"`{command}`", "",
             f"Same game object, alpha and step size on both sides; OpenSpiel's iterations timed once, ours the median "
             f"of {repeats} runs; one BLAS thread, on a 2-core machine shared with other jobs. `max diff`: the "
             f"largest |difference| of an action probability over the last-iterate and average policies of every "
             f"infostate, matched by information-state string, after the iterations in brackets and after the last. "
             f"NashConv: of the average policy after the last iteration.", "",
             "| game | alpha | stepsize | iterations | OpenSpiel setup s | OpenSpiel iterations s | ours setup s | "
             "ours iterations s | ratio (iterations) | ratio (setup + iterations) | max diff (at) | "
             "max diff at the last | OpenSpiel NashConv | ours NashConv |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['game']} | {r['alpha']:g} | {r['stepsize']:.6g} | {r['iterations']} | {r['os_setup']:.3f} | "
            f"{r['os_time']:.2f} | {r['ours_setup']:.4f} | {r['ours_time']:.4f} | "
            f"{r['os_time'] / r['ours_time']:.0f}x | "
            f"{(r['os_setup'] + r['os_time']) / (r['ours_setup'] + r['ours_time']):.0f}x | "
            f"{r['diff_compared']:.1e} ({r['compare_at']}) | {r['diff_last']:.1e} | {r['os_nash_conv']:.6f} | "
            f"{r['ours_nash_conv']:.6f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = harness.script_parser(__doc__)
    parser.add_argument("--games", nargs="+", default=list(GAMES))
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--compare-at", type=int, default=100, help="iterations after which the policies are compared")
    parser.add_argument("--repeats", type=int, default=3, help="runs of ours (the median is reported)")
    parser.add_argument("--quick", action="store_true", help="30 iterations on Kuhn, 5 on Leduc, one run")
    parser.add_argument("--out", type=Path, default=None,
                        help="markdown file to write (default: results/mmd_speed.md for a default run, a new "
                             "folder under runs/ otherwise)")
    args = parser.parse_args(argv)
    out = harness.output_path(parser, args, RESULTS / "mmd_speed.md")
    rows = []
    for game_name in args.games:
        iterations = args.iterations
        if args.quick:
            iterations, args.repeats = (5 if game_name.startswith("leduc") else 30), 1
        compare_at = min(args.compare_at, iterations)
        for alpha, stepsize in SETTINGS:
            rows.append(measure(game_name, alpha, stepsize, iterations, compare_at, args.repeats))
    text = markdown(rows, args.repeats, harness.command_line())
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    logger.info("wrote %s\n%s", out, text)


if __name__ == "__main__":
    main()
