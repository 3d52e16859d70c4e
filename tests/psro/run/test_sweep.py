"""psro.run.sweep and ``psro sweep``: cells over seeds and a grid, an index table, re-runs that skip finished cells
and resume interrupted ones from their checkpoints (issue 26, item 1)."""

import json

import pandas as pd
import pytest

from psro import PSRO
from psro.config.model import PSROConfig
from psro.run.cli import main
from psro.run.sweep import parse_grid, parse_seeds, plan_sweep, read_index, run_sweep

BASE = PSROConfig(game="kuhn_poker", iterations=3, target_gap=None, rank_population=False, progress=False)


@pytest.mark.parametrize("text, seeds", [("0-4", [0, 1, 2, 3, 4]), ("3", [3]), ("5,1,1", [1, 5]),
                                         ("0-1,7", [0, 1, 7]), (2, [2]), ([3, 0], [0, 3])])
def test_seed_lists_parse(text, seeds):
    assert parse_seeds(text) == seeds


@pytest.mark.parametrize("text", ["0..4", "a-b", "4-0", "", "-1", "1.5", None, True])
def test_a_seed_list_that_does_not_parse_is_a_clear_error(text):
    with pytest.raises(ValueError, match="seeds: "):
        parse_seeds(text)


def test_a_grid_key_that_is_not_a_field_suggests_the_closest():
    with pytest.raises(ValueError, match=r"grid: 'algoritm' is not a config field\. Did you mean 'algorithm'\?"):
        parse_grid(["algoritm=psro,nfsp"])
    with pytest.raises(ValueError, match="--seeds"):
        parse_grid(["seed=0,1"])
    with pytest.raises(ValueError, match="must look like field=value1,value2"):
        parse_grid(["meta_solver"])


def test_plan_is_the_product_of_the_grid_and_the_seeds_and_checks_every_cell():
    cells = plan_sweep(BASE, "0-2", ["meta_solver=nash,uniform", "update_players=all,cycle"])
    assert len(cells) == 2 * 2 * 3
    assert len({cell.name for cell in cells}) == 12
    assert {(c.config.meta_solver, c.config.update_players, c.config.seed) for c in cells} == \
        {(m, u, s) for m in ("nash", "uniform") for u in ("all", "cycle") for s in range(3)}
    with pytest.raises(ValueError, match=r"^meta_solver: ") as refused:
        plan_sweep(BASE, 0, ["meta_solver=nash,nashh"])
    assert refused.value.__notes__ == ["in the sweep's cell meta_solver=nashh,seed=0"]


def test_sweep_writes_a_run_directory_per_cell_and_an_index(tmp_path):
    result = run_sweep(BASE, tmp_path, seeds="0-1", grid={"meta_solver": ["nash", "uniform"]})
    index = read_index(tmp_path)
    assert list(index["status"]) == ["finished"] * 4
    assert list(index["iterations"]) == [3] * 4
    for _, row in index.iterrows():
        history = pd.read_csv(tmp_path / row["run_dir"] / "history.csv")
        assert history["iteration"].tolist() == [0, 1, 2, 3]
        assert history["gap"].iloc[-1] == pytest.approx(row["gap"])
        assert PSROConfig.from_yaml(tmp_path / row["run_dir"] / "config.yaml").seed == row["seed"]
    # the same run directly gives the same gaps (the seed and the grid reach the cell)
    direct = PSRO(BASE.replace(meta_solver="uniform", seed=1)).run(iterations=3)
    cell = pd.read_csv(tmp_path / "meta_solver=uniform,seed=1" / "history.csv")
    assert cell["gap"].tolist() == pytest.approx(direct["gap"].tolist())
    assert result.index.equals(index) or len(result.index) == len(index)


def test_rerun_skips_finished_cells_and_resumes_interrupted_ones(tmp_path):
    grid = {"meta_solver": ["nash", "uniform"]}
    run_sweep(BASE, tmp_path, seeds=0, grid=grid)
    finished = tmp_path / "meta_solver=nash,seed=0"
    stamp = (finished / "cell.json").stat().st_mtime_ns, (finished / "history.csv").read_text()
    # interrupt the other cell: keep a checkpoint after one iteration, remove what a finished cell leaves
    interrupted = tmp_path / "meta_solver=uniform,seed=0"
    for name in ("cell.json", "history.csv"):
        (interrupted / name).unlink()
    cfg = BASE.replace(meta_solver="uniform", seed=0)
    solver = PSRO(cfg, checkpoint_dir=interrupted / "checkpoint")
    solver.run_config = cfg.to_dict()
    partial = solver.run(iterations=1)
    assert read_index(tmp_path)["status"].tolist() == ["finished", "finished"]   # (the index is stale until re-run)
    index = run_sweep(BASE, tmp_path, seeds=0, grid=grid).index
    assert index["status"].tolist() == ["finished", "finished"]
    assert index["resumed_at"].fillna(-1).tolist() == [-1, 1]   # the finished cell untouched, the other at 1
    assert ((finished / "cell.json").stat().st_mtime_ns, (finished / "history.csv").read_text()) == stamp
    resumed = pd.read_csv(interrupted / "history.csv")
    assert resumed["iteration"].tolist() == [0, 1, 2, 3]
    # the first two rows are the interrupted run's own (a restart would measure new wall times)
    assert resumed["wall_time"].iloc[:2].tolist() == pytest.approx(partial["wall_time"].tolist(), rel=1e-12)


def test_a_damaged_cell_starts_again_and_a_failed_cell_is_recorded(tmp_path):
    grid = {"meta_solver": ["nash"]}
    cell = tmp_path / "meta_solver=nash,seed=0" / "checkpoint"
    cell.mkdir(parents=True)
    (cell / "checkpoint.json").write_text("{not json")
    index = run_sweep(BASE, tmp_path, seeds=0, grid=grid).index
    assert index["status"].tolist() == ["finished"] and index["iterations"].tolist() == [3]
    bad = BASE.replace(oracle="ppo", oracle_options={"total_steps": 1})   # (refused by the learned oracle)
    index = run_sweep(bad, tmp_path / "bad", seeds=0).index
    assert index["status"].tolist() == ["failed"]
    assert "total_steps" in index["error"].iloc[0]
    assert json.loads((tmp_path / "bad" / "seed=0" / "cell.json").read_text())["status"] == "failed"


def test_a_sweep_directory_of_another_config_is_refused(tmp_path):
    run_sweep(BASE, tmp_path, seeds=0)
    with pytest.raises(ValueError, match="iterations differ"):
        run_sweep(BASE.replace(iterations=4), tmp_path, seeds=0)


@pytest.mark.slow
def test_psro_sweep_on_a_process_pool(tmp_path, capsys):
    config = tmp_path / "kuhn.yaml"
    config.write_text("game: kuhn_poker\niterations: 2\ntarget_gap: null\nrank_population: false\n")
    out = tmp_path / "sweep"
    assert main(["sweep", str(config), "--seeds", "0-1", "--grid", "meta_solver=nash,uniform", "--set",
                 "iterations=3", "--out", str(out), "--executor", "2"]) == 0
    index = pd.read_csv(out / "index.csv")
    assert index["status"].tolist() == ["finished"] * 4 and index["iterations"].tolist() == [3] * 4
    assert "wrote" in capsys.readouterr().out
    assert main(["sweep", str(config), "--seeds", "0-x", "--out", str(out)]) == 2
    assert "seeds: '0-x' is not a seed list" in capsys.readouterr().err
    assert main(["sweep", str(config), "--grid", "meta_solvr=nash", "--out", str(out)]) == 2
    assert "Did you mean 'meta_solver'?" in capsys.readouterr().err


@pytest.mark.slow
def test_a_sweep_through_submitits_local_executor_resumes_an_interrupted_cell(tmp_path):
    cfg = BASE.replace(meta_solver="uniform", seed=0)
    interrupted = tmp_path / "meta_solver=uniform,seed=0"
    solver = PSRO(cfg, checkpoint_dir=interrupted / "checkpoint")
    solver.run_config = cfg.to_dict()
    partial = solver.run(iterations=1)
    index = run_sweep(BASE, tmp_path, seeds=0, grid={"meta_solver": ["uniform"]}, executor="submitit:local").index
    assert index["status"].tolist() == ["finished"] and index["iterations"].tolist() == [3]
    assert index["resumed_at"].tolist() == [1]
    assert (tmp_path / "submitit").is_dir()   # the job's logs
    cell = pd.read_csv(interrupted / "history.csv")
    assert cell["wall_time"].iloc[:2].tolist() == pytest.approx(partial["wall_time"].tolist(), rel=1e-12)
    direct = PSRO(cfg).run(iterations=3)
    assert cell["gap"].tolist() == pytest.approx(direct["gap"].tolist())
    with pytest.raises(ValueError, match="submitit's cluster must be local, slurm or debug"):
        run_sweep(BASE, tmp_path / "other", seeds=0, executor="submitit:lsf")


def test_cells_log_every_row_once_across_a_resume(tmp_path):
    config = BASE.replace(loggers=["csv"])
    run_sweep(config.replace(iterations=1), tmp_path / "a", seeds=0)
    cell = tmp_path / "a" / "seed=0"
    (cell / "cell.json").unlink()   # as if interrupted after iteration 1: the longer sweep resumes it there
    assert run_sweep(config, tmp_path / "a", seeds=0).index["resumed_at"].tolist() == [1]
    assert pd.read_csv(cell / "log.csv")["iteration"].tolist() == [0, 1, 2, 3]


# -- issue 36: links, the lock, a line per cell -----------------------------------------------------------------------

ONE = BASE.replace(iterations=1)


def test_a_linked_sweep_yaml_is_refused_and_its_target_kept(tmp_path):
    from psro.run.run_files import UnsafePath

    victim = tmp_path / "victim"
    victim.write_text("precious")
    out = tmp_path / "S"
    out.mkdir()
    (out / "sweep.yaml").symlink_to(victim)
    with pytest.raises(UnsafePath, match="symbolic link"):
        run_sweep(ONE, out)
    assert victim.read_text() == "precious" and sorted(p.name for p in out.iterdir()) == [".psro.lock", "sweep.yaml"]


def test_a_linked_cell_is_refused_and_nothing_written_into_its_target(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "S"
    out.mkdir()
    (out / "seed=0").symlink_to(elsewhere, target_is_directory=True)
    result = run_sweep(ONE, out, seeds="0-1")
    rows = result.index.set_index("cell")
    assert rows.loc["seed=0", "status"] == "failed" and "symbolic link" in rows.loc["seed=0", "error"]
    assert rows.loc["seed=1", "status"] == "finished"
    assert list(elsewhere.iterdir()) == []


def test_a_second_sweep_over_one_folder_is_refused_naming_the_lock(tmp_path):
    from psro.run.run_files import RunDirLocked, run_lock

    out = tmp_path / "S"
    out.mkdir()
    with run_lock(out, what="sweep directory"):
        with pytest.raises(RunDirLocked, match="sweep directory .* is being written by process"):
            run_sweep(ONE, out)


def test_a_cell_being_written_by_another_process_is_refused_not_clobbered(tmp_path):
    from psro.run.run_files import run_lock
    from psro.run.sweep import run_cell

    cell = tmp_path / "S" / "seed=0"
    cell.mkdir(parents=True)
    with run_lock(cell):
        record = run_cell((str(cell), ONE.to_dict(), {"seed": 0}))
    assert record["status"] == "failed" and "is being written by process" in record["error"]
    assert sorted(p.name for p in cell.iterdir()) == [".psro.lock"]   # (no cell.json, no run files)


def test_each_cell_logs_a_line_as_it_starts_and_ends(tmp_path, caplog):
    with caplog.at_level("INFO", logger="psro.run.sweep"):
        run_sweep(ONE, tmp_path / "S", seeds="0-1")
    lines = [r.getMessage() for r in caplog.records if r.name == "psro.run.sweep"]
    for cell in ("seed=0", "seed=1"):
        assert f"cell {cell}: started" in lines
        assert any(line.startswith(f"cell {cell}: finished in") for line in lines)


def test_psro_sweep_shows_the_cell_lines_without_verbose(tmp_path, caplog):
    import logging

    sweep_logger = logging.getLogger("psro.run.sweep")
    level = sweep_logger.level
    config = tmp_path / "c.yaml"
    config.write_text("game: kuhn_poker\niterations: 1\nrank_population: false\n")
    try:
        assert main(["sweep", str(config), "--seeds", "0-1", "--out", str(tmp_path / "S")]) == 0   # (no -v)
    finally:
        sweep_logger.setLevel(level)
    lines = [r.getMessage() for r in caplog.records if r.name == "psro.run.sweep"]
    assert "cell seed=0: started" in lines and any(line.startswith("cell seed=1: finished in") for line in lines)
