"""Pipeline PSRO (psro/variants/pipeline.py): bad input, PSRO as its degenerate cases, the pipeline's levels, the
same run on every engine, and an interrupted run resumed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import psro
from games import EmpiricalGame
from games.executors import ProcessPoolExecutor, RayExecutor
from psro import PSRO
from psro.loop.state import untimed
from psro.policies import codec
from psro.variants.pipeline import PipelineExtra, PipelinePSRO
from solvers import nash_conv

TINY_PPO = dict(oracle="ppo", oracle_options={"total_steps": 256, "num_envs": 16, "num_steps": 16, "eval_episodes": 32,
                                              "hidden": [8], "on_bad_response": "warn"},
                evaluator="monte_carlo", episodes_per_profile=64, approx_gap_every=None, progress=False)
#: Two levels, the lowest fixed once it has trained two chunks in all: at iterations 1, 2, ... (the plateau test
#: needs two chunks as the lowest level, which no level has had before)
PIPELINE = {"active_policies": 2, "max_chunks": 2, "plateau_threshold": 10.0}
ITERATIONS = 2


def _weights(policy) -> list:
    description, arrays = codec.encode_policy(policy)
    return [description, {k: np.asarray(v).tobytes() for k, v in arrays.items()}]


def _same_learned_run(a, b) -> None:
    """Histories equal but for the clocks; meta-games, bookkeeping, members and active networks equal bit for bit."""
    pd.testing.assert_frame_equal(untimed(a.history), untimed(b.history), check_exact=True)
    for name in ("count", "total", "total_sq", "exact"):
        assert np.array_equal(getattr(a.meta_game, name), getattr(b.meta_game, name))
    assert a.state.extra == b.state.extra
    for pa, pb in zip(a.populations, b.populations):
        assert [_weights(m) for m in pa.policies] == [_weights(m) for m in pb.policies]
    for p in range(a.num_players):
        assert [_weights(m) for m in a.active_policies(p)] == [_weights(m) for m in b.active_policies(p)]


@pytest.fixture(scope="module")
def straight():
    """The serial reference run: tiny PPO on Kuhn poker, two levels."""
    solver = PipelinePSRO("kuhn_poker", **TINY_PPO, seed=1, algorithm_options=PIPELINE)
    solver.run(iterations=ITERATIONS)
    return solver


@pytest.mark.parametrize("fields, match", [
    ({"algorithm_options": {"active_policies": 0}}, "algorithm_options: active_policies must be an int >= 1"),
    ({"algorithm_options": {"active_polices": 2}}, "Did you mean 'active_policies'"),
    ({"algorithm_options": {"plateau_threshold": -1}}, "algorithm_options: plateau_threshold"),
    ({"algorithm_options": {"new_active": "copy"}}, "algorithm_options: new_active"),
    ({"meta_solver": "mgcce"}, "meta_solver: PipelinePSRO needs a product"),
    ({"update_players": "cycle"}, "update_players: PipelinePSRO fixes every player.s lowest level together"),
    ({"teams": [[0], [1]]}, "teams: PipelinePSRO has no team view"),
    ({"algorithm_options": {"active_policies": 3}, "executor": {"engine": "process", "workers": 2}},
     r"algorithm_options: active_policies=3 needs at least 3 workers .* has 2"),
    ({"algorithm_options": {"active_policies": 3}, "executor": {"engine": "ray", "num_cpus": 2}},
     r"algorithm_options: active_policies=3 needs at least 3 workers .*RayExecutor\(num_cpus=2\) has 2"),
])
def test_bad_input_is_refused_naming_the_field(fields, match):
    with pytest.raises(ValueError, match=match):
        PipelinePSRO("kuhn_poker", progress=False, **fields)


def test_the_workers_rule_spares_the_serial_engine_and_enough_workers():
    assert PipelinePSRO("kuhn_poker", progress=False, algorithm_options={"active_policies": 4}).executor.workers == 1
    solver = PipelinePSRO("kuhn_poker", progress=False, algorithm_options={"active_policies": 2},
                          executor={"engine": "process", "workers": 2})
    assert solver.executor.workers == 2
    solver.close()


def test_registered_and_resumable_by_name(tmp_path):
    assert psro.algorithm_class("pipeline_psro") is PipelinePSRO is psro.PipelinePSRO
    first = PipelinePSRO("kuhn_poker", progress=False, checkpoint_dir=tmp_path,
                         algorithm_options={"active_policies": 2})
    first.run(iterations=2)
    resumed = PSRO.resume(tmp_path, progress=False)
    assert type(resumed) is PipelinePSRO and resumed.pipeline_options.active_policies == 2
    assert resumed.state.extra == first.state.extra


def test_with_an_exact_oracle_it_is_psro():
    """An exact response is final after one chunk: the lowest level is fixed every iteration and the fixed
    populations are PSRO's (hand-checked property of the module docstring)."""
    pipeline = PipelinePSRO("kuhn_poker", progress=False, algorithm_options={"active_policies": 3})
    plain = PSRO("kuhn_poker", progress=False)
    a, b = pipeline.run(iterations=4), plain.run(iterations=4)
    assert a["gap"].tolist() == b["gap"].tolist() and a["population_0"].tolist() == [1, 2, 3, 4, 5]
    for pa, pb in zip(pipeline.populations, plain.populations):
        assert np.array_equal(pa.policies, pb.policies)
    assert pipeline.pipeline.fixed_at == [0, 1, 2, 3, 4]


def test_each_level_targets_the_meta_nash_of_the_policies_below_it():
    """Level j's target: a Nash equilibrium of the meta-game over the fixed policies and the active ones of the
    levels below j (evaluated here again, exactly, from the target's own populations), nothing on level j or above."""
    solver = PipelinePSRO("kuhn_poker", progress=False, algorithm_options={"active_policies": 3})
    solver.run(iterations=2)
    k = len(solver.populations[0])
    targets = solver.targets(solver.meta_game.mean_game())
    assert [len(ts) for ts in targets] == [3, 3]
    for p in range(2):
        for j in (1, 2):
            target = targets[p][j]
            pops = target.populations
            assert [len(pop) for pop in pops] == [k + 2, k + 2]
            assert np.array_equal(pops[p].policies[k:], np.stack(solver.active_policies(p)[:2]))
            corner = EmpiricalGame((k + j, k + j))
            solver.evaluator.evaluate(pops, [range(k + j)] * 2, meta_game=corner)
            mixtures = [np.asarray(m) for m in target.mixtures]
            assert all(np.all(m[k + j:] == 0) for m in mixtures)
            assert nash_conv(corner.mean_game(), [m[:k + j] for m in mixtures]) < 1e-9


def test_one_level_one_chunk_is_learned_psro():
    """One level fixed after one chunk, started fresh: PSRO with the same learned oracle, response for response."""
    fields = dict(TINY_PPO, seed=2)
    pipeline = PipelinePSRO("kuhn_poker", **fields, algorithm_options={"active_policies": 1, "max_chunks": 1})
    plain = PSRO("kuhn_poker", **fields)
    a, b = pipeline.run(iterations=1), plain.run(iterations=1)
    pd.testing.assert_frame_equal(untimed(a), untimed(b), check_exact=True)
    for pa, pb in zip(pipeline.populations, plain.populations):
        assert [_weights(m) for m in pa.policies] == [_weights(m) for m in pb.policies]


def test_the_plateau_rule_by_hand():
    """Fixed when every player's value rose by less than plateau_threshold over its last chunk as the lowest level,
    or after max_chunks chunks in all."""
    solver = PipelinePSRO("kuhn_poker", **TINY_PPO, algorithm_options={"plateau_threshold": 0.02, "max_chunks": 4})
    solver.state.extra = book = PipelineExtra(chunks=[1, 0], lowest_values=[[0.1, 0.2]])
    assert not solver._plateaued()                                  # one value: no improvement to judge yet
    book.chunks, book.lowest_values = [2, 1], [[0.1, 0.2], [0.2, 0.21]]
    assert not solver._plateaued()                                  # player 0 still gained 0.1
    book.lowest_values = [[0.1, 0.2], [0.11, 0.21], [0.1, 0.3]]
    assert not solver._plateaued()                                  # only the last two chunks count
    book.lowest_values = [[0.1, 0.2], [0.2, 0.21], [0.19, 0.225]]
    assert solver._plateaued()                                      # -0.01 and 0.015: both below 0.02
    book.chunks, book.lowest_values = [4, 3], [[0.1, 0.2]]
    assert solver._plateaued()                                      # max_chunks


def test_levels_train_in_chunks_and_the_lowest_is_fixed(straight):
    book = straight.pipeline
    assert book.fixed_at == [1, 2] and book.chunks == [3, 1] and book.fresh == [False, False]
    history = straight.history
    assert history["population_0"].tolist() == [1, 1, 2] == history["population_1"].tolist()
    # every chunk of both levels and players is counted: 2 levels x 2 players x 256 steps per iteration
    assert np.diff(history["env_steps"]).tolist() == [4 * 256] * ITERATIONS
    # the levels above the lowest are evaluated against everyone: more episodes than the fixed meta-game's
    assert (history["eval_episodes"] > history["episodes"]).iloc[1:].all()
    # the member fixed at iteration t is the network level 0 had after its second chunk: a trained one
    assert all(type(m).__name__ == "NeuralPolicy" for m in straight.populations[0].policies[1:])


@pytest.mark.slow
def test_the_same_run_on_the_process_pool_and_on_ray(straight):
    with ProcessPoolExecutor(workers=2, start_method="fork") as pool:   # (forked: torch comes imported)
        pooled = PipelinePSRO("kuhn_poker", **TINY_PPO, seed=1, algorithm_options=PIPELINE, executor=pool)
        pooled.run(iterations=ITERATIONS)
    ray_executor = RayExecutor(num_cpus=2, worker_niceness=0,   # a local instance on the loopback address only
                               init_options={"log_to_driver": False, "include_dashboard": False,
                                             "_node_ip_address": "127.0.0.1"})
    try:
        on_ray = PipelinePSRO("kuhn_poker", **TINY_PPO, seed=1, algorithm_options=PIPELINE, executor=ray_executor)
        on_ray.run(iterations=ITERATIONS)
    finally:
        ray_executor.close()
    _same_learned_run(pooled, on_ray)
    _same_learned_run(straight, pooled)


def test_interrupted_run_resumes_to_the_uninterrupted_run(tmp_path, interrupt_after, straight):
    interrupt_after("from psro.variants.pipeline import PipelinePSRO\n"
               f"PipelinePSRO('kuhn_poker', **{TINY_PPO!r}, seed=1, algorithm_options={PIPELINE!r}, "
               f"checkpoint_dir={str(tmp_path)!r}).run(iterations=1000)\n", tmp_path, 1)
    resumed = PipelinePSRO.resume(tmp_path, progress=False)
    assert 1 <= resumed.iteration <= ITERATIONS
    resumed.run(iterations=ITERATIONS - resumed.iteration)
    _same_learned_run(straight, resumed)
