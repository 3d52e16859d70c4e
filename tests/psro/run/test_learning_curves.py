"""psro.run.learning_curves: learners you can watch (issue 35, item 4): learners.csv, the loggers, the figure."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pandas as pd
import pytest

from psro import NFSP, PSRO
from psro.errors import LearnerDiverged
from psro.run.cli import main
from psro.run.learning_curves import (
    LEARNER_COLUMNS,
    LearnerLog,
    learning_curves_figure,
    plot_learning_curves,
    read_learning_curves,
)

PPO_OPTIONS = "{total_steps: 512, num_envs: 8, num_steps: 16, eval_episodes: 40, hidden: [16]}"


def _ppo_config(tmp_path, iterations: int, loggers: str = "[tensorboard]"):
    config = tmp_path / "kuhn_ppo.yaml"
    config.write_text(f"game: kuhn_poker\niterations: {iterations}\ntarget_gap: null\nrank_population: false\n"
                      f"oracle: ppo\noracle_options: {PPO_OPTIONS}\napprox_gap_every: null\nloggers: {loggers}\n")
    return config


def test_a_ppo_run_writes_learners_csv_and_tensorboard_curves_on_environment_steps(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out = tmp_path / "run"
    assert main(["run", str(_ppo_config(tmp_path, 1)), "--out", str(out)]) == 0
    table = pd.read_csv(out / "learners.csv")
    assert table.columns.tolist() == list(LEARNER_COLUMNS)
    # iterations 0 and 1, both players: four responses of four PPO updates each, one after the other on the run's axis
    assert table.groupby(["iteration", "player"]).size().tolist() == [4, 4, 4, 4]
    assert table["env_steps"].tolist() == [128 * k for k in range(1, 17)]
    history = pd.read_csv(out / "history.csv")
    assert table["env_steps"].iloc[-1] == history["env_steps"].iloc[-1]
    last = table.groupby(["iteration", "player"]).tail(1)   # each response's last row: its value against the target
    assert last["value"].notna().all() and table.drop(last.index)["value"].isna().all()
    assert table["loss"].notna().all() and (table["entropy"] > 0).all() and (table["learner"] == "ppo").all()
    events = EventAccumulator(str(out / "tensorboard"))
    events.Reload()
    loss = events.Scalars("learner/ppo/player_1/loss")
    mine = table[table["player"] == 1]
    assert [e.step for e in loss] == mine["env_steps"].tolist()
    assert [e.value for e in loss] == pytest.approx(mine["loss"].tolist(), rel=1e-6)
    assert [e.step for e in events.Scalars("gap")] == [0, 1]   # (history rows stay on the iteration axis)
    assert "learning_curves.png" in (out / "report.md").read_text()
    (out / "learning_curves.png").unlink()
    assert main(["report", str(out)]) == 0
    assert (out / "learning_curves.png").stat().st_size > 0


@pytest.mark.slow
def test_a_resumed_run_drops_the_rows_it_trains_again_and_appends(tmp_path):
    out = tmp_path / "run"
    assert main(["run", str(_ppo_config(tmp_path, 1, "[]")), "--out", str(out)]) == 0
    first = pd.read_csv(out / "learners.csv")
    stale = first.tail(4).assign(iteration=2)   # rows of an iteration cut short before its checkpoint
    pd.concat([first, stale]).to_csv(out / "learners.csv", index=False)
    assert main(["resume", str(out), "--set", "iterations=2"]) == 0
    table = pd.read_csv(out / "learners.csv")
    assert table.groupby(["iteration", "player"]).size().tolist() == [4] * 6
    pd.testing.assert_frame_equal(table.head(len(first)), first)
    assert table["env_steps"].is_monotonic_increasing
    assert table["env_steps"].iloc[-1] == pd.read_csv(out / "history.csv")["env_steps"].iloc[-1]


def test_the_rows_of_a_learner_that_diverged_reach_the_run_before_its_error():
    solver = PSRO("leduc_poker", oracle="ppo", progress=False, exact_gap=False, approx_gap_every=None,
                  oracle_options={"learning_rate": 1e4, "anneal_lr": False, "total_steps": 2048, "num_envs": 8,
                                  "num_steps": 16, "eval_episodes": 16})
    rows = []
    solver.on_learner_rows = rows.extend
    with pytest.raises(LearnerDiverged, match="^oracle_options: learning_rate: ppo training diverged"):
        solver.run(iterations=1)
    assert rows and {row["iteration"] for row in rows} == {0} and {row["player"] for row in rows} == {0}
    assert all(math.isfinite(row["loss"]) and row["env_steps"] % 128 == 0 for row in rows)


def test_learning_curves_travel_with_responses_and_errors_as_plain_data():
    from psro.oracles.base import Target
    from psro.oracles.jobs import PolicyList, oracle_jobs, run_oracle_job
    from psro.policies import UniformPolicy

    pops = [PolicyList([UniformPolicy(2)]) for _ in range(2)]
    target = Target(player=1, populations=pops, mixtures=(np.ones(1), np.ones(1)))
    (job,) = oracle_jobs("dqn", "kuhn_poker()", [[], [target]], iteration=3, seed=0, use_tree=False,
                         options={"total_steps": 256, "num_envs": 8, "eval_episodes": 20, "learning_starts": 32,
                                  "chunk_steps": 64, "on_bad_response": "warn"})
    response = pickle.loads(pickle.dumps(run_oracle_job(job)))   # (what a worker process sends back)
    assert [row["steps"] for row in response.curve] == [64, 128, 192, 256]
    assert {row["player"] for row in response.curve} == {1} and response.curve[-1]["value"] == response.value
    error = LearnerDiverged("learning_rate: diverged")
    error.learner_curve = response.curve
    carried = pickle.loads(pickle.dumps(error)).learner_curve
    assert [(row["steps"], row["loss"]) for row in carried] == [(row["steps"], row["loss"]) for row in response.curve]


def test_nfsp_reports_both_networks_of_every_player_per_iteration():
    solver = NFSP("kuhn_poker", progress=False, algorithm_options={"steps_per_iteration": 256, "hidden": [16],
                                                                    "learning_starts": 32, "anticipatory": 0.5})
    rows = []
    solver.on_learner_rows = rows.extend
    solver.run(iterations=2)
    table = pd.DataFrame(rows, columns=LEARNER_COLUMNS)
    assert table[["iteration", "player", "learner"]].values.tolist() == [
        [t, p, name] for t in (1, 2) for p in (0, 1) for name in ("nfsp_best_response", "nfsp_average_policy")]
    assert table.groupby("iteration")["env_steps"].first().tolist() == solver.history["env_steps"].tolist()[1:]
    assert table["loss"].notna().all() and table["episode_return"].notna().all()
    average = table[table["learner"] == "nfsp_average_policy"]
    assert (average["entropy"] > 0).all() and table[table["learner"] == "nfsp_best_response"]["entropy"].isna().all()


def test_the_figure_draws_a_thin_line_per_response_and_a_run_without_learners_none(tmp_path):
    rows = [{"iteration": t, "player": p, "env_steps": 1000 * t + 100 * k, "loss": 1.0 / k, "entropy": 0.5,
             "episode_return": 0.1 * k, "value": math.nan, "learning_rate": 1e-3, "index": 0, "learner": "ppo"}
            for t in range(25) for p in range(2) for k in range(1, 5)]
    fig = learning_curves_figure(pd.DataFrame(rows))
    loss_axes, return_axes = fig.axes
    assert len(loss_axes.lines) == len(return_axes.lines) == 50
    assert {line.get_color() for line in loss_axes.lines} == {"C0", "C1"}   # a colour per player
    assert max(line.get_linewidth() for line in loss_axes.lines) < 1.0
    assert plot_learning_curves(tmp_path) is None and not (tmp_path / "learning_curves.png").exists()
    LearnerLog(tmp_path).add(rows[:8])
    assert len(read_learning_curves(tmp_path)) == 8
    assert plot_learning_curves(tmp_path).stat().st_size > 0
    with pytest.raises(ValueError, match="holds no learner rows"):
        learning_curves_figure(pd.DataFrame(columns=list(LEARNER_COLUMNS)))
