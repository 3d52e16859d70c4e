"""League training (psro.family.league): PFSP weightings and decayed win rates against hand-derived values, the
league's mixtures and snapshot / restart rules, a tiny run on Kuhn poker (its gap is OpenSpiel's NashConv of the
main agents' latest snapshots), and a run killed and resumed from its checkpoint bit for bit."""

import math

import numpy as np
import pytest
from open_spiel.python.algorithms import exploitability

from psro import PSRO
from psro.family.league import League, LeagueOptions, decayed_update, pfsp_weights, snapshot_rule, win_rates
from psro.loop.state import untimed
from psro.policies.acting import UniformPolicy
from psro.policies.population import Provenance

TINY = dict(oracle="ppo", oracle_options={"total_steps": 256, "num_envs": 8, "num_steps": 16, "eval_episodes": 16,
                                          "hidden": [16]},
            algorithm_options={"win_rate_episodes": 24, "snapshot_win_rate": 0.6}, seed=3, progress=False,
            approx_gap_options={"total_steps": 256, "episodes": 200})


class Killed(Exception):
    pass


# ---------------------------------------------------------------------------------------------- pure functions
@pytest.mark.parametrize("weighting, expected", [
    ("hard", [0.9, 0.6, 0.0]),            # 1 - x
    ("squared", [0.81, 0.36, 0.0]),       # (1 - x)^2
    ("variance", [0.09, 0.24, 0.0]),      # x (1 - x)
    ("capped", [0.5, 0.5, 0.0]),          # min(0.5, 1 - x)
])
def test_pfsp_weightings_match_the_formulas(weighting, expected):
    rates = [0.1, 0.4, 1.0]
    want = np.array(expected) / sum(expected)
    assert np.allclose(pfsp_weights(rates, weighting), want, rtol=0, atol=1e-15)


def test_pfsp_is_uniform_when_every_weight_vanishes_and_rejects_bad_input():
    assert pfsp_weights([0.0, 1.0], "variance").tolist() == [0.5, 0.5]
    with pytest.raises(ValueError, match="weighting"):
        pfsp_weights([0.5], "linear")
    with pytest.raises(ValueError, match="win rates in"):
        pfsp_weights([1.5], "hard")


def test_decayed_counts_by_hand():
    # three results 1, 0.5, 0 with decay 0.9 from (wins, games) = (1, 2):
    # wins: 0.9^3 * 1 + 0.9^2 * 1 + 0.9 * 0.5 + 0 = 0.729 + 0.81 + 0.45; games: 0.9^3 * 2 + 0.81 + 0.9 + 1
    wins, games = decayed_update(1.0, 2.0, [1.0, 0.5, 0.0], 0.9)
    assert math.isclose(wins, 1.989, abs_tol=1e-12) and math.isclose(games, 4.168, abs_tol=1e-12)
    # in order: the same as one result at a time
    step = (1.0, 2.0)
    for outcome in (1.0, 0.5, 0.0):
        step = decayed_update(*step, [outcome], 0.9)
    assert np.allclose(step, (wins, games), rtol=0, atol=1e-12)
    assert decayed_update(3.0, 4.0, [], 0.5) == (3.0, 4.0)
    assert win_rates({"m0": [1.989, 4.168]}, ["m0", "m9"], prior=0.5).tolist() == [1.989 / 4.168, 0.5]


def test_snapshot_and_restart_rules():
    options = LeagueOptions(snapshot_win_rate=0.7, league_exploiter_reset=0.25)
    assert snapshot_rule("main", 0.7, 0, options, 1000, draw=0.0) == (True, False)        # win rate: main stays
    assert snapshot_rule("main", 0.2, 1000, options, 1000, draw=0.0) == (True, False)     # steps
    assert snapshot_rule("main", 0.69, 999, options, 1000, draw=0.0) == (False, False)
    assert snapshot_rule("main_exploiter", 0.9, 0, options, 1000, draw=0.99) == (True, True)   # always restarts
    assert snapshot_rule("main_exploiter", 0.5, 10, options, 1000, draw=0.0) == (False, False)
    assert snapshot_rule("league_exploiter", 0.9, 0, options, 1000, draw=0.2499) == (True, True)
    assert snapshot_rule("league_exploiter", 0.9, 0, options, 1000, draw=0.25) == (True, False)


def test_options_name_the_bad_key_and_value():
    with pytest.raises(ValueError, match="League has no option 'snapshot_rate'"):
        LeagueOptions.from_dict({"snapshot_rate": 0.5})
    with pytest.raises(ValueError, match="main_agents must be an int >= 1"):
        LeagueOptions(main_agents=0)
    with pytest.raises(ValueError, match="self_play \\+ pfsp must be at most 1"):
        LeagueOptions(self_play=0.6, pfsp=0.5)
    with pytest.raises(ValueError, match="decay must be a number in \\(0, 1\\]"):
        LeagueOptions(decay=0.0)
    with pytest.raises(ValueError, match="main_exploiter_oracle"):
        LeagueOptions(main_exploiter_oracle="exact")
    with pytest.raises(ValueError, match="oracle: League trains networks"):
        League("kuhn_poker", progress=False)
    with pytest.raises(ValueError, match="needs oracle='dqn'"):
        League("kuhn_poker", oracle="ppo", progress=False, algorithm_options={"main_exploiter_oracle": "minimax_dqn"})
    with pytest.raises(ValueError, match="eval_meta_solver: League outputs its main agents' latest snapshots"):
        League("kuhn_poker", oracle="ppo", eval_meta_solver="uniform", progress=False)
    with pytest.raises(ValueError, match="warm_start"):
        League("kuhn_poker", oracle="ppo", warm_start=True, progress=False)


# ---------------------------------------------------------------------------------------------- the mixtures
def league_with_history():
    """A League (not run) whose seat 1 holds [initial, main snapshot, main-exploiter snapshot], with hand-set
    win rates of seat 0's agents."""
    league = League("kuhn_poker", oracle="ppo", progress=False)
    league._init_extra()
    extra = league.state.extra
    for p in range(2):
        pop = league.state.populations[p]
        pop.add([UniformPolicy(2)] * 3, [Provenance(0, "initial")] * 3)
    extra.members[1] += [["main", 0], ["main_exploiter", 1]]
    extra.last_snapshot[1] = [1, 2, 0]
    rates = {"m0": [1.0, 1.0], "m1": [1.0, 2.0], "m2": [0.2, 1.0]}   # x = 1, 0.5, 0.2
    extra.counts[0] = [dict(rates), {"a0": [0.05, 1.0]}, dict(rates)]
    return league


def test_main_agent_mixture_by_hand():
    league = league_with_history()
    pool, weights, keys = league._mixture(0, 0, [[None] * 3, [None] * 3])
    # PFSP "squared" over all three (0, 0.25, 0.64) with mass 0.5; verification 0.15: the exploiter snapshot
    # (x = 0.2 < 0.3) and the forgotten main (x = 0.5 < 0.7), 0.075 each; self-play 0.35 on the current main,
    # which has no network yet: its latest snapshot, member 1
    expected = [0.0, 0.5 * 0.25 / 0.89 + 0.075 + 0.35, 0.5 * 0.64 / 0.89 + 0.075]
    assert keys == ["m0", "m1", "m2"] and len(pool) == 3
    assert np.allclose(weights, expected, rtol=0, atol=1e-12)
    # with a current network, self-play goes to it (a fourth pool entry, key a0)
    network = UniformPolicy(2)
    pool, weights, keys = league._mixture(0, 0, [[None] * 3, [network, None, None]])
    assert keys[-1] == "a0" and pool[-1] is network and math.isclose(weights[-1], 0.35)


def test_exploiter_mixtures_by_hand():
    league = league_with_history()
    none = [[None] * 3, [None] * 3]
    # main exploiter: win rate 0.05 < 0.1 against the current main -> PFSP "variance" over its snapshots (member 1)
    _, weights, _ = league._mixture(0, 1, none)
    assert weights.tolist() == [0.0, 1.0, 0.0]
    league.state.extra.counts[0][1] = {"a0": [0.5, 1.0]}   # 0.5: it plays the current main (its snapshot here)
    _, weights, _ = league._mixture(0, 1, none)
    assert weights.tolist() == [0.0, 1.0, 0.0]
    league.state.extra.last_snapshot[1][0] = 2
    assert league._mixture(0, 1, none)[1].tolist() == [0.0, 0.0, 1.0]
    # league exploiter: PFSP "capped" over all: min(0.5, 1 - x) = (0, 0.5, 0.5)
    assert league._mixture(0, 2, none)[1].tolist() == [0.0, 0.5, 0.5]


# ---------------------------------------------------------------------------------------------- runs
def test_a_tiny_league_on_kuhn_grows_by_snapshots_and_reports_its_main_agents(reference):
    league = reference   # (three iterations of TINY; only read here)
    history = league.history
    extra = league.state.extra
    sizes = [len(pop) for pop in league.populations]
    assert [len(members) for members in extra.members] == sizes
    assert history["population_0"].iloc[0] == 1 and history["population_0"].iloc[-1] <= 1 + 3 * 3
    assert extra.learner_steps == 4 * 2 * 3 * 256   # 4 calls (iterations 0, 1, 2, 3) x 2 seats x 3 agents
    assert len(league.state.pending[0]) == 3   # every agent's newest weights wait there
    # the gap is the exact NashConv of the main agents' latest snapshots (OpenSpiel's, on their tabular form)
    mains = [extra.last_snapshot[p][0] for p in range(2)]
    assert league.eval_meta_strategy.marginals[0][mains[0]] == 1.0
    nash_conv = exploitability.nash_conv(league.game, league.openspiel_policy(members=mains))
    assert math.isclose(history["gap"].iloc[-1], nash_conv, rel_tol=1e-9, abs_tol=1e-12)
    assert history["gap"].iloc[0] == pytest.approx(0.916667, abs=1e-6)   # the uniform policies
    # a config names the algorithm; PSRO.resume-style dispatch finds the class
    assert league.config.algorithm == "league" and type(league).algorithm == "league"


@pytest.fixture(scope="module")
def reference():
    """The uninterrupted run the killed ones must equal."""
    solver = League("kuhn_poker", **TINY)
    solver.run(iterations=3)
    return solver


def assert_same_league_run(reference, resumed):
    assert untimed(reference.history).equals(untimed(resumed.history))
    assert reference.state.extra == resumed.state.extra

    def weights(solver):   # the population's networks and every agent's newest weights (waiting in pending)
        members = [m for pop in solver.populations for m in pop.policies] + \
            [pol for pending in solver.state.pending for pol, _ in pending]
        return [{k: v.tobytes() for k, v in m.to_arrays().items()} if hasattr(m, "to_arrays") else None
                for m in members]

    assert weights(reference) == weights(resumed)
    for name in ("count", "total", "total_sq"):
        assert np.array_equal(getattr(reference.meta_game, name), getattr(resumed.meta_game, name))


@pytest.mark.slow
def test_league_killed_after_iteration_2_resumes_bit_for_bit(tmp_path, reference):
    def die_after_2(row):
        if row["iteration"] == 2:
            raise Killed   # after the row of iteration 2, before its checkpoint

    first = League("kuhn_poker", **TINY, checkpoint_dir=tmp_path)
    with pytest.raises(Killed):
        first.run(iterations=3, callback=die_after_2)
    resumed = PSRO.resume(tmp_path, progress=False)   # the checkpoint names its algorithm
    assert type(resumed) is League and resumed.iteration == 1
    resumed.run(iterations=2)
    assert_same_league_run(reference, resumed)


@pytest.mark.slow
def test_league_killed_inside_an_evaluation_resumes_bit_for_bit(tmp_path, reference):
    # a checkpoint written while the new snapshots are evaluated: the agents' weights are then carried in pending
    first = League("kuhn_poker", **TINY, checkpoint_dir=tmp_path)
    killed = []

    def checkpoint_then_die(solver, index):
        if solver.iteration == 2 and not killed:
            solver.save_checkpoint()
            killed.append(index)
            raise Killed

    first.on_evaluation_batch.append(checkpoint_then_die)
    with pytest.raises(Killed):
        first.run(iterations=3)
    assert killed, "iteration 2 evaluated no new snapshot: the test needs one (change TINY's seed)"
    resumed = PSRO.resume(tmp_path, progress=False)
    assert resumed.state.in_iteration and resumed.iteration == 2
    resumed.run(iterations=1)
    assert_same_league_run(reference, resumed)


def test_main_exploiters_can_train_with_the_minimax_exploiter():
    league = League("kuhn_poker", oracle="dqn", progress=False, seed=0, approx_gap_every=None,
                    oracle_options={"total_steps": 200, "num_envs": 8, "eval_episodes": 8, "hidden": [8],
                                    "learning_starts": 50},
                    algorithm_options={"win_rate_episodes": 8, "main_exploiter_oracle": "minimax_dqn"})
    exploiter, asked = league._exploiter_oracle, []
    respond = exploiter.respond
    exploiter.respond = lambda player, target, key=None: asked.append((player, key)) or respond(player, target,
                                                                                               key=key)
    league.run(iterations=0)   # the initial population and one call of every agent
    assert type(exploiter).__name__ == "MinimaxOracle"
    assert asked == [(0, (0, 1)), (1, (0, 1))]   # only the main exploiters (agent 1 of each seat)
    assert league.state.extra.learner_steps == 2 * 3 * 200


def test_the_shipped_config_holds_league_options():
    from pathlib import Path

    from psro.config.model import PSROConfig

    config = PSROConfig.from_yaml(Path(__file__).resolve().parents[3] / "experiments" / "configs"
                                  / "league_leduc.yaml")
    assert config.algorithm == "league"
    options = LeagueOptions.from_dict(config.algorithm_options)
    assert options.roles() == ["main", "main_exploiter", "league_exploiter"] and options.snapshot_steps == 16384


def test_a_league_of_more_agents_than_memory_holds_is_refused_before_any_is_made(monkeypatch):
    monkeypatch.setenv("PSRO_MAX_MEMORY", "1G")
    with pytest.raises(ValueError, match=r"100000002 agents per seat needs about .* memory limit of 1 GiB"):
        LeagueOptions(main_agents=100_000_000)
    assert LeagueOptions(main_agents=3).roles()[:3] == ["main"] * 3
