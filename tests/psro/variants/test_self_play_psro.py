"""Self-play PSRO: the averaged stochastic policy, roles, the monotone gap below anytime PSRO's, a learned run from
the shipped config and interrupt-and-resume."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from games import catalog
from psro import PSRO
from psro.config.model import PSROConfig
from psro.variants.anytime import AnytimePSRO
from psro.variants.least_exploitable import self_play_policy
from psro.variants.self_play_psro import SelfPlayOptions, SelfPlayPSRO

CONFIGS = Path(__file__).resolve().parents[3] / "experiments" / "configs"


def test_nu_bar_averages_best_responses_to_best_responses():
    # matching pennies from a population of "heads": beta plays tails, nu heads... the average tends to 1/2
    tree = PSRO(catalog.matching_pennies(), progress=False).tree
    heads = np.array([[1.0, 0.0, 1.0]])
    nu = self_play_policy(tree, 0, heads, heads[0], steps=400)
    np.testing.assert_allclose(nu.policy, [[0.5, 0.5]], atol=0.05)   # (0.475 after 400 rounds)
    assert nu.opponent_value == pytest.approx(abs(nu.policy[0, 0] - nu.policy[0, 1]), abs=1e-12)
    # one round: nu-bar is the best response to the opponent's best response to heads (tails): tails
    one = self_play_policy(tree, 0, heads, heads[0], steps=1)
    np.testing.assert_array_equal(one.policy, [[0.0, 1.0]])


def test_roles_and_the_gap_on_leduc():
    sp = SelfPlayPSRO("leduc_poker", algorithm_options={"self_play_steps": 20}, progress=False)
    gaps = sp.run(iterations=3)["gap"].to_numpy()
    assert sp.roles(1) == ["initial"] + ["best_response", "self_play"] * 3
    assert np.all(np.diff(gaps) <= 1e-9)
    anytime = AnytimePSRO("leduc_poker", progress=False).run(iterations=3)["gap"].to_numpy()
    assert gaps[-1] < anytime[-1]   # (1.53 against 3.90 at iteration 3)
    policies = sp.populations[0].policies
    assert not np.all(np.isin(policies[2], [0.0, 1.0]))   # nu-bar is stochastic


def test_options_refusals_and_registration():
    from psro.loop.algorithms import algorithm_class

    assert algorithm_class("self_play_psro") is SelfPlayPSRO
    assert SelfPlayOptions.from_dict(None).self_play_steps == 50
    with pytest.raises(ValueError, match="^algorithm_options: self_play_steps"):
        SelfPlayPSRO("kuhn_poker", algorithm_options={"self_play_steps": 0}, progress=False)
    with pytest.raises(ValueError, match="^meta_solver:"):
        SelfPlayPSRO("kuhn_poker", meta_solver="mgce", progress=False)
    with pytest.raises(ValueError, match="^game:"):
        SelfPlayPSRO(catalog.chicken(), progress=False)


def test_learned_run_from_the_shipped_config():
    from psro.oracles.learned.networks import NeuralPolicy

    tiny = dict(oracle_options={"total_steps": 256, "num_envs": 16, "num_steps": 16, "eval_episodes": 32,
                                "hidden": [8]},
                episodes_per_profile=32, approx_gap_every=None, iterations=2, progress=False)
    sp = SelfPlayPSRO(PSROConfig.from_yaml(CONFIGS / "leduc_self_play_psro.yaml").replace(**tiny))
    history = sp.run(iterations=2)
    assert history["population_0"].tolist() == [1, 3, 5]
    assert sp.roles(0) == ["initial", "best_response", "self_play", "best_response", "self_play"]
    assert all(isinstance(p, NeuralPolicy) for pop in sp.populations for p in pop.policies[1:])
    # the second nu continues from the first, against the opponent's newest best response
    targets = sp.targets(sp.meta_game.mean_game())
    assert targets[0][1].initial_policy is sp.populations[0].policies[4]
    np.testing.assert_array_equal(targets[0][1].mixtures[1], np.eye(5)[3])
    assert np.isfinite(history["gap"]).all() and np.all(np.diff(history["gap"].to_numpy()) <= 1e-9)


def test_interrupted_run_resumes_to_the_uninterrupted_run(tmp_path, interrupt_after, same_run):
    fields = "algorithm_options={'self_play_steps': 10}, progress=False"
    interrupt_after("from psro.variants.self_play_psro import SelfPlayPSRO\n"
               f"SelfPlayPSRO('kuhn_poker', {fields}, checkpoint_dir={str(tmp_path)!r}).run(iterations=60)\n",
               tmp_path, 3)
    resumed = SelfPlayPSRO.resume(tmp_path, progress=False)
    done = resumed.iteration
    assert done >= 3
    resumed.run(iterations=2)
    straight = SelfPlayPSRO("kuhn_poker", algorithm_options={"self_play_steps": 10}, progress=False)
    straight.run(iterations=done + 2)
    same_run(straight, resumed)
