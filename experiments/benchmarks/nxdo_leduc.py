"""NXDO against deep PSRO on Leduc poker: exact NashConv of each output against training time (a short run).

A comparison (:mod:`experiments.benchmarks.leduc.comparison`) of two toolkit sides. Both train without the game
tree, with the same PPO oracle settings (the defaults of ``experiments.benchmarks.leduc.toolkit_adapter.Options``:
the PPO-tuned deep PSRO of ``deep_psro_leduc.py``):

* **deep PSRO** is that side as it is (PPO responses to the meta-Nash mixture, Monte Carlo meta-game,
  ``episodes_per_profile`` 300); its output is the meta-Nash mixture of its populations;
* **NXDO** is the same side with ``algorithm: xdo`` (``psro.XDO``) and the same oracle (``psro/variants/nxdo.py``):
  every iteration NFSP learns, on sampled play of the restricted game (a meta-action picks which population member
  acts), an average meta-policy per player (``--nfsp-steps`` decisions, fresh learners), and PPO trains each response
  against the other player's; its output is that restricted solution. Its meta-game only serves rankings, so it is
  sampled with few episodes (``--nxdo-episodes-per-profile``).

After every iteration the clock stops and the output is measured exactly
(``experiments.benchmarks.leduc.measure.Measure``: its policies tabulated, in sequence form, exact best responses;
the same code as ``deep_psro_leduc.py``'s). The sides run one after the other in this process's children, each on one
thread; by default the budget counts each side's process-CPU seconds (the machine is shared). ``--quick``: 30 s each.

Run: ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python -m experiments.benchmarks.nxdo_leduc``
(results/nxdo_leduc.{csv,md} with the default options, else under ``runs/``).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

logger = logging.getLogger("nxdo_leduc")

RESULTS = Path(__file__).resolve().parent / "results" / "nxdo_leduc.md"
#: NXDO's NFSP on the restricted game (``algorithm_options.nfsp``; its ``steps_per_iteration`` from ``--nfsp-steps``)
NFSP = {"num_envs": 32, "hidden": [64], "anticipatory": 0.1, "learning_starts": 1000, "batch_size": 128}


def comparison(budget: float, clock: str, nfsp_steps: int, episodes_per_profile: int):
    """The two sides, seed 0, one process at a time (NXDO: deep PSRO's side with ``algorithm: xdo``, its NFSP and
    few episodes per meta-game profile, and no ``approx_gap``).

    Examples
    --------
    >>> sides = comparison(30.0, "cpu", 20_000, 20).sides
    >>> [s.name for s in sides], sides[1].options["fields"]["algorithm"]
    (['deep_psro', 'nxdo'], 'xdo')
    """
    from experiments.benchmarks.leduc.comparison import Comparison, Side

    nxdo = {"algorithm": "xdo", "episodes_per_profile": episodes_per_profile, "approx_gap_every": None,
            "algorithm_options": {"nfsp": {**NFSP, "steps_per_iteration": nfsp_steps}}}
    return Comparison(title="NXDO against deep PSRO on Leduc poker (short run)", budget=budget, clock=clock,
                      seeds=[0], processes=1, sides=[Side(name="deep_psro"),
                                                     Side(name="nxdo", options={"fields": nxdo})])


def main() -> None:
    from experiments import harness
    from experiments.benchmarks.leduc.comparison import run_comparison, summarise
    from experiments.benchmarks.leduc.measure import ROW_COLUMNS

    parser = harness.script_parser(__doc__)
    parser.add_argument("--budget", type=float, default=150.0, help="seconds of training for each side")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="cpu")
    parser.add_argument("--quick", action="store_true", help="30 s each")
    parser.add_argument("--nfsp-steps", type=int, default=20_000, help="NXDO's NFSP decisions per iteration")
    parser.add_argument("--nxdo-episodes-per-profile", type=int, default=20)
    parser.add_argument("--out", help="markdown summary path (the CSV goes next to it)")
    args = parser.parse_args()
    spec = comparison(30.0 if args.quick else args.budget, args.clock, args.nfsp_steps,
                      args.nxdo_episodes_per_profile)
    out = harness.output_path(parser, args, RESULTS)
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = run_comparison(spec)
    import pandas as pd

    pd.DataFrame(rows, columns=ROW_COLUMNS).to_csv(out.with_suffix(".csv"), index=False)
    out.write_text(summarise(rows, spec, harness.command_line()))
    sys.stdout.write(out.read_text())


if __name__ == "__main__":
    main()
