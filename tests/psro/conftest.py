"""Shared checks of the training loops' tests (the self-play family, the variants): two runs are the same run, and
a run killed with SIGKILL."""

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
    for pa, pb in zip(a.populations, b.populations):
        assert np.array_equal(pa.policies, pb.policies)
    for name in ("count", "total", "total_sq", "exact"):
        assert np.array_equal(getattr(a.meta_game, name), getattr(b.meta_game, name))
    assert a.state.extra == b.state.extra


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


@pytest.fixture
def same_run():
    """``same_run(a, b)``: assert two solvers made the same run (timing aside)."""
    return _same_run


@pytest.fixture
def kill_after():
    """``kill_after(script, checkpoint_dir, iteration)``: run a script, SIGKILL it after that iteration's checkpoint."""
    return _kill_after
