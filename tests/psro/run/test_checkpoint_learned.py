"""Checkpoints of learned runs: neural members saved as plain arrays (no pickle), and a learned run killed and
resumed gives the uninterrupted run bit for bit (history, weights, meta-game)."""

import hashlib
import json
import signal
import time

import numpy as np
import pandas as pd
import pytest

from psro import PSRO
from psro.oracles.learned.networks import NeuralPolicy
from psro.policies.acting import UniformPolicy
from psro.run.checkpoint import CHECKPOINT_FILE, load_checkpoint
from psro.run.cli import main

TIMES = ["wall_time", "cpu_time", "time_meta_solve", "time_oracle", "time_evaluation", "time_metric",
         "approx_gap_time"]
TINY = dict(oracle="ppo", oracle_options={"total_steps": 512, "num_envs": 32, "num_steps": 16, "eval_episodes": 64,
                                          "hidden": [16]},
            approx_gap_options={"episodes": 50, "total_steps": 512, "share": None}, approx_gap_every=2, seed=4,
            progress=False)


class Killed(Exception):
    pass


def weights(solver) -> list:
    return [[(type(m).__name__, {k: v.tobytes() for k, v in m.to_arrays().items()} if hasattr(m, "to_arrays")
              else m.num_actions) for m in pop.policies] for pop in solver.populations]


def assert_same_learned_run(a, b):
    assert a.history.drop(columns=TIMES).equals(b.history.drop(columns=TIMES))
    assert weights(a) == weights(b)
    for pa, pb in zip(a.populations, b.populations):
        assert pa.provenance_table().equals(pb.provenance_table())
    for name in ("count", "total", "total_sq", "exact"):
        assert np.array_equal(getattr(a.meta_game, name), getattr(b.meta_game, name))


@pytest.mark.parametrize("game, options", [
    ("kuhn_poker", {"evaluator": "sequence_form"}),   # the tree is built: exact meta-game and exact gap
    ("kuhn_poker", {"evaluator": "monte_carlo", "episodes_per_profile": 200, "exact_gap": False}),   # no tree
    ("kuhn_poker", {"evaluator": "monte_carlo", "episodes_per_profile": 50, "exact_gap": False,
                    "warm_start": True}),   # each response starts from the restored latest network
])
@pytest.mark.slow
def test_learned_run_killed_after_iteration_2_resumes_bit_for_bit(tmp_path, game, options):
    reference = PSRO(game, **TINY, **options)
    reference.run(iterations=4)
    assert all(isinstance(m, NeuralPolicy) for pop in reference.populations for m in pop.policies[1:])
    assert all(isinstance(pop.policies[0], UniformPolicy) for pop in reference.populations)

    def die_after_2(row):
        if row["iteration"] == 2:
            raise Killed   # after the row of iteration 2, before its checkpoint

    first = PSRO(game, **TINY, **options, checkpoint_dir=tmp_path)
    with pytest.raises(Killed):
        first.run(iterations=4, callback=die_after_2)
    resumed = PSRO.resume(tmp_path, progress=False)
    assert resumed.iteration == 1 and isinstance(resumed.populations[0].policies[1], NeuralPolicy)
    resumed.run(iterations=3)
    assert_same_learned_run(reference, resumed)
    approx = reference.history["approx_gap"].to_numpy()
    assert np.isfinite(approx[[0, 2, 4]]).all() and np.isnan(approx[[1, 3]]).all()   # every 2, and the last row


def test_neural_members_are_stored_as_arrays_under_the_manifest(tmp_path):
    solver = PSRO("kuhn_poker", **TINY, evaluator="sequence_form", checkpoint_dir=tmp_path)
    solver.run(iterations=1)
    document = json.loads((tmp_path / CHECKPOINT_FILE).read_text())
    assert document["version"] == 3
    kinds = [[arch["kind"] for arch in player] for player in document["members"]["populations"]]
    assert kinds == [["uniform", "neural"], ["uniform", "neural"]]
    for name in document["manifest"]:
        with np.load(tmp_path / name, allow_pickle=False) as data:   # raises if anything needed pickle
            assert all(data[k].dtype != object for k in data.files)
    # a flipped byte of a weights file is caught by the manifest
    policies = sorted(name for name in document["manifest"] if name.startswith("policies-"))[-1]
    data = bytearray((tmp_path / policies).read_bytes())
    data[len(data) // 2] ^= 1
    (tmp_path / policies).write_bytes(bytes(data))
    with pytest.raises(ValueError, match="SHA-256"):
        load_checkpoint(tmp_path)


CONFIG = """game: kuhn_poker
oracle: ppo
oracle_options: {total_steps: 256, num_envs: 16, num_steps: 16, eval_episodes: 32, hidden: [16]}
evaluator: monte_carlo
episodes_per_profile: 50
exact_gap: false
approx_gap_every: null     # (the in-process tests cover it; this one is about the kill)
iterations: 3
target_gap: null
rank_population: false
seed: 1
"""


def test_sigkill_of_a_learned_psro_run_then_resume_gives_the_same_run(tmp_path, forked):
    """The learned run's one SIGKILL test: ``psro run`` killed while it trains the responses of iteration 2 (or
    writes iteration 1's checkpoint), then ``psro resume``: history, weights, provenance and meta-game equal the
    uninterrupted run's. (``psro run`` runs in a forked child of this process: a process of its own, killed as the
    command would be, without an interpreter start and torch import of its own.)"""
    config = tmp_path / "learned.yaml"
    config.write_text(CONFIG)
    killed = tmp_path / "killed"
    proc = forked(main, ["run", str(config), "--out", str(killed)], stdout=True)
    for line in proc.stdout:
        cells = line.split()
        if cells and cells[0].isdigit() and int(cells[0]) >= 1:
            break
    time.sleep(0.05)
    assert proc.kill() == -signal.SIGKILL
    assert main(["resume", str(killed)]) == 0   # (in process: the kill is what needs a process of its own)
    reference = PSRO("kuhn_poker", oracle="ppo", oracle_options={"total_steps": 256, "num_envs": 16, "num_steps": 16,
                                                                 "eval_episodes": 32, "hidden": [16]},
                     evaluator="monte_carlo", episodes_per_profile=50, exact_gap=False, approx_gap_every=None,
                     seed=1, progress=False)
    reference.run(iterations=3)
    history = pd.DataFrame(load_checkpoint(killed / "checkpoint", arrays=False)["history"])
    assert history[reference.history.columns].drop(columns=TIMES).equals(reference.history.drop(columns=TIMES))
    assert_same_learned_run(reference, PSRO.resume(killed / "checkpoint", progress=False))


def test_a_schema_2_checkpoint_still_resumes(tmp_path):
    # what the toolkit wrote before policy objects and the approximate gap: no "members", rows without the columns
    PSRO("kuhn_poker", progress=False, checkpoint_dir=tmp_path).run(iterations=2)
    document = json.loads((tmp_path / CHECKPOINT_FILE).read_text())
    document.pop("sha256")
    document.pop("members")
    document["version"] = 2
    for key in ("max_histories", "exact_gap", "approx_gap_every", "approx_gap_options", "device", "warm_start"):
        document["options"].pop(key)
    for row in document["history"]:
        for key in ("approx_gap", "approx_gap_stderr", "meta_gap"):
            row.pop(key)
    body = json.dumps(document, sort_keys=True, separators=(",", ":")).encode()   # sealed as the format says
    (tmp_path / CHECKPOINT_FILE).write_bytes(body[:-1] + b',"sha256":"' + hashlib.sha256(body).hexdigest().encode()
                                             + b'"}')
    resumed = PSRO.resume(tmp_path, progress=False)
    history = resumed.run(iterations=1)
    assert history["meta_gap"].isna().tolist() == [True, True, True, False]
    assert history["gap"].iloc[-1] == PSRO("kuhn_poker", progress=False).run(iterations=3)["gap"].iloc[-1]


def test_a_model_based_run_killed_and_resumed_is_the_uninterrupted_run(tmp_path):
    """``model_br`` members (observation tables) go through the checkpoint as arrays and resume bit for bit."""
    from psro.oracles.learned.observation_table import ObservationTablePolicy

    options = dict(oracle="model_br", oracle_options={"total_steps": 4096, "num_envs": 64, "eval_episodes": 64},
                   evaluator="monte_carlo", episodes_per_profile=50, exact_gap=False, approx_gap_every=None, seed=2,
                   progress=False)
    reference = PSRO("kuhn_poker", **options)
    reference.run(iterations=4)
    assert all(isinstance(m, ObservationTablePolicy) for pop in reference.populations for m in pop.policies[1:])

    def die_after_2(row):
        if row["iteration"] == 2:
            raise Killed

    first = PSRO("kuhn_poker", **options, checkpoint_dir=tmp_path)
    with pytest.raises(Killed):
        first.run(iterations=4, callback=die_after_2)
    document = json.loads((tmp_path / CHECKPOINT_FILE).read_text())
    assert [arch["kind"] for arch in document["members"]["populations"][0]] == ["uniform", "observation_table"]
    resumed = PSRO.resume(tmp_path, progress=False)
    assert resumed.iteration == 1
    resumed.run(iterations=3)
    assert_same_learned_run(reference, resumed)
