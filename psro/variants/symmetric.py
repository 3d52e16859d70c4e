"""Symmetric (single-population) PSRO: ``PSRO(game, symmetric=True)``, ``symmetric: true`` in a config.

In a symmetric game every player has the same strategies and a player's payoff depends only on its own strategy
and the multiset of the others'. PSRO then needs one population, not one per player: every seat plays from it,
each iteration makes one best response (for seat 0, against the meta-strategy in the other seats), and the
meta-game is the symmetric game between the population's members. What changes in :class:`psro.PSRO`, phase by
phase (the functions here are what the phases call):

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

import itertools
import logging
from dataclasses import dataclass, replace

import numpy as np

from games.normal_form import NormalFormGame
from solvers import make_equilibrium

__all__ = ["SYMMETRIC_ALGORITHMS", "check_symmetric", "one_shot_game", "symmetrised", "symmetric_solution",
           "SymmetricMetaSolver", "SeatMirrors", "mirror_new_profiles", "evaluated_profiles", "check", "setup",
           "seat_sizes", "grown_axes", "evaluated_blocks", "after_evaluation"]

logger = logging.getLogger(__name__)

#: The training loops (:data:`psro.algorithms.ALGORITHMS` names) that take ``symmetric=True``; the config refuses
#: it for the others (their phases keep a population per player or role).
SYMMETRIC_ALGORITHMS = ("psro",)

_ACCEPTS = ("symmetric=True accepts a games.NormalFormGame with symmetric payoffs, and a one-shot OpenSpiel game "
            "(every player decides once, with the same actions, seeing no other move) whose payoff tensor is "
            "symmetric, checked exactly on its game tree; play this game with symmetric=False (one population "
            "per player)")


def _symmetric_payoffs(payoffs: np.ndarray) -> bool:
    """Whether a payoff tensor is symmetric, to 1e-9 of its scale."""
    return NormalFormGame(payoffs).is_symmetric(atol=1e-9 * max(1.0, float(np.abs(payoffs).max(initial=0.0))))


def one_shot_game(tree) -> NormalFormGame:
    """The normal form of a one-shot game tree (each player one information state, moving on every path), its
    payoffs expected over chance and indexed by the legal actions; ``ValueError`` (naming ``symmetric``) for a
    tree that is not one-shot.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.game_tree import build_game_tree
    >>> game = one_shot_game(build_game_tree(pyspiel.load_game("matrix_rps")))
    >>> game.payoffs[0].tolist(), game.is_symmetric()
    ([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]], True)
    """
    infostates = tree.infostates
    counts = [info.num_infostates for info in infostates]
    if any(k != 1 for k in counts):
        dynamics = "" if tree.simultaneous else "; it is turn-based: player 0 moves first"
        raise ValueError(f"symmetric: {tree.game} is not a one-shot game: its players have "
                         f"{', '.join(map(str, counts))} information states{dynamics}. {_ACCEPTS}.")
    masks = [info.legal_mask[0] for info in infostates]
    if any(mask.shape != masks[0].shape or not np.array_equal(mask, masks[0]) for mask in masks):
        raise ValueError(f"symmetric: the players of {tree.game} have different legal actions. {_ACCEPTS}.")
    sequences = np.asarray(tree.terminal_sequence)
    empty = np.array([info.empty_sequence for info in infostates])[:, None]
    if np.any(sequences == empty):
        raise ValueError(f"symmetric: in {tree.game} some player does not move on every path. {_ACCEPTS}.")
    legal = np.flatnonzero(masks[0])
    position = np.full(masks[0].shape[0], -1)
    position[legal] = np.arange(len(legal))
    n = len(infostates)
    payoffs = np.zeros((n, *(len(legal),) * n))
    weighted = tree.terminal_chance[:, None] * tree.terminal_returns
    for p in range(n):
        np.add.at(payoffs[p], tuple(position[sequences[q]] for q in range(n)), weighted[:, p])
    return NormalFormGame(payoffs, name=str(tree.game))


def _decides_twice(game, playouts: int = 16, seed: int = 0):
    """A player who decides more than once on a random playout of ``game`` (then it is not one-shot), else None:
    a quick look before the tree is walked (a game without the pyspiel state interface: None)."""
    rng = np.random.default_rng(seed)
    try:
        n = game.num_players()
        for _ in range(playouts):
            state, decided = game.new_initial_state(), set()
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes = [a for a, p in state.chance_outcomes() if p > 0]
                    state.apply_action(outcomes[int(rng.integers(len(outcomes)))])
                    continue
                seats = range(n) if state.is_simultaneous_node() else [state.current_player()]
                if decided.intersection(seats):
                    return min(decided.intersection(seats))
                decided.update(seats)
                chosen = [state.legal_actions(p)[int(rng.integers(len(state.legal_actions(p))))] for p in seats]
                if state.is_simultaneous_node():
                    state.apply_actions(chosen)
                else:
                    state.apply_action(chosen[0])
    except AttributeError:
        return None
    return None


def check_symmetric(game, normal_form, tree=None, max_histories: int = 1_000_000, learned: bool = False) -> None:
    """Raise ``ValueError`` (naming ``symmetric`` and why) unless the game is symmetric (module docstring: the
    payoffs of a normal-form game; the tree of a one-shot OpenSpiel game, built here when ``tree`` is None). With
    ``learned`` (networks play every seat from what they observe), every seat must also observe the same tensor
    at its decision (:func:`psro.game_tree.infostate_tensors`), else a network would play differently by seat.

    Examples
    --------
    >>> from games import catalog
    >>> check_symmetric(None, catalog.rock_paper_scissors())
    >>> check_symmetric(None, catalog.bach_or_stravinsky())   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: symmetric: the game's payoffs are not symmetric ...
    """
    from games.contracts import is_environment_game

    if normal_form is not None:
        if not _symmetric_payoffs(normal_form.payoffs):
            raise ValueError("symmetric: the game's payoffs are not symmetric (a player's payoff changes when the "
                             f"players swap strategies; shape {normal_form.shape}). {_ACCEPTS}.")
        return
    if is_environment_game(game):
        raise ValueError(f"symmetric: {game!r} is an environment game, which has no tree or payoff tensor to "
                         f"check. {_ACCEPTS}.")
    if tree is None and (player := _decides_twice(game)) is not None:   # (no need to walk a tree to see that)
        raise ValueError(f"symmetric: {game} is not a one-shot game: player {player} decides more than once. "
                         f"{_ACCEPTS}.")
    if tree is None:
        from psro.game_tree import build_game_tree

        try:
            tree = build_game_tree(game, max_histories=max_histories)
        except ValueError as exc:
            raise ValueError(f"symmetric: the check needs the game tree of {game}, which does not fit "
                             f"({str(exc).rstrip('.')}). {_ACCEPTS}.") from None
    one_shot = one_shot_game(tree)
    if not _symmetric_payoffs(one_shot.payoffs):
        raise ValueError(f"symmetric: {game} is one-shot but its payoffs are not symmetric (a player's payoff "
                         f"changes when the players swap actions). {_ACCEPTS}.")
    if learned:
        from psro.game_tree import infostate_tensors

        try:
            seen = [infostate_tensors(tree, p) for p in range(tree.num_players)]
        except ValueError:   # (no information-state tensor: what the networks read is the observation tensor)
            seen = [infostate_tensors(tree, p, observation="observation") for p in range(tree.num_players)]
        if any(t.shape != seen[0].shape or not np.array_equal(t, seen[0]) for t in seen[1:]):
            raise ValueError(f"symmetric: with a learned oracle one network plays every seat from what it "
                             f"observes, and the seats of {game} observe different tensors at their decision (a "
                             "network would play differently by seat); use an exact oracle, or symmetric=False.")


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


class SeatMirrors:
    """The population each seat plays from, given the one population of a symmetric run: the population itself
    in seat 0; in seat ``q``, a tabular population's members as policies over seat ``q``'s information state
    (the same arrays: a one-shot game's seats have one information state each, with the same actions), kept in
    step as members join; a population of policy objects (networks act on observations) in every seat as it is.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> from psro.population import Population, Provenance
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
        from psro.population import Population

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


def check(solver) -> None:
    """Refuse (:func:`check_symmetric`) the game of a :class:`psro.PSRO` being built with ``symmetric=True`` unless it
    is symmetric; called as soon as its tree is (or is not) built."""
    check_symmetric(solver.game, solver.normal_form, solver.tree, solver.config.max_histories,
                    learned=solver.learned)


def setup(solver) -> SeatMirrors:
    """Make a freshly built (and checked, :func:`check`) :class:`psro.PSRO` symmetric: keep one population (seat
    0's; its pending members), solve the meta-game as a symmetric game; return the seats' view of the population
    (the solver's ``seats``)."""
    state = solver.state
    first = [np.asarray(policy) for policy, _ in state.pending[0]]
    if any(len(pending) != len(first) or not all(np.array_equal(np.asarray(policy), mine) for (policy, _), mine
                                                 in zip(pending, first)) for pending in state.pending[1:]):
        raise ValueError("initial_policies: a symmetric run has one population; give every player the same "
                         "initial policies.")
    state.populations, state.pending, state.sizes_before = state.populations[:1], state.pending[:1], [0]
    same = solver.eval_meta_solver is solver.meta_solver
    # cold solves (no warm-started LP): a resumed run then solves exactly as the uninterrupted one
    solver.meta_solver = SymmetricMetaSolver(replace(solver.meta_solver, warm_lp=None))
    solver.eval_meta_solver = solver.meta_solver if same else \
        SymmetricMetaSolver(replace(solver.eval_meta_solver, warm_lp=None))
    return SeatMirrors(solver.tree, solver.num_players)


def seat_sizes(solver, sizes: list) -> list:
    """Per seat, the size of the population it plays from (``sizes``: per population)."""
    return sizes if solver.seats is None else sizes * solver.num_players


def grown_axes(solver, p: int) -> range:
    """The meta-game axes that population ``p``'s new members grow: its own, or every seat's when symmetric."""
    return range(p, p + 1) if solver.seats is None else range(solver.num_players)


def evaluated_blocks(solver, blocks: list) -> list:
    """The new profile blocks to evaluate: all of them, or when symmetric only block 0 (seat 0's member new);
    :func:`mirror_new_profiles` fills the others."""
    return blocks if solver.seats is None else blocks[:1]


def after_evaluation(solver) -> None:
    """When symmetric, fill the new profiles that are seat permutations of the evaluated ones."""
    if solver.seats is not None:
        mirror_new_profiles(solver.state.meta_game, solver.state.sizes_before[0])

