"""Shared checks of the training loops' tests (the self-play family, the variants): two runs are the same run, and
a run interrupted in this process or killed with SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
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


def _kill_after(script: str, checkpoint: Path, iteration: int) -> None:
    """Run ``script`` in a subprocess and SIGKILL it once its checkpoint in ``checkpoint`` reached ``iteration``."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, env=env)
    try:
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None:
            path = checkpoint / "checkpoint.json"
            if path.is_file():
                try:
                    if json.loads(path.read_bytes())["iteration"] >= iteration:
                        break
                except ValueError:   # (read while being replaced: the rename is atomic, so retry)
                    pass
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL


class Interrupted(BaseException):
    """Raised in place of a file rename: the interrupted run stops there, as a killed process would."""


def _interrupt_after(script: str, checkpoint: Path, iteration: int, monkeypatch) -> None:
    """Run ``script`` in this process and interrupt it at its first file write after its checkpoint in
    ``checkpoint`` reached ``iteration``: that write's temporary file is never renamed into place.

    The in-process form of :func:`_kill_after` (no interpreter start, no second torch import). The atomic
    rename that protects a file from a kill in the middle of its write is tested with SIGKILL once per
    mechanism (``tests/psro/run/test_checkpoint_resume.py``, NFSP's and COffeE-PSRO's own tests).
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
