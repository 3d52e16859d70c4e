"""Property-based fuzz of every registered solver on generated normal-form games.

Games have 2 or 3 players and small shapes, integer or real payoffs, ties,
duplicated strategies, all-equal (constant) players, zero-sum pairs, and each
player's payoffs shifted by an offset and scaled by a factor from ``1e-300`` to
``1e300``. For every game and every method of ``solvers.methods()``,
:func:`solvers.solve` must

* return, or raise only ``ValueError``/``TypeError`` with a message;
* answer within 20 seconds of CPU time (the wall time is reported too: on a
  shared machine it is inflated by the other jobs);
* when it says ``converged``, have a gap within its stated tolerance relative
  to each player's payoff range, recomputed here in extended precision from
  the returned strategies alone (not with the library's normalisation).

The default suite runs a few games (``FUZZ_EXAMPLES``, default 6). The large
run (``make fuzz``) is::

    FUZZ_EXAMPLES=10000 FUZZ_REPORT=fuzz-report.json python -m pytest tests/solvers/test_fuzz.py -q --timeout=0

(``--timeout=0``: the whole run is one test, longer than the suite's per-test
limit) which records every call instead of stopping at the first failure, writes the
counts (calls, converged claims, violations, exceptions by type, slowest call)
to ``FUZZ_REPORT`` after every game and fails at the end if anything broke.
``FUZZ_METHODS=mgce,nash`` restricts a run to some methods.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import solvers
from games import NormalFormGame
from solvers import solve
from solvers.risk_averse.equilibria import rae_gaps

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "6"))
METHODS = [m for m in os.environ.get("FUZZ_METHODS", "").split(",") if m] or solvers.methods()
REPORT = os.environ.get("FUZZ_REPORT")
TIME_LIMIT = 20.0
SLACK = 1e-12  # two extended-precision computations of the same gap differ by far less

STATS = {"games": 0, "calls": 0, "converged_claims": 0, "violations": [], "exceptions": Counter(),
         "refusals": Counter(), "refusal_messages": Counter(), "max_seconds": 0.0, "slowest": "",
         "max_wall_seconds": 0.0}


# ------------------------------------------------------------------------------------------- games
@st.composite
def fuzz_games(draw) -> NormalFormGame:
    n = draw(st.sampled_from([2, 2, 3]))
    shape = tuple(draw(st.integers(1, 4 if n == 2 else 3)) for _ in range(n))
    kind = draw(st.sampled_from(["real", "integer", "ties", "duplicated", "all_equal", "zero_sum"]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    if kind in ("integer", "ties"):
        base = rng.integers(-5, 6, size=(n, *shape)).astype(np.float64)
        if kind == "ties":
            base = np.round(base / 3.0)
    else:
        base = rng.standard_normal((n, *shape))
    if kind == "duplicated":  # a player's last strategy copies its first (for every player's payoffs)
        p = draw(st.integers(0, n - 1))
        if shape[p] > 1:
            first = np.take(base, [0], axis=p + 1)
            base = np.concatenate([np.delete(base, -1, axis=p + 1), first], axis=p + 1)
    if kind == "all_equal":
        for p in range(n):
            if draw(st.booleans()):
                base[p] = float(rng.integers(-3, 4))
    if kind == "zero_sum" and n == 2:
        base[1] = -base[0]
    payoffs = np.empty_like(base)
    for p in range(n):
        exponent = draw(st.one_of(st.sampled_from([0, 0, 8, -8, 20, 200, -300, 300]), st.integers(-300, 300)))
        offset = draw(st.sampled_from([0.0, 0.0, 1e12, -1e6, 3.0, 1e15]))
        if exponent + 16 > 300:
            offset = 0.0
        payoffs[p] = (base[p] + offset) * 10.0 ** exponent
    return NormalFormGame(payoffs)


# ------------------------------------------------------------------- the independent check
def _normalised(game: NormalFormGame) -> tuple:
    """Each player's payoffs mapped onto [0, 1] in long double, and the ranges."""
    n = game.num_players
    u = game.payoffs.astype(np.longdouble)
    flat = u.reshape(n, -1)
    lo, span = flat.min(axis=1), flat.max(axis=1) - flat.min(axis=1)
    span_safe = np.where(span > 0, span, 1)
    v = (u - lo.reshape((n,) + (1,) * n)) / span_safe.reshape((n,) + (1,) * n)
    return v, span_safe


def _deviations(v: np.ndarray, marginals: list) -> list:
    n = v.shape[0]
    letters = "abcdefgh"[:n]
    out = []
    for p in range(n):
        others = [q for q in range(n) if q != p]
        spec = letters + "," + ",".join(letters[q] for q in others) + "->" + letters[p]
        out.append(np.einsum(spec, v[p], *[marginals[q] for q in others]))
    return out


def _relative_gains(v: np.ndarray, concept: str, joint: np.ndarray, marginals: list) -> np.ndarray:
    n = v.shape[0]
    gains = []
    for p in range(n):
        u = np.moveaxis(v[p], p, 0).reshape(v.shape[p + 1], -1)
        x = np.moveaxis(joint, p, 0).reshape(u.shape[0], -1)
        if concept == "ce":
            g = x @ u.T - (x * u).sum(axis=1)[:, None]
            gains.append(np.maximum(g.max(axis=1), 0).sum())
        elif concept == "cce":
            gains.append(max((u @ x.sum(axis=0)).max() - (x * u).sum(), 0))
    if concept in ("ce", "cce"):
        return np.array(gains)
    return np.array([max(d.max() - d @ m, 0) for d, m in zip(_deviations(v, marginals), marginals)])


def verified_gap(game: NormalFormGame, eq) -> tuple:
    """``(measure, tolerance)`` for ``eq``, recomputed from its strategies and stated options."""
    v, span = _normalised(game)
    joint = eq.joint.astype(np.longdouble)
    joint = joint / joint.sum()
    marginals = [m.astype(np.longdouble) / m.sum(dtype=np.longdouble) for m in eq.marginals]
    tol = float(eq.info["gap_tol"])
    assert tol <= max(float(eq.info.get("tol", 0.0)), solvers.registry.DEFAULT_GAP_TOL) + _epsilon_slack(game, eq)
    if eq.concept == "qre":
        lams = np.broadcast_to(np.asarray(eq.info["rationality"], dtype=np.longdouble), (game.num_players,)) * span
        residual = 0.0
        for lam, m, d in zip(lams, marginals, _deviations(v, marginals)):
            e = np.exp(lam * d - (lam * d).max())
            residual = max(residual, float(np.abs(m - e / e.sum()).max()))
        return residual, tol
    if eq.concept == "rae":
        order = float(eq.info.get("order", 2))
        gammas = np.broadcast_to(np.asarray(eq.info["risk_aversion"], dtype=np.float64), (game.num_players,))
        target = eq.info.get("target", "mean")
        lo = game.payoffs.reshape(game.num_players, -1).min(axis=1)
        if not isinstance(target, str):
            per = np.broadcast_to(np.asarray(target, dtype=np.float64), (game.num_players,))
            target = ((per - lo) / span.astype(np.float64)).tolist()
        with np.errstate(over="ignore"):
            scaled = np.minimum(gammas * span.astype(np.float64) ** (order - 1), 1e100)  # as solve caps it
        gaps = rae_gaps(NormalFormGame(v.astype(np.float64)), [m.astype(np.float64) for m in marginals], scaled,
                        risk=eq.info["risk"], target=target, order=order)
        # the gains are achieved by the best responses found, so they bound the true gap from below: a sum
        # above tol proves a false claim (gains plus the error bound may be loose when the best-response
        # search stops early, so that upper bound would not)
        return float(gaps.gains.sum()), tol
    concept = eq.concept if eq.concept in ("ce", "cce") else "nash"
    return float(_relative_gains(v, concept, joint, marginals).sum()), tol


def _epsilon_slack(game, eq) -> float:
    eps = float(eq.info.get("epsilon", 0.0)) if eq.concept in ("ce", "cce") else 0.0
    if eps <= 0:
        return 0.0
    span = _normalised(game)[1].astype(np.float64)
    return float(np.sum(np.array(game.shape) * eps / span))


# ------------------------------------------------------------------------------------ the run
def _check_call(game: NormalFormGame, method: str) -> str | None:
    """Run one solve; return a description of what went wrong, or None."""
    STATS["calls"] += 1
    start, wall = time.process_time(), time.perf_counter()
    try:
        eq = solve(game, method)
    except (ValueError, TypeError) as exc:
        STATS["refusals"][type(exc).__name__] += 1
        STATS["refusal_messages"][f"{method}: {str(exc)[:90]}"] += 1
        if "NaN or inf" in str(exc):  # the game is finite: such a message blames something the caller never gave
            return f"{method}: {type(exc).__name__} blaming an internal value: {exc}"
        return None if str(exc).strip() else f"{method}: {type(exc).__name__} without a message"
    except Exception as exc:  # noqa: BLE001 - any other exception is what this test is looking for
        STATS["exceptions"][type(exc).__name__] += 1
        return f"{method}: {type(exc).__name__}: {exc}"
    finally:
        seconds = time.process_time() - start
        STATS["max_wall_seconds"] = max(STATS["max_wall_seconds"], time.perf_counter() - wall)
        if seconds > STATS["max_seconds"]:
            STATS["max_seconds"], STATS["slowest"] = seconds, f"{method} on shape {game.shape}"
    if seconds > TIME_LIMIT:
        return f"{method}: took {seconds:.1f} s of CPU time"
    if not eq.converged:
        return None
    STATS["converged_claims"] += 1
    measure, tol = verified_gap(game, eq)
    if not measure <= tol * (1 + 1e-9) + SLACK:
        return f"{method}: converged with relative gap {measure:.3g} > tol {tol:.3g}"
    return None


@settings(max_examples=EXAMPLES, deadline=None, derandomize=REPORT is None, database=None,
          suppress_health_check=list(HealthCheck))
@given(fuzz_games())
def test_every_solver_on_generated_games(game):
    STATS["games"] += 1
    problems = []
    for method in METHODS:
        problem = _check_call(game, method)
        if problem is not None:
            problems.append(problem)
    if REPORT is None:
        assert not problems, (problems, game.payoffs.tolist())
    else:
        STATS["violations"].extend({"problem": p, "payoffs": game.payoffs.tolist()} for p in problems)
        _write_report()  # after every game, so a long run can be read while it goes


def _write_report() -> None:
    summary = {**STATS, "exceptions": dict(STATS["exceptions"]), "refusals": dict(STATS["refusals"]),
               "refusal_messages": dict(STATS["refusal_messages"].most_common()),
               "violation_count": len(STATS["violations"]), "methods": METHODS}
    with open(REPORT, "w") as fh:
        json.dump(summary, fh, indent=1)


if REPORT is not None:  # the large run only (the default run asserts game by game)

    def test_report_of_the_large_run():
        """Fails if anything in the large run broke (its counts are in ``FUZZ_REPORT``)."""
        _write_report()
        assert not STATS["violations"], STATS["violations"][:5]
