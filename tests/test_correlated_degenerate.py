"""Maximum-Gini CE/CCE on degenerate games: JPSRO meta-games of 3-player Kuhn, duplicates, ties, constant blocks.

The reference is an independent solve of the same quadratic program: the CE/CCE
rows are written out here with plain loops over (player, recommendation,
deviation), without the payoff-class merging of
``solvers.correlated_constraints``, and cvxpy + Clarabel solves
``min ||x||^2`` over them at tight tolerances. The maximum-Gini point is
unique (the objective is strictly convex), so the two must agree.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import NormalFormGame
from solvers import cce_gap, ce_gap, solve

METAGAMES = Path(__file__).resolve().parents[1] / "experiments" / "benchmarks" / "results" / "mgce_metagames"


def reference_rows(payoffs: np.ndarray, concept: str) -> np.ndarray:
    """CE or CCE gain rows (one per player, recommendation and deviation), dense, by plain loops."""
    n, shape = payoffs.shape[0], payoffs.shape[1:]
    rows = []
    for p in range(n):
        u = np.moveaxis(payoffs[p], p, 0)
        for b in range(shape[p]):
            if concept == "cce":
                gain = np.moveaxis(np.broadcast_to(u[b], u.shape) - u, 0, p)
                rows.append(gain.ravel())
                continue
            for a in range(shape[p]):
                if a == b:
                    continue
                gain = np.zeros(u.shape)
                gain[a] = u[b] - u[a]
                rows.append(np.moveaxis(gain, 0, p).ravel())
    rows = np.array(rows)
    scale = max(float(np.abs(rows).max()), 1e-300)
    return rows[np.abs(rows).max(axis=1) > 0] / scale


def clarabel_max_gini(payoffs: np.ndarray, concept: str) -> np.ndarray:
    import cvxpy as cp

    a = reference_rows(payoffs, concept)
    x = cp.Variable(a.shape[1], nonneg=True)
    constraints = [cp.sum(x) == 1] + ([a @ x <= 0] if a.shape[0] else [])
    problem = cp.Problem(cp.Minimize(cp.sum_squares(x)), constraints)
    problem.solve(solver="CLARABEL", tol_gap_abs=1e-13, tol_gap_rel=1e-13, tol_feas=1e-13, max_iter=500)
    assert problem.status == cp.OPTIMAL
    return np.asarray(x.value)


def check_against_reference(game: NormalFormGame, concept: str) -> None:
    eq = solve(game, "mg" + concept)
    assert eq.info["converged"]
    assert "clarabel" not in eq.info["solver"], eq.info["solver"]   # no fallback to the general-purpose solver
    scale = max(1.0, float(np.ptp(game.payoffs)))
    gap = ce_gap(game, eq.joint) if concept == "ce" else cce_gap(game, eq.joint)
    assert gap <= 1e-9 * scale
    assert eq.joint.min() >= 0 and abs(eq.joint.sum() - 1) <= 1e-12
    reference = clarabel_max_gini(game.payoffs, concept)
    assert np.abs(eq.joint.ravel() - reference).max() <= 1e-6


def load_metagame(size: int) -> NormalFormGame:
    return NormalFormGame(np.load(METAGAMES / f"kuhn3_ce_{size}.npz")["payoffs"])


@pytest.mark.parametrize("concept", ["ce", "cce"])
@pytest.mark.parametrize("size", [8, 12])
def test_jpsro_kuhn3_metagames_match_clarabel(size, concept):
    check_against_reference(load_metagame(size), concept)


def test_jpsro_kuhn3_metagame_15_mgce_converges_without_fallback():
    # before the interior-point start, the dual Newton method hit its iteration cap here
    game = load_metagame(15)
    eq = solve(game, "mgce")
    assert eq.info["converged"] and "clarabel" not in eq.info["solver"]
    assert ce_gap(game, eq.joint) <= 1e-9 * float(np.ptp(game.payoffs))


def duplicate_strategies(payoffs: np.ndarray, copies) -> np.ndarray:
    """Repeat strategy ``s`` of player ``p`` ``copies[p][s]`` times (an exact duplicate of its whole slice)."""
    out = payoffs
    for p, reps in enumerate(copies):
        out = np.repeat(out, reps, axis=p + 1)
    return out


def test_duplicated_strategies_and_ties_match_clarabel():
    rng = np.random.default_rng(0)
    base = rng.integers(0, 3, size=(3, 3, 3, 3)).astype(float)         # many ties
    payoffs = duplicate_strategies(base, [[3, 1, 2], [1, 4, 1], [2, 2, 2]])
    game = NormalFormGame(payoffs)
    for concept in ("ce", "cce"):
        check_against_reference(game, concept)


def test_duplicates_split_the_mass_of_the_original_evenly():
    # Duplicating a strategy k times: by symmetry and uniqueness the MG solution gives each copy an equal share.
    rng = np.random.default_rng(1)
    base = rng.normal(size=(2, 3, 3))
    game = NormalFormGame(duplicate_strategies(base, [[3, 1, 1], [1, 1, 1]]))
    joint = solve(game, "mgce").joint
    assert np.allclose(joint[0], joint[1], atol=1e-12) and np.allclose(joint[1], joint[2], atol=1e-12)


def test_constant_block_and_dominated_strategies_match_clarabel():
    # player 0's payoff does not depend on player 2; player 1 has a weakly dominated copy of strategy 0
    rng = np.random.default_rng(2)
    payoffs = rng.integers(-2, 3, size=(3, 4, 4, 4)).astype(float)
    payoffs[0] = payoffs[0][:, :, :1]
    payoffs[1][:, 3, :] = payoffs[1][:, 0, :] - (rng.random((4, 4)) < 0.5)
    payoffs[2][:2] = 1.0                                                   # a constant block
    game = NormalFormGame(payoffs)
    for concept in ("ce", "cce"):
        check_against_reference(game, concept)


def test_constant_game_gives_uniform_distribution():
    game = NormalFormGame(np.ones((3, 2, 3, 2)))
    for name in ("mgce", "mgcce"):
        joint = solve(game, name).joint
        assert np.allclose(joint, 1 / 12, atol=1e-15)


@settings(max_examples=8)
@given(seed=st.integers(0, 2**32 - 1), levels=st.integers(2, 3),
       copies=st.lists(st.lists(st.integers(1, 3), min_size=2, max_size=3), min_size=3, max_size=3))
def test_random_degenerate_games_match_clarabel(seed, levels, copies):
    rng = np.random.default_rng(seed)
    shape = tuple(len(c) for c in copies)
    base = rng.integers(0, levels, size=(3, *shape)).astype(float)
    game = NormalFormGame(duplicate_strategies(base, copies))
    for concept in ("ce", "cce"):
        check_against_reference(game, concept)


def test_reference_rows_agree_with_hand_derived_chicken_constraint():
    # Chicken (D, S): u(D,D) = 0, u(D,S) = 7, u(S,D) = 2, u(S,S) = 6. Recommended D, deviate to S: gain 2 - 0 at DD
    # and 6 - 7 at DS, i.e. 2 x_DD - x_DS <= 0 before scaling.
    u = np.array([[0.0, 7.0], [2.0, 6.0]])
    rows = reference_rows(np.stack([u, u.T]), "ce")
    assert rows.shape == (4, 4)
    assert any(np.allclose(r * 2.0, [2.0, -1.0, 0.0, 0.0]) for r in rows)


def test_dual_newton_alone_converges_and_agrees_with_the_interior_point_path():
    from solvers.correlated_constraints import ce_constraints
    from solvers.correlated_dual import solve_regularised_dual

    a = ce_constraints(load_metagame(8)).matrix
    e = np.zeros(a.shape[0])
    newton = solve_regularised_dual(a, e, "gini", interior_point=False)
    default = solve_regularised_dual(a, e, "gini")
    assert newton.converged and default.converged
    assert newton.method == "dual projected Newton" and default.method == "interior point + active-set KKT"
    assert np.abs(newton.x - default.x).max() <= 1e-9
    assert max(newton.max_violation, default.max_violation) <= 1e-13


def test_iteration_cap_is_reported_honestly():
    from solvers.correlated_constraints import ce_constraints
    from solvers.correlated_dual import solve_regularised_dual

    a = ce_constraints(load_metagame(12)).matrix
    capped = solve_regularised_dual(a, np.zeros(a.shape[0]), "gini", max_iter=5)
    assert not capped.converged and capped.status == "max_iter" and capped.iterations <= 5
