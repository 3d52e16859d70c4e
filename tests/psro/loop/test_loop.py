"""The PSRO loop on Kuhn and Leduc poker, checked against OpenSpiel's exploitability and expected returns."""

import itertools

import numpy as np
import pandas as pd
import pyspiel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import NormalFormGame
from psro import PSRO
from psro.evaluation.base import new_profile_blocks
from psro.loop.state import HISTORY_COLUMNS, untimed
from psro.measures.metrics import meta_strategy_nash_conv
from psro.meta.solvers import get_meta_solver, known_names
from psro.meta.warm_start_lp import WarmStartZeroSumLP
from psro.policies import to_openspiel_dict
from solvers import nash_conv
from solvers.nash.zero_sum import solve_zero_sum


def openspiel_nash_conv(solver: PSRO) -> float:
    """pyspiel.nash_conv of the aggregated meta-strategy policies (an independent C++ computation)."""
    table = {}
    for p, pol in enumerate(solver.aggregate_policies()):
        table.update(to_openspiel_dict(pol, solver.tree.infostates[p]))
    return pyspiel.nash_conv(solver.game, pyspiel.TabularPolicy(table))


def test_kuhn_reaches_nash_conv_1e_6():
    history = PSRO("kuhn_poker", meta_solver="nash", progress=False).run(iterations=50, target_gap=1e-6)
    assert history["gap"].iloc[-1] <= 1e-6
    assert len(history) < 50   # it stopped on the gap, not on the iteration cap
    # at the end the aggregate is a Nash equilibrium of Kuhn poker: player 0's value is -1/18
    solver = PSRO("kuhn_poker", progress=False)
    solver.run(target_gap=1e-6, iterations=50)
    assert solver.meta_strategy.values[0] == pytest.approx(-1 / 18, abs=1e-6)


def test_nash_conv_metric_matches_openspiel_every_iteration():
    solver = PSRO("kuhn_poker", progress=False)
    for _ in range(6):
        history = solver.run(iterations=1)
        reference = openspiel_nash_conv(solver)
        assert history["gap"].iloc[-1] == pytest.approx(reference, abs=1e-12)
        assert history["gap"].iloc[-1] == pytest.approx(
            meta_strategy_nash_conv(solver.tree, solver.populations, solver.meta_strategy.marginals), abs=1e-12)


def test_gap_is_exact_even_when_the_learned_oracle_is_poor():
    solver = PSRO("kuhn_poker", oracle="dqn", progress=False)

    class PoorOracle:   # a learned oracle that failed: it returns the uniform policy
        learned = True

        def respond(self, player, target, *, key=None):
            from psro.oracles import BestResponse
            from psro.policies import uniform_policy

            return BestResponse(player, uniform_policy(solver.tree.infostates[player]), 0.0)

    solver.oracle = PoorOracle()
    for _ in range(2):
        history = solver.run(iterations=1)
        assert history["gap"].iloc[-1] == pytest.approx(openspiel_nash_conv(solver), abs=1e-12)


def test_leduc_metric_and_meta_game_match_openspiel():
    solver = PSRO("leduc_poker", progress=False)
    history = solver.run(iterations=4)
    assert history["gap"].iloc[-1] == pytest.approx(openspiel_nash_conv(solver), abs=1e-10)
    # a few meta-game entries against pyspiel.expected_returns
    root = solver.game.new_initial_state()
    mean = solver.meta_game.mean()
    for i, j in [(0, 0), (4, 1), (2, 3)]:
        pops, infos = solver.populations, solver.tree.infostates
        profile = [pyspiel.TabularPolicy(to_openspiel_dict(pops[p].policies[k], infos[p]))
                   for p, k in enumerate((i, j))]
        assert np.abs(mean[:, i, j] - pyspiel.expected_returns(root, profile, -1, True)).max() <= 1e-12


def test_only_new_profiles_are_evaluated():
    solver = PSRO("kuhn_poker", progress=False)
    seen = []
    evaluate = solver.evaluator.evaluate

    def counting(populations, index, **where):
        seen.extend(itertools.product(*index))
        return evaluate(populations, index, **where)

    solver.evaluator.evaluate = counting
    history = solver.run(iterations=5, target_gap=0.0)
    sizes = history["population_0"] * history["population_1"]
    assert history["evaluations"].tolist() == sizes.tolist()
    assert len(seen) == len(set(seen)) == sizes.iloc[-1]   # every profile once, never twice
    assert solver.meta_game.is_complete() and solver.meta_game.exact.all()


def test_history_has_the_documented_columns():
    history = PSRO("kuhn_poker", progress=False).run(iterations=2)
    expected = ["iteration", "gap", "train_gap", "population_0", "population_1", *HISTORY_COLUMNS[3:]]
    assert list(history.columns) == expected
    assert history["iteration"].tolist() == [0, 1, 2]
    assert (history[[c for c in expected if c.startswith("time_")]] >= 0).all().all()
    assert history["wall_time"].is_monotonic_increasing
    # row 0 is the uniform profile, whose NashConv in Kuhn is 11/12 (0.5 - 1/8 + 5/12 + 1/8)
    assert history["gap"].iloc[0] == pytest.approx(11 / 12, abs=1e-14)


def test_run_continues_and_stopping_rules():
    solver = PSRO("kuhn_poker", progress=False)
    solver.run(iterations=2)
    history = solver.run(iterations=3)
    assert history["iteration"].tolist() == list(range(6))
    assert len(PSRO("kuhn_poker", progress=False).run(time_limit=0)) == 1
    with pytest.raises(ValueError, match="stopping rule"):
        solver.run()
    with pytest.raises(ValueError, match="iterations"):
        solver.run(iterations=-1)


def test_provenance_is_recorded():
    solver = PSRO("kuhn_poker", progress=False)
    solver.run(iterations=2)
    table = solver.populations[1].provenance_table()
    assert table["iteration"].tolist() == [0, 1, 2]
    assert table["oracle"].tolist() == ["initial", "exact", "exact"]
    assert table["meta_solver"].tolist() == ["", "nash", "nash"]
    assert np.isnan(table["value"].iloc[0]) and np.isfinite(table["value"].iloc[1:]).all()


def test_openspiel_backends_give_the_same_first_gaps_and_converge():
    ours = PSRO("kuhn_poker", progress=False).run(iterations=1)
    theirs = PSRO("kuhn_poker", oracle="openspiel", evaluator="openspiel", progress=False).run(
        iterations=30, target_gap=1e-6)
    assert theirs["gap"].iloc[0] == pytest.approx(ours["gap"].iloc[0], abs=1e-14)
    assert theirs["gap"].iloc[-1] <= 1e-6


def test_three_player_kuhn_with_uniform_meta_solver():
    solver = PSRO("kuhn_poker(players=3)", meta_solver="uniform", progress=False)
    history = solver.run(iterations=3)
    assert history["evaluations"].iloc[-1] == 4 ** 3
    assert history["gap"].iloc[-1] == pytest.approx(openspiel_nash_conv(solver), abs=1e-12)


def test_bad_input_raises_at_construction():
    with pytest.raises(ValueError, match="unknown meta_solver 'nahs'"):
        PSRO("kuhn_poker", meta_solver="nahs")
    with pytest.raises(ValueError, match=r"game: unknown OpenSpiel game 'kuhn_pokr'.*'kuhn_poker'"):
        PSRO("kuhn_pokr")
    with pytest.raises(ValueError, match="meta_solver='nash_zero_sum'.*3 players"):
        PSRO("kuhn_poker(players=3)", meta_solver="nash_zero_sum")
    with pytest.raises(ValueError, match="meta_solver='lemke_howson'.*3 players"):
        PSRO("kuhn_poker(players=3)", meta_solver="lemke_howson")
    with pytest.raises(ValueError, match="update_players"):
        PSRO("kuhn_poker", update_players="some")
    with pytest.raises(ValueError, match="br_selection"):
        PSRO("kuhn_poker", br_selection="best")
    with pytest.raises(ValueError, match="eval_meta_solver"):
        PSRO("kuhn_poker", meta_solver="nash", eval_meta_solver="mgcce")
    with pytest.raises(ValueError, match="oracle"):
        PSRO("kuhn_poker", oracle="sarsa")
    with pytest.raises(ValueError, match="evaluator"):
        PSRO("kuhn_poker", evaluator="sampled")
    with pytest.raises(TypeError, match="seed"):
        PSRO("kuhn_poker", seed="0")


def test_meta_solver_registry():
    assert {"nash", "uniform", "nash_zero_sum"} <= set(known_names())
    assert get_meta_solver("nash").method == "nash" and get_meta_solver("nash").warm_lp is not None
    assert get_meta_solver("mgcce").kind == "cce" and get_meta_solver("mgce").kind == "ce"
    assert get_meta_solver("alpharank").kind == "product"
    with pytest.raises(ValueError, match="Known meta-solvers: .*nash"):
        get_meta_solver("not_a_solver")


# ------------------------------------------------------- the warm-started LP
@settings(max_examples=15)
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(2, 6))
def test_warm_started_lp_matches_the_cold_lp_on_growing_games(seed, steps):
    rng = np.random.default_rng(seed)
    full = rng.integers(-3, 4, size=(2 + 3 * steps, 2 + 3 * steps)).astype(float)
    lp = WarmStartZeroSumLP()
    k1 = k2 = 2
    for step in range(steps):
        a = full[:k1, :k2]
        sol = lp.solve(a)
        assert sol.warm == (step > 0)
        _, _, value = solve_zero_sum(a)
        assert sol.value == pytest.approx(value, abs=1e-9)   # the value of a zero-sum game is unique
        game = NormalFormGame(np.stack([a, -a]))
        assert nash_conv(game, [sol.x, sol.y]) <= 1e-9
        k1 += int(rng.integers(0, 3))
        k2 += int(rng.integers(1, 3))


def test_warm_started_lp_rebuilds_when_old_entries_change():
    lp = WarmStartZeroSumLP()
    lp.solve(np.array([[1.0, 0.0], [0.0, 1.0]]))
    sol = lp.solve(np.array([[2.0, 0.0, 1.0], [0.0, 1.0, 1.0]]))
    assert not sol.warm
    # column 2 is dominated for the column player; the value of [[2, 0], [0, 1]] is 2/3
    assert sol.value == pytest.approx(2 / 3, abs=1e-12)


def test_nash_and_cold_nash_zero_sum_both_converge_on_kuhn():
    for name in ("nash", "nash_zero_sum"):
        history = PSRO("kuhn_poker", meta_solver=name, progress=False).run(iterations=40, target_gap=1e-6)
        assert history["gap"].iloc[-1] <= 1e-6, name


@given(sizes=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2)), min_size=1, max_size=3))
def test_new_profile_blocks_cover_each_new_profile_once(sizes):
    old = [o for o, _ in sizes]
    new = [o + d for o, d in sizes]
    covered = [p for block in new_profile_blocks(old, new) for p in itertools.product(*block)]
    expected = [p for p in itertools.product(*map(range, new)) if any(i >= o for i, o in zip(p, old))]
    assert sorted(covered) == sorted(expected) and len(covered) == len(set(covered))


# -- One config (issue 11): PSRO(PSROConfig(...)) is the constructor, the keyword form builds the config ---------------


@pytest.mark.parametrize("fields", [dict(game="kuhn_poker", meta_solver="nash"),
                                    dict(game="kuhn_poker(players=3)", meta_solver="mgce", br_selection="novel"),
                                    dict(game="leduc_poker", meta_solver="uniform", update_players="cycle")])
def test_the_config_and_the_keyword_form_give_identical_histories(fields):
    from psro import PSROConfig

    by_config = PSRO(PSROConfig(**fields, progress=False)).run(iterations=3)
    game = fields.pop("game")
    by_keywords = PSRO(game, **fields, progress=False).run(iterations=3)
    pd.testing.assert_frame_equal(untimed(by_config), untimed(by_keywords))


def test_the_keyword_form_refuses_what_the_config_refuses():
    from psro import PSROConfig

    with pytest.raises(ValueError, match="unknown config field 'meta_solvr'. Did you mean 'meta_solver'"):
        PSRO("kuhn_poker", meta_solvr="nash")
    with pytest.raises(TypeError, match="give the options in the PSROConfig"):
        PSRO(PSROConfig(), meta_solver="nash")
    with pytest.raises(ValueError, match="^prune_dominated: must be one of"):
        PSRO("kuhn_poker", prune_dominated="mixed")


# -- prune_dominated: dominated meta-game policies are removed before the meta-solve ----------------------------------
def test_pruning_removes_the_dominated_uniform_policy_in_the_prisoners_dilemma():
    from games import catalog

    # After one iteration each population is (uniform, defect). Against any column the uniform row pays the mean
    # of cooperate and defect, which is below defect's (-0.5 < 0 and -2.5 < -2), so it is strictly dominated.
    solver = PSRO(catalog.prisoners_dilemma(), prune_dominated="strict", progress=False)
    history = solver.run(iterations=1)
    eq = solver.meta_strategy
    assert eq.info["dominance_eliminated"] == 2
    assert [m.tolist() for m in eq.marginals] == [[0.0, 1.0], [0.0, 1.0]]
    assert history["gap"].tolist() == [1.0, 0.0]   # uniform vs uniform: each player gains 1 by defecting
    assert solver.meta_solver.warm_lp is None and solver.meta_solver.prune == "strict"


def test_pruning_keeps_kuhn_psro_exact():
    pruned = PSRO("kuhn_poker", prune_dominated="weak", eval_meta_solver="nash_zero_sum", progress=False)
    history = pruned.run(iterations=6)
    assert pruned.eval_meta_solver.prune == "weak" and "dominance_eliminated" in pruned.meta_strategy.info
    # the gap is the exact NashConv of the pruned meta-strategy (pruned policies get zero weight)
    assert history["gap"].iloc[-1] == pytest.approx(openspiel_nash_conv(pruned), abs=1e-12)


# -- efce_gap / efcce_gap columns for JPSRO ----------------------------------------------------------------------------
def test_jpsro_history_has_the_extensive_form_gaps_of_the_eval_meta_strategy():
    from psro.measures.efce_gaps import meta_strategy_extensive_form_gaps

    solver = PSRO("kuhn_poker(players=3)", meta_solver="mgcce", extensive_form_gaps=True, progress=False)
    history = solver.run(iterations=2)
    direct = meta_strategy_extensive_form_gaps(solver.tree, solver.populations, solver.eval_meta_strategy)
    assert history["efce_gap"].iloc[-1] == direct.efce and history["efcce_gap"].iloc[-1] == direct.efcce
    # NFCCE <= EFCCE <= EFCE, and the normal-form coarse gap is CCE-JPSRO's own gap column
    assert history["gap"].iloc[-1] == pytest.approx(direct.nfcce, abs=1e-12)
    assert (history["gap"] <= history["efcce_gap"] + 1e-12).all()
    assert (history["efcce_gap"] <= history["efce_gap"] + 1e-12).all()
    for off in (PSRO("kuhn_poker", extensive_form_gaps=True, progress=False),      # PSRO: not a correlated device
                PSRO("kuhn_poker(players=3)", meta_solver="mgcce", progress=False)):  # off by default
        assert off.run(iterations=1)[["efce_gap", "efcce_gap"]].isna().all().all()


# -- issue 26, item 7: starting points -------------------------------------------------------------------------------
def test_rock_paper_scissors_from_rock_rock_shows_its_dynamics():
    from games import catalog

    history = PSRO(catalog.rock_paper_scissors(), initial_policies=[[0], [0]], progress=False).run(iterations=3)
    # (R, R): each player gains 1 by paper, NashConv 2; {R, P} each: the meta-Nash (P, P) loses 1 to scissors
    # on both sides, NashConv 2; then every pure strategy is in and the uniform meta-Nash has no gap
    assert history["gap"].tolist()[:3] == pytest.approx([2.0, 2.0, 0.0], abs=1e-9)
    assert history["population_0"].tolist() == [1, 2, 3, 3]
    uniform_start = PSRO(catalog.rock_paper_scissors(), progress=False).run(iterations=1)
    assert uniform_start["gap"].tolist() == pytest.approx([0.0, 0.0], abs=1e-9)   # (why a starting point matters)


def test_initial_policies_take_tabular_policies_and_refuse_what_is_not_one(kuhn):
    from psro.policies import uniform_policy

    always_first = np.zeros(kuhn.infostates[0].legal_mask.shape)
    always_first[:, 0] = 1.0
    solver = PSRO("kuhn_poker", initial_policies=[[always_first, uniform_policy(kuhn.infostates[0])],
                                                  [uniform_policy(kuhn.infostates[1])]], progress=False)
    solver.run(iterations=1)
    assert [len(p) for p in solver.populations] == [3, 2]
    with pytest.raises(ValueError, match="initial_policies: player 0 decides at 6 information states"):
        PSRO("kuhn_poker", initial_policies=[[0], [0]], progress=False)
    with pytest.raises(ValueError, match=r"initial_policies: give one list of policies per player \(2 lists\)"):
        PSRO("kuhn_poker", initial_policies=[[always_first]], progress=False)
    with pytest.raises(ValueError, match="initial_policies: player 1's pure strategy 3 is not one of its actions"):
        PSRO("matrix_rps", initial_policies=[[0], [3]], progress=False)
    with pytest.raises(ValueError, match="initial_policies: needs tabular populations"):
        PSRO("kuhn_poker", initial_policies=[[0], [0]], oracle="ppo", progress=False)
