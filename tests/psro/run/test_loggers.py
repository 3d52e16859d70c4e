"""psro.run.loggers: every history row of a run to CSV, TensorBoard, W&B and MLflow, chosen in the config (issue 26,
item 3; issue 36, item 10), and the learning-curve rows (issue 35, item 4)."""

import pandas as pd
import pytest

from psro.config.model import PSROConfig
from psro.run import loggers
from psro.run.cli import main
from psro.run.loggers import check_loggers, make_loggers


def test_an_unknown_or_missing_logger_is_a_clear_error(monkeypatch):
    with pytest.raises(ValueError, match=r"loggers: unknown logger 'neptune'; choose from \['csv', 'mlflow', "
                                         r"'tensorboard', 'wandb'\]"):
        PSROConfig(loggers=["neptune"]).validate()
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


# -- issue 36: a logger never writes through a link -------------------------------------------------------------------


def test_the_csv_logger_refuses_a_linked_or_hard_linked_log_csv(tmp_path):
    import os

    from psro.run.loggers import CSVLogger
    from psro.run.run_files import UnsafePath

    victim = tmp_path / "bashrc"
    victim.write_text("precious\n")
    for kind, folder in (("symbolic link", tmp_path / "a"), ("hard link", tmp_path / "b")):
        folder.mkdir()
        if kind == "symbolic link":
            (folder / "log.csv").symlink_to(victim)
        else:
            os.link(victim, folder / "log.csv")
        with pytest.raises(UnsafePath, match=kind):
            CSVLogger(folder).log_row({"iteration": 0, "gap": 1.0})
    assert victim.read_text() == "precious\n"


def test_the_tensorboard_logger_refuses_a_linked_folder(tmp_path):
    pytest.importorskip("tensorboard")
    from psro.run.loggers import TensorBoardLogger
    from psro.run.run_files import UnsafePath

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run = tmp_path / "run"
    run.mkdir()
    (run / "tensorboard").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(UnsafePath, match="symbolic link"):
        TensorBoardLogger(run)
    assert list(elsewhere.iterdir()) == []


def test_missing_wandb_or_mlflow_names_its_extra(monkeypatch):
    real = loggers.importlib.util.find_spec
    monkeypatch.setattr(loggers.importlib.util, "find_spec",
                        lambda name, *a: None if name in ("wandb", "mlflow") else real(name, *a))
    for name in ("wandb", "mlflow"):
        with pytest.raises(ValueError, match=rf"'{name}' needs the {name} package.*psro-toolkit\[{name}\]'"):
            PSROConfig(loggers=[name]).validate()


@pytest.mark.slow
def test_wandb_offline_and_mlflow_record_the_history_and_the_learners(tmp_path, monkeypatch):
    import importlib.util

    pytest.importorskip("wandb")
    with_mlflow = all(importlib.util.find_spec(m) for m in ("mlflow", *loggers.MLFLOW_STORE_PACKAGES))   # (its extra)
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    for var in ("MLFLOW_TRACKING_URI", "MLFLOW_EXPERIMENT_NAME", "MLFLOW_ALLOW_FILE_STORE", "WANDB_PROJECT"):
        monkeypatch.delenv(var, raising=False)
    config = tmp_path / "kuhn_ppo.yaml"
    config.write_text("game: kuhn_poker\niterations: 1\ntarget_gap: null\nrank_population: false\noracle: ppo\n"
                      "oracle_options: {total_steps: 256, num_envs: 8, num_steps: 16, eval_episodes: 40}\n"
                      f"approx_gap_every: null\nloggers: [wandb{', mlflow' if with_mlflow else ''}]\n")
    out = tmp_path / "run"
    assert main(["run", str(config), "--out", str(out)]) == 0
    history, learners = pd.read_csv(out / "history.csv"), pd.read_csv(out / "learners.csv")
    if with_mlflow:   # MLflow: read back through its client from the SQLite store in the run directory
        from mlflow.tracking import MlflowClient

        client = MlflowClient(tracking_uri=f"sqlite:///{out}/mlflow.db")
        (run,) = client.search_runs([client.get_experiment_by_name("psro").experiment_id])
        assert run.info.run_name == "run" and run.info.status == "FINISHED"
        gap = client.get_metric_history(run.info.run_id, "gap")
        assert [(m.step, m.value) for m in gap] == list(zip(history["iteration"], history["gap"]))
        loss = client.get_metric_history(run.info.run_id, "learner/ppo/player_0/loss")
        mine = learners[learners["player"] == 0]
        assert [(m.step, m.value) for m in loss] == list(zip(mine["env_steps"], mine["loss"]))
    # W&B offline: the run's records in the run directory hold every scalar's name and the logged values
    (record,) = (out / "wandb").glob("offline-run-*/run-*.wandb")
    data = record.read_bytes()
    for name in ("gap", "wall_time", "learner/ppo/player_1/loss", "learner/ppo/player_1/episode_return",
                 "learner/env_steps"):
        assert name.encode() in data, name
    assert all(repr(float(v)).encode() in data for v in history["gap"])
    assert all(repr(float(v)).encode() in data for v in learners["loss"])


# -- issue 57 item 1: MLflow 3 refuses its file store; the logger keeps a SQLite store in the run directory -----------


def _mlflow_extra():
    """Skip where the mlflow extra (mlflow-skinny, SQLAlchemy, Alembic) is not installed."""
    for module in ("mlflow", *loggers.MLFLOW_STORE_PACKAGES):
        pytest.importorskip(module)


def _no_mlflow_environment(monkeypatch):
    for var in ("MLFLOW_TRACKING_URI", "MLFLOW_EXPERIMENT_NAME", "MLFLOW_ALLOW_FILE_STORE"):
        monkeypatch.delenv(var, raising=False)


@pytest.mark.slow
def test_a_kuhn_run_with_mlflow_reads_back_from_the_sqlite_store_in_the_run_directory(tmp_path, monkeypatch):
    _mlflow_extra()
    from mlflow.tracking import MlflowClient

    _no_mlflow_environment(monkeypatch)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)   # (MLflow's defaults are relative to the working directory: nothing goes there)
    config = tmp_path / "kuhn.yaml"
    config.write_text("game: kuhn_poker\niterations: 2\ntarget_gap: null\nrank_population: false\n"
                      "loggers: [mlflow]\n")
    out = tmp_path / "run"
    for _ in range(2):   # a second run call on the same directory (resume) adds an MLflow run to the same store
        assert main(["resume", str(out), "--iterations", "1"] if out.exists() else
                    ["run", str(config), "--out", str(out)]) == 0
    history = pd.read_csv(out / "history.csv")
    assert loggers.mlflow_tracking_uri(out) == f"sqlite:///{out}/mlflow.db"
    client = MlflowClient(tracking_uri=f"sqlite:///{out}/mlflow.db")   # (docs/reference.md: how to read a run back)
    runs = client.search_runs([client.get_experiment_by_name("psro").experiment_id], order_by=["start_time ASC"])
    assert [r.info.status for r in runs] == ["FINISHED", "FINISHED"] and {r.info.run_name for r in runs} == {"run"}
    gaps = [(m.step, m.value) for r in runs for m in client.get_metric_history(r.info.run_id, "gap")]
    assert gaps == list(zip(history["iteration"], history["gap"]))   # 0, 1, 2 then the resumed 3
    assert runs[0].info.artifact_uri.startswith((out / "mlartifacts").as_uri())   # artifacts beside the store
    assert list(elsewhere.iterdir()) == [] and not (out / "mlruns").exists()


def test_the_mlflow_store_is_never_written_through_a_link(tmp_path, monkeypatch):
    _mlflow_extra()
    from psro.run.loggers import MLflowLogger
    from psro.run.run_files import UnsafePath

    _no_mlflow_environment(monkeypatch)
    victim = tmp_path / "precious.db"
    victim.write_bytes(b"precious")
    for name in ("mlflow.db", "mlflow.db-journal"):
        run = tmp_path / name
        run.mkdir()
        (run / name).symlink_to(victim)
        with pytest.raises(UnsafePath, match="symbolic link"):
            MLflowLogger(run)
    assert victim.read_bytes() == b"precious"


def test_a_missing_sqlite_store_package_names_the_extra(monkeypatch):
    real = loggers.importlib.util.find_spec
    monkeypatch.setattr(loggers.importlib.util, "find_spec",
                        lambda name, *a: None if name == "alembic" else real(name, *a))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    if real("mlflow") is None:
        pytest.skip("the mlflow extra is not installed")
    with pytest.raises(ValueError, match=r"'mlflow' keeps its runs in a SQLite store .* needs alembic, not "
                                         r"installed; install the extra: pip install 'psro-toolkit\[mlflow\]'"):
        check_loggers(["mlflow"])
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://localhost:5000")   # a store of the user's own
    assert check_loggers(["mlflow"]) == ["mlflow"]


@pytest.mark.parametrize("extra", ["tensorboard", "wandb", "mlflow"])
def test_each_logger_extra_pins_a_tested_range_holding_the_installed_version(extra):
    import configparser
    import importlib.metadata
    from pathlib import Path

    from packaging.requirements import Requirement

    parser = configparser.ConfigParser()
    parser.read(Path(__file__).parents[3] / "setup.cfg")
    requirements = [Requirement(line) for line in parser["options.extras_require"][extra].split("\n") if line]
    assert requirements
    for requirement in requirements:
        operators = {spec.operator for spec in requirement.specifier}
        assert ">=" in operators and "<" in operators, f"{extra}: {requirement} needs a lower and an upper bound"
        try:
            installed = importlib.metadata.version(requirement.name)
        except importlib.metadata.PackageNotFoundError:
            continue   # (the extra is not installed here: nothing to check)
        assert requirement.specifier.contains(installed, prereleases=True), \
            f"{requirement.name} {installed} is installed, outside the range setup.cfg's {extra} extra was tested in"
