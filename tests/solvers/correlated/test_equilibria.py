"""Tests of the CE/CCE meta-solvers: hand-derived values, properties, OpenSpiel's jpsro, degenerate games."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import NormalFormGame, catalog
from solvers import cce_gap, ce_gap, methods, solve
from solvers.correlated.correlated_constraints import cce_constraints, ce_constraints
from solvers.correlated.correlated_dual import project_to_simplex

CORRELATED = ("mgce", "mgcce", "ce", "cce", "mwce", "mwcce", "mece", "mecce",
              "min_epsilon_mgce", "min_epsilon_mgcce", "rvce", "rvcce")
PRIMARY = ("mgce", "mgcce", "mwce", "mwcce", "mece", "mecce", "min_epsilon_mgce", "min_epsilon_mgcce",
           "rvce", "rvcce")
CONCEPT = {name: ("cce" if name.endswith("cce") else "ce") for name in CORRELATED}

# Chicken's maximum-Gini CE, derived by hand: by symmetry x = (a, b, b, c) on (DD, DS, SD, SS);
# the binding constraint 2a <= b gives a = b/2, and minimising a^2 + 2b^2 + c^2 on a + 2b + c = 1
# gives b = 5/17, a = 5/34, c = 9/34 (and c <= 2b holds). Each player gets 7b + 2b + 6c = 72/17.
CHICKEN_MG = np.array([[5 / 34, 5 / 17], [5 / 17, 9 / 34]])


def payoff_range(game: NormalFormGame) -> float:
    return max(1e-300, float(np.ptp(game.payoffs)))


def gap_of(game, joint, concept):
    return ce_gap(game, joint) if concept == "ce" else cce_gap(game, joint)


def entropy(p):
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def test_all_names_registered():
    for name in CORRELATED:
        assert name in methods(CONCEPT[name]), name


# ------------------------------------------------------------ reference values
def test_chicken_max_welfare_ce_pays_5_25():
    eq = solve(catalog.chicken(), "mwce")
    np.testing.assert_allclose(eq.values, [5.25, 5.25], atol=1e-9)
    assert eq.gap <= 1e-9


@pytest.mark.parametrize("name", ["mgce", "ce", "mgcce", "cce"])
def test_chicken_max_gini_is_hand_derived(name):
    eq = solve(catalog.chicken(), name)
    np.testing.assert_allclose(eq.joint, CHICKEN_MG, atol=1e-12)
    np.testing.assert_allclose(eq.values, [72 / 17, 72 / 17], atol=1e-12)
    assert eq.info["converged"]


def test_bach_or_stravinsky_mgce_pays_60_43():
    # Hand check: x = (a, b, c, d) on (BB, BS, SB, SS). The CE rows are 2b <= 3a, 3c <= 2d (row player)
    # and 3c <= 2a, 2b <= 3d (column player). With 3c = 2a = 2d binding, minimising 2a^2 + b^2 + c^2 on
    # 2a + b + c = 1 gives a = d = 12/43, b = 11/43, c = 8/43, and each player gets 5a = 60/43.
    eq = solve(catalog.bach_or_stravinsky(), "mgce")
    np.testing.assert_allclose(eq.values, [60 / 43, 60 / 43], atol=1e-12)
    np.testing.assert_allclose(eq.joint, np.array([[12, 11], [8, 12]]) / 43, atol=1e-12)


@pytest.mark.parametrize("name", PRIMARY)
def test_prisoners_dilemma_unique_equilibrium_is_defect_defect(name):
    eq = solve(catalog.prisoners_dilemma(), name)
    np.testing.assert_allclose(eq.joint, [[0, 0], [0, 1]], atol=1e-8)
    np.testing.assert_allclose(eq.values, [-2, -2], atol=1e-7)


def three_player_dominant_chicken() -> NormalFormGame:
    """Player 0 strictly prefers strategy 0 (payoff 1 vs 0); players 1 and 2 play chicken whatever player 0 does.

    Every CE and CCE puts no mass on player 0's strategy 1, so the MG CE and MG CCE are chicken's
    (the CCE constraints of 2x2 chicken coincide with its CE constraints): values (1, 72/17, 72/17).
    """
    chicken = catalog.chicken().payoffs
    payoffs = np.zeros((3, 2, 2, 2))
    payoffs[0, 0] = 1.0
    payoffs[1] = chicken[0][None]
    payoffs[2] = chicken[1][None]
    return NormalFormGame(payoffs)


@pytest.mark.parametrize("name", ["mgce", "mgcce"])
def test_three_player_game_with_known_max_gini(name):
    eq = solve(three_player_dominant_chicken(), name)
    expected = np.zeros((2, 2, 2))
    expected[0] = CHICKEN_MG
    np.testing.assert_allclose(eq.joint, expected, atol=1e-12)
    np.testing.assert_allclose(eq.values, [1, 72 / 17, 72 / 17], atol=1e-12)


def test_three_player_coordination_uniform_is_mg():
    # Everyone gets 1 when all three match. Under the uniform joint every deviation gains exactly 0
    # (hand check: each player matches the others with probability 1/4 whatever it plays), so the
    # global minimiser of ||x|| on the simplex is a CE and a CCE, paying 1/4 each.
    same = np.indices((2, 2, 2))
    u = ((same[0] == same[1]) & (same[1] == same[2])).astype(float)
    game = NormalFormGame(np.stack([u, u, u]))
    for name in ("mgce", "mgcce", "mece", "mecce"):
        eq = solve(game, name)
        np.testing.assert_allclose(eq.joint, np.full((2, 2, 2), 1 / 8), atol=1e-9)
        np.testing.assert_allclose(eq.values, [0.25] * 3, atol=1e-9)
    # ... and the max-welfare CE coordinates on one matching profile: welfare 3.
    assert solve(game, "mwce").info["welfare"] == pytest.approx(3.0, abs=1e-9)


def test_constraint_rows_match_the_definition():
    game = catalog.random_game((2, 3, 2), rng=5)
    x = np.random.default_rng(1).dirichlet(np.ones(game.num_profiles)).reshape(game.shape)
    c = ce_constraints(game)
    # the largest CE row value per (player, recommendation) equals the gap's per-recommendation gain
    gains = c.violations(x)
    total = 0.0
    for p in range(3):
        for a in range(game.shape[p]):
            sel = (c.player == p) & (c.recommended == a)
            total += max(0.0, gains[sel].max()) if sel.any() else 0.0
    assert total == pytest.approx(ce_gap(game, x), abs=1e-12)
    cc = cce_constraints(game)
    g2 = cc.violations(x)
    total = sum(max(0.0, g2[cc.player == p].max()) for p in range(3))
    assert total == pytest.approx(cce_gap(game, x), abs=1e-12)


def test_project_to_simplex_matches_brute_force():
    rng = np.random.default_rng(0)
    import cvxpy as cp

    for _ in range(5):
        v = rng.normal(size=7)
        y = cp.Variable(7)
        cp.Problem(cp.Minimize(cp.sum_squares(y - v)), [y >= 0, cp.sum(y) == 1]).solve(solver="CLARABEL")
        np.testing.assert_allclose(project_to_simplex(v), y.value, atol=1e-7)


# ------------------------------------------------------------------ properties
game_shapes = st.lists(st.integers(1, 4), min_size=2, max_size=4).filter(lambda s: np.prod(s) <= 96)


@settings(max_examples=20)
@given(shape=game_shapes, seed=st.integers(0, 10_000))
def test_random_games_every_solver_is_an_equilibrium(shape, seed):
    game = catalog.random_game(shape, rng=seed)
    tol = 1e-6 * payoff_range(game)
    for name in PRIMARY:
        eq = solve(game, name, **({"seed": seed} if name.startswith("rv") else {}))
        assert eq.info["converged"], (name, eq.info)
        assert eq.joint.min() >= 0 and abs(eq.joint.sum() - 1) <= 1e-12
        assert eq.gap <= tol, (name, eq.gap)
        assert eq.gap == pytest.approx(gap_of(game, eq.joint, CONCEPT[name]), abs=1e-12)


@settings(max_examples=15)
@given(shape=st.lists(st.integers(1, 3), min_size=2, max_size=3), seed=st.integers(0, 10_000),
       concept=st.sampled_from(["ce", "cce"]))
def test_max_gini_is_the_minimum_norm_point(shape, seed, concept):
    import cvxpy as cp

    game = catalog.random_game(shape, rng=seed)
    ours = solve(game, "mg" + concept).joint.ravel()
    c = (ce_constraints if concept == "ce" else cce_constraints)(game)
    x = cp.Variable(game.num_profiles, nonneg=True)
    cons = [cp.sum(x) == 1] + ([c.matrix @ x <= 0] if c.num_rows else [])
    cp.Problem(cp.Minimize(cp.sum_squares(x)), cons).solve(solver="CLARABEL", tol_gap_abs=1e-12,
                                                            tol_gap_rel=1e-12, tol_feas=1e-12)
    # ours is feasible (checked by the gap elsewhere) and no feasible point has a smaller norm
    assert ours @ ours <= x.value @ x.value + 1e-9
    np.testing.assert_allclose(ours, x.value, atol=1e-5)


@settings(max_examples=15)
@given(shape=game_shapes, seed=st.integers(0, 10_000), concept=st.sampled_from(["ce", "cce"]))
def test_max_entropy_beats_max_gini_on_entropy(shape, seed, concept):
    game = catalog.random_game(shape, rng=seed)
    me = solve(game, "me" + concept)
    mg = solve(game, "mg" + concept)
    assert entropy(me.joint.ravel()) >= entropy(mg.joint.ravel()) - 1e-9
    assert me.info["entropy"] == pytest.approx(entropy(me.joint.ravel()), abs=1e-9)


@settings(max_examples=15)
@given(shape=game_shapes, seed=st.integers(0, 10_000), concept=st.sampled_from(["ce", "cce"]))
def test_min_epsilon_is_at_most_zero_and_satisfied(shape, seed, concept):
    game = catalog.random_game(shape, rng=seed)
    eq = solve(game, "min_epsilon_mg" + concept)
    scale = payoff_range(game)
    assert eq.info["epsilon"] <= 1e-9 * scale  # an exact CE/CCE always exists
    c = (ce_constraints if concept == "ce" else cce_constraints)(game)
    if c.num_rows:
        assert c.violations(eq.joint, eq.info["epsilon"]).max() <= 1e-8 * scale
        # and no distribution does better than epsilon* (within the LP's accuracy)
        mg = solve(game, "mg" + concept)
        assert c.violations(mg.joint).max() >= eq.info["epsilon"] - 1e-8 * scale


def test_epsilon_relaxation_widens_the_polytope():
    game = catalog.chicken()
    strict = solve(game, "mgce")
    relaxed = solve(game, "mgce", epsilon=0.5)
    assert relaxed.info["epsilon"] == 0.5
    assert (relaxed.joint ** 2).sum() < (strict.joint ** 2).sum()
    c = ce_constraints(game)
    assert c.violations(relaxed.joint, 0.5).max() <= 1e-10
    # a large enough epsilon makes the uniform joint feasible
    np.testing.assert_allclose(solve(game, "mgce", epsilon=10).joint, np.full((2, 2), 0.25), atol=1e-12)


def test_random_vertex_is_seeded():
    game = catalog.random_game((3, 3), rng=2)
    a = solve(game, "rvce", seed=7).joint
    b = solve(game, "rvce", rng=np.random.default_rng(7)).joint
    np.testing.assert_array_equal(a, b)
    assert solve(game, "rvce", seed=7).gap <= 1e-9


# ---------------------------------------------------------------- OpenSpiel
def _openspiel_jpsro(monkeypatch):
    import cvxpy as cp
    from open_spiel.python.algorithms import jpsro

    # jpsro's LPs use ECOS, its default, when installed; only without it are they switched to Clarabel at
    # tight tolerances. (The games below are ones on which jpsro's OSQP settings terminate: with
    # max_iter=1e9 it does not stop on some small games, e.g. catalog.random_game((2, 3, 2), rng=2) for mgcce.)
    if "ECOS" not in cp.installed_solvers():
        monkeypatch.setattr(jpsro, "DEFAULT_ECOS_SOLVER_KWARGS",
                            {"solver": "CLARABEL", "tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10,
                             "verbose": False})
    return jpsro


@pytest.mark.parametrize("shape,seed", [((3, 3), 0), ((2, 4), 1), ((2, 3, 2), 3), ((3, 3, 3), 3)])
def test_agrees_with_openspiel_jpsro(monkeypatch, shape, seed):
    jpsro = _openspiel_jpsro(monkeypatch)
    game = catalog.random_game(shape, rng=seed)
    repeats = [np.ones(k, dtype=int) for k in shape]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, fn in (("mgce", jpsro._mgce), ("mgcce", jpsro._mgcce)):
            dist, _ = fn(game.payoffs, repeats)
            np.testing.assert_allclose(solve(game, name).joint, dist, atol=1e-5, err_msg=name)
        for name, fn in (("mwce", jpsro._mwce), ("mwcce", jpsro._mwcce)):
            dist, _ = fn(game.payoffs, repeats)
            welfare = float(game.payoffs.sum(axis=0).ravel() @ dist.ravel())
            assert solve(game, name).info["welfare"] == pytest.approx(welfare, abs=1e-6), name


# ------------------------------------------------------------ degenerate games
@pytest.mark.parametrize("name", PRIMARY)
def test_constant_game(name):
    game = NormalFormGame(np.full((3, 2, 3, 2), 4.0))
    eq = solve(game, name)
    assert eq.gap == 0.0
    if name.startswith(("mg", "me", "min_epsilon")):
        np.testing.assert_allclose(eq.joint, np.full((2, 3, 2), 1 / 12), atol=1e-12)


def test_one_by_k_game():
    # Player 0 has one strategy; player 1 has payoffs (1, 3, 3): every CE puts all mass on its two best
    # strategies, and the min-norm / max-entropy CE split it evenly.
    game = NormalFormGame.from_bimatrix([[0.0, 0.0, 0.0]], [[1.0, 3.0, 3.0]])
    for name in ("mgce", "mgcce", "mece", "mecce"):
        np.testing.assert_allclose(solve(game, name).joint, [[0, 0.5, 0.5]], atol=1e-9)
    for name in ("mwce", "rvce", "rvcce", "min_epsilon_mgce"):
        eq = solve(game, name)
        assert eq.joint[0, 0] <= 1e-9 and eq.gap <= 1e-9


def test_duplicate_strategies_are_split_evenly():
    # Chicken with the row player's "swerve" listed twice: the CE polytope is symmetric in the copies,
    # so the unique MG and ME points give them equal mass.
    a = np.array([[0, 7], [2, 6], [2, 6]], dtype=float)
    b = np.array([[0, 2], [7, 6], [7, 6]], dtype=float)
    game = NormalFormGame.from_bimatrix(a, b)
    # rows: D->S (D->S' is the same row), S->D, S'->D for the row player (S->S' gains nothing);
    # D->S and S->D for the column player
    assert ce_constraints(game).num_rows == 3 + 2
    for name in ("mgce", "mgcce", "mece", "mecce", "min_epsilon_mgce"):
        eq = solve(game, name)
        np.testing.assert_allclose(eq.joint[1], eq.joint[2], atol=1e-9, err_msg=name)
        assert eq.gap <= 1e-9, name
    for name in ("mwce", "mwcce"):
        assert solve(game, name).values.sum() == pytest.approx(10.5, abs=1e-9)


def test_ties_and_integer_payoffs():
    rng = np.random.default_rng(3)
    game = NormalFormGame(rng.integers(0, 2, size=(3, 3, 3, 2)).astype(float))
    for name in PRIMARY:
        eq = solve(game, name, **({"seed": 1} if name.startswith("rv") else {}))
        assert eq.converged and eq.gap <= 1e-9, name


@pytest.mark.parametrize("magnitude", [1e-9, 1e9])
def test_payoff_scale_does_not_matter(magnitude):
    game = catalog.chicken().with_payoffs(catalog.chicken().payoffs * magnitude)
    eq = solve(game, "mgce")
    np.testing.assert_allclose(eq.joint, CHICKEN_MG, atol=1e-12)
    np.testing.assert_allclose(eq.values / magnitude, [72 / 17] * 2, atol=1e-9)
    assert solve(game, "mwce").info["welfare"] / magnitude == pytest.approx(10.5, abs=1e-9)
    me = solve(game, "mece")
    base = solve(catalog.chicken(), "mece")
    np.testing.assert_allclose(me.joint, base.joint, atol=1e-10)
    eps = solve(game, "min_epsilon_mgcce")
    assert eps.info["epsilon"] / magnitude == pytest.approx(
        solve(catalog.chicken(), "min_epsilon_mgcce").info["epsilon"], rel=1e-6)


def test_four_players():
    game = catalog.random_game((2, 3, 2, 2), rng=11)
    for name in PRIMARY:
        eq = solve(game, name, **({"seed": 0} if name.startswith("rv") else {}))
        assert eq.converged and eq.gap <= 1e-8 * payoff_range(game), name


# ------------------------------------------------------------------ bad input
def test_nan_game_is_rejected():
    payoffs = catalog.chicken().payoffs.copy()
    payoffs[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="finite"):
        solve(payoffs, "mgce")


def test_unknown_option_is_rejected():
    with pytest.raises(TypeError, match="no option 'epsilom'"):
        solve(catalog.chicken(), "mgce", epsilom=0.1)


@pytest.mark.parametrize("tol", [-1e-9, 0.0, float("nan")])
def test_bad_tolerance_is_rejected(tol):
    with pytest.raises(ValueError, match="tol"):
        solve(catalog.chicken(), "mgce", tol=tol)


def test_bad_epsilon_is_rejected():
    with pytest.raises(ValueError, match="epsilon must be finite"):
        solve(catalog.chicken(), "mgcce", epsilon=float("inf"))
    with pytest.raises(ValueError, match="infeasible"):
        solve(catalog.prisoners_dilemma(), "mgce", epsilon=-0.5)
    with pytest.raises(TypeError, match="epsilon"):
        solve(catalog.chicken(), "mwce", epsilon="small")


def test_rng_and_seed_together_are_rejected():
    with pytest.raises(ValueError, match="either rng or seed"):
        solve(catalog.chicken(), "rvce", rng=1, seed=1)


def test_bad_lp_method_is_rejected():
    with pytest.raises(ValueError, match="lp_method"):
        solve(catalog.chicken(), "mwce", lp_method="simplex")


def test_bad_max_iter_is_rejected():
    with pytest.raises(ValueError, match="max_iter"):
        solve(catalog.chicken(), "mgce", max_iter=0)


def test_non_convergence_is_reported_and_recovered():
    # One Newton iteration is not enough here: the result must say so and come from the Clarabel
    # fallback, still the minimum-norm CE.
    game = catalog.random_game((4, 4), rng=0)
    reference = solve(game, "mgce")
    capped = solve(game, "mgce", max_iter=1)
    assert capped.info["solver"].startswith("clarabel (after dual Newton: max_iter")
    assert capped.converged
    np.testing.assert_allclose(capped.joint, reference.joint, atol=1e-6)
    assert capped.gap <= 1e-7


@pytest.mark.parametrize("shape,concept", [((5, 5, 5), "cce"), ((6, 6, 4), "cce"), ((12, 12), "cce"),
                                           ((4, 4, 4, 4), "ce")])
def test_column_generation_matches_the_whole_lp(shape, concept):
    from solvers.correlated.correlated_lp import maximise_linear, maximise_linear_by_columns

    game = catalog.random_game(shape, rng=4)
    c = (ce_constraints if concept == "ce" else cce_constraints)(game)
    welfare = game.payoffs.sum(axis=0).ravel()
    by_columns = maximise_linear_by_columns(c.matrix, np.zeros(c.num_rows), welfare)
    whole = maximise_linear(c.matrix, np.zeros(c.num_rows), welfare)
    assert "column generation" in by_columns.status
    assert by_columns.value == pytest.approx(whole.value, abs=1e-9)
    assert c.violations(by_columns.x).max() <= 1e-9
    # and through the solver, which reports the same welfare with either LP route
    auto = solve(game, "mw" + concept)
    assert auto.info["welfare"] == pytest.approx(solve(game, "mw" + concept, lp_method="highs-ds").info["welfare"],
                                                 abs=1e-9)


def test_column_generation_reuses_one_highs_instance_safely():
    # The LP helpers share one HiGHS object per thread; options set for one LP (primal simplex for the
    # restricted CCE LPs, interior point on request) must not leak into the next one.
    from solvers.correlated.correlated_lp import maximise_linear

    game = catalog.random_game((6, 6, 5), rng=8)
    c = cce_constraints(game)
    welfare = game.payoffs.sum(axis=0).ravel()
    ipm = maximise_linear(c.matrix, np.zeros(c.num_rows), welfare, method="highs-ipm")
    first = solve(game, "mwcce").info["welfare"]
    simplex = maximise_linear(c.matrix, np.zeros(c.num_rows), welfare)
    assert first == pytest.approx(simplex.value, abs=1e-9)
    assert ipm.value == pytest.approx(simplex.value, abs=1e-7)
    assert "column generation" in solve(game, "mwcce").info["status"]


# Maximum-Gini CE/CCE on degenerate games: JPSRO meta-games of 3-player Kuhn, duplicates, ties, constant blocks.
# The reference is an independent solve of the same quadratic program: the CE/CCE rows are written out here with
# plain loops over (player, recommendation, deviation), without the payoff-class merging of
# ``solvers.correlated.correlated_constraints``,
# and cvxpy + Clarabel solves ``min ||x||^2`` over them at tight tolerances.
# The maximum-Gini point is unique (the objective is strictly convex), so the two must agree.

METAGAMES = Path(__file__).resolve().parents[3] / "experiments" / "benchmarks" / "results" / "mgce_metagames"


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
    from solvers.correlated.correlated_constraints import ce_constraints
    from solvers.correlated.correlated_dual import solve_regularised_dual

    a = ce_constraints(load_metagame(8)).matrix
    e = np.zeros(a.shape[0])
    newton = solve_regularised_dual(a, e, "gini", interior_point=False)
    default = solve_regularised_dual(a, e, "gini")
    assert newton.converged and default.converged
    assert newton.method == "dual projected Newton" and default.method == "interior point + active-set KKT"
    assert np.abs(newton.x - default.x).max() <= 1e-9
    assert max(newton.max_violation, default.max_violation) <= 1e-13


def test_iteration_cap_is_reported_honestly():
    from solvers.correlated.correlated_constraints import ce_constraints
    from solvers.correlated.correlated_dual import solve_regularised_dual

    a = ce_constraints(load_metagame(12)).matrix
    capped = solve_regularised_dual(a, np.zeros(a.shape[0]), "gini", max_iter=5)
    assert not capped.converged and capped.status == "max_iter" and capped.iterations <= 5
