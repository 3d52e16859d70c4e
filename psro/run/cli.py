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
import errno
import json
import logging
import math
import os
import re
import shlex
import signal
import sys
from pathlib import Path

from games.executor_tasks import TaskError
from games.executors import EngineError
from games.registry import allow_imports
from psro.config import PSROConfig, field_help, spec_engine

__all__ = ["main", "build_parser"]

# config fields a resumed run may change: the stopping rules, the engine (results do not depend on it), the output
# options and when the approximate gap is measured (it never changes the run); every other field must match
RESUMABLE_CHANGES = ("iterations", "target_gap", "time_limit", "executor", "checkpoint", "progress", "name",
                     "rank_population", "ranking_alpha", "approx_gap_every", "approx_gap_options", "loggers",
                     "ray_address")

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
    run.add_argument("--overwrite", action="store_true",
                     help="let --out name a directory that already holds a run, and replace that run")
    resume = sub.add_parser("resume", help="continue a run from the checkpoint in its run directory",
                            description="Continue a run from the checkpoint in its run directory.")
    resume.add_argument("run_dir", metavar="RUN_DIR")
    for command in (run, resume):
        command.add_argument("--previous", action="store_true",
                             help="continue from the checkpoint before the latest (when the latest is damaged)")
        command.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                             help="override a config field (repeatable), e.g. --set iterations=5")
        _add_import_option(command)
        _add_field_options(command)
    _add_sweep_parser(sub)
    _add_compare_parser(sub)
    report = sub.add_parser("report", help="re-draw the plot and report.md of a run directory")
    report.add_argument("run_dir", metavar="RUN_DIR")
    _add_evaluate_parser(sub)
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    return parser


def _add_import_option(command: argparse.ArgumentParser) -> None:
    command.add_argument("--import", action="append", default=[], dest="imports", metavar="MODULE",
                         help="allow the names a checkpoint or run directory gives as 'MODULE.sub:name' (your "
                              "oracle, evaluator, policy class, game) to import MODULE (repeatable; see "
                              "games.registry; also the PSRO_IMPORT environment variable)")


def _add_sweep_parser(sub) -> None:
    """``psro sweep CONFIG --seeds 0-4 --grid field=a,b ... [--set field=value] [--out DIR] [--executor N]``."""
    sweep = sub.add_parser(
        "sweep", help="run a config over seeds and a grid of field values, one run directory per cell",
        description="Run a config over seeds and a grid of field values: one run directory per cell under one "
                    "sweep directory, with an index table (index.csv). Running it again into the same --out skips "
                    "the finished cells and resumes the interrupted ones from their checkpoints.")
    sweep.add_argument("config", help="YAML config, e.g. experiments/configs/kuhn_poker.yaml")
    sweep.add_argument("--seeds", default="0", metavar="SEEDS",
                       help="seeds: a range such as 0-4, a list such as 0,2,5, or both (default: 0)")
    sweep.add_argument("--grid", action="append", default=[], metavar="FIELD=V1,V2",
                       help="a grid axis (repeatable), e.g. --grid meta_solver=nash,prd --grid algorithm=psro,nfsp")
    sweep.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                       help="override a config field of every cell (repeatable), e.g. --set iterations=5")
    sweep.add_argument("--out", metavar="SWEEP_DIR", help="sweep directory (default: runs/<name>-sweep-<timestamp>)")
    sweep.add_argument("--executor", default="serial", metavar="ENGINE",
                       help="where the cells run: serial, process, ray, a number of worker processes such as 2, or "
                            "submitit (submitit:local, submitit:slurm; the slurm extra) (each cell's own jobs use the "
                            "config's executor field)")
    sweep.add_argument("--ray-address", metavar="HOST:PORT",
                       help="with --executor ray: the Ray cluster the cells run on (HOST:PORT or ray://HOST:10001)")


def _sweep(args) -> int:
    import time

    from psro.run.sweep import plan_sweep, run_sweep

    config = PSROConfig.from_yaml(args.config).replace_from_strings(args.set)
    cells = plan_sweep(config, args.seeds, args.grid)   # every cell checked before any runs
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out = Path(args.out) if args.out else Path("runs") / f"{config.name or 'sweep'}-sweep-{stamp}"
    spec = args.executor.strip() if args.executor.strip().startswith("submitit") else \
        PSROConfig(executor=args.executor, ray_address=args.ray_address).executor_spec()
    if args.ray_address is not None and spec_engine(spec) != "ray":
        raise ValueError(f"--ray-address: joins a Ray cluster, which needs --executor ray; got {args.executor!r}.")
    if args.ray_address is not None:
        from games.executors import check_reachable

        check_reachable(args.ray_address)
    print(f"sweep of {len(cells)} cells into {shlex.quote(str(out))} on executor {spec}", flush=True)
    logging.getLogger("psro.run.sweep").setLevel(logging.INFO)   # (one line per cell as it starts and ends)
    result = run_sweep(config, out, seeds=args.seeds, grid=args.grid, executor=spec)
    print(result.index.drop(columns=["run_dir", "error"]).to_string(index=False, float_format=lambda v: f"{v:.4g}"),
          flush=True)
    failed = result.index[result.index["status"] != "finished"]
    for _, row in failed.iterrows():
        print(f"cell {row['cell']}: {row['status']} {row['error'] if isinstance(row['error'], str) else ''}",
              file=sys.stderr)
    print(f"wrote {shlex.quote(str(out / 'index.csv'))}", flush=True)
    return 0 if failed.empty else 1


def _add_compare_parser(sub) -> None:
    """``psro compare RUN_OR_SWEEP_DIR ... --x iteration --y gap --out DIR [--statistic iqm]``."""
    compare = sub.add_parser(
        "compare", help="curves with bootstrap bands and a final-value table over run and sweep directories",
        description="Compare runs: one curve per group (the algorithm, or the settings that differ other than the "
                    "seed) with a bootstrap confidence band over seeds, on the x axis of your choice; writes "
                    "comparison.png, final.csv and final.md into --out (psro.analysis).")
    compare.add_argument("runs", nargs="+", metavar="RUN_OR_SWEEP_DIR")
    compare.add_argument("--x", default="iteration",
                         help="x axis: a numeric history column such as iteration, wall_time, env_steps")
    compare.add_argument("--y", default="gap", help="y axis: a numeric history column such as gap or approx_gap")
    compare.add_argument("--out", metavar="DIR", help="where the figure and the tables go (default: a new folder "
                                                      "comparison-<timestamp> beside the first input)")
    compare.add_argument("--statistic", default="mean", choices=["mean", "iqm"],
                         help="mean or interquartile mean over runs (default: mean)")
    compare.add_argument("--confidence", type=float, default=0.95, help="confidence level of the bands")
    compare.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples")


def _compare(args) -> int:
    from psro.analysis import compare_runs

    out = args.out
    if out is None:   # (beside the inputs, never inside a run directory)
        import time

        out = Path(args.runs[0]).resolve().parent / f"comparison-{time.strftime('%Y%m%d-%H%M%S')}"
        print(f"no --out given: writing the comparison into {out}", flush=True)
    result = compare_runs(args.runs, out, x=args.x, y=args.y, statistic=args.statistic,
                          confidence=args.confidence, resamples=args.resamples)
    print(result.table_md.read_text(), flush=True)
    print(f"wrote {result.figure}, {result.table_csv}, {result.table_md}", flush=True)
    return 0


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
    if config.ray_address is not None:   # an unreachable cluster fails now, in seconds, not at the first job
        from games.executors import check_reachable

        check_reachable(config.ray_address)
    return config


def _run(args) -> int:
    from psro.run.document_seal import check_key
    from psro.run.run_dir import write_config
    from psro.run.run_files import run_lock

    check_key()   # (an empty PSRO_CHECKPOINT_KEY: refused before anything is made)
    resume_dir = getattr(args, "resume", None) or getattr(args, "run_dir", None)
    if resume_dir is not None:
        run_dir = Path(resume_dir)
        if not run_dir.is_dir():
            raise ValueError(f"run_dir {str(run_dir)!r} is not a directory, so it holds no checkpoint; give a run "
                             "directory written by `psro run CONFIG --out RUN_DIR`.")
        if _game_given(args) is not None:   # named again: its module may be imported
            from games.imported_games import confirm_import

            confirm_import(_game_given(args))
    else:
        game = _game_given(args)
        if args.config is None and game is None:
            raise ValueError("config: give a YAML config (psro run CONFIG), a game (psro run --game NAME, every "
                             "other field at its default) or --resume RUN_DIR.")
        if args.previous:
            raise ValueError("--previous picks the checkpoint to continue from; use it with --resume RUN_DIR "
                             "(or psro resume RUN_DIR --previous).")
        config = _resolve_config(args, base=None if args.config is not None else
                                 PSROConfig(name=re.sub(r"[^A-Za-z0-9_.+-]", "_", game.split("(")[0].strip())))
        run_dir = _new_run_dir(args, config)
    with run_lock(run_dir):
        if resume_dir is not None:
            solver, config = _resumed(args, run_dir)
        else:
            if getattr(args, "overwrite", False):
                _clear_run(run_dir)
            solver = _started(config, run_dir)
        write_config(run_dir, config)
        solver.run_config = config.to_dict()
        return _train(solver, config, run_dir)


#: The files that make a directory a run directory (``--out`` refuses one that holds any, without ``--overwrite``)
RUN_FILES = ("config.yaml", "history.csv", "checkpoint", "report.md", "population.npz", "meta_game.npz")


def _new_run_dir(args, config: PSROConfig) -> Path:
    """The directory of a new run (``--out`` or the default), created; one that already holds a run is refused
    unless ``--overwrite``; a path that cannot be a directory is a one-line error."""
    from psro.run.run_dir import default_run_dir

    run_dir = Path(args.out) if args.out else default_run_dir(config)
    if run_dir.exists() and not run_dir.is_dir():
        raise ValueError(f"--out: {str(run_dir)!r} exists and is not a directory; give a new or empty directory.")
    if run_dir.is_dir() and not getattr(args, "overwrite", False):
        held = [name for name in RUN_FILES if os.path.lexists(run_dir / name)]
        if held:
            raise ValueError(f"--out: {str(run_dir)!r} already holds a run ({', '.join(held)}); continue it with "
                             f"`psro resume {shlex.quote(str(run_dir))}`, give another --out, or add --overwrite to "
                             "replace it.")
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"--out: cannot create the run directory {str(run_dir)!r}: {exc.strerror or exc}.") \
            from None
    return run_dir


def _clear_run(run_dir: Path) -> None:
    """Before a run replaces the one in ``run_dir`` (``--overwrite``): remove the old run's checkpoint documents
    (and the array files they list), so the new run neither keeps nor resumes them, and every other file the
    toolkit wrote there (psro.run.run_dir.clear_outputs). No link is followed out of the directory."""
    from psro.run.run_dir import clear_outputs
    from psro.run.run_files import check_directory, file_in, read_regular

    clear_outputs(run_dir)
    folder = run_dir / "checkpoint"
    if not os.path.lexists(folder):
        return
    check_directory(folder)
    documents = [file_in(folder, name) for name in ("checkpoint.json", "checkpoint.previous.json",
                                                    "offline_checkpoint.json", "offline_checkpoint.previous.json")]
    listed = set()
    for document in documents:
        if document.is_file() and not document.is_symlink():
            try:
                listed |= _listed_files(json.loads(read_regular(document)))
            except ValueError:
                pass   # a damaged document lists nothing
            document.unlink()
    for name in listed:
        try:
            file = file_in(folder, name)
        except ValueError:
            continue
        if file.suffix in (".npz", ".csv", ".parquet") and file.is_file() and not file.is_symlink():
            file.unlink()


def _listed_files(document) -> set:
    """The file names a checkpoint document lists (a PSRO manifest, an NFSP or offline ``arrays`` / ``dataset``)."""
    names = set()
    if isinstance(document, dict):
        if isinstance(document.get("manifest"), dict):
            names |= {k for k in document["manifest"] if isinstance(k, str)}
        for key in ("arrays", "dataset"):
            entry = document.get(key)
            for field in ("file", "path"):
                if isinstance(entry, dict) and isinstance(entry.get(field), str):
                    names.add(entry[field])
    return names


def _started(config: PSROConfig, run_dir: Path):
    """A new run's training loop, checkpointing into ``run_dir/checkpoint`` (the announcement printed)."""
    from psro.algorithms import algorithm_class

    solver = algorithm_class(config.algorithm)(config.replace(progress=False),
                                               checkpoint_dir=(run_dir / "checkpoint") if config.checkpoint else None)
    kind = type(solver).__name__ if config.algorithm != "psro" else "JPSRO" if solver.is_jpsro else "PSRO"
    print(f"{kind} on {config.game} with meta-solver {config.meta_solver!r}; run directory "
          f"{shlex.quote(str(run_dir))}", flush=True)
    return solver


def _resumed(args, run_dir: Path) -> tuple:
    """``(solver, config)`` of the run in ``run_dir``, restored from its checkpoint (its folder never a link). The
    checkpoint is the one source of truth: where ``config.yaml`` disagrees with it (edited, or another run's
    checkpoint copied in) the disagreement is reported and ``config.yaml`` is rewritten from the checkpoint."""
    from games.imported_games import from_untrusted_file
    from psro.run.run_files import check_directory
    from psro.run.saved_run import config_disagreement, read_saved_run

    if os.path.lexists(run_dir / "checkpoint"):
        check_directory(run_dir / "checkpoint")
    with from_untrusted_file():   # (a game the files name is imported only when named again on the command line)
        saved = read_saved_run(run_dir, previous=args.previous)
        saved_config = saved.config.replace(ray_address=None)   # (a cluster address is never taken from a file)
        config = _resolve_config(args, base=saved_config)
        _check_resumable(config, saved_config)
        config_disagreement(run_dir, saved.config)
        solver = saved.restore(config, previous=args.previous)
    print(f"resuming {shlex.quote(str(run_dir))} at iteration {solver.iteration}", flush=True)
    return solver, config


def _game_given(args):
    """The game named on the command line (``--game`` or ``--set game=...``), or None."""
    given = [item.split("=", 1)[1].strip() for item in args.set if item.split("=", 1)[0].strip() == "game"]
    return getattr(args, "game", None) if getattr(args, "game", None) is not None else (given[-1] if given else None)


def _check_resumable(config: PSROConfig, saved: PSROConfig) -> None:
    """Only the fields of :data:`RESUMABLE_CHANGES` may differ from the interrupted run's."""
    changed = [f.name for f in dataclasses.fields(PSROConfig)
               if f.name not in RESUMABLE_CHANGES and getattr(config, f.name) != getattr(saved, f.name)]
    if changed:
        raise ValueError(f"{changed[0]}: cannot change {', '.join(changed)} when resuming; only "
                         f"{', '.join(RESUMABLE_CHANGES)} may change.")


def _train(solver, config: PSROConfig, run_dir: Path) -> int:
    """Run to the config's stopping rules (counted over the whole run), then write the run directory."""
    from psro.loggers import make_loggers
    from psro.run.run_dir import write_run

    remaining = None if config.iterations is None else max(0, config.iterations - max(solver.iteration, 0))
    time_left = None if config.time_limit is None else max(0.0, config.time_limit - solver.state.wall)
    show_bar = config.progress and sys.stderr.isatty()
    logging.getLogger("psro.approximate_gap").setLevel(logging.INFO)   # (when approx_gap measures, and its cost)
    print(_header(), flush=True)
    if getattr(solver, "learned", False):
        print(APPROX_LEGEND, flush=True)
    for row in solver.state.rows:
        print(_format_row(row), flush=True)
    log = make_loggers(config.loggers, run_dir)   # (psro.loggers: the config's csv / tensorboard loggers)
    from psro.learning_curves import attach_learner_log

    attach_learner_log(solver, run_dir, log)   # (learners.csv and the loggers: the networks' learning curves)

    def on_row(row):
        print(_format_row(row), flush=True)
        log.log_row(row)

    try:
        solver.run(iterations=remaining, target_gap=config.target_gap, time_limit=time_left, progress=show_bar,
                   callback=on_row)
    except KeyboardInterrupt:
        print("interrupted; writing what was done so far", flush=True)
    except EngineError as exc:
        from psro.run.checkpoint import has_checkpoint

        if not config.checkpoint:
            where = "the run had checkpoint: false, so it cannot be resumed"
        elif not has_checkpoint(run_dir / "checkpoint"):
            where = "no iteration had finished, so there is nothing to resume: start it again (--executor process)"
        else:
            where = (f"its checkpoint in {shlex.quote(str(run_dir / 'checkpoint'))} holds every finished "
                     f"iteration: continue with `psro resume {shlex.quote(str(run_dir))}` (--executor process or "
                     "serial to change the engine)")
        raise EngineError(f"{exc} The run stopped in iteration {max(solver.iteration, 0)}; {where}.") from exc
    finally:
        log.close()
    write_run(run_dir, config, solver)
    if config.rank_population:
        _rank(solver, config, run_dir)
    last = solver.history.iloc[-1]
    approx = "" if math.isnan(last["approx_gap"]) else \
        f", approx_gap (lower bound) {last['approx_gap']:.3e} +- {last['approx_gap_stderr']:.1e}"
    print(f"done: {int(last['iteration'])} iterations, gap {last['gap']:.3e}{approx}, {last['wall_time']:.2f} s "
          f"wall; wrote {shlex.quote(str(run_dir))}", flush=True)
    return 0


def _rank(solver, config: PSROConfig, run_dir: Path) -> None:
    """Rank the final population with alpha-Rank (and Elo where defined); print the table, write ``ranking.csv``."""
    import time

    from psro.run.population_ranking import rank_population

    meta_game = solver.meta_game.mean_game()
    print(f"ranking the final {'x'.join(map(str, meta_game.shape))} population with alpha-Rank "
          f"(alpha={config.ranking_alpha:g}) ...", flush=True)
    start = time.perf_counter()
    table = rank_population(meta_game, alpha=config.ranking_alpha, single_population=config.symmetric)
    from psro.run.run_files import write_text

    write_text(run_dir / "ranking.csv", table.to_csv(index=False))
    top = table.groupby("player", sort=False).head(5)
    no_elo = table.attrs.get("elo")
    print(f"final population ranked by alpha-Rank{'' if no_elo else ' and Elo'} in "
          f"{time.perf_counter() - start:.1f} s; top 5 per player (all in "
          f"{shlex.quote(str(run_dir / 'ranking.csv'))}):", flush=True)
    if no_elo:
        print(f"{no_elo}.", flush=True)
    print(top.to_string(index=False, float_format=lambda v: f"{v:.4g}"), flush=True)


def _report(args) -> int:
    from psro.run.run_dir import write_report
    from psro.run.run_files import check_directory, run_lock

    run_dir = Path(args.run_dir)
    if run_dir.is_file():   # (`psro report R/history.csv`: the run directory is the file's folder)
        print(f"{run_dir} is a file; reporting its run directory {run_dir.parent}", flush=True)
        run_dir = run_dir.parent
    with run_lock(check_directory(run_dir)):   # (never under a run that is writing the directory)
        path = write_report(run_dir)
    print(path.read_text())
    return 0


def _add_evaluate_parser(sub) -> None:
    """``psro evaluate RUN_DIR --against uniform,mcts``: the run's policies against reference opponents."""
    evaluate = sub.add_parser("evaluate", help="play a run's policies against reference opponents or another run",
                              description="Play every member and the meta-strategy of a run against fixed "
                                          "references (psro.reference_opponents): win / draw / loss rates and mean "
                                          "returns with confidence intervals.")
    evaluate.add_argument("run_dir", metavar="RUN_DIR")
    _add_import_option(evaluate)
    evaluate.add_argument("--against", default="uniform", metavar="NAMES",
                          help="comma-separated references: uniform, mcts (perfect information), ismcts, "
                               "module:name (a bot factory name(game, player, seed)), or another run's directory "
                               "(cross-play against its final meta-strategy); on a game without pyspiel states "
                               "(PettingZoo, your own environment) play is sampled on the environment; default: "
                               "uniform")
    evaluate.add_argument("--episodes", type=int, default=40, help="episodes per agent and reference (default 40)")
    evaluate.add_argument("--simulations", type=int, default=20,
                          help="the MCTS references' simulations per move (default 20)")
    evaluate.add_argument("--seed", type=int, default=0, help="seed of the episodes and the bots (default 0)")
    evaluate.add_argument("--confidence", type=float, default=0.95, help="of the intervals (default 0.95)")


def _evaluate(args) -> int:
    """Print the table of :func:`psro.reference_opponents.evaluate_run`."""
    from psro.reference_opponents import evaluate_run

    against = [name.strip() for name in args.against.split(",") if name.strip()]
    table = evaluate_run(args.run_dir, against, episodes=args.episodes, simulations=args.simulations,
                         seed=args.seed, confidence=args.confidence)
    def interval(column: str, low: str, high: str, fmt: str) -> list:
        return [f"{v:{fmt}} [{lo:{fmt}}, {hi:{fmt}}]" for v, lo, hi in zip(table[column], table[low], table[high])]

    shown = table.assign(**{name: interval(name, f"{name}_low", f"{name}_high", ".2f")
                            for name in ("win", "draw", "loss")},
                         mean_return=interval("mean_return", "return_low", "return_high", "+.3f"))
    print(shown[["player", "agent", "reference", "episodes", "win", "draw", "loss", "mean_return"]]
          .to_string(index=False), flush=True)
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
    if os.getcwd() not in sys.path and "" not in sys.path:   # `psro run --game mygame:X` finds ./mygame.py, as
        sys.path.insert(0, os.getcwd())                       # `python -m` and uvicorn do
    try:
        allow_imports(*getattr(args, "imports", []))
        commands = {"report": _report, "sweep": _sweep, "compare": _compare, "evaluate": _evaluate}
        return commands.get(args.command, _run)(args)
    except (ValueError, TypeError) as exc:
        print(f"psro {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except EngineError as exc:   # the executor failed (a dead Ray system process, workers dying on every retry)
        print(f"psro {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except TaskError as exc:   # a job refused its input in a worker (a network too wide for the memory limit)
        if not isinstance(exc.error, (ValueError, TypeError)):
            raise
        print(f"psro {args.command}: error: {exc.error}", file=sys.stderr)
        return 2
    except OSError as exc:   # the disk is full, a folder cannot be written, ...
        print(f"psro {args.command}: error: {_os_error(exc)}", file=sys.stderr)
        return 1


def _os_error(exc: OSError) -> str:
    """One line for an ``OSError`` that stopped a command (a full disk says that the checkpoints are kept)."""
    where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return (f"the disk is full{where}: {exc.strerror}. Every file is written to a temporary file and renamed, "
                "so the last complete checkpoint is intact: free some space, then continue with `psro resume "
                "RUN_DIR`.")
    return f"{exc.strerror or exc}{where}."


if __name__ == "__main__":
    sys.exit(main())
