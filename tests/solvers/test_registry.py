"""Sweep the whole solver registry on small games with 2 to 4 players.

Every registered method (including ones added after this file was written:
the list is read from ``solvers.methods()`` at collection time) must, on every
game, either

* return a valid :class:`solvers.Equilibrium` whose ``gap`` is the
  independently recomputed regret measure of its concept and, unless the
  method itself reports ``converged=False``, lies within the method's stated
  tolerance; or
* when the game is outside what the method supports (players, zero-sum),
  raise exactly the ``ValueError`` that ``solvers.registry.check_game_fits``
  produces.

The stated tolerance bounds the gap relative to each player's payoff range
(the sum over players of each one's gain divided by its range), as
:func:`solvers.solve` promises: ``info["tol"]`` when the method reports one
(the dynamics, QRE and risk-averse solvers do), but never below ``1e-6`` (LP
and Newton solvers report solver tolerances, not gap tolerances), plus the
slack an ``epsilon``-equilibrium is allowed.
"""

import numpy as np
import pytest

import solvers
from games import catalog
from solvers import Equilibrium, cce_gains, cce_gap, ce_gains, ce_gap, method_info, nash_conv, solve
from solvers.gaps import nash_conv_per_player
from solvers.registry import PRODUCT_CONCEPTS, check_game_fits
from solvers.risk_averse.equilibria import rae_gap, rae_gaps

# Concepts whose gap is zero exactly at the solution, so "converged" promises gap <= tol.
EQUILIBRIUM_CONCEPTS = {"nash", "ce", "cce", "rae"}
NUMERICAL_TOL = 1e-6

GAMES = {
    "matching_pennies": catalog.matching_pennies(),
    "rock_paper_scissors": catalog.rock_paper_scissors(),
    "stag_hunt": catalog.stag_hunt(),
    "random_zero_sum_3x4": catalog.random_game((3, 4), kind="zero_sum", rng=1),
    "random_general_4x3": catalog.random_game((4, 3), rng=2),
    "three_player_matching_pennies": catalog.three_player_matching_pennies(),
    "random_2x3x2": catalog.random_game((2, 3, 2), rng=3),
    "random_symmetric_2x2x2": catalog.random_game((2, 2, 2), kind="symmetric", rng=4),
    "random_4_players": catalog.random_game((2, 2, 2, 2), rng=5),
}


def _independent_gap(eq: Equilibrium, game) -> float | None:
    """The concept's regret measure recomputed from the returned distribution, if known."""
    if eq.concept == "ce":
        return ce_gap(game, eq.joint)
    if eq.concept == "cce":
        return cce_gap(game, eq.joint)
    if eq.concept == "rae":
        return rae_gap(game, eq.marginals, eq.info["risk_aversion"], risk=eq.info.get("risk", "variance"),
                       target=eq.info.get("target", "mean"))
    if eq.concept in PRODUCT_CONCEPTS:
        return nash_conv(game, eq.marginals)
    return None


def _relative_gap(eq: Equilibrium, game) -> float:
    """The concept's per-player gains, each divided by that player's payoff range, summed."""
    if eq.concept == "ce":
        gains = ce_gains(game, eq.joint)
    elif eq.concept == "cce":
        gains = cce_gains(game, eq.joint)
    elif eq.concept == "rae":
        gains = rae_gaps(game, eq.marginals, eq.info["risk_aversion"], risk=eq.info.get("risk", "variance"),
                         target=eq.info.get("target", "mean")).gains
    else:
        gains = nash_conv_per_player(game, eq.marginals)
    ranges = np.ptp(game.payoffs.reshape(game.num_players, -1), axis=1)
    return float(np.sum(gains / np.where(ranges > 0, ranges, 1.0)))


def _stated_tolerance(eq: Equilibrium, game) -> float:
    tol = max(float(eq.info.get("tol", 0.0)), NUMERICAL_TOL)
    eps = max(0.0, float(eq.info.get("epsilon", 0.0)))
    ranges = np.ptp(game.payoffs.reshape(game.num_players, -1), axis=1)
    return tol + eps * sum(game.shape) * max(game.shape) / float(ranges[ranges > 0].min())


def _check_equilibrium(eq, game, method: str) -> None:
    spec = method_info(method)
    assert isinstance(eq, Equilibrium)
    assert eq.method == method
    assert eq.concept == spec.concept
    joint = eq.joint
    assert joint.shape == game.shape
    assert np.all(np.isfinite(joint)) and joint.min() >= 0 and abs(joint.sum() - 1) < 1e-9
    assert len(eq.marginals) == game.num_players
    n = game.num_players
    for p, (m, k) in enumerate(zip(eq.marginals, game.shape)):
        assert m.shape == (k,) and m.min() >= 0 and abs(m.sum() - 1) < 1e-9
        np.testing.assert_allclose(joint.sum(axis=tuple(q for q in range(n) if q != p)), m, atol=1e-9)
    if eq.concept in PRODUCT_CONCEPTS:
        np.testing.assert_allclose(joint, game.joint_from_marginals(eq.marginals), atol=1e-12)
    np.testing.assert_allclose(eq.values, game.expected_payoffs(joint), atol=1e-9)
    assert np.isfinite(eq.gap) and eq.gap >= -1e-12
    reference = _independent_gap(eq, game)
    if reference is not None:
        assert eq.gap == pytest.approx(reference, abs=1e-9), "the reported gap is not the concept's measure"
    converged = eq.info.get("converged", True)
    assert isinstance(converged, (bool, np.bool_))
    if converged and eq.concept in EQUILIBRIUM_CONCEPTS:
        assert _relative_gap(eq, game) <= _stated_tolerance(eq, game), (method, eq.gap, eq.info)
    if converged and eq.concept == "qre":
        assert eq.info["residual"] <= eq.info["tol"]


@pytest.mark.parametrize("game_name", sorted(GAMES))
@pytest.mark.parametrize("method", solvers.methods())
def test_every_method_solves_or_refuses_clearly(method, game_name):
    game = GAMES[game_name]
    spec = method_info(method)
    try:
        check_game_fits(spec, game)
    except ValueError as refusal:
        with pytest.raises(ValueError) as raised:
            solve(game, method)
        assert str(raised.value) == str(refusal)
        return
    _check_equilibrium(solve(game, method), game, method)


def test_the_sweep_covers_this_task_and_the_foundation():
    names = set(solvers.methods())
    assert {"uniform", "nash_zero_sum", "prd", "regret_matching", "fictitious_play", "qre", "rae",
            "downside_rae"} <= names


def test_unknown_method_and_options_are_refused_with_suggestions():
    with pytest.raises(ValueError, match="regret_matching"):
        solve(catalog.matching_pennies(), "regret_matchin")
    with pytest.raises(TypeError, match="no option"):
        solve(catalog.matching_pennies(), "prd", learning_rate=0.1)


@pytest.mark.parametrize("method", [m for m in solvers.methods() if method_info(m).tol_option == "tol"])
def test_bad_tolerances_are_refused_by_name(method):
    game = catalog.stag_hunt()
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="tol"):
            solve(game, method, tol=bad)
    with pytest.raises(TypeError, match="tol"):
        solve(game, method, tol="small")
