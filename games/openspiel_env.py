"""The generic batched environment over any OpenSpiel game: :class:`OpenSpielEnv` (see :mod:`games.environment`
for what it does and :func:`games.environment.make_env` for how to build one)."""

from __future__ import annotations

import bisect
import itertools
import math

import numpy as np

from games.contracts import BatchedEnv, EnvStep, check_step
from games.env_history_cache import (
    _CHANCE,
    _DECISION,
    _SIMULTANEOUS,
    _TERMINAL,
    _cdf,
    _NodeCache,
    _Observers,
    _sampled_chance,
)
from games.validation import check_int

__all__ = ["OpenSpielEnv", "build_env"]

_CHANCE_PLAYER = -1       # pyspiel's PlayerId.CHANCE
_STATE_BYTES = 1024       # what a stored pyspiel state is reckoned to take (about 0.8 KiB for poker, tic-tac-toe)
_MAX_SHARED = 4           # games whose caches a process keeps (the least recently used one goes first)
_SHARED_CACHES: dict = {}  # (game string, observation, capacity) -> _NodeCache, shared by the envs of a process
_OBSERVATIONS = ("information_state", "observation")



def _check_observation(observation: str) -> str:
    if observation not in _OBSERVATIONS:
        raise ValueError(f"observation must be one of {_OBSERVATIONS}; got {observation!r}.")
    return observation


def build_env(game, num_envs: int, *, rng=None, kernel: bool = True, **options) -> BatchedEnv:
    """``num_envs`` copies of the ``pyspiel.Game`` ``game``: its numpy kernel where :mod:`games.kernels` has one
    and ``kernel`` is true, else an :class:`OpenSpielEnv` (what :func:`games.environment.make_env` builds).

    Examples
    --------
    >>> import pyspiel
    >>> type(build_env(pyspiel.load_game("kuhn_poker"), 2)).__name__
    'OpenSpielEnv'
    """
    if kernel:
        from games.kernels import kernel_for

        cls = kernel_for(game)
        if cls is not None:
            return cls(game, num_envs, rng=rng, **options)
    return OpenSpielEnv(game, num_envs, rng=rng, **options)


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
        turns it off. Games with sampled chance (and wrappers registered so,
        such as ``add_noise``) are never cached.
    share_cache : bool
        Share the cache with the other envs of the same game (and budget) in
        this process (default), so that every new env (one per training run
        or per evaluated profile) starts from what earlier ones have seen. At
        most four games' caches are kept. The cache never changes what is
        sampled, so sharing it changes only the speed. (Not for envs stepped
        from several threads at once.)
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
    >>> from games.environment import make_env
    >>> env = make_env("goofspiel(num_cards=3,points_order=descending)", num_envs=2, rng=0)
    >>> s = env.reset()
    >>> s.player.tolist()                       # a simultaneous node: seat 0 chooses first ...
    [0, 0]
    >>> s = env.step(s.envs, np.array([2, 2]))  # ... then seat 1, at the same state
    >>> s.player.tolist(), bool(s.done.any())
    ([1, 1], False)
    """

    def __init__(self, game, num_envs: int = 64, *, rng=None, cache_bytes: int = 128 * 2**20,
                 observation: str = "information_state", share_cache: bool = True):
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
        self._observers = _Observers(game, observation, num_envs)
        self.obs_dim = self._observers.size
        self.rng = np.random.default_rng(rng)
        self._simultaneous = gtype.dynamics == dyn.SIMULTANEOUS
        max_outcomes = max(1, game.max_chance_outcomes())
        width = max(self.num_actions, max_outcomes)
        capacity = 0
        if not _sampled_chance(game):
            capacity = (cache_bytes - cache_bytes // 4) // _NodeCache.bytes_per_node(
                self.num_players, self.num_actions, width, self.obs_dim, max_outcomes)
        self._cache = None
        if capacity > 0:
            # C++ games are shared by their string; a game written in Python may not be what its name says
            key = (str(game), observation, capacity) if share_cache and not hasattr(game, "make_py_observer") \
                else None
            self._cache = _SHARED_CACHES.get(key) if key is not None else None
            if self._cache is None:
                self._cache = _NodeCache(capacity, self.num_players, self.num_actions, width, self.obs_dim,
                                         max_outcomes)
                self._cache.state_capacity = cache_bytes // 4 // _STATE_BYTES
                self._fill_root()
                if key is not None:
                    _SHARED_CACHES[key] = self._cache
                    while len(_SHARED_CACHES) > _MAX_SHARED:
                        _SHARED_CACHES.pop(next(iter(_SHARED_CACHES)))
            elif key is not None:
                _SHARED_CACHES[key] = _SHARED_CACHES.pop(key)   # most recently used last
        n = num_envs
        self._node = np.full(n, -1, dtype=np.int64)           # cached node, -1 when play is beyond the cache
        self._live: list = [None] * n                          # a pyspiel state in step with the env, or None
        self._is_live = np.zeros(n, dtype=bool)                # where _live holds a state
        self._pending: list = [[] for _ in range(n)]           # simultaneous: choices of the seats so far
        self._kind = np.full(n, _TERMINAL, dtype=np.int8)      # what each env is at now
        self._player = np.full(n, -1, dtype=np.int64)          # live envs: the acting seat, ...
        self._mask = np.zeros((n, self.num_actions), dtype=bool)   # ... its legal actions,
        self._live_returns = np.zeros((n, self.num_players))      # ... and the returns at terminals
        self._episode = np.zeros(n, dtype=np.int64)
        self._draws = np.zeros(n, dtype=np.int64)              # chance draws in each env's episode so far
        self._started = False
        self._decisions = self._hits = 0
        #: A :class:`games.keyed_chance.KeyedChance` (set before ``reset``): chance drawn per episode, not from
        #: ``rng`` (paired episodes); None: from ``rng``
        self.chance_keys = None

    def __repr__(self) -> str:
        return f"OpenSpielEnv({self.game}, num_envs={self.num_envs}, cached_nodes={self.cached_nodes})"

    @property
    def cache_hit_rate(self) -> float:
        """The fraction of the actions applied so far that the cache stepped (no pyspiel call); NaN before any."""
        return self._hits / self._decisions if self._decisions else math.nan

    @property
    def cached_nodes(self) -> int:
        """Nodes of the history tree held in the cache now."""
        return 0 if self._cache is None else self._cache.size

    # ------------------------------------------------------------------------- the cache
    def _fill_root(self) -> None:
        c, state = self._cache, self.game.new_initial_state()
        c.size = 1
        if state.is_terminal():
            raise ValueError(f"game {self.game} is over at its initial state.")
        if state.is_chance_node():
            c.kind[0] = _CHANCE
            self._fill_chance(0, state)
            return
        seat = self._seat_of(state, [])
        c.kind[0], c.actor[0] = _DECISION, seat
        c.seat[0] = 0 if state.current_player() == _SIMULTANEOUS else -1
        self._observers.setters[0](state, seat)
        c.obs[0] = self._observers.buffers[0]
        c.mask[0, self._legal(state, seat)] = True

    def _fill_chance(self, n: int, state) -> None:
        c = self._cache
        outcomes = state.chance_outcomes()
        k = len(outcomes)
        if k > c.max_outcomes:
            raise ValueError(f"game {self.game} has a chance node with {k} outcomes, more than its "
                             f"max_chance_outcomes ({c.max_outcomes}).")
        c.cdf[n, :k] = _cdf([p for _, p in outcomes])
        c.outcomes[n, :k] = [a for a, _ in outcomes]

    def _legal(self, state, seat: int) -> list:
        legal = state.legal_actions(seat)
        if not legal:
            raise ValueError(f"seat {seat} has no legal action at a decision of {self.game}; "
                             "simultaneous nodes where a seat does not act are not supported.")
        return legal

    @staticmethod
    def _seat_of(state, pending: list) -> int:
        p = state.current_player()
        return len(pending) if p == _SIMULTANEOUS else p

    def _replay(self, node: int) -> tuple:
        """A fresh pyspiel state at cached ``node`` and the pending simultaneous choices there.

        From the nearest ancestor whose state is stored (the root at worst), replaying the actions below it;
        the state reached is stored too while the store has room.
        """
        c = self._cache
        path, n = [], node
        while n not in c.states and n > 0:
            path.append(n)
            n = c.parent_list[n]
        if n in c.states:
            base, pend = c.states[n]
            state, pending = base.clone(), list(pend)
        else:
            state, pending = self.game.new_initial_state(), []
        for k in reversed(path):
            action = c.action_list[k]
            if c.via_simultaneous[k]:
                pending.append(action)
                if len(pending) == self.num_players:
                    state.apply_actions(pending)
                    pending = []
            else:
                state.apply_action(action)
        if path and len(c.states) < c.state_capacity:
            c.states[node] = (state.clone(), tuple(pending))
        return state, pending

    # ------------------------------------------------------------------------- moving envs
    def _live_batch(self, ids: np.ndarray, edges=None, actions=None, chance: bool = False) -> None:
        """Apply ``actions`` to the live states of ``ids`` (``None``: fresh states) and describe where they are.

        Envs still inside the cache extend it with the nodes they reach (while it has room).
        """
        live, pending, setters = self._live, self._pending, self._observers.setters
        c = self._cache
        id_list = ids.tolist()
        b = len(id_list)
        nodes = self._node[ids].tolist()
        moving = actions is not None
        extend = moving and c is not None and max(nodes) >= 0
        if moving:
            act_list = actions.tolist()
            if extend:
                edge_list = edges.tolist()
                c.reserve(c.size + b)
                # outside the cache until the nodes they reach are published: an env stopped half-way never
                # writes its (advanced) state below its old node
                self._node[ids] = -1
        sim = self._simultaneous and moving and not chance
        kinds = [_DECISION] * b
        dec_j, dec_p, masks, term_j, term_r = [], [], [], [], []
        seats = {}
        new_j, new_k, new_parent, new_edge = [], [], [], []
        created: dict = {}
        size = c.size if extend else 0   # nodes made here are numbered from the cache's size and published at the end
        if moving and not extend and not self._simultaneous:   # the common case, kept tight
            self._apply_plain(id_list, act_list, kinds, dec_j, dec_p, masks, term_j, term_r)
            id_list = ()
        for j, i in enumerate(id_list):
            st = live[i]
            if moving:
                if sim and st.current_player() == _SIMULTANEOUS:
                    pend = pending[i]
                    pend.append(act_list[j])
                    if len(pend) == self.num_players:
                        st.apply_actions(pend)
                        pending[i] = []
                else:
                    st.apply_action(act_list[j])
            p = st.current_player()
            if p >= 0:
                setters[i](st, p)
                masks.append(st.legal_actions_mask(p))
                dec_j.append(j)
                dec_p.append(p)
            elif p == _SIMULTANEOUS:
                p = len(pending[i])
                seats[j] = p
                setters[i](st, p)
                masks.append(st.legal_actions_mask(p))
                dec_j.append(j)
                dec_p.append(p)
            elif p == _CHANCE_PLAYER:
                kinds[j] = _CHANCE
            else:
                kinds[j] = _TERMINAL
                term_j.append(j)
                term_r.append(st.returns())
            if extend and nodes[j] >= 0:   # still inside the cache: extend it
                n, e = nodes[j], edge_list[j]
                k = int(c.child[n, e])
                if k < 0:
                    k = created.get((n, e), -1)
                    if k < 0 and c.admit(n, e, size):
                        k = size
                        size += 1
                        created[n, e] = k
                        new_j.append(j)
                        new_k.append(k)
                        new_parent.append(n)
                        new_edge.append(e)
                nodes[j] = k
        self._kind[ids] = kinds
        self._write_rows(ids, dec_j, dec_p, masks, term_j, term_r)
        if new_j:
            self._record_nodes(ids, np.array(new_j), np.array(new_k), np.array(new_parent), np.array(new_edge),
                               seats)
        if extend:
            self._node[ids] = nodes

    def _apply_plain(self, id_list, act_list, kinds, dec_j, dec_p, masks, term_j, term_r) -> None:
        """:meth:`_live_batch`'s common case (turn-based, outside the cache): apply one action per env and collect
        what each reached into the lists given."""
        live, setters = self._live, self._observers.setters
        add_dec, add_p, add_mask = dec_j.append, dec_p.append, masks.append
        for j, (i, a) in enumerate(zip(id_list, act_list)):
            st = live[i]
            st.apply_action(a)
            p = st.current_player()
            if p >= 0:
                setters[i](st, p)
                add_mask(st.legal_actions_mask(p))
                add_dec(j)
                add_p(p)
            elif p == _CHANCE_PLAYER:
                kinds[j] = _CHANCE
            else:
                kinds[j] = _TERMINAL
                term_j.append(j)
                term_r.append(st.returns())

    def _write_rows(self, ids, dec_j, dec_p, masks, term_j, term_r) -> None:
        """Store the seats and legal masks of the envs ``ids[dec_j]`` now at a decision and the returns of those
        ``ids[term_j]`` that ended."""
        if dec_j:
            d = ids[dec_j]
            self._player[d] = dec_p
            mask = np.frombuffer(bytes(itertools.chain.from_iterable(masks)), dtype=bool)
            mask = mask.reshape(len(dec_j), self.num_actions)
            if not mask.any(axis=1).all():
                j = int(np.flatnonzero(~mask.any(axis=1))[0])
                raise ValueError(f"seat {dec_p[j]} has no legal action at a decision of {self.game}; "
                                 "simultaneous nodes where a seat does not act are not supported.")
            self._mask[d] = mask
        if term_j:
            self._live_returns[ids[term_j]] = term_r

    def _record_nodes(self, ids, new_j, new_k, parent, edge, seats: dict) -> None:
        """Write the nodes the live envs ``ids[new_j]`` have just reached into the cache as ``new_k`` (numbered
        ``c.size, c.size + 1, ...``), then publish them: the size, then the links from their parents.

        The cache is shared by the process's envs of the game, and a signal handler (a budget's timer, Ctrl-C)
        may raise anywhere in here: every prefix of this method leaves the published nodes as they were (the rows
        and mirror entries past ``c.size`` are scratch, overwritten by the next nodes; a node published without
        its link is never reached).
        """
        c = self._cache
        envs = ids[new_j]
        c.parent[new_k], c.edge[new_k] = parent, edge
        pk = c.kind[parent]
        acts = np.where(pk == _CHANCE, c.outcomes[parent, np.minimum(edge, c.max_outcomes - 1)], edge)
        for mirror in (c.parent_list, c.action_list, c.via_simultaneous):   # lists indexed by node
            del mirror[c.size:]
        c.parent_list.extend(parent.tolist())
        c.action_list.extend(acts.tolist())
        c.via_simultaneous.extend(((pk == _DECISION) & (c.seat[parent] >= 0)).tolist())
        kind = self._kind[envs]
        c.kind[new_k] = kind
        dec = kind == _DECISION
        if dec.any():
            k, e = new_k[dec], envs[dec]
            c.actor[k] = self._player[e]
            c.seat[k] = [seats.get(j, -1) for j in new_j[dec].tolist()]
            buffers = self._observers.buffers
            c.obs[k] = np.concatenate([buffers[i] for i in e.tolist()]).reshape(k.size, self.obs_dim)
            c.mask[k] = self._mask[e]
        term = kind == _TERMINAL
        if term.any():
            c.returns[new_k[term]] = self._live_returns[envs[term]]
        for k, i in zip(new_k[kind == _CHANCE].tolist(), envs[kind == _CHANCE].tolist()):
            self._fill_chance(k, self._live[i])
        c.size = int(new_k[-1]) + 1
        c.child[parent, edge] = new_k

    def _restart(self, envs: np.ndarray) -> None:
        """Put ``envs`` at the root of a new episode."""
        self._episode[envs] += 1
        self._draws[envs] = 0
        if self._cache is not None:
            self._node[envs] = 0
            self._kind[envs] = self._cache.kind[0]
            for i in envs[self._is_live[envs]].tolist():
                self._live[i] = None
                self._pending[i] = []
            self._is_live[envs] = False
            return
        self._is_live[envs] = True
        for i in envs.tolist():
            self._live[i] = self.game.new_initial_state()
            self._pending[i] = []
        self._live_batch(envs)

    def _move(self, envs: np.ndarray, edges: np.ndarray, actions: np.ndarray, chance: bool) -> None:
        """Move ``envs`` along ``edges``: numpy where the cache knows the child, pyspiel elsewhere."""
        live = self._is_live[envs]
        if not chance:
            self._decisions += envs.size
        if not live.all():
            cached = ~live
            ce, cn = envs[cached], self._node[envs[cached]]
            c = self._cache
            c.visits[cn] += 1   # how often play leaves each node (a node twice in one batch counts once)
            child = c.child[cn, edges[cached]].astype(np.int64)
            hit = child >= 0
            if not chance:
                self._hits += int(hit.sum())
            self._node[ce[hit]] = child[hit]
            self._kind[ce[hit]] = c.kind[child[hit]]
            if not hit.all():
                for i, n in zip(ce[~hit].tolist(), cn[~hit].tolist()):   # first visits: leave the cache's numpy path
                    self._live[i], self._pending[i] = self._replay(n)
                self._is_live[ce[~hit]] = True
                live[cached] = ~hit
        if live.any():
            le, ed, ac = envs[live], edges[live], actions[live]
            inside = self._node[le] >= 0   # these extend the cache as they go; the others step plain pyspiel
            if inside.any() and not inside.all():
                self._live_batch(le[~inside], ed[~inside], ac[~inside], chance)
                le, ed, ac = le[inside], ed[inside], ac[inside]
            self._live_batch(le, ed, ac, chance)

    def _chance_edges(self, envs: np.ndarray) -> tuple:
        """Outcome positions and actions of ``envs`` at chance nodes, one uniform draw each (in ``envs`` order)."""
        if self.chance_keys is None:
            u = self.rng.random(envs.size)
        else:
            u = self.chance_keys.uniform(envs, self._episode[envs], self._draws[envs])
            self._draws[envs] += 1
        live = self._is_live[envs]
        edges = np.empty(envs.size, dtype=np.int64)
        actions = np.empty(envs.size, dtype=np.int64)
        if not live.all():
            c, cn = self._cache, self._node[envs[~live]]
            e = (c.cdf[cn] <= u[~live, None]).sum(axis=1)
            edges[~live], actions[~live] = e, c.outcomes[cn, e]
        for j in np.flatnonzero(live).tolist():
            outcomes = self._live[int(envs[j])].chance_outcomes()
            e = bisect.bisect_right(_cdf([p for _, p in outcomes]), u[j])
            edges[j], actions[j] = e, outcomes[e][0]
        return edges, actions

    def _settle(self, envs: np.ndarray, done: np.ndarray, returns: np.ndarray, fresh: bool) -> None:
        """Play chance and restart finished episodes until every env in ``envs`` is at a decision.

        ``fresh``: the envs have just been restarted (no decision yet in their episode).
        """
        restarted = np.full(envs.size, fresh)
        active = np.flatnonzero(self._kind[envs] != _DECISION)
        while active.size:
            kind = self._kind[envs[active]]
            term = active[kind == _TERMINAL]
            if term.size:
                if restarted[term].any():
                    raise ValueError(f"an episode of {self.game} ended without any decision; the environment "
                                     "needs at least one decision per episode.")
                e = envs[term]
                live = self._is_live[e]
                rets = self._live_returns[e]
                if not live.all():
                    rets[~live] = self._cache.returns[self._node[e[~live]]]
                done[term], returns[term], restarted[term] = True, rets, True
                self._restart(e)
                kind = self._kind[envs[active]]
            chance = active[kind == _CHANCE]
            if chance.size:
                e = envs[chance]
                self._move(e, *self._chance_edges(e), chance=True)
            active = active[self._kind[envs[active]] != _DECISION]

    def _observe(self, envs: np.ndarray, done: np.ndarray, returns: np.ndarray) -> EnvStep:
        live = self._is_live[envs]
        if not live.any():
            node = self._node[envs]
            c = self._cache
            obs, mask, player = c.obs[node], c.mask[node], c.actor[node]
        else:
            buffers = self._observers.buffers
            if live.all():
                obs = np.concatenate([buffers[i] for i in envs.tolist()]).reshape(envs.size, self.obs_dim)
            else:
                obs = np.empty((envs.size, self.obs_dim), dtype=np.float32)
                obs[live] = np.concatenate([buffers[i] for i in envs[live].tolist()]).reshape(-1, self.obs_dim)
            mask, player = self._mask[envs], self._player[envs]
            if not live.all():
                node = self._node[envs[~live]]
                obs[~live], mask[~live], player[~live] = self._cache.obs[node], self._cache.mask[node], \
                    self._cache.actor[node]
        return EnvStep(envs=envs.copy(), player=player, obs=obs, mask=mask, done=done, returns=returns,
                       episode=self._episode[envs])

    # ------------------------------------------------------------------------- the API
    def reset(self, rng=None) -> EnvStep:
        """Start a new episode in every env; ``rng`` (a generator or an int seed) replaces the env's generator.

        Examples
        --------
        >>> from games.environment import make_env
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
        >>> from games.environment import make_env
        >>> env = make_env("kuhn_poker", num_envs=4, rng=0)
        >>> s = env.reset()
        >>> s = env.step([0, 2], [0, 0])       # only envs 0 and 2 move; the others still wait
        >>> s.envs.tolist(), s.player.tolist()
        ([0, 2], [1, 1])
        """
        if not self._started:
            raise ValueError("call reset() before step().")
        envs, actions = self._check_step(envs, actions)
        self._move(envs, actions, actions, chance=False)
        done = np.zeros(envs.size, dtype=bool)
        returns = np.zeros((envs.size, self.num_players))
        self._settle(envs, done, returns, fresh=False)
        return self._observe(envs, done, returns)

    def _check_step(self, envs, actions) -> tuple:
        def legal(envs, actions):
            live = self._is_live[envs]
            out = self._mask[envs, actions]
            if not live.all():
                out[~live] = self._cache.mask[self._node[envs[~live]], actions[~live]]
            return out

        return check_step(envs, actions, self.num_envs, self.num_actions, legal)

    # ------------------------------------------------------------------------- states, for tabular policies
    def states(self, envs) -> list:
        """The pyspiel states of ``envs`` now, for policies that read states (e.g. tabular ones); do not modify them.

        At a simultaneous node the state is the node's state, without the
        pending choices of the seats that have chosen. Envs inside the cache
        rebuild their state by replaying their history.

        Examples
        --------
        >>> from games.environment import make_env
        >>> env = make_env("kuhn_poker", num_envs=2, rng=0)
        >>> _ = env.reset()
        >>> [len(s.history()) for s in env.states([0, 1])]   # both cards dealt
        [2, 2]
        """
        out = []
        for i in np.asarray(envs, dtype=np.int64).tolist():
            out.append(self._live[i] if self._is_live[i] else self._replay(int(self._node[i]))[0])
        return out

    def infostate_keys(self, envs) -> list:
        """The information-state string of the acting seat in each of ``envs`` (cached per history node).

        Examples
        --------
        >>> from games.environment import make_env
        >>> env = make_env("kuhn_poker", num_envs=1, rng=3)
        >>> _ = env.reset()
        >>> env.infostate_keys([0])[0] in ("0", "1", "2")   # player 0 knows only its card
        True
        """
        out = []
        for i in np.asarray(envs, dtype=np.int64).tolist():
            if self._is_live[i]:
                out.append(self._live[i].information_state_string(int(self._player[i])))
                continue
            n = int(self._node[i])
            key = self._cache.keys.get(n)
            if key is None:
                key = self._cache.keys[n] = self._replay(n)[0].information_state_string(int(self._cache.actor[n]))
            out.append(key)
        return out
