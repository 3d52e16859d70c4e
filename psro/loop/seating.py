"""Seating: which population each seat of the game plays from, as a strategy the loop holds (``solver.seating``).

- :class:`SeparateSeats` (the default): one population per player, seat ``p`` plays from population ``p``; every
  operation is the identity.
- :class:`SharedSeat` (``symmetric=True``, symmetric PSRO): one population plays every seat. Its new members grow
  every axis of the meta-game; only the new profiles whose seat-0 member is new are evaluated, the others are
  filled from them with the seats swapped (:func:`mirror_new_profiles`); the meta-solver solves the symmetrised
  meta-game as a symmetric game (:class:`psro.meta.symmetric.SymmetricMetaSolver`); the seats' populations are
  :class:`SeatMirrors` of the one population. Which games qualify: :mod:`psro.loop.symmetric_games`.

:func:`make_seating` builds the one a run asks for; the loop (:class:`psro.PSRO`) calls the operations and never
asks which it holds.

Examples
--------
>>> seating = SeparateSeats()
>>> seating.seat_sizes([3, 4]), list(seating.grown_axes(1)), seating.shared
([3, 4], [1], False)

Symmetric PSRO evaluates each profile once up to swapping the seats (k(k+1)/2 of the k^2 with two players):

>>> from psro import PSRO
>>> from games import catalog
>>> solver = PSRO(catalog.biased_rock_paper_scissors(), symmetric=True, progress=False)
>>> history = solver.run(iterations=4)
>>> len(solver.populations), solver.meta_game.shape, history["evaluations"].tolist()
(1, (4, 4), [1, 3, 6, 10, 10])
>>> bool(history["gap"].iloc[-1] < 1e-12)
True
>>> PSRO("kuhn_poker", symmetric=True)   # doctest: +ELLIPSIS
Traceback (most recent call last):
...
psro.errors.ConfigError: symmetric: kuhn_poker() is not a one-shot game: ...
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from psro.errors import ConfigError
from psro.loop.symmetric_games import check_symmetric
from psro.meta.symmetric import SymmetricMetaSolver

__all__ = ["SeparateSeats", "SharedSeat", "make_seating", "SeatMirrors", "mirror_new_profiles",
           "evaluated_profiles"]


class SeatMirrors:
    """The population each seat plays from, given the one population of a symmetric run: the population itself
    in seat 0; in seat ``q``, a tabular population's members as policies over seat ``q``'s information state
    (the same arrays: a one-shot game's seats have one information state each, with the same actions), kept in
    step as members join; a population of policy objects (networks act on observations) in every seat as it is.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> from psro.policies.population import Population, Provenance
    >>> tree = build_game_tree(pyspiel.load_game("blotto"))
    >>> pop = Population(tree.infostates[0])
    >>> _ = pop.add(uniform_policy(tree.infostates[0]), Provenance(0, "initial"))
    >>> seats = SeatMirrors(tree, 2)([pop])
    >>> seats[0] is pop, seats[1].infostates.player, bool((seats[1].policies == pop.policies).all())
    (True, 1, True)
    """

    def __init__(self, tree, num_players: int):
        self.tree, self.num_players = tree, int(num_players)
        self._mirrors: dict = {}   # seat -> (the population mirrored, its mirror)

    def __call__(self, populations: list) -> list:
        from psro.policies.population import Population

        (pop,) = populations
        if not isinstance(pop, Population):
            return [pop] * self.num_players
        seats = [pop]
        for q in range(1, self.num_players):
            source, mirror = self._mirrors.get(q, (None, None))
            if source is not pop or len(mirror) > len(pop):
                mirror = Population(self.tree.infostates[q])
                self._mirrors[q] = (pop, mirror)
            if len(mirror) < len(pop):
                mirror.add(pop.policies[len(mirror):], pop.provenance[len(mirror):])
            seats.append(mirror)
        return seats


def mirror_new_profiles(meta_game, old: int) -> None:
    """Fill the new profiles of a symmetric meta-game whose seat-0 index is old (``< old``) from the evaluated
    ones whose seat-0 index is new: profile ``a`` with its first new index in seat ``q`` is profile ``a`` with
    seats 0 and ``q`` swapped, player ``p``'s payoff there player ``swap(p)``'s (counts, sums and exactness
    alike). Idempotent.

    Examples
    --------
    >>> from games.empirical import EmpiricalGame
    >>> eg = EmpiricalGame((2, 2))
    >>> eg.set_exact_block([[1], [0, 1]], [[[3.0, 0.0]], [[-3.0, 0.0]]])   # seat 0 plays the new member 1
    >>> mirror_new_profiles(eg, old=1)
    >>> eg.mean()[0].tolist(), eg.is_complete()
    ([[nan, -3.0], [3.0, 0.0]], False)
    """
    n, k = meta_game.num_players, meta_game.shape[0]
    if old >= k:
        return
    for q in range(1, n):
        swap = list(range(n))
        swap[0], swap[q] = q, 0
        region = np.ix_(*([range(old)] * q + [range(old, k)] + [range(k)] * (n - q - 1)))
        for name in ("count", "total", "total_sq"):
            values = getattr(meta_game, name)
            mirrored = np.swapaxes(values[swap], 1, 1 + q)
            for p in range(n):
                values[p][region] = mirrored[p][region]
        meta_game.exact[region] = np.swapaxes(meta_game.exact, 0, q)[region]


def evaluated_profiles(generations, num_players: int) -> np.ndarray:
    """The profiles of a symmetric meta-game that were evaluated rather than mirrored: those whose seat-0 member
    joined no earlier than every other seat's (``generations``: the iteration each member joined).

    Examples
    --------
    >>> evaluated_profiles([0, 1, 2], 2).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    """
    generations = np.asarray(generations)
    others = np.zeros((1,) * num_players, dtype=generations.dtype)
    for q in range(1, num_players):
        others = np.maximum(others, generations.reshape((1,) * q + (-1,) + (1,) * (num_players - q - 1)))
    return generations.reshape((-1,) + (1,) * (num_players - 1)) >= others


class SeparateSeats:
    """One population per player: seat ``p`` plays from population ``p`` (every operation the identity)."""

    shared = False

    def populations(self, populations: list) -> list:
        """The population each seat plays from."""
        return populations

    def seat_sizes(self, sizes: list) -> list:
        """Per seat, the size of the population it plays from (``sizes``: per population)."""
        return sizes

    def grown_axes(self, p: int) -> range:
        """The meta-game axes that population ``p``'s new members grow."""
        return range(p, p + 1)

    def evaluated_blocks(self, blocks: list) -> list:
        """The new profile blocks to evaluate."""
        return blocks

    def after_evaluation(self, state) -> None:
        """Nothing to fill after the evaluation."""

    def setup(self, solver) -> None:
        """Nothing to change in a freshly built loop."""

    def responses_for_every_seat(self, responses: list):
        """The training step's responses, one list per seat, for the gap to reuse: they are."""
        return responses


class SharedSeat(SeparateSeats):
    """One population plays every seat (symmetric PSRO, module docstring)."""

    shared = True

    def __init__(self, tree, num_players: int):
        self.mirrors = SeatMirrors(tree, num_players)
        self.num_players = int(num_players)

    def populations(self, populations: list) -> list:
        return self.mirrors(populations)

    def seat_sizes(self, sizes: list) -> list:
        return sizes * self.num_players

    def grown_axes(self, p: int) -> range:
        return range(self.num_players)

    def evaluated_blocks(self, blocks: list) -> list:
        """Block 0 only (seat 0's member new): :meth:`after_evaluation` fills the others."""
        return blocks[:1]

    def after_evaluation(self, state) -> None:
        """Fill the new profiles that are seat permutations of the evaluated ones."""
        mirror_new_profiles(state.meta_game, state.sizes_before[0])

    def setup(self, solver) -> None:
        """Keep one population (seat 0's; its pending members) and solve the meta-game as a symmetric game
        (:class:`psro.meta.symmetric.SymmetricMetaSolver`, solved cold: a resumed run then solves exactly as the
        uninterrupted one)."""
        state = solver.state
        first = [np.asarray(policy) for policy, _ in state.pending[0]]
        if any(len(pending) != len(first) or not all(np.array_equal(np.asarray(policy), mine) for (policy, _), mine
                                                     in zip(pending, first)) for pending in state.pending[1:]):
            raise ConfigError("initial_policies", "a symmetric run has one population; give every player the same "
                              "initial policies.")
        state.populations, state.pending, state.sizes_before = state.populations[:1], state.pending[:1], [0]
        same = solver.eval_meta_solver is solver.meta_solver
        solver.meta_solver = SymmetricMetaSolver(replace(solver.meta_solver, warm_lp=None))
        solver.eval_meta_solver = solver.meta_solver if same else \
            SymmetricMetaSolver(replace(solver.eval_meta_solver, warm_lp=None))

    def responses_for_every_seat(self, responses: list):
        """None: the step answered seat 0 only, so the gap computes every seat's best response."""
        return None


def make_seating(solver, symmetric: bool) -> SeparateSeats:
    """The seating of a :class:`psro.PSRO` being built (its tree built or not, its oracles not yet):
    :class:`SeparateSeats`, or with ``symmetric`` a :class:`SharedSeat` once the game is found symmetric
    (:func:`psro.loop.symmetric_games.check_symmetric`). The loop calls its ``setup`` once its state exists."""
    if not symmetric:
        return SeparateSeats()
    check_symmetric(solver.game, solver.normal_form, solver.tree, solver.config.max_histories,
                    learned=solver.learned)
    return SharedSeat(solver.tree, solver.num_players)
