"""Which games are symmetric, for symmetric (single-population) PSRO (``symmetric=True``; see
:mod:`psro.loop.seating`): :func:`check_symmetric` refuses any other game with a
``ValueError`` naming ``symmetric`` and why.

- a :class:`games.NormalFormGame` (``catalog:`` games too): its payoffs, exactly (tolerance 1e-9 of the payoff
  scale);
- an OpenSpiel game (or a :class:`games.SequentialGame`): its game tree must be one-shot (every player has one
  information state, the same legal actions, and moves on every path) and its payoff tensor symmetric;
- an environment game: refused (nothing to check it on).
"""

from __future__ import annotations

import numpy as np

from games.normal_form import NormalFormGame
from psro.errors import ConfigError

__all__ = ["SYMMETRIC_ALGORITHMS", "check_symmetric", "one_shot_game"]

#: The training loops (:data:`psro.loop.algorithms.ALGORITHMS` names) that take ``symmetric=True``; the config refuses
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
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> game = one_shot_game(build_game_tree(pyspiel.load_game("matrix_rps")))
    >>> game.payoffs[0].tolist(), game.is_symmetric()
    ([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]], True)
    """
    infostates = tree.infostates
    counts = [info.num_infostates for info in infostates]
    if any(k != 1 for k in counts):
        dynamics = "" if tree.simultaneous else "; it is turn-based: player 0 moves first"
        raise ConfigError("symmetric", f"{tree.game} is not a one-shot game: its players have "
                          f"{', '.join(map(str, counts))} information states{dynamics}. {_ACCEPTS}.")
    masks = [info.legal_mask[0] for info in infostates]
    if any(mask.shape != masks[0].shape or not np.array_equal(mask, masks[0]) for mask in masks):
        raise ConfigError("symmetric", f"the players of {tree.game} have different legal actions. {_ACCEPTS}.")
    sequences = np.asarray(tree.terminal_sequence)
    empty = np.array([info.empty_sequence for info in infostates])[:, None]
    if np.any(sequences == empty):
        raise ConfigError("symmetric", f"in {tree.game} some player does not move on every path. {_ACCEPTS}.")
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
    at its decision (:func:`psro.sequence_form.game_tree.infostate_tensors`), else a network would play differently by
    seat.

    Examples
    --------
    >>> from games import catalog
    >>> check_symmetric(None, catalog.rock_paper_scissors())
    >>> check_symmetric(None, catalog.bach_or_stravinsky())   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: symmetric: the game's payoffs are not symmetric ...
    """
    from games.contracts import is_environment_game

    if normal_form is not None:
        if not _symmetric_payoffs(normal_form.payoffs):
            raise ConfigError("symmetric", "the game's payoffs are not symmetric (a player's payoff changes when the "
                              f"players swap strategies; shape {normal_form.shape}). {_ACCEPTS}.")
        return
    if is_environment_game(game):
        raise ConfigError("symmetric", f"{game!r} is an environment game, which has no tree or payoff tensor to "
                          f"check. {_ACCEPTS}.")
    if tree is None and (player := _decides_twice(game)) is not None:   # (no need to walk a tree to see that)
        raise ConfigError("symmetric", f"{game} is not a one-shot game: player {player} decides more than once. "
                          f"{_ACCEPTS}.")
    if tree is None:
        from psro.sequence_form.game_tree import build_game_tree

        try:
            tree = build_game_tree(game, max_histories=max_histories)
        except ValueError as exc:
            raise ConfigError("symmetric", f"the check needs the game tree of {game}, which does not fit "
                              f"({str(exc).rstrip('.')}). {_ACCEPTS}.") from None
    one_shot = one_shot_game(tree)
    if not _symmetric_payoffs(one_shot.payoffs):
        raise ConfigError("symmetric", f"{game} is one-shot but its payoffs are not symmetric (a player's payoff "
                          f"changes when the players swap actions). {_ACCEPTS}.")
    if learned:
        from psro.sequence_form.game_tree import infostate_tensors

        try:
            seen = [infostate_tensors(tree, p) for p in range(tree.num_players)]
        except ValueError:   # (no information-state tensor: what the networks read is the observation tensor)
            seen = [infostate_tensors(tree, p, observation="observation") for p in range(tree.num_players)]
        if any(t.shape != seen[0].shape or not np.array_equal(t, seen[0]) for t in seen[1:]):
            raise ConfigError("symmetric", f"with a learned oracle one network plays every seat from what it "
                              f"observes, and the seats of {game} observe different tensors at their decision (a "
                              "network would play differently by seat); use an exact oracle, or symmetric=False.")
