"""FXP (Fictitious Cross-Play): the issue's bar on fxp_example, the main's and the counters' targets, options,
roles, and bit-for-bit resumption (also after an interruption)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

import psro
from games import catalog
from psro.family.fxp import FXP, FXPOptions
from psro.family.self_play import SelfPlay
from psro.family.teams import team_exploitability
from psro.loop.algorithms import algorithm_class

GAME, TEAMS = catalog.fxp_example(), catalog.fxp_teams(3)
SEEDS = range(5)


def team_strategies(solver) -> list:
    """Each team's output: the meta-strategy's mixture of its members' (product) policies, over joint actions."""
    return [w @ pop.policies[:, 0, :] for w, pop in zip(solver.meta_strategy.marginals, solver.populations)]


def test_the_name_resolves():
    assert algorithm_class("fxp") is FXP is psro.FXP


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_fxp_reaches_team_exploitability_001_in_60_s_where_self_play_stays_above_005(seed):
    # the bar of issue #13. Measured (2 shared cores): every seed below 1e-3 within 10 iterations, 2-6 s
    start = time.perf_counter()
    fxp = FXP(GAME, teams=TEAMS, oracle="team_pg", seed=seed, progress=False)
    history = fxp.run(target_gap=0.02, time_limit=60)   # gap: the team view's NashConv, 2 x team exploitability
    elapsed = time.perf_counter() - start
    exploitability = team_exploitability(GAME, team_strategies(fxp), TEAMS)
    assert exploitability <= 0.01 and elapsed <= 60
    assert history["gap"].iloc[-1] == pytest.approx(2 * exploitability, abs=1e-9)
    sp = SelfPlay(GAME, teams=TEAMS, oracle="team_pg", seed=seed, progress=False)
    sp.run(iterations=len(history) - 1)
    assert team_exploitability(GAME, team_strategies(sp), TEAMS) >= 0.05


def test_the_main_mixture_puts_eta_on_the_current_main_or_the_deep_weights_on_the_groups():
    fxp = FXP(catalog.biased_rock_paper_scissors(), progress=False)
    nash = np.array([0.0, 0.5, 0.0, 0.5, 0.0])
    mains, counters = np.array([0, 1, 3]), np.array([2, 4])
    assert fxp._main_mixture(nash, mains, counters).tolist() == pytest.approx([0.0, 0.35, 0.0, 0.65, 0.0])
    deep = FXP(catalog.biased_rock_paper_scissors(), algorithm_options={"opponent_sampling": "deep"}, progress=False)
    assert deep._main_mixture(nash, mains, counters).tolist() == pytest.approx([0.2, 0.2, 0.2, 0.2, 0.2])
    # no counters yet: their weight goes to the current main
    assert deep._main_mixture(np.ones(2) / 2, np.array([0, 1]), np.array([], dtype=int)).tolist() == \
        pytest.approx([0.4, 0.6])


def test_the_counters_answer_the_nash_mixture_of_the_mains_only():
    # biased RPS, exact oracle: at iteration 1 the mains are the uniform start (member 0) and rock (member 1).
    fxp = FXP(catalog.biased_rock_paper_scissors(), progress=False)
    fxp.run(iterations=2)
    targets = fxp.targets(fxp.meta_game.mean_game())
    roles = fxp.roles(0)
    assert roles == ["initial", "main", "counter", "main", "counter"]
    mains = [i for i, r in enumerate(roles) if r != "counter"]
    counter_mix = targets[1][1].mixtures[0]
    assert counter_mix[[i for i in range(5) if i not in mains]].tolist() == [0.0, 0.0]
    sub = fxp.meta_game.mean_game().payoffs[0][np.ix_(mains, mains)]
    x = counter_mix[mains]   # a Nash mixture of the mains' zero-sum game: no main does better against it
    assert float((x @ sub @ x)) == pytest.approx(0.0, abs=1e-9) and (sub @ x).max() <= 1e-9 + 0.0
    main_mix = targets[1][0].mixtures[0]
    nash = fxp.meta_strategy.marginals[0]
    assert main_mix == pytest.approx(0.7 * nash + 0.3 * np.eye(5)[3])   # eta on the current main (member 3)


def test_options_are_checked_by_name():
    with pytest.raises(ValueError, match="FXP has no option 'etta'. Did you mean 'eta'"):
        FXP("kuhn_poker", algorithm_options={"etta": 0.2}, progress=False)
    with pytest.raises(ValueError, match="eta"):
        FXPOptions(eta=1.5)
    with pytest.raises(ValueError, match="opponent_sampling"):
        FXPOptions(opponent_sampling="latest")
    with pytest.raises(ValueError, match="deep_weights"):
        FXPOptions(deep_weights=(0.5, 0.5, 0.5))
    with pytest.raises(ValueError, match="meta_solver: FXP needs a product"):
        FXP("kuhn_poker", meta_solver="mgcce", progress=False)
    with pytest.raises(ValueError, match="warm_start"):
        FXP("kuhn_poker", oracle="ppo", evaluator="monte_carlo", warm_start=True, progress=False)


def test_fxp_on_kuhn_with_the_exact_oracle_converges():
    fxp = FXP("kuhn_poker", progress=False)
    history = fxp.run(iterations=8)
    assert history["population_0"].tolist() == [1 + 2 * t for t in range(9)]
    assert history["gap"].iloc[-1] < 0.05


def test_resume_from_a_checkpoint_is_bit_for_bit(tmp_path, same_run):
    fields = dict(teams=TEAMS, oracle="team_pg", seed=3, progress=False, oracle_options={"steps": 300})
    straight = FXP(GAME, **fields)
    straight.run(iterations=5)
    first = FXP(GAME, **fields, checkpoint_dir=tmp_path)
    first.run(iterations=2)
    resumed = psro.PSRO.resume(tmp_path, progress=False)
    assert type(resumed) is FXP and resumed.roles(0) == first.roles(0)
    resumed.run(iterations=3)
    same_run(straight, resumed)


@pytest.mark.slow
def test_fxp_interrupted_run_resumes_to_the_uninterrupted_run(tmp_path, interrupt_after, same_run):
    fields = "teams=[[0, 1, 2], [3, 4, 5]], oracle='team_pg', seed=1, progress=False"
    interrupt_after("from games import catalog\nfrom psro.family.fxp import FXP\n"
               f"FXP(catalog.fxp_example(), {fields}, checkpoint_dir={str(tmp_path)!r}).run(iterations=1000)\n",
               tmp_path, 3)
    resumed = FXP.resume(tmp_path, progress=False)
    done = resumed.iteration
    assert done >= 3
    resumed.run(iterations=2)
    straight = FXP(GAME, teams=TEAMS, oracle="team_pg", seed=1, progress=False)
    straight.run(iterations=done + 2)
    same_run(straight, resumed)


TINY_PPO = dict(oracle="ppo", oracle_options={"total_steps": 256, "num_envs": 16, "num_steps": 16, "eval_episodes": 32,
                                              "hidden": [8]},
                evaluator="monte_carlo", episodes_per_profile=64,
                approx_gap_options={"episodes": 100, "total_steps": 256})


def test_fxp_with_a_learned_oracle_warm_starts_the_main_and_not_the_counter():
    from psro.oracles.learned.networks import NeuralPolicy

    fxp = FXP("kuhn_poker", progress=False, seed=1, **TINY_PPO)
    history = fxp.run(iterations=1)
    assert history["population_0"].tolist() == [1, 3]
    assert all(isinstance(p, NeuralPolicy) for pop in fxp.populations for p in pop.policies[1:])
    main, counter = fxp.targets(fxp.meta_game.mean_game())[0]
    assert main.initial_policy is fxp.populations[0].policies[1]   # the main continues from its checkpoint
    assert counter.initial_policy is None                         # (and warm_start is off: a fresh network)
    assert np.isfinite(history["gap"]).all()


@pytest.mark.slow
def test_the_config_runs_from_the_command_line_resumes_and_ranks(tmp_path, capsys):
    import pandas as pd

    from psro.run.cli import main

    config = Path(__file__).resolve().parents[3] / "experiments" / "configs" / "fxp_example.yaml"
    out = tmp_path / "fxp"
    assert main(["run", str(config), "--set", "iterations=2", "--set", "target_gap=null", "--out", str(out)]) == 0
    history = pd.read_csv(out / "history.csv")
    assert history["iteration"].tolist() == [0, 1, 2] and history["population_0"].tolist() == [1, 3, 5]
    ranking = pd.read_csv(out / "ranking.csv")   # alpha-Rank and Elo of the final (team-level) population
    assert {"alpharank_mass", "elo"} <= set(ranking.columns) and len(ranking) == 10
    assert main(["resume", str(out), "--set", "iterations=3"]) == 0
    resumed = pd.read_csv(out / "history.csv")
    assert resumed["iteration"].tolist() == [0, 1, 2, 3]
    straight = FXP(GAME, teams=TEAMS, oracle="team_pg", seed=0, progress=False)
    straight.run(iterations=3)
    assert resumed["gap"].tolist() == straight.history["gap"].tolist()
    assert "FXP on catalog:fxp_example" in capsys.readouterr().out
