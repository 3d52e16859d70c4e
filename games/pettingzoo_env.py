"""PettingZoo AEC environments as games that :func:`games.environment.make_env` plays (optional extra).

:func:`from_pettingzoo` wraps an AEC environment (or a function that makes
one) with ``Discrete`` action spaces into a :class:`PettingZooGame`: its seats
are the environment's ``possible_agents`` in order, its observation is the
``"observation"`` entry of a dict observation (or a plain ``Box`` observation)
flattened to float32, and its legal actions come from the ``"action_mask"``
entry (or ``infos[agent]["action_mask"]``; without either, every action of the
agent's space is legal). :func:`games.environment.make_env` then gives each env
slot its own copy of the environment; the rewards of every step are summed per
agent into the episode's returns, and agents that are done are stepped with
``None`` until the episode ends, as the AEC protocol asks.

:func:`load_pettingzoo` turns a config string such as
``"pettingzoo:tictactoe_v3"`` into such a game. It only resolves modules of
PettingZoo's own environment families (``classic``, ``butterfly``, ``sisl``,
``mpe``, ``atari``); it never imports an arbitrary path.

A game knows its utility range (``min_utility()`` / ``max_utility()``, what the
sampled gaps' precision targets and ResponseGraphUCB's bounds are relative to)
where it is declared: ``utility_range=`` of :func:`from_pettingzoo`, or for
:func:`load_pettingzoo` without options, :data:`UTILITY_RANGES`.

PettingZoo is imported only inside the functions here (``pip install
psro-toolkit[pettingzoo]``).
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import math
import re

import numpy as np

from games.contracts import EnvStep
from games.validation import check_int

__all__ = ["FAMILIES", "UTILITY_RANGES", "PettingZooEnv", "PettingZooGame", "from_pettingzoo", "load_pettingzoo"]

#: PettingZoo's environment families that :func:`load_pettingzoo` looks in.
FAMILIES = ("classic", "butterfly", "sisl", "mpe", "atari")
#: The utility range of PettingZoo environments with their default options, from their rules: a player's episode
#: return lies in it, and both ends are reached. Limit hold'em (RLCard; returns are chips over the big blind of 2):
#: a player puts in at most 10 chips before the flop (the big blind and four raises of 2), 8 on the flop (four of
#: 2) and 16 on the turn and on the river (four of 4), 50 in all, which the other wins: +-25.
UTILITY_RANGES = {"texas_holdem_v4": (-25.0, 25.0), "tictactoe_v3": (-1.0, 1.0), "connect_four_v3": (-1.0, 1.0)}
_SPEC = re.compile(r"^pettingzoo:(?:(?P<family>" + "|".join(FAMILIES) + r")[./])?(?P<name>[a-z][a-z0-9_]*_v[0-9]+)$")


def _space_size(space, what: str) -> int:
    """Flat size of a ``Box`` space (``what`` names it in errors)."""
    from gymnasium import spaces

    if isinstance(space, spaces.Box | spaces.MultiBinary):
        return int(math.prod(space.shape))
    if isinstance(space, spaces.Discrete):
        return 1
    raise ValueError(f"{what} is a {type(space).__name__} space; a flat Box observation (or a dict with a Box "
                     "'observation' entry) is needed.")


class PettingZooGame:
    """A PettingZoo AEC environment as a game: seats, action count, observation size, a name.

    Build it with :func:`from_pettingzoo` or :func:`load_pettingzoo`.

    Attributes
    ----------
    name : str
    agents : tuple of str
        The environment's ``possible_agents``: seat ``p`` is ``agents[p]``.
    num_players : int
    num_actions : int
        The largest ``Discrete`` action space (smaller ones are masked).
    obs_dim : int
        Length of the flat observation.
    utility_range : tuple of float or None
        ``(low, high)`` of a player's episode return where declared.

    Examples
    --------
    >>> from pettingzoo.classic import tictactoe_v3
    >>> game = from_pettingzoo(tictactoe_v3.env, utility_range=(-1, 1))
    >>> game.num_players, game.num_actions, game.obs_dim, game.agents
    (2, 9, 18, ('player_1', 'player_2'))
    >>> game.min_utility(), game.max_utility()
    (-1.0, 1.0)
    """

    def __init__(self, make, name: str, spec: str | None = None, utility_range=None):
        from gymnasium import spaces

        self._make, self.spec = make, spec
        self.utility_range = _check_utility_range(utility_range)
        template = make()
        agents = tuple(getattr(template, "possible_agents", ()) or ())
        if not agents:
            raise ValueError("env has no possible_agents; from_pettingzoo needs a PettingZoo AEC environment.")
        self.name = str(name)
        self.agents = agents
        self.num_players = len(agents)
        sizes, dims = [], []
        for agent in agents:
            act = template.action_space(agent)
            if not isinstance(act, spaces.Discrete):
                raise ValueError(f"the action space of agent {agent!r} is {act}, not Discrete; only discrete "
                                 "actions can be masked and sampled.")
            sizes.append(int(act.n))
            obs = template.observation_space(agent)
            if isinstance(obs, spaces.Dict):
                if "observation" not in obs.spaces:
                    raise ValueError(f"the observation space of agent {agent!r} is a Dict without an "
                                     f"'observation' entry ({sorted(obs.spaces)}).")
                dims.append(_space_size(obs.spaces["observation"], f"observation space of agent {agent!r}"))
            else:
                dims.append(_space_size(obs, f"observation space of agent {agent!r}"))
        if len(set(dims)) != 1:
            raise ValueError(f"the agents' observations have different sizes {dims}; one network needs one size.")
        self.num_actions = max(sizes)
        self.action_sizes = tuple(sizes)
        self.obs_dim = dims[0]

    def __repr__(self) -> str:
        return f"PettingZooGame({self.name!r}, players={self.num_players}, actions={self.num_actions})"

    def __str__(self) -> str:
        return self.spec or self.name

    def __reduce__(self):
        if self.spec is None:
            raise TypeError(f"{self!r} was built from an environment object and cannot be pickled; build it with "
                            "games.pettingzoo_env.load_pettingzoo('pettingzoo:<name>') to send it to workers.")
        return load_pettingzoo, (self.spec,)

    def min_utility(self) -> float:
        """The lowest episode return of a player (``RuntimeError`` where no range is declared)."""
        return self._declared_range()[0]

    def max_utility(self) -> float:
        """The highest episode return of a player (``RuntimeError`` where no range is declared)."""
        return self._declared_range()[1]

    def _declared_range(self) -> tuple:
        if self.utility_range is None:
            raise RuntimeError(f"{self.name} declares no utility range; pass utility_range=(low, high) to "
                               "from_pettingzoo.")
        return self.utility_range

    def new_env(self):
        """A fresh AEC environment (one per env slot)."""
        return self._make()

    def batched_env(self, num_envs: int, rng=None, **options) -> PettingZooEnv:
        """What :func:`games.environment.make_env` returns for this game (no options are known)."""
        if options:
            raise TypeError(f"PettingZoo games take no environment options; got {sorted(options)}.")
        return PettingZooEnv(self, num_envs, rng=rng)


def _check_utility_range(utility_range) -> tuple | None:
    if utility_range is None:
        return None
    try:
        low, high = (float(v) for v in utility_range)
    except (TypeError, ValueError):
        raise ValueError(f"utility_range must be (low, high), two numbers with low < high, or None; got "
                         f"{utility_range!r}.") from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"utility_range must be (low, high), two finite numbers with low < high; got "
                         f"{utility_range!r}.")
    return low, high


def from_pettingzoo(env, name: str | None = None, utility_range=None) -> PettingZooGame:
    """A PettingZoo AEC environment (with ``Discrete`` action spaces) as a game for :func:`games.make_env`.

    Parameters
    ----------
    env : pettingzoo.AECEnv or callable
        An environment (each env slot gets a deep copy of it) or a function
        with no arguments that makes one (e.g. ``tictactoe_v3.env``).
    name : str, optional
        Default: the environment's ``metadata["name"]``.
    utility_range : (float, float), optional
        The lowest and highest episode return of a player, where known (the
        game's ``min_utility()`` and ``max_utility()``).

    Raises
    ------
    ValueError
        For a non-discrete action space (naming it), observations of different
        sizes, an object that is not an AEC environment, or a ``utility_range``
        that is not two finite numbers with low < high.

    Examples
    --------
    >>> from pettingzoo.classic import tictactoe_v3
    >>> from games.environment import make_env
    >>> env = make_env(from_pettingzoo(tictactoe_v3.env()), num_envs=2, rng=0)
    >>> s = env.reset()
    >>> s.player.tolist(), s.obs.shape, bool(s.mask.all())
    ([0, 0], (2, 18), True)
    """
    if callable(env) and not hasattr(env, "possible_agents"):
        make = env
        probe = make()
    elif hasattr(env, "possible_agents") and hasattr(env, "step"):
        template = probe = env

        def make():
            return copy.deepcopy(template)
    else:
        raise ValueError(f"env must be a PettingZoo AEC environment or a function making one; got "
                         f"{type(env).__name__}.")
    _check_aec(probe)
    if name is None:
        name = (getattr(probe, "metadata", None) or {}).get("name", type(probe).__name__)
    return PettingZooGame(make, name, utility_range=utility_range)


def _check_aec(env) -> None:
    """Refuse a parallel environment (all agents act at once) before any job plays it."""
    try:
        from pettingzoo.utils.env import ParallelEnv
    except ImportError:  # without PettingZoo no env can be a parallel one
        return
    if isinstance(env, ParallelEnv):
        raise ValueError(
            f"env is a PettingZoo parallel environment ({type(env).__name__}); from_pettingzoo plays AEC "
            "environments, where one agent acts at a time. Wrap it first: "
            "from_pettingzoo(pettingzoo.utils.conversions.parallel_to_aec(env)), or pass the module's env() "
            "instead of its parallel_env()."
        )


def load_pettingzoo(spec: str, **kwargs) -> PettingZooGame:
    """The game of a config string ``"pettingzoo:<name>"`` or ``"pettingzoo:<family>.<name>"``.

    Only the modules ``pettingzoo.<family>.<name>`` of :data:`FAMILIES` are
    resolved, with ``name`` a versioned environment name such as
    ``tictactoe_v3``; ``kwargs`` go to the module's ``env()``. Without
    ``kwargs`` the game has the utility range :data:`UTILITY_RANGES` gives
    its name, if any (options may change the rules, and so the range).

    Raises
    ------
    ValueError
        For a string of another form, or a name no family has.

    Examples
    --------
    >>> load_pettingzoo("pettingzoo:tictactoe_v3").agents
    ('player_1', 'player_2')
    >>> load_pettingzoo("pettingzoo:texas_holdem_v4").utility_range
    (-25.0, 25.0)
    >>> load_pettingzoo("pettingzoo:os.system_v1")
    Traceback (most recent call last):
    ...
    ValueError: spec must look like 'pettingzoo:tictactoe_v3' or ... got 'pettingzoo:os.system_v1'.
    """
    match = _SPEC.match(spec) if isinstance(spec, str) else None
    if match is None:
        raise ValueError(f"spec must look like 'pettingzoo:tictactoe_v3' or 'pettingzoo:classic.tictactoe_v3' "
                         f"(families: {', '.join(FAMILIES)}); got {spec!r}.")
    if importlib.util.find_spec("pettingzoo") is None:
        raise ValueError("PettingZoo is not installed: pip install 'psro-toolkit[pettingzoo]'.")
    families = (match["family"],) if match["family"] else FAMILIES
    name = match["name"]
    import pettingzoo

    registry = getattr(pettingzoo, "aec_registry", None)
    base, version = name.rsplit("_v", 1)
    for family in families:
        if registry is not None:   # PettingZoo >= 1.27: its registry, entries of its own packages only
            env_id = f"{family}/{base}-v{version}"
            entry = registry.get(env_id) if hasattr(registry, "get") else None
            if entry is not None and str(getattr(entry, "entry_point", "")).startswith("pettingzoo."):
                def make(env_id=env_id):
                    return pettingzoo.make("aec", env_id, **kwargs)
                return PettingZooGame(make, name, spec=None if kwargs else f"pettingzoo:{family}.{name}",
                                      utility_range=None if kwargs else UTILITY_RANGES.get(name))
            continue
        module_name = f"pettingzoo.{family}.{name}"
        try:
            found = importlib.util.find_spec(module_name) is not None
        except ModuleNotFoundError:   # the family itself is not installed
            found = False
        if found:
            module = importlib.import_module(module_name)

            def make(module=module):
                return module.env(**kwargs)
            return PettingZooGame(make, name, spec=None if kwargs else f"pettingzoo:{family}.{name}",
                                      utility_range=None if kwargs else UTILITY_RANGES.get(name))
    raise ValueError(f"no PettingZoo environment {name!r} in {', '.join(families)}.")


def _in_place_reseed(raw):
    """A function that reseeds ``raw`` (an unwrapped PettingZoo env) in place, where its ``reset(seed=...)`` would
    rebuild it: PettingZoo's RLCard games (hold'em, Leduc, ...) make a new RLCard environment on every seeded reset,
    half of a reset's time; reseeding its generators in place and resetting without a seed deals the same cards
    (tested). None for every other environment.

    Examples
    --------
    >>> from pettingzoo.classic import texas_holdem_v4, tictactoe_v3
    >>> _in_place_reseed(texas_holdem_v4.raw_env()) is not None, _in_place_reseed(tictactoe_v3.raw_env())
    (True, None)
    """
    try:
        from pettingzoo.classic.rlcard_envs.rlcard_base import RLCardBase
    except ImportError:
        return None
    inner = getattr(raw, "env", None)
    if not isinstance(raw, RLCardBase) or not callable(getattr(inner, "seed", None)):
        return None
    return inner.seed


class PettingZooEnv:
    """``num_envs`` copies of a :class:`PettingZooGame` stepped as a batch (the :class:`games.environment.BatchedEnv`
    protocol); build it with :func:`games.environment.make_env`.

    Every episode is reset with a seed drawn from the env's generator, so a
    run is a pure function of that generator's seed (for environments whose
    randomness comes from ``reset(seed=...)``); with ``chance_keys`` set, a
    seed keyed by the episode (:mod:`games.keyed_chance`).

    Examples
    --------
    >>> from pettingzoo.classic import tictactoe_v3
    >>> from games.environment import make_env
    >>> env = make_env(from_pettingzoo(tictactoe_v3.env), num_envs=1, rng=0)
    >>> s = env.reset()
    >>> for a in [0, 3, 1, 4]:                 # player_1 takes 0 and 1, player_2 takes 3 and 4
    ...     s = env.step(s.envs, [a])
    >>> s = env.step(s.envs, [2])              # the top row: player_1 wins
    >>> s.done.tolist(), s.returns.tolist(), s.episode.tolist()
    ([True], [[1.0, -1.0]], [2])
    """

    def __init__(self, game: PettingZooGame, num_envs: int, rng=None):
        self.game = game
        self.num_envs = check_int(num_envs, "num_envs", minimum=1)
        self.num_players, self.num_actions, self.obs_dim = game.num_players, game.num_actions, game.obs_dim
        self.rng = np.random.default_rng(rng)
        self._seat = {agent: p for p, agent in enumerate(game.agents)}
        self._envs = [game.new_env() for _ in range(self.num_envs)]
        # attributes are read from the innermost env: each wrapper layer forwards them with a __getattr__ call
        self._raw = [getattr(env, "unwrapped", env) for env in self._envs]
        self._reseed = [_in_place_reseed(raw) for raw in self._raw]
        n = self.num_envs
        self._player = np.zeros(n, dtype=np.int64)
        self._obs = np.zeros((n, self.obs_dim), dtype=np.float32)
        self._mask = np.zeros((n, self.num_actions), dtype=bool)
        self._returns = np.zeros((n, self.num_players))
        self._episode = np.zeros(n, dtype=np.int64)
        self._started = False
        #: A :class:`games.keyed_chance.KeyedChance` (set before ``reset``): each episode's reset seed from it
        #: (paired episodes); None: from ``rng``
        self.chance_keys = None

    def __repr__(self) -> str:
        return f"PettingZooEnv({self.game.name!r}, num_envs={self.num_envs})"

    def _collect(self, i: int) -> None:
        env = self._raw[i]
        for agent, r in env.rewards.items():
            self._returns[i, self._seat[agent]] += r

    def _skip_done(self, i: int) -> bool:
        """Step agents that are done with ``None``; whether the episode is over."""
        env, raw = self._envs[i], self._raw[i]
        while raw.agents:
            agent = raw.agent_selection
            if not (raw.terminations.get(agent, False) or raw.truncations.get(agent, False)):
                return False
            env.step(None)
            self._collect(i)
        return True

    def _start(self, i: int) -> None:
        env = self._envs[i]
        self._episode[i] += 1
        seed = self.rng.integers(2**31) if self.chance_keys is None else \
            self.chance_keys.seeds(np.array([i]), self._episode[i:i + 1])[0]
        if self._reseed[i] is None:
            env.reset(seed=int(seed))
        else:   # (the same deals as reset(seed=...), which builds a new RLCard environment every episode)
            self._reseed[i](int(seed))
            env.reset()
        self._returns[i] = 0.0
        self._collect(i)
        if self._skip_done(i):
            raise ValueError(f"an episode of {self.game.name} ended without any decision; the environment needs "
                             "at least one decision per episode.")
        self._describe(i)

    def _describe(self, i: int) -> None:
        env, raw_env = self._envs[i], self._raw[i]
        agent = raw_env.agent_selection
        p = self._seat[agent]
        raw = env.observe(agent)
        mask = None
        if isinstance(raw, dict):
            mask = raw.get("action_mask")
            raw = raw["observation"]
        if mask is None:
            mask = (raw_env.infos.get(agent) or {}).get("action_mask")
        self._player[i] = p
        self._obs[i] = np.asarray(raw, dtype=np.float32).reshape(-1)
        self._mask[i] = False
        if mask is None:
            self._mask[i, : self.game.action_sizes[p]] = True
        else:
            mask = np.asarray(mask).reshape(-1).astype(bool)
            self._mask[i, : mask.size] = mask
        if not self._mask[i].any():
            raise ValueError(f"agent {agent!r} of {self.game.name} has no legal action.")

    def _rows(self, envs: np.ndarray, done: np.ndarray, returns: np.ndarray) -> EnvStep:
        return EnvStep(envs=envs.copy(), player=self._player[envs], obs=self._obs[envs], mask=self._mask[envs],
                       done=done, returns=returns, episode=self._episode[envs])

    def reset(self, rng=None) -> EnvStep:
        """Start a new episode in every env (``rng``: a generator or int seed replacing the env's own)."""
        if rng is not None:
            self.rng = np.random.default_rng(rng)
        for i in range(self.num_envs):
            self._start(i)
        self._started = True
        envs = np.arange(self.num_envs, dtype=np.int64)
        return self._rows(envs, np.zeros(self.num_envs, dtype=bool), np.zeros((self.num_envs, self.num_players)))

    def step(self, envs, actions) -> EnvStep:
        """Apply ``actions[j]`` in env ``envs[j]`` for the agent whose turn it is; restart finished episodes."""
        if not self._started:
            raise ValueError("call reset() before step().")
        envs, actions = np.asarray(envs), np.asarray(actions)
        if envs.ndim != 1 or actions.shape != envs.shape or not (
                envs.size == 0 or (np.issubdtype(envs.dtype, np.integer) and np.issubdtype(actions.dtype, np.integer))):
            raise ValueError(f"envs and actions must be 1-D int arrays of one length; got shapes {envs.shape}, "
                             f"{actions.shape}.")
        envs, actions = envs.astype(np.int64), actions.astype(np.int64)
        if envs.size and (envs.min() < 0 or envs.max() >= self.num_envs):
            raise ValueError(f"envs must lie in [0, {self.num_envs}); got {envs.min()}..{envs.max()}.")
        if envs.size and np.bincount(envs, minlength=self.num_envs).max() > 1:
            raise ValueError("envs must not repeat an env (one action per env and step).")
        bad = (actions < 0) | (actions >= self.num_actions)
        if not bad.any():
            bad = ~self._mask[envs, actions]
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise ValueError(f"actions[{j}] = {int(actions[j])} is not legal in env {int(envs[j])}; "
                             "choose from the env's mask.")
        done = np.zeros(envs.size, dtype=bool)
        returns = np.zeros((envs.size, self.num_players))
        for j, (i, a) in enumerate(zip(envs.tolist(), actions.tolist())):
            self._envs[i].step(a)
            self._collect(i)
            if self._skip_done(i):
                done[j], returns[j] = True, self._returns[i]
                self._start(i)
            else:
                self._describe(i)
        return self._rows(envs, done, returns)
