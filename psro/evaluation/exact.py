"""Exact expected payoffs of blocks of policy profiles: the sequence form in numpy (``sequence_form``) or
OpenSpiel's C++ (``openspiel``).

The expected payoff of player ``p`` under a profile of tabular policies is
``sum_z c(z) u_p(z) prod_q x_q(sigma_q(z))`` over terminal histories ``z``,
where ``c`` is the chance probability, ``x_q`` player q's realization plan and
``sigma_q(z)`` its last sequence on the path to ``z``. For two players the sum
over terminals is a sparse bilinear form ``X_0 A_p X_1^T`` with
``A_p[s0, s1] = sum of c(z) u_p(z)`` over terminals that end both sequences,
so the payoffs of a whole block of profiles are two matrix products.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from games.empirical import EmpiricalGame
from psro.evaluation.base import EvaluationBatch, block_done, record_exact_block, register_evaluator
from psro.policies import to_openspiel_dict
from psro.sequence_form.game_tree import GameTree

__all__ = ["ExactEvaluator", "SequenceFormEvaluator", "OpenSpielEvaluator"]


class ExactEvaluator:
    """What the exact evaluators share: :meth:`evaluate` writes :meth:`block_payoffs` (which each defines)
    through ``set_exact_block``; a block is done once its profiles are in the meta-game."""

    exact = True

    def refuse_options(self, options: dict) -> None:
        if options:
            raise ValueError(f"evaluator {self.name!r} is exact and takes no options; got {sorted(options)}.")

    def evaluate(self, populations, indices: Sequence[Sequence[int]], *, meta_game: EmpiricalGame | None = None,
                 on_batch: Callable[[EvaluationBatch], None] | None = None) -> np.ndarray:
        """Payoffs of the block ``indices[0] x indices[1] x ...``; with ``meta_game``, also written there exactly
        (:meth:`games.EmpiricalGame.set_exact_block`) and reported to ``on_batch`` as one batch."""
        return record_exact_block(self.block_payoffs(populations, indices), indices, meta_game, on_batch)

    def done(self, meta_game: EmpiricalGame, indices: Sequence[Sequence[int]]) -> bool:
        """True when every profile of the block is already in ``meta_game``."""
        return block_done(meta_game, indices, 1)


@register_evaluator("sequence_form")
class SequenceFormEvaluator(ExactEvaluator):
    """Exact payoffs of blocks of profiles from realization plans.

    Parameters
    ----------
    tree : GameTree

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import realization_plans, uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> plans = [realization_plans(uniform_policy(i)[None], i) for i in tree.infostates]
    >>> SequenceFormEvaluator(tree).payoffs(plans).reshape(2).round(6).tolist()   # uniform vs uniform
    [0.125, -0.125]
    """

    name = "sequence_form"
    exact = True

    def __init__(self, tree: GameTree, **options):
        self.refuse_options(options)
        self.tree = tree
        self.weights = tree.terminal_chance[:, None] * tree.terminal_returns  # (Z, n)
        self._stacked = None
        if tree.num_players == 2:
            import scipy.sparse as sp  # (here: importing the loop should not cost scipy.sparse)

            s0, s1 = tree.terminal_sequence
            n0, n1 = (info.num_sequences for info in tree.infostates)
            # rows p * n0 + s0: both players' payoff matrices stacked, so one sparse product serves both
            rows = np.concatenate([s0, s0 + n0])
            cols = np.concatenate([s1, s1])
            vals = np.concatenate([self.weights[:, 0], self.weights[:, 1]])
            self._stacked = sp.csr_matrix((vals, (rows, cols)), shape=(2 * n0, n1))
            # the same two matrices side by side, for multiplying from the left: (S0, 2 * S1)
            self._side_by_side = sp.csr_matrix((vals, (np.concatenate([s0, s0]), np.concatenate([s1, s1 + n1]))),
                                               shape=(n0, 2 * n1))

    def payoffs(self, plans: Sequence[np.ndarray]) -> np.ndarray:
        """Payoff tensor of every combination of the given plans.

        Parameters
        ----------
        plans : sequence of ndarray
            Player q's realization plans, ``(k_q, num_sequences_q)``.

        Returns
        -------
        ndarray, shape (num_players, k_0, ..., k_{n-1})
        """
        tree = self.tree
        if len(plans) != tree.num_players:
            raise ValueError(f"plans needs one array per player ({tree.num_players}); got {len(plans)}.")
        if self._stacked is not None:
            x0, x1 = plans
            n0, n1 = (info.num_sequences for info in tree.infostates)
            k0, k1 = x0.shape[0], x1.shape[0]
            if k0 <= k1:  # contract the smaller side with the sparse matrices first
                left = (self._side_by_side.T @ x0.T).T.reshape(k0 * 2, n1)      # rows (a, p)
                return (left @ x1.T).reshape(k0, 2, k1).transpose(1, 0, 2)
            right = (self._stacked @ x1.T).reshape(2, n0, k1)                    # (p, S0, b)
            return np.matmul(x0, right)                                          # (p, a, b)
        gathered = [x[:, seq] for x, seq in zip(plans, tree.terminal_sequence)]  # (k_q, Z) each
        letters = "abcdefghijklmnopqrstuvwxy"[: tree.num_players]
        spec = ",".join(f"{c}z" for c in letters) + ",zp->p" + letters
        return np.einsum(spec, *gathered, self.weights, optimize=True)

    def block_payoffs(self, populations, indices: Sequence[Sequence[int]]) -> np.ndarray:
        """Payoffs of the block ``indices[0] x indices[1] x ...`` of the populations' profiles."""
        return self.payoffs([pop.plans[_as_index(idx)] for pop, idx in zip(populations, indices)])


def _as_index(idx):
    """A contiguous ``range`` becomes a slice (a view, no copy); anything else an integer array."""
    if isinstance(idx, range) and idx.step == 1:
        return slice(idx.start, idx.stop)
    return np.asarray(idx, dtype=np.intp)


@register_evaluator("openspiel")
class OpenSpielEvaluator(ExactEvaluator):
    """The same block of payoffs through ``pyspiel.expected_returns`` (C++ tree walk per profile).

    Slower; kept as the reference and for benchmarks.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> from psro.policies.population import Population, Provenance
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> pops = [Population(i) for i in tree.infostates]
    >>> _ = [p.add(uniform_policy(p.infostates), Provenance(0, "initial")) for p in pops]
    >>> OpenSpielEvaluator(tree).block_payoffs(pops, [[0], [0]]).reshape(2).round(6).tolist()
    [0.125, -0.125]
    """

    name = "openspiel"
    exact = True

    def __init__(self, tree: GameTree, **options):
        self.refuse_options(options)
        self.tree = tree
        self._cache: dict = {}

    def _policy(self, pop, i: int):
        import pyspiel

        key = (pop.infostates.player, i)
        if key not in self._cache:
            self._cache[key] = pyspiel.TabularPolicy(to_openspiel_dict(pop.policies[i], pop.infostates))
        return self._cache[key]

    def block_payoffs(self, populations, indices: Sequence[Sequence[int]]) -> np.ndarray:
        """Payoffs of the block ``indices[0] x indices[1] x ...``, one ``expected_returns`` call per profile."""
        import pyspiel

        root = self.tree.game.new_initial_state()
        shape = tuple(len(idx) for idx in indices)
        out = np.empty((self.tree.num_players, *shape))
        for pos in np.ndindex(*shape):
            profile = [self._policy(pop, idx[k]) for pop, idx, k in zip(populations, indices, pos)]
            out[(slice(None), *pos)] = pyspiel.expected_returns(root, profile, -1, True)
        return out
