"""The loop with learned oracles: no tree unless something needs it, neural populations, honest metrics."""

import logging
import math
from pathlib import Path

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import exploitability

import psro.loop.measures
from psro import PSRO
from psro.config.model import PSROConfig
from psro.errors import LearnerDiverged
from psro.oracles.learned.networks import NeuralPolicy
from psro.policies.acting import UniformPolicy
from psro.policies.population import PolicyPopulation

TINY = dict(oracle="ppo", oracle_options={"total_steps": 256, "num_envs": 16, "num_steps": 16, "eval_episodes": 32,
                                          "hidden": [16]},
            approx_gap_options={"episodes": 50, "total_steps": 256, "share": None}, progress=False)
SAMPLED = dict(evaluator="monte_carlo", episodes_per_profile=100)


def test_leduc_without_a_tree_grows_neural_populations(monkeypatch):
    monkeypatch.setattr(psro.loop.measures, "build_game_tree", lambda *a, **k: pytest.fail("the tree was built"))
    solver = PSRO("leduc_poker", **TINY, **SAMPLED, exact_gap=False)
    history = solver.run(iterations=2)
    assert solver.tree is None
    for pop in solver.populations:
        assert isinstance(pop, PolicyPopulation) and len(pop) == 3
        assert isinstance(pop.policies[0], UniformPolicy)
        assert all(isinstance(m, NeuralPolicy) for m in pop.policies[1:])
    assert history["gap"].isna().all() and history["train_gap"].isna().all()
    # approx_gap_every=auto without the exact gap: rows 0, 1, 2, 4, ... (and the last), each timed
    assert np.isfinite(history[["approx_gap", "approx_gap_stderr"]]).all().all()
    assert (history["approx_gap_stderr"] > 0).all() and (history["approx_gap_time"] > 0).all()
    assert (history["meta_gap"].abs() < 1e-6).all()   # a Nash meta-strategy has no regret in its own meta-game
    assert int(history["episodes"].iloc[-1]) == 9 * 100
    with pytest.raises(ValueError, match="no game tree"):
        solver.openspiel_policy()


def test_auto_goes_on_sampled_when_the_tree_is_too_large(caplog):
    with caplog.at_level(logging.WARNING, logger="psro.loop.measures"):
        solver = PSRO("kuhn_poker", **TINY, **SAMPLED, max_histories=10)
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 1 and "more than max_histories=10 histories; exact gap off (gap = NaN" in messages[0]
    assert solver.tree is None
    assert math.isnan(solver.run(iterations=1)["gap"].iloc[-1])


@pytest.mark.parametrize("options, needs", [
    ({}, "oracle='exact' and evaluator='sequence_form'"),
    ({**TINY, "evaluator": "sequence_form"}, "evaluator='sequence_form'"),
    ({**TINY, **SAMPLED, "exact_gap": True}, "exact_gap=true"),
])
def test_what_needs_the_tree_says_so_when_it_does_not_fit(options, needs):
    with pytest.raises(ValueError, match=r"^max_histories: game kuhn_poker\(\) has more than max_histories=10 "
                                         rf"histories, and {needs} needs its whole tree.*oracle='ppo'.*monte_carlo"):
        PSRO("kuhn_poker", max_histories=10, **{"progress": False, **options})


def test_the_error_names_the_budget_that_stopped_the_walk():
    # phantom_ttt is refused from its estimated size before any walk: the message says so, not "more than N"
    with pytest.raises(ValueError, match=r"^max_histories: game phantom_ttt\(\) has about \S+ histories \(estimated "
                                         r"from random playouts\), far more than max_histories=1_000_000, and "
                                         r"oracle='exact' and evaluator='sequence_form' needs its whole tree"):
        PSRO("phantom_ttt", progress=False)


def test_exact_gap_of_a_sampled_learned_run_is_the_exact_nash_conv():
    # a common-payoff game: the sampled meta-game's values differ from the exact ones (in a zero-sum game their
    # sum would be exact anyway), and the gap must use the exact ones
    solver = PSRO("trade_comm(num_items=2)", **TINY, **SAMPLED, seed=3)
    history = solver.run(iterations=3)
    assert solver.tree is not None   # auto: the tree fits, so the gap is measured exactly
    game = pyspiel.load_game("trade_comm(num_items=2)")
    # the meta-strategy of the last row, its networks tabularised, measured by OpenSpiel
    assert history["gap"].iloc[-1] == pytest.approx(exploitability.nash_conv(game, solver.openspiel_policy()),
                                                    abs=1e-10)
    assert np.isfinite(history["gap"]).all()


def test_meta_gap_is_the_regret_in_the_empirical_game():
    solver = PSRO("kuhn_poker", meta_solver="uniform", progress=False)
    history = solver.run(iterations=2)
    payoffs = solver.meta_game.mean_game().payoffs
    m = [np.full(k, 1.0 / k) for k in payoffs.shape[1:]]
    regret = (payoffs[0] @ m[1]).max() - m[0] @ payoffs[0] @ m[1] + (m[0] @ payoffs[1]).max() - m[0] @ payoffs[1] @ m[1]
    assert history["meta_gap"].iloc[-1] == pytest.approx(regret, abs=1e-12) and regret > 0.01
    assert history["meta_gap"].iloc[0] == 0.0   # one profile: nothing to deviate to


def test_approx_gap_of_the_uniform_policy_bounds_its_nash_conv():
    # Kuhn's uniform profile has NashConv 11/12; fresh PPO responses find most of it, never (beyond noise) more
    solver = PSRO("kuhn_poker", **{**TINY, "approx_gap_options": {"episodes": 2000, "total_steps": 4096,
                                                                  "eval_episodes": 100, "share": None}}, **SAMPLED)
    row = solver.run(iterations=0).iloc[0]
    assert row["gap"] == pytest.approx(11 / 12, abs=1e-12)
    assert 0.75 < row["approx_gap"] < 11 / 12 + 4 * row["approx_gap_stderr"]
    assert 0.01 < row["approx_gap_stderr"] < 0.1


@pytest.mark.slow
def test_approx_gap_on_every_kth_row_and_the_last_row_of_each_run_call():
    solver = PSRO("kuhn_poker", **TINY, **SAMPLED, exact_gap=False, approx_gap_every=3)
    solver.run(iterations=1)
    history = solver.run(iterations=3)   # rows 0 and 3 are due, 1 and 4 end a run call
    assert np.isfinite(history["approx_gap"]).tolist() == [True, True, False, True, True]
    # the measurement leaves the run unchanged: the same run without it
    quiet = PSRO("kuhn_poker", **TINY, **SAMPLED, exact_gap=False, approx_gap_every=None)
    plain = quiet.run(iterations=4)
    assert plain["approx_gap"].isna().all()
    assert plain["meta_gap"].tolist() == history["meta_gap"].tolist()
    assert np.array_equal(quiet.meta_game.total, solver.meta_game.total)


def test_warm_start_and_device_reach_the_oracle():
    assert PSRO("kuhn_poker", **TINY, **SAMPLED, warm_start=True).oracle.warm_start
    assert PSROConfig(oracle="ppo", warm_start=True, device="cpu").oracle_settings() == {"warm_start": True}


@pytest.mark.parametrize("fields, message", [
    (dict(game="coordinated_mp", oracle="ppo", evaluator="monte_carlo"), "^game: .*no information-state tensor"),
    (dict(oracle="ppo", oracle_options={"total_steps": 0}), "^oracle_options: total_steps must be a positive int"),
    (dict(oracle="ppo", approx_gap_options={"episodes": 1}), "^approx_gap_options: episodes must be an int >= 2"),
    (dict(oracle="ppo", approx_gap_options={"oracle": "exact"}), "^approx_gap_options: oracle must be a learned"),
    (dict(warm_start=True), "^warm_start: only the learned oracles"),
    (dict(device="cuda"), "^device: only the learned oracles"),
    (dict(device="gpu"), "^device: must be 'cpu', 'cuda' or 'cuda:N'"),
    (dict(exact_gap="yes"), "^exact_gap: must be auto, true or false"),
    (dict(max_histories=0), "^max_histories: must be an int >= 1"),
    (dict(approx_gap_every=-1), "^approx_gap_every: must be an int >= 0"),
])
def test_bad_learning_options_name_the_field(fields, message):
    with pytest.raises(ValueError, match=message):
        PSROConfig(**fields).validate()


def test_a_gpu_device_only_where_torch_sees_one():
    import torch

    config = PSROConfig(oracle="ppo", device="cuda")
    if torch.cuda.is_available():
        config.validate()
    else:
        with pytest.raises(ValueError, match=r"^device: 'cuda' needs a GPU that torch sees"):
            config.validate()


@pytest.mark.parametrize("game, meta_solver", [
    ("phantom_ttt", "nash"),                    # observation tensor [1, 108], flattened
    ("trade_comm", "mgcce"),                    # the default 10 items: CCE-JPSRO on a joint target
    ("goofspiel(num_cards=8)", "nash"),         # simultaneous moves, played natively
])
@pytest.mark.slow
def test_games_without_a_tree_train_neural_populations(game, meta_solver):
    solver = PSRO(game, meta_solver=meta_solver, **{**TINY, "approx_gap_options": {"episodes": 32, "total_steps": 256}},
                  evaluator="monte_carlo", episodes_per_profile=32, exact_gap=False)
    history = solver.run(iterations=1)
    assert solver.tree is None and [len(pop) for pop in solver.populations] == [2, 2]
    assert all(isinstance(pop.policies[1], NeuralPolicy) for pop in solver.populations)
    assert np.isfinite(history["approx_gap"].iloc[-1]) and np.isfinite(history["approx_gap_stderr"].iloc[-1])
    assert np.isfinite(history["meta_gap"]).all()


@pytest.mark.slow
def test_a_pettingzoo_environment_trains_from_a_config_file(tmp_path):
    from pettingzoo.classic import tictactoe_v3

    import games
    from psro.run.cli import main

    path = Path(__file__).resolve().parents[3] / "experiments" / "configs" / "tictactoe_pettingzoo.yaml"
    config = PSROConfig.from_yaml(path)
    assert config.game == "pettingzoo:tictactoe_v3" and config.oracle == "ppo"
    tiny = ["--set", "iterations=1", "--set", "episodes_per_profile=16", "--set", "rank_population=false",
            "--set", "oracle_options={total_steps: 256, num_envs: 16, num_steps: 16, eval_episodes: 16, hidden: [8]}",
            "--set", "approx_gap_options={episodes: 32, total_steps: 256}"]
    assert main(["run", str(path), "--out", str(tmp_path / "run"), *tiny]) == 0
    resumed = PSRO.resume(tmp_path / "run" / "checkpoint", progress=False)
    assert resumed.tree is None and all(isinstance(pop.policies[1], NeuralPolicy) for pop in resumed.populations)
    assert np.isfinite(resumed.history["approx_gap"].iloc[-1])
    # the object games.from_pettingzoo returns is a game too
    solver = PSRO(games.from_pettingzoo(tictactoe_v3.env()), **TINY, evaluator="monte_carlo", episodes_per_profile=16,
                  approx_gap_every=None)
    assert solver.tree is None and len(solver.run(iterations=1)) == 2
    with pytest.raises(ValueError, match="^oracle: 'exact' needs the game tree"):
        PSROConfig(game="pettingzoo:tictactoe_v3").validate()


DEAD_DQN = dict(oracle="dqn", progress=False, approx_gap_every=None,
                oracle_options={"learning_rate": 1e2, "total_steps": 1024, "eval_episodes": 64, "num_envs": 8,
                                "learning_starts": 64, "hidden": [16]})


def test_a_learner_that_failed_stops_the_run_naming_learning_rate():
    # (before: the run went on silently, its responses no better than the uniform policy)
    with pytest.raises(LearnerDiverged, match=r"^oracle_options: learning_rate: the dqn response of player 0 at "
                                         r"iteration 0 did not learn: its network answers every observation alike"):
        PSRO("kuhn_poker", **DEAD_DQN).run(iterations=1)
    with pytest.raises(ValueError, match=r"^oracle_options: learning_rate must be finite; got inf"):
        PSRO("kuhn_poker", oracle="ppo", oracle_options={"learning_rate": math.inf}, progress=False)


@pytest.mark.slow
def test_on_bad_response_warn_flags_every_failed_response_in_the_history_and_the_log(caplog):
    options = dict(DEAD_DQN, oracle_options={**DEAD_DQN["oracle_options"], "on_bad_response": "warn"})
    with caplog.at_level(logging.WARNING, logger="psro.oracles.learned.oracle"):
        history = PSRO("kuhn_poker", **options).run(iterations=1)
    assert history["response_ok"].tolist() == [False, False]
    warned = [r.getMessage() for r in caplog.records if "did not learn" in r.getMessage()]
    assert len(warned) == 4 and all("lower learning_rate (now 100.0)" in m for m in warned)   # 2 players x 2 rows
    healthy = PSRO("kuhn_poker", **dict(options, oracle_options={**options["oracle_options"], "learning_rate": 1e-3}))
    assert healthy.run(iterations=1)["response_ok"].tolist() == [True, True]


def test_exact_gap_on_dark_hex_comes_from_the_compiled_evaluator_every_kth_row_and_the_last():
    # (row 0 only when exact_gap_every is 1: it is the uniform profile's, minutes on the large boards)
    pytest.importorskip("numba")
    from psro.measures.exact import exact_nash_conv

    game = "dark_hex(num_rows=2,num_cols=3,gameversion=adh)"
    solver = PSRO(game, **TINY, **SAMPLED, exact_gap=True, exact_gap_every=2, approx_gap_every=None, seed=1)
    history = solver.run(iterations=3)
    assert solver.tree is None   # no tree walked: the compiled evaluator measures the gap
    assert [math.isnan(g) for g in history["gap"]] == [True, True, False, False]   # row 2 (k = 2), and the last
    assert (history["exact_gap_time"] > 0).tolist() == [False, False, True, True]
    assert (history["time_metric"] >= history["exact_gap_time"]).all()
    # the last row's gap: the NashConv of the populations mixed by the meta-strategy, and the tree's value
    pops = solver.seat_populations()
    profile = [(list(pop.policies), np.asarray(w) / np.sum(w))
               for pop, w in zip(pops, solver.state.eval_meta_strategy.marginals)]
    from psro.measures.exact import _tree_exploitability

    values, responses, _ = _tree_exploitability(pyspiel.load_game(game), profile)
    assert history["gap"].iloc[-1] == pytest.approx(sum(responses) - sum(values), rel=1e-9)
    assert history["gap"].iloc[-1] == exact_nash_conv(game, profile).nash_conv
    # each response's exact error on the measured rows: the step's response (it joins at the next iteration)
    # against its target, the other seat's population mixed by the meta-strategy, measured alone
    for p in range(2):
        assert [math.isnan(e) for e in history[f"response_error_{p}"]] == [True, True, False, False]
        target = list(profile)
        target[p] = solver.state.pending[p][0][0]
        error = exact_nash_conv(game, target).gains[p]
        assert history[f"response_error_{p}"].iloc[-1] == pytest.approx(error, rel=1e-9) and error > 0.01


def test_exact_gap_every_row_with_k_1_starts_at_the_uniform_profiles():
    pytest.importorskip("numba")
    game = "dark_hex(num_rows=2,num_cols=2,gameversion=adh)"
    history = PSRO(game, **TINY, **SAMPLED, exact_gap=True, approx_gap_every=None).run(iterations=1)
    assert history["gap"].iloc[0] == pytest.approx(0.8333333333333334, rel=1e-12)   # OpenSpiel's, uniform vs uniform
    assert np.isfinite(history["gap"]).all() and (history["exact_gap_time"] > 0).all()


def test_response_error_is_the_exact_distance_of_each_response_from_a_best_response():
    solver = PSRO("kuhn_poker", oracle="ppo", oracle_options={"total_steps": 1024, "eval_episodes": 50, "hidden": [8]},
                  approx_gap_every=None, progress=False, seed=4)
    history = solver.run(iterations=2)
    assert {"response_error_0", "response_error_1"} <= set(history.columns)
    # row 0's responses answered the initial (uniform) members and joined at iteration 1; recomputed from the tree
    from psro.oracles.exact import best_response
    from psro.oracles.learned.oracle import exact_value
    from psro.policies import realization_plans
    from psro.policies.population import tabular_policy

    tree = solver.tree
    for p in range(2):
        other = 1 - p
        plans = [None, None]
        plans[other] = realization_plans(tabular_policy(solver.populations[other].policies[0], tree, other)[None],
                                         tree.infostates[other])[0]
        response = tabular_policy(solver.populations[p].policies[1], tree, p)
        error = best_response(tree, p, plans).value - exact_value(tree, p, response, plans)
        assert history[f"response_error_{p}"].iloc[0] == pytest.approx(error, abs=1e-12)
        assert error > 0.01   # (1,024 PPO steps do not find Kuhn's best response)
    exact = PSRO("kuhn_poker", progress=False).run(iterations=1)
    assert not any(c.startswith("response_error") for c in exact.columns)   # exact oracles: no such column
