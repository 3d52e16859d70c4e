"""Loggers: where a run's history rows go while it trains, chosen by name in the config (``loggers: [csv]``).

A logger is any object with ``log_row(row)`` (one history row, a dict of the columns of
:data:`psro.state.HISTORY_COLUMNS`) and ``close()``. The ``psro run`` and ``psro sweep`` commands feed every row of
a run to the loggers its config names, writing into the run directory:

- ``csv``: ``log.csv``, one line per row, flushed as each iteration ends (``history.csv`` is written at the end);
- ``tensorboard``: event files under ``tensorboard/``, one scalar per numeric column at step ``iteration``
  (needs the ``tensorboard`` extra: ``pip install 'psro-toolkit[tensorboard]'``).

In Python, pass a logger's ``log_row`` as ``run(callback=...)``.
"""

from __future__ import annotations

import csv
import importlib.util
import math
import numbers
from pathlib import Path

__all__ = ["LOGGERS", "CSVLogger", "TensorBoardLogger", "LoggerGroup", "make_loggers", "check_loggers"]

#: Logger name -> (class name in this module, the package it needs, the extra that installs it).
LOGGERS = {
    "csv": ("CSVLogger", None, None),
    "tensorboard": ("TensorBoardLogger", "tensorboard", "tensorboard"),
}


def check_loggers(names) -> list:
    """``names`` as a list of known logger names whose packages are installed; else a ``ValueError`` naming the
    logger and the extra to install.

    Examples
    --------
    >>> check_loggers(["csv"])
    ['csv']
    >>> check_loggers(["wandb"])
    Traceback (most recent call last):
    ...
    ValueError: loggers: unknown logger 'wandb'; choose from ['csv', 'tensorboard'].
    """
    if names is None:
        return []
    if isinstance(names, str) or not isinstance(names, (list, tuple)):
        raise ValueError(f"loggers: must be a list of logger names such as [csv, tensorboard]; got {names!r}.")
    for name in names:
        if name not in LOGGERS:
            raise ValueError(f"loggers: unknown logger {name!r}; choose from {sorted(LOGGERS)}.")
        _, package, extra = LOGGERS[name]
        if package is not None and importlib.util.find_spec(package) is None:
            raise ValueError(f"loggers: {name!r} needs the {package} package, which is not installed; install the "
                             f"extra: pip install 'psro-toolkit[{extra}]'.")
    return list(names)


def _scalars(row: dict) -> dict:
    """The finite real numbers of a row (booleans and text left out)."""
    return {k: float(v) for k, v in row.items()
            if isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(float(v))}


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
        self.path = Path(directory) / "log.csv"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = None
        self._writer = None

    def log_row(self, row: dict) -> None:
        if self._writer is None:
            fresh = not self.path.exists() or self.path.stat().st_size == 0
            self._file = open(self.path, "a", newline="")
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

        self.log_dir = Path(directory) / "tensorboard"
        self._writer = SummaryWriter(log_dir=str(self.log_dir))

    def log_row(self, row: dict) -> None:
        step = int(row.get("iteration", 0))
        for key, value in _scalars(row).items():
            if key != "iteration":
                self._writer.add_scalar(key, value, global_step=step)
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()


class LoggerGroup:
    """Several loggers fed the same rows; a context manager that closes them."""

    def __init__(self, loggers):
        self.loggers = list(loggers)

    def log_row(self, row: dict) -> None:
        for log in self.loggers:
            log.log_row(row)

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
