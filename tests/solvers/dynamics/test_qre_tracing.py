"""solvers/dynamics/qre_tracing.py: the principal logit QRE branch from lambda = 0, turning points included."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from games import NormalFormGame, catalog
from solvers import nash_conv_per_player, qre_branch, solve
from solvers.dynamics.qre import qre_residual

# A 3x3 game whose principal branch bends back twice (found by tracing random games; the turning points
# are checked below from the table itself, every point of which is verified as a QRE).
FOLDING = NormalFormGame.from_bimatrix([[10, 7, -6], [10, -2, 9], [-6, -4, 9]],
                                       [[-7, 0, -3], [7, -8, -8], [0, 5, -7]])


def profile_at(df, i, game):
    values = df.drop(columns=["lambda", "residual"]).iloc[i].to_numpy()
    out, start = [], 0
    for k in game.shape:
        out.append(values[start:start + k])
        start += k
    return out


def test_prisoners_dilemma_follows_the_closed_form_everywhere():
    # defecting pays exactly 1 more than cooperating against anything, so P(defect) = 1 / (1 + e^-lambda)
    df = qre_branch(catalog.prisoners_dilemma(), lambda_max=20.0)
    assert df["lambda"].iloc[0] == 0.0 and df["lambda"].iloc[-1] == 20.0
    assert df["lambda"].is_monotonic_increasing and len(df) > 5
    want = 1.0 / (1.0 + np.exp(-df["lambda"].to_numpy()))
    np.testing.assert_allclose(df["row:defect"], want, atol=1e-10, rtol=0)
    np.testing.assert_allclose(df["col:defect"], want, atol=1e-10, rtol=0)
    assert df.attrs["converged"] and df.attrs["end"] == "lambda_max" and df.attrs["turning_points"] == 0


def test_matching_pennies_stays_uniform():
    df = qre_branch(catalog.matching_pennies(), lambda_max=100.0)
    np.testing.assert_allclose(df.drop(columns=["lambda", "residual"]).to_numpy(), 0.5, atol=1e-12)


def test_every_row_is_a_qre_and_the_end_matches_the_point_solver():
    for game in (catalog.bach_or_stravinsky(), catalog.random_game((3, 4), rng=5),
                 catalog.three_player_matching_pennies(), catalog.random_game((2, 2, 3), rng=1)):
        df = qre_branch(game, lambda_max=8.0)
        for i in range(len(df)):  # recomputed, not read from the table
            assert qre_residual(game, profile_at(df, i, game), float(df["lambda"].iloc[i])) <= 1e-9
        np.testing.assert_allclose(df.iloc[0].drop(["lambda", "residual"]).to_numpy(),
                                   np.concatenate([np.ones(k) / k for k in game.shape]), atol=1e-15)
        point = solve(game, "qre", rationality=8.0)
        np.testing.assert_allclose(np.concatenate(profile_at(df, -1, game)), np.concatenate(point.marginals),
                                   atol=1e-8)


def test_the_branch_passes_turning_points():
    df = qre_branch(FOLDING, lambda_max=10.0)
    lam = df["lambda"].to_numpy()
    assert df.attrs["turning_points"] == 2 and df.attrs["converged"]
    assert (np.diff(lam) < 0).any()  # lambda decreases along part of the branch
    up = int(np.argmax(np.diff(lam) < 0))  # the first turning point is near row `up`
    down = up + int(np.argmax(np.diff(lam[up:]) > 0))  # the second
    lo, hi = lam[down], lam[up]
    assert lo < hi
    mid = (lo + hi) / 2  # three QRE of the principal branch at (nearly) this lambda
    crossings = np.flatnonzero(np.diff(np.sign(lam - mid)) != 0)
    assert len(crossings) == 3
    profiles = [np.concatenate(profile_at(df, i, FOLDING)) for i in crossings]
    assert min(np.abs(profiles[0] - profiles[1]).max(), np.abs(profiles[1] - profiles[2]).max()) > 1e-3
    for i in range(len(df)):
        assert qre_residual(FOLDING, profile_at(df, i, FOLDING), float(lam[i])) <= 1e-9


def test_tracing_to_the_nash_limit():
    game = catalog.bach_or_stravinsky()
    df = qre_branch(game, nash_tol=1e-6)
    assert df.attrs["end"] == "nash" and df.attrs["converged"]
    last = profile_at(df, -1, game)
    scale = float(np.ptp(game.payoffs))
    assert nash_conv_per_player(game, last).max() <= 1e-6 * scale
    # BoS's principal branch ends at the mixed equilibrium ((3/5, 2/5), (2/5, 3/5))
    np.testing.assert_allclose(np.concatenate(last), [0.6, 0.4, 0.4, 0.6], atol=1e-4)


def test_bad_input_is_refused_clearly():
    with pytest.raises(ValueError, match="lambda_max"):
        qre_branch(catalog.matching_pennies(), lambda_max=-1.0)
    with pytest.raises(ValueError, match="max_steps"):
        qre_branch(catalog.matching_pennies(), lambda_max=1.0, max_steps=0)
    with pytest.raises(TypeError):
        qre_branch("not a game", lambda_max=1.0)


def test_a_spent_budget_is_reported_not_hidden():
    df = qre_branch(catalog.bach_or_stravinsky(), lambda_max=1e4, max_steps=3)
    assert df.attrs["end"] == "budget" and not df.attrs["converged"] and df["lambda"].iloc[-1] < 1e4


@given(st.sampled_from([1e-3, 0.5, 40.0, 1e3]), st.sampled_from([-1e3, 0.0, 2.5]))
def test_lambda_scales_inversely_with_the_payoffs(scale, offset):
    game = catalog.random_game((3, 3), rng=11)
    moved = game.with_payoffs(game.payoffs * scale + offset)
    a = qre_branch(game, lambda_max=5.0)
    b = qre_branch(moved, lambda_max=5.0 / scale)
    assert a.attrs["converged"] and b.attrs["converged"]
    assert b["lambda"].iloc[-1] == pytest.approx(5.0 / scale, rel=1e-12)
    cols = [c for c in a.columns if c not in ("lambda", "residual")]
    np.testing.assert_allclose(a[cols].iloc[-1].to_numpy(), b[cols].iloc[-1].to_numpy(), atol=1e-8)
    # the whole branch: b's profiles, interpolated at a's (scaled) lambdas, are a's profiles
    assert a["lambda"].is_monotonic_increasing and b["lambda"].is_monotonic_increasing
    for c in cols:
        np.testing.assert_allclose(np.interp(a["lambda"] / scale, b["lambda"], b[c]), a[c], atol=0.02)
