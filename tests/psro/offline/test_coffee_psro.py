"""Tests of psro/offline/coffee_psro.py: the loop against PSRO where the model is exact, the interval meta-game,
the penalty, the true-game gap, checkpoints and resume."""

import hashlib
import json
import math

import numpy as np
import pandas as pd
import pyspiel
import pytest

from games.datasets import collect
from psro import PSRO
from psro.loop.state import HISTORY_COLUMNS
from psro.measures.metrics import nash_conv
from psro.offline.coffee_psro import COffeEPSRO, OfflinePSRO, map_policy, resume_offline
from psro.sequence_form.game_tree import build_game_tree

TIMING = ["time_meta_solve", "time_oracle", "time_evaluation", "time_metric", "wall_time", "cpu_time",
          "approx_gap_time"]


class ExactModel:
    """A 'model' that is the true game itself (mean and every member): offline PSRO is then PSRO."""

    members = 2

    def __init__(self, name="kuhn_poker"):
        self.name = name

    def model_game(self, kind, uncertainty=0.0):
        return pyspiel.load_game(self.name)


@pytest.fixture(scope="module")
def kuhn_data():
    game = pyspiel.load_game("kuhn_poker")
    return collect(game, pyspiel.UniformRandomPolicy(game), episodes=400, seed=3)


def test_offline_psro_in_an_exact_model_is_psro():
    psro = PSRO("kuhn_poker", meta_solver="nash", progress=False).run(iterations=5)
    offline = OfflinePSRO(pd.DataFrame(), game="kuhn_poker", model=ExactModel()).run(iterations=5)
    np.testing.assert_allclose(offline["gap"], psro["gap"], atol=1e-9)
    assert list(offline.columns) == list(psro.columns)
    assert (offline["meta_gap"] < 1e-9).all()


def test_coffee_psro_in_an_exact_model_has_point_intervals_and_converges():
    solver = COffeEPSRO(pd.DataFrame(), game="kuhn_poker", model=ExactModel(), uniform_weight=0.0)
    history = solver.run(iterations=8)
    np.testing.assert_array_equal(solver.low, solver.high)
    assert history["gap"].iloc[0] == pytest.approx(11 / 12)   # the uniform policy's NashConv in Kuhn poker
    assert history["gap"].iloc[-1] < 0.1
    # the meta gap is the pessimistic regret of the output, in the (point) interval game: its ordinary regret
    from solvers.risk_averse.robust_replicator import pessimistic_regret

    assert history["meta_gap"].iloc[-1] == pytest.approx(
        pessimistic_regret(solver.low, solver.high, solver.meta_strategy.marginals), abs=1e-12)


def test_the_uniform_weight_mixes_member_zero_into_the_target():
    # alpha = 1: every target is the uniform policy, so every response is a best response to uniform play
    solver = OfflinePSRO(pd.DataFrame(), game="kuhn_poker", model=ExactModel(), uniform_weight=1.0)
    solver.run(iterations=2)
    tree = solver.trees.mean
    from psro.oracles.exact import best_response
    from psro.policies import realization_plans, uniform_policy

    uniform = [realization_plans(uniform_policy(i)[None], i)[0] for i in tree.infostates]
    for p, pop in enumerate(solver.populations):
        expected = best_response(tree, p, uniform).policy
        np.testing.assert_array_equal(pop.policies[1], expected)
        np.testing.assert_array_equal(pop.policies[2], expected)


def test_history_has_psro_columns_and_the_true_gap(kuhn_data):
    solver = COffeEPSRO(kuhn_data, game="kuhn_poker", members=3, seed=0)
    history = solver.run(iterations=3)
    assert list(history.columns) == [*HISTORY_COLUMNS[:3], "population_0", "population_1", *HISTORY_COLUMNS[3:]]
    true_tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    assert history["gap"].iloc[-1] == pytest.approx(nash_conv(true_tree, solver.true_policies()), abs=1e-12)
    assert (solver.low <= solver.payoffs + 1e-12).all() and (solver.payoffs <= solver.high + 1e-12).all()
    assert solver.meta_game.shape == (4, 4)


def test_without_the_true_game_the_gap_is_nan(kuhn_data):
    history = OfflinePSRO(kuhn_data, members=2).run(iterations=1)
    assert history["gap"].isna().all() and history["meta_gap"].notna().all()


def test_map_policy_matches_infostates_by_key():
    tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    sub = build_game_tree(pyspiel.load_game("kuhn_poker"))
    policy = np.tile([0.2, 0.8], (6, 1))
    assert map_policy(policy, tree, sub, 1) is policy


@pytest.mark.parametrize("cls", [OfflinePSRO, COffeEPSRO])
def test_resume_continues_bit_for_bit(kuhn_data, tmp_path, cls):
    whole = cls(kuhn_data, game="kuhn_poker", members=3, seed=1).run(iterations=4)
    first = cls(kuhn_data, game="kuhn_poker", members=3, seed=1, checkpoint_dir=tmp_path / "run")
    first.run(iterations=2)
    resumed = cls.resume(tmp_path / "run")
    assert resumed.iteration == 2
    history = resumed.run(iterations=2)
    pd.testing.assert_frame_equal(history.drop(columns=TIMING), whole.drop(columns=TIMING))
    copies = list((tmp_path / "run").glob("dataset-*.csv"))   # a DataFrame dataset is stored once, by its SHA-256
    digest = hashlib.sha256(copies[0].read_bytes()).hexdigest()
    assert len(copies) == 1 and copies[0].name == f"dataset-{digest[:12]}.csv"


def test_a_damaged_latest_checkpoint_resumes_from_the_previous_one(kuhn_data, tmp_path):
    whole = OfflinePSRO(kuhn_data, game="kuhn_poker", members=2, seed=2).run(iterations=3)
    OfflinePSRO(kuhn_data, game="kuhn_poker", members=2, seed=2, checkpoint_dir=tmp_path).run(iterations=2)
    assert len(list(tmp_path.glob("offline_arrays-*.npz"))) == 2   # the latest's and the previous one's
    latest = json.loads((tmp_path / "offline_checkpoint.json").read_text())
    arrays = tmp_path / latest["arrays"]["file"]
    arrays.write_bytes(arrays.read_bytes()[:-10])   # truncated
    with pytest.raises(ValueError, match=r"damaged .* previous checkpoint \(iteration 1\) is intact"):
        OfflinePSRO.resume(tmp_path)
    resumed = OfflinePSRO.resume(tmp_path, previous=True)
    assert resumed.iteration == 1
    history = resumed.run(iterations=2)
    pd.testing.assert_frame_equal(history.drop(columns=TIMING), whole.drop(columns=TIMING))


def test_resume_refuses_a_changed_dataset(kuhn_data, tmp_path):
    OfflinePSRO(kuhn_data, game="kuhn_poker", members=2, checkpoint_dir=tmp_path).run(iterations=1)
    path, = tmp_path.glob("dataset-*.csv")
    path.write_text(path.read_text().replace("\n", "\n", 1) + "\n")
    with pytest.raises(ValueError, match="SHA-256"):
        OfflinePSRO.resume(tmp_path)
    with pytest.raises(ValueError, match="offline_checkpoint.json"):
        resume_offline(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="coffee_psro"):
        (tmp_path / "x").mkdir()
        COffeEPSRO(kuhn_data, game="kuhn_poker", members=2, checkpoint_dir=tmp_path / "x").run(iterations=0)
        OfflinePSRO.resume(tmp_path / "x")


def test_resume_refuses_a_hand_edited_checkpoint(kuhn_data, tmp_path):
    OfflinePSRO(kuhn_data, game="kuhn_poker", members=2, checkpoint_dir=tmp_path).run(iterations=1)
    path = tmp_path / "offline_checkpoint.json"
    path.write_text(path.read_text().replace('"iteration":1', '"iteration":0', 1))
    with pytest.raises(ValueError, match="offline_checkpoint.json is damaged"):
        OfflinePSRO.resume(tmp_path)


def test_refuses_bad_options(kuhn_data):
    with pytest.raises(ValueError, match="uniform_weight"):
        COffeEPSRO(kuhn_data, uniform_weight=1.5)
    with pytest.raises(ValueError, match="penalty"):
        COffeEPSRO(kuhn_data, penalty=-1.0)
    with pytest.raises(TypeError, match="dataset"):
        COffeEPSRO([1, 2, 3])
    assert math.isnan(OfflinePSRO(kuhn_data, members=1).true_nash_conv())


KILLED_RUN = """
import os, signal, sys
import pyspiel
from games.datasets import collect
from psro.offline.coffee_psro import COffeEPSRO
game = pyspiel.load_game("kuhn_poker")
data = collect(game, pyspiel.UniformRandomPolicy(game), episodes=400, seed=3)
def kill_at_three(row):
    if row["iteration"] == 3:   # before iteration 3's checkpoint is written
        os.kill(os.getpid(), signal.SIGKILL)
COffeEPSRO(data, game="kuhn_poker", members=3, seed=1, checkpoint_dir=sys.argv[1]).run(4, callback=kill_at_three)
"""


def test_runs_from_a_psro_config_and_writes_a_run_directory(kuhn_data, tmp_path):
    from games.trajectories import save_trajectories
    from psro import PSROConfig
    from psro.run.run_dir import write_run

    save_trajectories(kuhn_data, tmp_path / "data.csv")
    config = PSROConfig(game="kuhn_poker", algorithm="coffee_psro", seed=2,
                        algorithm_options={"dataset": str(tmp_path / "data.csv"), "members": 2})
    solver = COffeEPSRO(config)
    history = solver.run(iterations=2)
    same = COffeEPSRO(tmp_path / "data.csv", game="kuhn_poker", members=2, seed=2).run(iterations=2)
    pd.testing.assert_frame_equal(history.drop(columns=TIMING), same.drop(columns=TIMING))
    write_run(tmp_path / "run", config, solver)
    assert (tmp_path / "run" / "meta_game.npz").exists() and (tmp_path / "run" / "population.npz").exists()
    with pytest.raises(ValueError, match="offline PSRO has no option 'lambda'"):
        COffeEPSRO(config.replace(algorithm_options={"dataset": "x.csv", "lambda": 1.0}))
    with pytest.raises(ValueError, match="dataset"):
        COffeEPSRO(config.replace(algorithm_options={"members": 2}))


def _population_arrays(path):
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


@pytest.mark.parametrize("cls", [OfflinePSRO, COffeEPSRO])
def test_a_sigkilled_run_resumes_to_the_same_population_file_and_history(kuhn_data, tmp_path, cls, forked,
                                                                         run_script):
    # issue 23 item 8: after resume the provenance's meta_solver was '' (not the loop's), so population.npz differed;
    # experiments/benchmarks/kill_resume_offline.py runs 20 such trials of each through the CLI. The killed run is a
    # forked child of this process (a process of its own, without an interpreter start of its own) that kills itself
    from psro.policies.population import save_populations

    script = KILLED_RUN.replace("COffeEPSRO", cls.__name__)
    proc = forked(run_script, script, [tmp_path / "killed"])
    proc.process.join(timeout=120)
    assert proc.kill() == -9
    resumed = resume_offline(tmp_path / "killed")   # the class is read from the checkpoint
    assert type(resumed) is cls and resumed.iteration == 2
    resumed.run(iterations=2)
    whole = cls(kuhn_data, game="kuhn_poker", members=3, seed=1)
    whole.run(iterations=4)
    pd.testing.assert_frame_equal(resumed.history.drop(columns=TIMING), whole.history.drop(columns=TIMING))
    save_populations(tmp_path / "a.npz", whole.populations)   # (what write_run writes as population.npz)
    save_populations(tmp_path / "b.npz", resumed.populations)
    a, b = _population_arrays(tmp_path / "a.npz"), _population_arrays(tmp_path / "b.npz")
    assert sorted(a) == sorted(b)
    for key in a:
        assert np.array_equal(a[key], b[key], equal_nan=a[key].dtype.kind == "f"), key
    meta_solvers = {str(x) for k, v in b.items() if "meta_solver" in k for x in np.ravel(v)}
    assert cls.meta_solver.name in meta_solvers and meta_solvers <= {"", cls.meta_solver.name}
