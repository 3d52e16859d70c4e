"""The meta-solver registry: names in a PSRO config mapped to solver-registry functions.

A meta-solver takes the meta-game (a :class:`games.NormalFormGame`) and returns
a :class:`solvers.Equilibrium`; Nash-style PSRO uses its ``marginals`` as the
mixtures that the oracles respond to. Names are PSRO aliases (``"nash"``) or
any method of :func:`solvers.methods` with a product concept.

``"nash"`` solves the same LP as ``"nash_zero_sum"`` but keeps the LP between
iterations and warm-starts it (:mod:`psro.warm_start_lp`), since the meta-game
only grows. Its answer is checked like any solver's: if its NashConv on the
meta-game exceeds a round-off tolerance, the cold solve of the registry is used.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from games.normal_form import NormalFormGame
from psro.warm_start_lp import WarmStartZeroSumLP
from solvers import make_equilibrium, methods, solve
from solvers.equilibrium import Equilibrium
from solvers.registry import PRODUCT_CONCEPTS, method_info

logger = logging.getLogger(__name__)

__all__ = ["MetaSolver", "ALIASES", "WARM_STARTED", "known_names", "get_meta_solver"]

ALIASES = {
    "nash": "nash_zero_sum",  # two-player constant-sum meta-games; an n-player "nash" comes with the engine issue
}

WARM_STARTED = frozenset({"nash"})  # aliases whose LP is kept and warm-started across iterations


@dataclass(frozen=True)
class MetaSolver:
    """A named meta-solver.

    Attributes
    ----------
    name : str
        The name used in configs (``"nash"``, ``"uniform"``, ...).
    method : str
        The :func:`solvers.solve` method it calls.

    Examples
    --------
    >>> from games import catalog
    >>> get_meta_solver("nash")(catalog.matching_pennies()).marginals[0].tolist()
    [0.5, 0.5]
    """

    name: str
    method: str
    warm_lp: WarmStartZeroSumLP | None = field(default=None, repr=False, compare=False)

    def __call__(self, meta_game: NormalFormGame) -> Equilibrium:
        if self.warm_lp is None or not meta_game.is_constant_sum():
            return solve(meta_game, self.method)
        try:
            sol = self.warm_lp.solve(meta_game.payoffs[0])
        except RuntimeError as exc:
            logger.warning("warm-started LP failed (%s); solving from scratch", exc)
            return solve(meta_game, self.method)
        eq = make_equilibrium(meta_game, marginals=[sol.x, sol.y], concept="nash", method=self.method,
                              info={"value": sol.value, "warm_start": sol.warm, "simplex_iterations": sol.iterations,
                                    "converged": True})
        scale = max(1.0, float(np.abs(meta_game.payoffs).max()))
        if eq.gap > 1e-9 * scale:
            logger.info("warm-started LP gave meta-game NashConv %.3g; solving from scratch", eq.gap)
            return solve(meta_game, self.method)
        return eq

    def check_fits(self, num_players: int, constant_sum: bool) -> None:
        """Raise ``ValueError`` (naming ``meta_solver``) if it cannot solve this game's meta-games.

        Examples
        --------
        >>> get_meta_solver("nash").check_fits(3, constant_sum=False)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: meta_solver='nash' (solver 'nash_zero_sum') solves 2-player constant-sum meta-games; ...
        """
        spec = method_info(self.method)
        too_few = num_players < spec.min_players
        too_many = spec.max_players is not None and num_players > spec.max_players
        if too_few or too_many or (spec.zero_sum_only and not constant_sum):
            need = []
            if spec.max_players is not None:
                need.append(f"{spec.max_players}-player" if spec.max_players == spec.min_players
                            else f"{spec.min_players}-{spec.max_players}-player")
            if spec.zero_sum_only:
                need.append("constant-sum")
            kind = "constant-sum" if constant_sum else "not constant-sum"
            raise ValueError(
                f"meta_solver={self.name!r} (solver {self.method!r}) solves {' '.join(need)} meta-games; the game "
                f"has {num_players} players and is {kind}. Use meta_solver='uniform' or another of: "
                f"{', '.join(known_names())}."
            )


def known_names() -> list:
    """Every name :func:`get_meta_solver` accepts.

    Examples
    --------
    >>> {"nash", "uniform"} <= set(known_names())
    True
    """
    product = [m for m in methods() if method_info(m).concept in PRODUCT_CONCEPTS]
    return sorted(set(ALIASES) | set(product))


def get_meta_solver(name: str) -> MetaSolver:
    """Resolve a meta-solver name; unknown names raise ``ValueError`` listing the known ones.

    Examples
    --------
    >>> get_meta_solver("nash")
    MetaSolver(name='nash', method='nash_zero_sum')
    >>> get_meta_solver("nash_zero_sum").warm_lp is None   # the registry's cold solve
    True
    >>> get_meta_solver("nahs")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown meta_solver 'nahs'. Known meta-solvers: ...
    """
    if not isinstance(name, str):
        raise TypeError(f"meta_solver must be a name (str); got {type(name).__name__}.")
    method = ALIASES.get(name, name)
    if method not in methods():
        raise ValueError(f"unknown meta_solver {name!r}. Known meta-solvers: {', '.join(known_names())}.")
    concept = method_info(method).concept
    if concept not in PRODUCT_CONCEPTS:
        raise ValueError(
            f"meta_solver {name!r} gives a {concept!r} joint distribution, which needs JPSRO (not available yet). "
            f"Use a product meta-solver: {', '.join(known_names())}."
        )
    warm = WarmStartZeroSumLP() if name in WARM_STARTED else None
    return MetaSolver(name=name, method=method, warm_lp=warm)
