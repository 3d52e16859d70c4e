"""Diversity-aware PSRO (psro.variants.diverse, psro.variants.diversity_measures): the measures and the choice by
hand, weight 0 is PSRO, the refusals, a learned run from its config on Leduc, and a run interrupted and resumed
bit for bit."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import psro
from games import catalog
from games.normal_form import NormalFormGame
from psro import PSRO
from psro.loop.state import untimed
from psro.variants.diverse import DiverseOptions, DiversePSRO, diversity_gains
from psro.variants.diversity_measures import dpp_gain, expected_cardinality, hull_distance, total_variation

CONFIGS = Path(__file__).resolve().parents[3] / "experiments" / "configs"
TINY_PPO = dict(oracle="ppo", oracle_options={"total_steps": 128, "num_envs": 8, "num_steps": 16, "eval_episodes": 16,
                                              "hidden": [8]},
                evaluator="monte_carlo", episodes_per_profile=16, approx_gap_every=None)

# player 0's payoffs (zero-sum); player 1's population {b0, b1}, player 0's {a0}
U0 = np.array([[1.0, 0.0], [1.0, 0.6], [-2.0, 0.5], [-1.0, -1.0]])


def test_measures_by_hand():
    # E|Y| of L = M M^T: for [[1, 0], [1, 0.6]], det(L + I) = 2 * 2.36 - 1 = 3.72, trace((L + I)^-1) = 4.36 / 3.72
    assert expected_cardinality(U0[:2]) == pytest.approx(2 - 4.36 / 3.72, abs=1e-12)
    assert dpp_gain(U0[:1], U0[1:]) == pytest.approx([2 - 4.36 / 3.72 - 0.5, 2 - 7.25 / 6.5 - 0.5, 1.0 - 0.5],
                                                     abs=1e-12)
    # the hull of {(0, 0), (2, 0)}: a point above the segment at height 1, and one beyond its end
    segment = np.array([[0.0, 0.0], [2.0, 0.0]])
    assert hull_distance(segment, np.array([1.0, 1.0])) == pytest.approx(1.0, abs=1e-9)
    assert hull_distance(segment, np.array([3.0, 1.0])) == pytest.approx(2.0, abs=1e-9)
    assert hull_distance(segment, np.array([0.5, 0.0])) == pytest.approx(0.0, abs=1e-9)
    assert total_variation(np.array([0.5, 0.5, 0.0]), np.array([0.0, 0.5, 0.5])) == 0.5
    # the unified term is response + behavioural
    rows, cands = U0[:1], U0[1:]
    terminals, mixture = np.eye(3), np.array([1.0, 0.0, 0.0])
    unified = diversity_gains("unified", rows, cands, terminals, mixture)
    assert np.allclose(unified, diversity_gains("response", rows, cands, terminals, mixture)
                       + diversity_gains("behavioural", rows, cands, terminals, mixture), rtol=0, atol=1e-15)


@pytest.mark.parametrize("weight, chosen", [(1.0, 1), (3.0, 2)])
def test_the_weight_trades_payoff_for_dpp_diversity(weight, chosen):
    # player 1's Nash over {b0, b1} against a0 = (1, 0) is b1; values against it: a1 0.6, a2 0.5, a3 -1;
    # DPP gains over the row (1, 0): a1 2 - 4.36 / 3.72 - 0.5 = 0.3280, a2 2 - 7.25 / 6.5 - 0.5 = 0.3846, a3 0.5.
    # weight 1: a1 0.928 > a2 0.885 > a3 -0.5; weight 3: a2 1.654 > a1 1.584 > a3 0.5
    game = NormalFormGame(np.stack([U0, -U0]))
    diverse = DiversePSRO(game, initial_policies=[[0], [0, 1]], algorithm_options={"diversity_weight": weight},
                          progress=False)
    diverse.run(iterations=0)
    record = diverse.state.extra.diversity[0]
    assert record["chosen"][0] == chosen
    assert record["value"][0] == pytest.approx([0.0, 0.6, 0.5][chosen], abs=1e-12)
    assert record["gain"][0] == pytest.approx([0.0, 2 - 4.36 / 3.72 - 0.5, 2 - 7.25 / 6.5 - 0.5][chosen], abs=1e-12)
    assert record["expected_cardinality"][0] == pytest.approx(0.5, abs=1e-12)
    assert diverse.state.pending[0][0][0].tolist() == [np.eye(4)[chosen].tolist()]
    # the gap is measured with exact best responses to the meta-strategy, not with the chosen response
    assert diverse.gap == pytest.approx(PSRO(game, initial_policies=[[0], [0, 1]], progress=False).run(
        iterations=0)["gap"].iloc[0], abs=1e-12)


def test_behavioural_and_response_choices_on_rock_paper_scissors():
    # from rock against rock: paper (value 1) and scissors (value -1) are both fully off the mixture's terminals
    # (total variation 1); response diversity: the squared distance of (1) and (-1) to the hull {(0)}: 1 each
    for kind in ("behavioural", "response"):
        diverse = DiversePSRO(catalog.rock_paper_scissors(), initial_policies=[[0], [0]], progress=False,
                              algorithm_options={"diversity": kind, "diversity_weight": 1.0})
        diverse.run(iterations=0)
        record = diverse.state.extra.diversity[0]
        assert record["chosen"] == [1, 1] and record["gain"] == pytest.approx([1.0, 1.0], abs=1e-9)


def test_weight_zero_is_psro():
    for game in ("kuhn_poker", catalog.random_game((6, 6), kind="zero_sum", rng=3)):
        diverse = DiversePSRO(game, algorithm_options={"diversity_weight": 0.0}, progress=False)
        plain = PSRO(game, progress=False)
        diverse.run(iterations=5)
        plain.run(iterations=5)
        pd.testing.assert_frame_equal(untimed(diverse.history), untimed(plain.history))
        for a, b in zip(diverse.populations, plain.populations):
            assert np.array_equal(a.policies, b.policies)


def test_exact_candidates_on_kuhn():
    diverse = DiversePSRO("kuhn_poker", algorithm_options={"diversity": "unified"}, progress=False)
    history = diverse.run(iterations=4)
    assert history["population_0"].tolist() == [1, 2, 3, 4, 5] and np.isfinite(history["gap"]).all()
    records = diverse.state.extra.diversity
    assert len(records) == 5 and all(g >= 0 for r in records for g in r["gain"])
    # candidates: the best response to the meta-strategy and one per opponent member (the 0th is the former)
    assert all(0 <= c <= i + 1 for i, r in enumerate(records) for c in r["chosen"])
    # a joining response's value is its exact value against the meta-strategy, whichever target it answered
    assert [value for _, value in diverse.state.pending[0]] == [records[-1]["value"][0]]
    assert max(r["chosen"][0] for r in records) > 0   # (some iteration chose a response to a single member)


def test_refusals_name_the_field():
    with pytest.raises(ValueError, match="algorithm_options: diversity_weight must be a number >= 0"):
        DiversePSRO("kuhn_poker", algorithm_options={"diversity_weight": -1.0}, progress=False)
    with pytest.raises(ValueError, match="algorithm_options: candidates"):
        DiverseOptions(candidates=0)
    with pytest.raises(ValueError, match="meta_solver: DiversePSRO needs a product"):
        DiversePSRO("kuhn_poker", meta_solver="mgce", progress=False)
    with pytest.raises(ValueError, match="game: DiversePSRO is defined for two-player games"):
        DiversePSRO("kuhn_poker(players=3)", progress=False)
    with pytest.raises(ValueError, match="exact_gap: DiversePSRO scores payoff vectors exactly on the game tree"):
        DiversePSRO("kuhn_poker", **TINY_PPO, exact_gap=False, progress=False)
    assert psro.algorithm_class("diverse_psro") is DiversePSRO and psro.DiversePSRO is DiversePSRO


def test_learned_run_from_its_config_on_leduc(tmp_path):
    from psro.run.cli import main

    out = tmp_path / "run"
    assert main(["run", str(CONFIGS / "leduc_diverse.yaml"), "--set", "iterations=1", "--set",
                 "oracle_options={total_steps: 128, num_envs: 8, num_steps: 16, eval_episodes: 16, hidden: [8]}",
                 "--set", "episodes_per_profile=16", "--out", str(out)]) == 0
    history = pd.read_csv(out / "history.csv")
    assert history["iteration"].tolist() == [0, 1] and history["population_0"].tolist() == [1, 2]
    assert np.isfinite(history["gap"]).all()
    # two candidates per player and iteration, every one counted, whether it joined or not
    assert history["env_steps"].tolist() == [2 * 2 * 128, 2 * 2 * 2 * 128]


@pytest.mark.slow
def test_interrupted_run_resumes_to_the_uninterrupted_run(tmp_path, interrupt_after, same_run):
    fields = dict(TINY_PPO, seed=5, progress=False, algorithm_options={"diversity": "unified", "candidates": 2})
    interrupt_after("from psro.variants.diverse import DiversePSRO\n"
               f"DiversePSRO('kuhn_poker', **{fields!r}, checkpoint_dir={str(tmp_path)!r}).run(iterations=100)\n",
               tmp_path, 1)
    resumed = PSRO.resume(tmp_path, progress=False)
    assert type(resumed) is DiversePSRO
    done = resumed.iteration
    resumed.run(iterations=1)
    straight = DiversePSRO("kuhn_poker", **fields)
    straight.run(iterations=done + 1)
    same_run(straight, resumed)
