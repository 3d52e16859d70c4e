"""Sweeps: one base config run over seeds and a grid of field values, one run directory per cell.

Layout of a sweep directory::

    sweep.yaml           the base config, the seeds and the grid
    index.csv            one row per cell: its directory, seed, grid values, status, iterations, final gap
    <cell>/              a run directory (psro.run.run_dir) per cell, named from its settings,
                         e.g. ``algorithm=psro,seed=0``; ``<cell>/cell.json`` marks a finished cell

A cell runs through an executor (:func:`games.make_executor`: serial, a process pool, Ray) or as a submitit job
(``executor="submitit"``: a Slurm cluster, or local processes; the ``slurm`` extra). Running the same sweep
into the same directory again skips the finished cells, resumes the interrupted ones from their checkpoints (the
one before the latest when the latest is damaged) and starts the rest.

Every file is written through :mod:`psro.run.run_files` (a temporary file renamed over its name; a link at the
name, or a linked cell folder, is refused, never written through). The sweep directory is locked while a sweep
writes it, and each cell's run directory while the cell runs (:func:`psro.run.run_files.run_lock`), so two
sweeps over one folder end in one clear line, not in clobbered files. Each cell logs one line (``INFO``) as it
starts and one as it ends.
"""

from __future__ import annotations

import difflib
import io
import itertools
import json
import logging
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from psro.config.fields import field_changes
from psro.config.model import PSROConfig, mapping_fields
from psro.config.sections import flat_name
from psro.errors import ConfigError

__all__ = ["SweepCell", "SweepResult", "parse_seeds", "parse_grid", "plan_sweep", "run_sweep", "run_cell",
           "read_index"]

logger = logging.getLogger(__name__)

#: The file that marks a finished cell (written last, atomically).
CELL_FILE = "cell.json"
INDEX_FILE = "index.csv"


@dataclass(frozen=True)
class SweepCell:
    """One run of a sweep.

    Attributes
    ----------
    name : str
        The cell's directory name, from its settings (``algorithm=psro,seed=0``).
    settings : dict
        The grid values and the seed of this cell (field -> value).
    config : PSROConfig
        The base config with ``settings`` applied.
    """

    name: str
    settings: dict
    config: PSROConfig


@dataclass(frozen=True)
class SweepResult:
    """What :func:`run_sweep` did: the sweep directory and its index (one row per cell)."""

    directory: Path
    index: pd.DataFrame


def parse_seeds(text) -> list:
    """Seeds from ``"0-4"``, ``"0,2,5"``, ``"0-2,7"``, an int or a list of ints; sorted, without repeats.

    Examples
    --------
    >>> parse_seeds("0-2,7")
    [0, 1, 2, 7]
    >>> parse_seeds(3), parse_seeds([4, 1])
    ([3], [1, 4])
    >>> parse_seeds("0..4")
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: seeds: '0..4' is not a seed list; write a range such as 0-4, a list such as 0,2,5, or \
both (0-2,7).
    """
    fix = "write a range such as 0-4, a list such as 0,2,5, or both (0-2,7)"
    if isinstance(text, bool):
        raise ConfigError("seeds", f"{text!r} is not a seed list; {fix}.")
    if isinstance(text, int):
        values = [text]
    elif isinstance(text, (list, tuple)):
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in text):
            raise ConfigError("seeds", f"must be ints; got {list(text)!r}.")
        values = list(text)
    elif isinstance(text, str):
        values = []
        for part in text.replace(" ", "").split(","):
            match = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
            if match is None:
                raise ConfigError("seeds", f"{text!r} is not a seed list; {fix}.")
            low, high = int(match[1]), int(match[2] if match[2] is not None else match[1])
            if high < low:
                raise ConfigError("seeds", f"the range {part!r} ends before it starts; write {high}-{low}.")
            values.extend(range(low, high + 1))
    else:
        raise ConfigError("seeds", f"{text!r} is not a seed list; {fix}.")
    if not values:
        raise ConfigError("seeds", f"no seed given; {fix}.")
    if min(values) < 0:
        raise ConfigError("seeds", f"must be non-negative; got {min(values)}.")
    return sorted(set(values))


def parse_grid(items) -> dict:
    """A grid from ``["field=v1,v2", ...]`` (values read as YAML scalars) or a mapping field -> list of values.

    Every key must be a :class:`PSROConfig` field other than ``seed`` (the seeds are their own axis), or
    ``mapping.key``: one option of a mapping field (``oracle_options.total_steps``), the field's other options kept.

    Examples
    --------
    >>> parse_grid(["meta_solver=nash,prd", "oracle.options.total_steps=64,128"])   # (a field in its section's form)
    {'meta_solver': ['nash', 'prd'], 'oracle_options.total_steps': [64, 128]}
    >>> parse_grid(["meta_solvr=nash"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: grid: 'meta_solvr' is not a config field. Did you mean 'meta_solver'? ...
    """
    if items is None:
        return {}
    if isinstance(items, dict):
        grid = {str(k): list(v) if isinstance(v, (list, tuple)) else [v] for k, v in items.items()}
    else:
        grid = {}
        for item in items:
            if not isinstance(item, str) or "=" not in item:
                raise ConfigError("grid", f"{item!r} must look like field=value1,value2, e.g. meta_solver=nash,prd.")
            key, text = (part.strip() for part in item.split("=", 1))
            if key in grid:
                raise ConfigError("grid", f"{key!r} is given twice; give all its values once ({key}=a,b).")
            grid[key] = [yaml.safe_load(v) if v.strip() else "" for v in text.split(",")]
    known, mappings = PSROConfig.field_names(), mapping_fields()
    grid = {flat_name(key) or key: values for key, values in grid.items()}   # (run.x)
    for key, values in grid.items():
        if key == "seed":
            raise ConfigError("grid", "give the seeds with seeds (--seeds 0-4), not as a grid axis.")
        field, dot, option = key.partition(".")
        if key not in known and not (dot and option and field in mappings):
            close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ConfigError("grid", f"{key!r} is not a config field.{hint} Known fields: {', '.join(known)}.")
        if not values:
            raise ConfigError("grid", f"{key!r} has no values.")
    return grid


def plan_sweep(config: PSROConfig, seeds=(0,), grid=None) -> list:
    """The cells of a sweep: every combination of the grid's values, times every seed, each config validated.

    Examples
    --------
    >>> cells = plan_sweep(PSROConfig(iterations=2), seeds="0-1", grid={"meta_solver": ["nash", "uniform"]})
    >>> [cell.name for cell in cells]  # doctest: +NORMALIZE_WHITESPACE
    ['meta_solver=nash,seed=0', 'meta_solver=nash,seed=1', 'meta_solver=uniform,seed=0',
     'meta_solver=uniform,seed=1']
    >>> cells[3].config.meta_solver, cells[3].config.seed
    ('uniform', 1)
    """
    if not isinstance(config, PSROConfig):
        raise TypeError(f"config: must be a PSROConfig; got {type(config).__name__}.")
    grid = parse_grid(grid)
    seeds = parse_seeds(seeds)
    keys = list(grid)
    cells, names = [], set()
    for values in itertools.product(*(grid[k] for k in keys)):
        for seed in seeds:
            settings = {**dict(zip(keys, values)), "seed": seed}
            name = _cell_name(settings)
            if name in names:
                raise ConfigError("grid", f"two cells would share the directory {name!r}; give distinct values.")
            names.add(name)
            try:
                cell_config = config.replace(**field_changes(settings, lambda field: getattr(config, field)))
                cell_config.validate()
            except ValueError as exc:
                exc.add_note(f"in the sweep's cell {name}")
                raise
            cells.append(SweepCell(name, settings, cell_config))
    return cells


def _cell_name(settings: dict) -> str:
    """``key=value,...`` with characters outside ``[A-Za-z0-9._+=-]`` of a value replaced by ``_``."""
    return ",".join(f"{k}={re.sub(r'[^A-Za-z0-9._+=-]', '_', str(v))}" for k, v in settings.items())


def run_sweep(config: PSROConfig, out, seeds=(0,), grid=None, executor=None) -> SweepResult:
    """Run (or finish) a sweep into the directory ``out``: every cell of :func:`plan_sweep`, through ``executor``.

    Finished cells are skipped, interrupted ones resume from their checkpoints; a cell that fails is recorded in
    the index with its error (the others still run). Returns the directory and the index table.

    Examples
    --------
    >>> import tempfile
    >>> result = run_sweep(PSROConfig(iterations=2, rank_population=False), tempfile.mkdtemp(), seeds="0-1",
    ...                    grid={"meta_solver": ["nash", "uniform"]})
    >>> result.index[["cell", "status", "iterations"]].values.tolist()  # doctest: +NORMALIZE_WHITESPACE
    [['meta_solver=nash,seed=0', 'finished', 2], ['meta_solver=nash,seed=1', 'finished', 2],
     ['meta_solver=uniform,seed=0', 'finished', 2], ['meta_solver=uniform,seed=1', 'finished', 2]]
    """
    from games.executors import make_executor
    from psro.run.run_files import check_directory, run_lock, write_text

    cells = plan_sweep(config, seeds, grid)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    check_directory(out)
    with run_lock(out, what="sweep directory"):
        write_text(out / "sweep.yaml", yaml.safe_dump({"config": config.to_dict(), "seeds": parse_seeds(seeds),
                                                       "grid": parse_grid(grid)}, sort_keys=False))
        tasks = [(str(out / cell.name), cell.config.to_dict(), cell.settings) for cell in cells]
        todo = [task for task in tasks if not _finished(Path(task[0]), task[1])]
        logger.info("sweep %s: %d cells, %d to run", out, len(tasks), len(todo))
        if _is_submitit(executor):
            _run_on_submitit(todo, out, executor)
        else:
            pool = make_executor(executor)
            try:
                pool.map(run_cell, todo, desc="sweep cells")
            finally:
                pool.close()
        index = write_index(out, cells)
    return SweepResult(out, index)


def _is_submitit(executor) -> bool:
    text = executor.get("engine") if isinstance(executor, dict) else executor
    return isinstance(text, str) and text.split(":")[0] == "submitit"


def _run_on_submitit(tasks: list, out: Path, executor) -> None:
    """Each cell as a submitit job (``"submitit"``: Slurm where it is, else local processes; ``"submitit:local"``,
    ``"submitit:slurm"``; or ``{"engine": "submitit", "cluster": ..., **parameters}`` with submitit's executor
    parameters such as ``timeout_min`` or ``slurm_partition``); logs in ``<sweep>/submitit``. A job that dies
    leaves its cell unfinished (the next run of the sweep resumes it)."""
    try:
        import submitit
    except ImportError:
        raise ConfigError("executor", "'submitit' needs the submitit package, which is not installed; install the "
                          "extra: pip install 'psro-toolkit[slurm]'.") from None
    options = dict(executor) if isinstance(executor, dict) else {"cluster": (executor.split(":", 1) + [None])[1]}
    options.pop("engine", None)
    cluster = options.pop("cluster", None)
    if cluster not in (None, "local", "slurm", "debug"):
        raise ConfigError("executor", f"submitit's cluster must be local, slurm or debug; got {cluster!r}.")
    pool = submitit.AutoExecutor(folder=out / "submitit", cluster=cluster)
    pool.update_parameters(**{"timeout_min": 24 * 60, "name": f"psro-sweep-{out.name}", **options})
    jobs = [pool.submit(run_cell, task) for task in tasks]
    for task, job in zip(tasks, jobs):
        try:
            job.result()
        except Exception as exc:  # noqa: BLE001 - a dead job: its cell stays unfinished, the others are kept
            logger.warning("cell %s: its submitit job %s failed (%s); run the sweep again to resume it",
                           Path(task[0]).name, job.job_id, exc)


def run_cell(task) -> dict:
    """Run one cell ``(run_dir, config_dict, settings)`` to its stopping rules: skip it when finished, resume it
    from its checkpoint when interrupted, else start it; write its run directory and ``cell.json``. An error of
    the run is recorded in ``cell.json`` (status ``failed``) and returned, not raised, so the other cells go on.

    The cell's folder is locked while it runs; a folder that is a link, or locked by another process, is refused
    (status ``failed``) and nothing is written into it, ``cell.json`` included."""
    from psro.run.run_files import RunDirLocked, UnsafePath, check_directory, run_lock

    run_dir, config_dict, settings = task
    run_dir = Path(run_dir)
    config = PSROConfig.from_dict(config_dict)
    start = time.time()
    _worker_logging()
    logger.info("cell %s: started", run_dir.name)
    try:
        if not os.path.lexists(run_dir):
            run_dir.mkdir(parents=True)
        check_directory(run_dir)
        with run_lock(run_dir):
            record = _run_locked_cell(run_dir, config, config_dict, settings, start)
    except (UnsafePath, RunDirLocked) as exc:
        record = {"status": "failed", "settings": settings, "config": config_dict,
                  "error": f"{type(exc).__name__}: {exc}", "resumed_at": None, "seconds": 0.0}
    if record.get("status") == "finished":
        logger.info("cell %s: finished in %.1f s", run_dir.name, time.time() - start)
    else:
        logger.warning("cell %s: %s after %.1f s: %s", run_dir.name, record.get("status"), time.time() - start,
                       record.get("error"))
    return record


def _worker_logging() -> None:
    """In a worker process the pool started (``spawn``: nothing of the parent's logging configuration comes along),
    the cell's start and end lines go to stderr, as they do in the parent of a ``psro sweep``."""
    import multiprocessing

    if multiprocessing.parent_process() is not None and not logging.getLogger().handlers and not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)


def _run_locked_cell(run_dir: Path, config: PSROConfig, config_dict: dict, settings: dict, start: float) -> dict:
    """:func:`run_cell` under the cell's lock: skip, resume or start it, then write ``cell.json``."""
    if _finished(run_dir, config_dict):
        return _read_cell(run_dir)
    try:
        status, resumed_at = _train_cell(run_dir, config)
        error = ""
    except (ValueError, TypeError, RuntimeError, ArithmeticError, OSError) as exc:
        status, error, resumed_at = "failed", f"{type(exc).__name__}: {exc}", None
    record = {"status": status, "settings": settings, "config": config_dict, "error": error,
              "resumed_at": resumed_at,
              "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S"), "seconds": round(time.time() - start, 3)}
    _write_json_atomically(run_dir / CELL_FILE, record)
    return record


def _train_cell(run_dir: Path, config: PSROConfig) -> tuple:
    """Start or resume the run of one cell and write its run directory; return ``("finished", resumed_at)``, the
    iteration it resumed at (None when it started afresh)."""
    from games.imported_games import confirm_import
    from psro.loop.algorithms import algorithm_class
    from psro.run.checkpoint import has_checkpoint
    from psro.run.run_dir import write_config, write_run

    confirm_import(config.game)   # (the sweep's own config names it: its checkpoints may import it)
    checkpoint_dir = run_dir / "checkpoint"
    cls = algorithm_class(config.algorithm, config.oracle)
    solver, resumed_at = None, None
    if config.checkpoint and (has_checkpoint(checkpoint_dir) or (checkpoint_dir / "checkpoint.json").exists()):
        for previous in (False, True):   # the latest checkpoint, else the one before (the latest damaged)
            try:
                solver = cls.resume(checkpoint_dir, progress=False, executor=config.executor_spec(),
                                    previous=previous)
                resumed_at = int(solver.iteration)
                logger.info("cell %s: resuming at iteration %d", run_dir.name, resumed_at)
                break
            except (ValueError, OSError) as exc:
                logger.warning("cell %s: cannot resume from the %s checkpoint (%s)", run_dir.name,
                               "previous" if previous else "latest", exc)
    if solver is None:
        run_dir.mkdir(parents=True, exist_ok=True)
        solver = cls(config.replace(progress=False), checkpoint_dir=checkpoint_dir if config.checkpoint else None)
    solver.run_config = config.to_dict()
    write_config(run_dir, config)
    remaining = None if config.iterations is None else max(0, config.iterations - max(solver.iteration, 0))
    time_left = None if config.time_limit is None else max(0.0, config.time_limit - solver.state.wall)
    from psro.run.learning_curves import attach_learner_log
    from psro.run.loggers import make_loggers

    with make_loggers(config.loggers, run_dir) as log:   # (a resumed cell's earlier rows were logged already)
        attach_learner_log(solver, run_dir, log)   # (learners.csv: the networks' learning curves)
        solver.run(iterations=remaining, target_gap=config.target_gap, time_limit=time_left, progress=False,
                   callback=log.log_row)
    write_run(run_dir, config, solver)
    return "finished", resumed_at


def _finished(run_dir: Path, config_dict: dict) -> bool:
    """True when ``run_dir`` holds a finished cell of this config; a finished cell of another config is an error
    (the sweep directory belongs to another sweep)."""
    record = _read_cell(run_dir)
    if record is None or record.get("status") != "finished" or not (run_dir / "history.csv").is_file():
        return False
    saved = {k: v for k, v in (record.get("config") or {}).items() if k != "progress"}
    wanted = {k: v for k, v in config_dict.items() if k != "progress"}
    if saved != wanted:
        changed = sorted(k for k in set(saved) | set(wanted) if saved.get(k) != wanted.get(k))
        raise ConfigError("out", f"the cell {run_dir.name!r} in {str(run_dir.parent)!r} was run with another config "
                          f"({', '.join(changed)} differ); give a new sweep directory with --out.")
    return True


def _read_cell(run_dir: Path):
    from psro.run.run_files import read_regular

    path = Path(run_dir) / CELL_FILE
    if Path(run_dir).is_symlink():   # (a linked cell folder is never read, nor written)
        return None
    try:
        record = json.loads(read_regular(path))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _write_json_atomically(path: Path, data: dict) -> None:
    from psro.run.run_files import write_text

    write_text(path, json.dumps(data, indent=2, default=str))


def write_index(out, cells) -> pd.DataFrame:
    """Write ``index.csv``: one row per cell (its settings, status, iterations, final gap and wall time)."""
    from psro.run.run_files import read_regular, write_text

    rows = []
    for cell in cells:
        run_dir = Path(out) / cell.name
        record = _read_cell(run_dir) or {}
        if run_dir.is_symlink():
            record = {"status": "failed", "error": f"UnsafePath: {str(run_dir)!r} is a symbolic link; a cell is "
                                                   "written only into its own folder (replace the link by a folder)."}
        status = record.get("status") or ("interrupted" if run_dir.exists() else "pending")
        row = {"cell": cell.name, "run_dir": cell.name, "algorithm": cell.config.algorithm, **cell.settings,
               "status": status, "iterations": pd.NA, "gap": float("nan"), "approx_gap": float("nan"),
               "wall_time": float("nan"), "resumed_at": record.get("resumed_at"), "error": record.get("error", "")}
        if status == "finished":
            last = pd.read_csv(io.BytesIO(read_regular(run_dir / "history.csv"))).iloc[-1]
            row.update(iterations=int(last["iteration"]), gap=float(last["gap"]),
                       approx_gap=float(last.get("approx_gap", float("nan"))), wall_time=float(last["wall_time"]))
        rows.append(row)
    index = pd.DataFrame(rows)
    write_text(Path(out) / INDEX_FILE, index.to_csv(index=False))
    return index


def read_index(sweep_dir) -> pd.DataFrame:
    """The index table of a sweep directory (``index.csv``).

    Raises ``ValueError`` when ``sweep_dir`` holds none."""
    path = Path(sweep_dir) / INDEX_FILE
    if not path.is_file():
        raise ConfigError("sweep_dir", f"{str(sweep_dir)!r} holds no {INDEX_FILE}; run `psro sweep CONFIG --out "
                          f"{sweep_dir}` first.")
    return pd.read_csv(path)

