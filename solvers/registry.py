"""The solver registry: ``solve(game, method, **options)`` and ``methods()``.

A solver is a pure function ``f(game: NormalFormGame, **options) -> Equilibrium``
registered by name with :func:`register`.

:func:`solve` runs every solver on the per-player normalised game of
:mod:`solvers.normalisation` (each player's payoffs mapped affinely onto
``[0, 1]``), so its answer does not change when a constant is added to, or a
positive factor multiplies, one player's payoffs. It then maps payoff amounts
back and checks the answer: the regret of the returned strategies is
recomputed in extended precision relative to each player's payoff range, and
``info["converged"]`` is true only when the solver said so *and* that
recomputed gap (``info["verified_gap"]``) is at most ``info["gap_tol"]``.

The built-in methods register when their modules (:data:`BUILT_IN`) are
imported, which happens the first time the registry is read (and before a
user's own :func:`register`, so a clash is reported against the built-in
method), not when :mod:`solvers` is imported.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import inspect
import logging
import math
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from games.normal_form import NormalFormGame, as_game, product_distribution
from games.registry import Registry
from games.validation import check_real
from solvers.equilibrium import Equilibrium
from solvers.gaps import cce_gap, ce_gap, nash_conv
from solvers.normalisation import Normalisation, normalise, relative_gains

__all__ = ["register", "solve", "methods", "method_info", "make_equilibrium", "SolverSpec", "Check", "DEFAULT_GAP_TOL"]

PRODUCT_CONCEPTS = frozenset({"nash", "qre", "rae", "uniform", "alpharank", "dynamics"})

DEFAULT_GAP_TOL = 1e-7
"""Largest verified gap (summed over players, each in units of its payoff range) of a converged answer,
for solvers whose own ``tol`` is not a gap tolerance."""

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SolverSpec:
    """What the registry knows about a solver."""

    name: str
    function: Callable
    concept: str
    summary: str
    min_players: int = 1
    max_players: int | None = None
    zero_sum_only: bool = False
    normalise: bool = True
    rescale: Callable | None = None
    check: Callable | None = None
    tol_option: str | None = None


@dataclass(frozen=True)
class Check:
    """What a solver-specific ``check`` hook returns (see :func:`register`)."""

    gains: Any
    verified_gap: float
    gap_tol: float
    info: dict = dataclasses.field(default_factory=dict)


_REGISTRY = Registry("solver method", hint="Register one with @solvers.register(name, concept=...).")

BUILT_IN = (
    "solvers.basic",
    "solvers.nash.dispatch", "solvers.nash.lemke_howson", "solvers.nash.nash_n_player",
    "solvers.nash.support_enumeration", "solvers.nash.zero_sum",
    "solvers.dynamics.fictitious_play", "solvers.dynamics.qre", "solvers.dynamics.regret_matching",
    "solvers.dynamics.replicator",
    "solvers.risk_averse.equilibria", "solvers.correlated.equilibria",
)
"""The modules whose import registers the built-in methods."""

_built_in_loaded = False


def _load_built_in() -> Registry:
    """The registry, with every module of :data:`BUILT_IN` imported (once)."""
    global _built_in_loaded
    if not _built_in_loaded:
        _built_in_loaded = True
        for module in BUILT_IN:
            importlib.import_module(module)
    return _REGISTRY


def register(name: str, concept: str, min_players: int = 1, max_players: int | None = None,
             zero_sum_only: bool = False, *, normalise: bool = True, rescale: Callable | None = None,
             check: Callable | None = None, tol_option: str | None = None, replace: bool = False):
    """Decorator that registers a solver function under ``name``.

    Registering a taken name again raises ``ValueError``, unless it is the
    same function with the same options or ``replace=True`` (the rule of
    every registry, :class:`games.registry.Registry`). :func:`solve` and
    :func:`method_info` also accept ``"package.module:name"``: they import the
    module (see :mod:`games.registry` for which modules may be imported) and
    use the solver it registers as ``name``.

    Parameters
    ----------
    name, concept : str
        The registry name and the solution concept (which regret measures it).
    min_players, max_players : int
        The numbers of players it solves.
    zero_sum_only : bool
        It needs a two-player constant-sum game.
    normalise : bool
        :func:`solve` runs it on the normalised game (the default). ``False``
        for a solver that must see the payoffs themselves (a welfare
        objective) and conditions its problem itself; its answer is still
        verified relative to each player's range.
    rescale : callable, optional
        ``rescale(norm, options) -> options``: the options that mean the same
        on ``norm.game`` (those in payoff units, such as a risk aversion).
    check : callable, optional
        ``check(norm, eq, options) -> Check`` for a concept with its own
        measure: per-player gains relative to each range, the verified
        measure and its tolerance.
    tol_option : str, optional
        The option that is the solver's own tolerance on the (relative) gap;
        it is the verification tolerance. Otherwise :data:`DEFAULT_GAP_TOL`.

    Examples
    --------
    >>> @register("my_uniform_example", concept="nash")
    ... def my_uniform(game):
    ...     return make_equilibrium(game, marginals=[np.ones(k) / k for k in game.shape],
    ...                             concept="nash", method="my_uniform_example")
    >>> "my_uniform_example" in methods()
    True
    >>> _REGISTRY.unregister("my_uniform_example")
    """

    def wrap(fn):
        if not fn.__module__.startswith("solvers."):
            _load_built_in()   # a user's method meets the built-in ones now, not on the first lookup
        summary = (inspect.getdoc(fn) or "").split("\n", 1)[0]
        _REGISTRY.register(name, SolverSpec(name, fn, concept, summary, min_players, max_players, zero_sum_only,
                                            normalise, rescale, check, tol_option), replace=replace)
        return fn

    return wrap


def methods(concept: str | None = None) -> list:
    """Registered solver names, optionally only those of one concept.

    Examples
    --------
    >>> "nash_zero_sum" in methods()
    True
    """
    return sorted(n for n, s in _load_built_in().items() if concept is None or s.concept == concept)


def method_info(method: str) -> SolverSpec:
    """The :class:`SolverSpec` of a registered solver; unknown names get suggestions."""
    if not isinstance(method, str):
        raise TypeError(f"method must be a solver name (str); got {type(method).__name__}.")
    if method in _load_built_in() or ":" in method:
        return _REGISTRY.get(method)
    close = difflib.get_close_matches(method, _REGISTRY.names(), n=3, cutoff=0.5)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise ValueError(f"unknown solver method {method!r}.{hint} Known methods: {', '.join(methods())}.")


def check_tolerance(tol, argname: str = "tol") -> float:
    """``tol`` as a finite float ``>= 0``, or a ``ValueError``/``TypeError`` naming ``argname``.

    Examples
    --------
    >>> check_tolerance(1e-9)
    1e-09
    >>> check_tolerance(-1)
    Traceback (most recent call last):
    ...
    ValueError: tol must be a number >= 0; got -1.0.
    """
    return check_real(tol, argname, minimum=0.0)


def check_game_fits(spec: SolverSpec, game: NormalFormGame) -> None:
    """Raise ``ValueError`` when ``game`` is outside what ``spec`` solves."""
    n = game.num_players
    if n < spec.min_players or (spec.max_players is not None and n > spec.max_players):
        most = "any number of" if spec.max_players is None else f"at most {spec.max_players}"
        raise ValueError(
            f"method {spec.name!r} solves games with at least {spec.min_players} and {most} players; "
            f"the game has {n}. Pick another method from solvers.methods()."
        )
    if spec.zero_sum_only and not game.is_constant_sum():
        raise ValueError(
            f"method {spec.name!r} needs a two-player zero-sum (or constant-sum) game, but the payoffs do "
            "not sum to a constant. Use a general-sum method such as 'lemke_howson' or 'mgce'."
        )


def solve(game, method: str = "nash", **options) -> Equilibrium:
    """Solve a normal-form game with a registered method.

    Parameters
    ----------
    game : NormalFormGame or array_like
        The game, or a payoff array of shape ``(num_players, k_1, ..., k_n)``.
    method : str
        A name from :func:`methods`.
    **options
        Passed to the solver; unknown options raise ``TypeError``.

    Examples
    --------
    >>> from games import catalog
    >>> eq = solve(catalog.rock_paper_scissors(), "nash_zero_sum")
    >>> eq.marginals[0].round(6).tolist()
    [0.333333, 0.333333, 0.333333]
    """
    spec = method_info(method)
    game = as_game(game)
    check_game_fits(spec, game)
    params = inspect.signature(spec.function).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        allowed = [k for k in params if k != "game"]
        for key in options:
            if key not in allowed:
                raise TypeError(
                    f"method {method!r} has no option {key!r}; its options are: {', '.join(allowed) or 'none'}."
                )
    if spec.tol_option is not None and spec.tol_option in options:
        check_tolerance(options[spec.tol_option], spec.tol_option)
    start = time.perf_counter()
    norm = normalise(game)
    solved = norm.game
    if spec.zero_sum_only and game.num_players == 2:
        # the game passed the constant-sum check, where u_1 = c - u_0 gives 1 - u_0 on the normalised
        # game; the solver gets that exactly, so its own check does not trip on an offset's round-off
        # (the answer is still verified on the game itself)
        solved = norm.game.with_payoffs(np.stack([norm.game.payoffs[0], 1.0 - norm.game.payoffs[0]]))
    bound = inspect.signature(spec.function).bind(norm.game, **options)
    bound.apply_defaults()  # the verification needs the tolerance the solver actually used
    first = next(iter(params))
    var_keyword = next((k for k, p in params.items() if p.kind is p.VAR_KEYWORD), None)
    run_options = {k: v for k, v in bound.arguments.items() if k not in (first, var_keyword)}
    run_options.update(bound.arguments.get(var_keyword, {}))
    if spec.normalise:
        if spec.rescale is not None:
            run_options = spec.rescale(norm, dict(run_options))
        eq = spec.function(solved, **run_options)
    else:
        eq = spec.function(game, **run_options)
    given = dict(bound.arguments)
    eq = _verified(spec, game, norm, eq, run_options)
    if spec.rescale is not None:  # report the options the caller gave, not their normalised equivalents
        # (only those the rescaling changed: an option that is also an output, such as ``iterations``, keeps the
        # solver's count)
        eq.info.update({k: v for k, v in given.items() if k in eq.info and k != first and v is not None
                        and run_options.get(k) is not v})
    eq.info.setdefault("time", time.perf_counter() - start)
    return eq


def _verified(spec: SolverSpec, game: NormalFormGame, norm: Normalisation, eq: Equilibrium,
              options: dict) -> Equilibrium:
    """``eq`` on the original game: payoff amounts mapped back, ``converged`` only when the gap verifies."""
    extra = {}
    if spec.check is not None:
        result = spec.check(norm, eq, options)
        gains = np.asarray(result.gains, dtype=np.float64)
        verified, tol, extra = float(result.verified_gap), float(result.gap_tol), result.info
    else:
        gains = relative_gains(norm, eq.concept, eq.joint, eq.marginals if eq.concept in PRODUCT_CONCEPTS else None)
        verified = float(gains.sum())
        tol = float(options.get(spec.tol_option, DEFAULT_GAP_TOL)) if spec.tol_option else DEFAULT_GAP_TOL
        epsilon = options.get("epsilon")
        if eq.concept in ("ce", "cce") and isinstance(epsilon, (int, float)) and epsilon > 0:
            # an epsilon-equilibrium may keep epsilon per deviation (one per recommendation for a CE)
            per = np.array(game.shape, dtype=np.float64) if eq.concept == "ce" else np.ones(game.num_players)
            tol += float(np.sum(per * epsilon / norm.scales))
    claimed = bool(eq.info.get("converged", True))
    ok = claimed and math.isfinite(verified) and verified <= tol
    info = dict(eq.info)
    if spec.normalise:
        info = _info_in_payoff_units(info, game, norm, eq)
    info.update(extra)
    info.update(converged=ok, verified_gap=verified, gap_tol=tol, relative_gains=gains.tolist())
    if claimed and not ok:
        logger.info("%s claimed convergence but the recomputed gap %.3g (relative to each player's payoff range) "
                    "exceeds %.3g: reporting converged=False", spec.name, verified, tol)
    values = norm.to_payoffs(norm.game.payoffs.reshape(game.num_players, -1).astype(np.longdouble)
                             @ eq.joint.reshape(-1).astype(np.longdouble))
    gap = float(norm.to_payoff_units(gains).sum())
    return dataclasses.replace(eq, gap=gap, values=values, info=info)


def _rescaled(values, scales: np.ndarray, power: float) -> list:
    """``values * scales ** power`` per player: a moment of order ``power`` in payoff units. Past the float range
    it is ``inf`` (payoffs near 1e300 have variances near 1e600), and a zero moment stays zero.

    Examples
    --------
    >>> _rescaled([0.25, 0.0], np.array([2.0, 1e300]), 2.0)
    [1.0, 0.0]
    >>> _rescaled([0.25], np.array([1e300]), 2.0)
    [inf]
    """
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        out = values * scales ** power
    return np.where(values == 0.0, 0.0, out).tolist()


def _info_in_payoff_units(info: dict, game: NormalFormGame, norm: Normalisation, eq: Equilibrium) -> dict:
    """Map the payoff amounts a solver reported on the normalised game back to the original game."""
    if "nash_conv" in info:
        info["nash_conv"] = float(norm.to_payoff_units(relative_gains(norm, "nash", eq.joint, eq.marginals)).sum())
    if "value" in info:
        info["value"] = float(norm.to_payoffs(np.full(game.num_players, info["value"]))[0])
    if "variance" in info:
        info["variance"] = _rescaled(info["variance"], norm.scales, 2.0)
    if "lower_partial_moment" in info:
        info["lower_partial_moment"] = _rescaled(info["lower_partial_moment"], norm.scales,
                                                 float(info.get("order", 2)))
    if isinstance(info.get("equilibria"), list):
        info["equilibria"] = [
            make_equilibrium(game, marginals=list(e.marginals), concept=e.concept, method=e.method, info=e.info)
            for e in info["equilibria"]
        ]
    return info


def make_equilibrium(game: NormalFormGame, *, concept: str, method: str, joint=None, marginals=None,
                     info: dict | None = None, gap: float | None = None) -> Equilibrium:
    """Assemble an :class:`Equilibrium`, computing the fitting gap independently.

    Give ``marginals`` for product solutions (the joint is their product) or
    ``joint`` for correlated ones (the marginals are its sums). The gap is
    NashConv for product concepts, the CE gap for ``"ce"`` and the CCE gap for
    ``"cce"``, unless ``gap`` is given (for concepts with their own measure,
    such as risk-averse equilibria).
    """
    if marginals is not None:
        marginals = [_clean(np.asarray(m, dtype=np.float64)) for m in marginals]
        if joint is None:
            joint = product_distribution(marginals)
    if joint is None:
        raise ValueError("make_equilibrium needs joint or marginals.")
    joint = _clean(np.asarray(joint, dtype=np.float64).reshape(game.shape))
    if marginals is None:
        n = game.num_players
        marginals = [joint.sum(axis=tuple(q for q in range(n) if q != p)) for p in range(n)]
    if gap is None:
        if concept == "ce":
            gap = ce_gap(game, joint)
        elif concept == "cce":
            gap = cce_gap(game, joint)
        else:
            gap = nash_conv(game, marginals)
    values = game.payoffs.reshape(game.num_players, -1) @ joint.reshape(-1)
    return Equilibrium(joint=joint, marginals=tuple(marginals), concept=concept, method=method,
                       gap=float(gap), values=values, info=dict(info or {}))


def _clean(p: np.ndarray) -> np.ndarray:
    """Clip tiny negative round-off and renormalise a distribution."""
    p = np.where(p < 0, 0.0, p)
    s = p.sum()
    if not np.isfinite(s) or s <= 0:
        raise ValueError("a solver produced an invalid distribution (non-positive or non-finite total).")
    return p / s
