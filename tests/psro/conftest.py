"""Shared checks of the training loops' tests (the self-play family, the variants): two runs are the same run, and
a run interrupted in this process or killed with SIGKILL."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

TIMING = ["time_meta_solve", "time_oracle", "time_evaluation", "time_metric", "wall_time", "cpu_time",
          "approx_gap_time"]


def _same_run(a, b) -> None:
    """Histories equal but for the timing columns; populations, meta-games and ``state.extra`` equal bit for bit."""
    pd.testing.assert_frame_equal(a.history.drop(columns=TIMING).reset_index(drop=True),
                                  b.history.drop(columns=TIMING).reset_index(drop=True), check_exact=True)
    assert len(a.populations) == len(b.populations)
    for pa, pb in zip(a.populations, b.populations):
        assert len(pa) == len(pb) and all(_same_member(ma, mb) for ma, mb in zip(pa.policies, pb.policies))
    for name in ("count", "total", "total_sq", "exact"):
        assert np.array_equal(getattr(a.meta_game, name), getattr(b.meta_game, name))
    assert a.state.extra == b.state.extra


def _same_member(a, b) -> bool:
    """Two population members are the same policy: equal arrays, or networks with equal architecture and weights."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
    if not hasattr(a, "to_arrays"):
        return type(a) is type(b)
    arrays_a, arrays_b = a.to_arrays(), b.to_arrays()
    return a.architecture() == b.architecture() and arrays_a.keys() == arrays_b.keys() and all(
        np.array_equal(arrays_a[key], arrays_b[key]) for key in arrays_a)


class Forked:
    """``function(*args)`` run in a child process forked from this one, started at once.

    The child is a process of its own, which SIGKILL stops at any instruction as it stops ``psro run``; forked, it
    comes with this process's modules imported (no interpreter start, no second torch import: seconds of CPU per
    killed run). With ``stdout=True`` what the child prints (``print`` and file descriptor 1) is read line by line
    from ``self.stdout``. The SIGKILL tests run the killed run here and resume it in the test's process.
    """

    def __init__(self, function, *args, stdout: bool = False):
        read, write = os.pipe() if stdout else (None, None)
        self.process = multiprocessing.get_context("fork").Process(target=_forked_child, args=(function, args, write),
                                                                   daemon=True)
        self.process.start()
        self.stdout = None
        if stdout:
            os.close(write)
            self.stdout = os.fdopen(read, "r")

    def kill(self) -> int:
        """SIGKILL the child (if it still runs) and wait for it; its exit code (``-SIGKILL`` when killed)."""
        if self.process.is_alive():
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.join(timeout=60)
        if self.stdout is not None:
            self.stdout.close()
        return self.process.exitcode


def _forked_child(function, args, write) -> None:
    if write is not None:   # print to the pipe: Python's stdout and file descriptor 1
        os.dup2(write, 1)
        sys.stdout = os.fdopen(write, "w", buffering=1)
    function(*args)


def _run_script(script: str, argv: tuple = ()) -> None:
    sys.argv = ["-c", *map(str, argv)]
    exec(compile(script, "<killed run>", "exec"), {"__name__": "__main__"})


def _kill_after(script: str, checkpoint: Path, iteration: int) -> None:
    """Run ``script`` in a forked child (:class:`Forked`) and SIGKILL it once its checkpoint in ``checkpoint``
    reached ``iteration``."""
    child = Forked(_run_script, script)
    try:
        deadline = time.time() + 120
        while time.time() < deadline and child.process.is_alive():
            path = checkpoint / "checkpoint.json"
            if path.is_file():
                try:
                    if json.loads(path.read_bytes())["iteration"] >= iteration:
                        break
                except ValueError:   # (read while being replaced: the rename is atomic, so retry)
                    pass
            time.sleep(0.02)
    finally:
        exitcode = child.kill()
    assert exitcode == -signal.SIGKILL


class Interrupted(BaseException):
    """Raised in place of a file rename: the interrupted run stops there, as a killed process would."""


def _interrupt_after(script: str, checkpoint: Path, iteration: int, monkeypatch) -> None:
    """Run ``script`` in this process and interrupt it at its first file write after its checkpoint in
    ``checkpoint`` reached ``iteration``: that write's temporary file is never renamed into place.

    The in-process form of :func:`_kill_after` (no second process, no kill). The atomic rename that protects a
    file from a kill in the middle of its write is tested with SIGKILL once per mechanism
    (``tests/psro/run/test_checkpoint_resume.py``, NFSP's and COffeE-PSRO's own tests).
    """
    rename, armed = os.replace, []

    def replace(src, dst, *args, **kwargs):
        if armed:
            raise Interrupted
        rename(src, dst, *args, **kwargs)
        path = Path(dst)
        if path == checkpoint / "checkpoint.json" and json.loads(path.read_bytes())["iteration"] >= iteration:
            armed.append(True)

    monkeypatch.setattr(os, "replace", replace)
    try:
        exec(compile(script, "<interrupted run>", "exec"), {})
    except Interrupted:
        pass
    finally:
        monkeypatch.setattr(os, "replace", rename)
    assert armed, f"the run ended before its checkpoint reached iteration {iteration}"


@pytest.fixture
def interrupt_after(monkeypatch):
    """``interrupt_after(script, checkpoint_dir, iteration)``: run a script in this process and stop it at its first
    file write after that iteration's checkpoint."""
    return lambda script, checkpoint, iteration: _interrupt_after(script, checkpoint, iteration, monkeypatch)


@pytest.fixture
def same_run():
    """``same_run(a, b)``: assert two solvers made the same run (timing aside)."""
    return _same_run


@pytest.fixture
def kill_after():
    """``kill_after(script, checkpoint_dir, iteration)``: run a script, SIGKILL it after that iteration's checkpoint."""
    return _kill_after


@pytest.fixture
def forked():
    """``forked(function, *args, stdout=False)``: a :class:`Forked` child running ``function(*args)``."""
    return Forked


@pytest.fixture
def run_script():
    """``run_script(script, argv)``: what a ``python -c script *argv`` would run (for :class:`Forked`)."""
    return _run_script
