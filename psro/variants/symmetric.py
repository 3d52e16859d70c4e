"""Symmetric (single-population) PSRO: ``PSRO(game, symmetric=True)``, ``symmetric: true`` in a config.

In a symmetric game every player has the same strategies and a player's payoff depends only on its own strategy
and the multiset of the others'. PSRO then needs one population, not one per player: every seat plays from it,
each iteration makes one best response (for seat 0, against the meta-strategy in the other seats), and the
meta-game is the symmetric game between the population's members. What changes in :class:`psro.PSRO`, phase by
phase (:mod:`psro.seating` holds what the phases call):

- **add**: the new members grow every axis of the meta-game (``shape == (k,) * num_players``);
  ``state.populations`` holds the one population, ``population_0`` in the history is its size;
- **evaluate**: only the profiles whose seat-0 member is new are evaluated; every other new profile is one of
  them with two seats swapped, filled from it (:func:`mirror_new_profiles`). With two players each profile is
  evaluated once up to swapping the seats (k(k+1)/2 of the k^2); ``evaluations`` counts the evaluated profiles,
  ``episodes`` their episodes (:func:`evaluated_profiles`);
- **meta-solve**: the meta-game, symmetrised (the average over permutations of the seats), is solved as a
  symmetric game (:class:`SymmetricMetaSolver`): one strategy for every seat;
- **targets, respond**: one target, seat 0's, so one oracle call per iteration (the seats' populations are
  :class:`SeatMirrors` of the one population);
- **measure**: the exact gap (NashConv, CCE or CE gap) in the full game, every seat playing the meta-strategy,
  with an exact best response for every seat.

Which games are symmetric (checked at construction by :func:`check_symmetric`; a game that fails is refused
with a ``ValueError`` naming ``symmetric`` and why):

- a :class:`games.NormalFormGame` (``catalog:`` games too): its payoffs,
  :meth:`games.NormalFormGame.is_symmetric`, exactly (tolerance 1e-9 of the payoff scale);
- an OpenSpiel game (or a :class:`games.SequentialGame`): its game tree, built for the check if the run does not
  build it anyway (within ``max_histories``), must be one-shot: every player has one information state, the same
  legal actions, and moves on every path (a simultaneous-move game such as ``blotto``, or a normal-form game
  played in turns, no player seeing another's move); its payoff tensor (expected over chance) must then be
  symmetric, exactly as above. A game where a player decides more than once or sees another's move or a chance
  outcome first (``kuhn_poker``: player 0 acts first and sees its card) is refused: there is no check here that
  maps one seat's information states onto another's, so such a game is played with one population per player
  (where the run has no tree, 16 random playouts look first: a player deciding twice refuses the game at once,
  e.g. ``leduc_poker`` with a learned oracle);
- an environment game (PettingZoo, ``observation:``): refused (nothing to check it on).

A network (a learned oracle) trained in seat 0 plays every seat; in a one-shot game it sees its seat's
observation of the initial state (checked: the seats must observe the same tensor). ``symmetric`` is honoured by
the loops of :data:`SYMMETRIC_ALGORITHMS` (``psro``: PSRO and JPSRO); the other training loops (the self-play
family, NFSP, the league, the offline loops, the variants) refuse it (:meth:`psro.config.PSROConfig.checked_game`).

Examples
--------
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
ValueError: symmetric: kuhn_poker() is not a one-shot game: ...
"""

from __future__ import annotations

from psro.meta.symmetric import SymmetricMetaSolver, symmetric_solution, symmetrised
from psro.seating import SeatMirrors, evaluated_profiles, mirror_new_profiles
from psro.symmetric_games import SYMMETRIC_ALGORITHMS, check_symmetric, one_shot_game

__all__ = ["SYMMETRIC_ALGORITHMS", "check_symmetric", "one_shot_game", "symmetrised", "symmetric_solution",
           "SymmetricMetaSolver", "SeatMirrors", "mirror_new_profiles", "evaluated_profiles"]
