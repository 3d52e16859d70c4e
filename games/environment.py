"""A batched multi-agent environment over OpenSpiel games of any size, with flat observations and legal masks.

:func:`make_env` builds ``num_envs`` copies of a game that are stepped as a
batch. Every row of what :meth:`OpenSpielEnv.step` returns (an
:class:`EnvStep`) is a decision: the seat that must act in that env, its
observation (the game's information-state tensor, any shape flattened, as
float32) and its legal actions as a boolean mask. A driver chooses one action
per env it wants to move and steps exactly those envs; episodes that end
restart at once, and the row then already shows the first decision of the next
episode, with the finished episode's returns alongside.

- **Turn-based and simultaneous-move games.** At a simultaneous node the env
  asks seats ``0 .. N-1`` in turn, each with its own observation of the same
  state (which does not show the others' pending choices), and applies the
  joint action once all have chosen; no conversion to a turn-based game.
- **Chance** is sampled from ``chance_outcomes()`` with the env's own numpy
  generator, so a run is a pure function of its seed. Games whose chance is
  sampled inside ``apply_action`` (OpenSpiel's ``SAMPLED_STOCHASTIC`` mode)
  are stepped as they are; their hidden draws come from the game's own
  generator.
- **Speed.** Observations are written through OpenSpiel's observer buffers, and
  the chance moves of a whole batch are drawn with one call. A bounded cache of
  the visited history tree (for every node: its children by action, the acting
  seat's observation and mask, the chance distribution or the returns) lets
  histories that were seen before step as a few numpy gathers, without any
  pyspiel call. The cache only records nodes that play reaches, never
  enumerates the tree, and holds at most ``cache_bytes``; when it is full,
  play beyond it goes on with plain pyspiel stepping. The cache never changes
  what is sampled: the same seed gives the same episodes with any budget,
  including ``cache_bytes=0``.
- **Kernels.** Where :mod:`games.kernels` has a numpy kernel for the game
  (``phantom_ttt``), :func:`make_env` builds that instead: the state of every
  env lives in arrays over the batch and a step is a fixed number of numpy
  calls for the whole batch, with no pyspiel call. It gives exactly the rows
  the generic env gives (``make_env(..., kernel=False)``), only faster.

The objects :func:`games.from_pettingzoo` returns (and anything else with a
``batched_env(num_envs, rng=..., **options)`` method) are accepted too.
"""

from __future__ import annotations

import math

from games.contracts import BatchedEnv, EnvStep, check_step, is_environment_game
from games.env_history_cache import _tensor_shape
from games.game_resolution import resolve
from games.observation_game import ObservationGame
from games.openspiel_env import OpenSpielEnv, _check_observation, build_env
from games.validation import check_int

__all__ = ["EnvStep", "BatchedEnv", "OpenSpielEnv", "ObservationGame", "check_step", "make_env", "num_actions",
           "observation_size"]


# ---------------------------------------------------------------------------------------------- the game
def _as_game(game):
    """A ``pyspiel.Game`` for ``game`` (any form :func:`games.game_resolution.resolve` accepts but an environment)."""
    resolved = resolve(game)
    if resolved.environment:
        raise TypeError(f"game must be a pyspiel.Game, an OpenSpiel game string or a games.SequentialGame here; "
                        f"{game} is only an environment.")
    return resolved.game


def observation_size(game, observation: str = "information_state") -> int:
    """Length of the flat observation :func:`make_env` gives for ``game``, without building an env.

    Examples
    --------
    >>> observation_size("phantom_ttt")   # its information-state tensor has shape [1, 108]
    108
    >>> observation_size("leduc_poker")
    30
    """
    if is_environment_game(game):
        return int(game.obs_dim)
    return int(math.prod(_tensor_shape(_as_game(game), _check_observation(observation))))


def num_actions(game) -> int:
    """Width of the legal-action mask :func:`make_env` gives for ``game`` (its distinct player actions).

    Examples
    --------
    >>> num_actions("leduc_poker"), num_actions("goofspiel(num_cards=4)")
    (3, 4)
    """
    if is_environment_game(game):
        return int(game.num_actions)
    return int(_as_game(game).num_distinct_actions())


def make_env(game, num_envs: int = 64, *, rng=None, kernel: bool = True, **options):
    """``num_envs`` copies of ``game`` stepped as a batch.

    Parameters
    ----------
    game : pyspiel.Game, str, games.SequentialGame or a PettingZoo adapter
        An OpenSpiel game (or its string), a custom sequential game, or what
        :func:`games.from_pettingzoo` returns.
    num_envs : int
        Copies played side by side.
    rng : numpy.random.Generator or int, optional
        Draws every chance outcome. A generator is used as it is (shared with
        the caller), an int seeds a fresh one.
    kernel : bool
        Play the game with its numpy kernel where :mod:`games.kernels` has one
        for it (default; e.g. ``phantom_ttt``): the same rows, faster. False
        always builds the generic :class:`OpenSpielEnv`.
    **options
        For OpenSpiel games, the keyword arguments of :class:`OpenSpielEnv`
        (``cache_bytes``, ``observation``, ``share_cache``).

    Returns
    -------
    BatchedEnv

    Raises
    ------
    ValueError
        For ``num_envs < 1``, a game without the observation tensor asked for,
        a mean-field game, or an unknown option.

    Examples
    --------
    >>> import numpy as np
    >>> env = make_env("kuhn_poker", num_envs=3, rng=0)
    >>> first = env.reset()
    >>> first.player.tolist(), first.obs.shape, first.mask.tolist()[0]
    ([0, 0, 0], (3, 11), [True, True])
    >>> nxt = env.step(first.envs, np.array([1, 1, 1]))   # player 0 bets everywhere
    >>> nxt.player.tolist(), bool(nxt.done.any())
    ([1, 1, 1], False)
    >>> end = env.step(nxt.envs, np.array([1, 1, 1]))     # player 1 calls: showdowns, worth 2 to the winner
    >>> end.done.tolist(), sorted(set(np.abs(end.returns).ravel().tolist()))
    ([True, True, True], [2.0])
    """
    num_envs = check_int(num_envs, "num_envs", minimum=1)
    resolved = resolve(game)
    if resolved.environment:
        return resolved.game.batched_env(num_envs, rng=rng, **options)
    return build_env(resolved.game, num_envs, rng=rng, kernel=kernel, **options)
