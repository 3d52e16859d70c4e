"""NFSP (Heinrich & Silver 2016): learning on Kuhn poker, options, and bit-for-bit resumption (also after SIGKILL)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from psro.config.model import PSROConfig
from psro.errors import LearnerDiverged
from psro.family.nfsp import NFSP, NFSPOptions
from psro.loop.state import HISTORY_COLUMNS
from psro.measures.metrics import nash_conv

ROOT = Path(__file__).resolve().parents[3]
# small buffers so that the replay buffer wraps around and the reservoir replaces entries within a few iterations
SMALL = {"steps_per_iteration": 400, "hidden": [16], "learning_starts": 100, "rl_buffer_size": 300,
         "sl_buffer_size": 60, "batch_size": 32, "target_update_interval": 20, "anticipatory": 0.3}



@pytest.mark.slow
def test_nashconv_of_the_average_policy_falls_on_kuhn():
    # measured: seed 0 goes from 0.861 (untrained networks) to 0.415 after 12 iterations of 1000 decisions (its
    # best, 0.380, at 10; seed 1 ends at 0.343); average networks that did not learn would stay at 0.861
    solver = NFSP("kuhn_poker", progress=False, seed=0,
                  algorithm_options={"steps_per_iteration": 1000, "hidden": [32], "learning_starts": 200,
                                     "batch_size": 64})
    history = solver.run(iterations=12)
    assert history["gap"].iloc[0] > 0.8
    assert history["gap"].iloc[-1] < 0.5
    assert history["env_steps"].iloc[-1] == 12 * 1008   # 63 steps of 16 games per iteration
    # the gap is the exact NashConv of the current average policies, tabularised
    tables = [pol.to_tabular(solver.tree, p) for p, pol in enumerate(solver.average_policies())]
    assert history["gap"].iloc[-1] == pytest.approx(nash_conv(solver.tree, tables), abs=1e-12)
    assert set(HISTORY_COLUMNS) <= set(history.columns)
    assert solver.meta_game.shape == (13, 13) and solver.meta_game.evaluated().all()
    # the output is the newest member of each population
    assert [m.tolist().index(1.0) for m in solver.meta_strategy.marginals] == [12, 12]


def test_resume_from_a_checkpoint_is_bit_for_bit(tmp_path, loop_checks):
    straight = NFSP("kuhn_poker", progress=False, seed=3, algorithm_options=SMALL)
    straight.run(iterations=4)
    first = NFSP("kuhn_poker", progress=False, seed=3, algorithm_options=SMALL, checkpoint_dir=tmp_path)
    first.run(iterations=2)
    assert first.learners[0].counters["sl_seen"] > SMALL["sl_buffer_size"]   # the reservoir has replaced entries
    assert first.learners[0].counters["rl_filled"] == SMALL["rl_buffer_size"]   # the replay buffer wrapped
    resumed = NFSP.resume(tmp_path, progress=False)
    assert resumed.iteration == 2 and [len(p) for p in resumed.populations] == [3, 3]
    resumed.run(iterations=2)
    loop_checks.same_history(straight.history, resumed.history)
    loop_checks.same_learners(straight, resumed)
    assert np.array_equal(straight.meta_game.total, resumed.meta_game.total)


def test_resume_after_sigkill_loses_nothing(tmp_path, kill_after, loop_checks):
    loop_checks.resumes_after_sigkill(NFSP, dict(SMALL, steps_per_iteration=200), tmp_path, kill_after)


def test_a_damaged_checkpoint_is_refused(tmp_path):
    NFSP("kuhn_poker", progress=False, algorithm_options=dict(SMALL, steps_per_iteration=64),
         checkpoint_dir=tmp_path).run(iterations=1)
    npz = tmp_path / json.loads((tmp_path / "checkpoint.json").read_text())["arrays"]["file"]
    data = bytearray(npz.read_bytes())
    data[len(data) // 2] ^= 1
    npz.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="damaged"):
        NFSP.resume(tmp_path)
    doc = tmp_path / "checkpoint.json"
    doc.write_bytes(doc.read_bytes().replace(b'"iteration":1', b'"iteration":2'))
    with pytest.raises(ValueError, match="SHA-256"):
        NFSP.resume(tmp_path)


def test_a_damaged_latest_checkpoint_resumes_from_the_previous_one(tmp_path, loop_checks):
    options = dict(SMALL, steps_per_iteration=200)
    NFSP("kuhn_poker", progress=False, seed=4, algorithm_options=options, checkpoint_dir=tmp_path).run(iterations=3)
    assert sorted(p.name for p in tmp_path.glob("*.json")) == ["checkpoint.json", "checkpoint.previous.json"]
    assert len(list(tmp_path.glob("nfsp-*.npz"))) == 2   # the latest's arrays and the previous one's
    doc = tmp_path / "checkpoint.json"
    doc.write_bytes(doc.read_bytes()[:-40])   # truncated
    with pytest.raises(ValueError, match=r"damaged .* previous checkpoint \(iteration 2\) is intact"):
        NFSP.resume(tmp_path)
    resumed = NFSP.resume(tmp_path, progress=False, previous=True)
    assert resumed.iteration == 2
    resumed.run(iterations=2)
    straight = NFSP("kuhn_poker", progress=False, seed=4, algorithm_options=options)
    straight.run(iterations=4)
    loop_checks.same_history(straight.history, resumed.history)
    loop_checks.same_learners(straight, resumed)


def test_options_are_validated_and_named():
    with pytest.raises(ValueError, match="no option 'eta'"):
        NFSP("kuhn_poker", algorithm_options={"eta": 0.1})
    with pytest.raises(ValueError, match="anticipatory must lie in"):
        NFSPOptions(anticipatory=1.5)
    with pytest.raises(ValueError, match="steps_per_iteration must be a positive int"):
        NFSPOptions(steps_per_iteration=0)
    with pytest.raises(ValueError, match="algorithm: this config runs 'psro'"):
        NFSP(PSROConfig(game="kuhn_poker"))


def test_config_form_and_anticipatory_extremes():
    # eta = 1: every seat always plays its best response, so every decision enters the reservoir
    config = PSROConfig(game="kuhn_poker", algorithm="nfsp", progress=False,
                        algorithm_options=dict(SMALL, anticipatory=1.0, steps_per_iteration=160,
                                               sl_buffer_size=10_000))
    solver = NFSP(config)
    solver.run(iterations=1)
    seen = sum(learner.counters["sl_seen"] for learner in solver.learners)
    assert seen == 160
    # eta = 0: never (the average policies play, and nothing is learned by the average networks)
    solver = NFSP(config.replace(algorithm_options=dict(SMALL, anticipatory=0.0, steps_per_iteration=160)))
    solver.run(iterations=1)
    assert all(learner.counters["sl_seen"] == 0 for learner in solver.learners)
    assert solver.history["gap"].iloc[0] == solver.history["gap"].iloc[1]


def test_without_a_tree_the_gap_is_nan_and_the_meta_game_sampled(caplog):
    solver = NFSP("kuhn_poker", progress=False, exact_gap=False, episodes_per_profile=50, approx_gap_every=None,
                  algorithm_options=dict(SMALL, steps_per_iteration=64))
    history = solver.run(iterations=1)
    assert solver.tree is None and history["gap"].isna().all() and history["approx_gap"].isna().all()
    assert solver.meta_game.shape == (2, 2) and (solver.meta_game.count == 50).all()
    # approx_gap_every=0: measured on the last row of the run call only
    solver = NFSP("kuhn_poker", progress=False, exact_gap=False, episodes_per_profile=20, approx_gap_every=0,
                  approx_gap_options={"total_steps": 256, "episodes": 100, "eval_episodes": 20},
                  algorithm_options=dict(SMALL, steps_per_iteration=64))
    history = solver.run(iterations=2)
    assert history["approx_gap"].iloc[:2].isna().all()
    assert np.isfinite(history["approx_gap"].iloc[2]) and history["approx_gap_stderr"].iloc[2] > 0
    # every row due, and a share that only the first measurement fits (its cost unknown before it): the rows
    # after it are skipped, the last one measured all the same
    solver = NFSP("kuhn_poker", progress=False, exact_gap=False, episodes_per_profile=20, approx_gap_every=1,
                  approx_gap_options={"total_steps": 256, "episodes": 100, "share": 1e-9},
                  algorithm_options=dict(SMALL, steps_per_iteration=64))
    with caplog.at_level("WARNING", logger="psro"):
        assert np.isfinite(solver.run(iterations=3)["approx_gap"]).tolist() == [True, False, False, True]
    # issue 57 item 4: rows asked for by number and skipped are one WARNING, with how to lift it
    warned = [r.getMessage() for r in caplog.records if "approx_gap_every=1 asks for" in r.getMessage()]
    assert len(warned) == 1 and warned[0].startswith("approx_gap: 2 of the rows approx_gap_every=1 asks for were not "
                                                     "measured") and "{share: null}" in warned[0]


def test_learners_past_the_memory_limit_are_refused_before_allocating(monkeypatch):
    # issue 23 item 5: NFSP hidden: [60000, 60000] tried to allocate 14 GB
    monkeypatch.setenv("PSRO_MAX_MEMORY", "1G")
    with pytest.raises(ValueError, match=r"NFSP's learners \(algorithm_options: hidden=\[60000, 60000\], .* needs "
                                         r"about 188 GiB, above the memory limit of 1 GiB"):
        NFSP("kuhn_poker", progress=False, algorithm_options={"hidden": [60000, 60000]})
    with pytest.raises(ValueError, match=r"sl_buffer_size=100000000; .* above the memory limit"):
        NFSP("kuhn_poker", progress=False, algorithm_options={"sl_buffer_size": 10**8})


def test_a_diverging_learner_stops_naming_its_learning_rate():
    options = dict(SMALL, steps_per_iteration=128, rl_learning_rate=1e30)
    with pytest.raises(LearnerDiverged, match=r"^rl_learning_rate: nfsp training diverged \(its best-response loss "
                                              r"became (nan|inf) after \d+ updates\); lower rl_learning_rate "
                                              r"\(now 1e\+30\)"):
        NFSP("kuhn_poker", progress=False, algorithm_options=options).run(iterations=2)


def test_hidden_that_is_not_a_list_is_named():
    # issue 36 item 14: hidden: -3 said "'int' object is not iterable"
    for hidden in (-3, 64):
        with pytest.raises(ValueError, match=r"algorithm_options: hidden must be a list of positive ints, one width "
                                             rf"per hidden layer \(e.g. \[64\]\); got {hidden}\."):
            NFSPOptions(hidden=hidden)
