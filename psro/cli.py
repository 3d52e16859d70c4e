"""The ``psro`` command.

``psro run CONFIG [--out RUN_DIR] [--set field=value ...] [--<field> value ...]``
trains, prints one table row per iteration and writes a run directory.
``psro report RUN_DIR`` re-draws the plot and the summary of a run directory.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from pathlib import Path

from psro.config import PSROConfig

__all__ = ["main", "build_parser"]

TABLE = [  # (header, row key, format)
    ("iter", "iteration", "{:>5d}"),
    ("NashConv", "gap", "{:>11.3e}"),
    ("pop", None, "{:>9}"),
    ("meta_s", "time_meta_solve", "{:>8.3f}"),
    ("oracle_s", "time_oracle", "{:>8.3f}"),
    ("eval_s", "time_evaluation", "{:>8.3f}"),
    ("wall_s", "wall_time", "{:>8.2f}"),
]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; every config field also has its own ``--field`` option.

    Examples
    --------
    >>> args = build_parser().parse_args(["run", "c.yaml", "--iterations", "5"])
    >>> args.command, args.iterations
    ('run', '5')
    """
    parser = argparse.ArgumentParser(prog="psro", description="Policy-Space Response Oracles.")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="train from a YAML config and write a run directory")
    run.add_argument("config", help="YAML config, e.g. experiments/configs/kuhn_poker.yaml")
    run.add_argument("--out", help="run directory (default: runs/<name>-<timestamp>)")
    run.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                     help="override a config field (repeatable), e.g. --set iterations=5")
    for name in PSROConfig.field_names():
        run.add_argument(f"--{name.replace('_', '-')}", f"--{name}", dest=name, default=None, metavar="VALUE",
                         help=f"override config field {name!r}")
    report = sub.add_parser("report", help="re-draw the plot and report.md of a run directory")
    report.add_argument("run_dir")
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    return parser


def _format_row(row: dict) -> str:
    cells = []
    for _, key, fmt in TABLE:
        if key is None:
            value = "x".join(str(v) for k, v in row.items() if k.startswith("population_"))
        else:
            value = row[key]
        cells.append(fmt.format(value))
    return " ".join(cells)


def _header() -> str:
    widths = [len(fmt.format(0 if "d" in fmt else (0.0 if "f" in fmt or "e" in fmt else ""))) for _, _, fmt in TABLE]
    return " ".join(h.rjust(w) for (h, _, _), w in zip(TABLE, widths))


def _resolve_config(args) -> PSROConfig:
    config = PSROConfig.from_yaml(args.config)
    config = config.replace_from_strings(args.set)
    direct = [f"{name}={getattr(args, name)}" for name in PSROConfig.field_names() if getattr(args, name) is not None]
    config = config.replace_from_strings(direct)
    config.validate()
    return config


def _run(args) -> int:
    from psro.loop import PSRO
    from psro.run_dir import default_run_dir, write_config, write_run

    config = _resolve_config(args)
    run_dir = Path(args.out) if args.out else default_run_dir(config)
    run_dir.mkdir(parents=True, exist_ok=True)
    write_config(run_dir, config)
    print(f"PSRO on {config.game} with meta-solver {config.meta_solver!r}; run directory {run_dir}", flush=True)
    solver = PSRO(config.game, meta_solver=config.meta_solver, oracle=config.oracle, evaluator=config.evaluator,
                  seed=config.seed, progress=False)
    print(_header(), flush=True)
    try:
        solver.run(iterations=config.iterations, target_gap=config.target_gap, time_limit=config.time_limit,
                   callback=lambda row: print(_format_row(row), flush=True))
    except KeyboardInterrupt:
        print("interrupted; writing what was done so far", flush=True)
    write_run(run_dir, config, solver)
    last = solver.history.iloc[-1]
    print(f"done: {int(last['iteration'])} iterations, NashConv {last['gap']:.3e}, {last['wall_time']:.2f} s wall; "
          f"wrote {run_dir}", flush=True)
    return 0


def _report(args) -> int:
    from psro.run_dir import write_report

    path = write_report(args.run_dir)
    print(path.read_text())
    return 0


def main(argv=None) -> int:
    """Entry point of the ``psro`` console script; returns the exit status.

    Examples
    --------
    >>> main(["report", "/nonexistent-run"])
    2
    """
    if argv is None and hasattr(signal, "SIGPIPE"):  # `psro run ... | head` ends quietly, like other Unix tools
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(message)s")
    try:
        return _run(args) if args.command == "run" else _report(args)
    except (ValueError, TypeError) as exc:
        print(f"psro {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
