"""Import cost of the packages: median wall seconds of fresh interpreters running one import statement.

    python -m experiments.benchmarks.import_time [--repeats 5] [--source DIR] [--out FILE]

Each statement runs in ``--repeats`` new processes (after one untimed warm-up
run, so the disk cache is warm), from the folder ``--source`` (default: this
checkout), so that another checkout (``git worktree add /tmp/before REV``) can
be measured with the same interpreter and libraries. The times include the
interpreter's start, which ``python -c pass`` shows on its own.

``--quick`` times each statement in one process (after the warm-up) and writes under ``runs/``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from experiments import harness

harness.pin_threads()

CLI_HELP = "psro --help"
STATEMENTS = (
    "pass",
    "import numpy, pandas",
    "import psro",
    "import psro.oracles.jobs",     # what a worker process unpickling an oracle job imports
    "from psro import PSRO",
    "import solvers",
    "import games, solvers, ranking, psro",
    CLI_HELP,
)
HEAVY = ("solvers", "scipy.optimize", "torch", "pandas", "pyspiel", "matplotlib", "cvxpy", "networkx", "ranking")


def time_statement(statement: str, source: Path, repeats: int) -> list[float]:
    """Wall seconds of ``repeats`` fresh ``python -c statement`` runs in ``source`` (after one warm-up); the
    statement ``psro --help`` runs the command-line entry point of this interpreter's environment instead."""
    command = [sys.executable, "-c", statement]
    if statement == CLI_HELP:
        command = [str(Path(sys.executable).with_name("psro")), "--help"]
    times = []
    for i in range(repeats + 1):
        start = time.perf_counter()
        subprocess.run(command, cwd=source, check=True, stdout=subprocess.DEVNULL)
        if i:
            times.append(time.perf_counter() - start)
    return times


def loaded_heavy_modules(statement: str, source: Path) -> list[str]:
    """The heavy modules that ``statement`` leaves in ``sys.modules``."""
    probe = f"{statement}\nimport sys\nprint(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=source, check=True, capture_output=True, text=True)
    return [m for m in out.stdout.strip().split(",") if m]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed fresh processes per statement")
    parser.add_argument("--quick", action="store_true", help="one timed process per statement")
    parser.add_argument("--source", type=Path, default=harness.REPO_ROOT, help="checkout to import from")
    parser.add_argument("--out", type=Path, default=None,
                        help="markdown table to write (default: import_time.md under results/ for a default run, "
                             "a new folder under runs/ otherwise)")
    args = parser.parse_args(argv)
    out = harness.output_path(parser, args, harness.BENCHMARKS / "results" / "import_time.md")
    if args.quick:
        args.repeats = 1
    lines = ["# Import time", "",
             f"Median wall seconds of {args.repeats} fresh `python -c STATEMENT` processes (warm disk), "
             f"interpreter start included; Python {sys.version.split()[0]}; imports from `{args.source.name}`; "
             f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs at the start "
             "(compare rows within one table: a loaded machine slows every row).", "",
             "| statement | median s | min s | max s | heavy modules loaded |", "|---|---:|---:|---:|---|"]
    for statement in STATEMENTS:
        times = time_statement(statement, args.source, args.repeats)
        heavy = [] if statement == CLI_HELP else loaded_heavy_modules(statement, args.source)
        row = (f"| `{statement}` | {statistics.median(times):.3f} | {min(times):.3f} | {max(times):.3f} | "
               f"{', '.join(heavy) or '-'} |")
        print(row, flush=True)
        lines.append(row)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
