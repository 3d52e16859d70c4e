"""An OpenSpiel game played through its observation tensor: :class:`ObservationGame` (``game: observation:<game>``
in a config), for games such as ``connect_four`` or ``tic_tac_toe`` that have no information-state tensor."""

from __future__ import annotations

import numpy as np

from games.openspiel_env import build_env
from games.validation import check_int

__all__ = ["ObservationGame"]


class ObservationGame:
    """An OpenSpiel game played through its observation tensor (for games without information-state tensors).

    An adapter for :func:`make_env` (it has ``batched_env``): the environment's observations are the game's
    observation tensors, flattened.

    Parameters
    ----------
    game : pyspiel.Game or str

    Examples
    --------
    >>> ttt = ObservationGame("tic_tac_toe")
    >>> ttt.obs_dim, ttt.num_actions, ttt.num_players, str(ttt)
    (27, 9, 2, 'tic_tac_toe()')
    >>> from games.environment import make_env
    >>> make_env(ttt, num_envs=2, rng=0).reset().obs.shape   # the board, 3 planes of 3 x 3
    (2, 27)
    """

    def __init__(self, game):
        import pyspiel

        from games.custom_sequential import SequentialGame
        from games.openspiel_games import load

        self.game = game.to_pyspiel() if isinstance(game, SequentialGame) else load(game)
        if not isinstance(self.game, pyspiel.Game):
            raise TypeError(f"game must be a pyspiel.Game or an OpenSpiel game string; got {type(game).__name__}.")
        if not self.game.get_type().provides_observation_tensor:
            raise ValueError(f"game {self.game} provides no observation tensor; ObservationGame needs one.")
        self.obs_dim = int(np.prod(self.game.observation_tensor_shape()))
        self.num_actions = int(self.game.num_distinct_actions())
        self.num_players = int(self.game.num_players())

    def __str__(self) -> str:
        return str(self.game)

    def __repr__(self) -> str:
        return f"ObservationGame({self.game})"

    def min_utility(self) -> float:
        """The game's lowest return."""
        return float(self.game.min_utility())

    def max_utility(self) -> float:
        """The game's highest return."""
        return float(self.game.max_utility())

    def batched_env(self, num_envs: int, rng=None, **options):
        """:func:`games.environment.make_env` of the game with ``observation="observation"``."""
        check_int(num_envs, "num_envs", minimum=1)
        return build_env(self.game, num_envs, rng=rng, observation="observation", **options)
