"""Comparing runs: histories of run and sweep directories as one tidy table, curves with bootstrap confidence
bands over seeds, and a table of final values with intervals.

:func:`load_histories` reads run directories (``history.csv`` and ``config.yaml``) and sweep directories
(:mod:`psro.run.sweep`: every finished cell) into one DataFrame with a row per history row and the columns ``run``,
``group`` (what is compared: the algorithm, or the settings that differ between runs other than the seed),
``algorithm``, ``seed`` and the history's columns. :func:`aggregate_curves` aligns each group's runs on a common
grid of the chosen x axis by linear interpolation, only where every run of the group has data (never extrapolated
past a run's end), and estimates the mean or the interquartile mean over the runs with a percentile bootstrap
over runs (``scipy.stats.bootstrap``; the runs, not the points, are resampled). :func:`compare_runs` draws the
curves and writes ``comparison.png``, ``final.csv`` and ``final.md``; ``psro compare`` is its command.
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from psro.errors import ConfigError
from psro.run.run_files import atomic_write, check_target, read_regular, write_text

__all__ = ["load_histories", "aggregate_curves", "final_values", "compare_runs", "Comparison", "STATISTICS"]

logger = logging.getLogger(__name__)

#: The statistics over runs: ``mean`` and ``iqm`` (the interquartile mean: the mean of the middle 50 %).
STATISTICS = ("mean", "iqm")

#: Below this many runs a percentile bootstrap interval over runs is little more than the runs' min-max (with 3
#: runs it is exactly that) and covers less than its nominal level: the table and the figure say so
FEW_RUNS = 10


def few_runs_note(runs: int, confidence: float) -> str:
    """What to say of a ``confidence`` bootstrap interval over ``runs`` runs ("" when there are enough).

    Examples
    --------
    >>> few_runs_note(3, 0.95)
    "only 3 runs: the 95% interval is about the runs' min-max and covers less than 95%"
    >>> few_runs_note(20, 0.95)
    ''
    """
    if runs >= FEW_RUNS:
        return ""
    return f"only {runs} run{'s' * (runs != 1)}: the {confidence:.0%} interval is about the runs' min-max and " \
           f"covers less than {confidence:.0%}"


# config fields that never define what is compared (the seed is the axis resampled; the rest are output options)
_NOT_GROUPS = {"seed", "name", "progress", "checkpoint", "rank_population", "ranking_alpha", "executor", "loggers",
               "approx_gap_every", "approx_gap_options"}


@dataclass(frozen=True)
class Comparison:
    """What :func:`compare_runs` wrote: the tidy ``histories``, the aligned ``curves``, the ``final`` table and the
    paths of the figure and the tables."""

    histories: pd.DataFrame
    curves: pd.DataFrame
    final: pd.DataFrame
    figure: Path
    table_csv: Path
    table_md: Path


def _run_dirs(path: Path) -> list:
    """The run directories under ``path``: itself when it holds ``history.csv``; a sweep's finished cells (its
    ``index.csv``); else every subdirectory holding a ``history.csv``."""
    if (path / "history.csv").is_file():
        return [path]
    if (path / "index.csv").is_file():
        index = pd.read_csv(io.BytesIO(read_regular(path / "index.csv")))
        done = index[index["status"] == "finished"]
        if len(done) < len(index):
            logger.warning("%s: %d of %d cells are not finished; comparing the finished ones", path,
                           len(index) - len(done), len(index))
        return [path / str(name) for name in done["run_dir"]]
    runs = sorted(p.parent for p in path.glob("*/history.csv"))
    if not runs:
        raise ConfigError("runs", f"{str(path)!r} is neither a run directory (history.csv) nor a sweep directory "
                          "(index.csv), and holds no run directories.")
    return runs


def load_histories(paths) -> pd.DataFrame:
    """One tidy table of the histories of run and sweep directories (see the module docstring).

    Examples
    --------
    >>> import tempfile
    >>> from psro.config.model import PSROConfig
    >>> from psro.run.sweep import run_sweep
    >>> out = tempfile.mkdtemp()
    >>> _ = run_sweep(PSROConfig(iterations=2, rank_population=False), out, seeds="0-1",
    ...               grid={"meta_solver": ["nash", "uniform"]})
    >>> table = load_histories([out])
    >>> sorted(table["group"].unique()), sorted(table["seed"].unique().tolist()), len(table)
    (['meta_solver=nash', 'meta_solver=uniform'], [0, 1], 12)
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    frames, configs = [], []
    for given in paths:
        given = Path(given)
        if not given.exists():
            raise ConfigError("runs", f"{str(given)!r} does not exist.")
        for run in _run_dirs(given):
            history = pd.read_csv(io.BytesIO(read_regular(run / "history.csv")))   # (size checked before reading)
            config_path = run / "config.yaml"
            config = yaml.safe_load(read_regular(config_path)) if config_path.is_file() else {}
            configs.append(config if isinstance(config, dict) else {})
            history.insert(0, "run", str(run))
            frames.append(history)
    if not frames:
        raise ConfigError("runs", f"no finished run in {[str(p) for p in paths]}.")
    varying = [key for key in sorted({k for c in configs for k in c} - _NOT_GROUPS)
               if len({repr(c.get(key)) for c in configs}) > 1]
    for frame, config in zip(frames, configs):
        frame.insert(1, "algorithm", config.get("algorithm", "psro"))
        frame.insert(2, "seed", int(config.get("seed", 0)))
        label = ",".join(f"{k}={config.get(k)}" for k in varying) if varying not in ([], ["algorithm"]) \
            else config.get("algorithm", "psro")
        frame.insert(1, "group", label)
    return pd.concat(frames, ignore_index=True)


def _check_column(table: pd.DataFrame, column: str, axis: str) -> None:
    numeric = [c for c in table.columns if pd.api.types.is_numeric_dtype(table[c]) and c != "seed"]
    if column not in numeric:
        raise ConfigError(axis, f"{column!r} is not a numeric history column of these runs; choose one of "
                          f"{numeric}.")
    if table[column].isna().all():
        raise ConfigError(axis, f"{column!r} was never measured in these runs (all NaN); choose another column.")


def _statistic(name: str):
    from scipy import stats

    if name == "mean":
        return lambda values, axis=-1: np.mean(values, axis=axis)
    if name == "iqm":
        return lambda values, axis=-1: stats.trim_mean(values, 0.25, axis=axis)
    raise ConfigError("statistic", f"must be one of {list(STATISTICS)}; got {name!r}.")


def _estimate(values: np.ndarray, statistic: str, confidence: float, resamples: int, seed: int) -> tuple:
    """The statistic over runs (axis 0) and its percentile-bootstrap interval (NaN for a single run)."""
    from scipy import stats

    function = _statistic(statistic)
    estimate = function(values, axis=0)
    if values.shape[0] < 2:
        nan = np.full(estimate.shape, np.nan)
        return estimate, nan, nan
    if np.all(values == values[:1]):    # every run the same: the interval is that value
        return estimate, estimate.copy(), estimate.copy()
    result = stats.bootstrap((values,), function, confidence_level=confidence, n_resamples=resamples,
                             method="percentile", axis=0, vectorized=True, rng=np.random.default_rng(seed))
    return estimate, result.confidence_interval.low, result.confidence_interval.high


def aggregate_curves(table: pd.DataFrame, x: str = "iteration", y: str = "gap", statistic: str = "mean",
                     confidence: float = 0.95, points: int = 100, resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Per group, ``y`` against ``x`` over the runs: estimate and bootstrap interval at ``points`` values of ``x``.

    Each run's rows where ``y`` was measured are interpolated linearly in ``x``, only inside the run's own range
    (never extrapolated). The grid spans every run of the group; at each point the estimate is over the runs that
    cover it (the ``runs`` column; :func:`compare_runs` draws the points that not every run covers dotted), and
    the interval is a percentile bootstrap over those runs (NaN where fewer than two cover the point).

    Examples
    --------
    >>> table = pd.DataFrame({"group": "a", "run": ["r0"] * 3 + ["r1"] * 2, "iteration": [0, 1, 2, 0, 1],
    ...                       "gap": [1.0, 0.5, 0.25, 3.0, 1.5]})
    >>> curves = aggregate_curves(table, points=5)
    >>> curves[["x", "estimate", "runs"]].values.tolist()   # past iteration 1 only r0 is left
    [[0.0, 2.0, 2.0], [0.5, 1.5, 2.0], [1.0, 1.0, 2.0], [1.5, 0.375, 1.0], [2.0, 0.25, 1.0]]
    """
    _check_column(table, x, "x")
    _check_column(table, y, "y")
    _statistic(statistic)
    rows = []
    for group, frame in table.groupby("group", sort=True):
        runs = [run.dropna(subset=[x, y]).sort_values(x) for _, run in frame.groupby("run", sort=True)]
        runs = [run for run in runs if len(run)]
        if not runs:
            continue
        start, end = min(r[x].iloc[0] for r in runs), max(r[x].iloc[-1] for r in runs)
        grid = np.linspace(start, end, points) if end > start else np.array([end], dtype=float)
        values = np.full((len(runs), len(grid)), np.nan)
        for i, run in enumerate(runs):
            xs, ys = run[x].to_numpy(float), run[y].to_numpy(float)
            inside = (grid >= xs[0]) & (grid <= xs[-1])
            values[i, inside] = np.interp(grid[inside], xs, ys)
        covered = np.isfinite(values)
        estimate, low, high = (np.full(len(grid), np.nan) for _ in range(3))
        for pattern in np.unique(covered.T, axis=0):   # the points covered by the same runs, bootstrapped together
            columns = (covered.T == pattern).all(axis=1)
            if pattern.any():
                est, lo, hi = _estimate(values[pattern][:, columns], statistic, confidence, resamples, seed)
                estimate[columns], low[columns], high[columns] = est, lo, hi
        rows.append(pd.DataFrame({"group": group, "x": grid, "estimate": estimate, "low": low, "high": high,
                                  "runs": covered.sum(axis=0).astype(float), "of": float(len(runs))}))
    return pd.concat(rows, ignore_index=True)


def final_values(table: pd.DataFrame, y: str = "gap", x: str = "iteration", statistic: str = "mean",
                 confidence: float = 0.95, resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Per group: each run's last measured ``y``, their estimate with its bootstrap interval, the runs' mean final
    ``x`` and the number of runs.

    Examples
    --------
    >>> table = pd.DataFrame({"group": "a", "run": ["r0", "r0", "r1", "r1"], "iteration": [0, 1, 0, 1],
    ...                       "gap": [1.0, 0.5, 1.0, 0.7]})
    >>> row = final_values(table).iloc[0].to_dict()
    >>> round(row["estimate"], 3), row["runs"], bool(row["low"] <= row["estimate"] <= row["high"])
    (0.6, 2, True)
    """
    _check_column(table, y, "y")
    _check_column(table, x, "x")
    rows = []
    for group, frame in table.groupby("group", sort=True):
        last = frame.dropna(subset=[y]).sort_values(x).groupby("run").tail(1)
        if last.empty:
            logger.warning("%s: no run of group %r measured %s; left out of the table", y, group, y)
            continue
        estimate, low, high = _estimate(last[y].to_numpy(float)[:, None], statistic, confidence, resamples, seed)
        rows.append({"group": group, "statistic": statistic, "estimate": float(estimate[0]), "low": float(low[0]),
                     "high": float(high[0]), "confidence": confidence, f"final_{x}": float(last[x].mean()),
                     "runs": len(last), "note": few_runs_note(len(last), confidence)})
    return pd.DataFrame(rows)


def _markdown(table: pd.DataFrame) -> str:
    def cell(value):
        return f"{value:.4g}" if isinstance(value, float) else str(value)

    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def compare_runs(paths, out, x: str = "iteration", y: str = "gap", statistic: str = "mean",
                 confidence: float = 0.95, points: int = 100, resamples: int = 2000, seed: int = 0) -> Comparison:
    """Load ``paths`` (run or sweep directories), draw each group's curve and band of ``y`` against ``x`` into
    ``out/comparison.png`` and write the final values as ``out/final.csv`` and ``out/final.md``.

    Examples
    --------
    >>> import tempfile
    >>> from psro.config.model import PSROConfig
    >>> from psro.run.sweep import run_sweep
    >>> runs = run_sweep(PSROConfig(iterations=2, rank_population=False), tempfile.mkdtemp(), seeds="0-1",
    ...                  grid={"meta_solver": ["nash", "uniform"]}).directory
    >>> result = compare_runs([runs], tempfile.mkdtemp(), x="wall_time", resamples=200)
    >>> result.final["group"].tolist(), result.figure.name
    (['meta_solver=nash', 'meta_solver=uniform'], 'comparison.png')
    >>> compare_runs([runs], tempfile.mkdtemp(), y="gapp")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: y: 'gapp' is not a numeric history column of these runs; choose one of ['iteration', \
'gap', ...
    """
    from matplotlib.figure import Figure

    table = load_histories(paths)
    curves = aggregate_curves(table, x, y, statistic, confidence, points, resamples, seed)
    final = final_values(table, y, x, statistic, confidence, resamples, seed)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name in ("comparison.png", "final.csv", "final.md"):   # (a link at any name: refused before any write)
        check_target(out / name)
    fig = Figure(figsize=(7, 4.5))
    ax = fig.subplots()
    for group, curve in curves.groupby("group", sort=True):
        runs = int(curve["of"].iloc[0])
        every = curve["runs"] == runs   # solid where every run has data, dotted where only some do
        (line,) = ax.plot(curve["x"], curve["estimate"].where(every), label=f"{group} ({runs} run{'s' * (runs != 1)})")
        ax.plot(curve["x"], curve["estimate"], ":", color=line.get_color())
        ax.fill_between(curve["x"], curve["low"], curve["high"], color=line.get_color(), alpha=0.25, linewidth=0)
    if (curves["estimate"] > 0).all() and (curves[["low", "high"]].fillna(1.0) > 0).all().all():
        ax.set_yscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel(f"{y} ({'interquartile mean' if statistic == 'iqm' else 'mean'}, {confidence:.0%} bootstrap CI)")
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    fewest = int(curves.groupby("group")["of"].first().min()) if len(curves) else FEW_RUNS
    if few_runs_note(fewest, confidence):
        logger.warning("%s; run more seeds for an honest interval", few_runs_note(fewest, confidence))
        fig.text(0.01, 0.01, f"{few_runs_note(fewest, confidence)} (run more seeds)", fontsize="small",
                 color="firebrick")
    fig.tight_layout(rect=(0, 0.04, 1, 1) if few_runs_note(fewest, confidence) else None)
    figure = out / "comparison.png"
    atomic_write(figure, lambda fh: fig.savefig(fh, format="png", dpi=120))   # (never through a link)
    table_csv, table_md = out / "final.csv", out / "final.md"
    write_text(table_csv, final.to_csv(index=False))
    write_text(table_md, _markdown(final))
    return Comparison(table, curves, final, figure, table_csv, table_md)
