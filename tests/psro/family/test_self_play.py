"""SelfPlay and FictitiousSelfPlay: their targets and outputs (checked against NashConv computed apart), team
games through the team view, options, and bit-for-bit resumption (also after an interruption)."""

from __future__ import annotations

import pytest

import psro
from games import catalog
from psro.config.model import PSROConfig
from psro.family.self_play import FictitiousSelfPlay, SelfPlay
from psro.family.teams import team_exploitability
from psro.loop.algorithms import algorithm_class
from psro.sequence_form.team_view import team_config
from solvers import nash_conv


def test_the_names_resolve():
    assert algorithm_class("self_play") is SelfPlay is psro.SelfPlay
    assert algorithm_class("fictitious_self_play") is FictitiousSelfPlay is psro.FictitiousSelfPlay


def test_self_play_on_rock_paper_scissors_cycles_through_the_best_responses_to_the_latest():
    sp = SelfPlay(catalog.rock_paper_scissors(), progress=False)
    history = sp.run(iterations=6)
    # from the uniform start the exact response is rock (ties go to the lowest action), then paper to rock, ...
    assert [int(p.argmax()) for p in sp.populations[0].policies] == [0, 0, 1, 2, 0, 1, 2]
    game = catalog.rock_paper_scissors()
    for t, gap in enumerate(history["gap"]):
        latest = [sp.populations[p].policies[t][0, :3] for p in range(2)]
        assert gap == pytest.approx(nash_conv(game, latest), abs=1e-12)
    assert [m.tolist() for m in sp.meta_strategy.marginals] == [[0.0] * 6 + [1.0]] * 2
    assert sp.meta_solver.name == "latest"


def test_fictitious_self_play_outputs_the_uniform_mixture_of_every_iterate_repeats_included():
    game = catalog.biased_rock_paper_scissors()
    fsp = FictitiousSelfPlay(game, progress=False)
    history = fsp.run(iterations=8)
    assert history["population_0"].tolist() == list(range(1, 10))   # one member per iteration, always
    for t, gap in enumerate(history["gap"]):
        average = [fsp.populations[p].policies[: t + 1, 0, :3].mean(axis=0) for p in range(2)]
        assert gap == pytest.approx(nash_conv(game, average), abs=1e-12)
    actions = [int(p.argmax()) for p in fsp.populations[0].policies[1:]]
    assert len(set(actions)) < len(actions)   # repeated responses joined too


def test_fictitious_self_play_on_kuhn_is_fictitious_play():
    from open_spiel.python.algorithms import exploitability

    fsp = FictitiousSelfPlay("kuhn_poker", progress=False)
    history = fsp.run(iterations=30)
    assert history["gap"].iloc[-1] < history["gap"].iloc[1] / 4
    assert exploitability.nash_conv(fsp.game, fsp.openspiel_policy()) == pytest.approx(history["gap"].iloc[-1],
                                                                                        abs=1e-12)


def test_team_games_train_on_the_team_view():
    config = PSROConfig(algorithm="self_play", game=catalog.fxp_example(), teams=catalog.fxp_teams(3),
                        oracle="team_pg")
    view = team_config(config)
    assert view.game.shape == (8, 8) and view.teams is None
    assert view.oracle_options == {"members": [[2, 2, 2], [2, 2, 2]]}
    with pytest.raises(ValueError, match="teams: a team game is played on its team view"):
        team_config(PSROConfig(game="kuhn_poker", teams=[[0], [1]]))


@pytest.mark.parametrize("seed", range(3))
def test_self_play_with_decentralised_learners_stays_at_the_all_one_local_equilibrium(seed):
    sp = SelfPlay(catalog.fxp_example(), teams=catalog.fxp_teams(3), oracle="team_pg", seed=seed, progress=False)
    history = sp.run(iterations=4)
    latest = [pop.policies[-1][0] for pop in sp.populations]
    assert all(p[7] > 0.99 for p in latest)   # both teams all-1
    exploitability = team_exploitability(catalog.fxp_example(), latest, catalog.fxp_teams(3))
    assert exploitability >= 0.05 and exploitability == pytest.approx(0.1, abs=2e-3)
    # the gap is the team view's NashConv: the sum over the two teams of the best pure team deviation's gain
    assert history["gap"].iloc[-1] == pytest.approx(2 * exploitability, abs=1e-12)
    assert (history["gap"].iloc[1:] / 2 >= 0.05).all()


@pytest.mark.parametrize("field, value", [("update_players", "cycle"), ("br_selection", "novel"),
                                          ("meta_solver", "mgcce"), ("eval_meta_solver", "nash")])
def test_options_the_loops_fix_are_refused(field, value):
    with pytest.raises(ValueError, match=field):
        FictitiousSelfPlay("kuhn_poker", progress=False, **{field: value})


def test_a_config_of_another_algorithm_is_refused():
    with pytest.raises(ValueError, match="algorithm: this config runs 'psro'"):
        SelfPlay(PSROConfig(game="kuhn_poker"))


@pytest.mark.parametrize("cls", [SelfPlay, FictitiousSelfPlay])
def test_resume_from_a_checkpoint_is_bit_for_bit(tmp_path, cls, same_run):
    straight = cls("kuhn_poker", progress=False, seed=4)
    straight.run(iterations=6)
    first = cls("kuhn_poker", progress=False, seed=4, checkpoint_dir=tmp_path)
    first.run(iterations=3)
    resumed = psro.PSRO.resume(tmp_path, progress=False)   # (the checkpoint names its algorithm)
    assert type(resumed) is cls
    resumed.run(iterations=3)
    same_run(straight, resumed)


@pytest.mark.slow
def test_self_play_of_teams_interrupted_run_resumes_to_the_uninterrupted_run(tmp_path, interrupt_after, same_run):
    fields = "teams=[[0, 1, 2], [3, 4, 5]], oracle='team_pg', seed=2, progress=False"
    interrupt_after("from games import catalog\nfrom psro.family.self_play import SelfPlay\n"
               f"SelfPlay(catalog.fxp_example(), {fields}, checkpoint_dir={str(tmp_path)!r}).run(iterations=1000)\n",
               tmp_path, 3)
    resumed = SelfPlay.resume(tmp_path, progress=False)
    done = resumed.iteration
    assert done >= 3
    resumed.run(iterations=2)
    straight = SelfPlay(catalog.fxp_example(), teams=catalog.fxp_teams(3), oracle="team_pg", seed=2, progress=False)
    straight.run(iterations=done + 2)
    same_run(straight, resumed)


def test_self_play_with_a_learned_oracle_trains_networks_against_the_latest():
    from psro.oracles.learned.networks import NeuralPolicy

    sp = SelfPlay("kuhn_poker", progress=False, seed=1, oracle="ppo", warm_start=True, evaluator="monte_carlo",
                  episodes_per_profile=64, approx_gap_options={"episodes": 100, "total_steps": 256},
                  oracle_options={"total_steps": 256, "num_envs": 16, "num_steps": 16, "eval_episodes": 32,
                                  "hidden": [8]})
    history = sp.run(iterations=2)
    assert all(isinstance(pop.policies[-1], NeuralPolicy) for pop in sp.populations)
    assert [m.tolist() for m in sp.meta_strategy.marginals] == [[0.0, 0.0, 1.0]] * 2
    assert history["gap"].iloc[-1] < history["gap"].iloc[0]   # measured: 0.917 (uniform) -> 0.606
