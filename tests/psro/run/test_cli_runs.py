"""End-to-end runs of the ``psro`` command (``python -m psro.run.cli``) with tiny budgets."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from games import EmpiricalGame
from psro.config.model import PSROConfig
from psro.run.cli import main

ROOT = Path(__file__).resolve().parents[3]
KUHN = ROOT / "experiments" / "configs" / "kuhn_poker.yaml"


def psro(*args, timeout=120):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, "-m", "psro.run.cli", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def kuhn_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "kuhn"
    result = psro("run", KUHN, "--set", "iterations=3", "--out", out)
    return out, result


def test_run_writes_the_run_directory(kuhn_run):
    out, result = kuhn_run
    assert result.returncode == 0, result.stderr
    for name in ("config.yaml", "history.csv", "nash_conv.png", "meta_strategy.json", "meta_game.npz",
                 "population.npz", "report.md"):
        assert (out / name).is_file(), name
    history = pd.read_csv(out / "history.csv")
    assert history["iteration"].tolist() == [0, 1, 2, 3]
    assert yaml.safe_load((out / "config.yaml").read_text())["iterations"] == 3
    strategy = json.loads((out / "meta_strategy.json").read_text())
    assert [len(m) for m in strategy["marginals"]] == [4, 4]
    assert all(abs(sum(m) - 1) < 1e-9 for m in strategy["marginals"])
    meta_game = EmpiricalGame.load(out / "meta_game.npz")
    assert meta_game.shape == (4, 4) and meta_game.is_complete()
    with np.load(out / "population.npz", allow_pickle=False) as pop:
        assert pop["policies_0"].shape == (4, 6, 2)
    assert (out / "nash_conv.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_run_prints_the_table(kuhn_run):
    _, result = kuhn_run
    lines = result.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if "gap" in line and "iter" in line)
    rows = [line.split() for line in lines[header + 1: header + 5]]
    assert [int(r[0]) for r in rows] == [0, 1, 2, 3]
    assert float(rows[0][1]) == pytest.approx(11 / 12, rel=1e-3)   # uniform Kuhn NashConv
    assert [r[2] for r in rows] == ["1x1", "2x2", "3x3", "4x4"]


def test_run_ends_by_ranking_the_population(kuhn_run):
    out, result = kuhn_run
    assert "ranked by alpha-Rank" in result.stdout
    table = pd.read_csv(out / "ranking.csv")
    assert len(table) == 8 and set(table["player"]) == {"p0", "p1"}
    for _, rows in table.groupby("player"):
        assert rows["alpharank_mass"].sum() == pytest.approx(1.0, abs=1e-9)
        assert sorted(rows["alpharank_rank"]) == sorted(rows["alpharank_mass"].rank(ascending=False, method="min"))
    assert np.isfinite(table["elo"]).all()


def test_report_redraws_plots_and_summary(kuhn_run):
    out, _ = kuhn_run
    (out / "nash_conv.png").unlink()
    (out / "report.md").unlink()
    assert main(["report", str(out)]) == 0   # (in process: the run above is the command's subprocess)
    assert (out / "nash_conv.png").is_file()
    report = (out / "report.md").read_text()
    assert "kuhn_poker" in report and "iterations: 3" in report


def test_unknown_field_fails_naming_it(tmp_path, capsys):
    assert main(["run", str(KUHN), "--set", "iteration=3", "--out", str(tmp_path / "x")]) != 0
    err = capsys.readouterr().err
    assert "iteration" in err and "iterations" in err


def test_bad_values_fail_at_start(tmp_path, capsys):
    # in-process through the same entry point, to spare the interpreter start-ups
    assert main(["run", str(KUHN), "--iterations", "many", "--out", str(tmp_path / "a")]) != 0
    assert "iterations" in capsys.readouterr().err
    assert main(["run", str(KUHN), "--game", "kuhn_pokr", "--out", str(tmp_path / "b")]) != 0
    err = capsys.readouterr().err
    assert "game" in err and "kuhn_poker" in err
    assert main(["run", str(KUHN), "--meta-solver", "nahs", "--out", str(tmp_path / "c")]) != 0
    assert "meta_solver" in capsys.readouterr().err
    assert main(["run", str(tmp_path / "missing.yaml")]) != 0
    assert "missing.yaml" in capsys.readouterr().err
    assert not (tmp_path / "a").exists()   # nothing is written before the config is valid


def test_learned_oracle_steps_reach_the_oracle():
    cfg = PSROConfig(oracle="ppo", oracle_options={"total_steps": 512})
    cfg.validate()
    assert cfg.oracle_settings() == {"total_steps": 512}
    from psro import PSRO

    solver = PSRO(cfg.replace(progress=False))
    assert solver.oracle.config.total_steps == 512
    with pytest.raises(ValueError, match="^oracle_options: only the learned oracles"):
        PSROConfig(oracle="exact", oracle_options={"total_steps": 512}).validate()
    with pytest.raises(ValueError, match="^oracle_options: total_steps must be a positive int .*; got 0"):
        PSROConfig(oracle="dqn", oracle_options={"total_steps": 0}).validate()


def test_direct_option_overrides(tmp_path, capsys):
    assert main(["run", str(KUHN), "--iterations", "1", "--out", str(tmp_path / "r")]) == 0
    assert len(pd.read_csv(tmp_path / "r" / "history.csv")) == 2
    assert "done: 1 iterations" in capsys.readouterr().out


def test_config_types_and_yaml(tmp_path):
    cfg = PSROConfig.from_yaml(KUHN)
    assert cfg.name == "kuhn_poker" and cfg.target_gap == 1e-6
    path = tmp_path / "bad.yaml"
    path.write_text("game: kuhn_poker\ntarget_gap: small\n")
    with pytest.raises(ValueError, match="target_gap"):
        PSROConfig.from_yaml(path)
    assert PSROConfig().replace_from_strings(["target_gap=1e-3", "time_limit=null"]).target_gap == 1e-3
    with pytest.raises(ValueError, match="seed"):
        PSROConfig.from_dict({"seed": True})


@pytest.mark.slow
def test_jpsro_config_runs_resumes_and_reports(tmp_path, capsys):
    config = ROOT / "experiments" / "configs" / "kuhn_poker_3p_jpsro_cce.yaml"
    out = tmp_path / "jpsro"
    assert main(["run", str(config), "--iterations", "2", "--out", str(out)]) == 0
    assert (out / "checkpoint" / "checkpoint.json").is_file()
    strategy = json.loads((out / "meta_strategy.json").read_text())
    assert strategy["kind"] == "cce" and strategy["joint_shape"] == [3, 3, 3]
    assert "CCE gap" in (out / "report.md").read_text()
    # continue to 4 iterations in total, through both spellings
    assert main(["resume", str(out), "--set", "iterations=3"]) == 0
    assert main(["run", "--resume", str(out), "--iterations", "4"]) == 0
    history = pd.read_csv(out / "history.csv")
    assert history["iteration"].tolist() == [0, 1, 2, 3, 4]
    assert "resuming" in capsys.readouterr().out
    assert main(["resume", str(out), "--meta-solver", "mgce"]) == 2
    assert "cannot change" in capsys.readouterr().err
    # every option that shapes the run is fixed, not only a listed few
    assert main(["resume", str(out), "--set", "top_up_rounds=2"]) == 2
    assert "top_up_rounds: cannot change" in capsys.readouterr().err
    assert main(["resume", str(tmp_path / "nothing")]) == 2
    assert "checkpoint" in capsys.readouterr().err


def test_shipped_configs_are_valid():
    for path in sorted((ROOT / "experiments" / "configs").glob("*.yaml")):
        PSROConfig.from_yaml(path).validate()


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["nfsp", "mmd", "coffee_psro"])
def test_training_loops_with_their_own_checkpoints_resume_from_the_command_line(tmp_path, capsys, algorithm):
    # NFSP, MMD (the simultaneous loops) and offline PSRO keep checkpoints of their own format; `psro resume` finds
    # the loop in config.yaml
    options = {"steps_per_iteration": 64, "num_envs": 4, "hidden": [8]}
    if algorithm == "mmd":
        options = {"num_steps": 16, "num_envs": 4, "updates_per_iteration": 1, "hidden": [8]}
    if algorithm == "coffee_psro":
        import pyspiel

        from games.datasets import collect
        from games.trajectories import save_trajectories

        game = pyspiel.load_game("kuhn_poker")
        save_trajectories(collect(game, pyspiel.UniformRandomPolicy(game), episodes=100, seed=0),
                          tmp_path / "data.csv")
        options = {"dataset": str(tmp_path / "data.csv"), "members": 2}
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"game": "kuhn_poker", "algorithm": algorithm, "algorithm_options": options,
                                      "oracle": "exact", "iterations": 1, "target_gap": None, "seed": 3,
                                      "rank_population": False}))
    out = tmp_path / "run"
    assert main(["run", str(config), "--out", str(out)]) == 0
    assert main(["resume", str(out), "--set", "iterations=2"]) == 0
    assert "resuming" in capsys.readouterr().out
    resumed = pd.read_csv(out / "history.csv")
    assert resumed["iteration"].tolist() == [0, 1, 2]
    straight = tmp_path / "straight"
    assert main(["run", str(config), "--set", "iterations=2", "--out", str(straight)]) == 0
    timing = [c for c in resumed.columns if c.startswith(("time", "wall", "cpu"))]
    pd.testing.assert_frame_equal(resumed.drop(columns=timing), pd.read_csv(straight / "history.csv").drop(
        columns=timing))
    assert main(["resume", str(out), "--set", "seed=4"]) == 2
    assert "seed: cannot change" in capsys.readouterr().err
