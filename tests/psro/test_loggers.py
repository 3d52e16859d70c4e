"""psro.loggers: every history row of a run to CSV and TensorBoard, chosen in the config (issue 26, item 3)."""

import pandas as pd
import pytest

from psro import loggers
from psro.config import PSROConfig
from psro.loggers import check_loggers, make_loggers
from psro.run.cli import main


def test_an_unknown_or_missing_logger_is_a_clear_error(monkeypatch):
    with pytest.raises(ValueError, match=r"loggers: unknown logger 'wandb'; choose from \['csv', 'tensorboard'\]"):
        PSROConfig(loggers=["wandb"]).validate()
    with pytest.raises(ValueError, match="must be a list of logger names"):
        check_loggers("tensorboard")
    monkeypatch.setitem(loggers.LOGGERS, "fancy", ("CSVLogger", "no_such_package_26", "fancy"))
    with pytest.raises(ValueError, match=r"'fancy' needs the no_such_package_26 package.*psro-toolkit\[fancy\]"):
        check_loggers(["fancy"])


def test_csv_logger_keeps_appending_after_a_resume(tmp_path):
    with make_loggers(["csv"], tmp_path) as log:
        log.log_row({"iteration": 0, "gap": 1.0, "note": "x"})
    with make_loggers(["csv"], tmp_path) as log:   # a resumed run appends, without a second header
        log.log_row({"iteration": 1, "gap": 0.5, "note": "y"})
    table = pd.read_csv(tmp_path / "log.csv")
    assert table["iteration"].tolist() == [0, 1] and table["gap"].tolist() == [1.0, 0.5]


def test_a_run_with_tensorboard_writes_scalars_tensorboards_reader_returns(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    config = tmp_path / "kuhn.yaml"
    config.write_text("game: kuhn_poker\niterations: 3\ntarget_gap: null\nrank_population: false\n"
                      "loggers: [tensorboard, csv]\n")
    out = tmp_path / "run"
    assert main(["run", str(config), "--out", str(out)]) == 0
    history = pd.read_csv(out / "history.csv")
    events = EventAccumulator(str(out / "tensorboard"))
    events.Reload()
    tags = events.Tags()["scalars"]
    assert {"gap", "wall_time", "population_0"} <= set(tags)
    assert "approx_gap" not in tags   # NaN on every row of an exact run: not logged
    gap = events.Scalars("gap")
    assert [e.step for e in gap] == history["iteration"].tolist() == [0, 1, 2, 3]
    assert [e.value for e in gap] == pytest.approx(history["gap"].tolist(), rel=1e-6)   # (float32 in the file)
    assert [e.value for e in events.Scalars("population_0")] == history["population_0"].tolist()
    assert pd.read_csv(out / "log.csv")["gap"].tolist() == pytest.approx(history["gap"].tolist())
