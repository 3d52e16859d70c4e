"""Trivial reference solvers."""

from __future__ import annotations

import numpy as np

from games.normal_form import NormalFormGame
from solvers.equilibrium import Equilibrium
from solvers.registry import make_equilibrium, register

__all__ = ["uniform"]


@register("uniform", concept="uniform")
def uniform(game: NormalFormGame) -> Equilibrium:
    """Every player mixes uniformly over its strategies (the gap is NashConv).

    Examples
    --------
    >>> from games import catalog
    >>> uniform(catalog.rock_paper_scissors()).gap
    0.0
    """
    return make_equilibrium(game, marginals=[np.ones(k) / k for k in game.shape], concept="uniform",
                            method="uniform")
