"""PSRO on a NormalFormGame: the double oracle on matrix and tensor games (psro/sequence_form/matrix_game.py and the
loop).

References: the zero-sum LP of :mod:`solvers` (the game's value), NashConv
recomputed on the payoff arrays by :func:`solvers.nash_conv`, the catalog
games' hand-derived equilibria, and :func:`psro.double_oracle`.
"""

import json

import numpy as np
import pyspiel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import NormalFormGame, catalog
from psro import PSRO, double_oracle
from psro.errors import ConfigError
from psro.sequence_form.matrix_game import (
    check_normal_form_options,
    normal_form_from_json,
    normal_form_to_json,
    resolve_game,
    to_openspiel_game,
)
from solvers import nash_conv, solve


def mixed_strategies(solver):
    """Each player's meta-strategy aggregate as a mixed strategy of the matrix game (its one infostate's row)."""
    shape = solver.normal_form.shape
    return [agg[0, :k] for agg, k in zip(solver.aggregate_policies(), shape)]


def meta_value(solver):
    """The meta-strategy's expected payoffs in the meta-game."""
    return solver.meta_game.mean_game().expected_payoffs_marginals(solver.meta_strategy.marginals)


def lp_value(game):
    eq = solve(game, "nash_zero_sum")
    return game.expected_payoffs_marginals(eq.marginals)[0]


@pytest.mark.slow
def test_random_zero_sum_200x200_reaches_the_value_of_the_lp():
    game = catalog.random_game((200, 200), kind="zero_sum", rng=7)
    scale = np.ptp(game.payoffs[0])
    solver = PSRO(game, meta_solver="nash", progress=False)
    history = solver.run(target_gap=1e-10 * scale, iterations=400)
    gaps = history["gap"].to_numpy()
    assert gaps[0] > 0.05 * scale                      # the uniform start is far from equilibrium
    assert gaps[-1] <= 1e-10 * scale                   # ... and the run ends at an equilibrium
    assert len(history) < 201                          # without enumerating the strategies
    # the gap is the NashConv of the meta-strategy in the matrix game, recomputed on the arrays
    assert nash_conv(game, mixed_strategies(solver)) == pytest.approx(gaps[-1], abs=1e-12 * scale)
    value = lp_value(game)
    assert meta_value(solver)[0] == pytest.approx(value, abs=1e-9 * scale)
    assert double_oracle(game).equilibrium.info["converged"]
    assert game.expected_payoffs_marginals(double_oracle(game).equilibrium.marginals)[0] == \
        pytest.approx(value, abs=1e-9 * scale)
    # the oracle responds with pure strategies: every member after the initial uniform one is one-hot
    for pop, k in zip(solver.populations, game.shape):
        members = pop.policies[1:, 0, :k]
        assert np.array_equal(np.sort(members, axis=1)[:, -1], np.ones(len(members)))
        assert np.count_nonzero(members) == len(members)


def test_rock_paper_scissors_starts_at_its_equilibrium():
    # the uniform initial policy is RPS's unique Nash equilibrium: no pure strategy gains against it
    history = PSRO(catalog.rock_paper_scissors(), progress=False).run(iterations=3)
    assert history["gap"].tolist() == [0.0] * 4
    assert history["population_0"].tolist() == [1, 1, 1, 1]   # a fixed point from the start: nothing joins


def test_biased_rock_paper_scissors_finds_its_unique_equilibrium():
    solver = PSRO(catalog.biased_rock_paper_scissors(), progress=False)
    history = solver.run(target_gap=1e-12, iterations=20)
    # uniform start: row payoffs (1/6, 2/15, -3/10) against it; value 0, so NashConv is 2 * 1/6
    assert history["gap"].iloc[0] == pytest.approx(1 / 3, abs=1e-12)
    for x in mixed_strategies(solver):
        np.testing.assert_allclose(x, [1 / 16, 10 / 16, 5 / 16], atol=1e-9)


def test_chicken_ends_at_one_of_its_three_equilibria():
    game = catalog.chicken()
    solver = PSRO(game, progress=False)
    history = solver.run(target_gap=0.0, iterations=10)
    # against uniform: dare pays 3.5, swerve 4, uniform 3.75, so each player gains 0.25
    assert history["gap"].iloc[0] == pytest.approx(0.5)
    assert history["gap"].iloc[-1] == 0.0
    x, y = mixed_strategies(solver)
    equilibria = [([1, 0], [0, 1]), ([0, 1], [1, 0]), ([1 / 3, 2 / 3], [1 / 3, 2 / 3])]
    assert any(np.allclose(x, a, atol=1e-9) and np.allclose(y, b, atol=1e-9) for a, b in equilibria)


def test_three_player_gap_is_the_nash_conv_of_the_aggregates_every_iteration():
    game = catalog.random_game((3, 4, 3), rng=3)
    solver = PSRO(game, meta_solver="nash", progress=False)
    for _ in range(5):
        solver.run(iterations=1)
        assert solver.gap == pytest.approx(nash_conv(game, mixed_strategies(solver)), abs=1e-9)
    assert solver.history["gap"].iloc[0] > 0


@settings(max_examples=15)
@given(rows=st.integers(1, 7), cols=st.integers(1, 7), seed=st.integers(0, 2**16),
       scale=st.sampled_from([1e-6, 1.0, 1e6]), offset=st.sampled_from([0.0, -3.0, 1e4]))
def test_zero_sum_value_under_offsets_and_scales(rows, cols, seed, scale, offset):
    base = catalog.random_game((rows, cols), kind="zero_sum", rng=seed)
    # a positive scale and a constant added to one player keep the game constant-sum and its equilibria
    payoffs = base.payoffs * scale
    payoffs[0] = payoffs[0] + offset * scale
    game = NormalFormGame(payoffs)
    span = max(np.ptp(game.payoffs[0]), 1e-300)
    solver = PSRO(game, progress=False)
    history = solver.run(target_gap=1e-10 * span, iterations=rows + cols + 2)
    assert history["gap"].iloc[-1] <= 1e-9 * span
    assert meta_value(solver)[0] == pytest.approx(lp_value(base) * scale + offset * scale, abs=1e-9 * span)


def test_openspiel_oracle_and_evaluator_give_the_same_run():
    game = catalog.random_game((5, 6), rng=11)
    exact = PSRO(game, progress=False).run(iterations=6)
    other = PSRO(game, oracle="openspiel", evaluator="openspiel", progress=False).run(iterations=6)
    np.testing.assert_allclose(other["gap"], exact["gap"], atol=1e-12)
    assert other["population_1"].tolist() == exact["population_1"].tolist()


def test_jpsro_on_a_tensor_game_reaches_a_cce():
    history = PSRO(catalog.three_player_matching_pennies(), meta_solver="mgcce",
                   progress=False).run(target_gap=1e-9, iterations=10)
    assert history["gap"].iloc[-1] <= 1e-9


def test_checkpointed_run_resumes_to_the_same_history(tmp_path):
    game = catalog.random_game((30, 30), kind="zero_sum", rng=5)
    whole = PSRO(game, progress=False).run(iterations=6)
    first = PSRO(game, progress=False, checkpoint_dir=tmp_path)
    first.run(iterations=3)
    resumed = PSRO.resume(tmp_path, progress=False)
    assert resumed.normal_form == game
    history = resumed.run(iterations=3)
    columns = ["iteration", "gap", "population_0", "population_1", "evaluations"]
    np.testing.assert_allclose(history[columns].to_numpy(float), whole[columns].to_numpy(float), atol=1e-12)


@pytest.mark.parametrize("options, name", [
    (dict(oracle="dqn"), "oracle='dqn'"),
    (dict(oracle="ppo"), "oracle='ppo'"),
    (dict(evaluator="monte_carlo"), "evaluator='monte_carlo'"),
    (dict(oracle_dispatch="executor"), "oracle_dispatch='executor'"),
])
def test_options_a_normal_form_game_cannot_use_are_named(options, name):
    with pytest.raises(ValueError, match=name.replace("(", r"\(")):
        PSRO(catalog.matching_pennies(), progress=False, **options)


def test_bad_games_are_named():
    with pytest.raises(ValueError, match="game: .*at least two"):
        PSRO(NormalFormGame(np.ones((1, 3))), progress=False)
    with pytest.raises(TypeError, match="game: must be .*NormalFormGame"):
        PSRO(np.ones((2, 2, 2)), progress=False)
    with pytest.raises(ValueError, match="game: a dict must be"):
        PSRO({"payoffs": [[1]]}, progress=False)
    with pytest.raises(ValueError, match="game: unknown OpenSpiel game"):
        PSRO("kuhn_pokr", progress=False)
    with pytest.raises(TypeError, match="NormalFormGame"):
        to_openspiel_game("matrix_rps")


def test_json_form_round_trips_exactly():
    game = catalog.random_game((3, 2, 4), rng=1)
    back = normal_form_from_json(json.loads(json.dumps(normal_form_to_json(game))))
    assert back == game and np.array_equal(back.payoffs, game.payoffs)
    pyspiel_game, normal_form = resolve_game(normal_form_to_json(game))
    assert normal_form == game and pyspiel_game.num_players() == 3
    # a damaged dict is refused naming the game field, as an unknown game string is
    with pytest.raises(ConfigError, match="^game: could not convert string to float") as err:
        resolve_game({"normal_form": {"payoffs": "x"}})
    assert err.value.field == "game"


def test_the_turn_based_game_pays_the_matrix():
    game = catalog.random_game((3, 4), rng=2)
    turn_based = to_openspiel_game(game)
    for a in range(3):
        for b in range(4):
            state = turn_based.new_initial_state().child(a).child(b)
            assert state.is_terminal() and state.returns() == game.payoffs[:, a, b].tolist()
    check_normal_form_options("openspiel", "openspiel", "in_process")   # exact backends pass


def test_constant_sum_is_read_from_the_payoffs():
    # OpenSpiel calls every matrix game it is given general-sum; the zero-sum LP still fits a zero-sum one
    history = PSRO(catalog.biased_rock_paper_scissors(), meta_solver="nash_zero_sum",
                   progress=False).run(target_gap=1e-12, iterations=10)
    assert history["gap"].iloc[-1] <= 1e-12
    with pytest.raises(ValueError, match="meta_solver='nash_zero_sum'.*not constant-sum"):
        PSRO(catalog.chicken(), meta_solver="nash_zero_sum", progress=False)


def test_prisoners_dilemma_in_one_step_and_openspiel_matrix_games():
    # against uniform: cooperate pays -2, defect -1, uniform -1.5, so each player gains 0.5; then defect dominates
    solver = PSRO(catalog.prisoners_dilemma(), progress=False)
    assert solver.run(target_gap=0.0, iterations=5)["gap"].tolist() == [1.0, 0.0]
    assert [x.tolist() for x in mixed_strategies(solver)] == [[0.0, 1.0], [0.0, 1.0]]
    # matrix_pd as it is (its simultaneous move walked seat by seat): against uniform, defect pays (10 + 1) / 2 = 5.5
    # and uniform (5 + 0 + 10 + 1) / 4 = 4, so each player gains 1.5; then defect dominates
    assert PSRO("matrix_pd", progress=False).run(target_gap=0.0, iterations=5)["gap"].tolist() == [3.0, 0.0]
    pd_game = NormalFormGame.from_pyspiel(pyspiel.load_game("matrix_pd"))
    assert PSRO(pd_game, progress=False).run(target_gap=0.0, iterations=5)["gap"].iloc[-1] == 0.0
