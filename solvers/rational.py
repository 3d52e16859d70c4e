"""Exact rational verification of equilibria (``fractions.Fraction``).

A floating-point solver returns a profile whose NashConv is small, not zero.
For a game with integer or rational payoffs, :func:`certify` turns such a
profile into an exact rational one and proves, in exact arithmetic, that no
player gains by deviating (every regret is exactly ``0``). Two ways to get the
exact profile are tried, in this order:

1. **rounding**: every probability is replaced by the nearest fraction with a
   denominator up to ``max_denominator`` (then renormalised exactly);
2. **support system** (two players): on the supports read from the float
   profile, the indifference equations ``A[R, S] y = v 1``, ``sum(y) = 1``
   (``R`` the opponent's best responses, ``S`` the support) are solved
   exactly by Gauss-Jordan elimination over the rationals; free variables of
   an underdetermined system (a continuum of equilibria) take the rounded
   float values.

Either way the exact profile is then checked from scratch, so a certificate
never depends on the reconstruction being right. Any two-player solver's
result can go through :func:`verified`, which attaches the certificate.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from games.normal_form import NormalFormGame, as_game
from games.validation import check_int
from solvers.equilibrium import Equilibrium

__all__ = ["DEFAULT_MAX_DENOMINATOR", "ExactCertificate", "rational_payoffs", "exact_regrets", "certify",
           "verified"]

DEFAULT_MAX_DENOMINATOR = 10**6
_SUPPORT_TOL = 1e-7  # probabilities and payoff gaps, relative, below which the float profile counts as zero


@dataclass(frozen=True)
class ExactCertificate:
    """The outcome of :func:`certify`.

    Attributes
    ----------
    certified : bool
        True when the exact profile's regrets are all exactly zero.
    marginals : tuple of tuple of Fraction, or None
        The exact profile (``None`` when none was found).
    values : tuple of Fraction, or None
        Each player's exact expected payoff.
    regrets : tuple of Fraction, or None
        Each player's exact best-deviation gain.
    method : str
        ``"rounding"`` or ``"support_system"`` (how the exact profile was
        obtained), or ``""``.
    reason : str
        Why certification failed (empty when certified).
    """

    certified: bool
    marginals: tuple | None
    values: tuple | None
    regrets: tuple | None
    method: str = ""
    reason: str = ""


def _to_fraction(v, max_denominator: int) -> Fraction:
    if isinstance(v, (int, np.integer, Fraction)):
        return Fraction(int(v)) if isinstance(v, np.integer) else Fraction(v)
    if isinstance(v, str):
        return Fraction(v)
    f = float(v)
    frac = Fraction(f).limit_denominator(max_denominator)
    if float(frac) != f:
        raise ValueError(
            f"payoffs: the value {f!r} is not a rational with denominator <= {max_denominator} (to float "
            "precision); pass the exact payoffs (ints, fractions.Fraction or strings such as '1/3') as payoffs=."
        )
    return frac


def rational_payoffs(game, payoffs=None, max_denominator: int = DEFAULT_MAX_DENOMINATOR) -> np.ndarray:
    """The game's payoffs as an object array of :class:`fractions.Fraction`.

    Parameters
    ----------
    game : NormalFormGame
    payoffs : array_like, optional
        Exact payoffs of the same shape as ``game.payoffs`` (ints, Fractions
        or strings like ``"1/3"``). By default each float payoff is read as
        the fraction with denominator at most ``max_denominator`` that rounds
        to it exactly (``ValueError`` if there is none).
    max_denominator : int

    Examples
    --------
    >>> from games import NormalFormGame
    >>> rational_payoffs(NormalFormGame.from_bimatrix([[1 / 3, 2]]))[0].tolist()
    [[Fraction(1, 3), Fraction(2, 1)]]
    """
    game = as_game(game)
    check_int(max_denominator, "max_denominator", minimum=1)
    src = game.payoffs if payoffs is None else np.asarray(payoffs, dtype=object)
    if src.shape != game.payoffs.shape:
        raise ValueError(f"payoffs has shape {src.shape} but the game's payoffs have shape {game.payoffs.shape}.")
    out = np.empty(src.shape, dtype=object)
    for idx, v in np.ndenumerate(src):
        out[idx] = _to_fraction(v, int(max_denominator))
    if payoffs is not None:
        err = np.abs(out.astype(np.float64) - game.payoffs).max()
        if err > 1e-9 * max(1.0, float(np.abs(game.payoffs).max())):
            raise ValueError(f"payoffs differ from the game's payoffs by up to {err:.3g}; give the same game exactly.")
    return out


def _exact_deviation_payoffs(q: np.ndarray, marginals: list) -> list:
    """``out[p][a]``: player p's exact payoff for ``a`` against the others' exact mixtures."""
    n = q.shape[0]
    vecs = [np.array(m, dtype=object) for m in marginals]
    out = []
    for p in range(n):
        t = q[p]
        for r in range(n - 1, -1, -1):
            if r != p:
                t = np.tensordot(t, vecs[r], axes=([r], [0]))
        out.append(t)
    return out


def exact_regrets(exact_payoffs: np.ndarray, marginals) -> tuple:
    """Each player's exact best-deviation gain and exact value at an exact profile.

    Returns
    -------
    (tuple of Fraction, tuple of Fraction)
        Regrets and values.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> from games import catalog
    >>> q = rational_payoffs(catalog.matching_pennies())
    >>> exact_regrets(q, [(F(1, 2), F(1, 2))] * 2)
    ((Fraction(0, 1), Fraction(0, 1)), (Fraction(0, 1), Fraction(0, 1)))
    """
    dev = _exact_deviation_payoffs(exact_payoffs, list(marginals))
    values = tuple(sum((d * m for d, m in zip(dv, mg)), Fraction(0)) for dv, mg in zip(dev, marginals))
    regrets = tuple(max(dv.tolist()) - v for dv, v in zip(dev, values))
    return regrets, values


def _rref_solve(rows: list, fallback: list):
    """Solve the augmented system ``rows`` (lists of Fractions, last entry the rhs) exactly.

    Free variables take ``fallback`` values. Returns ``None`` when inconsistent.
    """
    mat = [list(r) for r in rows]
    nvar = len(fallback)
    pivots = []
    r = 0
    for c in range(nvar):
        piv = next((i for i in range(r, len(mat)) if mat[i][c] != 0), None)
        if piv is None:
            continue
        mat[r], mat[piv] = mat[piv], mat[r]
        inv = 1 / mat[r][c]
        mat[r] = [v * inv for v in mat[r]]
        for i in range(len(mat)):
            if i != r and mat[i][c] != 0:
                f = mat[i][c]
                mat[i] = [a - f * b for a, b in zip(mat[i], mat[r])]
        pivots.append(c)
        r += 1
        if r == len(mat):
            break
    if any(all(v == 0 for v in row[:-1]) and row[-1] != 0 for row in mat):
        return None
    sol = list(fallback)
    free = [c for c in range(nvar) if c not in pivots]
    for i, c in enumerate(pivots):
        sol[c] = mat[i][-1] - sum((mat[i][f] * sol[f] for f in free), Fraction(0))
    return sol


def _support_system(mat: np.ndarray, own: np.ndarray, other: np.ndarray, q_mat: np.ndarray,
                    max_denominator: int, tight_rows: bool):
    """Exact strategy ``own`` of one player that makes the other's ``rows`` indifferent.

    ``mat`` (float) and ``q_mat`` (exact) are the *other* player's payoffs with
    that player's actions as rows and ``own``'s actions as columns.
    """
    rng_ = float(np.ptp(mat)) or 1.0
    support = np.flatnonzero(own > _SUPPORT_TOL)
    pay = mat @ own
    if tight_rows:
        rows = np.flatnonzero(pay >= pay.max() - _SUPPORT_TOL * rng_)
    else:
        rows = np.flatnonzero(other > _SUPPORT_TOL)
    nvar = len(support) + 1  # the strategy on its support, then the value
    system = [[Fraction(1)] * len(support) + [Fraction(0), Fraction(1)]]
    for i in rows:
        system.append([q_mat[i, j] for j in support] + [Fraction(-1), Fraction(0)])
    fallback = [Fraction(float(own[j])).limit_denominator(max_denominator) for j in support]
    fallback.append(Fraction(float(pay.max())).limit_denominator(max_denominator))
    sol = _rref_solve(system, fallback)
    if sol is None:
        return None
    out = [Fraction(0)] * len(own)
    for j, v in zip(support, sol[:nvar - 1]):
        out[j] = v
    return tuple(out)


def _rounded(marginals: list, max_denominator: int) -> list:
    out = []
    for m in marginals:
        fr = [Fraction(float(v)).limit_denominator(max_denominator) for v in m]
        total = sum(fr, Fraction(0))
        out.append(tuple(v / total for v in fr) if total > 0 else None)
    return out


def _check(q: np.ndarray, profile: list, method: str, near: list, atol: float):
    if any(m is None or min(m) < 0 for m in profile):
        return None
    if any(np.abs(np.array(m, dtype=np.float64) - f).max() > atol for m, f in zip(profile, near)):
        return None
    regrets, values = exact_regrets(q, profile)
    return ExactCertificate(all(r == 0 for r in regrets), tuple(profile), values, regrets, method,
                            "" if all(r == 0 for r in regrets) else "a player gains by deviating (exact regret > 0)")


def certify(game, profile, payoffs=None, max_denominator: int = DEFAULT_MAX_DENOMINATOR,
            atol: float = 1e-6) -> ExactCertificate:
    """Prove in exact arithmetic that a (float) profile is a Nash equilibrium, or say why not.

    Parameters
    ----------
    game : NormalFormGame
        Integer or rational payoffs (see :func:`rational_payoffs`); the
        support-system reconstruction needs two players.
    profile : Equilibrium or sequence of array_like
        The solver's result or one mixed strategy per player.
    payoffs : array_like, optional
        Exact payoffs, when the floats are not exact rationals.
    max_denominator : int
        Largest denominator tried when rounding.
    atol : float
        How far (max absolute difference of probabilities) the exact profile
        may lie from the float one: a certificate is about *this* profile.

    Returns
    -------
    ExactCertificate

    Examples
    --------
    >>> from games import catalog
    >>> c = certify(catalog.bach_or_stravinsky(), [np.array([0.6, 0.4]), np.array([0.4, 0.6])])
    >>> c.certified, [str(v) for v in c.marginals[0]], c.regrets
    (True, ['3/5', '2/5'], (Fraction(0, 1), Fraction(0, 1)))
    >>> certify(catalog.bach_or_stravinsky(), [np.array([0.5, 0.5])] * 2).certified
    False
    """
    game = as_game(game)
    marginals = profile.marginals if isinstance(profile, Equilibrium) else profile
    marginals = [np.asarray(m, dtype=np.float64) for m in game.check_marginals(list(marginals), "profile")]
    q = rational_payoffs(game, payoffs, max_denominator)
    first = _check(q, _rounded(marginals, max_denominator), "rounding", marginals, atol)
    if first is not None and first.certified:
        return first
    if game.num_players == 2:
        x, y = marginals
        a, b = game.payoffs
        for tight in (True, False):
            ex = _support_system(b.T, x, y, q[1].T, max_denominator, tight)
            ey = _support_system(a, y, x, q[0], max_denominator, tight)
            if ex is None or ey is None:
                continue
            cert = _check(q, [ex, ey], "support_system", marginals, atol)
            if cert is not None and cert.certified:
                return cert
    if first is not None:
        return first
    return ExactCertificate(False, None, None, None, "", f"no exact profile within atol={atol:g} of the "
                            "float one has non-negative probabilities")


def verified(game: NormalFormGame, equilibrium: Equilibrium, payoffs=None,
             max_denominator: int = DEFAULT_MAX_DENOMINATOR, atol: float = 1e-6) -> Equilibrium:
    """A copy of ``equilibrium`` with its exact certificate in ``info["certificate"]``.

    ``info["certified"]`` is the certificate's verdict. Works on the result of
    any solver of a two-player game (and on n-player results whose
    probabilities are rationals with small denominators).

    Examples
    --------
    >>> from games import catalog
    >>> from solvers import solve
    >>> eq = verified(catalog.stag_hunt(), solve(catalog.stag_hunt(), "lemke_howson"))
    >>> eq.info["certified"], eq.info["certificate"].regrets
    (True, (Fraction(0, 1), Fraction(0, 1)))
    """
    if not isinstance(equilibrium, Equilibrium):
        raise TypeError(f"equilibrium must be a solvers.Equilibrium; got {type(equilibrium).__name__}.")
    cert = certify(game, equilibrium, payoffs=payoffs, max_denominator=max_denominator, atol=atol)
    info = dict(equilibrium.info, certificate=cert, certified=cert.certified)
    return Equilibrium(joint=equilibrium.joint, marginals=equilibrium.marginals, concept=equilibrium.concept,
                       method=equilibrium.method, gap=equilibrium.gap, values=equilibrium.values, info=info)
