"""The result type every solver returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Equilibrium"]


@dataclass(frozen=True, eq=False)
class Equilibrium:
    """A solution of a normal-form game.

    Attributes
    ----------
    joint : ndarray, shape (k_1, ..., k_n)
        Probability of each pure joint profile (the product of the marginals
        for product solutions such as Nash).
    marginals : tuple of ndarray
        One mixed strategy per player (the marginals of ``joint``).
    concept : str
        ``"nash"``, ``"ce"``, ``"cce"``, ``"rae"``, ``"qre"``, ``"alpharank"``, ...
    method : str
        The registry name of the solver that produced it.
    gap : float
        The regret measure that fits the concept, computed independently of the
        solver: NashConv for product solutions, the CE or CCE gap for joint ones.
    values : ndarray, shape (num_players,)
        Each player's expected payoff under ``joint``.
    info : dict
        Solver status, iterations, wall time and anything method-specific.

    Examples
    --------
    >>> from games import catalog
    >>> from solvers import solve
    >>> eq = solve(catalog.matching_pennies(), "nash_zero_sum")
    >>> eq.marginals[0].round(3).tolist(), round(eq.gap, 9)
    ([0.5, 0.5], 0.0)
    """

    joint: np.ndarray
    marginals: tuple
    concept: str
    method: str
    gap: float
    values: np.ndarray
    info: dict = field(default_factory=dict)

    @property
    def num_players(self) -> int:
        return len(self.marginals)

    @property
    def converged(self) -> bool:
        """The solver's own verdict (``info["converged"]``, True when not stated)."""
        return bool(self.info.get("converged", True))

    def summary(self) -> str:
        """One line: method, gap and values."""
        vals = ", ".join(f"{v:.6g}" for v in self.values)
        return f"{self.method} ({self.concept}): gap={self.gap:.3g}, values=({vals})"
