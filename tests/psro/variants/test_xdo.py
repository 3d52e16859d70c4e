"""XDO and NXDO (psro/variants/xdo.py, nxdo.py) and CFR+ on the restricted game (restricted_game.py)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pyspiel
import pytest

import psro
from psro.oracles.exact import best_response
from psro.policies import realization_plans, uniform_policy
from psro.sequence_form.game_tree import build_game_tree
from psro.variants.nxdo import NXDO, MetaPolicy
from psro.variants.restricted_game import cfr_plus, counterfactual_values, restricted_tree
from psro.variants.xdo import XDO, XDOOptions

ROOT = Path(__file__).resolve().parents[3]
TINY_NXDO = dict(oracle="ppo", evaluator="monte_carlo", episodes_per_profile=32, approx_gap_every=None,
                 oracle_options={"total_steps": 256, "num_envs": 16, "num_steps": 16, "eval_episodes": 32,
                                 "hidden": [8]},
                 algorithm_options={"nfsp": {"steps_per_iteration": 256, "num_envs": 16, "hidden": [8],
                                             "learning_starts": 64, "batch_size": 32}})


def test_xdo_on_kuhn_reaches_nash_conv_zero_in_a_few_iterations():
    from open_spiel.python.algorithms import exploitability

    xdo = XDO("kuhn_poker", progress=False, algorithm_options={"precision": 1e-4})
    history = xdo.run(target_gap=1e-4, iterations=10)
    assert history["gap"].iloc[-1] <= 1e-4 and len(history) <= 6
    # the gap is the restricted solution's NashConv in the full game, as OpenSpiel measures the output
    assert abs(exploitability.nash_conv(xdo.game, xdo.openspiel_policy()) - history["gap"].iloc[-1]) < 1e-9
    assert xdo.converged == history["iteration"].iloc[-1]
    assert history["gap"].iloc[0] == pytest.approx(11 / 12)   # row 0: the uniform policy, PSRO's meta-strategy
    # the population is the best responses (for rankings), and the meta-game between them is evaluated
    assert xdo.meta_game.shape == tuple(len(p) for p in xdo.populations)
    assert all(c <= 1e-4 for c in xdo.state.extra.restricted_gap[1:])


def test_cfr_plus_on_a_hand_checked_restricted_game():
    """Rock-paper-scissors with player 1 restricted to rock and paper: player 0 plays paper 2/3 and scissors 1/3,
    player 1 rock 1/3 and paper 2/3 (each makes the other indifferent), value 1/3 for player 0."""
    tree = build_game_tree(pyspiel.load_game("matrix_rps"))
    small = restricted_tree(tree, [np.array([[True, True, True]]), np.array([[True, True, False]])])
    solution = cfr_plus(small, precision=1e-4)
    assert solution.nash_conv <= 1e-4
    np.testing.assert_allclose(solution.policies[0], [[0, 2 / 3, 1 / 3]], atol=1e-3)
    np.testing.assert_allclose(solution.policies[1], [[1 / 3, 2 / 3, 0]], atol=1e-3)
    np.testing.assert_allclose(solution.values, [1 / 3, -1 / 3], atol=1e-4)
    # both restricted to rock and paper: paper, pure; in the full game scissors then gains 1 per player
    both = cfr_plus(restricted_tree(tree, [np.array([[True, True, False]])] * 2), precision=1e-9)
    np.testing.assert_allclose([both.policies[0][0], both.policies[1][0]], [[0, 1, 0]] * 2, atol=1e-4)
    gains = [best_response(tree, p, both.plans).value - both.values[p] for p in range(2)]
    np.testing.assert_allclose(gains, [1.0, 1.0], atol=1e-4)


def test_counterfactual_values_of_a_best_response_give_its_value():
    tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    info0, info1 = tree.infostates
    y = realization_plans(uniform_policy(info1)[None], info1)[0]
    br = best_response(tree, 0, [None, y])
    q = counterfactual_values(tree, 0, br.policy, y)
    roots = info0.levels[0]
    assert (br.policy[roots] * q[roots]).sum() == pytest.approx(br.value)
    # at every infostate the best response's action is a best counterfactual action
    best = np.where(info0.legal_mask, q, -np.inf).max(axis=1)
    assert np.allclose((br.policy * q).sum(axis=1), best)


@pytest.mark.parametrize("game, message", [
    ("kuhn_poker(players=3)", "kuhn_poker(players=3) has 3 players"),
    ("matrix_pd", "is general-sum"),
])
def test_xdo_refuses_games_that_are_not_two_player_zero_sum(game, message):
    with pytest.raises(ValueError, match=r"game: XDO is defined for two-player.*" + re.escape(message)):
        XDO(game, progress=False)


@pytest.mark.parametrize("precision", [0, -1e-3, float("nan")])
def test_xdo_refuses_a_precision_that_is_not_positive(precision):
    with pytest.raises(ValueError, match="algorithm_options: precision must be > 0"):
        XDO("kuhn_poker", progress=False, algorithm_options={"precision": precision})
    with pytest.raises(ValueError, match="algorithm_options: XDO has no option 'precison'"):
        XDOOptions.from_dict({"precison": 1e-3})


def test_xdo_refuses_a_correlated_meta_solver():
    with pytest.raises(ValueError, match="meta_solver: XDO"):
        XDO("kuhn_poker", meta_solver="mgcce", progress=False)


def test_xdo_is_a_registered_algorithm_with_a_tabular_config():
    config = psro.PSROConfig.from_yaml(ROOT / "experiments" / "configs" / "leduc_xdo.yaml")
    assert psro.algorithm_class(config.algorithm) is XDO and psro.XDO is XDO
    assert XDOOptions.from_dict(config.algorithm_options).precision == 1e-4


def test_nxdo_on_leduc_from_its_config_with_tiny_budgets():
    config = psro.PSROConfig.from_yaml(ROOT / "experiments" / "configs" / "leduc_nxdo.yaml")
    assert config.algorithm == "xdo" and config.oracle == "ppo"
    config = config.replace(progress=False, **{k: v for k, v in TINY_NXDO.items() if k not in ("oracle",)})
    # the registry picks the class by the oracle; XDO(...) with a learned oracle still builds NXDO, with a warning
    assert psro.algorithm_class("xdo", config.oracle) is NXDO and psro.algorithm_class("xdo", "exact") is XDO
    with pytest.warns(DeprecationWarning, match=r"XDO\(\.\.\.\) with the learned oracle 'ppo' builds NXDO"):
        assert type(XDO(config)) is NXDO
    nxdo = NXDO(config)
    assert type(XDO("kuhn_poker", progress=False)) is XDO
    history = nxdo.run(iterations=2)
    assert np.isfinite(history["gap"]).all() and history["gap"].iloc[-1] < history["gap"].iloc[0]
    # the restricted solution mixes the members with the NFSP meta-policy; its decisions are environment steps
    solution = nxdo.restricted_solution()
    assert all(isinstance(policy, MetaPolicy) and len(policy.members) == 3 for policy in solution)
    assert nxdo.state.extra.nfsp_decisions == [0, 256, 256]
    assert history["env_steps"].iloc[-1] >= 2 * 256 + 4 * 256
    output = nxdo.aggregate_policies()
    assert [o.shape for o in output] == [(468, 3), (468, 3)] and np.allclose(output[0].sum(axis=1), 1.0)


@pytest.mark.slow
def test_nxdo_approx_gap_is_a_lower_bound_of_its_restricted_solutions_gap(caplog):
    fields = dict(TINY_NXDO, approx_gap_every=1, approx_gap_options={"episodes": 200, "total_steps": 512})
    history = XDO("kuhn_poker", progress=False, **fields).run(iterations=1)
    # the restricted solution's (NXDO's output's) gap, not the meta-game mixture's: below its exact NashConv
    assert (history["approx_gap"] <= history["gap"] + 3 * history["approx_gap_stderr"]).all()
    assert (history["approx_gap"] > 0.2).all() and (history["approx_gap_time"] > 0).all()
    # a share only the first measurement fits (its cost unknown before it): the next due row is skipped, the last
    # measured all the same
    fields["approx_gap_options"]["share"] = 1e-9
    with caplog.at_level("WARNING", logger="psro"):
        history = XDO("kuhn_poker", progress=False, **fields).run(iterations=2)
    assert np.isfinite(history["approx_gap"]).tolist() == [True, False, True]
    warned = [r.getMessage() for r in caplog.records if "approx_gap_every=1 asks for" in r.getMessage()]
    assert len(warned) == 1 and warned[0].startswith("approx_gap: 1 of the rows approx_gap_every=1 asks for was not")


def test_xdo_interrupted_run_resumes_to_the_uninterrupted_run(tmp_path, interrupt_after, same_run):
    interrupt_after("from psro.variants.xdo import XDO\n"
               f"XDO('kuhn_poker', progress=False, checkpoint_dir={str(tmp_path)!r}).run(iterations=10**6)\n",
               tmp_path, 2)
    resumed = XDO.resume(tmp_path, progress=False)
    done = resumed.iteration
    assert done >= 2
    resumed.run(iterations=2)
    straight = XDO("kuhn_poker", progress=False)
    straight.run(iterations=done + 2)
    same_run(straight, resumed)
    assert all(np.array_equal(a, b) for a, b in zip(straight.aggregate_policies(), resumed.aggregate_policies()))


def test_nxdo_interrupted_run_resumes_to_the_uninterrupted_run(tmp_path, interrupt_after):
    fields = ", ".join(f"{k}={v!r}" for k, v in TINY_NXDO.items())
    interrupt_after("from psro.variants.xdo import XDO\n"
               f"XDO('kuhn_poker', progress=False, {fields}, checkpoint_dir={str(tmp_path)!r}).run(iterations=100)\n",
               tmp_path, 1)
    resumed = XDO.resume(tmp_path, progress=False)
    done = resumed.iteration
    assert done >= 1
    resumed.run(iterations=1)
    straight = XDO("kuhn_poker", progress=False, **TINY_NXDO)
    straight.run(iterations=done + 1)
    _same_learned_run(straight, resumed)


def _same_learned_run(a, b) -> None:
    """Histories (timing aside), members' weights, meta-games, ``state.extra`` and outputs equal bit for bit."""
    import pandas as pd

    from psro.loop.state import untimed
    from psro.policies.codec import encode_policy

    pd.testing.assert_frame_equal(untimed(a.history), untimed(b.history), check_exact=True)
    for pa, pb in zip(a.populations, b.populations):
        assert len(pa) == len(pb)
        for x, y in zip(pa.policies, pb.policies):
            (dx, ax), (dy, ay) = encode_policy(x), encode_policy(y)
            assert dx == dy and all(np.array_equal(ax[k], ay[k]) for k in ax)
    for name in ("count", "total", "total_sq", "exact"):
        assert np.array_equal(getattr(a.meta_game, name), getattr(b.meta_game, name))
    assert a.state.extra == b.state.extra
    assert all(np.array_equal(x, y) for x, y in zip(a.aggregate_policies(), b.aggregate_policies()))
