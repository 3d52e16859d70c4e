"""Loggers: where a run's history rows go while it trains, chosen by name in the config (``loggers: [csv]``).

A logger is any object with ``log_row(row)`` (one history row, a dict of the columns of
:data:`psro.loop.state.HISTORY_COLUMNS`) and ``close()``; one with ``log_learners(rows)`` also gets the learning-curve
rows of the networks the run trains (:mod:`psro.run.learning_curves`: loss, entropy, episode return, ... per training
chunk, at step ``env_steps``). The ``psro run`` and ``psro sweep`` commands feed every row of a run to the loggers
its config names, writing into the run directory:

- ``csv``: ``log.csv``, one line per row, flushed as each iteration ends (``history.csv`` is written at the end);
- ``tensorboard``: event files under ``tensorboard/``, one scalar per numeric column at step ``iteration``
  (needs the ``tensorboard`` extra: ``pip install 'psro-toolkit[tensorboard]'``); learner rows as
  ``learner/<learner>/player_<p>/<column>`` at step ``env_steps``;
- ``wandb``: a Weights & Biases run (project ``$WANDB_PROJECT``, else ``psro``; named after the run directory),
  its files under ``wandb/`` in the run directory; history columns against ``iteration``, learner rows as
  ``learner/...`` against ``learner/env_steps``. ``WANDB_MODE=offline`` keeps it on disk (``wandb sync`` uploads it
  later). Needs the ``wandb`` extra;
- ``mlflow``: an MLflow run (experiment ``$MLFLOW_EXPERIMENT_NAME``, else ``psro``) in the tracking store of
  ``$MLFLOW_TRACKING_URI``, else a SQLite store in the run directory, ``mlflow.db``, its artifacts in
  ``mlartifacts/`` beside it (MLflow 3 refuses its old file store ``mlruns/``); history columns at step
  ``iteration``, learner rows as ``learner/...`` at step ``env_steps``. Read them back with MLflow's own client,
  ``MlflowClient(tracking_uri="sqlite:///RUN_DIR/mlflow.db")`` (:func:`mlflow_tracking_uri`), or browse them with
  ``mlflow ui --backend-store-uri sqlite:///RUN_DIR/mlflow.db``. Needs the ``mlflow`` extra (``mlflow-skinny``,
  with SQLAlchemy and Alembic for the SQLite store).

Each extra pins the versions the loggers are tested with (``setup.cfg``); ``tests/psro/run/test_loggers.py`` checks
that the installed ones are in range and that a run's rows read back.

In Python, pass a logger's ``log_row`` as ``run(callback=...)``.
"""

from __future__ import annotations

import csv
import importlib.util
import math
import numbers
import os
import time
from pathlib import Path

from psro.errors import ConfigError

__all__ = ["LOGGERS", "CSVLogger", "TensorBoardLogger", "WandbLogger", "MLflowLogger", "LoggerGroup", "make_loggers",
           "check_loggers", "mlflow_tracking_uri", "MLFLOW_DB", "MLFLOW_ARTIFACTS"]

#: Logger name -> (class name in this module, the package it needs, the extra that installs it).
LOGGERS = {
    "csv": ("CSVLogger", None, None),
    "tensorboard": ("TensorBoardLogger", "tensorboard", "tensorboard"),
    "wandb": ("WandbLogger", "wandb", "wandb"),
    "mlflow": ("MLflowLogger", "mlflow", "mlflow"),
}


def check_loggers(names) -> list:
    """``names`` as a list of known logger names whose packages are installed; else a ``ValueError`` naming the
    logger and the extra to install.

    Examples
    --------
    >>> check_loggers(["csv"])
    ['csv']
    >>> check_loggers(["neptune"])
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: loggers: unknown logger 'neptune'; choose from ['csv', 'mlflow', 'tensorboard', 'wandb'].
    """
    if names is None:
        return []
    if isinstance(names, str) or not isinstance(names, (list, tuple)):
        raise ConfigError("loggers", f"must be a list of logger names such as [csv, tensorboard]; got {names!r}.")
    for name in names:
        if name not in LOGGERS:
            raise ConfigError("loggers", f"unknown logger {name!r}; choose from {sorted(LOGGERS)}.")
        _, package, extra = LOGGERS[name]
        if package is not None and importlib.util.find_spec(package) is None:
            raise ConfigError("loggers", f"{name!r} needs the {package} package, which is not installed; install the "
                              f"extra: pip install 'psro-toolkit[{extra}]'.")
        if name == "mlflow":
            _check_mlflow_store()
    return list(names)


#: The default MLflow store of a run directory: a SQLite database, and the folder of its runs' artifacts beside it
MLFLOW_DB, MLFLOW_ARTIFACTS = "mlflow.db", "mlartifacts"
#: The packages MLflow's SQLite store needs (``mlflow-skinny`` leaves them out; the ``mlflow`` extra has them)
MLFLOW_STORE_PACKAGES = ("sqlalchemy", "alembic")


def _check_mlflow_store() -> None:
    """Refuse the ``mlflow`` logger's default SQLite store when SQLAlchemy or Alembic is missing (a
    ``$MLFLOW_TRACKING_URI`` of the user's own needs neither)."""
    if os.environ.get("MLFLOW_TRACKING_URI"):
        return
    missing = [name for name in MLFLOW_STORE_PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        raise ConfigError("loggers", f"'mlflow' keeps its runs in a SQLite store in the run directory ({MLFLOW_DB}), "
                          f"which needs {' and '.join(missing)}, not installed; install the extra: pip install "
                          "'psro-toolkit[mlflow]', or set MLFLOW_TRACKING_URI to a tracking store of your own.")


def mlflow_tracking_uri(directory, environ=None) -> str:
    """The tracking store the ``mlflow`` logger of run directory ``directory`` writes into: ``$MLFLOW_TRACKING_URI``,
    else the SQLite database ``mlflow.db`` in the directory (an absolute ``sqlite:///`` URI); pass it to
    ``mlflow.tracking.MlflowClient(tracking_uri=...)`` to read the run back.

    Parameters
    ----------
    directory : str or Path
        The run directory.
    environ : mapping, optional
        The environment (default: ``os.environ``).

    Examples
    --------
    >>> mlflow_tracking_uri("/tmp/runs/kuhn", environ={})
    'sqlite:////tmp/runs/kuhn/mlflow.db'
    >>> mlflow_tracking_uri("/tmp/runs/kuhn", environ={"MLFLOW_TRACKING_URI": "http://localhost:5000"})
    'http://localhost:5000'
    """
    uri = (os.environ if environ is None else environ).get("MLFLOW_TRACKING_URI")
    return uri if uri else f"sqlite:///{(Path(directory).absolute() / MLFLOW_DB).as_posix()}"


def _scalars(row: dict) -> dict:
    """The finite real numbers of a row (booleans and text left out)."""
    return {k: float(v) for k, v in row.items()
            if isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(float(v))}


#: The learning-curve columns a logger records (:data:`psro.run.learning_curves.LEARNER_COLUMNS`)
LEARNER_SCALARS = ("loss", "entropy", "episode_return", "value", "learning_rate")


def learner_scalars(row: dict) -> dict:
    """The finite values of a learning-curve row as ``learner/<learner>/player_<p>/<column>`` scalars.

    Examples
    --------
    >>> learner_scalars({"player": 1, "learner": "ppo", "env_steps": 512, "loss": 0.5, "entropy": float("nan")})
    {'learner/ppo/player_1/loss': 0.5}
    """
    head = f"learner/{row.get('learner') or 'learner'}/player_{int(row['player'])}"
    return {f"{head}/{k}": v for k, v in _scalars({k: row.get(k) for k in LEARNER_SCALARS}).items()}


class CSVLogger:
    """Append each row to ``<directory>/log.csv`` (the header from the first row; later new columns are dropped).

    Examples
    --------
    >>> import tempfile
    >>> log = CSVLogger(tempfile.mkdtemp())
    >>> log.log_row({"iteration": 0, "gap": 0.5}); log.log_row({"iteration": 1, "gap": 0.25}); log.close()
    >>> print(open(log.path).read().strip())
    iteration,gap
    0,0.5
    1,0.25
    """

    def __init__(self, directory):
        from psro.run.run_files import check_target

        self.path = Path(directory) / "log.csv"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        check_target(self.path)   # (a link at log.csv is refused now, before the run trains)
        self._file = None
        self._writer = None

    def log_row(self, row: dict) -> None:
        if self._writer is None:
            from psro.run.run_files import open_append

            self._file = open_append(self.path)   # (a linked or hard-linked log.csv is refused, never appended to)
            fresh = self._file.tell() == 0
            self._writer = csv.DictWriter(self._file, fieldnames=list(row), extrasaction="ignore")
            if fresh:
                self._writer.writeheader()
        self._writer.writerow(row)
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file, self._writer = None, None


class TensorBoardLogger:
    """Each row's numeric columns as TensorBoard scalars (tag = column, step = ``iteration``) in
    ``<directory>/tensorboard``, through ``torch.utils.tensorboard.SummaryWriter``."""

    def __init__(self, directory):
        check_loggers(["tensorboard"])
        from torch.utils.tensorboard import SummaryWriter

        from psro.run.run_files import check_directory

        self.log_dir = Path(directory) / "tensorboard"
        check_directory(directory)
        if self.log_dir.is_symlink() or self.log_dir.exists():
            check_directory(self.log_dir)   # (a linked tensorboard/ is refused: nothing is written through it)
        self._writer = SummaryWriter(log_dir=str(self.log_dir))

    def log_row(self, row: dict) -> None:
        step = int(row.get("iteration", 0))
        for key, value in _scalars(row).items():
            if key != "iteration":
                self._writer.add_scalar(key, value, global_step=step)
        self._writer.flush()

    def log_learners(self, rows: list) -> None:
        """Learning-curve rows as scalars ``learner/<learner>/player_<p>/<column>`` at step ``env_steps``."""
        for row in rows:
            for key, value in learner_scalars(row).items():
                self._writer.add_scalar(key, value, global_step=int(row["env_steps"]))
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()


class WandbLogger:
    """A Weights & Biases run in ``<directory>/wandb`` (module docstring): history columns against ``iteration``,
    learning-curve rows against ``learner/env_steps`` (``wandb.define_metric``); ``WANDB_MODE=offline`` writes
    only to disk."""

    def __init__(self, directory):
        check_loggers(["wandb"])
        import wandb

        from psro.run.run_files import check_directory

        directory = check_directory(directory)
        self.log_dir = directory / "wandb"
        if os.path.lexists(self.log_dir):
            check_directory(self.log_dir)   # (a linked wandb/ is refused: nothing is written through it)
        try:
            self._run = wandb.init(project=os.environ.get("WANDB_PROJECT") or "psro", name=directory.name,
                                   dir=str(directory), reinit="create_new",
                                   settings=wandb.Settings(console="off"))   # (the run's own output untouched)
        except Exception as exc:   # (wandb raises its own errors: no login, no network, ...)
            raise ConfigError("loggers", f"wandb could not start a run ({exc}); log in with `wandb login`, or set "
                              "WANDB_MODE=offline to keep the run in the run directory (`wandb sync` later).") from exc
        self._run.define_metric("iteration")
        self._run.define_metric("learner/env_steps")
        self._run.define_metric("learner/*", step_metric="learner/env_steps")
        self._run.define_metric("*", step_metric="iteration")

    def log_row(self, row: dict) -> None:
        self._run.log({"iteration": int(row.get("iteration", 0)), **_scalars(row)})

    def log_learners(self, rows: list) -> None:
        for row in rows:
            self._run.log({"learner/env_steps": int(row["env_steps"]), **learner_scalars(row)})

    def close(self) -> None:
        self._run.finish()


class MLflowLogger:
    """An MLflow run (module docstring): history columns at step ``iteration``, learning-curve rows at step
    ``env_steps``, in ``$MLFLOW_TRACKING_URI`` or the SQLite store ``<directory>/mlflow.db``
    (:func:`mlflow_tracking_uri`), its artifacts in ``<directory>/mlartifacts``."""

    def __init__(self, directory):
        check_loggers(["mlflow"])
        from mlflow.tracking import MlflowClient

        from psro.run.run_files import check_directory

        directory = check_directory(directory)
        own_store = not os.environ.get("MLFLOW_TRACKING_URI")
        if own_store:
            _check_store_paths(directory)
        self.tracking_uri = mlflow_tracking_uri(directory)
        self._client = MlflowClient(tracking_uri=self.tracking_uri)
        name = os.environ.get("MLFLOW_EXPERIMENT_NAME") or "psro"
        experiment = self._client.get_experiment_by_name(name)
        if experiment is not None:
            experiment_id = experiment.experiment_id
        else:   # (its artifacts beside the database, inside the run directory, unless the store is the user's)
            where = (directory.absolute() / MLFLOW_ARTIFACTS).as_uri() if own_store else None
            experiment_id = self._client.create_experiment(name, artifact_location=where)
        self.run_id = self._client.create_run(experiment_id, run_name=directory.name).info.run_id

    def _log(self, items: list) -> None:
        """``(key, value, step)`` triples, in batches."""
        from mlflow.entities import Metric

        stamp = int(time.time() * 1000)
        metrics = [Metric(key, value, stamp, step) for key, value, step in items]
        for start in range(0, len(metrics), 1000):   # (MLflow's batch limit)
            self._client.log_batch(self.run_id, metrics=metrics[start:start + 1000])

    def log_row(self, row: dict) -> None:
        step = int(row.get("iteration", 0))
        self._log([(k, v, step) for k, v in _scalars(row).items() if k != "iteration"])

    def log_learners(self, rows: list) -> None:
        self._log([(k, v, int(row["env_steps"])) for row in rows for k, v in learner_scalars(row).items()])

    def close(self) -> None:
        self._client.set_terminated(self.run_id)


def _check_store_paths(directory: Path) -> None:
    """Refuse a link (or anything but a regular file) at the SQLite store's files in ``directory`` (the database
    and the journals SQLite writes beside it) and a linked ``mlartifacts/``: nothing is written through a link."""
    from psro.run.run_files import check_directory, check_target

    for suffix in ("", "-journal", "-wal", "-shm"):
        check_target(directory / f"{MLFLOW_DB}{suffix}")
    if os.path.lexists(directory / MLFLOW_ARTIFACTS):
        check_directory(directory / MLFLOW_ARTIFACTS)


class LoggerGroup:
    """Several loggers fed the same rows; a context manager that closes them."""

    def __init__(self, loggers):
        self.loggers = list(loggers)

    def log_row(self, row: dict) -> None:
        for log in self.loggers:
            log.log_row(row)

    def log_learners(self, rows: list) -> None:
        """Learning-curve rows (:data:`psro.run.learning_curves.LEARNER_COLUMNS`) to the loggers that take them."""
        for log in self.loggers:
            if hasattr(log, "log_learners"):
                log.log_learners(rows)

    def close(self) -> None:
        for log in self.loggers:
            log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def make_loggers(names, directory) -> LoggerGroup:
    """The loggers ``names`` (see :data:`LOGGERS`) writing into ``directory``, as one :class:`LoggerGroup`.

    Examples
    --------
    >>> import tempfile
    >>> with make_loggers(["csv"], tempfile.mkdtemp()) as log:
    ...     log.log_row({"iteration": 0, "gap": 1.0})
    >>> make_loggers(None, ".").loggers
    []
    """
    return LoggerGroup(globals()[LOGGERS[name][0]](directory) for name in check_loggers(names))
