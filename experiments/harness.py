"""The harness every experiment shares: thread pinning, the command line it quotes, timing, output paths, tables.

The benchmarks (``experiments/benchmarks/``) and the paper reproductions
(``experiments/reproduce/``) are modules of the ``experiments`` package, run
from the repository root as ``python -m experiments.<folder>.<name>``
(``experiments/INDEX.md`` lists them by the question each answers).
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
REPO_ROOT = HERE.parent
BENCHMARKS = HERE / "benchmarks"
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
SCRATCH = REPO_ROOT / "runs"   # ignored by git: where runs with non-default options write


def pin_threads() -> None:
    """One BLAS/OpenMP thread unless the caller set the variables (call before importing numpy)."""
    for var in THREAD_VARS:
        os.environ.setdefault(var, "1")


def installed(package: str, script: str, skipping: str, extra: str) -> bool:
    """Whether optional ``package`` is importable; if not, one line on stdout saying that ``script`` skips
    ``skipping`` and how to install it (``pip install <extra>``)."""
    import importlib.util

    if importlib.util.find_spec(package) is not None:
        return True
    print(f"{script}: skipping {skipping}: {package} is not installed (pip install {extra})")
    return False


def command_line() -> str:
    """The command that is running, as a results file quotes it: the pinned thread variables, then
    ``python -m <module> <arguments>``, quoted for a shell."""
    module = ".".join(Path(sys.argv[0]).resolve().relative_to(REPO_ROOT).with_suffix("").parts)
    return " ".join(f"{var}=1" for var in THREAD_VARS) + " python " + shlex.join(["-m", module, *sys.argv[1:]])


def script_parser(doc: str) -> argparse.ArgumentParser:
    """The start of a long-running benchmark script's ``main``: :func:`pin_threads`, INFO logging with
    timestamps, and an argument parser described by the first paragraph of ``doc`` (the script's docstring)."""
    import logging

    pin_threads()
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
    under ``results/`` that docs/results.md quotes), and any other run (``--quick``,
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


def pipe_table(df, floatfmt: str = ".4g") -> str:
    """A markdown pipe table of a pandas DataFrame, floats formatted with ``floatfmt`` (no ``tabulate`` needed)."""
    import numpy as np

    def cell(v):
        return format(v, floatfmt) if isinstance(v, (float, np.floating)) else str(v)
    head = "| " + " | ".join(str(c) for c in df.columns) + " |"
    rule = "|" + "---|" * len(df.columns)
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join([head, rule, *body])
