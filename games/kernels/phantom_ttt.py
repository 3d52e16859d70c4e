"""Phantom tic-tac-toe as numpy arrays over the batch: OpenSpiel's ``phantom_ttt`` without a pyspiel call per step.

The rules (those of OpenSpiel's ``phantom_ttt``): tic-tac-toe where each
player sees only its own marks and the cells it has found taken. A player
picks a cell it does not know to be taken; if the opponent holds it, the
player now sees the opponent's mark there and, in the ``classical`` version,
moves again (``abrupt``: it loses the turn). A line of three wins (+1 / -1), a
full board is a draw. The observation of ``information_state`` is OpenSpiel's
information-state tensor, the player's view (27 bits: 9 cells one-hot over
empty / nought / cross, state-major) followed by its action sequence (with
``obstype=reveal-nothing``: its own moves, 9 one-hot bits each; with
``reveal-numturns``: every move of the game, 11 bits each: the mover's id, then
the cell one-hot for its own moves or the "unknown" bit for the opponent's).
``observation`` is the view alone (``reveal-numturns``: and the number of moves
so far, one-hot).

Each env is a handful of integers: for each seat a 9-bit mask of its marks
and one of the cells it knows, the seat to move, the moves so far; the
observation tensors are kept per seat and updated in place by the move just
made. Wins are looked up in a table of the 512 mark masks. A step is about
thirty numpy calls for the whole batch.

Examples
--------
>>> import numpy as np
>>> from games.environment import make_env
>>> env = make_env("phantom_ttt", num_envs=2, rng=0)   # make_env picks the kernel
>>> type(env).__name__, env.obs_dim
('PhantomTTTEnv', 108)
>>> _ = env.reset()
>>> s = env.step([0, 1], [4, 4])        # x takes the centre in both envs
>>> s.player.tolist(), s.mask[0].tolist()[4]   # o to move; it does not know the centre is taken
([1, 1], True)
>>> s = env.step([0], [4])              # o tries the centre in env 0: taken, so o sees x there and goes again
>>> s.player.tolist(), s.mask[0].tolist()[4], s.obs[0, 2 * 9 + 4]
([1], False, 1.0)
"""

from __future__ import annotations

import math

import numpy as np

from games.contracts import EnvStep, check_step
from games.openspiel_env import _check_observation
from games.validation import check_int

__all__ = ["PhantomTTTEnv"]

_CELLS = 9
_LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
_MAX_MOVES = 2 * _CELLS   # an episode has at most 17 moves (a view is full only once the board is)
_SUPPORTED = {"gameversion": ("classical", "abrupt"), "obstype": ("reveal-nothing", "reveal-numturns")}


def _tables() -> tuple:
    """Over the 512 masks of marked cells: whether one holds a line, and the cells it leaves open."""
    masks = np.arange(2 ** _CELLS)
    bits = (masks[:, None] >> np.arange(_CELLS)) & 1
    won = np.zeros(masks.size, dtype=bool)
    for line in _LINES:
        won |= bits[:, list(line)].all(axis=1)
    return won, bits == 0


_WON, _OPEN = _tables()


class PhantomTTTEnv:
    """``num_envs`` games of OpenSpiel's ``phantom_ttt`` stepped as numpy arrays (build it with :func:`make_env`).

    It takes the arguments of :class:`games.environment.OpenSpielEnv` and
    gives the same rows for the same actions; the game has no chance, so
    ``rng`` is kept (as ``self.rng``) but never drawn from, and there is no
    cache (``cache_bytes`` and ``share_cache`` are checked and then ignored).

    Parameters
    ----------
    game : pyspiel.Game
        ``phantom_ttt`` with any ``gameversion`` and ``obstype``.
    num_envs : int
    rng : numpy.random.Generator or int, optional
    cache_bytes : int
    observation : {"information_state", "observation"}
    share_cache : bool

    Attributes
    ----------
    num_envs, num_players, num_actions, obs_dim : int
    game : pyspiel.Game
    rng : numpy.random.Generator
    observation : str

    Examples
    --------
    >>> import pyspiel
    >>> env = PhantomTTTEnv(pyspiel.load_game("phantom_ttt(obstype=reveal-numturns)"), 3, observation="observation")
    >>> s = env.reset()
    >>> env.obs_dim, s.obs[0, 27:].tolist()[:3]   # the view and a one-hot of the moves so far (none)
    (44, [1.0, 0.0, 0.0])
    """

    def __init__(self, game, num_envs: int = 64, *, rng=None, cache_bytes: int = 128 * 2**20,
                 observation: str = "information_state", share_cache: bool = True):
        num_envs = check_int(num_envs, "num_envs", minimum=1)
        check_int(cache_bytes, "cache_bytes", minimum=0)
        self.observation = _check_observation(observation)
        if not self.supports(game):
            raise ValueError(f"game must be phantom_ttt with parameters among {_SUPPORTED}; got {game}.")
        params = game.get_parameters()
        self.game = game
        self.num_envs, self.num_players, self.num_actions = num_envs, 2, _CELLS
        self.rng = np.random.default_rng(rng)
        self._abrupt = params["gameversion"] == "abrupt"
        self._numturns = params["obstype"] == "reveal-numturns"
        shape = game.information_state_tensor_shape() if observation == "information_state" \
            else game.observation_tensor_shape()
        self.obs_dim = int(math.prod(shape))
        self._width = int(math.prod(game.information_state_tensor_shape()))   # the tensors kept per seat
        n = num_envs
        # per seat (row 2 * env + seat): the cells it has marked, the cells it knows taken, its moves so far,
        # its information-state tensor
        self._marks = np.zeros(2 * n, dtype=np.int64)
        self._known = np.zeros(2 * n, dtype=np.int64)
        self._own = np.zeros(2 * n, dtype=np.int64)
        self._tensor = np.zeros((2 * n, self._width), dtype=np.float32)
        self._flat = self._tensor.reshape(-1)
        # per env: the seat to move, the marks on the board, the moves so far (and which cells they named)
        self._player = np.zeros(n, dtype=np.int64)
        self._filled = np.zeros(n, dtype=np.int64)
        self._moves = np.zeros(n, dtype=np.int64)
        self._history = np.zeros((n, _MAX_MOVES), dtype=np.int64)
        self._episode = np.zeros(n, dtype=np.int64)
        self._started = False
        #: Accepted like :class:`games.openspiel_env.OpenSpielEnv`'s and never read: the game has no chance, so
        #: every episode is keyed already
        self.chance_keys = None

    @staticmethod
    def supports(game) -> bool:
        """Whether ``game`` is a ``phantom_ttt`` this kernel plays (any parameter values OpenSpiel knows)."""
        try:
            params = game.get_parameters()
            short = game.get_type().short_name
        except AttributeError:
            return False
        return short == "phantom_ttt" and set(params) == set(_SUPPORTED) \
            and all(params[k] in v for k, v in _SUPPORTED.items())

    def __repr__(self) -> str:
        return f"PhantomTTTEnv({self.game}, num_envs={self.num_envs})"

    @property
    def cache_hit_rate(self) -> float:
        """NaN: there is no cache (the attribute of :class:`games.environment.OpenSpielEnv`)."""
        return math.nan

    @property
    def cached_nodes(self) -> int:
        """0: there is no cache."""
        return 0

    # ------------------------------------------------------------------------- the API
    def reset(self, rng=None) -> EnvStep:
        """Start a new episode in every env; ``rng`` replaces the env's generator (never drawn from here).

        Examples
        --------
        >>> from games.environment import make_env
        >>> s = make_env("phantom_ttt", num_envs=2).reset()
        >>> s.player.tolist(), s.episode.tolist(), int(s.mask.sum())
        ([0, 0], [1, 1], 18)
        """
        if rng is not None:
            self.rng = np.random.default_rng(rng)
        envs = np.arange(self.num_envs, dtype=np.int64)
        self._restart(envs)
        self._started = True
        return self._observe(envs, np.zeros(envs.size, dtype=bool), np.zeros((envs.size, 2)))

    def step(self, envs, actions) -> EnvStep:
        """Apply ``actions[j]`` in env ``envs[j]`` for the seat to move there; finished episodes restart at once.

        See :meth:`games.environment.OpenSpielEnv.step`.

        Examples
        --------
        >>> from games.environment import make_env
        >>> env = make_env("phantom_ttt", num_envs=1)
        >>> _ = env.reset()
        >>> for cell in (0, 3, 1, 4):                # x: 0, o: 3, x: 1, o: 4
        ...     s = env.step([0], [cell])
        >>> s = env.step([0], [2])                   # x completes the top row
        >>> s.done.tolist(), s.returns.tolist(), s.episode.tolist()
        ([True], [[1.0, -1.0]], [2])
        """
        if not self._started:
            raise ValueError("call reset() before step().")
        envs, actions = check_step(envs, actions, self.num_envs, self.num_actions, self._legal)
        p = self._player[envs]
        me = 2 * envs + p
        other = me ^ 1
        bit = np.left_shift(1, actions)
        free = (self._marks[other] & bit) == 0                  # the move takes the cell
        self._marks[me] |= np.where(free, bit, 0)
        self._known[me] |= bit
        # the mover's tensor: the cell leaves "empty" for the mover's mark (cross = 2 for seat 0) or the other's
        rows = me * self._width
        self._flat[rows + actions] = 0.0
        self._flat[rows + _CELLS * np.where(free, 2 - p, 1 + p) + actions] = 1.0
        offset = 3 * _CELLS
        moves = self._moves[envs]
        if self._numturns:                                       # 11 bits per move of the game
            at = offset + (_CELLS + 2) * moves
            seat = p.astype(np.float32)
            self._flat[rows + at] = seat
            self._flat[rows + at + 1 + actions] = 1.0
            theirs = other * self._width + at
            self._flat[theirs] = seat
            self._flat[theirs + 1 + _CELLS] = 1.0
        else:                                                    # 9 bits per own move
            own = self._own[me]
            self._flat[rows + offset + _CELLS * own + actions] = 1.0
            self._own[me] = own + 1
        self._history[envs, moves] = actions
        self._moves[envs] = moves + 1
        filled = self._filled[envs] + free
        self._filled[envs] = filled
        won = _WON[self._marks[me]]
        done = won | (filled == _CELLS)
        self._player[envs] = (1 - p) if self._abrupt else np.where(free, 1 - p, p)
        returns = np.zeros((envs.size, 2))
        w = np.flatnonzero(won)
        returns[w, p[w]] = 1.0
        returns[w, 1 - p[w]] = -1.0
        if done.any():
            self._restart(envs[done])
        return self._observe(envs, done, returns)

    def _legal(self, envs: np.ndarray, actions: np.ndarray) -> np.ndarray:
        return (self._known[2 * envs + self._player[envs]] >> actions & 1) == 0

    def _restart(self, envs: np.ndarray) -> None:
        """Put ``envs`` at the start of a new episode."""
        self._episode[envs] += 1
        seats = np.concatenate([2 * envs, 2 * envs + 1])
        self._marks[seats] = self._known[seats] = self._own[seats] = 0
        self._tensor[seats] = 0.0
        self._tensor[seats, :_CELLS] = 1.0      # every cell empty
        self._player[envs] = self._filled[envs] = self._moves[envs] = 0

    def _observe(self, envs: np.ndarray, done: np.ndarray, returns: np.ndarray) -> EnvStep:
        player = self._player[envs]
        seat = 2 * envs + player
        if self.observation == "information_state":
            obs = self._tensor[seat]
        elif not self._numturns:
            obs = self._tensor[seat, :3 * _CELLS]
        else:
            obs = np.zeros((envs.size, self.obs_dim), dtype=np.float32)
            obs[:, :3 * _CELLS] = self._tensor[seat, :3 * _CELLS]
            obs[np.arange(envs.size), 3 * _CELLS + self._moves[envs]] = 1.0
        return EnvStep(envs=envs.copy(), player=player, obs=obs, mask=_OPEN[self._known[seat]], done=done,
                       returns=returns, episode=self._episode[envs])

    # ------------------------------------------------------------------------- states, for tabular policies
    def states(self, envs) -> list:
        """The pyspiel states of ``envs`` now, rebuilt by replaying their moves (for tabular policies).

        Examples
        --------
        >>> from games.environment import make_env
        >>> env = make_env("phantom_ttt", num_envs=2)
        >>> _ = env.reset()
        >>> _ = env.step([1], [8])
        >>> [s.history() for s in env.states([0, 1])]
        [[], [8]]
        """
        out = []
        for i in np.asarray(envs, dtype=np.int64).tolist():
            state = self.game.new_initial_state()
            for a in self._history[i, :self._moves[i]].tolist():
                state.apply_action(a)
            out.append(state)
        return out

    def infostate_keys(self, envs) -> list:
        """The information-state string of the seat to move in each of ``envs`` (from the replayed state).

        Examples
        --------
        >>> from games.environment import make_env
        >>> env = make_env("phantom_ttt", num_envs=1)
        >>> _ = env.reset()
        >>> _ = env.step([0], [4])
        >>> env.infostate_keys([0])                  # o's view: nothing known yet, no moves of its own
        ['...\\n...\\n...\\n']
        """
        envs = np.asarray(envs, dtype=np.int64)
        players = self._player[envs].tolist()
        return [s.information_state_string(p) for s, p in zip(self.states(envs), players)]
