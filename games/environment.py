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

The objects :func:`games.from_pettingzoo` returns (and anything else with a
``batched_env(num_envs, rng=..., **options)`` method) are accepted too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from games.validation import check_int

__all__ = ["EnvStep", "BatchedEnv", "OpenSpielEnv", "make_env", "num_actions", "observation_size"]

_DECISION, _CHANCE, _TERMINAL = 0, 1, 2
_SIMULTANEOUS = -2        # pyspiel's PlayerId.SIMULTANEOUS
_OBSERVATIONS = ("information_state", "observation")


@dataclass(frozen=True, eq=False)
class EnvStep:
    """What :meth:`OpenSpielEnv.reset` and :meth:`OpenSpielEnv.step` return: one row per env stepped.

    Attributes
    ----------
    envs : ndarray of int64, shape (b,)
        Which envs the rows are.
    player : ndarray of int64, shape (b,)
        The seat that must act next in each of them.
    obs : ndarray of float32, shape (b, obs_dim)
        That seat's observation (the information-state tensor, flattened).
    mask : ndarray of bool, shape (b, num_actions)
        Its legal actions.
    done : ndarray of bool, shape (b,)
        The episode ended with the action just applied; the row then already
        describes the first decision of the env's next episode.
    returns : ndarray of float64, shape (b, num_players)
        The finished episode's returns where ``done``, 0 elsewhere.
    episode : ndarray of int64, shape (b,)
        How many episodes the env has started (a driver draws a new opponent
        profile whenever it changes).
    """

    envs: np.ndarray
    player: np.ndarray
    obs: np.ndarray
    mask: np.ndarray
    done: np.ndarray
    returns: np.ndarray
    episode: np.ndarray


class BatchedEnv(Protocol):
    """``num_envs`` copies of a game stepped together (see :class:`OpenSpielEnv`)."""

    num_envs: int
    num_players: int
    num_actions: int
    obs_dim: int

    def reset(self, rng=None) -> EnvStep:
        """Start a new episode in every env (``rng``: a generator or an int seed replacing the env's own)."""

    def step(self, envs: np.ndarray, actions: np.ndarray) -> EnvStep:
        """Apply one action per env listed, for the seat that was to act there."""


# ---------------------------------------------------------------------------------------------- the game
def _as_game(game):
    """A ``pyspiel.Game`` for ``game`` (a game string, a pyspiel game or a :class:`games.SequentialGame`)."""
    import pyspiel

    from games.custom_sequential import SequentialGame
    from games.openspiel_games import load

    if isinstance(game, SequentialGame):
        return game.to_pyspiel()
    if isinstance(game, str | pyspiel.Game):
        return load(game)
    raise TypeError(f"game must be a pyspiel.Game, an OpenSpiel game string, a games.SequentialGame or what "
                    f"games.from_pettingzoo returns; got {type(game).__name__}.")


def _is_adapter(game) -> bool:
    return callable(getattr(game, "batched_env", None))


def _check_observation(observation: str) -> str:
    if observation not in _OBSERVATIONS:
        raise ValueError(f"observation must be one of {_OBSERVATIONS}; got {observation!r}.")
    return observation


def _tensor_shape(game, observation: str = "information_state") -> tuple:
    gtype = game.get_type()
    if observation == "information_state":
        if not gtype.provides_information_state_tensor:
            raise ValueError(f"game {game} does not provide information-state tensors; pass "
                             "observation='observation' to use its observation tensor, if it has one.")
        return tuple(game.information_state_tensor_shape())
    if not gtype.provides_observation_tensor:
        raise ValueError(f"game {game} provides no observation tensor (observation='observation').")
    return tuple(game.observation_tensor_shape())


def observation_size(game, observation: str = "information_state") -> int:
    """Length of the flat observation :func:`make_env` gives for ``game``, without building an env.

    Examples
    --------
    >>> observation_size("phantom_ttt")   # its information-state tensor has shape [1, 108]
    108
    >>> observation_size("leduc_poker")
    30
    """
    if _is_adapter(game):
        return int(game.obs_dim)
    return int(math.prod(_tensor_shape(_as_game(game), _check_observation(observation))))


def num_actions(game) -> int:
    """Width of the legal-action mask :func:`make_env` gives for ``game`` (its distinct player actions).

    Examples
    --------
    >>> num_actions("leduc_poker"), num_actions("goofspiel(num_cards=4)")
    (3, 4)
    """
    if _is_adapter(game):
        return int(game.num_actions)
    return int(_as_game(game).num_distinct_actions())


def make_env(game, num_envs: int = 64, *, rng=None, **options):
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
    **options
        For OpenSpiel games, the keyword arguments of :class:`OpenSpielEnv`
        (``cache_bytes``, ``observation``).

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
    if _is_adapter(game):
        return game.batched_env(num_envs, rng=rng, **options)
    return OpenSpielEnv(_as_game(game), num_envs, rng=rng, **options)


# ---------------------------------------------------------------------------------------------- observers
class _Observer:
    """Writes one seat's flat observation of a state into a float32 buffer (OpenSpiel's observer API)."""

    def __init__(self, game, observation: str):
        import pyspiel

        self.size = math.prod(_tensor_shape(game, observation))
        self._fallback = (lambda s, p: s.information_state_tensor(p)) if observation == "information_state" \
            else (lambda s, p: s.observation_tensor(p))
        iig = pyspiel.IIGObservationType(perfect_recall=observation == "information_state")
        self._set, self.tensor = None, None
        try:
            if hasattr(game, "make_py_observer"):   # games written in Python
                obs = game.make_py_observer(iig, {})
                if getattr(obs, "tensor", None) is not None:
                    self._set, self.tensor = obs.set_from, obs.tensor
            else:
                obs = pyspiel._Observation(game, game.make_observer(iig, {}))
                if obs.has_tensor():
                    self._set, self.tensor = obs.set_from, np.frombuffer(obs, np.float32)
        except (pyspiel.SpielError, RuntimeError, ValueError, TypeError):
            self._set = None
        if self.tensor is not None and self.tensor.size != self.size:
            self._set = None
        if self._set is not None:   # the observer must agree with the tensor the game documents
            state = game.new_initial_state()
            while state.is_chance_node():
                state.apply_action(state.chance_outcomes()[0][0])
            if not state.is_terminal():
                p = 0 if state.current_player() == _SIMULTANEOUS else state.current_player()
                self._set(state, p)
                if not np.array_equal(self.tensor, np.asarray(self._fallback(state, p), np.float32).ravel()):
                    self._set = None

    def write(self, state, player: int, out: np.ndarray) -> None:
        """Write ``player``'s observation of ``state`` into ``out`` (a float32 row)."""
        if self._set is None:
            out[:] = self._fallback(state, player)
        else:
            self._set(state, player)
            out[:] = self.tensor


def _cumulative(probs) -> np.ndarray:
    """Cumulative probabilities with the last entry exactly 1 (``u < 1`` then never passes it)."""
    cdf = np.cumsum(np.asarray(probs, dtype=np.float64))
    cdf /= cdf[-1]
    cdf[-1] = 1.0
    return cdf


class _NodeCache:
    """The visited part of the history tree as growing arrays, up to a fixed number of nodes.

    A node is a history (for simultaneous nodes: a history plus the choices of
    the seats before ``seat``). ``child[n, e]`` is the node reached through
    edge ``e`` (the action at decision nodes, the outcome's position in
    ``chance_outcomes()`` at chance nodes), ``-1`` where not yet visited.
    """

    def __init__(self, capacity: int, num_players: int, num_actions: int, width: int, obs_dim: int,
                 max_outcomes: int):
        self.capacity, self.size = capacity, 0
        self.width, self.max_outcomes = width, max(1, max_outcomes)
        self.num_players, self.num_actions, self.obs_dim = num_players, num_actions, obs_dim
        self.chance_rows = 0
        self._allocate(min(capacity, 1024))
        self.keys: dict = {}   # (node, seat) -> information-state string, filled on demand

    def _allocate(self, cap: int) -> None:
        old = getattr(self, "kind", None)
        fields = {
            "kind": ((cap,), np.int8, _TERMINAL), "actor": ((cap,), np.int64, -1),
            "seat": ((cap,), np.int64, -1), "parent": ((cap,), np.int64, -1), "edge": ((cap,), np.int64, -1),
            "chance_row": ((cap,), np.int64, -1), "child": ((cap, self.width), np.int32, -1),
            "obs": ((cap, self.obs_dim), np.float32, 0), "mask": ((cap, self.num_actions), bool, False),
            "returns": ((cap, self.num_players), np.float64, 0),
            "cdf": ((cap, self.max_outcomes), np.float64, 1.0), "outcomes": ((cap, self.max_outcomes), np.int64, 0),
        }
        for name, (shape, dtype, fill) in fields.items():
            new = np.full(shape, fill, dtype=dtype)
            if old is not None:
                prev = getattr(self, name)
                new[:prev.shape[0]] = prev
            setattr(self, name, new)
        self.allocated = cap

    @staticmethod
    def bytes_per_node(num_players: int, num_actions: int, width: int, obs_dim: int, max_outcomes: int) -> int:
        return 6 * 8 + 1 + 4 * width + 4 * obs_dim + num_actions + 8 * num_players + 16 * max(1, max_outcomes)

    def add(self, parent: int, edge: int) -> int:
        """A new node below ``parent`` through ``edge`` (``-1`` for the root), or ``-1`` when full."""
        if self.size >= self.capacity:
            return -1
        if self.size >= self.allocated:
            self._allocate(min(self.capacity, 2 * self.allocated))
        n = self.size
        self.size += 1
        self.parent[n], self.edge[n] = parent, edge
        if parent >= 0:
            self.child[parent, edge] = n
        return n


class OpenSpielEnv:
    """``num_envs`` copies of an OpenSpiel game stepped as a batch (build it with :func:`make_env`).

    Parameters
    ----------
    game : pyspiel.Game
        A turn-based or simultaneous-move game with the observation tensor
        asked for.
    num_envs : int
    rng : numpy.random.Generator or int, optional
        Draws the chance outcomes (a generator is shared, not copied).
    cache_bytes : int
        Memory budget of the cache of visited histories (default 128 MiB); 0
        turns it off. Games with sampled chance are never cached.
    observation : {"information_state", "observation"}
        Which tensor is the observation (default the information-state tensor,
        which has perfect recall).

    Attributes
    ----------
    num_envs, num_players, num_actions, obs_dim : int
    game : pyspiel.Game
    rng : numpy.random.Generator

    Examples
    --------
    >>> env = make_env("goofspiel(num_cards=3,points_order=descending)", num_envs=2, rng=0)
    >>> s = env.reset()
    >>> s.player.tolist()                       # a simultaneous node: seat 0 chooses first ...
    [0, 0]
    >>> s = env.step(s.envs, np.array([2, 2]))  # ... then seat 1, at the same state
    >>> s.player.tolist(), bool(s.done.any())
    ([1, 1], False)
    """

    def __init__(self, game, num_envs: int = 64, *, rng=None, cache_bytes: int = 128 * 2**20,
                 observation: str = "information_state"):
        import pyspiel

        num_envs = check_int(num_envs, "num_envs", minimum=1)
        cache_bytes = check_int(cache_bytes, "cache_bytes", minimum=0)
        observation = _check_observation(observation)
        gtype = game.get_type()
        dyn = pyspiel.GameType.Dynamics
        if gtype.dynamics not in (dyn.SEQUENTIAL, dyn.SIMULTANEOUS):
            raise ValueError(f"game {game} has {gtype.dynamics} dynamics; only turn-based and simultaneous-move "
                             "games can be played.")
        self.game = game
        self.num_envs = num_envs
        self.num_players = game.num_players()
        self.num_actions = game.num_distinct_actions()
        self.observation = observation
        self._observer = _Observer(game, observation)
        self.obs_dim = self._observer.size
        self.rng = np.random.default_rng(rng)
        self._simultaneous = gtype.dynamics == dyn.SIMULTANEOUS
        max_outcomes = max(1, game.max_chance_outcomes())
        width = max(self.num_actions, max_outcomes)
        capacity = 0
        if gtype.chance_mode != pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC:
            per_node = _NodeCache.bytes_per_node(self.num_players, self.num_actions, width, self.obs_dim,
                                                 max_outcomes)
            capacity = cache_bytes // per_node
        self._cache = _NodeCache(capacity, self.num_players, self.num_actions, width, self.obs_dim, max_outcomes) \
            if capacity > 0 else None
        if self._cache is not None:
            root = self._cache.add(-1, -1)
            self._fill_node(root, game.new_initial_state(), [])
        n = num_envs
        self._node = np.full(n, -1, dtype=np.int64)           # cached node, -1 when play is beyond the cache
        self._live: list = [None] * n                          # a pyspiel state in step with the env, or None
        self._is_live = np.zeros(n, dtype=bool)                # where _live holds a state
        self._pending: list = [[] for _ in range(n)]           # simultaneous: choices of the seats so far
        self._kind = np.full(n, _TERMINAL, dtype=np.int8)      # live envs: what their state is now
        self._player = np.full(n, -1, dtype=np.int64)
        self._obs = np.zeros((n, self.obs_dim), dtype=np.float32)
        self._mask = np.zeros((n, self.num_actions), dtype=bool)
        self._live_returns = np.zeros((n, self.num_players))
        self._episode = np.zeros(n, dtype=np.int64)
        self._started = False

    def __repr__(self) -> str:
        cached = self._cache.size if self._cache is not None else 0
        return f"OpenSpielEnv({self.game}, num_envs={self.num_envs}, cached_nodes={cached})"

    # ------------------------------------------------------------------------- the cache
    @property
    def cached_nodes(self) -> int:
        """Nodes of the history tree held in the cache now."""
        return 0 if self._cache is None else self._cache.size

    def _fill_node(self, n: int, state, pending: list) -> None:
        """Describe node ``n`` (the state ``state`` with the simultaneous choices ``pending``) in the cache."""
        c = self._cache
        if state.is_terminal():
            c.kind[n] = _TERMINAL
            c.returns[n] = state.returns()
        elif state.is_chance_node():
            c.kind[n] = _CHANCE
            outcomes, probs = zip(*state.chance_outcomes())
            k = len(outcomes)
            if k > c.max_outcomes:
                raise ValueError(f"game {self.game} has a chance node with {k} outcomes, more than its "
                                 f"max_chance_outcomes ({c.max_outcomes}).")
            c.cdf[n, :k] = _cumulative(probs)
            c.outcomes[n, :k] = outcomes
        else:
            c.kind[n] = _DECISION
            seat = self._acting(state, pending)
            c.actor[n] = seat
            c.seat[n] = len(pending) if state.current_player() == _SIMULTANEOUS else -1
            self._observer.write(state, seat, c.obs[n])
            c.mask[n, self._legal(state, seat)] = True

    def _legal(self, state, seat: int) -> list:
        legal = state.legal_actions(seat)
        if not legal:
            raise ValueError(f"seat {seat} has no legal action at a decision of {self.game}; "
                             "simultaneous nodes where a seat does not act are not supported.")
        return legal

    @staticmethod
    def _acting(state, pending: list) -> int:
        p = state.current_player()
        return len(pending) if p == _SIMULTANEOUS else p

    def _replay(self, node: int) -> tuple:
        """A fresh pyspiel state at cached ``node`` and the pending simultaneous choices there."""
        c = self._cache
        path = []
        while c.parent[node] >= 0:
            path.append((int(c.parent[node]), int(c.edge[node])))
            node = int(c.parent[node])
        state, pending = self.game.new_initial_state(), []
        for parent, edge in reversed(path):
            action = int(c.outcomes[parent, edge]) if c.kind[parent] == _CHANCE else edge
            self._apply_live(state, pending, action, c.seat[parent] >= 0)
        return state, pending

    def _apply_live(self, state, pending: list, action: int, simultaneous: bool) -> None:
        if simultaneous:
            pending.append(action)
            if len(pending) == self.num_players:
                state.apply_actions(pending)
                pending.clear()
        else:
            state.apply_action(action)

    # ------------------------------------------------------------------------- moving one env
    def _advance_live(self, i: int, edge: int, chance: bool) -> None:
        """Apply ``edge`` (an action, or an outcome position at chance) to env ``i``'s live state."""
        state, pending = self._live[i], self._pending[i]
        if chance:
            action = state.chance_outcomes()[edge][0]
            state.apply_action(action)
        else:
            self._apply_live(state, pending, edge, state.current_player() == _SIMULTANEOUS)
        parent = int(self._node[i])
        if parent >= 0:   # still inside the cache: extend it
            c = self._cache
            n = int(c.child[parent, edge])
            if n < 0:
                n = c.add(parent, edge)
                if n >= 0:
                    self._fill_node(n, state, pending)
            self._node[i] = n
        self._describe_live(i)

    def _describe_live(self, i: int) -> None:
        """Set the env's kind (and for decisions beyond the cache, player, obs, mask) from its live state."""
        n = int(self._node[i])
        if n >= 0:
            self._kind[i] = self._cache.kind[n]
            return
        state, pending = self._live[i], self._pending[i]
        if state.is_terminal():
            self._kind[i] = _TERMINAL
            self._live_returns[i] = state.returns()
        elif state.is_chance_node():
            self._kind[i] = _CHANCE
        else:
            self._kind[i] = _DECISION
            seat = self._acting(state, pending)
            self._player[i] = seat
            self._observer.write(state, seat, self._obs[i])
            self._mask[i] = False
            self._mask[i, self._legal(state, seat)] = True

    def _restart(self, envs: np.ndarray) -> None:
        """Put ``envs`` at the root of a new episode."""
        self._episode[envs] += 1
        if self._cache is not None:
            self._node[envs] = 0
            self._kind[envs] = self._cache.kind[0]
            for i in envs[self._is_live[envs]].tolist():
                self._live[i] = None
            self._is_live[envs] = False
            return
        self._is_live[envs] = True
        for i in envs.tolist():
            self._live[i] = self.game.new_initial_state()
            self._pending[i] = []
            self._describe_live(i)

    def _move(self, envs: np.ndarray, edges: np.ndarray, chance: bool) -> None:
        """Move ``envs`` along ``edges``: numpy where the cache knows the child, pyspiel elsewhere."""
        node = self._node[envs]
        cached = (node >= 0) & ~self._is_live[envs]
        if self._cache is not None and cached.any():
            child = self._cache.child[node[cached], edges[cached]].astype(np.int64)
            hit = child >= 0
            where = envs[cached][hit]
            self._node[where] = child[hit]
            self._kind[where] = self._cache.kind[child[hit]]
            for i, n in zip(envs[cached][~hit].tolist(), node[cached][~hit].tolist()):   # first visits
                self._live[i], self._pending[i] = self._replay(n)
                self._is_live[i] = True
            cached[cached] = hit
        for i, e in zip(envs[~cached].tolist(), edges[~cached].tolist()):
            self._advance_live(i, e, chance)

    def _chance_edges(self, envs: np.ndarray) -> np.ndarray:
        """One outcome position per env at a chance node, from one uniform draw each (in the order of ``envs``)."""
        u = self.rng.random(envs.size)
        node = self._node[envs]
        cached = (node >= 0)
        edges = np.empty(envs.size, dtype=np.int64)
        if cached.any():
            cdf = self._cache.cdf[node[cached]]
            edges[cached] = (cdf <= u[cached, None]).sum(axis=1)
        for j in np.flatnonzero(~cached).tolist():
            probs = [p for _, p in self._live[int(envs[j])].chance_outcomes()]
            edges[j] = int((_cumulative(probs) <= u[j]).sum())
        return edges

    def _settle(self, envs: np.ndarray, done: np.ndarray, returns: np.ndarray, fresh: bool) -> None:
        """Play chance and restart finished episodes until every env in ``envs`` is at a decision.

        ``fresh``: the envs have just been restarted (no decision yet in their episode).
        """
        restarted = np.full(envs.size, fresh)
        active = np.arange(envs.size)
        while active.size:
            kind = self._kind[envs[active]]
            term = active[kind == _TERMINAL]
            if term.size:
                e = envs[term]
                node = self._node[e]
                rets = np.where((node >= 0)[:, None], self._cache.returns[np.maximum(node, 0)]
                                if self._cache is not None else 0.0, self._live_returns[e])
                if restarted[term].any():
                    raise ValueError(f"an episode of {self.game} ended without any decision; the environment "
                                     "needs at least one decision per episode.")
                done[term], returns[term], restarted[term] = True, rets, True
                self._restart(e)
                kind = self._kind[envs[active]]
            chance = active[kind == _CHANCE]
            if chance.size:
                e = envs[chance]
                self._move(e, self._chance_edges(e), chance=True)
            active = active[self._kind[envs[active]] != _DECISION]

    def _observe(self, envs: np.ndarray, done: np.ndarray, returns: np.ndarray) -> EnvStep:
        node = self._node[envs]
        cached = node >= 0
        if cached.any():
            c, where = self._cache, envs[cached]
            self._obs[where] = c.obs[node[cached]]
            self._mask[where] = c.mask[node[cached]]
            self._player[where] = c.actor[node[cached]]
        return EnvStep(envs=envs.copy(), player=self._player[envs], obs=self._obs[envs], mask=self._mask[envs],
                       done=done, returns=returns, episode=self._episode[envs])

    # ------------------------------------------------------------------------- the API
    def reset(self, rng=None) -> EnvStep:
        """Start a new episode in every env; ``rng`` (a generator or an int seed) replaces the env's generator.

        Examples
        --------
        >>> env = make_env("leduc_poker", num_envs=4)
        >>> a, b = env.reset(rng=1), env.reset(rng=1)
        >>> bool(np.array_equal(a.obs, b.obs)), a.episode.tolist(), b.episode.tolist()
        (True, [1, 1, 1, 1], [2, 2, 2, 2])
        """
        if rng is not None:
            self.rng = np.random.default_rng(rng)
        envs = np.arange(self.num_envs, dtype=np.int64)
        self._restart(envs)
        self._started = True
        done = np.zeros(self.num_envs, dtype=bool)
        returns = np.zeros((self.num_envs, self.num_players))
        self._settle(envs, done, returns, fresh=True)
        return self._observe(envs, done, returns)

    def step(self, envs, actions) -> EnvStep:
        """Apply ``actions[j]`` in env ``envs[j]`` for the seat that must act there; play on to the next decisions.

        Parameters
        ----------
        envs : array of int, shape (b,)
            Distinct env indices.
        actions : array of int, shape (b,)
            One legal action each.

        Returns
        -------
        EnvStep
            One row per entry of ``envs``, in that order.

        Examples
        --------
        >>> env = make_env("kuhn_poker", num_envs=4, rng=0)
        >>> s = env.reset()
        >>> s = env.step([0, 2], [0, 0])       # only envs 0 and 2 move; the others still wait
        >>> s.envs.tolist(), s.player.tolist()
        ([0, 2], [1, 1])
        """
        if not self._started:
            raise ValueError("call reset() before step().")
        envs = np.asarray(envs)
        actions = np.asarray(actions)
        if envs.ndim != 1 or not (envs.size == 0 or np.issubdtype(envs.dtype, np.integer)):
            raise ValueError(f"envs must be a 1-D array of env indices; got shape {envs.shape}, dtype {envs.dtype}.")
        envs = envs.astype(np.int64, copy=False)
        if actions.shape != envs.shape or not (actions.size == 0 or np.issubdtype(actions.dtype, np.integer)):
            raise ValueError(f"actions must be integers, one per env in envs (shape {envs.shape}); "
                             f"got shape {actions.shape}, dtype {actions.dtype}.")
        if envs.size and (envs.min() < 0 or envs.max() >= self.num_envs):
            raise ValueError(f"envs must lie in [0, {self.num_envs}); got {envs.min()}..{envs.max()}.")
        if np.unique(envs).size != envs.size:
            raise ValueError("envs must not repeat an env (one action per env and step).")
        actions = actions.astype(np.int64, copy=False)
        if actions.size and (actions.min() < 0 or actions.max() >= self.num_actions
                             or not self._current_mask(envs)[np.arange(envs.size), actions].all()):
            bad = np.flatnonzero((actions < 0) | (actions >= self.num_actions))
            if bad.size == 0:
                bad = np.flatnonzero(~self._current_mask(envs)[np.arange(envs.size), actions])
            j = int(bad[0])
            raise ValueError(f"actions[{j}] = {int(actions[j])} is not legal in env {int(envs[j])}; "
                             "choose from the env's mask.")
        self._move(envs, actions, chance=False)
        done = np.zeros(envs.size, dtype=bool)
        returns = np.zeros((envs.size, self.num_players))
        self._settle(envs, done, returns, fresh=False)
        return self._observe(envs, done, returns)

    def _current_mask(self, envs: np.ndarray) -> np.ndarray:
        node = self._node[envs]
        out = self._mask[envs]
        cached = node >= 0
        if cached.any():
            out[cached] = self._cache.mask[node[cached]]
        return out

    # ------------------------------------------------------------------------- states, for tabular policies
    def states(self, envs) -> list:
        """The pyspiel states of ``envs`` now, for policies that read states (e.g. tabular ones).

        At a simultaneous node the state is the node's state, without the
        pending choices of the seats that have chosen. Envs inside the cache
        rebuild their state by replaying their history.

        Examples
        --------
        >>> env = make_env("kuhn_poker", num_envs=2, rng=0)
        >>> _ = env.reset()
        >>> [len(s.history()) for s in env.states([0, 1])]   # both cards dealt
        [2, 2]
        """
        out = []
        for i in np.asarray(envs, dtype=np.int64).tolist():
            if self._live[i] is not None:
                out.append(self._live[i])
            else:
                out.append(self._replay(int(self._node[i]))[0])
        return out

    def infostate_keys(self, envs) -> list:
        """The information-state string of the acting seat in each of ``envs`` (cached per history node).

        Examples
        --------
        >>> env = make_env("kuhn_poker", num_envs=1, rng=3)
        >>> _ = env.reset()
        >>> env.infostate_keys([0])[0] in ("0", "1", "2")   # player 0 knows only its card
        True
        """
        envs = np.asarray(envs, dtype=np.int64)
        out = []
        keys = self._cache.keys if self._cache is not None else None
        for i in envs.tolist():
            n, seat = int(self._node[i]), int(self._player_now(i))
            if n >= 0 and (n, seat) in keys:
                out.append(keys[n, seat])
                continue
            state = self._live[i] if self._live[i] is not None else self._replay(n)[0]
            key = state.information_state_string(seat)
            if n >= 0:
                keys[n, seat] = key
            out.append(key)
        return out

    def _player_now(self, i: int) -> int:
        n = int(self._node[i])
        return int(self._cache.actor[n]) if n >= 0 else int(self._player[i])
