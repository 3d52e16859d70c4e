"""Helpers shared by the benchmark scripts of this folder: thread pinning, import path, timing, output paths.

The paper reproductions (``experiments/reproduce/common.py``) use :func:`output_path` too.

A script run as ``python experiments/benchmarks/x.py`` has this folder first on
``sys.path``, so ``import bench_common`` finds this module; but the folder also
holds scripts named like the packages (``solvers.py``, ``ranking.py``), which
would shadow them. Call :func:`use_repo_packages` right after importing this
module and before importing any package of the repository.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
SCRATCH = REPO_ROOT / "runs"   # ignored by git: where runs with non-default options write


def pin_threads() -> None:
    """One BLAS/OpenMP thread unless the caller set the variables (call before importing numpy)."""
    for var in THREAD_VARS:
        os.environ.setdefault(var, "1")


def command_line() -> str:
    """The command that is running, as a results file quotes it: the pinned thread variables, then
    ``python <script relative to the repository> <arguments>``, quoted for a shell."""
    script = str(Path(sys.argv[0]).resolve().relative_to(REPO_ROOT))
    return " ".join(f"{var}=1" for var in THREAD_VARS) + " python " + shlex.join([script, *sys.argv[1:]])


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


def script_parser(doc: str) -> argparse.ArgumentParser:
    """The start of a long-running benchmark script's ``main``: :func:`pin_threads`, :func:`use_repo_packages`,
    INFO logging with timestamps, and an argument parser described by the first paragraph of ``doc`` (the
    script's docstring)."""
    import logging

    pin_threads()
    use_repo_packages()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    return argparse.ArgumentParser(description=doc.split("\n\n")[0])


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


def changed_options(parser: argparse.ArgumentParser, args: argparse.Namespace, ignore=("out",)) -> list[str]:
    """The options of ``args`` whose values differ from ``parser``'s defaults (``ignore`` left out)."""
    defaults = vars(parser.parse_args([]))
    return sorted(k for k, v in vars(args).items() if k not in ignore and defaults.get(k, v) != v)


def output_path(parser: argparse.ArgumentParser, args: argparse.Namespace, committed: Path,
                dest: str = "out") -> Path:
    """Where a script writes its results: committed results only come from runs with the default options.

    An explicit ``--out`` (``args.<dest>`` not None) wins. Otherwise a run whose
    options are all at their defaults writes ``committed`` (the file or folder
    under ``results/`` that the README quotes), and any other run (``--quick``,
    fewer repeats, other sizes) writes the same name inside a fresh folder
    ``runs/<name>-<time>/``, which git ignores, so it never replaces them.
    """
    given = getattr(args, dest, None)
    if given is not None:
        return Path(given)
    changed = changed_options(parser, args, ignore=(dest,))
    if not changed:
        return committed
    folder = SCRATCH / f"{committed.stem}-{time.strftime('%Y%m%d-%H%M%S')}"
    folder.mkdir(parents=True, exist_ok=True)
    print(f"non-default options ({', '.join('--' + c.replace('_', '-') for c in changed)}): writing under "
          f"{folder}, not over {committed.relative_to(REPO_ROOT)}", file=sys.stderr)
    return folder / committed.name
