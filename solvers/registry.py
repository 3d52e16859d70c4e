"""The solver registry: ``solve(game, method, **options)`` and ``methods()``.

A solver is a pure function ``f(game: NormalFormGame, **options) -> Equilibrium``
registered by name with :func:`register`.
"""

from __future__ import annotations

import difflib
import inspect
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from games.normal_form import NormalFormGame, as_game, product_distribution
from solvers.equilibrium import Equilibrium
from solvers.gaps import cce_gap, ce_gap, nash_conv

__all__ = ["register", "solve", "methods", "method_info", "make_equilibrium", "SolverSpec"]

PRODUCT_CONCEPTS = frozenset({"nash", "qre", "rae", "uniform", "alpharank", "dynamics"})


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


_REGISTRY: dict = {}


def register(name: str, concept: str, min_players: int = 1, max_players: int | None = None,
             zero_sum_only: bool = False):
    """Decorator that registers a solver function under ``name``.

    Examples
    --------
    >>> @register("my_uniform_example", concept="nash")
    ... def my_uniform(game):
    ...     return make_equilibrium(game, marginals=[np.ones(k) / k for k in game.shape],
    ...                             concept="nash", method="my_uniform_example")
    >>> "my_uniform_example" in methods()
    True
    >>> _ = _REGISTRY.pop("my_uniform_example")
    """

    def wrap(fn):
        if name in _REGISTRY and _REGISTRY[name].function is not fn:
            raise ValueError(f"a solver named {name!r} is already registered.")
        summary = (inspect.getdoc(fn) or "").split("\n", 1)[0]
        _REGISTRY[name] = SolverSpec(name, fn, concept, summary, min_players, max_players, zero_sum_only)
        return fn

    return wrap


def methods(concept: str | None = None) -> list:
    """Registered solver names, optionally only those of one concept.

    Examples
    --------
    >>> "nash_zero_sum" in methods()
    True
    """
    return sorted(n for n, s in _REGISTRY.items() if concept is None or s.concept == concept)


def method_info(method: str) -> SolverSpec:
    """The :class:`SolverSpec` of a registered solver; unknown names get suggestions."""
    if not isinstance(method, str):
        raise TypeError(f"method must be a solver name (str); got {type(method).__name__}.")
    spec = _REGISTRY.get(method)
    if spec is None:
        close = difflib.get_close_matches(method, _REGISTRY, n=3, cutoff=0.5)
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise ValueError(f"unknown solver method {method!r}.{hint} Known methods: {', '.join(methods())}.")
    return spec


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
    start = time.perf_counter()
    eq = spec.function(game, **options)
    eq.info.setdefault("time", time.perf_counter() - start)
    return eq


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
