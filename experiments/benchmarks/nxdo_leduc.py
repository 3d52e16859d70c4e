"""NXDO against deep PSRO on Leduc poker: exact NashConv of each output against training time (a short run).

Both sides train without the game tree, with the same PPO oracle settings (``deep_psro_leduc.OurOptions``: the
tuned deep PSRO of ``deep_psro_leduc.py``):

* **deep PSRO** is ``deep_psro_leduc.run_ours`` as it is (PPO responses to the meta-Nash mixture, Monte Carlo
  meta-game, ``episodes_per_profile`` 300); its output is the meta-Nash mixture of its populations;
* **NXDO** is ``psro.XDO`` with the same oracle (``psro/variants/nxdo.py``): every iteration NFSP learns, on
  sampled play of the restricted game (a meta-action picks which population member acts), an average
  meta-policy per player (``--nfsp-steps`` decisions, fresh learners), and PPO trains each response against the
  other player's; its output is that restricted solution. Its meta-game only serves rankings, so it is sampled
  with few episodes (``--nxdo-episodes-per-profile``).

After every iteration the clock stops and the output is measured exactly (``deep_psro_leduc.Measure``: its
policies tabulated, in sequence form, exact best responses; the same code as ``deep_psro_leduc.py``'s). The sides
run one after the other in this process's children, each on one thread; by default the budget counts each side's
process-CPU seconds (the machine is shared). ``--quick``: 30 s each.

Run: ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python -m experiments.benchmarks.nxdo_leduc``
(results/nxdo_leduc.{csv,md} with the default options, else under ``runs/``).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import numpy as np

logger = logging.getLogger("nxdo_leduc")

RESULTS = Path(__file__).resolve().parent / "results" / "nxdo_leduc.md"
SIDES = ("deep_psro", "nxdo")
NFSP = {"num_envs": 32, "hidden": [64], "anticipatory": 0.1, "learning_starts": 1000, "batch_size": 128}


def nxdo_solver(seed: int, options, nfsp_steps: int, episodes_per_profile: int):
    """``psro.XDO`` with deep PSRO's PPO oracle, NFSP on the restricted game, and no game tree."""
    from psro.variants.xdo import XDO

    return XDO("leduc_poker", oracle="ppo", evaluator="monte_carlo", meta_solver=options.meta_solver,
               oracle_steps=options.oracle_steps, episodes_per_profile=episodes_per_profile,
               oracle_options=dict(options.oracle_options) or None, seed=seed, exact_gap=False,
               approx_gap_every=None, progress=False,
               algorithm_options={"nfsp": {**NFSP, "steps_per_iteration": nfsp_steps}})


def run_nxdo(seed: int, budget: float, options, clock: str, nfsp_steps: int, episodes_per_profile: int) -> list:
    """NXDO for ``budget`` seconds of ``clock``; one row per iteration (the exact NashConv of its output)."""
    import pyspiel
    import torch

    from experiments.benchmarks import deep_psro_leduc as deep
    from psro.population import tabular_policy

    torch.manual_seed(seed)
    exact = deep.Measure(pyspiel.load_game("leduc_poker"))
    rows, timer, solver = [], deep.Clock(budget, clock), None

    def measure(row):
        timer.stop()
        plans = [[exact.plan((row["iteration"], p), p, lambda p=p, pol=pol: tabular_policy(pol, exact.tree, p))]
                 for p, pol in enumerate(solver.restricted_solution())]
        rows.append(deep._row("nxdo", seed, timer, row["iteration"], exact.nash_conv(plans, [[1.0]] * 2)))
        timer.start()

    try:
        timer.start()
        solver = nxdo_solver(seed, options, nfsp_steps, episodes_per_profile)
        if solver.tree is not None:
            raise RuntimeError("NXDO built the game tree; the benchmark runs it without one.")
        solver.run(iterations=10**9, callback=measure)
    except Exception as exc:   # the iteration running at the end of the budget does not count
        if not deep._from_budget(exc):
            raise
    return rows


def _side(side: str, seed: int, budget: float, clock: str, nfsp_steps: int, episodes: int) -> list:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    import torch

    from experiments.benchmarks import deep_psro_leduc as deep

    torch.set_num_threads(1)
    if side == "deep_psro":
        return [dict(r, side=side) for r in deep.run_ours(seed, budget, deep.OurOptions(), clock)]
    return run_nxdo(seed, budget, deep.OurOptions(), clock, nfsp_steps, episodes)


def summarise(rows: list, budget: float, clock: str, command: str) -> str:
    from experiments.benchmarks import deep_psro_leduc as deep

    key = f"{clock}_s"
    times = [t for t in (30, 60, 120, 180, 300, 600) if t < budget] + [budget]
    curves = {s: [r for r in rows if r["side"] == s] for s in SIDES}
    lines = ["# NXDO against deep PSRO on Leduc poker (short run)", "", f"Command: `{command}`", "",
             f"Exact NashConv of each side's output against {clock} seconds of training (measuring excluded), "
             "seed 0, the sides one after the other, one thread each.", "",
             f"| {clock} s | " + " | ".join(SIDES) + " |", "|---" * (len(SIDES) + 1) + "|"]
    lines += [f"| {t:g} | " + " | ".join(f"{deep.value_at(curves[s], t, key):.4g}" for s in SIDES) + " |"
              for t in times]
    lines.append("")
    for s in SIDES:
        last = curves[s][-1] if curves[s] else {}
        lines.append(f"- {s}: {last.get('iteration', 0)} iterations, final NashConv {last.get('nash_conv', np.nan):.4g}"
                     f", wall {last.get('wall_s', np.nan):.0f} s, CPU {last.get('cpu_s', np.nan):.0f} s")
    return "\n".join(lines) + "\n"


def main() -> None:
    from experiments import harness

    parser = harness.script_parser(__doc__)
    parser.add_argument("--budget", type=float, default=150.0, help="seconds of training for each side")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="cpu")
    parser.add_argument("--quick", action="store_true", help="30 s each")
    parser.add_argument("--nfsp-steps", type=int, default=20_000, help="NXDO's NFSP decisions per iteration")
    parser.add_argument("--nxdo-episodes-per-profile", type=int, default=20)
    parser.add_argument("--out", help="markdown summary path (the CSV goes next to it)")
    args = parser.parse_args()
    budget = 30.0 if args.quick else args.budget
    out = harness.output_path(parser, args, RESULTS)
    out.parent.mkdir(parents=True, exist_ok=True)
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    rows = []
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
        for side in SIDES:
            rows += pool.submit(_side, side, 0, budget, args.clock, args.nfsp_steps,
                                args.nxdo_episodes_per_profile).result()
    import pandas as pd

    pd.DataFrame(rows, columns=["side", "seed", "wall_s", "iteration", "nash_conv", "cpu_s"]).to_csv(
        out.with_suffix(".csv"), index=False)
    command = harness.command_line()
    out.write_text(summarise(rows, budget, args.clock, command))
    sys.stdout.write(out.read_text())


if __name__ == "__main__":
    main()
