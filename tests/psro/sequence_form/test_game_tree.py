"""The game tree of simultaneous-move games (walked natively, seat by seat), its budget, and infostate tensors.

References: OpenSpiel's turn-based conversion of the same games
(``pyspiel.convert_to_turn_based``), walked independently here, with
``expected_game_score.policy_value`` and ``exploitability.nash_conv`` on it;
rock-paper-scissors and goofspiel structure derived by hand.
"""

import time

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms import exploitability
from open_spiel.python.algorithms.expected_game_score import policy_value

from psro.evaluation.exact import OpenSpielEvaluator, SequenceFormEvaluator
from psro.measures.metrics import nash_conv
from psro.oracles.exact import best_response
from psro.policies import random_policies, realization_plans, uniform_policy
from psro.policies.population import Population, Provenance
from psro.sequence_form.game_tree import (
    TreeTooLarge,
    build_game_tree,
    estimate_histories,
    infostate_state,
    infostate_tensors,
)

SIMULTANEOUS_GAMES = [
    "goofspiel(num_cards=3,imp_info=True,points_order=descending)",
    "goofspiel(num_cards=3,imp_info=True)",               # random point order: explicit chance between the moves
    "goofspiel(num_cards=3,imp_info=True,players=3)",
    "oshi_zumo(coins=3,size=1,horizon=4)",
    "matrix_rps",
]


def native_state(game, history):
    """The simultaneous-move game's state after ``history`` (one action per seat at a simultaneous node); a
    trailing, incomplete joint action is left pending (not applied)."""
    n, state, i = game.num_players(), game.new_initial_state(), 0
    while i < len(history):
        if state.is_simultaneous_node():
            if i + n > len(history):
                break
            state.apply_actions(list(history[i:i + n]))
            i += n
        else:
            state.apply_action(history[i])
            i += 1
    return state


def turn_based_keys(game, turn_based):
    """For every (player, infostate string) of the turn-based conversion, the native game's infostate string of
    that player at the same history."""
    keys, stack = {}, [turn_based.new_initial_state()]
    while stack:
        state = stack.pop()
        if state.is_terminal():
            continue
        if state.is_chance_node():
            stack += [state.child(a) for a, p in state.chance_outcomes() if p > 0]
            continue
        p = state.current_player()
        native = native_state(game, state.history()).information_state_string(p)
        assert keys.setdefault((p, state.information_state_string(p)), native) == native
        stack += [state.child(a) for a in state.legal_actions()]
    return keys


def turn_based_policy(turn_based, keys, tree, policies):
    """An OpenSpiel TabularPolicy of the turn-based game playing ``policies`` (ours, per player)."""
    tab = os_policy.TabularPolicy(turn_based)
    for (p, key), native in keys.items():
        tab.policy_for_key(key)[:] = policies[p][tree.infostates[p].index(native)]
    return tab


# ------------------------------------------------------------ simultaneous trees against the turn-based game
@pytest.mark.parametrize("name", SIMULTANEOUS_GAMES)
def test_simultaneous_tree_matches_openspiel_turn_based_conversion(name):
    game = pyspiel.load_game(name)
    turn_based = pyspiel.convert_to_turn_based(game)
    tree = build_game_tree(game)
    keys = turn_based_keys(game, turn_based)
    # the same infostates: the conversion's decisions map onto ours one to one
    for p, info in enumerate(tree.infostates):
        assert sorted(native for (q, _), native in keys.items() if q == p) == sorted(info.keys)
    rng = np.random.default_rng(12)
    for trial in range(3):
        policies = [uniform_policy(info) if trial == 0 else random_policies(info, 1, rng)[0]
                    for info in tree.infostates]
        plans = [realization_plans(pol[None], info) for pol, info in zip(policies, tree.infostates)]
        ours = SequenceFormEvaluator(tree).payoffs(plans).reshape(tree.num_players)
        tab = turn_based_policy(turn_based, keys, tree, policies)
        reference = policy_value(turn_based.new_initial_state(), [tab] * tree.num_players)
        np.testing.assert_allclose(ours, reference, rtol=0, atol=1e-12)
        assert nash_conv(tree, policies) == pytest.approx(exploitability.nash_conv(turn_based, tab), abs=1e-9)


def test_rock_paper_scissors_by_hand():
    # one infostate per seat; seat 1 decides at the same state, not seeing seat 0's choice; 9 terminals
    tree = build_game_tree(pyspiel.load_game("matrix_rps"))
    assert [info.num_infostates for info in tree.infostates] == [1, 1]
    assert tree.simultaneous and tree.num_terminals == 9
    assert np.all(tree.terminal_chance == 1.0)
    payoff = np.zeros((3, 3))   # row: seat 0's action, column: seat 1's; rock 0, paper 1, scissors 2
    payoff[tree.terminal_sequence[0], tree.terminal_sequence[1]] = tree.terminal_returns[:, 0]
    assert payoff.tolist() == [[0, -1, 1], [1, 0, -1], [-1, 1, 0]]
    assert [info.parent.tolist() for info in tree.infostates] == [[3], [3]]   # both at the empty sequence
    # against a seat 1 that always plays rock (its plan: sequence "rock" and the empty one), paper earns 1
    br = best_response(tree, 0, [None, np.array([1.0, 0.0, 0.0, 1.0])])
    assert br.value == 1.0 and br.policy.tolist() == [[0.0, 1.0, 0.0]]


def test_goofspiel_infostates_have_perfect_recall_by_hand():
    # descending points 3, 2, 1: each seat bids in rounds 1 and 2 (its last card is played for it) and sees its own
    # bids and who won (imp_info). Round 2 infostates: after bidding card 1 it lost or tied, after card 2 it won,
    # lost or tied, after card 3 it won or tied: 2 + 3 + 2 = 7
    game = pyspiel.load_game("goofspiel(num_cards=3,imp_info=True,points_order=descending)")
    tree = build_game_tree(game)
    for info in tree.infostates:
        assert [level.size for level in info.levels] == [1, 7]
        # every infostate's parent sequence is the seat's own previous (infostate, bid)
        for s in range(info.num_infostates):
            state = infostate_state(tree, info.player, s)
            own_bids = [int(a) for a in state.history()[info.player::2]]
            parent = info.parent[s]
            if not own_bids:
                assert parent == info.empty_sequence
            else:
                assert parent % info.num_actions == own_bids[-1]
    assert tree.num_terminals == 36   # 3 x 2 bid orders for each seat


def test_imperfect_recall_names_the_fix():
    with pytest.raises(ValueError, match=r"perfect recall.*imp_info=True.*oracle='model_br', 'ppo' or 'dqn'"):
        build_game_tree(pyspiel.load_game("goofspiel(num_cards=4)"))


# ------------------------------------------------------------------ the budget
def test_tree_too_large_refuses_phantom_ttt_at_once_from_its_estimated_size():
    start = time.perf_counter()
    with pytest.raises(TreeTooLarge) as err:
        build_game_tree(pyspiel.load_game("phantom_ttt"))
    assert time.perf_counter() - start < 5.0
    assert isinstance(err.value, ValueError) and err.value.histories == 0
    message = str(err.value)
    assert "(estimated from random playouts), far more than max_histories=1_000_000" in message
    assert "PSROConfig field max_histories" in message
    assert ("a learned oracle (oracle='model_br', 'ppo' or 'dqn') with evaluator='monte_carlo', which needs no "
            "tree") in message


def test_tree_too_large_stops_the_walk_at_the_budget():
    # tic-tac-toe has 549,946 histories: within the estimate's margin, so it is walked, and stopped at the budget
    start = time.perf_counter()
    with pytest.raises(TreeTooLarge, match="has more than max_histories=100_000 histories") as err:
        build_game_tree(pyspiel.load_game("tic_tac_toe"), max_histories=100_000)
    assert time.perf_counter() - start < 5.0
    assert err.value.histories == 100_001
    assert "PSROConfig field max_histories" in str(err.value) and "evaluator='monte_carlo'" in str(err.value)
    assert err.value.reason == "game tic_tac_toe() has more than max_histories=100_000 histories"   # (no remedy)
    assert str(err.value).startswith(err.value.reason + "; it is too large")
    # exactly at the budget is fine, one below it is not
    leduc = pyspiel.load_game("leduc_poker")
    histories = build_game_tree(leduc).num_histories
    assert build_game_tree(leduc, max_histories=histories).num_histories == histories
    with pytest.raises(TreeTooLarge, match=f"more than max_histories={histories - 1:_} histories"):
        build_game_tree(leduc, max_histories=histories - 1)


def test_tree_too_large_on_memory_before_it_runs_out():
    # oshi_zumo's infostate strings grow with the history: the memory budget stops the walk first
    budget = 8 * 2**20
    with pytest.raises(TreeTooLarge, match=r"GiB.*the budget is max_bytes") as err:
        build_game_tree(pyspiel.load_game("oshi_zumo"), max_histories=10**30, max_bytes=budget)
    assert budget < err.value.estimated_bytes < 1.1 * budget


@pytest.mark.parametrize("name", ["matrix_rps", "kuhn_poker", "leduc_poker", "goofspiel(num_cards=4,imp_info=True)"])
def test_estimated_histories_against_the_walk(name):
    game = pyspiel.load_game(name)
    tree = build_game_tree(game)
    assert tree.num_histories == {"matrix_rps": 13, "kuhn_poker": 58}.get(name, tree.num_histories)   # by hand
    estimates = np.array([estimate_histories(game, playouts=200, seed=seed) for seed in range(3)])
    if name.startswith(("matrix", "goofspiel")):   # the same branching at every depth: the estimate is exact
        np.testing.assert_allclose(estimates, tree.num_histories, rtol=1e-12)
    else:
        assert np.all(np.abs(estimates / tree.num_histories - 1) < 0.25)


@pytest.mark.parametrize("value", [0, -3, 2.5])
def test_max_histories_must_be_a_positive_integer(value):
    with pytest.raises((ValueError, TypeError), match="max_histories"):
        build_game_tree(pyspiel.load_game("kuhn_poker"), max_histories=value)


# ---------------------------------------------------------- infostate tensors and states
@pytest.mark.parametrize("name", ["goofspiel(num_cards=3,imp_info=True)", "leduc_poker"])
def test_infostate_tensors_in_tree_order(name):
    game = pyspiel.load_game(name)
    tree = build_game_tree(game)
    # every infostate's tensor, collected by an independent walk (the native game; at a simultaneous node
    # every seat reads its tensor at the state before any choice)
    expected = [{} for _ in range(tree.num_players)]
    stack = [game.new_initial_state()]
    while stack:
        state = stack.pop()
        if state.is_terminal():
            continue
        if state.is_chance_node():
            stack += [state.child(a) for a, _ in state.chance_outcomes()]
            continue
        seats = range(tree.num_players) if state.is_simultaneous_node() else [state.current_player()]
        for p in seats:
            expected[p][state.information_state_string(p)] = np.asarray(state.information_state_tensor(p))
        if state.is_simultaneous_node():
            for joint in np.ndindex(*(game.num_distinct_actions(),) * tree.num_players):
                if all(a in state.legal_actions(p) for p, a in enumerate(joint)):
                    child = state.clone()
                    child.apply_actions(list(joint))
                    stack.append(child)
        else:
            stack += [state.child(a) for a in state.legal_actions()]
    for p, info in enumerate(tree.infostates):
        tensors = infostate_tensors(tree, p)
        assert tensors.dtype == np.float32
        assert tensors.shape == (info.num_infostates, *game.information_state_tensor_shape())
        np.testing.assert_array_equal(tensors, np.stack([expected[p][key] for key in info.keys]))
        assert not tensors.flags.writeable
        assert infostate_tensors(tree, p) is tensors


def test_infostate_state_is_at_its_infostate():
    tree = build_game_tree(pyspiel.load_game("goofspiel(num_cards=3,imp_info=True,players=3)"))
    for p, info in enumerate(tree.infostates):
        for s, key in enumerate(info.keys):
            assert infostate_state(tree, p, s).information_state_string(p) == key
    with pytest.raises(ValueError, match="index"):
        infostate_state(tree, 0, tree.infostates[0].num_infostates)


def test_infostate_tensors_need_tensors():
    tree = build_game_tree(pyspiel.load_game("oshi_zumo(coins=3,size=1,horizon=4)"))
    with pytest.raises(ValueError, match="information-state tensors"):
        infostate_tensors(tree, 0)
    with pytest.raises(ValueError, match="observation must be"):
        infostate_tensors(tree, 0, observation="state")


def test_observation_tensors_of_a_perfect_information_game():
    # m,n,k-game on a 3x2 board (tic-tac-toe's rules, two in a row): no information-state tensor; its observation
    # is three planes of the 6 cells (empty, o, x)
    game = pyspiel.load_game("mnk(m=3,n=2,k=2)")
    tree = build_game_tree(game)
    with pytest.raises(ValueError, match=r"information-state tensors.*try observation='observation'"):
        infostate_tensors(tree, 1)
    tensors = infostate_tensors(tree, 1, observation="observation")
    info = tree.infostates[1]
    assert tensors.shape == (info.num_infostates, 18)
    board = tensors[info.index("0")].reshape(3, 6)   # player 1 (o) to move after x took cell 0
    assert board.tolist() == [[0, 1, 1, 1, 1, 1], [0] * 6, [1, 0, 0, 0, 0, 0]]
    for s, key in enumerate(info.keys):   # every row: the board after the moves the key lists
        cells = [int(c) for c in key.split(", ")]
        assert tensors[s].reshape(3, 6)[0].sum() == 6 - len(cells)


# ------------------------------------------------------------ OpenSpiel's evaluator and oracle
def test_openspiel_evaluator_on_a_simultaneous_game_matches_the_sequence_form():
    tree = build_game_tree(pyspiel.load_game("goofspiel(num_cards=3,imp_info=True)"))
    rng = np.random.default_rng(3)
    pops = [Population(info) for info in tree.infostates]
    for pop in pops:
        for k in range(2):
            pop.add(random_policies(pop.infostates, 1, rng)[0], Provenance(k, "initial"))
    block = [range(2), range(2)]
    np.testing.assert_allclose(OpenSpielEvaluator(tree).block_payoffs(pops, block),
                               SequenceFormEvaluator(tree).block_payoffs(pops, block), rtol=0, atol=1e-12)


def test_openspiel_oracle_refuses_a_simultaneous_game_and_names_the_fix():
    from psro import PSRO
    from psro.oracles.openspiel import OpenSpielOracle

    tree = build_game_tree(pyspiel.load_game("goofspiel(num_cards=3,imp_info=True)"))
    with pytest.raises(ValueError, match=r"oracle='openspiel'.*simultaneous.*use oracle='exact'"):
        OpenSpielOracle(tree)
    with pytest.raises(ValueError, match=r"oracle='openspiel'.*use oracle='exact'"):
        PSRO("goofspiel(num_cards=3,imp_info=True)", oracle="openspiel", progress=False)


# ------------------------------------------------------------ PSRO on a simultaneous-move game given as is
@pytest.mark.parametrize("name, iterations", [
    ("goofspiel(num_cards=3,imp_info=True,points_order=descending)", 10),   # the bar
    ("goofspiel(num_cards=4,imp_info=True,points_order=descending)", 30),
])
def test_exact_psro_on_goofspiel_reaches_the_bar_and_openspiel_agrees(name, iterations):
    from psro import PSRO

    solver = PSRO(name, oracle="exact", evaluator="sequence_form", progress=False)
    turn_based = pyspiel.convert_to_turn_based(solver.game)
    keys = turn_based_keys(solver.game, turn_based)
    for _ in range(iterations):   # one iteration at a time: every iterate's gap checked against OpenSpiel
        history = solver.run(iterations=1)
        tab = turn_based_policy(turn_based, keys, solver.tree, solver.aggregate_policies())
        assert history["gap"].iloc[-1] == pytest.approx(exploitability.nash_conv(turn_based, tab), abs=1e-9)
        if history["gap"].iloc[-1] <= 1e-6:
            break
    # the first row is the uniform policies' NashConv (OpenSpiel's TabularPolicy starts uniform)
    uniform = exploitability.nash_conv(turn_based, os_policy.TabularPolicy(turn_based))
    assert history["gap"].iloc[0] == pytest.approx(uniform, abs=1e-9) and uniform > 1.0
    assert history["gap"].iloc[-1] <= 1e-6
