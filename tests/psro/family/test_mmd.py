"""Tabular magnetic mirror descent (psro.family.mmd) against OpenSpiel's MMDDilatedEnt: the same last-iterate and
average policies after 100 Kuhn iterations, matched by information-state string, the same NashConv and
regularised gap; the closed form of one step on a matrix game; and the errors of bad input."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import exploitability
from open_spiel.python.algorithms.mmd_dilated import MMDDilatedEnt

from psro.family.mmd import (
    magnetic_mirror_descent,
    mmd_problem,
    mmd_step,
    regularized_gap,
    sequence_policy,
)
from psro.sequence_form.game_tree import build_game_tree

ITERATIONS = 100
#: (alpha, stepsize): mirror descent ascent with OpenSpiel's example step, and two temperatures with its default
SETTINGS = [(0.0, 1.0), (0.1, None), (1.0, 0.5)]


@pytest.fixture(scope="module")
def kuhn():
    game = pyspiel.load_game("kuhn_poker")
    return game, build_game_tree(game)


@pytest.fixture(scope="module", params=SETTINGS, ids=lambda s: f"alpha={s[0]},stepsize={s[1]}")
def both(request, kuhn):
    """OpenSpiel's solver and ours after ITERATIONS iterations with the same alpha and step size."""
    game, tree = kuhn
    alpha, stepsize = request.param
    reference = MMDDilatedEnt(game, alpha, stepsize)
    for _ in range(ITERATIONS):
        reference.update_sequences()
    ours = magnetic_mirror_descent(tree, ITERATIONS, alpha, stepsize, nash_conv_every=50)
    return game, tree, reference, ours


def _max_difference_by_key(openspiel_policy, ours, tree) -> float:
    """Largest |difference| of an action probability over every infostate, the rows found by their strings."""
    worst, compared = 0.0, 0
    for p, info in enumerate(tree.infostates):
        for key, row, legal in zip(info.keys, ours[p], info.legal_mask):
            theirs = np.asarray(openspiel_policy.policy_for_key(key))
            worst = max(worst, float(np.abs(theirs[legal] - row[legal]).max()))
            assert row[~legal].sum() == 0.0
            compared += 1
    assert compared == 12   # Kuhn: 6 infostates per player
    return worst


def test_the_same_policies_as_openspiel_after_100_iterations(both):
    _, tree, reference, ours = both
    assert ours.stepsize == reference.stepsize
    assert _max_difference_by_key(reference.get_policies(), ours.policies, tree) < 1e-9
    assert _max_difference_by_key(reference.get_avg_policies(), ours.average_policies, tree) < 1e-9
    # the policies moved: a check that holds for uniform policies too would prove nothing
    assert max(np.abs(pol - 0.5).max() for pol in ours.policies) > 0.1


def test_the_same_nash_conv_as_openspiel(both):
    game, _, reference, ours = both
    assert ours.trace_iterations.tolist() == [0, 50, 100]
    assert ours.nash_conv[0] == pytest.approx(0.916667, abs=1e-6)   # the uniform start
    assert ours.average_nash_conv[-1] == pytest.approx(exploitability.nash_conv(game, reference.get_avg_policies()),
                                                       rel=1e-9, abs=1e-12)
    assert ours.nash_conv[-1] == pytest.approx(exploitability.nash_conv(game, reference.get_policies()),
                                               rel=1e-9, abs=1e-12)


def test_the_same_regularized_gap_as_openspiel(both):
    _, tree, reference, ours = both
    if ours.alpha == 0:
        with pytest.raises(ValueError, match="alpha > 0"):
            regularized_gap(mmd_problem(tree, ours.alpha, ours.stepsize), ours.plans)
        return
    gap = regularized_gap(mmd_problem(tree, ours.alpha, ours.stepsize), ours.plans)
    assert gap == pytest.approx(reference.get_gap(), rel=1e-6, abs=1e-12)


def test_one_step_on_a_matrix_game_is_the_closed_form_on_the_simplex():
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, size=(3, 4))
    tree = build_game_tree(pyspiel.create_matrix_game(a.tolist(), (-a).tolist()))
    eta, alpha = 0.7, 0.3
    start = [rng.dirichlet(np.ones(k)) for k in a.shape]
    # both players' rows have the game's 4 distinct actions; player 0's fourth is illegal
    rows = [np.pad(x, (0, tree.num_actions - x.size))[None] for x in start]
    plans = [sequence_policy(info, row) for info, row in zip(tree.infostates, rows)]
    policies, new_plans = mmd_step(mmd_problem(tree, alpha, eta), plans)
    for p, q in enumerate((a @ start[1], -(start[0] @ a))):
        expected = np.exp((eta * q + np.log(start[p])) / (1 + eta * alpha))
        k = q.size
        np.testing.assert_allclose(policies[p][0, :k], expected / expected.sum(), rtol=1e-12)
        assert policies[p][0, k:].sum() == 0.0
        np.testing.assert_allclose(new_plans[p][:k], policies[p][0, :k], rtol=1e-12)


def test_temperature_reaches_the_regularized_equilibrium_and_no_temperature_approaches_nash(kuhn):
    _, tree = kuhn
    hot = magnetic_mirror_descent(tree, 300, alpha=1.0)
    assert regularized_gap(mmd_problem(tree, 1.0), hot.plans) < 1e-12
    cold = magnetic_mirror_descent(tree, 300, alpha=0.0, stepsize=1.0)
    assert cold.average_nash_conv[-1] < 0.035 < 0.2 < cold.nash_conv[-1]   # the average converges, the last cycles
    assert cold.average_nash_conv[-1] < magnetic_mirror_descent(tree, 100, 0.0, 1.0).average_nash_conv[-1] / 2


def test_bad_input_names_the_argument(kuhn):
    _, tree = kuhn
    with pytest.raises(ValueError, match="stepsize: with alpha=0"):
        magnetic_mirror_descent(tree, 1, alpha=0.0)
    with pytest.raises(ValueError, match="alpha"):
        magnetic_mirror_descent(tree, 1, alpha=-0.1, stepsize=1.0)
    with pytest.raises(ValueError, match="iterations"):
        magnetic_mirror_descent(tree, -1, alpha=0.1)
    with pytest.raises(ValueError, match="two-player zero-sum game; .* 3 players"):
        magnetic_mirror_descent("kuhn_poker(players=3)", 1, alpha=0.1)
    general_sum = pyspiel.create_matrix_game([[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match="do not sum to zero"):
        magnetic_mirror_descent(general_sum, 1, alpha=0.1)
