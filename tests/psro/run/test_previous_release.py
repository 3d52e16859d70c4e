"""A run directory of the previous release resumes in this one with the history that this release's own run directory
resumes to, and with the gaps of an uninterrupted run (issue 56, item 2: old spellings still read). Second tier (its
four runs take 20 s): the first tier reads the old spellings in configs and resumes this release's run directories.
The fixture ``data/kuhn_ppo_d98b27e`` is a learned Kuhn run of two iterations written by ``psro run`` at commit
d98b27e, whose ``config.yaml`` gives the oracle's budget as the field ``oracle_steps`` (now
``oracle_options.total_steps``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from psro.loop.state import untimed
from psro.run.cli import main

FIXTURE = Path(__file__).parent / "data" / "kuhn_ppo_d98b27e"


@pytest.mark.slow
def test_a_previous_release_run_directory_resumes_to_the_uninterrupted_run(tmp_path, capsys):
    old = yaml.safe_load((FIXTURE / "config.yaml").read_text())
    assert old["oracle_steps"] == 256 and "total_steps" not in old["oracle_options"]   # (the old spelling)
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    with pytest.warns(DeprecationWarning, match="oracle_steps is deprecated"):
        assert main(["resume", str(run), "--set", "iterations=3"]) == 0
    assert "resuming" in capsys.readouterr().out
    resumed = pd.read_csv(run / "history.csv")
    assert resumed["iteration"].tolist() == [0, 1, 2, 3]

    current = {key: value for key, value in old.items() if key != "oracle_steps"}
    current["oracle_options"] = {**old["oracle_options"], "total_steps": 256}
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({key: current[key] for key in ("game", "oracle", "oracle_options", "seed",
                                                                      "target_gap", "rank_population")}))
    current_run = tmp_path / "current"
    assert main(["run", str(config), "--set", "iterations=2", "--out", str(current_run)]) == 0
    assert main(["resume", str(current_run), "--set", "iterations=3"]) == 0
    # (the fixture's first rows were trained on the machine that wrote it: torch's float results differ in their last
    # bits from one CPU to another, 5e-8 relative measured between two of this project's machines, so the rows are
    # compared to 1e-6; on one machine a resumed run equals the uninterrupted one bit for bit, as the resume tests of
    # tests/psro/run check)
    pd.testing.assert_frame_equal(untimed(resumed), untimed(pd.read_csv(current_run / "history.csv")), rtol=1e-6)
    # the finished run measured approx_gap on its last row (iteration 1 of 2), so its evaluation counts differ from
    # an uninterrupted run's; the training does not
    straight = tmp_path / "straight"
    assert main(["run", str(config), "--set", "iterations=3", "--out", str(straight)]) == 0
    np.testing.assert_allclose(resumed["gap"], pd.read_csv(straight / "history.csv")["gap"], rtol=1e-6)
