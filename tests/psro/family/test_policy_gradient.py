"""PPO self-play and MMD self-play (psro.family.policy_gradient): learning on Kuhn poker, the advantages and the
trajectories by hand, the exact gap from the compiled evaluator, refusals, and bit-for-bit resumption (also
after SIGKILL)."""

from __future__ import annotations

import numpy as np
import pytest

from psro.family.policy_gradient import (
    MMDOptions,
    MMDSelfPlay,
    PPOSelfPlay,
    PPOSelfPlayOptions,
    _trajectories,
    advantages,
)
from psro.loop.algorithms import algorithm_class
from psro.measures.metrics import nash_conv

SMALL = {"num_envs": 4, "num_steps": 24, "updates_per_iteration": 2, "hidden": [16], "learning_rate": 0.01,
         "num_minibatches": 2, "update_epochs": 2}



@pytest.mark.parametrize("loop, options, start, end", [
    # measured, 12 iterations: PPO self-play 1.131 -> 0.353 (seed 0), 0.974 -> 0.278 (seed 1); MMD 1.131 -> 0.368
    # (seed 0, its best 0.244), 0.974 -> 0.372 (seed 1); policies that did not learn would stay near 1
    (PPOSelfPlay, {"num_steps": 64, "updates_per_iteration": 2, "hidden": [32], "learning_rate": 0.01}, 0.9, 0.5),
    (MMDSelfPlay, {"num_steps": 64, "updates_per_iteration": 4, "hidden": [32], "learning_rate": 0.003}, 0.9, 0.5),
])
@pytest.mark.slow
def test_the_current_policies_nashconv_falls_on_kuhn(loop, options, start, end):
    solver = loop("kuhn_poker", progress=False, seed=0, algorithm_options=options)
    history = solver.run(iterations=12)
    assert history["gap"].iloc[0] > start and history["gap"].iloc[-1] < end
    # the gap is the exact NashConv of the current (last-iterate) policies, tabularised
    tables = [pol.to_tabular(solver.tree, p) for p, pol in enumerate(solver.output_policies())]
    assert history["gap"].iloc[-1] == pytest.approx(nash_conv(solver.tree, tables), abs=1e-12)
    assert solver.meta_game.shape == (13, 13) and solver.meta_game.evaluated().all()
    assert [m.tolist().index(1.0) for m in solver.meta_strategy.marginals] == [12, 12]   # the newest members


def test_advantages_by_hand():
    # two trajectories: [0.0 -> 1.0 (last)] and [-1.0 (last)]; gamma 0.9, lambda 0.5, values 0.5, 0.25, 0
    a = advantages(np.array([0.0, 1.0, -1.0]), np.array([False, True, True]), np.array([0.5, 0.25, 0.0]), 0.9, 0.5)
    d1 = 1.0 - 0.25                       # the last decision: reward minus value, nothing bootstrapped
    d0 = 0.0 + 0.9 * 0.25 - 0.5
    assert a.tolist() == pytest.approx([d0 + 0.9 * 0.5 * d1, d1, -1.0], abs=1e-15)
    # lambda 1, gamma 1: the advantage is the return minus the value (Monte Carlo)
    m = advantages(np.array([0.0, 0.0, 2.0]), np.array([False, False, True]), np.array([0.3, -0.2, 1.0]), 1.0, 1.0)
    assert m.tolist() == pytest.approx([1.7, 2.2, 1.0], abs=1e-15)


def test_trajectories_group_a_seats_decisions_by_episode_in_play_order():
    record = {"obs": [np.arange(3, dtype=np.float32)[:, None], np.arange(3, 6, dtype=np.float32)[:, None]],
              "mask": [np.ones((3, 2), bool)] * 2, "action": [np.array([0, 1, 0]), np.array([1, 1, 0])],
              "logprob": [np.zeros(3, np.float32)] * 2,
              # (env, episode) keys of two steps of play: env 1 episode 0 decides at both steps
              "key": [np.array([[1, 0], [0, 0], [2, 0]]), np.array([[1, 0], [0, 1], [2, 0]])]}
    returns = {(0, 0): -1.0, (0, 1): 2.0, (1, 0): 1.0, (2, 0): 0.5}
    batch = _trajectories(record, returns, 1, 2)
    assert batch["obs"][:, 0].tolist() == [1, 4, 0, 3, 2, 5]   # env 0 ep 0, env 0 ep 1, env 1 ep 0 (x2), env 2
    assert batch["last"].tolist() == [True, True, False, True, False, True]
    assert batch["reward"].tolist() == [-1.0, 2.0, 0.0, 1.0, 0.0, 0.5]
    assert batch["action"].tolist() == [1, 1, 0, 1, 0, 0]


@pytest.mark.parametrize("loop", [PPOSelfPlay, MMDSelfPlay])
def test_resume_from_a_checkpoint_is_bit_for_bit(tmp_path, loop, loop_checks):
    options = dict(SMALL, magnet_coef=0.1, magnet_every=3)   # (the magnet is copied mid-run)
    straight = loop("kuhn_poker", progress=False, seed=3, algorithm_options=options)
    straight.run(iterations=4)
    first = loop("kuhn_poker", progress=False, seed=3, algorithm_options=options, checkpoint_dir=tmp_path)
    first.run(iterations=2)
    resumed = algorithm_class(loop.algorithm).resume(tmp_path, progress=False)
    assert type(resumed) is loop and resumed.iteration == 2
    resumed.run(iterations=2)
    loop_checks.same_history(straight.history, resumed.history)
    loop_checks.same_learners(straight, resumed)
    assert np.array_equal(straight.meta_game.total, resumed.meta_game.total)
    learner = straight.learners[0]
    assert learner.counters["updates"] == 8
    # the magnet was copied at update 6, and the actor moved on since
    assert any(not np.array_equal(m.detach().numpy(), a.detach().numpy())
               for m, a in zip(learner.magnet.parameters(), learner.policy.network.parameters()))


def test_resume_after_sigkill_loses_nothing(tmp_path, kill_after, loop_checks):
    loop_checks.resumes_after_sigkill(MMDSelfPlay, SMALL, tmp_path, kill_after)


def test_another_loops_checkpoint_is_refused(tmp_path):
    PPOSelfPlay("kuhn_poker", progress=False, algorithm_options=SMALL, checkpoint_dir=tmp_path).run(iterations=1)
    with pytest.raises(ValueError, match="options.algorithm is 'ppo_self_play'"):
        MMDSelfPlay.resume(tmp_path)


def test_the_compiled_evaluator_measures_the_gap_where_asked():
    # dark hex 2x2 (abrupt: OpenSpiel's information state is the compiled evaluator's) with exact_gap true: the
    # compiled evaluator, every 2 iterations and on the last row; its value equals the tree's NashConv
    game = "dark_hex(num_rows=2,num_cols=2,gameversion=adh)"
    solver = PPOSelfPlay(game, progress=False, seed=1, exact_gap=True, exact_gap_every=2, approx_gap_every=None,
                         episodes_per_profile=8, algorithm_options=dict(SMALL, num_steps=8))
    history = solver.run(iterations=3)
    assert solver.tree is None
    measured = history["gap"].notna().tolist()
    assert measured == [False, False, True, True]
    assert (history["exact_gap_time"][history["gap"].notna()] > 0).all()
    assert (history["exact_gap_time"][history["gap"].isna()] == 0).all()
    from psro.sequence_form.game_tree import build_game_tree

    tree = build_game_tree(solver.game)
    tables = [pol.to_tabular(tree, p) for p, pol in enumerate(solver.output_policies())]
    assert history["gap"].iloc[-1] == pytest.approx(nash_conv(tree, tables), rel=1e-9)


def test_options_are_validated_and_named():
    assert MMDOptions().kl_coef == 0.05 and PPOSelfPlayOptions().kl_coef == 0.0
    with pytest.raises(ValueError, match="PPOSelfPlay has no option 'eta'"):
        PPOSelfPlayOptions.from_options({"eta": 1})
    with pytest.raises(ValueError, match="clip_coef"):
        MMDOptions.from_options({"clip_coef": 0.0})
    with pytest.raises(ValueError, match="hidden"):
        MMDOptions.from_options({"hidden": [0]})
    with pytest.raises(ValueError, match="anneal_decisions"):
        MMDOptions.from_options({"anneal_decisions": -5})


def test_games_that_are_not_two_player_zero_sum_are_refused():
    with pytest.raises(ValueError, match="two-player games; .* has 3 players"):
        PPOSelfPlay("kuhn_poker(players=3)", progress=False)
    with pytest.raises(ValueError, match="zero-sum .* aims at an equilibrium only there"):
        MMDSelfPlay("tiny_bridge_2p", progress=False)


def test_annealing_takes_the_step_size_to_zero():
    solver = PPOSelfPlay("kuhn_poker", progress=False, algorithm_options=dict(SMALL, anneal_decisions=200))
    solver.run(iterations=2)   # (well past 200 decisions)
    assert solver.learners[0].optimizer.param_groups[0]["lr"] == 0.0
