"""The approximate gap: with exact stand-in best responses and deterministic play it is the meta-game's gap
(NashConv, CCE gap, CE gap computed by hand); with noisy play its standard error is the Monte Carlo one."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import NormalFormGame, catalog
from psro.measures.approx_gap_schedule import approx_gap_mode
from psro.measures.approx_gap_settings import approx_gap_settings
from psro.measures.approximate_gap import approximate_gap, approximate_seed, mixture_returns
from psro.oracles import BestResponse
from solvers import make_equilibrium

# a stand-in "game": a policy is a pure action of a normal-form game, play returns its payoffs exactly
CHICKEN = catalog.chicken()
PAYOFFS = CHICKEN.payoffs   # (2, 2, 2)
POPS = [[0, 1], [0, 1]]


def play(game, profile, count, seed):
    return np.tile(PAYOFFS[:, profile[0], profile[1]], (count, 1))


def noisy(deal_scale, action_scale, rng):
    """``play`` plus two noises per episode and seat: the deal's (a function of the seed, as chance is in paired
    episodes) and the actions' (independent draws from ``rng``)."""
    def noisy_play(game, profile, count, seed):
        deal = np.random.default_rng(seed).normal(0, deal_scale, size=(count, 2))
        return play(game, profile, count, seed) + deal + rng.normal(0, action_scale, size=(count, 2))

    return noisy_play


def respond(player, target, index):
    """The exact pure best response to a product or joint target of the stand-in game."""
    values = np.zeros(2)
    if target.is_joint:
        for row, w in zip(target.profiles, target.weights):
            for a in range(2):
                profile = list(row)
                profile[player] = a
                values[a] += w * PAYOFFS[player][tuple(profile)]
    else:
        other = np.asarray(target.mixtures[1 - player])
        values = PAYOFFS[0] @ other if player == 0 else other @ PAYOFFS[1]
    return BestResponse(player, int(np.argmax(values)), float(values.max()))


def by_hand(joint, concept):
    """The Nash / CCE / CE gap of ``joint`` in chicken, from the definitions."""
    total = 0.0
    for p in range(2):
        u = PAYOFFS[p] if p == 0 else PAYOFFS[p].T   # own action first
        j = joint if p == 0 else joint.T
        value = float(np.sum(j * u))
        if concept == "ce":
            total += sum(max(0.0, max(float(u[a] @ j[i]) for a in range(2)) - float(u[i] @ j[i])) for i in range(2))
        else:
            other = j.sum(axis=0)
            gain = max(float(u[a] @ other) for a in range(2)) - value
            total += gain if concept == "nash" else max(gain, 0.0)
    return total


@pytest.mark.parametrize("concept, kind", [("nash", "product"), ("cce", "cce"), ("ce", "ce")])
def test_deterministic_play_gives_the_gap_by_hand(concept, kind):
    rng = np.random.default_rng(0)
    for _ in range(5):
        if kind == "product":
            m = [rng.dirichlet(np.ones(2)) for _ in range(2)]
            joint = np.outer(*m)
        else:
            joint = rng.dirichlet(np.ones(4)).reshape(2, 2)
        eq = make_equilibrium(CHICKEN, joint=joint, concept=concept if concept != "nash" else "nash", method="x")
        # play is exact but the profiles are drawn: the sampled on-policy value is exact only in expectation, so
        # use many episodes and compare within the Monte Carlo error
        result = approximate_gap(None, kind, eq, POPS, respond, episodes=20000, seed=1, iteration=0, play=play)
        assert result.gap == pytest.approx(by_hand(joint, concept), abs=4 * result.stderr + 1e-12)


def test_a_pure_profile_is_measured_without_error():
    eq = make_equilibrium(CHICKEN, joint=np.array([[0.0, 0.0], [0.0, 1.0]]), concept="nash", method="x")
    result = approximate_gap(None, "product", eq, POPS, respond, episodes=50, seed=0, iteration=0, play=play)
    assert result.gap == by_hand(eq.joint, "nash") and result.stderr == 0.0
    assert [t[0] for t in result.terms] == [0, 1]


def test_standard_error_matches_the_spread_over_seeds():
    seeds = np.random.default_rng(7)
    noisy_play = noisy(3.0, 1.0, np.random.default_rng(8))
    eq = make_equilibrium(CHICKEN, joint=np.array([[0.0, 1.0], [0.0, 0.0]]), concept="nash", method="x")
    gaps, errors = [], []
    for seed in seeds.integers(0, 2 ** 31, size=40):
        result = approximate_gap(None, "product", eq, POPS, respond, episodes=400, seed=int(seed), iteration=0,
                                 play=noisy_play)
        gaps.append(result.unclipped)   # (the spread before clipping at zero)
        errors.append(result.stderr)
    # paired episodes: the deals' noise cancels in each (response - on-policy) difference; the actions' does not,
    # four unit terms per episode (two responses, the on-policy episode's two seats): sqrt(4/400) = 0.1 (unpaired,
    # the deals' would add 4 * 9)
    assert np.mean(errors) == pytest.approx(np.sqrt(4 / 400), rel=0.1)
    assert np.std(gaps, ddof=1) == pytest.approx(np.mean(errors), rel=0.35)
    assert np.mean(gaps) == pytest.approx(by_hand(eq.joint, "nash"), abs=3 * np.mean(errors) / np.sqrt(40))


def test_seeds_are_derived_and_independent_of_order():
    assert approximate_seed(3, 1) != approximate_seed(3, 2) != approximate_seed(4, 1)
    draws = [mixture_returns(None, POPS, np.array([[0, 0], [1, 1]]), np.array([0.5, 0.5]), 100,
                             np.random.default_rng(approximate_seed(0, 5)), play=play) for _ in range(2)]
    assert np.array_equal(*draws)


def test_bad_kind():
    eq = make_equilibrium(CHICKEN, joint=np.full((2, 2), 0.25), concept="nash", method="x")
    with pytest.raises(ValueError, match="kind must be"):
        approximate_gap(None, "nash", eq, POPS, respond, episodes=10, seed=0, iteration=0, play=play)


# ---------------------------------------------------------------- the candidates and the lower bound


def test_the_best_member_wins_over_a_worse_fresh_response():
    # player 1 against player 0's pure action 0 in chicken: member 1 (swerve... the meta-game's best) beats a
    # fresh response that plays the worse action; the estimate is then the meta-game's own regret
    eq = make_equilibrium(CHICKEN, joint=np.array([[0.0, 1.0], [0.0, 0.0]]), concept="nash", method="x")
    worst = lambda player, target, index: BestResponse(player, 0 if player else 1, 0.0)   # noqa: E731
    result = approximate_gap(None, "product", eq, POPS, worst, episodes=50, seed=0, iteration=0, play=play,
                             payoffs=PAYOFFS)
    assert [t[4] for t in result.terms] == ["member 0", "member 1"]
    assert result.gap == by_hand(eq.joint, "nash")


def test_a_better_fresh_response_wins_and_every_candidate_is_reported():
    only_member = [[1], [1]]   # populations that hold only action 1: the meta-game shows no regret
    eq = make_equilibrium(NormalFormGame(PAYOFFS[:, 1:, 1:]), joint=np.ones((1, 1)), concept="nash", method="x")

    def respond_to_action_1(player, target, index):   # the best response to the other's action 1
        return BestResponse(player, int(np.argmax(PAYOFFS[player][:, 1] if player == 0 else PAYOFFS[player][1])),
                            0.0)

    result = approximate_gap(None, "product", eq, only_member, respond_to_action_1, episodes=50, seed=0,
                             iteration=0, play=play, payoffs=PAYOFFS[:, 1:, 1:])
    assert [t[4] for t in result.terms] == ["fresh", "fresh"]
    assert [[c.source for c in cands] for cands in result.candidates] == [["member 0", "fresh"]] * 2
    assert result.gap == by_hand(np.array([[0.0, 0.0], [0.0, 1.0]]), "nash") > 0


def test_the_winner_is_valued_on_fresh_episodes_so_no_winners_curse():
    # 30 identical members (true value 0 against the target) and noisy play: the best selection value is biased
    # upwards (the max of 30 noisy means), the winner's reported value is not
    actions = np.random.default_rng(0)

    def noisy(game, profile, count, seed):   # (the policies' own noise: paired episodes do not share it)
        return actions.normal(size=(count, 2)) * [1.0, 0.0]

    pops = [list(range(30)), [0]]
    eq = make_equilibrium(NormalFormGame(np.zeros((2, 30, 1))), joint=np.eye(30, 1), concept="nash", method="x")
    selection, estimate, errors = [], [], []
    for seed in range(30):
        result = approximate_gap(None, "product", eq, pops, lambda *a: None, episodes=100, seed=seed, iteration=0,
                                 play=noisy)
        selection.append(max(c.selection_value for c in result.candidates[0]))
        estimate.append(result.terms[0][2])
        errors.append(result.stderr)
    assert np.mean(selection) > 0.15                                  # E[max of 30 N(0, 0.1)] ~ 0.2
    assert abs(np.mean(estimate)) < 3 * 0.1 / np.sqrt(30)             # unbiased: fresh episodes
    assert all(e > 0 for e in errors)


def test_warm_start_asks_for_a_response_from_the_best_member():
    asked = []

    def record(player, target, index):
        asked.append((player, index, target.initial_policy))
        return None

    eq = make_equilibrium(CHICKEN, joint=np.array([[0.0, 1.0], [0.0, 0.0]]), concept="nash", method="x")
    approximate_gap(None, "product", eq, POPS, record, episodes=10, seed=0, iteration=0, play=play, payoffs=PAYOFFS,
                    warm_start=True)
    assert asked == [(0, 0, None), (0, 1, 0), (1, 0, None), (1, 1, 1)]   # the best members: 0 and 1
    asked.clear()
    approximate_gap(None, "product", eq, POPS, record, episodes=10, seed=0, iteration=0, play=play, payoffs=PAYOFFS,
                    warm_start=True, fresh=False)
    assert asked == [(0, 1, 0), (1, 1, 1)]   # only the warm-started ones, under the same index (the same seeds)


def test_bad_episodes():
    eq = make_equilibrium(CHICKEN, joint=np.full((2, 2), 0.25), concept="nash", method="x")
    with pytest.raises(ValueError, match="episodes must be an int >= 2"):
        approximate_gap(None, "product", eq, POPS, respond, episodes=1, seed=0, iteration=0, play=play)
    with pytest.raises(ValueError, match="selection_episodes must be a positive int"):
        approximate_gap(None, "product", eq, POPS, respond, episodes=10, selection_episodes=0, seed=0, iteration=0,
                        play=play)


@pytest.mark.parametrize("options, message", [
    ({"episodes": 1}, "^approx_gap_options: episodes must be an int >= 2"),
    ({"fresh": "no"}, "^approx_gap_options: fresh must be true or false"),
    ({"fresh": False, "warm_start": False}, "^approx_gap_options: fresh and warm_start are both false, so no "
                                            "response would be trained; set one of them to true, or train to false"),
    ({"total_steps": 0}, "^approx_gap_options: total_steps must be a positive int"),
    ({"warm_start": "yes"}, "^approx_gap_options: warm_start must be true or false"),
    ({"learning_rat": 0.1}, "^approx_gap_options: .*learning_rat"),
])
def test_bad_approx_gap_options_name_the_key(options, message):
    from psro import PSRO

    with pytest.raises((ValueError, TypeError), match=message):
        PSRO("kuhn_poker", oracle="ppo", evaluator="monte_carlo", approx_gap_options=options, progress=False)


@pytest.mark.slow
def test_kuhn_run_the_lower_bound_holds_at_every_row():
    # a tiny deep-PSRO run on Kuhn with the uniform meta-solver (its meta-game regret is positive): at every row
    # approx_gap + 2 se >= meta_gap and approx_gap - 3 se <= the exact gap of the same meta-strategy
    from psro import PSRO

    solver = PSRO("kuhn_poker", oracle="ppo", meta_solver="uniform", evaluator="monte_carlo",
                  episodes_per_profile=200, approx_gap_every=1, seed=1, progress=False,
                  oracle_options={"total_steps": 512, "num_envs": 16, "num_steps": 16, "eval_episodes": 32},
                  approx_gap_options={"total_steps": 512, "episodes": 300, "share": None})
    history = solver.run(iterations=2)
    approx, se = history["approx_gap"].to_numpy(), history["approx_gap_stderr"].to_numpy()
    assert np.isfinite(approx).all() and (se > 0).all() and (history["approx_gap_time"] > 0).all()
    assert (history["meta_gap"].iloc[1:] > 0).all()
    assert (approx + 2 * se >= np.maximum(0.0, history["meta_gap"])).all()
    assert (approx - 3 * se <= history["gap"]).all()


# ---------------------------------------------------------------- the cost: ready responses, episodes to a target


def test_a_ready_response_is_a_candidate_and_auto_trains_only_where_none_answers():
    asked = []

    def record(player, target, index):
        asked.append((player, index))
        return None

    eq = make_equilibrium(CHICKEN, joint=np.array([[0.0, 1.0], [0.0, 0.0]]), concept="nash", method="x")
    ready = lambda player, index, target: 1 if player == 0 else None   # noqa: E731  (player 0's step response)
    result = approximate_gap(None, "product", eq, POPS, record, episodes=10, seed=0, iteration=0, play=play,
                             payoffs=PAYOFFS, ready=ready, train="auto")
    assert asked == [(1, 0)]   # only player 1, whom no ready response answers
    assert [c.source for c in result.candidates[0]] == ["member 0", "step"]
    approximate_gap(None, "product", eq, POPS, record, episodes=10, seed=0, iteration=0, play=play,
                    payoffs=PAYOFFS, ready=ready, train=False)
    assert asked == [(1, 0)]


def test_episodes_are_added_until_the_stderr_target_or_the_cap():
    play = noisy(2.0, 2.0, np.random.default_rng(0))
    eq = make_equilibrium(CHICKEN, joint=np.array([[1.0, 0.0], [0.0, 0.0]]), concept="nash", method="x")
    gap = by_hand(eq.joint, "nash")
    assert gap > 0
    one = approximate_gap(None, "product", eq, POPS, respond, episodes=50, seed=0, iteration=0, play=play)
    met = approximate_gap(None, "product", eq, POPS, respond, episodes=50, seed=0, iteration=0, play=play,
                          stderr_target=0.05, max_episodes=100_000)
    capped = approximate_gap(None, "product", eq, POPS, respond, episodes=50, seed=0, iteration=0, play=play,
                             stderr_target=0.01, max_episodes=300)
    assert one.episodes == 50 and one.stderr > 0.05 * gap
    assert met.stderr <= 0.05 * met.gap and met.episodes in (50 * 2 ** k for k in range(12))
    assert abs(met.gap - gap) <= 4 * met.stderr
    assert capped.episodes == 300 and capped.stderr > 0.01 * capped.gap   # 50, 100, 200, then the last 100
    floor = approximate_gap(None, "product", eq, POPS, respond, episodes=50, seed=0, iteration=0, play=play,
                            stderr_target=0.01, stderr_floor=10.0)
    assert floor.episodes == 50   # a standard error under the floor is small enough whatever the estimate


@pytest.mark.parametrize("options, message", [
    ({"stderr_target": 0}, "^approx_gap_options: stderr_target must be a positive number"),
    ({"stderr_target": -0.1}, "^approx_gap_options: stderr_target must be a positive number"),
    ({"stderr_target": "small"}, "^approx_gap_options: stderr_target must be a positive number"),
    ({"episodes": 500, "max_episodes": 100}, r"^approx_gap_options: max_episodes must be an int >= episodes \(500\)"),
    ({"max_episodes": 2.5}, "^approx_gap_options: max_episodes must be an int"),
    ({"train": "sometimes"}, "^approx_gap_options: train must be true, false or 'auto'"),
])
def test_bad_stderr_target_and_cap_name_the_option(options, message):
    from psro import PSRO, PSROConfig

    with pytest.raises(ValueError, match=message):
        PSROConfig(game="kuhn_poker", oracle="ppo", evaluator="monte_carlo", approx_gap_options=options).validate()
    with pytest.raises(ValueError, match=message):
        PSRO("kuhn_poker", oracle="ppo", evaluator="monte_carlo", approx_gap_options=options, progress=False)


def test_a_null_stderr_target_plays_one_round_whatever_the_cap():
    settings, _ = approx_gap_settings({}, {"stderr_target": None, "max_episodes": 1, "episodes": 300}, "ppo")
    assert settings["stderr_target"] is None


def test_wall_time_counts_the_final_measurement_and_it_is_logged(caplog):
    # approx_gap only on the last row (approx_gap_every=0): measured after the last step, in finish_run; the row's
    # wall and CPU clocks still include it, and its start and end are logged at INFO
    import logging
    import time

    from psro import PSRO

    solver = PSRO("kuhn_poker", oracle="ppo", evaluator="monte_carlo", episodes_per_profile=50, approx_gap_every=0,
                  exact_gap=False, seed=0, progress=False,
                  oracle_options={"total_steps": 256, "num_envs": 8, "num_steps": 16, "eval_episodes": 16},
                  approx_gap_options={"episodes": 100, "stderr_target": None, "train": True, "total_steps": 256})
    start = time.perf_counter()
    with caplog.at_level(logging.INFO, logger="psro.measures.approximate_gap"):
        history = solver.run(iterations=1)
    elapsed = time.perf_counter() - start
    last = history.iloc[-1]
    assert np.isnan(history["approx_gap"].iloc[0]) and np.isfinite(last["approx_gap"])
    assert last["approx_gap_time"] > 0
    assert solver.state.wall == last["wall_time"] and solver.state.cpu == last["cpu_time"]
    assert elapsed - 0.5 <= last["wall_time"] <= elapsed + 1e-9   # (the run's whole time: the measurement too)
    assert last["wall_time"] >= history["wall_time"].iloc[0] + last["approx_gap_time"]
    messages = [r.getMessage() for r in caplog.records if r.name == "psro.measures.approximate_gap"]
    assert any("approx_gap of iteration 1: measuring" in m for m in messages)
    assert any(m.startswith("approx_gap of iteration 1: ") and "s wall" in m for m in messages)


# ---------------------------------------------------------------- the share of the wall time


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([True, "auto", False]), st.floats(0.01, 0.99), st.floats(0, 1e4), st.floats(0, 1e4),
       st.floats(0, 1e4), st.floats(0, 1e4), st.booleans())
def test_a_mode_keeps_within_the_share(train, share, spent, other, trained, untrained, final):
    assert approx_gap_mode(train, None, spent=spent, other=other, trained_cost=trained, untrained_cost=untrained,
                           final=final) == train
    mode = approx_gap_mode(train, share, spent=spent, other=other, trained_cost=trained, untrained_cost=untrained,
                           final=final)
    assert mode in (train, False, None)
    if final:
        assert mode is train   # the last row is always measured, with its training as asked
        return
    reserve = untrained if train is False else trained   # (room for the last row's measurement)

    def fits(cost):
        return spent + (cost + reserve) <= share * (other + spent + (cost + reserve))

    if mode is not None and mode is not False:   # fresh training only where it fits
        assert fits(trained)
    if mode is False:
        assert fits(untrained)
    if mode is None:
        assert not fits(untrained)


@pytest.mark.slow
def test_share_skips_due_rows_and_measures_the_last_with_training(caplog):
    # a share no measurement fits (each row keeps room for the last one's fresh responses, priced at the run's own
    # seconds per training step): rows 0-2 are skipped, and the last row is measured with fresh responses (the
    # value a reader takes away), going over the share with a warning
    import logging

    from psro import PSRO

    solver = PSRO("kuhn_poker", oracle="ppo", evaluator="monte_carlo", episodes_per_profile=50, approx_gap_every=1,
                  exact_gap=False, seed=0, progress=False,
                  oracle_options={"total_steps": 256, "num_envs": 8, "num_steps": 16, "eval_episodes": 16},
                  approx_gap_options={"episodes": 100, "stderr_target": None, "total_steps": 256, "share": 1e-9})
    with caplog.at_level(logging.INFO, logger="psro"):
        history = solver.run(iterations=3)
    assert np.isfinite(history["approx_gap"]).tolist() == [False, False, False, True]
    assert (history["approx_gap_time"].iloc[[0, 1, 2]] == 0).all()
    messages = [r.getMessage() for r in caplog.records]
    assert sum("measuring (oracle ppo, training fresh responses" in m for m in messages) == 1
    assert not any("training nothing" in m for m in messages)
    assert sum("not measured (measuring has taken its share" in m for m in messages) == 4   # 0-3 (3 once more)
    over = [m for m in messages if "more than approx_gap_options' share (1e-09)" in m]
    assert len(over) == 1 and "Lower approx_gap_options' total_steps, episodes or max_episodes" in over[0]
    # no limit: every row, with fresh responses
    solver = PSRO("kuhn_poker", oracle="ppo", evaluator="monte_carlo", episodes_per_profile=50, approx_gap_every=1,
                  exact_gap=False, seed=0, progress=False,
                  oracle_options={"total_steps": 256, "num_envs": 8, "num_steps": 16, "eval_episodes": 16},
                  approx_gap_options={"episodes": 100, "stderr_target": None, "total_steps": 256, "share": None})
    assert np.isfinite(solver.run(iterations=1)["approx_gap"]).all()


@pytest.mark.slow
def test_rows_asked_for_by_number_and_skipped_by_the_share_are_one_warning_per_run(caplog):
    # issue 57 item 4: approx_gap_every=1 measured only the last row of a short run, said at INFO level only
    import logging

    from psro import PSRO

    solver = PSRO("kuhn_poker", oracle="ppo", evaluator="monte_carlo", episodes_per_profile=20, approx_gap_every=1,
                  exact_gap=False, seed=0, progress=False,
                  oracle_options={"total_steps": 64, "num_envs": 4, "num_steps": 16, "eval_episodes": 8},
                  approx_gap_options={"episodes": 20, "stderr_target": None, "total_steps": 64, "share": 1e-9})
    measured = [[False, False, True], [False, False, True, False, True]]   # (the last row of each call: always)
    for skipped, finite in zip((2, 1), measured):   # rows 0-1 of the first call, row 3 of the second
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="psro"):   # (the level a user runs at)
            history = solver.run(iterations=2)
        warned = [r for r in caplog.records if "approx_gap_every=1 asks for" in r.getMessage()]
        assert len(warned) == 1 and warned[0].levelno == logging.WARNING
        assert warned[0].getMessage() == (
            f"approx_gap: {skipped} of the rows approx_gap_every=1 asks for {'were' if skipped > 1 else 'was'} not "
            "measured, to keep measuring within approx_gap_options' share (1e-09) of the run's wall time; set "
            "approx_gap_options: {share: null} to measure every row it asks for.")
        assert np.isfinite(history["approx_gap"]).tolist() == finite
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="psro"):   # the "auto" schedule's rows are the share's to skip
        PSRO("kuhn_poker", oracle="ppo", evaluator="monte_carlo", episodes_per_profile=20, approx_gap_every="auto",
             exact_gap=False, seed=0, progress=False,
             oracle_options={"total_steps": 64, "num_envs": 4, "num_steps": 16, "eval_episodes": 8},
             approx_gap_options={"episodes": 20, "stderr_target": None, "total_steps": 64, "share": 1e-9}
             ).run(iterations=2)
    assert not any("asks for" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("share", [0, 1, -0.5, True, "half"])
def test_a_share_outside_zero_one_is_refused(share):
    with pytest.raises(ValueError, match=r"^approx_gap_options: share must be a number in \(0, 1\)"):
        approx_gap_settings({}, {"share": share}, "ppo")


# -- the candidates' race: successive halving --------------------------------------------------------------------


@pytest.mark.parametrize("values, winner", [([0.3], 0), ([0.1, 0.4], 1), ([0.2, 0.9, 0.1, 0.5, 0.3, 0.4, 0.0], 1),
                                            ([0.5, 0.5, 0.1], 0)])
def test_successive_halving_picks_the_best_arm_and_ties_go_to_the_earlier(values, winner):
    from psro.measures.approximate_gap import successive_halving

    played = {}

    def returns(arm, count):
        played[arm] = played.get(arm, 0) + count
        return np.full(count, values[arm])

    best, means = successive_halving(list(range(len(values))), returns, 200)
    assert best == winner and means == pytest.approx(values)
    assert played[winner] == 200   # the winner always played every selection episode
    finalists = sorted(played.values())[-2:]
    assert finalists == [200] * min(2, len(values))


def test_successive_halving_spends_about_half_the_episodes_of_a_full_race_on_seven_arms():
    from psro.measures.approximate_gap import successive_halving

    rng = np.random.default_rng(0)
    counts = []
    successive_halving(list(range(7)), lambda arm, k: counts.append(k) or rng.normal(arm / 10, 1.0, k), 200)
    assert sum(counts) == 7 * 50 + 4 * 50 + 2 * 100 == 750   # rounds of 50, 100 and 200 episodes a survivor


@pytest.mark.parametrize("arms", [1, 2, 3, 5, 7, 8, 9])
@pytest.mark.parametrize("selection", [1, 64, 200])
def test_expected_episodes_counts_what_successive_halving_plays(arms, selection):
    from psro.measures.approx_gap_schedule import expected_episodes
    from psro.measures.approximate_gap import successive_halving

    counts = []
    successive_halving(list(range(arms)), lambda arm, k: counts.append(k) or np.full(k, float(arm)), selection)
    targets, episodes = 3, 500
    assert expected_episodes(targets, arms, selection, episodes) == targets * (sum(counts) + episodes) + episodes
