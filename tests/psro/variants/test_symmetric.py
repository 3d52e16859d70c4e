"""Symmetric (single-population) PSRO (issue 27 item 1): one population, one oracle call per iteration, the gap of
two-population PSRO, the symmetric meta-solve, the refusals, the learned oracles and the bit-for-bit resume."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from games import catalog
from psro import PSRO, PSROConfig
from psro.loop.seating import mirror_new_profiles
from psro.loop.symmetric_games import check_symmetric
from psro.meta.solvers import get_meta_solver
from psro.meta.symmetric import symmetric_solution

ROOT = Path(__file__).resolve().parents[3]
TINY_PPO = dict(oracle="ppo", oracle_options={"total_steps": 256, "num_envs": 16, "num_steps": 16, "eval_episodes": 32,
                                              "hidden": [8]},
                evaluator="monte_carlo", episodes_per_profile=64, approx_gap_every=None)


def counted(solver) -> list:
    """Wrap the solver's respond phase; the returned list gets the number of oracle calls of each iteration."""
    calls, respond = [], solver.respond

    def counting(t, targets):
        calls.append(sum(len(ts) for ts in targets))
        return respond(t, targets)

    solver.respond = counting
    return calls


def converge(game, symmetric: bool, **fields):
    solver = PSRO(game, symmetric=symmetric, progress=False, **fields)
    calls = counted(solver)
    history = solver.run(target_gap=1e-9, iterations=300)
    return solver, history, calls


@pytest.mark.parametrize("game", [catalog.random_game((200, 200), kind="skew_symmetric", rng=7), "blotto"],
                         ids=["skew_symmetric_200", "blotto"])
@pytest.mark.slow
def test_one_population_one_oracle_call_and_the_gap_of_two_population_psro(game):
    """The bar (about 2 s of CPU for the 200x200 game; more seeds in experiments/reproduce/symmetric_psro.py)."""
    sym, sym_history, sym_calls = converge(game, True)
    two, two_history, two_calls = converge(game, False)
    assert len(sym.populations) == 1 and len(two.populations) == 2
    assert "population_1" not in sym_history and sym_history["population_0"].iloc[-1] == len(sym.populations[0])
    assert set(sym_calls) == {1} and set(two_calls) == {2}   # one best response per iteration, against two
    assert sym_history["gap"].iloc[-1] <= 1e-6 and two_history["gap"].iloc[-1] <= 1e-6
    assert sum(sym_calls) <= 0.5 * sum(two_calls) + 1   # the same gap at (at most about) half the oracle calls
    k = len(sym.populations[0])
    assert sym.meta_game.shape == (k, k) and sym.meta_game.is_complete()
    assert sym_history["evaluations"].iloc[-1] == k * (k + 1) // 2   # each profile once up to swapping the seats
    payoffs = sym.meta_game.mean_game().payoffs
    np.testing.assert_allclose(payoffs[1], payoffs[0].T, rtol=0, atol=1e-12)   # (the new x new block: rounding)
    marginals = sym.meta_strategy.marginals
    np.testing.assert_array_equal(marginals[0], marginals[1])


def test_the_gap_is_every_seat_playing_the_meta_strategy_in_the_full_game():
    game = catalog.skill_game(30, noise=0.5, rng=3)
    solver = PSRO(game, symmetric=True, progress=False)
    solver.run(iterations=4)
    members = np.asarray(solver.populations[0].policies)[:, 0, :]   # (k, actions): mixed strategies
    sigma = solver.meta_strategy.marginals[0] @ members
    a = game.payoffs[0]
    value = sigma @ a @ sigma
    assert solver.gap == pytest.approx(2 * (np.max(a @ sigma) - value), abs=1e-12)   # NashConv of (sigma, sigma)


def test_kuhn_and_asymmetric_games_are_refused_naming_symmetric():
    with pytest.raises(ValueError, match=r"^symmetric: kuhn_poker\(\) is not a one-shot game: .*player 0 moves first"):
        PSRO("kuhn_poker", symmetric=True)
    with pytest.raises(ValueError, match=r"^symmetric: goofspiel.* is not a one-shot game"):
        PSRO("goofspiel(num_cards=3)", symmetric=True)
    with pytest.raises(ValueError, match=r"^symmetric: leduc_poker\(\) is not a one-shot game: player 0 decides more"):
        PSRO("leduc_poker", symmetric=True, oracle="ppo", evaluator="monte_carlo", exact_gap=False)   # no tree walk
    with pytest.raises(ValueError, match=r"^symmetric: the game's payoffs are not symmetric"):
        PSRO(catalog.bach_or_stravinsky(), symmetric=True)
    with pytest.raises(ValueError, match=r"^symmetric: .*algorithm='self_play' keeps its own populations"):
        PSROConfig(game="catalog:chicken", algorithm="self_play", symmetric=True).checked_game()
    with pytest.raises(ValueError, match=r"^symmetric: .* is one-shot but its payoffs are not symmetric"):
        _asymmetric_one_shot()
    with pytest.raises(ValueError, match=r"^top_up_episodes: a symmetric run"):
        PSROConfig(game="blotto", symmetric=True, oracle="ppo", evaluator="monte_carlo",
                   top_up_episodes=100).checked_game()
    check_symmetric(_pyspiel_game("blotto(coins=4,fields=2)"), None)   # accepted


def _pyspiel_game(name):
    import pyspiel

    return pyspiel.load_game(name)


def _asymmetric_one_shot():
    """OpenSpiel's matrix prisoner's dilemma is symmetric; its payoffs made asymmetric must be refused."""
    import pyspiel

    game = pyspiel.create_matrix_game("matrix_pd", "asymmetric", ["C", "D"], ["C", "D"],
                                      [[5.0, 0.0], [10.0, 1.0]], [[5.0, 10.0], [0.0, 2.0]])
    check_symmetric(game, None)


@pytest.mark.parametrize("meta_solver", ["nash", "alpharank", "prd", "mgcce"])
def test_meta_solvers_solve_the_symmetric_meta_game_symmetrically(meta_solver):
    solver = PSRO(catalog.random_game((6, 6), kind="symmetric", rng=4), symmetric=True, meta_solver=meta_solver,
                  progress=False)
    history = solver.run(iterations=5)
    strategy = solver.meta_strategy
    np.testing.assert_array_equal(strategy.marginals[0], strategy.marginals[1])
    if meta_solver == "mgcce":   # a symmetric joint: the same under swapping the seats
        np.testing.assert_allclose(strategy.joint, strategy.joint.T, atol=1e-12)
    if meta_solver in ("nash", "mgcce"):   # an equilibrium of the meta-game
        assert history["meta_gap"].iloc[-1] <= 1e-6


def test_a_general_sum_symmetric_game_converges_to_a_symmetric_nash_equilibrium():
    solver = PSRO(catalog.random_game((12, 12), kind="symmetric", rng=1), symmetric=True, progress=False)
    history = solver.run(target_gap=1e-9, iterations=30)
    assert history["gap"].iloc[-1] <= 1e-9 and solver.meta_strategy.info["symmetric"] == "imitation_game"


def test_symmetric_nash_of_a_general_sum_game_through_the_imitation_game():
    eq = symmetric_solution(get_meta_solver("nash"), catalog.random_game((7, 7), kind="symmetric", rng=11))
    np.testing.assert_array_equal(eq.marginals[0], eq.marginals[1])
    assert eq.gap <= 1e-9
    game = catalog.random_game((3, 3, 3), kind="symmetric", rng=2)   # three players: equal seats as solved
    eq = symmetric_solution(get_meta_solver("nash"), game)
    assert all(np.array_equal(m, eq.marginals[0]) for m in eq.marginals)


def test_mirrored_profiles_equal_evaluated_ones_in_three_players():
    from games.empirical import EmpiricalGame

    game = catalog.random_game((3, 3, 3), kind="symmetric", rng=5)
    meta = EmpiricalGame((3, 3, 3))
    meta.set_exact_block([range(2), range(2), range(2)], game.payoffs[:, :2, :2, :2])
    meta.set_exact_block([range(2, 3), range(3), range(3)], game.payoffs[:, 2:])   # seat 0 plays the new member
    mirror_new_profiles(meta, old=2)
    assert meta.is_complete()
    np.testing.assert_array_equal(meta.mean(), game.payoffs)


def test_a_learned_oracle_trains_one_network_that_plays_every_seat():
    from psro.oracles.learned.networks import NeuralPolicy

    solver = PSRO("blotto(coins=5,fields=3)", symmetric=True, seed=1, progress=False, **TINY_PPO)
    history = solver.run(iterations=2)
    (pop,) = solver.populations
    assert history["population_0"].tolist() == [1, 2, 3] and "population_1" not in history
    assert all(isinstance(member, NeuralPolicy) for member in pop.policies[1:])
    assert history["env_steps"].diff().iloc[1:].tolist() == [256.0, 256.0]   # one training run per iteration
    assert solver.meta_game.shape == (3, 3) and np.isfinite(history["gap"]).all() and history["gap"].iloc[0] > 0.5
    assert history["evaluations"].tolist() == [1, 3, 6]   # each profile once up to swapping the seats
    assert (history["episodes"] == 64 * history["evaluations"]).all()   # (mirrored profiles cost no episodes)
    targets = solver.targets(solver.meta_game.mean_game())
    assert len(targets) == 1 and targets[0][0].populations == [pop, pop]


def test_a_learned_symmetric_run_interrupted_resumes_bit_for_bit(tmp_path, interrupt_after, same_run):
    fields = dict(seed=2, progress=False, **TINY_PPO)
    interrupt_after("from psro import PSRO\n"
               f"PSRO('blotto(coins=5,fields=3)', symmetric=True, **{fields!r}, "
               f"checkpoint_dir={str(tmp_path)!r}).run(iterations=1000)\n", tmp_path, 2)
    resumed = PSRO.resume(tmp_path, progress=False)
    done = resumed.iteration
    assert done >= 2 and len(resumed.populations) == 1
    resumed.run(iterations=1)
    straight = PSRO("blotto(coins=5,fields=3)", symmetric=True, **fields)
    straight.run(iterations=done + 1)
    same_run(straight, resumed)


def test_an_exact_run_resumes_from_a_checkpoint_written_mid_evaluation(tmp_path, same_run):
    game = catalog.skill_game(20, noise=1.0, rng=0)
    straight = PSRO(game, symmetric=True, progress=False)
    straight.run(iterations=4)
    first = PSRO(game, symmetric=True, progress=False, checkpoint_dir=tmp_path)
    first.run(iterations=2)
    first.on_evaluation_batch.append(lambda solver, index: solver.save_checkpoint())
    first.add()
    first.evaluate()   # (the checkpoint holds the evaluated block, its mirror filled again on resume)
    resumed = PSRO.resume(tmp_path, progress=False)
    assert resumed.state.in_iteration and len(resumed.populations) == 1
    resumed.run(iterations=1)
    same_run(straight, resumed)


def test_the_config_runs_from_the_command_line_and_resumes(tmp_path):
    from psro.run.cli import main

    config = ROOT / "experiments" / "configs" / "blotto_symmetric.yaml"
    out = tmp_path / "run"
    assert main(["run", str(config), "--set", "game=blotto(coins=5,fields=3)", "--set", "iterations=3",
                 "--set", "target_gap=null", "--out", str(out)]) == 0
    history = pd.read_csv(out / "history.csv")
    assert history["population_0"].tolist() == [1, 2, 3, 4] and "population_1" not in history
    assert main(["resume", str(out), "--set", "iterations=4"]) == 0
    straight = PSRO("blotto(coins=5,fields=3)", symmetric=True, progress=False)
    straight.run(iterations=4)
    assert pd.read_csv(out / "history.csv")["gap"].tolist() == straight.history["gap"].tolist()
    assert main(["run", str(config), "--set", "game=kuhn_poker", "--out", str(tmp_path / "kuhn")]) != 0
    # the example: --set symmetric=true on biased rock-paper-scissors keeps one population, not two
    kuhn = ROOT / "experiments" / "configs" / "kuhn_poker.yaml"
    assert main(["run", str(kuhn), "--set", "game=catalog:biased_rock_paper_scissors", "--set", "symmetric=true",
                 "--out", str(tmp_path / "brps")]) == 0
    history = pd.read_csv(tmp_path / "brps" / "history.csv")
    assert "population_1" not in history and history["population_0"].iloc[-1] == 4 and history["gap"].iloc[-1] < 1e-9
    ranking = pd.read_csv(tmp_path / "brps" / "ranking.csv")   # the one population, ranked as one
    assert set(ranking["player"]) == {"population"} and len(ranking) == 4
