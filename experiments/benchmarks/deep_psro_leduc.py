"""Learned paths on Leduc poker side by side (ours, OpenSpiel's psro_v2 and NFSP, the toolkit's other loops): exact
NashConv of each side's output against the same budget of time, from the command line or a comparison file.

For every seed the two sides run at the same time, each in its own process on one core (``sched_setaffinity``
where the machine has two cores or more), with one BLAS / OpenMP / torch thread each.

The sides are adapters of :mod:`experiments.benchmarks.leduc`: **psro_v2**
(:mod:`~experiments.benchmarks.leduc.psro_v2_adapter`: OpenSpiel's ``psro_v2`` set up as in its
``examples/psro_v2_example.py`` with ``--oracle_type=PG``, the three patches it needs to run here listed there),
**ours** and the toolkit's other loops (:mod:`~experiments.benchmarks.leduc.toolkit_adapter`: ``psro.PSRO`` with
the PPO oracle and the Monte Carlo evaluator, or the loop of a run config, with no game tree in training) and
**openspiel_nfsp** (:mod:`~experiments.benchmarks.leduc.openspiel_nfsp_adapter`: OpenSpiel's torch NFSP as in its
``examples/nfsp_leduc_pytorch.py``; it needs ``dm-tree``). After every iteration of each side the clock stops and the
exact NashConv of the side's output is computed the same way for all
(:class:`~experiments.benchmarks.leduc.measure.Measure`; ``--check-measure`` compares it with OpenSpiel's
``policy_aggregator`` + ``exploitability.nash_conv`` on random populations); the reported ``wall_s`` excludes
measuring.

A comparison is a config (:mod:`experiments.benchmarks.leduc.comparison`): ``--comparison FILE`` runs one, e.g.
``experiments/benchmarks/leduc/side_by_side.yaml`` (the side-by-side of issue #35); the options below build one
from the command line.

Run (about ``seeds x (budget + measuring)`` seconds)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python -m experiments.benchmarks.deep_psro_leduc

``--quick``: 60 s, one seed. ``--sides psro_v2`` or ``--sides ours`` runs one side only; ``--sides all`` (or any
list of sides) adds the toolkit's other learned algorithms, each from its config in ``experiments/configs/``
(:data:`VARIANT_CONFIGS`: NXDO, P2SRO and NFSP; one process each, ``executor: serial``), and OpenSpiel's NFSP
(``openspiel_nfsp``, above; ``--variant-config nxdo=experiments/configs/leduc_nxdo_tuned.yaml`` runs a side from
another config: the ``model_br`` configs of NXDO and P2SRO, ``leduc_nxdo_tuned.yaml`` and
``leduc_pipeline_psro_tuned.yaml``), measured the same way: the exact NashConv of NXDO's restricted solution, the NFSPs'
average policies and P2SRO's meta-strategy over its fixed policies, against the clock and against environment steps
(the history's ``env_steps``; psro_v2 does not count them). All sides of a seed run at the same time
(``--concurrent-seeds``: all seeds too), so with more processes than cores use ``--clock cpu``; ``--processes N``
runs the (side, seed) processes N at a time instead, each on a core of its own when N is at most the number of
cores, so that the wall clock holds for one side alone (``--processes 2`` on 2 cores: seeds 0 and 1 together, then
seed 2)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python -m experiments.benchmarks.deep_psro_leduc \\
        --sides all --seeds 3 --clock cpu --budget 150 --config experiments/configs/leduc_deep_tuned.yaml \\
        --out experiments/benchmarks/results/deep_leduc_variants.md

Results: a CSV of ``(side, seed, wall_s, iteration, nash_conv, cpu_s, env_steps)`` (``cpu_s``: the side's process
CPU seconds, measuring excluded; on a shared machine it shows how much of its core each side got) and a markdown
summary (results/deep_psro_leduc.{csv,md} with the default options, else under ``runs/``): the median NashConv at
the report times and environment steps, then, for each NashConv target of ``TARGETS`` (1.0, 0.5, 0.3), each
side's first time at or below it (median over seeds) and that time's ratio to ours's (``not reached`` where the
side's median never gets there, ``nan`` where ours's does not). Every row is also an INFO line of the log
(environment steps aside); ``--from-log LOG`` writes the summary from a log kept with ``2> LOG`` instead of running,
so that a crash at the end of a long run loses nothing (results/deep_psro_leduc_side_by_side.log: the rows of the
side-by-side run of issue #35).

``--config RUN.yaml`` runs ours as that run config says (its ``algorithm``: PSRO, self-play PSRO, ...; its oracle,
evaluator and meta-solver settings), with the benchmark's seed, clock and ``exact_gap: false``
(``toolkit_adapter.BENCHMARK_FIELDS``); ``--seed-offset 10`` runs seeds 10, 11, ... (the tuning seeds; the
benchmark's are 0-2).
The tuned learned paths (issue #28, item 4): ``experiments/configs/leduc_nfsp_tuned.yaml``, NFSP (128 games side
by side, minibatches of 512, eta 0.2, the best response's Q-network stepped at 3e-3, 50,000 decisions per
iteration); and ``experiments/configs/leduc_deep_tuned.yaml`` (issue #35), PSRO with the model-based oracle
``model_br`` (200,000 sampled decisions per response), 300 episodes per meta-game profile and the Nash
meta-solver, no ``approx_gap`` (the PPO-tuned PSRO of issue #28 is ``deep_leduc_tuning/B.yaml``). The tuning log
of issue #28 (seed 10, every candidate tried) is results/deep_leduc_tuning.md, made by
``deep_leduc_tuning/tuning_log.py``. ``--executor serial`` runs a config's loop in one process, so that
``--processes 2`` gives each seed a core of its own. The benchmark's measurement of NFSP's (seeds 0-2, 15 minutes
of wall time, two seeds at a time, each alone on its core)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python -m experiments.benchmarks.deep_psro_leduc \\
        --sides ours --seeds 3 --processes 2 --clock wall --budget 900 \\
        --config experiments/configs/leduc_nfsp_tuned.yaml --out experiments/benchmarks/results/deep_leduc_nfsp_tuned.md
"""

from __future__ import annotations

import ast
import dataclasses
import logging
import sys
from pathlib import Path

from experiments.benchmarks.leduc import psro_v2_adapter, toolkit_adapter
from experiments.benchmarks.leduc.comparison import Comparison, Side, load_comparison, run_comparison, summarise
from experiments.benchmarks.leduc.measure import ROW_COLUMNS, check_measure, rows_from_log
from experiments.clock import CLOCKS

logger = logging.getLogger("deep_psro_leduc")

SIDES = ("psro_v2", "ours", "nxdo", "p2sro", "nfsp", "openspiel_nfsp")
#: The toolkit's other learned algorithms (``--sides``), each run from its config in ``experiments/configs/``
#: with the benchmark's fields and one process (``executor: serial``).
VARIANT_CONFIGS = {"nxdo": "leduc_nxdo.yaml", "p2sro": "leduc_pipeline_psro.yaml", "nfsp": "leduc_nfsp.yaml"}
RESULTS = Path(__file__).resolve().parent / "results" / "deep_psro_leduc.md"
CONFIGS = Path(__file__).resolve().parents[1] / "configs"
TITLE = "Deep PSRO on Leduc poker: ours against psro_v2 (torch policy gradient)"
#: The defaults of the options that build the sides: those of the adapters' ``Options``
PSRO_V2, OURS = dataclasses.asdict(psro_v2_adapter.Options()), dataclasses.asdict(toolkit_adapter.Options())


def comparison_from_options(args) -> Comparison:
    """The comparison the command-line options describe (sides in the order of :data:`SIDES`, ours the reference).

    Examples
    --------
    >>> args = parser().parse_args(["--sides", "ours", "psro_v2", "--seeds", "2", "--config", "run.yaml"])
    >>> comparison = comparison_from_options(args)
    >>> [(s.name, s.adapter) for s in comparison.sides], comparison.seeds
    ([('psro_v2', 'psro_v2'), ('ours', 'toolkit')], [0, 1])
    >>> comparison.sides[1].options
    {'config': 'run.yaml'}
    """
    chosen = {"both": SIDES[:2], "all": SIDES}.get(args.sides[0], tuple(args.sides))
    variants = {side: str(CONFIGS / name) for side, name in VARIANT_CONFIGS.items()}
    variants.update(_parse_variant_config(text) for text in args.variant_config)
    if args.config:
        ours = {"config": args.config, **({"executor": args.executor} if args.executor else {})}
    else:
        ours = {"total_steps": args.total_steps, "episodes_per_profile": args.episodes_per_profile,
                "meta_solver": args.meta_solver,
                "oracle_options": {**OURS["oracle_options"], **dict(_parse_option(o) for o in args.oracle_option)}}
    options = {"psro_v2": ("psro_v2", {"episodes": args.pg_episodes, "sims_per_entry": args.sims_per_entry,
                                       "meta_solver": args.pg_meta}),
               "openspiel_nfsp": ("openspiel_nfsp", {"measure_every": args.openspiel_nfsp_measure_every}),
               "ours": ("toolkit", {k: v for k, v in ours.items() if v != OURS[k]}),
               **{side: ("toolkit", {"config": path, "executor": "serial"}) for side, path in variants.items()}}
    budget, seeds = (60.0, 1) if args.quick else (args.budget, args.seeds)
    return Comparison(title=TITLE, budget=budget, clock=args.clock, reference="ours" if "ours" in chosen else None,
                      seeds=list(range(args.seed_offset, args.seed_offset + seeds)), processes=args.processes,
                      concurrent_seeds=args.concurrent_seeds,
                      sides=[Side(name=side, adapter=options[side][0], options=options[side][1])
                             for side in SIDES if side in chosen])


def parser():
    from experiments import harness

    parser = harness.script_parser(__doc__)
    parser.add_argument("--comparison", metavar="FILE", help="run the comparison of this file (YAML, e.g. "
                        "experiments/benchmarks/leduc/side_by_side.yaml) instead of the one the options below make")
    parser.add_argument("--budget", type=float, default=900.0, help="seconds of training for each side")
    parser.add_argument("--clock", choices=CLOCKS, default="wall",
                        help="what the budget counts: wall seconds, or each side's process-CPU seconds")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="60 s, one seed (with --comparison: its first seed)")
    parser.add_argument("--sides", nargs="+", choices=("both", "all", *SIDES), default=["both"],
                        help="both: psro_v2 and ours; all: also NXDO, P2SRO and NFSP from their configs "
                             f"({', '.join(f'{k}: {v}' for k, v in VARIANT_CONFIGS.items())}, one process each) "
                             "and openspiel_nfsp (OpenSpiel's torch NFSP as in its Leduc example)")
    parser.add_argument("--pg-episodes", type=int, default=PSRO_V2["episodes"])
    parser.add_argument("--sims-per-entry", type=int, default=PSRO_V2["sims_per_entry"])
    parser.add_argument("--pg-meta", default=PSRO_V2["meta_solver"], help="psro_v2's meta_strategy_method")
    parser.add_argument("--openspiel-nfsp-measure-every", type=int, default=1000,
                        metavar="EPISODES", help="openspiel_nfsp: training episodes between measurements")
    parser.add_argument("--total-steps", type=int, default=OURS["total_steps"],
                        help="the PPO oracle's budget per response (oracle_options.total_steps)")
    parser.add_argument("--episodes-per-profile", type=int, default=OURS["episodes_per_profile"])
    parser.add_argument("--meta-solver", default=OURS["meta_solver"])
    parser.add_argument("--oracle-option", action="append", default=[], metavar="KEY=VALUE",
                        help="an option of our PPO oracle (repeatable; added to the defaults "
                             f"{OURS['oracle_options']}), e.g. learning_rate=3e-4")
    parser.add_argument("--config", help="ours: the training loop and settings of this run config (YAML; its "
                        "algorithm, oracle, evaluator, ... replace the options above; the seed, the stopping rule "
                        "and exact_gap=false are the benchmark's)")
    parser.add_argument("--variant-config", action="append", default=[], metavar="SIDE=PATH",
                        help="run the side nxdo, p2sro or nfsp from this config instead of its own in "
                        "VARIANT_CONFIGS (repeatable), e.g. nxdo=experiments/configs/leduc_nxdo_tuned.yaml")
    parser.add_argument("--executor", help="ours with --config: this executor instead of the config's (serial: "
                        "one process, so that --processes 2 gives each seed one core of its own)")
    parser.add_argument("--concurrent-seeds", action="store_true",
                        help="run every seed at the same time (each side and seed in its own process; use with "
                             "--clock cpu when there are more processes than cores)")
    parser.add_argument("--processes", type=int, metavar="N",
                        help="run the (side, seed) processes N at a time, each on its own core when N is at most "
                             "the number of cores (the wall clock for one side alone on its core)")
    parser.add_argument("--seed-offset", type=int, default=0,
                        help="seeds are OFFSET, OFFSET+1, ... (tuning runs use seeds other than the benchmark's 0-2)")
    parser.add_argument("--out", help="markdown summary path (the CSV goes next to it)")
    parser.add_argument("--from-log", metavar="LOG", help="do not run: read the rows back from the log of an "
                        "earlier invocation with the same options (its INFO lines) and write its summary")
    parser.add_argument("--check-measure", action="store_true",
                        help="compare the measuring code with OpenSpiel's policy_aggregator + nash_conv on random "
                             "populations of Leduc and exit")
    return parser


def main(argv: list[str] | None = None) -> None:
    from experiments import harness

    options = parser()
    args = options.parse_args(argv)
    if args.check_measure:
        check_measure()
        return
    try:
        if args.comparison:
            comparison = load_comparison(args.comparison)
            if args.quick:
                comparison = comparison.model_copy(update={"budget": 60.0, "seeds": comparison.seeds[:1]})
        else:
            comparison = comparison_from_options(args)
    except ValueError as exc:   # (a bad option value or comparison file: one line)
        options.error(str(exc))
    out = harness.output_path(options, args, RESULTS)
    out.parent.mkdir(parents=True, exist_ok=True)
    names = {side.name for side in comparison.sides}
    if args.from_log:
        rows = [r for r in rows_from_log(Path(args.from_log).read_text()) if r["side"] in names]
    else:
        rows = run_comparison(comparison)
    import pandas as pd

    pd.DataFrame(rows, columns=ROW_COLUMNS).to_csv(out.with_suffix(".csv"), index=False)
    out.write_text(summarise(rows, comparison, harness.command_line()))
    logger.info("wrote %s and %s", out, out.with_suffix(".csv"))
    sys.stdout.write(out.read_text())


def _parse_variant_config(text: str) -> tuple:
    """``(side, path)`` from ``--variant-config SIDE=PATH``."""
    side, _, path = text.partition("=")
    if side not in VARIANT_CONFIGS or not path:
        raise ValueError(f"--variant-config takes SIDE=PATH with SIDE one of {sorted(VARIANT_CONFIGS)}; got {text!r}.")
    if not Path(path).is_file():
        raise ValueError(f"--variant-config {side}: no file at {path!r}.")
    return side, str(Path(path).resolve())


def _parse_option(text: str) -> tuple:
    """``KEY=VALUE`` with VALUE read as a Python literal where it is one."""
    key, sep, value = text.partition("=")
    if not sep:
        raise ValueError(f"--oracle-option: expected KEY=VALUE; got {text!r}.")
    try:
        return key, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return key, value


if __name__ == "__main__":
    main()
