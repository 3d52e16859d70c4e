"""The meta-solver of a symmetric (single-population) run: the meta-game, symmetrised, solved as a symmetric game
(one strategy for every seat); :class:`SymmetricMetaSolver` wraps any registered meta-solver so.
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass

import numpy as np

from games.normal_form import NormalFormGame
from solvers import make_equilibrium

__all__ = ["symmetrised", "symmetric_solution", "SymmetricMetaSolver"]

logger = logging.getLogger(__name__)


def symmetrised(game: NormalFormGame) -> NormalFormGame:
    """The symmetric game nearest ``game``: each player's payoff averaged over the permutations of the seats (a
    symmetric game is its own symmetrisation; a sampled meta-game's noise is averaged).

    Examples
    --------
    >>> import numpy as np
    >>> symmetrised(NormalFormGame(np.array([[[1.0, 2.0], [0.0, 0.0]], [[1.0, 0.0], [4.0, 0.0]]]))).payoffs[0]
    array([[1., 3.],
           [0., 0.]])
    """
    payoffs = np.asarray(game.payoffs, dtype=np.float64)
    n = payoffs.shape[0]
    perms = list(itertools.permutations(range(n)))
    # the permuted game: player p of it is player perm[p] of the original, with the seats' strategies swapped alike
    total = sum(np.transpose(payoffs[list(perm)], (0, *[1 + q for q in perm])) for perm in perms)
    return game.with_payoffs(total / len(perms))


def _symmetric_joint(joint: np.ndarray) -> np.ndarray:
    """A joint distribution averaged over the permutations of the seats."""
    n = joint.ndim
    perms = list(itertools.permutations(range(n)))
    return sum(np.transpose(joint, perm) for perm in perms) / len(perms)


def symmetric_solution(meta_solver, game: NormalFormGame):
    """``meta_solver``'s solution of the symmetric meta-game ``game`` (symmetrised first) as a symmetric one.

    - alpha-Rank: the single-population chain (:func:`ranking.alpharank` with ``single_population=True``);
    - a correlated solver (JPSRO): its joint averaged over the permutations of the seats (still a CE / CCE of a
      symmetric game: the set is convex and invariant under those permutations);
    - a product solver whose seats already agree (to 1e-9): that strategy for every seat;
    - a Nash solver on a two-player constant-sum game: seat 0's maximin strategy, in both seats (in a symmetric
      zero-sum game it guarantees the value, so it is a symmetric Nash equilibrium);
    - a Nash solver on a two-player general-sum game: the column strategy of a Nash equilibrium of the imitation
      game ``(A, I)`` (McLennan and Tourky 2010), a symmetric Nash equilibrium of ``(A, A.T)``;
    - otherwise: the average of the seats' strategies (recorded as ``info["symmetric"] = "averaged"``).

    Examples
    --------
    >>> from games import catalog
    >>> from psro.meta.solvers import get_meta_solver
    >>> eq = symmetric_solution(get_meta_solver("nash"), catalog.chicken())   # the mixed symmetric equilibrium
    >>> [m.round(6).tolist() for m in eq.marginals], round(eq.gap, 9), eq.info["symmetric"]
    ([[0.333333, 0.666667], [0.333333, 0.666667]], 0.0, 'imitation_game')
    """
    game = symmetrised(game)
    n, method = game.num_players, meta_solver.method
    if method == "alpharank":
        from ranking import alpharank

        options = dict(meta_solver.options)
        options["single_population"] = True
        pi = np.asarray(alpharank(game, **options).pi, dtype=np.float64)
        return make_equilibrium(game, marginals=[pi] * n, concept="alpharank", method=method,
                                info={"pi": pi, "symmetric": "single_population"})
    eq = meta_solver(game)
    if meta_solver.kind != "product":
        return make_equilibrium(game, joint=_symmetric_joint(np.asarray(eq.joint)), concept=eq.concept,
                                method=eq.method, info={**eq.info, "symmetric": "joint_averaged"})
    marginals = [np.asarray(m, dtype=np.float64) for m in eq.marginals]
    if all(np.allclose(m, marginals[0], atol=1e-9, rtol=0) for m in marginals):
        return make_equilibrium(game, marginals=[marginals[0]] * n, concept=eq.concept, method=eq.method,
                                info={**eq.info, "symmetric": "as_solved"})
    if eq.concept == "nash" and n == 2 and game.is_constant_sum():
        return make_equilibrium(game, marginals=[marginals[0]] * n, concept="nash", method=eq.method,
                                info={**eq.info, "symmetric": "maximin"})
    if eq.concept == "nash" and n == 2:
        k = game.shape[0]
        imitation = NormalFormGame(np.stack([game.payoffs[0], np.eye(k)]))
        y = np.asarray(meta_solver(imitation).marginals[1], dtype=np.float64)
        return make_equilibrium(game, marginals=[y, y], concept="nash", method=eq.method,
                                info={"symmetric": "imitation_game"})
    logger.info("the %s solution of the symmetric meta-game is not symmetric; its seats' strategies are averaged",
                meta_solver.name)
    average = sum(marginals) / n
    return make_equilibrium(game, marginals=[average] * n, concept=eq.concept, method=eq.method,
                            info={**eq.info, "symmetric": "averaged"})


@dataclass(frozen=True)
class SymmetricMetaSolver:
    """A :class:`psro.meta.solvers.MetaSolver` that solves the symmetric meta-game as a symmetric game
    (:func:`symmetric_solution`); it has the wrapped solver's ``name``, ``method`` and ``kind``, and solves cold
    (the symmetric runs wrap solvers without a warm-started LP, which a resume would have to replay).

    Examples
    --------
    >>> from games import catalog
    >>> from psro.meta.solvers import get_meta_solver
    >>> solver = SymmetricMetaSolver(get_meta_solver("alpharank"))
    >>> solver.name, [m.round(3).tolist() for m in solver(catalog.rock_paper_scissors()).marginals]
    ('alpharank', [[0.333, 0.333, 0.333], [0.333, 0.333, 0.333]])
    """

    inner: object

    name = property(lambda self: self.inner.name)
    method = property(lambda self: self.inner.method)
    kind = property(lambda self: self.inner.kind)
    is_joint = property(lambda self: self.inner.is_joint)
    warm_lp = None   # (solved cold: nothing to replay on resume)

    def __call__(self, meta_game: NormalFormGame):
        return symmetric_solution(self.inner, meta_game)
