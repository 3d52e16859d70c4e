"""Helpers shared by the benchmark scripts of this folder: thread pinning, import path, timing.

A script run as ``python experiments/benchmarks/x.py`` has this folder first on
``sys.path``, so ``import bench_common`` finds this module; but the folder also
holds scripts named like the packages (``solvers.py``, ``ranking.py``), which
would shadow them. Call :func:`use_repo_packages` right after importing this
module and before importing any package of the repository.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def pin_threads() -> None:
    """One BLAS/OpenMP thread unless the caller set the variables (call before importing numpy)."""
    for var in THREAD_VARS:
        os.environ.setdefault(var, "1")


def use_repo_packages() -> None:
    """Put the repository root first on ``sys.path`` and this folder last.

    This folder holds scripts named like the packages (``solvers.py``,
    ``ranking.py``); last on the path they cannot shadow them, while
    ``bench_common`` stays importable, also in worker processes that re-import
    the script (multiprocessing's spawn start method passes ``sys.path`` on).
    """
    sys.path[:] = [p for p in sys.path if Path(p or os.curdir).resolve() != HERE]
    sys.path.insert(0, str(REPO_ROOT))
    sys.path.append(str(HERE))


def median_time(fn: Callable[[], object], repeats: int, warmup: bool = False) -> tuple[float, object]:
    """Median wall-clock seconds of ``repeats`` calls of ``fn`` (after one untimed call if ``warmup``).

    Returns ``(median seconds, result of the last call)``.
    """
    if warmup:
        fn()
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out
