"""Measure two faults of a run directory, for real, with the ``psro`` command (issue 23's bar).

1. **Two writers.** Two ``psro resume RUN_DIR`` started together on one directory: one must proceed (exit 0),
   the other exit 2 with a message naming the lock (``.psro.lock``) and the holder's pid.
2. **A killed main process.** ``psro run ... --executor 2`` SIGKILLed while its pool works: no pool worker may be
   alive 10 s later.

Each is tried ``--tries`` times (default 10); the script prints the counts and exits non-zero if a try failed.
Run: ``python -m experiments.benchmarks.run_dir_faults [--tries 10]`` (about two minutes on two cores).
``--quick`` tries each fault once, and skips the second (saying so) where ``psutil`` is not installed.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from experiments import harness

ROOT = Path(__file__).resolve().parents[2]
KUHN = ROOT / "experiments" / "configs" / "kuhn_poker.yaml"
LEDUC = ROOT / "experiments" / "configs" / "leduc_poker.yaml"

logger = logging.getLogger("run_dir_faults")


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg"}


def _psro(*args) -> list:
    return [sys.executable, "-m", "psro.run.cli", *map(str, args)]


def two_writers(work: Path, tries: int) -> int:
    """Tries in which exactly one of two concurrent resumes proceeded and the other was refused by the lock."""
    base = work / "base"
    subprocess.run(_psro("run", LEDUC, "--set", "iterations=1", "--set", "rank_population=false", "--out", base),
                   env=_env(), check=True, capture_output=True)
    good = 0
    for t in range(tries):
        run = work / f"writers-{t}"
        shutil.copytree(base, run)
        args = _psro("resume", run, "--set", "iterations=null", "--set", "target_gap=null", "--set", "time_limit=6",
                     "--set", "rank_population=false")
        procs = [subprocess.Popen(args, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(2)]
        outcomes = [(p.wait(timeout=300), p.communicate()[1]) for p in procs]
        codes = sorted(code for code, _ in outcomes)
        refused = [err for code, err in outcomes if code == 2]
        ok = codes == [0, 2] and ".psro.lock" in refused[0] and "being written by process" in refused[0]
        good += ok
        logger.info("writers try %d: exit codes %s%s", t, [c for c, _ in outcomes],
                    "" if ok else f" FAILED: {[e.strip()[-300:] for _, e in outcomes]}")
    return good


def _workers(pid: int) -> list:
    import psutil

    try:
        return [c for c in psutil.Process(pid).children() if "resource_tracker" not in " ".join(c.cmdline())]
    except psutil.NoSuchProcess:
        return []


def killed_main(work: Path, tries: int) -> int:
    """Tries in which no pool worker of a SIGKILLed ``psro run --executor 2`` was alive 10 s later."""
    import psutil

    good = 0
    for t in range(tries):
        main = subprocess.Popen(_psro("run", KUHN, "--set", "evaluator=monte_carlo", "--set", "executor=2",
                                      "--set", "episodes_per_profile=20000", "--set", "iterations=null",
                                      "--set", "target_gap=null", "--set", "time_limit=120",
                                      "--set", "rank_population=false", "--out", work / f"killed-{t}"),
                                env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline, workers = time.monotonic() + 120, []
        while len(workers) < 2 and time.monotonic() < deadline:
            workers = _workers(main.pid)
            time.sleep(0.2)
        time.sleep(2.0)   # (the workers busy with their tasks)
        main.send_signal(signal.SIGKILL)
        main.wait()
        _, alive = psutil.wait_procs(workers, timeout=10)
        alive = [p for p in alive if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        ok = len(workers) == 2 and not alive
        good += ok
        logger.info("kill try %d: %d workers seen, %d alive 10 s after the SIGKILL", t, len(workers), len(alive))
        for p in alive:
            p.kill()
    return good


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tries", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="one try of each; no second fault without psutil")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.quick:
        args.tries = 1
    skip_killed = args.quick and not harness.installed("psutil", "run_dir_faults --quick", "the killed-main fault",
                                                       "psutil")
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        writers = two_writers(work, args.tries)
        killed = None if skip_killed else killed_main(work, args.tries)
    logger.info("two concurrent resumes: one proceeded, the other refused by the lock in %d of %d tries",
                writers, args.tries)
    if killed is not None:
        logger.info("SIGKILLed main with --executor 2: no worker alive 10 s later in %d of %d tries", killed,
                    args.tries)
    return 0 if writers == args.tries and killed in (None, args.tries) else 1


if __name__ == "__main__":
    sys.exit(main())
