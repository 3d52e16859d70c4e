"""Rectified PSRO (psro.variants.rectified): the rectified mixtures by hand, runs on rock-paper-scissors and Kuhn
poker (where it stalls away from Nash), the refusals, a learned run from its config on Leduc, and a run killed with
interrupted and resumed bit for bit."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import psro
from games import catalog
from games.normal_form import NormalFormGame
from psro import PSRO
from psro.variants.rectified import RectifiedOptions, RectifiedPSRO, rectified_mixtures

CONFIGS = Path(__file__).resolve().parents[3] / "experiments" / "configs"
TINY_PPO = dict(oracle="ppo", oracle_options={"total_steps": 128, "num_envs": 8, "num_steps": 16, "eval_episodes": 16,
                                              "hidden": [8]},
                evaluator="monte_carlo", episodes_per_profile=16, approx_gap_every=None)


def test_rectified_mixtures_by_hand():
    # margins of a 3 x 3 game: member 0 beats opponents 0 and 2, ties 1; member 1 beats nobody; member 2 is
    # outside the support
    margin = np.array([[1.0, 0.0, 2.0], [-1.0, -0.5, -3.0], [5.0, 5.0, 5.0]])
    out = rectified_mixtures(margin, np.array([0.5, 0.5, 0.0]), np.array([0.2, 0.3, 0.5]))
    assert list(out) == [0]
    assert np.allclose(out[0], [0.2, 0.3, 0.5], rtol=0, atol=1e-15)
    # ... with a tolerance of 0.5 member 1 ties opponent 1, so it trains against it alone
    out = rectified_mixtures(margin, np.array([0.5, 0.5, 0.0]), np.array([0.2, 0.3, 0.5]), tolerance=0.5)
    assert out[1].tolist() == [0.0, 1.0, 0.0]
    # an opponent outside the support never gets weight, even when beaten
    assert rectified_mixtures(np.ones((1, 2)), np.ones(1), np.array([1.0, 0.0]))[0].tolist() == [1.0, 0.0]


def test_rock_paper_scissors_from_rock_by_hand():
    rect = RectifiedPSRO(catalog.rock_paper_scissors(), initial_policies=[[0], [0]], progress=False)
    history = rect.run(iterations=3)
    # {R}: R ties R -> the best response to R, paper; {R, P}: Nash is P, which ties P -> scissors; {R, P, S}: Nash
    # uniform, each member trains against the half it beats or ties (R: R and S) -> its best response is already in
    assert history["population_0"].tolist() == [1, 2, 3, 3]
    assert np.allclose(history["gap"], [2.0, 2.0, 0.0, 0.0], rtol=0, atol=1e-12)
    assert rect.state.extra.rectified == [[[0], [0]], [[1], [1]], [[0, 1, 2], [0, 1, 2]], [[0, 1, 2], [0, 1, 2]]]
    targets = rect.targets(rect.meta_game.mean_game())
    rock = targets[0][0]   # rock (member 0) trains against rock and scissors (members 0 and 2) at 1/2 each
    assert np.allclose(rock.mixtures[1], [0.5, 0.0, 0.5], atol=1e-9) and rock.mixtures[0].tolist() == [1, 0, 0]
    assert rock.on_policy_value == pytest.approx(0.5, abs=1e-9)   # R vs (R + S) / 2
    assert np.array_equal(rock.initial_policy, rect.populations[0].policies[0])   # (an exact oracle ignores it)


def test_baselines_in_a_constant_sum_game():
    # u_0 + u_1 = 1, not symmetric: row 0 and column 0 dominate, Nash (0, 0), values v_0 = 0.7, v_1 = 0.3.
    # "even" (a payoff at least c / 2 = 0.5): row 0 beats column 0 (0.7), column 0 beats nobody (0.3) -> no update;
    # "value" (a payoff at least v_p): both tie their Nash opponent, so both train against it
    u0 = np.array([[0.7, 0.9], [0.6, 0.8]])
    game = NormalFormGame(np.stack([u0, 1.0 - u0]))
    for baseline, expected in (("even", [[0], []]), ("value", [[0], [0]])):
        rect = RectifiedPSRO(game, initial_policies=[[0, 1], [0, 1]], algorithm_options={"baseline": baseline},
                             progress=False)
        rect.run(iterations=0)
        assert [m.round(9).tolist() for m in rect.state.meta_strategy.marginals] == [[1.0, 0.0], [1.0, 0.0]]
        assert rect.state.extra.rectified == [expected]
        targets = rect.targets(rect.meta_game.mean_game())
        assert [len(ts) for ts in targets] == [len(e) for e in expected]
        assert targets[0][0].mixtures[1].tolist() == [1.0, 0.0]
        assert targets[0][0].on_policy_value == pytest.approx(0.7, abs=1e-12)


def test_kuhn_stalls_away_from_nash_while_psro_goes_on():
    rect = RectifiedPSRO("kuhn_poker", br_selection="novel", progress=False)
    history = rect.run(iterations=7)
    plain = PSRO("kuhn_poker", br_selection="novel", progress=False).run(iterations=7)
    # from iteration 4 no rectified response gains anything: the populations stop growing at a gap above 0.14
    assert history["population_0"].tolist()[4:] == [4, 4, 4, 4] and history["population_1"].tolist()[4:] == [7] * 4
    assert (history["gap"].iloc[4:] > 0.14).all() and history["gap"].iloc[4:].nunique() == 1
    assert plain["gap"].iloc[-1] < 0.05
    # with br_selection "all" new responses that gain nothing join too, but never one already in the population
    grown = RectifiedPSRO("kuhn_poker", progress=False).run(iterations=7)
    assert grown["population_0"].tolist()[5:] == [5, 5, 5] and grown["population_1"].tolist()[5:] == [8, 8, 8]
    assert np.allclose(grown["gap"].iloc[4:], history["gap"].iloc[4:], rtol=0, atol=1e-12)


def test_refusals_name_the_field():
    with pytest.raises(ValueError, match="meta_solver: RectifiedPSRO needs a product"):
        RectifiedPSRO("kuhn_poker", meta_solver="mgcce", progress=False)
    with pytest.raises(ValueError, match="game: RectifiedPSRO is defined for two-player zero-sum"):
        RectifiedPSRO(catalog.chicken(), progress=False)
    with pytest.raises(ValueError, match="game: RectifiedPSRO is defined for two-player games"):
        RectifiedPSRO("kuhn_poker(players=3)", progress=False)
    with pytest.raises(ValueError, match="warm_start: RectifiedPSRO warm-starts"):
        RectifiedPSRO("kuhn_poker", oracle="ppo", warm_start=True, progress=False)
    with pytest.raises(ValueError, match="baseline must be one of"):
        RectifiedOptions(baseline="zero")
    with pytest.raises(ValueError, match="RectifiedPSRO has no option 'tie_tol'"):
        RectifiedPSRO("kuhn_poker", algorithm_options={"tie_tol": 0.1}, progress=False)
    assert psro.algorithm_class("rectified_psro") is RectifiedPSRO and psro.RectifiedPSRO is RectifiedPSRO


@pytest.mark.slow
def test_learned_run_from_its_config_on_leduc(tmp_path):
    from psro.run.cli import main

    out = tmp_path / "run"
    assert main(["run", str(CONFIGS / "leduc_rectified.yaml"), "--set", "iterations=1", "--set",
                 "oracle_options={total_steps: 128, num_envs: 8, num_steps: 16, eval_episodes: 16, hidden: [8]}",
                 "--set", "episodes_per_profile=16", "--out", str(out)]) == 0
    history = pd.read_csv(out / "history.csv")
    assert history["iteration"].tolist() == [0, 1] and history["population_0"].tolist() == [1, 2]
    assert np.isfinite(history["gap"]).all() and history["gap"].iloc[-1] < history["gap"].iloc[0]
    # one PPO run of 128 steps per rectified support member: at iteration 0 the uniform policy of each player
    assert history["env_steps"].iloc[0] == 2 * 128 and history["env_steps"].iloc[-1] % 128 == 0


def test_learned_rectified_responses_start_from_their_member():
    rect = RectifiedPSRO("kuhn_poker", **TINY_PPO, seed=2, progress=False)
    rect.run(iterations=1)
    targets = rect.targets(rect.meta_game.mean_game())
    members = rect.state.extra.rectified[-1]
    for p, ts in enumerate(targets):
        for member, target in zip(members[p], ts):
            start = target.initial_policy
            assert (start is None) == (member == 0)   # the initial uniform policy is not a network
            assert start is None or start is rect.populations[p].policies[member]


def test_interrupted_run_resumes_to_the_uninterrupted_run(tmp_path, interrupt_after, same_run):
    fields = dict(TINY_PPO, seed=4, progress=False, algorithm_options={"tie_tolerance": 0.05})
    interrupt_after("from psro.variants.rectified import RectifiedPSRO\n"
               f"RectifiedPSRO('kuhn_poker', **{fields!r}, checkpoint_dir={str(tmp_path)!r}).run(iterations=100)\n",
               tmp_path, 1)
    resumed = PSRO.resume(tmp_path, progress=False)
    assert type(resumed) is RectifiedPSRO
    done = resumed.iteration
    resumed.run(iterations=1)
    straight = RectifiedPSRO("kuhn_poker", **fields)
    straight.run(iterations=done + 1)
    same_run(straight, resumed)


@pytest.mark.slow
def test_a_resumed_leduc_run_measures_the_gaps_of_the_uninterrupted_one_bit_for_bit(tmp_path, same_run):
    # several responses join per iteration, so the exact payoffs behind a sampled run's gap grow by blocks of
    # several rows; the resumed run rebuilds them through the same blocks (a 1-ulp difference in the gap before)
    fields = dict(TINY_PPO, seed=0, progress=False, br_selection="all", algorithm_options={"tie_tolerance": 0.05},
                  oracle_options={"total_steps": 1024, "num_envs": 16, "num_steps": 32, "eval_episodes": 50,
                                  "hidden": [32]}, episodes_per_profile=50)
    first = RectifiedPSRO("leduc_poker", **fields, checkpoint_dir=tmp_path)
    first.run(iterations=1)
    resumed = PSRO.resume(tmp_path, progress=False)
    resumed.run(iterations=2)
    straight = RectifiedPSRO("leduc_poker", **fields)
    straight.run(iterations=3)
    same_run(straight, resumed)
