"""psro/oracles/learned/training.py: the learner's health. Options that cannot work are refused at construction,
a diverging run stops with an error naming learning_rate, a dead network is noticed."""

from __future__ import annotations

import math

import numpy as np
import pyspiel
import pytest
import torch

from psro.errors import LearnerDiverged
from psro.oracles.learned.dqn import DQNConfig, train_dqn
from psro.oracles.learned.env import OpponentMixture
from psro.oracles.learned.oracle import make_learned_oracle
from psro.oracles.learned.ppo import PPOConfig, train_ppo
from psro.oracles.learned.training import SCORE_LIMIT, check_finite
from psro.policies.acting import UniformPolicy

KUHN, LEDUC = pyspiel.load_game("kuhn_poker"), pyspiel.load_game("leduc_poker")


@pytest.mark.parametrize("field, value, message", [
    ("learning_rate", math.inf, "learning_rate must be finite"),
    ("learning_rate", math.nan, "learning_rate must be a number, not NaN"),
    ("learning_rate", 0.0, "learning_rate must be a number > 0"),
    ("learning_rate", -1e-3, "learning_rate must be a number > 0"),
    ("clip_coef", -1.0, "clip_coef must be a number > 0"),
    ("clip_coef", 0.0, "clip_coef must be a number > 0"),
    ("max_grad_norm", 0.0, "max_grad_norm must be a number > 0"),
    ("max_grad_norm", math.inf, "max_grad_norm must be finite"),
    ("ent_coef", 1e12, r"ent_coef must be a number in \[0, 100\]"),
    ("ent_coef", -0.1, r"ent_coef must be a number in \[0, 100\]"),
    ("vf_coef", math.nan, "vf_coef must be a number, not NaN"),
    ("gae_lambda", 1.5, r"gae_lambda must be a number in \[0, 1\]"),
    ("hidden", (0,), r"hidden must be a list of positive ints \(the hidden layer widths\); got \[0\]"),
    ("hidden", (64, -1), "hidden must be a list of positive ints"),
])
def test_ppo_options_that_cannot_work_are_refused(field, value, message):
    with pytest.raises(ValueError, match=message):
        PPOConfig(**{field: value})


@pytest.mark.parametrize("field, value, message", [
    ("learning_rate", math.inf, "learning_rate must be finite"),
    ("gamma", math.nan, "gamma must be a number, not NaN"),
    ("end_epsilon", math.inf, "end_epsilon must be finite"),
    ("exploration_fraction", 0.0, r"exploration_fraction must lie in \(0, 1\]"),
    ("hidden", [0], "hidden must be a list of positive ints"),
    ("learning_starts", -1, "learning_starts must be an int >= 0"),
])
def test_dqn_options_that_cannot_work_are_refused(field, value, message):
    with pytest.raises(ValueError, match=message):
        DQNConfig(**{field: value})


def test_a_list_of_widths_is_kept_as_a_tuple_and_the_oracle_names_the_option():
    assert PPOConfig(hidden=[8, 4]).hidden == (8, 4)
    with pytest.raises(TypeError, match="learning_rate must be a real number"):
        make_learned_oracle("ppo", None, game="kuhn_poker", learning_rate="fast")
    with pytest.raises(ValueError, match="on_bad_response must be one of"):
        make_learned_oracle("dqn", None, game="kuhn_poker", on_bad_response="ignore")


def test_check_finite_names_learning_rate_and_the_options_that_steady_the_learner():
    config = PPOConfig(learning_rate=1e4)
    check_finite(torch.tensor([1.0, -2.0]), "loss", config, "ppo", 10)
    with pytest.raises(ValueError, match=r"^learning_rate: ppo training diverged \(its loss became nan after 10 "
                                         r"learner steps\); lower learning_rate \(now 10000.0\), or lower "
                                         r"max_grad_norm \(now 0.5\)"):
        check_finite(torch.tensor([1.0, math.nan]), "loss", config, "ppo", 10)
    with pytest.raises(ValueError, match=r"became -3e\+09, beyond 1e\+08"):   # finite, but past the action mask
        check_finite(np.array([-3e9]), "scores", config, "ppo", 10, SCORE_LIMIT)


def test_ppo_at_a_huge_learning_rate_stops_with_an_error_naming_it():
    # (before: "actions[1] = 2 is not legal in env 1", or torch's "Categorical ... invalid values nan")
    config = PPOConfig(learning_rate=1e4, total_steps=2048, num_envs=8, eval_episodes=16, seed=0)
    with pytest.raises(ValueError, match="^learning_rate: ppo training diverged"):
        train_ppo(LEDUC, 0, OpponentMixture.single([None, UniformPolicy(3)]), config)


def test_dqn_at_learning_rate_1e2_kills_its_network_and_says_so():
    uniform = OpponentMixture.single([None, UniformPolicy(2)])
    small = dict(total_steps=1024, eval_episodes=64, num_envs=8, learning_starts=64, hidden=(16,), seed=0)
    dead = train_dqn(KUHN, 0, uniform, DQNConfig(learning_rate=1e2, **small))
    healthy = train_dqn(KUHN, 0, uniform, DQNConfig(**small))
    assert not dead.responsive and healthy.responsive
    # the uniform policy played beside the response, as many episodes, in the same seat
    assert healthy.baseline.episodes == healthy.evaluation.episodes == 64
    assert abs(healthy.baseline.mean - (-0.125)) < 4 * healthy.baseline.stderr   # uniform vs uniform: -1/8


def test_ppo_and_dqn_report_one_curve_row_per_chunk():
    uniform = OpponentMixture.single([None, UniformPolicy(2)])
    ppo = train_ppo(KUHN, 0, uniform, PPOConfig(total_steps=512, num_envs=8, num_steps=16, eval_episodes=32, seed=0))
    assert [row["steps"] for row in ppo.curve] == [128, 256, 384, 512]   # one row per PPO update
    assert [row["learning_rate"] for row in ppo.curve] == pytest.approx([1e-2, 7.5e-3, 5e-3, 2.5e-3])   # annealed
    assert all(math.isfinite(row["loss"]) and 0.0 < row["entropy"] <= math.log(2) for row in ppo.curve)
    assert all(-2.0 <= row["episode_return"] <= 2.0 for row in ppo.curve)
    assert [math.isnan(row["value"]) for row in ppo.curve] == [True, True, True, False]
    assert ppo.curve[-1]["value"] == ppo.evaluation.mean
    dqn = train_dqn(KUHN, 0, uniform, DQNConfig(total_steps=800, num_envs=16, learning_starts=64, eval_episodes=32,
                                                chunk_steps=200, hidden=(16,), seed=0))
    assert [row["steps"] for row in dqn.curve] == [208, 416, 624, 800]   # 13 steps of all 16 games per row
    assert all(math.isfinite(row["loss"]) and math.isnan(row["entropy"]) for row in dqn.curve)
    with pytest.raises(ValueError, match="chunk_steps must be a positive int"):
        DQNConfig(chunk_steps=0)


def test_a_diverged_learner_leaves_with_its_curve_so_far():
    config = PPOConfig(learning_rate=1e4, total_steps=2048, num_envs=8, num_steps=16, eval_episodes=16, seed=0,
                       anneal_lr=False)
    with pytest.raises(LearnerDiverged, match="^learning_rate: ppo training diverged") as caught:
        train_ppo(LEDUC, 0, OpponentMixture.single([None, UniformPolicy(3)]), config)
    curve = caught.value.learner_curve
    assert [row["steps"] for row in curve] == [128] and math.isfinite(curve[0]["loss"])
