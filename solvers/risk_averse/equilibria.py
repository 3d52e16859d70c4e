"""Risk-averse equilibria: mean-variance (RAE) and downside / lower-partial-moment (DRAE).

What the papers say, and how far it was checked
-----------------------------------------------
Only the papers' abstracts, and third-party summaries of the downside paper,
could be read when this module was revised; their section text and
equations could not be opened. The facts taken from them are:

* Slumbers, Mguni, McAleer, Blumberg, Yang and Wang, "A Game-Theoretic
  Framework for Managing Risk in Multi-Agent Systems", ICML 2023 (arXiv
  2205.15434). The risk-averse equilibrium (RAE) minimises the variance of a
  player's reward *accounting for the other agents' strategies* (the
  downside paper describes it as the reward variance caused by the opposing
  players' strategies), always exists (earlier risk-averse concepts, the
  abstract says, either are risk-neutral towards the other agents'
  randomness or may fail to exist), has convergence properties like Nash's,
  "generalises to the risk-dominant NE in certain cases" (and, empirically,
  in a trust-dilemma game), and lowers the reward variance in matrix games
  with high-risk outcomes. The
  ICLR 2023 submission of the same work ("A Risk-Averse Equilibrium for
  Multi-Agent Systems") states the best response as the *minimum-variance
  strategy for a given level of expected utility* (Markowitz's mean-variance
  frontier) and learns the equilibrium by a fictitious-play-type algorithm
  that provably converges in zero-sum and potential games.
* Slumbers, Evans, Ganesh and Ardon, "Downside Risk-Aware Equilibria for
  Strategic Decision-Making", arXiv 2510.03446 (ECAI 2024 workshop). The
  downside risk-aware equilibrium (DRAE) replaces the variance by a *lower
  partial moment* (LPM), which penalises only outcomes below a target and,
  through its order, models higher-order risk preferences; each player's
  utility is "expected reward minus gamma times risk"; existence is proved
  and the equilibrium is computed by stochastic fictitious play. The paper
  also lets payoffs depend on exogenous random states of the environment,
  which this module does not model (its payoffs are those of the game).

The exact symbols, equation numbers, the papers' parametrisation of the risk
weight and the LPM target used in their experiments could not be checked;
the formulas below are the most faithful reading of the facts above, and
every choice that goes beyond them is marked as such.

Definitions implemented
-----------------------
Write ``s`` for a profile of the other players' pure strategies, drawn from the
product of their mixtures ``pi_-i``, and ``U_i(a, s)`` for player ``i``'s payoff.
Treating each own action as an asset whose return is random through ``s``,
player ``i``'s reward given ``s`` under its mixture ``pi_i`` (the portfolio
weights) is ``Z_i(s) = sum_a pi_i(a) U_i(a, s)``, with mean
``pi_i^T u_i(pi_-i)``, ``u_i(pi_-i)[a] = E_s U_i(a, s)``.

* **Variance (RAE).** The risk is the variance of ``Z_i`` over the
  opponents' randomisation,

      Var_i(pi) = Var_{s ~ pi_-i}[Z_i(s)] = pi_i^T Sigma_i(pi_-i) pi_i,
      Sigma_i(pi_-i)[a, b] = Cov_{s ~ pi_-i}(U_i(a, s), U_i(b, s)),

  the covariance matrix of the action payoffs under the others' mixture. The
  player's own randomisation is deliberately not part of the risk: with it,
  the objective would not be concave in ``pi_i`` and equilibria could fail to
  exist, which the paper's existence claim rules out. Each player maximises

      R_i(pi) = pi_i^T u_i(pi_-i) - gamma_i * pi_i^T Sigma_i(pi_-i) pi_i,

  with risk aversion ``gamma_i >= 0``. This penalised form traces the same
  mean-variance frontier as "minimum variance for a given expected utility"
  (for ``gamma_i > 0`` it is that problem's Lagrangian, with the
  expected-utility weight ``lambda_i = 1 / gamma_i``); which of ``gamma`` or
  ``lambda`` the paper writes is not verified. An RAE is a profile where every
  ``pi_i`` maximises ``R_i(., pi_-i)`` over the simplex. ``R_i`` is concave in
  ``pi_i`` and continuous, so an RAE exists (Debreu, Glicksberg, Fan). With
  ``gamma = 0`` it is exactly a Nash equilibrium. A pure profile carries no
  variance under this definition, so every pure Nash equilibrium is also an
  RAE; risk aversion changes the mixed equilibria and enlarges the basin of
  the risk-dominant equilibrium, which is how :func:`rae` selects (Hare,
  Hare) in the stag hunt from the uniform start. (Whether the paper's
  risk-dominance result concerns its learning procedure or the equilibrium
  set, which under this reading still contains (Stag, Stag), could not be
  checked.)

* **Downside risk (DRAE).** The variance is replaced by the lower partial
  moment of order ``n`` below a target ``tau_i``,

      LPM_i(pi) = E_{s ~ pi_-i}[ max(0, tau_i - Z_i(s))^n ],

  and each player maximises ``pi_i^T u_i(pi_-i) - gamma_i * LPM_i(pi)``. The
  target is either the player's own expected reward ``tau_i = E_s Z_i(s)``
  (``target="mean"``, the default; with ``n = 2`` this is the
  semivariance) or a fixed reference payoff (``target=<number>``, the usual
  finance convention of a minimum acceptable return). The default order is
  ``n = 2``; ``order`` accepts any real ``n >= 2`` (higher orders weigh large
  shortfalls more, the paper's "higher-order risk preferences"). ``LPM_i`` is
  convex in ``pi_i`` for ``n >= 1`` (``max(0, .)^n`` is convex and
  non-decreasing and ``tau_i - Z_i(s)`` is linear in ``pi_i``), so a DRAE
  exists by the same argument; orders below 2 are refused here only because
  their gradient is not Lipschitz (order 1 is not even differentiable), which
  the solvers below rely on. Which target and order the paper uses by
  default, and whether it evaluates the exact LPM of the mixture (as here) or
  a quadratic co-LPM approximation (its convergence proof is described as
  using a "quadratic risk term"), is not verified.

Gap
---
The gap of a profile, computed by :func:`rae_gap` independently of the
solver, is ``sum_i [ max_{pi'_i in simplex} R_i(pi'_i, pi_-i) - R_i(pi) ]``.
The inner maximisation is a concave programme over the simplex; it is solved
by accelerated projected gradient followed by a Newton / KKT solve on the
identified support (exact for the quadratic pieces of the variance and the
order-2 LPM), and is certified by the Frank-Wolfe duality bound, reported as
``error_bound``.

Algorithm
---------
The papers learn the equilibrium with fictitious play (RAE) and stochastic
fictitious play (DRAE). :func:`rae` and :func:`downside_rae` instead run
projected extragradient (Korpelevich) with an adaptive step on the players'
risk-adjusted gradients ``u_i - gamma_i * grad risk_i``; the equilibrium they
target is the same. They stop as soon as the Frank-Wolfe bound
``sum_i max_a g_i[a] - g_i . pi_i`` (an upper bound on the gap by concavity)
or the exact gap is ``<= tol``. The method converges (last iterate) in
monotone games such as two-player zero-sum games with ``gamma = 0`` and near
strict equilibria; elsewhere it may not, and the result then says
``converged=False`` (``converged`` requires the gap plus its error bound to
be ``<= tol``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from games.normal_form import NormalFormGame, as_game
from solvers.dynamics.common import (
    FlatLayout,
    PayoffOperator,
    check_nonnegative_float,
    check_positive_int,
    initial_strategies,
)
from solvers.equilibrium import Equilibrium
from solvers.gaps import nash_conv
from solvers.registry import Check, make_equilibrium, register
from solvers.risk_averse.best_response import (
    RiskAdjustedBestResponse,
    _aversions,
    _best_response,
    _check_order,
    _problems,
    _projected_step,
    _Risk,
    _risk_model,
    risk_adjusted_best_response,
)

__all__ = [
    "RiskAdjustedBestResponse",
    "downside_rae",
    "lower_partial_moment",
    "payoff_variance",
    "rae",
    "rae_gap",
    "rae_gaps",
    "risk_adjusted_best_response",
    "risk_adjusted_values",
]

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------- measures
def payoff_variance(game, marginals) -> np.ndarray:
    """Each player's payoff variance over the others' randomisation, ``pi_i^T Sigma_i(pi_-i) pi_i``.

    Examples
    --------
    >>> import numpy as np
    >>> from games import catalog
    >>> payoff_variance(catalog.stag_hunt(), [np.array([1.0, 0]), np.ones(2) / 2]).tolist()
    [4.0, 0.0]
    """
    game = as_game(game)
    marginals = game.check_marginals(marginals)
    probs = _problems(PayoffOperator.from_game(game), marginals, np.zeros(game.num_players), _Risk("variance"))
    return np.array([pr.risk_of(m) for pr, m in zip(probs, marginals)])


def lower_partial_moment(game, marginals, target="mean", order=2) -> np.ndarray:
    """Each player's lower partial moment ``E_s[max(0, tau_i - Z_i(s))^order]`` over the others' randomisation.

    ``target="mean"`` uses the player's own expected payoff as ``tau_i``
    (with ``order=2``, the semivariance); a number is a fixed reference payoff.

    Examples
    --------
    >>> import numpy as np
    >>> from games import catalog
    >>> lower_partial_moment(catalog.stag_hunt(), [np.array([1.0, 0]), np.ones(2) / 2]).tolist()
    [2.0, 0.0]
    >>> # Stag pays 4 or 0 against a fair coin: a shortfall of 2 below the mean, half the time
    >>> lower_partial_moment(catalog.stag_hunt(), [np.array([1.0, 0]), np.ones(2) / 2], order=3).tolist()
    [4.0, 0.0]
    >>> # below the fixed reference payoff 1 the shortfall is 1, half the time
    >>> lower_partial_moment(catalog.stag_hunt(), [np.array([1.0, 0]), np.ones(2) / 2], target=1.0).tolist()
    [0.5, 0.0]
    """
    game = as_game(game)
    marginals = game.check_marginals(marginals)
    probs = _problems(PayoffOperator.from_game(game), marginals, np.zeros(game.num_players),
                      _risk_model("downside", target, order))
    return np.array([pr.risk_of(m) for pr, m in zip(probs, marginals)])


def risk_adjusted_values(game, marginals, risk_aversion, risk: str = "variance", target="mean",
                         order=2) -> np.ndarray:
    """Each player's risk-adjusted objective ``pi_i^T u_i - gamma_i * risk_i``.

    Examples
    --------
    >>> import numpy as np
    >>> from games import catalog
    >>> risk_adjusted_values(catalog.stag_hunt(), [np.array([1.0, 0]), np.ones(2) / 2], 0.5).tolist()
    [0.0, 3.5]
    """
    game = as_game(game)
    marginals = game.check_marginals(marginals)
    probs = _problems(PayoffOperator.from_game(game), marginals, _aversions(risk_aversion, game.num_players),
                      _risk_model(risk, target, order))
    return np.array([pr.objective(m) for pr, m in zip(probs, marginals)])


@dataclass(frozen=True, eq=False)
class RiskGaps:
    """Per-player risk-adjusted deviation gains and the certificate of their accuracy."""

    gains: np.ndarray
    error_bound: float


def rae_gaps(game, marginals, risk_aversion, risk: str = "variance", target="mean", order=2) -> RiskGaps:
    """Each player's best risk-adjusted deviation gain ``max R_i(., pi_-i) - R_i(pi)`` (see :func:`rae_gap`).

    Examples
    --------
    >>> import numpy as np
    >>> from games import catalog
    >>> rae_gaps(catalog.stag_hunt(), [np.array([0.0, 1.0])] * 2, 1.0).gains.tolist()
    [0.0, 0.0]
    """
    game = as_game(game)
    marginals = [np.asarray(m, dtype=np.float64) for m in game.check_marginals(marginals)]
    probs = _problems(PayoffOperator.from_game(game), marginals, _aversions(risk_aversion, game.num_players),
                      _risk_model(risk, target, order))
    gains, bound = np.empty(game.num_players), 0.0
    for p, (pr, m) in enumerate(zip(probs, marginals)):
        br = _best_response(pr, m)
        gains[p] = max(0.0, br.value - pr.objective(m))
        bound += br.error_bound
    return RiskGaps(gains, bound)


def rae_gap(game, marginals, risk_aversion, risk: str = "variance", target="mean", order=2) -> float:
    """The risk-averse equilibrium gap: ``sum_i [max_{pi'_i} R_i(pi'_i, pi_-i) - R_i(pi)]``.

    The maximum is over player ``i``'s mixed strategies (a concave programme,
    solved to round-off; see the module docstring). Zero exactly at an RAE
    (or a downside RAE with ``risk="downside"``); equal to NashConv when
    ``risk_aversion`` is 0.

    Parameters
    ----------
    game : NormalFormGame or array_like
    marginals : sequence of ndarray
        One mixed strategy per player.
    risk_aversion : float or sequence of float
        ``gamma_i >= 0``.
    risk : {"variance", "downside"}
    target : "mean" or float
        Downside target (see the module docstring).
    order : float
        Order ``n >= 2`` of the downside lower partial moment.

    Examples
    --------
    >>> import numpy as np
    >>> from games import catalog
    >>> g = catalog.stag_hunt()
    >>> mixed = [np.array([2 / 3, 1 / 3])] * 2   # the mixed Nash equilibrium
    >>> round(rae_gap(g, mixed, 0.0), 12)
    0.0
    >>> rae_gap(g, mixed, 0.5) > 0   # not risk-averse: Hare is safer
    True
    """
    return float(rae_gaps(game, marginals, risk_aversion, risk, target, order).gains.sum())


# ------------------------------------------------------------------------------ solver
def _gradients(op: PayoffOperator, layout: FlatLayout, flat: np.ndarray, aversions: np.ndarray,
               risk: _Risk) -> tuple:
    x = layout.split(flat)
    probs = _problems(op, x, aversions, risk)
    grads = [pr.gradient(xp) for pr, xp in zip(probs, x)]
    fw = float(sum(max(0.0, float(g.max() - g @ xp)) for g, xp in zip(grads, x)))
    return np.concatenate(grads), fw


def _step_all(layout: FlatLayout, flat: np.ndarray, eta: float, g: np.ndarray) -> np.ndarray:
    """Every player's :func:`_projected_step` of size ``eta``."""
    return np.concatenate([_projected_step(x, eta, d) for x, d in zip(layout.split(flat), layout.split(g))])


def _solve_rae(game: NormalFormGame, method: str, risk: _Risk, risk_aversion, tol: float, iterations: int,
               step: float | None, check_every: int, initial) -> Equilibrium:
    game = as_game(game)
    aversions = _aversions(risk_aversion, game.num_players)
    tol = check_nonnegative_float(tol, "tol", positive=True)
    iterations = check_positive_int(iterations, "iterations")
    check_every = check_positive_int(check_every, "check_every")
    op = PayoffOperator.from_game(game)
    layout = FlatLayout.from_shape(game.shape)
    flat = layout.concat(initial_strategies(game, initial))
    spread = float(np.ptp(game.payoffs)) or 1.0
    # The risk term's curvature grows like gamma * spread ** 2. Where it dwarfs the payoffs, the adaptive
    # halving below could not shrink 1 / spread far enough, so each player's gradient is scaled down by its own
    # curvature: a positive factor per player leaves the equilibria as they are (each player still maximises
    # its own objective), and one very risk-averse player no longer freezes the others with a tiny common step.
    curvature = 2.0 * aversions * spread
    scale = np.where(curvature > 1e6, 1.0 / (1.0 + curvature), 1.0)
    scale[np.asarray(game.shape) == 1] = 0.0   # a single strategy never moves (its gradient only shrinks steps)
    precondition = layout.broadcast(scale)
    eta = 1.0 / spread
    if step is not None:
        eta = check_nonnegative_float(step, "step", positive=True)

    def scaled_gradients(at: np.ndarray) -> tuple:
        grad, bound = _gradients(op, layout, at, aversions, risk)
        with np.errstate(invalid="ignore"):
            return np.where(precondition > 0, precondition * grad, 0.0), bound

    g, fw = scaled_gradients(flat)
    done, exact, next_check, checks = 0, None, check_every, 0
    for t in range(1, iterations + 1):
        if fw <= tol:
            break
        if t == next_check:
            exact = rae_gap(game, layout.split(flat), aversions, risk.kind, _target_arg(risk), risk.order)
            if exact <= tol:
                break
            # an exact gap costs a best-response solve per player: after four, check ever more rarely
            checks += 1
            next_check += check_every * (2 ** max(0, checks - 4))
        for _ in range(60):  # adaptive extragradient step (Khobotov's rule)
            half = _step_all(layout, flat, eta, g)
            g_half, _ = scaled_gradients(half)
            dist = float(np.linalg.norm(half - flat))
            if dist == 0.0 or eta * float(np.linalg.norm(g_half - g)) <= 0.9 * dist:
                break
            eta *= 0.5
        new = _step_all(layout, flat, eta, g_half)
        if not np.all(np.isfinite(new)):  # the step overflowed: keep the last finite iterate
            logger.info("%s: a step overflowed after %d iterations; stopping there", method, done)
            break
        flat = new
        g, fw = scaled_gradients(flat)
        eta *= 1.1
        done = t
    marginals = layout.split(flat)
    gaps = rae_gaps(game, marginals, aversions, risk.kind, _target_arg(risk), risk.order)
    gap = float(gaps.gains.sum())
    info = {
        "risk_aversion": aversions.tolist() if np.ptp(aversions) > 0 else float(aversions[0]),
        "risk": risk.kind,
        "target": _target_arg(risk),
        "iterations": done,
        "tol": tol,
        "converged": bool(gap + gaps.error_bound <= tol),
        "gap_error_bound": gaps.error_bound,
        "gains": gaps.gains.tolist(),
        "frank_wolfe_bound": fw,
        "nash_conv": nash_conv(game, marginals),
        "variance": payoff_variance(game, marginals).tolist(),
    }
    if risk.kind == "downside":
        info["order"] = int(risk.order) if float(risk.order).is_integer() else risk.order
        info["lower_partial_moment"] = lower_partial_moment(game, marginals, _target_arg(risk), risk.order).tolist()
    eq = make_equilibrium(game, marginals=marginals, concept="rae", method=method, info=info, gap=gap)
    if not eq.converged:
        logger.info("%s stopped after %d iterations with gap %.3g > tol %.3g", method, done, gap, tol)
    return eq


def _target_arg(risk: _Risk):
    if isinstance(risk.target, tuple):
        return list(risk.target)
    return "mean" if risk.target is None else risk.target


_MAX_AVERSION = 1e100


def _rescale_risk(norm, options: dict) -> dict:
    """The risk options that mean the same on the normalised game ``norm.game``.

    Player ``p``'s risk-adjusted objective in payoff units is ``r_p`` times the
    normalised one when its risk aversion is ``gamma_p r_p ** (n - 1)`` (the
    variance, ``n = 2``, and the LPM of order ``n`` scale as ``r_p ** n``) and a
    reference target moves with the payoffs: ``(tau - offset_p) / r_p``.
    """
    n_players = norm.game.num_players
    order = _check_order(options.get("order", 2))
    gammas = _aversions(options["risk_aversion"], n_players)
    with np.errstate(over="ignore"):
        # beyond ~1e100 times the payoff range the player only minimises its risk; capping keeps it finite
        options["risk_aversion"] = np.minimum(gammas * norm.scales ** (order - 1.0), _MAX_AVERSION).tolist()
    target = options.get("target", "mean")
    if "target" in options and not (isinstance(target, str) or target is None):
        risk = _risk_model("downside", target, order)
        per = risk.target if isinstance(risk.target, tuple) else (risk.target,) * n_players
        if len(per) != n_players:
            raise ValueError(f"target must hold one number per player ({n_players}); got {len(per)}.")
        options["target"] = [(t - o) / s for t, o, s in zip(per, norm.offsets, norm.scales)]
    return options


def _check_risk(norm, eq: Equilibrium, options: dict) -> Check:
    """The risk-averse gap of ``eq`` on the normalised game, with its error bounds (see :func:`rae_gaps`).

    Besides the best-response search's bound, the risk term carries the payoffs' round-off times the risk
    aversion (the normalised payoffs are exact only to a few units in the last place): a gap far below
    ``gamma * eps`` cannot be told from zero, so it does not verify.
    """
    gains = np.asarray(eq.info["gains"])
    n = norm.game.num_players
    gammas = np.broadcast_to(np.asarray(options["risk_aversion"], dtype=np.float64), (n,))
    # (a player with a single strategy has no deviation: its gain is exactly zero whatever its risk aversion)
    can_deviate = np.asarray(norm.game.shape) > 1
    rounding = 16.0 * np.finfo(float).eps * n * float(np.sum(np.maximum(1.0, gammas) * can_deviate))
    return Check(gains, float(gains.sum() + eq.info["gap_error_bound"] + rounding), float(options["tol"]))


@register("rae", concept="rae", rescale=_rescale_risk, check=_check_risk)
def rae(game: NormalFormGame, risk_aversion=0.5, tol: float = 1e-8, iterations: int = 5_000,
        step: float | None = None, check_every: int = 50, initial: Sequence[np.ndarray] | None = None) -> Equilibrium:
    """Mean-variance risk-averse equilibrium (Slumbers et al., ICML 2023) by projected extragradient.

    Every player maximises ``pi_i^T u_i(pi_-i) - gamma_i pi_i^T Sigma_i(pi_-i) pi_i``
    where ``Sigma_i`` is the covariance of its action payoffs over the others'
    mixtures (the variance of its reward caused by the other players); see
    the module docstring for the definition, what of it was checked against
    the paper, the gap and the algorithm (the paper uses fictitious play).

    Parameters
    ----------
    game : NormalFormGame
        Any number of players.
    risk_aversion : float or sequence of float
        ``gamma_i >= 0`` (in 1 / payoff units); 0 gives a Nash equilibrium.
    tol : float
        Stop when the RAE gap (or its Frank-Wolfe upper bound) is ``<= tol``.
    iterations : int
        Extragradient step budget.
    step : float, optional
        Initial step size (adapted as it runs); ``1 / payoff range`` by default.
    check_every : int
        How often to compute the exact gap while running.
    initial : sequence of ndarray, optional
        Starting strategies; uniform by default.

    Returns
    -------
    Equilibrium
        Concept ``"rae"``; ``gap`` is :func:`rae_gap`; ``info`` holds
        ``converged`` (gap plus its error bound ``<= tol``), ``nash_conv``,
        ``variance`` (per player), ``gap_error_bound`` and ``iterations``.

    Examples
    --------
    >>> from games import catalog
    >>> eq = rae(catalog.stag_hunt(), risk_aversion=0.5)
    >>> eq.converged, eq.marginals[0].tolist(), eq.marginals[1].tolist()   # (Hare, Hare)
    (True, [0.0, 1.0], [0.0, 1.0])
    """
    return _solve_rae(game, "rae", _Risk("variance"), risk_aversion, tol, iterations, step, check_every, initial)


@register("downside_rae", concept="rae", rescale=_rescale_risk, check=_check_risk)
def downside_rae(game: NormalFormGame, risk_aversion=0.5, target="mean", order=2, tol: float = 1e-8,
                 iterations: int = 5_000, step: float | None = None, check_every: int = 50,
                 initial: Sequence[np.ndarray] | None = None) -> Equilibrium:
    """Downside risk-aware equilibrium (Slumbers et al., arXiv 2510.03446) by projected extragradient.

    Every player maximises ``pi_i^T u_i - gamma_i E_s[max(0, tau_i - Z_i(s))^n]``
    (expected reward minus ``gamma`` times the lower partial moment of order
    ``n = order``) with ``tau_i`` its own expected payoff (``target="mean"``;
    with ``n = 2`` the semivariance) or the fixed reference payoff
    ``target``; see the module docstring (which also says what of this was
    checked against the paper; the paper uses stochastic fictitious play).

    Parameters
    ----------
    game : NormalFormGame
    risk_aversion : float or sequence of float
        ``gamma_i >= 0``; 0 gives a Nash equilibrium.
    target : "mean" or float
        The shortfall threshold.
    order : float
        The lower partial moment's order ``n >= 2`` (2 by default; higher
        orders weigh large shortfalls more).
    tol, iterations, step, check_every, initial
        As for :func:`rae`; ``info`` also holds ``order`` and
        ``lower_partial_moment`` (per player).

    Examples
    --------
    >>> import numpy as np
    >>> from games import NormalFormGame
    >>> # a lottery paying 1 or 5 never falls below the reference payoff 1, so it is taken
    >>> g = NormalFormGame.from_bimatrix([[1.0, 5.0], [2.0, 2.0]], np.zeros((2, 2)))
    >>> downside_rae(g, risk_aversion=1.0, target=1.0).marginals[0].tolist()
    [1.0, 0.0]
    """
    return _solve_rae(game, "downside_rae", _risk_model("downside", target, order), risk_aversion, tol, iterations,
                      step, check_every, initial)
