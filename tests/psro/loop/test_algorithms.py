"""The training-loop registry (psro/loop/algorithms.py) and the plumbing every algorithm relies on: the
``algorithm`` / ``algorithm_options`` / ``teams`` config fields, ``PSRO.targets`` and ``LoopState.extra``."""

import dataclasses

import numpy as np
import pytest

from psro import PSRO, PSROConfig
from psro.config.model import check_teams
from psro.loop.algorithms import ALGORITHMS, algorithm_class
from psro.loop.state import LoopExtra
from psro.meta.targets import meta_targets


def test_psro_is_registered_under_its_own_name():
    assert algorithm_class("psro") is PSRO
    assert PSRO.algorithm == "psro"
    assert set(ALGORITHMS) >= {"psro", "self_play", "fictitious_self_play", "fxp", "league", "nfsp",
                               "coffee_psro", "offline_psro"}


def test_unknown_algorithm_names_the_field_and_the_choices():
    with pytest.raises(ValueError, match=r"^algorithm: .*'psro'"):
        PSROConfig(algorithm="alphazero").validate()
    with pytest.raises(ValueError, match="unknown algorithm 'alphazero'"):
        algorithm_class("alphazero")


def test_a_config_for_another_algorithm_is_refused_by_psro():
    with pytest.raises(ValueError, match=r"^algorithm: this config runs 'fxp'"):
        PSRO(PSROConfig(algorithm="fxp"))


def test_algorithm_options_must_be_a_mapping():
    with pytest.raises(ValueError, match=r"^algorithm_options: must be a mapping"):
        PSROConfig(algorithm_options=[1, 2]).validate()


@pytest.mark.parametrize("teams, message", [
    ([[0, 1], [1]], "exactly once"),
    ([[0]], "exactly once"),
    ([[0, 1.5]], "player indices"),
    ([[], [0, 1]], "non-empty"),
    ("01", "non-empty lists"),
])
def test_teams_must_partition_the_players(teams, message):
    with pytest.raises(ValueError, match=message):
        check_teams(teams, 2)


def test_teams_are_checked_against_the_game():
    with pytest.raises(ValueError, match=r"^teams: must cover each of the players 0\.\.2"):
        PSROConfig(game="kuhn_poker(players=3)", teams=[[0, 1]]).validate()
    config = PSROConfig.from_dict({"game": "kuhn_poker(players=3)", "teams": [[0, 2], [1]]})
    config.validate()
    assert config.teams == [[0, 2], [1]]


def test_the_default_targets_are_the_meta_strategy_s():
    solver = PSRO("kuhn_poker", progress=False)
    solver.run(iterations=2)
    meta_game = solver.meta_game.mean_game()
    targets = solver.targets(meta_game)
    expected = [meta_targets(solver.meta_strategy, "product", solver.populations, meta_game.payoffs, p)
                for p in range(2)]
    for got, want in zip(targets, expected):
        assert len(got) == len(want) == 1
        for a, b in zip(got[0].mixtures, want[0].mixtures):
            np.testing.assert_array_equal(a, b)


class _Latest(PSRO):
    """A subclass that trains against the others' latest policy, to show the hook changes what is trained."""

    algorithm = "psro"   # (registered name of its parent: this test class is not in the registry)

    def targets(self, meta_game):
        targets = super().targets(meta_game)
        out = []
        for ts in targets:
            latest = [np.eye(len(m))[-1] for m in ts[0].mixtures]
            out.append([ts[0].__class__(**{**ts[0].__dict__, "mixtures": tuple(latest)})])
        return out


def test_a_subclass_s_targets_are_what_its_oracles_answer():
    # Each policy that joins is the exact best response to the opponent's policy of the iteration before.
    ours = _Latest("kuhn_poker", progress=False)
    ours.run(iterations=4)
    pops = ours.populations
    for p in range(2):
        for k in range(1, len(pops[p])):
            target = ours.targets(ours.meta_game.mean_game())[p][0]
            one_hot = [np.eye(len(pops[q]))[k - 1] for q in range(2)]
            response = ours.oracle.respond(p, target.__class__(**{**target.__dict__, "mixtures": tuple(one_hot)}))
            np.testing.assert_allclose(response.value, ours.populations[p].provenance_table()["value"][k],
                                       atol=1e-12)
    base = PSRO("kuhn_poker", progress=False)
    base.run(iterations=4)
    assert not np.allclose(base.history["gap"], ours.history["gap"])


@dataclasses.dataclass
class _RatedExtra(LoopExtra):
    win_rates: list = dataclasses.field(default_factory=list)


class _Rated(PSRO):
    Extra = _RatedExtra


def test_the_extra_state_is_typed_checkpointed_and_restored(tmp_path):
    assert PSRO("kuhn_poker", progress=False).state.extra == LoopExtra()   # (PSRO keeps none)
    solver = _Rated("kuhn_poker", progress=False, checkpoint_dir=tmp_path)
    assert solver.state.extra == _RatedExtra(win_rates=[])
    solver.state.extra.win_rates = [[0.5, 0.25]]
    solver.run(iterations=1)
    restored = _Rated.resume(tmp_path, progress=False)
    assert restored.state.extra == _RatedExtra(win_rates=[[0.5, 0.25]])
    assert restored.config.algorithm == "psro"
    with pytest.raises(ValueError, match=r"field\(s\) \['win_rates'\] that LoopExtra does not know"):
        PSRO.resume(tmp_path, progress=False)   # (the base loop keeps no such state)


def test_psro_plays_a_team_game_on_its_team_view():
    # fxp_example(team_size=2) as a config string; the two teams become two players with 4 joint actions each,
    # and exact PSRO on that view reaches the team-level equilibrium (gap 0 within a few iterations)
    solver = PSRO("catalog:fxp_example(team_size=2)", teams=[[0, 1], [2, 3]], progress=False)
    assert solver.num_players == 2 and solver.normal_form.shape == (4, 4)
    history = solver.run(iterations=10, target_gap=1e-12)
    assert history["gap"].iloc[-1] <= 1e-12
    assert solver.config.teams is None


def test_training_loops_register_like_every_registry_and_by_module_name():
    from psro.family.self_play import SelfPlay
    from psro.loop.algorithms import algorithm_capabilities, register_algorithm, unregister_algorithm

    assert algorithm_capabilities("offline_psro").offline and not algorithm_capabilities("psro").offline
    assert algorithm_class("psro.family.self_play:SelfPlay") is SelfPlay   # "module:Class", adopted
    register_algorithm("self_play_again_test", SelfPlay)
    try:
        assert algorithm_class("self_play_again_test") is SelfPlay
        with pytest.raises(ValueError, match="algorithm 'self_play_again_test' is already registered"):
            register_algorithm("self_play_again_test", PSRO)
    finally:
        unregister_algorithm("self_play_again_test")
    with pytest.raises(ValueError, match="'psro.loop.psro_loop:logger' is not a class"):
        algorithm_class("psro.loop.psro_loop:logger")


def test_meta_solvers_declare_joint_and_register_by_name():
    from games import catalog
    from psro.meta.solvers import (
        get_meta_solver,
        meta_solver_capabilities,
        register_meta_solver,
        unregister_meta_solver,
    )
    from solvers import make_equilibrium

    assert not meta_solver_capabilities("nash").joint and meta_solver_capabilities("mgce").joint
    assert not meta_solver_capabilities("alpharank").joint

    @register_meta_solver("first_policy_test")
    def first(meta_game):
        return make_equilibrium(meta_game, marginals=[np.eye(k)[0] for k in meta_game.shape], concept="nash",
                                method="first_policy_test")
    try:
        eq = get_meta_solver("first_policy_test")(catalog.rock_paper_scissors())
        assert [m.tolist() for m in eq.marginals] == [[1.0, 0.0, 0.0]] * 2
        with pytest.raises(ValueError, match="meta_solver 'first_policy_test' is already registered"):
            register_meta_solver("first_policy_test")(lambda g: None)
    finally:
        unregister_meta_solver("first_policy_test")
    with pytest.raises(ValueError, match="unknown meta_solver 'first_policy_test'"):
        meta_solver_capabilities("first_policy_test")
