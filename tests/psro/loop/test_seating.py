"""Seating as a strategy: separate seats are the identity; a shared seat grows every axis, evaluates the profiles
whose seat-0 member is new and fills their seat-swapped copies, and refuses what is not symmetric."""

import numpy as np
import pyspiel
import pytest

from games import catalog
from games.empirical import EmpiricalGame
from psro import PSRO
from psro.loop.seating import SeparateSeats, SharedSeat, make_seating
from psro.meta.symmetric import SymmetricMetaSolver
from psro.policies import uniform_policy
from psro.policies.population import Population, Provenance
from psro.sequence_form.game_tree import build_game_tree


def test_separate_seats_are_the_identity():
    seating, pops, blocks = SeparateSeats(), [object(), object()], [(0,), (1,)]
    assert seating.populations(pops) is pops and seating.seat_sizes([2, 3]) == [2, 3]
    assert list(seating.grown_axes(1)) == [1] and seating.evaluated_blocks(blocks) is blocks
    responses = [[1], [2]]
    assert seating.responses_for_every_seat(responses) is responses and not seating.shared


def test_a_shared_seat_mirrors_one_population_into_every_seat():
    tree = build_game_tree(pyspiel.load_game("blotto"))
    pop = Population(tree.infostates[0])
    pop.add(uniform_policy(tree.infostates[0]), Provenance(0, "initial"))
    seating = SharedSeat(tree, 2)
    seats = seating.populations([pop])
    assert seats[0] is pop and seats[1].infostates.player == 1 and len(seats[1]) == 1
    assert seating.seat_sizes([4]) == [4, 4] and list(seating.grown_axes(0)) == [0, 1]
    assert seating.evaluated_blocks(["seat 0 new", "seat 1 new"]) == ["seat 0 new"]
    assert seating.responses_for_every_seat([[1]]) is None and seating.shared
    # after the evaluation, the profile (old, new) is the evaluated (new, old) with the seats swapped
    state = type("State", (), {})()
    state.meta_game, state.sizes_before = EmpiricalGame((2, 2)), [1]
    state.meta_game.set_exact_block([[1], [0, 1]], [[[3.0, 0.0]], [[-3.0, 0.0]]])
    seating.after_evaluation(state)
    assert state.meta_game.mean()[0].tolist() == [[pytest.approx(np.nan, nan_ok=True), -3.0], [3.0, 0.0]]


def test_the_loop_holds_the_seating_its_config_asks_for():
    shared = PSRO(catalog.rock_paper_scissors(), symmetric=True, progress=False)
    assert isinstance(shared.seating, SharedSeat) and len(shared.state.populations) == 1
    assert isinstance(shared.meta_solver, SymmetricMetaSolver)
    separate = PSRO(catalog.rock_paper_scissors(), progress=False)
    assert type(separate.seating) is SeparateSeats and len(separate.state.populations) == 2
    with pytest.raises(ValueError, match="symmetric: the game's payoffs are not symmetric"):
        make_seating(PSRO(catalog.bach_or_stravinsky(), progress=False), symmetric=True)
