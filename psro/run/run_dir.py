"""A PSRO run as a directory: resolved config, history, meta-game, populations, plots and a report.

Layout::

    config.yaml          the resolved PSROConfig
    history.csv          one row per iteration (see psro.loop.state.HISTORY_COLUMNS)
    meta_strategy.json   the final mixture of each player over its population
    meta_game.npz        the EmpiricalGame (games.EmpiricalGame.save)
    population.npz       every policy (tabular arrays, or a learned run's network weights), provenance (no pickle)
    nash_conv.png        the gap (NashConv, or the CCE / CE gap for JPSRO) against iteration and wall time (log scale)
    checkpoint/          the latest checkpoint (psro.run.checkpoint), from which `psro resume RUN_DIR` continues
    report.md            a short summary
    ranking.csv          the final population ranked (``rank_population``)
    log.csv, tensorboard/, learners.csv   what the config's loggers wrote while it trained (psro.run.loggers)
    wandb/, mlflow.db, mlartifacts/       the W&B run, the MLflow store and its artifacts (psro.run.loggers)
    .psro.lock           the lock a process holds while it writes the directory (psro.run.run_files.run_lock)

Every file is written to a temporary file in its folder and renamed over its name
(:func:`psro.run.run_files.atomic_write`); a symbolic link or a non-regular file at
any of these names is refused, never written through. ``psro run --overwrite``
clears them first (:func:`clear_outputs`).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from psro.config.model import PSROConfig
from psro.policies.population import save_populations
from psro.run.checkpoint import member_arrays
from psro.run.run_files import atomic_write, check_target, read_regular, write_text

__all__ = ["default_run_dir", "write_run", "write_report", "plot_history", "history_figure", "clear_outputs",
           "OUTPUT_FILES", "OUTPUT_FOLDERS"]

#: The files the toolkit writes at the top of a run directory (besides ``checkpoint/``), cleared on overwrite
OUTPUT_FILES = ("config.yaml", "history.csv", "meta_strategy.json", "meta_game.npz", "population.npz",
                "nash_conv.png", "report.md", "ranking.csv", "log.csv", "learners.csv", "cell.json",
                "learning_curves.png", "mlflow.db", "mlflow.db-journal", "mlflow.db-wal", "mlflow.db-shm")
#: The folders the loggers write into, cleared on overwrite (``mlruns``: the MLflow file store of older versions)
OUTPUT_FOLDERS = ("tensorboard", "wandb", "mlartifacts", "mlruns")

GAP_NAMES = {"product": "NashConv", "cce": "CCE gap", "ce": "CE gap"}
GAP_FLOOR = 1e-16  # gaps at or below round-off are drawn at this floor on the log axis


def default_run_dir(config: PSROConfig, root="runs") -> Path:
    """``runs/<name>-<YYYYmmdd-HHMMSS>``.

    Examples
    --------
    >>> default_run_dir(PSROConfig(name="kuhn")).name.startswith("kuhn-")
    True
    """
    name = config.name or config.game.split("(")[0]
    return Path(root) / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}"


def write_config(run_dir, config: PSROConfig) -> Path:
    """Write the resolved config as ``config.yaml``."""
    return write_text(Path(run_dir) / "config.yaml", yaml.safe_dump(config.to_dict(), sort_keys=False))


def write_run(run_dir, config: PSROConfig, solver) -> None:
    """Write everything a finished (or interrupted) :class:`psro.PSRO` run leaves behind.

    Examples
    --------
    >>> import os, tempfile
    >>> from psro import PSRO
    >>> solver = PSRO("kuhn_poker", progress=False)
    >>> _ = solver.run(iterations=2)
    >>> out = tempfile.mkdtemp()
    >>> write_run(out, PSROConfig(iterations=2), solver)
    >>> sorted(os.listdir(out))  # doctest: +NORMALIZE_WHITESPACE
    ['config.yaml', 'history.csv', 'meta_game.npz', 'meta_strategy.json', 'nash_conv.png',
     'population.npz', 'report.md']
    """
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    write_config(run_dir, config)
    write_text(run_dir / "history.csv", solver.history.to_csv(index=False))
    strategy = {
        "meta_solver": solver.meta_solver.name,
        "method": solver.meta_solver.method,
        "kind": solver.kind,
        "gap_measure": GAP_NAMES[solver.kind],
        "iteration": solver.iteration,
        "gap": solver.gap,
        "marginals": [np.asarray(m).tolist() for m in solver.meta_strategy.marginals],
        "values": np.asarray(solver.meta_strategy.values).tolist(),
    }
    if solver.is_jpsro:
        strategy["joint_shape"] = list(solver.meta_strategy.joint.shape)
        strategy["joint"] = np.asarray(solver.meta_strategy.joint).ravel().tolist()   # C order
    write_text(run_dir / "meta_strategy.json", json.dumps(strategy, indent=2))
    solver.meta_game.save(check_target(run_dir / "meta_game.npz"))   # (a temporary file and a rename)
    atomic_write(run_dir / "population.npz",
                 lambda fh: save_populations(fh, solver.populations, encode=member_arrays))
    write_report(run_dir)


def clear_outputs(run_dir) -> list:
    """Remove what the toolkit wrote into ``run_dir`` (:data:`OUTPUT_FILES`, the loggers' :data:`OUTPUT_FOLDERS`)
    before a new run replaces the old one there (``psro run --overwrite``); return the names removed.

    A link at any of these names is removed itself, never followed: nothing outside the directory is touched. A
    folder is removed with everything in it (links inside it removed, not followed); the user's own files of
    other names stay.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> for name in ("ranking.csv", "log.csv", "notes.txt"):
    ...     _ = (folder / name).write_text("old")
    >>> (folder / "tensorboard").mkdir()
    >>> clear_outputs(folder), sorted(p.name for p in folder.iterdir())
    (['ranking.csv', 'log.csv', 'tensorboard'], ['notes.txt'])
    """
    run_dir = Path(run_dir)
    removed = []
    for name in (*OUTPUT_FILES, *OUTPUT_FOLDERS):
        path = run_dir / name
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            continue
        if stat.S_ISDIR(info.st_mode):
            shutil.rmtree(path)   # (a real folder: its links are unlinked, never followed)
        else:
            os.unlink(path)   # (a file, or a link: the link itself)
        removed.append(name)
    return removed


def plot_history(history: pd.DataFrame, path, title: str = "", gap_name: str = "NashConv") -> None:
    """The gap (NashConv by default) against iteration and against wall time, as a PNG (:func:`history_figure`).

    Examples
    --------
    >>> import os, tempfile
    >>> h = pd.DataFrame({"iteration": [0, 1], "gap": [1.0, 0.1], "wall_time": [0.1, 0.2]})
    >>> path = os.path.join(tempfile.mkdtemp(), "gap.png")
    >>> plot_history(h, path)
    >>> os.path.getsize(path) > 0
    True
    """
    fig = history_figure(history, title, gap_name)
    atomic_write(path, lambda fh: fig.savefig(fh, format="png", dpi=100))


def history_figure(history: pd.DataFrame, title: str = "", gap_name: str = "NashConv"):
    """The figure of :func:`plot_history`: the gap against iteration and against wall time.

    The exact gap is drawn where it is positive (a log axis; a gap of 0 at the floor ``GAP_FLOOR``). Where
    ``approx_gap`` was measured, it is drawn as what it is, a lower bound, with error bars of two standard errors,
    at its value, zero and negative values included: the y axis is then symmetric-log (linear within the
    smallest error bar around 0, logarithmic beyond), never clipped.

    Drawn on a ``matplotlib.figure.Figure`` without pyplot, so the caller's backend is never changed.

    Examples
    --------
    >>> h = pd.DataFrame({"iteration": [0, 1], "gap": [np.nan, np.nan], "wall_time": [0.1, 0.2],
    ...                   "approx_gap": [0.8, -0.05], "approx_gap_stderr": [0.1, 0.1]})   # (no tree: gap NaN)
    >>> ax = history_figure(h).axes[0]
    >>> ax.get_yscale(), ax.get_legend().get_texts()[0].get_text()
    ('symlog', 'approx_gap (lower bound, +- 2 se)')
    """
    # A Figure without pyplot: drawing to a file needs no backend, so the caller's backend (a notebook's inline
    # one, an interactive window) is never switched, and no pyplot figure is left open.
    from matplotlib.figure import Figure

    exact = history["gap"].to_numpy(dtype=float)
    gap = np.maximum(exact, GAP_FLOOR)
    approx, stderr = (history[c].to_numpy(dtype=float) if c in history else np.full(len(gap), np.nan)
                      for c in ("approx_gap", "approx_gap_stderr"))
    measured = np.isfinite(approx)
    fig = Figure(figsize=(10, 4))
    axes = fig.subplots(1, 2, sharey=True)
    for ax, column, label in ((axes[0], "iteration", "iteration"), (axes[1], "wall_time", "wall time (s)")):
        x = history[column].to_numpy(dtype=float)
        if np.isfinite(exact).any():
            ax.plot(x, gap, marker="." if len(gap) < 60 else None, label=f"{gap_name} (exact)")
        if measured.any():
            ax.errorbar(x[measured], approx[measured], yerr=2 * np.nan_to_num(stderr[measured]), fmt="o", capsize=3,
                        color="C1", label="approx_gap (lower bound, +- 2 se)")
            ax.axhline(0.0, color="0.5", linewidth=0.8)
            ax.legend()
        ax.set_xlabel(label)
        ax.grid(True, which="both", alpha=0.3)
    if measured.any():
        spread = 2 * stderr[measured]
        positive = np.concatenate([gap[np.isfinite(exact)], np.abs(approx[measured]), spread])
        positive = positive[np.isfinite(positive) & (positive > 0)]
        axes[0].set_yscale("symlog", linthresh=float(positive.min()) if positive.size else 1.0)
        if np.all(approx[measured] - spread >= 0):   # nothing below zero to show: start the axis at 0
            axes[0].set_ylim(bottom=0.0)
    else:
        axes[0].set_yscale("log")
    axes[0].set_ylabel(f"{gap_name} of the meta-strategy")
    if title:
        fig.suptitle(title)
    # fixed margins that fit the labels (tight_layout draws the figure once more to measure them: a third of the
    # time a run directory's report takes)
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.13, top=0.9 if title else 0.95, wspace=0.05)
    return fig


def write_report(run_dir) -> Path:
    """(Re)draw the plot and write ``report.md`` from the files of a run directory.

    Examples
    --------
    See :func:`write_run`.
    """
    run_dir = Path(run_dir)
    history, config, strategy = _read_history(run_dir), _read_config(run_dir), _read_strategy(run_dir)
    game = config.get("game", "?")
    gap_name = GAP_NAMES.get(strategy.get("kind", "product"), "NashConv")
    algorithm = "PSRO" if strategy.get("kind", "product") == "product" else "JPSRO"
    plot_history(history, run_dir / "nash_conv.png", title=f"{algorithm} on {game} ({config.get('meta_solver', '?')})",
                 gap_name=gap_name)
    from psro.run.learning_curves import plot_learning_curves

    curves = plot_learning_curves(run_dir, title=f"learning curves of the {config.get('oracle', '?')} responses on "
                                                 f"{game}")   # (None: the run trained no network)

    last = history.iloc[-1]
    pops = [c for c in history.columns if c.startswith("population_")]
    phases = [c for c in history.columns if c.startswith("time_")]
    lines = [
        f"# {algorithm} run: {config.get('name') or run_dir.name}",
        "",
        f"- game: `{game}`, meta-solver: `{config.get('meta_solver', '?')}`, oracle: `{config.get('oracle', '?')}`, "
        f"evaluator: `{config.get('evaluator', '?')}`, seed: {config.get('seed', '?')}",
        f"- iterations: {int(last['iteration'])}, final {gap_name}: {last['gap']:.3e}",
        f"- population sizes: {', '.join(str(int(last[c])) for c in pops)}; "
        f"evaluated profiles: {int(last['evaluations'])}",
        f"- wall time: {last['wall_time']:.2f} s, CPU time: {last['cpu_time']:.2f} s",
    ]
    if "approx_gap" in history and history["approx_gap"].notna().any():
        row = history[history["approx_gap"].notna()].iloc[-1]
        lines.append(f"- approx_gap, a lower bound of the {gap_name} (up to its standard error: the best of the "
                     "population's best member and fresh and warm-started learned responses, valued on fresh "
                     f"episodes) at iteration {int(row['iteration'])}: {row['approx_gap']:.3e} +- "
                     f"{row['approx_gap_stderr']:.1e}")
        if "approx_gap_time" in history:
            lines.append(f"- approx_gap measured on {int(history['approx_gap'].notna().sum())} rows, "
                         f"{history['approx_gap_time'].sum():.2f} s in all (the history's approx_gap_time)")
    for threshold in (1e-2, 1e-4, 1e-6):
        hit = history[history["gap"] <= threshold]
        if len(hit):
            row = hit.iloc[0]
            lines.append(f"- {gap_name} <= {threshold:g} first at iteration {int(row['iteration'])} "
                         f"({row['wall_time']:.2f} s)")
    lines += ["", "## Time per phase (s)", "", "| phase | total | share |", "|---|---|---|"]
    total = float(history[phases].to_numpy().sum()) or 1.0
    for c in phases:
        lines.append(f"| {c[5:]} | {history[c].sum():.3f} | {history[c].sum() / total:.0%} |")
    if strategy.get("marginals"):
        lines += ["", "## Final meta-strategy", ""]
        for p, m in enumerate(strategy["marginals"]):
            m = np.asarray(m)
            top = np.argsort(-m)[:5]
            lines.append(f"- player {p}: support {int((m > 1e-9).sum())} of {m.size}; largest weights "
                         + ", ".join(f"#{i}: {m[i]:.3f}" for i in top))
    lines += ["", f"![{gap_name}](nash_conv.png)", ""]
    if curves is not None:   # (learners.csv: one row per training chunk of every learned response)
        lines += ["## Learning curves", "", "![learning curves](learning_curves.png)", ""]
    return write_text(run_dir / "report.md", "\n".join(lines))


#: The columns ``report.md`` reads from ``history.csv`` (besides ``population_<p>`` and ``time_<phase>``)
REPORT_COLUMNS = ("iteration", "gap", "evaluations", "wall_time", "cpu_time")


def _read_history(run_dir: Path) -> pd.DataFrame:
    """``history.csv`` of a run directory, checked: a regular file, a table with at least one row, the columns the
    report reads, numbers in them."""
    path = run_dir / "history.csv"
    if not path.is_file():
        raise ValueError(f"run_dir {str(run_dir)!r} has no history.csv; is it a PSRO run directory?")
    try:
        history = pd.read_csv(io.BytesIO(read_regular(path)))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path} is not a readable history table ({' '.join(str(exc).split())}); write it again "
                         "with `psro resume RUN_DIR`.") from None
    columns = [*REPORT_COLUMNS, "population_0"]
    missing = [c for c in columns if c not in history.columns]
    if missing or history.empty:
        what = f"its columns {missing} are missing" if missing else "it has no rows"
        raise ValueError(f"{path} is not a run's history: {what} (a truncated or edited file); write it again with "
                         "`psro resume RUN_DIR`.")
    numeric = [c for c in history.columns if c in REPORT_COLUMNS or c.startswith(("population_", "time_"))
               or c.startswith("approx_gap")]
    bad = [c for c in numeric if not pd.api.types.is_numeric_dtype(history[c])]
    if bad:
        raise ValueError(f"{path}: columns {bad} hold text where numbers belong (a truncated or edited file); write "
                         "it again with `psro resume RUN_DIR`.")
    for c in ("iteration", "evaluations", *[c for c in history.columns if c.startswith("population_")]):
        if history[c].isna().any():
            raise ValueError(f"{path}: column {c!r} has empty cells (a truncated or edited file); write it again "
                             "with `psro resume RUN_DIR`.")
    return history


def _read_config(run_dir: Path) -> dict:
    """``config.yaml`` of a run directory as a checked config's fields (empty when there is none): safe YAML
    only, every field validated (:class:`psro.config.PSROConfig`), and the strings the report copies free of
    control characters."""
    path = run_dir / "config.yaml"
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(read_regular(path))
    except yaml.YAMLError as exc:
        raise ValueError(f"{path} is not valid YAML (no YAML tags): {' '.join(str(exc).split())}") from None
    config = PSROConfig.from_dict(data if data is not None else {}, source=str(path)).to_dict()
    for key in ("name", "game", "meta_solver", "oracle", "evaluator"):
        value = config.get(key)
        if isinstance(value, str) and any(ord(c) < 32 or ord(c) == 127 for c in value):
            raise ValueError(f"{path}: {key} {value!r} holds control characters (a line break, an escape); the "
                             "report copies it, so it must be plain text.")
    return config


def _read_strategy(run_dir: Path) -> dict:
    """``meta_strategy.json`` of a run directory (empty when there is none), checked as far as the report reads it."""
    path = run_dir / "meta_strategy.json"
    if not path.is_file():
        return {}
    try:
        strategy = json.loads(read_regular(path))
        marginals = strategy.get("marginals") or []
        if not all(np.asarray(m, dtype=float).ndim == 1 for m in marginals):
            raise ValueError("marginals must be lists of numbers")
    except (ValueError, TypeError, AttributeError) as exc:
        raise ValueError(f"{path} is not a readable meta-strategy ({exc}); write it again with "
                         "`psro resume RUN_DIR`.") from None
    if strategy.get("kind", "product") not in GAP_NAMES:
        raise ValueError(f"{path}: kind must be one of {sorted(GAP_NAMES)}; got {strategy.get('kind')!r}.")
    return strategy
