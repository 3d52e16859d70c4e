"""The ``psro`` command.

``psro run CONFIG [--out RUN_DIR] [--set field=value ...] [--<field> value ...]``
trains, prints one table row per iteration (and a progress bar with the current
gap on a terminal), checkpoints after every iteration and writes a run directory.
``psro run --resume RUN_DIR`` and ``psro resume RUN_DIR`` continue a run from its
checkpoint (stopping rules count the whole run; ``--set`` may change them);
``--previous`` continues from the checkpoint before the latest, when the latest
is damaged. ``psro report RUN_DIR`` re-draws the plot and the summary of a run
directory.

The ``--<field>`` options are generated from :class:`psro.config.PSROConfig`:
one per field, with its type, choices (from the registries), default and the
first sentence of its docstring (:func:`psro.config.field_help`).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import math
import signal
import sys
from pathlib import Path

from games.executors import EngineError
from psro.config import PSROConfig, field_help

__all__ = ["main", "build_parser"]

# config fields a resumed run may change: the stopping rules, the engine (results do not depend on it), the output
# options and when the approximate gap is measured (it never changes the run); every other field must match
RESUMABLE_CHANGES = ("iterations", "target_gap", "time_limit", "executor", "checkpoint", "progress", "name",
                     "rank_population", "ranking_alpha", "approx_gap_every", "approx_gap_options")

TABLE = [  # (header, row key, format)
    ("iter", "iteration", "{:>5d}"),
    ("gap", "gap", "{:>11.3e}"),
    ("pop", None, "{:>9}"),
    ("meta_s", "time_meta_solve", "{:>8.3f}"),
    ("oracle_s", "time_oracle", "{:>8.3f}"),
    ("eval_s", "time_evaluation", "{:>8.3f}"),
    ("wall_s", "wall_time", "{:>8.2f}"),
    ("approx_lb", "approx_gap", "{:>10.3e}"),   # blank where it was not measured
]

#: What the ``approx_lb`` column is, printed under the header of a run with a learned oracle
APPROX_LEGEND = ("# approx_lb: approx_gap, a lower bound of gap (up to its standard error) from learned best "
                 "responses and sampled play; blank where not measured")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; every config field has its own ``--field`` option, generated from the config.

    Examples
    --------
    >>> args = build_parser().parse_args(["run", "c.yaml", "--iterations", "5"])
    >>> args.command, args.iterations
    ('run', '5')
    >>> build_parser().parse_args(["resume", "runs/x", "--meta_solver", "nash"]).meta_solver   # the old spelling
    'nash'
    """
    parser = argparse.ArgumentParser(prog="psro", description="Policy-Space Response Oracles.")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="train from a YAML config and write a run directory",
                         description="Train from a YAML config and write a run directory.")
    run.add_argument("config", nargs="?", help="YAML config, e.g. experiments/configs/kuhn_poker.yaml")
    run.add_argument("--out", metavar="RUN_DIR", help="run directory (default: runs/<name>-<timestamp>)")
    run.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR from its checkpoint")
    resume = sub.add_parser("resume", help="continue a run from the checkpoint in its run directory",
                            description="Continue a run from the checkpoint in its run directory.")
    resume.add_argument("run_dir", metavar="RUN_DIR")
    for command in (run, resume):
        command.add_argument("--previous", action="store_true",
                             help="continue from the checkpoint before the latest (when the latest is damaged)")
        command.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                             help="override a config field (repeatable), e.g. --set iterations=5")
        _add_field_options(command)
    report = sub.add_parser("report", help="re-draw the plot and report.md of a run directory")
    report.add_argument("run_dir", metavar="RUN_DIR")
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    return parser


def _add_field_options(command: argparse.ArgumentParser) -> None:
    """One ``--field-name`` option per :class:`PSROConfig` field, described from its type, choices and docstring."""
    group = command.add_argument_group(
        "config fields", "Each overrides the config file's value (written as in YAML: null, 5, 1e-6, true); "
                         "the default shown is the one used when the file does not set the field.")
    for field in field_help():
        group.add_argument(f"--{field.name.replace('_', '-')}", dest=field.name, default=None,
                           metavar=_metavar(field), help=_help_text(field).replace("%", "%%"))
        if "_" in field.name:   # the spelling with underscores still parses, without a second help entry
            group.add_argument(f"--{field.name}", dest=field.name, default=None, help=argparse.SUPPRESS)


def _yaml_text(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    return '""' if value == "" else str(value)


def _metavar(field) -> str:
    if field.type_text.startswith("bool"):
        return "{true,false}"
    if field.choices is not None and len(field.choices) <= 6 and field.name != "executor":
        return "{" + ",".join(field.choices) + "}"
    base = field.type_text.split()[0]
    return {"int": "N", "float": "X"}.get(base, "NAME" if field.choices is not None else "TEXT")


def _help_text(field) -> str:
    text = field.description
    if field.choices is not None and not _metavar(field).startswith("{"):   # (a short list is the metavar)
        extra = " or a number of worker processes such as 2" if field.name == "executor" else ""
        text += f" Choices: {', '.join(field.choices)}{extra}."
    return f"{text} [{field.type_text}; default: {_yaml_text(field.default)}]"


def _format_row(row: dict) -> str:
    cells = []
    for _, key, fmt in TABLE:
        if key is None:
            value = "x".join(str(v) for k, v in row.items() if k.startswith("population_"))
        else:
            value = row[key]
        if isinstance(value, float) and math.isnan(value) and key == "approx_gap":
            cells.append(" " * len(fmt.format(0.0)))
            continue
        cells.append(fmt.format(value))
    return " ".join(cells)


def _header() -> str:
    widths = [len(fmt.format(0 if "d" in fmt else (0.0 if "f" in fmt or "e" in fmt else ""))) for _, _, fmt in TABLE]
    return " ".join(h.rjust(w) for (h, _, _), w in zip(TABLE, widths))


def _resolve_config(args, base: PSROConfig | None = None) -> PSROConfig:
    config = PSROConfig.from_yaml(args.config) if base is None else base
    config = config.replace_from_strings(args.set)
    direct = [f"{name}={getattr(args, name)}" for name in PSROConfig.field_names() if getattr(args, name) is not None]
    config = config.replace_from_strings(direct)
    config.validate()
    return config


def _run(args) -> int:
    from psro.algorithms import algorithm_class
    from psro.loop import PSRO
    from psro.run.checkpoint import has_checkpoint, load_checkpoint
    from psro.run.run_dir import default_run_dir, write_config

    resume_dir = getattr(args, "resume", None) or getattr(args, "run_dir", None)
    training_loop = None if resume_dir is None else _saved_algorithm(Path(resume_dir))
    if training_loop is not None and not issubclass(training_loop, PSRO):   # (NFSP, offline PSRO: own checkpoints)
        run_dir = Path(resume_dir)
        if not (run_dir / "checkpoint").is_dir():
            raise ValueError(f"run_dir {str(run_dir)!r} holds no checkpoint folder; start it with "
                             "`psro run CONFIG --out RUN_DIR`.")
        saved = PSROConfig.from_yaml(run_dir / "config.yaml")
        config = _resolve_config(args, base=saved)
        _check_resumable(config, saved)
        solver = training_loop.resume(run_dir / "checkpoint", progress=False, executor=config.executor_spec(),
                                      previous=args.previous)
        print(f"resuming {run_dir} at iteration {solver.iteration}", flush=True)
    elif resume_dir is not None:
        run_dir = Path(resume_dir)
        if not has_checkpoint(run_dir / "checkpoint"):
            raise ValueError(f"run_dir {str(run_dir)!r} holds no checkpoint (checkpoint/checkpoint.json); "
                             "start it with `psro run CONFIG --out RUN_DIR`.")
        document = load_checkpoint(run_dir / "checkpoint", previous=args.previous)
        if document.get("config") is None:
            raise ValueError(f"the checkpoint in {str(run_dir)!r} has no run config; resume it with PSRO.resume().")
        saved = PSROConfig.from_dict(document["config"])
        config = _resolve_config(args, base=saved)
        _check_resumable(config, saved)
        solver = PSRO.restore(document, checkpoint_dir=(run_dir / "checkpoint") if config.checkpoint else None,
                         progress=False, executor=config.executor_spec())
        print(f"resuming {run_dir} at iteration {solver.iteration}", flush=True)
    else:
        if args.config is None:
            raise ValueError("config: give a YAML config (psro run CONFIG) or --resume RUN_DIR.")
        if args.previous:
            raise ValueError("--previous picks the checkpoint to continue from; use it with --resume RUN_DIR "
                             "(or psro resume RUN_DIR --previous).")
        config = _resolve_config(args)
        run_dir = Path(args.out) if args.out else default_run_dir(config)
        run_dir.mkdir(parents=True, exist_ok=True)
        solver = algorithm_class(config.algorithm)(config.replace(progress=False),
                      checkpoint_dir=(run_dir / "checkpoint") if config.checkpoint else None)
        kind = type(solver).__name__ if config.algorithm != "psro" else "JPSRO" if solver.is_jpsro else "PSRO"
        print(f"{kind} on {config.game} with meta-solver {config.meta_solver!r}; run directory {run_dir}", flush=True)
    write_config(run_dir, config)
    solver.run_config = config.to_dict()
    return _train(solver, config, run_dir)


def _saved_algorithm(run_dir: Path):
    """The training loop's class of the run in ``run_dir`` (from its ``config.yaml``; PSRO when it has none)."""
    from psro.algorithms import algorithm_class

    path = run_dir / "config.yaml"
    return algorithm_class(PSROConfig.from_yaml(path).algorithm if path.is_file() else "psro")


def _check_resumable(config: PSROConfig, saved: PSROConfig) -> None:
    """Only the fields of :data:`RESUMABLE_CHANGES` may differ from the interrupted run's."""
    changed = [f.name for f in dataclasses.fields(PSROConfig)
               if f.name not in RESUMABLE_CHANGES and getattr(config, f.name) != getattr(saved, f.name)]
    if changed:
        raise ValueError(f"{changed[0]}: cannot change {', '.join(changed)} when resuming; only "
                         f"{', '.join(RESUMABLE_CHANGES)} may change.")


def _train(solver, config: PSROConfig, run_dir: Path) -> int:
    """Run to the config's stopping rules (counted over the whole run), then write the run directory."""
    from psro.run.run_dir import write_run

    remaining = None if config.iterations is None else max(0, config.iterations - max(solver.iteration, 0))
    time_left = None if config.time_limit is None else max(0.0, config.time_limit - solver.state.wall)
    show_bar = config.progress and sys.stderr.isatty()
    print(_header(), flush=True)
    if getattr(solver, "learned", False):
        print(APPROX_LEGEND, flush=True)
    for row in solver.state.rows:
        print(_format_row(row), flush=True)
    try:
        solver.run(iterations=remaining, target_gap=config.target_gap, time_limit=time_left, progress=show_bar,
                   callback=lambda row: print(_format_row(row), flush=True))
    except KeyboardInterrupt:
        print("interrupted; writing what was done so far", flush=True)
    except EngineError as exc:
        from psro.run.checkpoint import has_checkpoint

        if not config.checkpoint:
            where = "the run had checkpoint: false, so it cannot be resumed"
        elif not has_checkpoint(run_dir / "checkpoint"):
            where = "no iteration had finished, so there is nothing to resume: start it again (--executor process)"
        else:
            where = (f"its checkpoint in {run_dir / 'checkpoint'} holds every finished iteration: continue with "
                     f"`psro resume {run_dir}` (--executor process or serial to change the engine)")
        raise EngineError(f"{exc} The run stopped in iteration {max(solver.iteration, 0)}; {where}.") from exc
    write_run(run_dir, config, solver)
    if config.rank_population:
        _rank(solver, config, run_dir)
    last = solver.history.iloc[-1]
    approx = "" if math.isnan(last["approx_gap"]) else \
        f", approx_gap (lower bound) {last['approx_gap']:.3e} +- {last['approx_gap_stderr']:.1e}"
    print(f"done: {int(last['iteration'])} iterations, gap {last['gap']:.3e}{approx}, {last['wall_time']:.2f} s "
          f"wall; wrote {run_dir}", flush=True)
    return 0


def _rank(solver, config: PSROConfig, run_dir: Path) -> None:
    """Rank the final population with alpha-Rank (and Elo where defined); print the table, write ``ranking.csv``."""
    import time

    from psro.run.population_ranking import rank_population

    meta_game = solver.meta_game.mean_game()
    print(f"ranking the final {'x'.join(map(str, meta_game.shape))} population with alpha-Rank "
          f"(alpha={config.ranking_alpha:g}) ...", flush=True)
    start = time.perf_counter()
    table = rank_population(meta_game, alpha=config.ranking_alpha)
    table.to_csv(run_dir / "ranking.csv", index=False)
    top = table.groupby("player", sort=False).head(5)
    no_elo = table.attrs.get("elo")
    print(f"final population ranked by alpha-Rank{'' if no_elo else ' and Elo'} in "
          f"{time.perf_counter() - start:.1f} s; top 5 per player (all in {run_dir / 'ranking.csv'}):", flush=True)
    if no_elo:
        print(f"{no_elo}.", flush=True)
    print(top.to_string(index=False, float_format=lambda v: f"{v:.4g}"), flush=True)


def _report(args) -> int:
    from psro.run.run_dir import write_report

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
        return _report(args) if args.command == "report" else _run(args)
    except (ValueError, TypeError) as exc:
        print(f"psro {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except EngineError as exc:   # the executor failed (a dead Ray system process, workers dying on every retry)
        print(f"psro {args.command}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
