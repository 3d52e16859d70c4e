"""The parts of :class:`games.environment.OpenSpielEnv` that remember: the observation buffers and the bounded
cache of the visited history tree (see :mod:`games.environment`, "Speed")."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np

_DECISION, _CHANCE, _TERMINAL = 0, 1, 2
_SIMULTANEOUS = -2        # pyspiel's PlayerId.SIMULTANEOUS


def missing_tensor_advice(game) -> str:
    """How to give ``game`` the flat observation that networks (PPO, DQN, NFSP) act on, when it has no
    information-state tensor.

    Examples
    --------
    >>> import pyspiel
    >>> print(missing_tensor_advice(pyspiel.load_game("hex(board_size=3)")))   # doctest: +NORMALIZE_WHITESPACE
    it has an observation tensor: play it as the environment game 'observation:hex(board_size=3)' \
    (games.ObservationGame)
    """
    if game.get_type().provides_observation_tensor:
        return (f"it has an observation tensor: play it as the environment game 'observation:{game}' "
                "(games.ObservationGame)")
    return ("define information_state_tensor(state, player) and information_state_tensor_shape on the game (a "
            "games.SequentialGame: see its docstring; or observation_tensor with observation_tensor_shape, then play "
            "it as 'observation:<game>'), or give an environment game of your own (an object with num_players, "
            "num_actions, obs_dim and batched_env; games.check_env checks it)")


def _tensor_shape(game, observation: str = "information_state") -> tuple:
    gtype = game.get_type()
    if observation == "information_state":
        if not gtype.provides_information_state_tensor:
            raise ValueError(f"game {game} does not provide information-state tensors, which neural policies observe; "
                             f"{missing_tensor_advice(game)}, or pass observation='observation' where it has one.")
        return tuple(game.information_state_tensor_shape())
    if not gtype.provides_observation_tensor:
        raise ValueError(f"game {game} provides no observation tensor (observation='observation').")
    return tuple(game.observation_tensor_shape())


def _sampled_chance(game) -> bool:
    """Whether ``game`` draws chance inside ``apply_action`` or ``returns``, where no cache may remember it.

    Wrappers such as ``add_noise`` report their inner game's chance mode when
    loaded; the mode they are registered with says ``SAMPLED_STOCHASTIC``.
    """
    import pyspiel

    if game.get_type().chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC:
        return True
    registered = _registered_sampled()
    return str(game).split("(", 1)[0] in registered or game.get_type().short_name in registered


@functools.lru_cache(maxsize=1)
def _registered_sampled() -> frozenset:
    """Short names of the games OpenSpiel registers with sampled chance."""
    import pyspiel

    return frozenset(t.short_name for t in pyspiel.registered_games()
                     if t.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC)


# ---------------------------------------------------------------------------------------------- observers
class _Observers:
    """One float32 observation buffer per env, written by OpenSpiel's observer API where the game has one.

    ``setters[i](state, player)`` writes ``player``'s observation of ``state``
    into ``buffers[i]``. The observer is checked once against the tensor the
    game documents (``information_state_tensor`` / ``observation_tensor``); a
    game without a matching observer falls back to those methods.
    """

    def __init__(self, game, observation: str, num_envs: int):
        import pyspiel

        self.size = math.prod(_tensor_shape(game, observation))
        method = "information_state_tensor" if observation == "information_state" else "observation_tensor"
        iig = pyspiel.IIGObservationType(perfect_recall=observation == "information_state")

        def make():
            try:
                if hasattr(game, "make_py_observer"):   # games written in Python
                    obs = game.make_py_observer(iig, {})
                    tensor = getattr(obs, "tensor", None)
                else:
                    obs = pyspiel._Observation(game, game.make_observer(iig, {}))
                    tensor = np.frombuffer(obs, np.float32) if obs.has_tensor() else None
            except (pyspiel.SpielError, RuntimeError, ValueError, TypeError):
                return None
            if tensor is None or tensor.size != self.size:
                return None
            return obs.set_from, tensor

        first = make()
        if first is not None and not self._agrees(game, first, method):
            first = None
        if first is None:
            self.buffers = [np.zeros(self.size, np.float32) for _ in range(num_envs)]
            self.setters = [self._fallback(method, buf) for buf in self.buffers]
        else:
            pairs = [first] + [make() for _ in range(num_envs - 1)]
            self.setters = [p[0] for p in pairs]
            self.buffers = [p[1] for p in pairs]

    @staticmethod
    def _fallback(method: str, buf: np.ndarray):
        def write(state, player):
            buf[:] = getattr(state, method)(player)
        return write

    @staticmethod
    def _agrees(game, pair, method: str) -> bool:
        state = game.new_initial_state()
        while state.is_chance_node():
            state.apply_action(state.chance_outcomes()[0][0])
        if state.is_terminal():
            return True
        p = 0 if state.current_player() == _SIMULTANEOUS else state.current_player()
        pair[0](state, p)
        return bool(np.array_equal(pair[1], np.asarray(getattr(state, method)(p), np.float32).ravel()))


def _cdf(probs) -> list:
    """Cumulative probabilities as a list, the last entry exactly 1 (a uniform ``u < 1`` never passes it)."""
    acc = list(itertools.accumulate(float(p) for p in probs))
    total = acc[-1]
    cdf = [x / total for x in acc]
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
        self.capacity, self.size, self.allocated = capacity, 0, 0
        self.width, self.max_outcomes = width, max(1, max_outcomes)
        self.num_players, self.num_actions, self.obs_dim = num_players, num_actions, obs_dim
        self.reserve(min(capacity, 1024))
        self.keys: dict = {}    # node -> the acting seat's information-state string, filled on demand
        self.seen: set = set()  # children (parent * width + edge) visited once and not cached yet
        # Python mirrors for walking up the tree: the parent, the action from it, whether it was a seat's
        # choice at a simultaneous node
        self.parent_list: list = [-1]
        self.action_list: list = [-1]
        self.via_simultaneous: list = [False]
        self.states: dict = {}  # node -> (pyspiel state, pending choices): where replays start
        self.state_capacity = 0

    def reserve(self, count: int) -> None:
        """Make room for ``count`` nodes in all (at most ``capacity``)."""
        count = min(count, self.capacity)
        if count <= self.allocated:
            return
        cap = min(self.capacity, max(count, 2 * self.allocated))
        fields = {
            "kind": ((cap,), np.int8, _TERMINAL), "actor": ((cap,), np.int64, -1), "visits": ((cap,), np.int32, 0),
            "seat": ((cap,), np.int64, -1), "parent": ((cap,), np.int64, -1), "edge": ((cap,), np.int64, -1),
            "child": ((cap, self.width), np.int32, -1),
            "obs": ((cap, self.obs_dim), np.float32, 0), "mask": ((cap, self.num_actions), bool, False),
            "returns": ((cap, self.num_players), np.float64, 0),
            "cdf": ((cap, self.max_outcomes), np.float64, 1.0), "outcomes": ((cap, self.max_outcomes), np.int64, 0),
        }
        for name, (shape, dtype, fill) in fields.items():
            new = np.full(shape, fill, dtype=dtype)
            if self.allocated:
                new[:self.allocated] = getattr(self, name)[:self.allocated]   # (some may be grown: interrupted)
            setattr(self, name, new)
        self.allocated = cap

    def admit(self, parent: int, edge: int, size: int) -> bool:
        """Whether the child of ``parent`` through ``edge`` enters the cache now as node ``size``, if there is
        room: at once below a node that play leaves often (``2 * width`` times), else on its second visit. (A
        history seen once is not worth its row: in a large game most are never seen again.)"""
        if size >= self.capacity:
            return False
        if self.visits[parent] >= 2 * self.width:
            return True
        key = parent * self.width + edge
        if key in self.seen:
            self.seen.discard(key)
            return True
        if len(self.seen) >= self.capacity:   # forget the visits of histories never seen twice
            self.seen.clear()
        self.seen.add(key)
        return False

    @staticmethod
    def bytes_per_node(num_players: int, num_actions: int, width: int, obs_dim: int, max_outcomes: int) -> int:
        # the arrays of one node, an entry of the set of histories seen once (a Python int in a set), and
        return (5 * 8 + 4 + 1 + 4 * width + 4 * obs_dim + num_actions + 8 * num_players
                + 16 * max(1, max_outcomes) + 64 + 3 * 36)   # + the three Python mirror lists
