"""The environment of a learned best response: one learner against a fixed mixture of opponents.

The learner sits in seat ``player`` of a game. Everything else (chance and the
other seats) is part of the environment: at the start of each episode an
opponent profile is drawn from an :class:`OpponentMixture`, and its policies
play the other seats until the learner has to move again or the game ends. The
only reward is the learner's return at the end of the game.

:class:`VectorEnv` steps ``num_envs`` such games side by side on
:func:`games.environment.make_env`, so that the learner's network sees one batch
per step; finished games restart at once (the observation returned for them is
the first one of the next episode). Chance moves of the batch are drawn
together, and the opponents act in batches: all the games waiting on the same
opponent policy get one :func:`batch_probabilities` call. Opponents may be
neural policies (``probabilities_np``), :class:`UniformPolicy`, or
:class:`TabularStatePolicy` tables looked up by information-state string (the
acting protocol, :mod:`psro.policies.acting`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from games.validation import is_integer
from psro.deprecation import moved_names
from psro.oracles.learned.observation_table import ObservationTablePolicy, TableStack
from psro.policies.acting import TabularStatePolicy, batch_probabilities, policy_input
from psro.sequence_form.game_tree import PlayerInfostates

__all__ = ["EpisodeStats", "Intermediate", "OpponentMixture", "PolicyBank", "Step", "VectorEnv", "play_episodes",
           "sample_actions", "sample_rows"]


@dataclass(frozen=True, eq=False)
class OpponentMixture:
    """A distribution over profiles of the other players' policies.

    Attributes
    ----------
    profiles : tuple of tuple
        Each profile has one :class:`StatePolicy` per seat (``None`` at the
        learner's seat and wherever it is never needed).
    weights : ndarray
        A probability vector, one entry per profile.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> u = TabularStatePolicy(uniform_policy(tree.infostates[1]), tree.infostates[1])
    >>> OpponentMixture.single([None, u]).weights.tolist()
    [1.0]
    """

    profiles: tuple
    weights: np.ndarray

    def __post_init__(self):
        w = np.asarray(self.weights, dtype=np.float64).reshape(-1)
        if len(self.profiles) != w.size or w.size == 0:
            raise ValueError(f"weights needs one entry per profile ({len(self.profiles)}); got {w.size}.")
        if not np.all(np.isfinite(w)) or np.any(w < 0) or not math.isclose(w.sum(), 1.0, abs_tol=1e-6):
            raise ValueError("weights must be a probability vector (non-negative, summing to one).")
        object.__setattr__(self, "profiles", tuple(tuple(p) for p in self.profiles))
        object.__setattr__(self, "weights", w / w.sum())
        object.__setattr__(self, "_cumulative", np.cumsum(self.weights))

    @classmethod
    def single(cls, profile: Sequence) -> OpponentMixture:
        """One fixed profile, e.g. the aggregated behaviour policies of a meta-strategy.

        Examples
        --------
        See :class:`OpponentMixture`.
        """
        return cls((tuple(profile),), np.ones(1))

    @classmethod
    def from_populations(cls, player: int, populations: Sequence, marginals: Sequence,
                         infostates: Sequence[PlayerInfostates]) -> OpponentMixture:
        """Independent mixtures over tabular populations ``(k_q, I_q, A)``: one profile per joint support point.

        Examples
        --------
        >>> import pyspiel
        >>> from psro.sequence_form.game_tree import build_game_tree
        >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
        >>> pure = np.zeros((2, 6, 2)); pure[0, :, 0] = 1; pure[1, :, 1] = 1
        >>> mix = OpponentMixture.from_populations(0, [None, pure], [None, [0.25, 0.75]], tree.infostates)
        >>> len(mix.profiles), mix.weights.tolist()
        (2, [0.25, 0.75])
        """
        n = len(infostates)
        if len(populations) != n or len(marginals) != n:
            raise ValueError(f"populations and marginals need one entry per player ({n}).")
        seats = []
        for q in range(n):
            if q == player:
                seats.append([(None, 1.0)])
                continue
            w = np.asarray(marginals[q], dtype=np.float64)
            pols = np.asarray(populations[q], dtype=np.float64)
            if pols.ndim != 3 or w.shape != (pols.shape[0],):
                raise ValueError(f"marginals[{q}] must have one weight per policy of populations[{q}] "
                                 f"({pols.shape[0] if pols.ndim == 3 else '?'}); got shape {w.shape}.")
            seats.append([(TabularStatePolicy(pols[i], infostates[q]), w[i]) for i in np.flatnonzero(w > 0)])
        profiles, weights = [()], [1.0]
        for seat in seats:
            profiles = [prof + (pol,) for prof in profiles for pol, _ in seat]
            weights = [wt * w for wt in weights for _, w in seat]
        return cls(tuple(profiles), np.array(weights) / np.sum(weights))

    def sample(self, rng: np.random.Generator) -> int:
        """Index of a profile drawn with probability ``weights``."""
        return int(self.sample_many(rng, 1)[0])

    def sample_many(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Indices of ``n`` profiles drawn independently with probability ``weights`` (the same draws as ``n``
        calls of :meth:`sample`: one uniform number each, none when there is one profile).

        Examples
        --------
        >>> mix = OpponentMixture(((None, 1), (None, 2)), np.array([0.25, 0.75]))
        >>> a, b = np.random.default_rng(3), np.random.default_rng(3)
        >>> mix.sample_many(a, 4).tolist() == [mix.sample(b) for _ in range(4)]
        True
        """
        if len(self.profiles) == 1:
            return np.zeros(n, dtype=np.int64)
        index = np.searchsorted(self._cumulative, rng.random(n), side="right")
        return np.minimum(index, len(self.profiles) - 1)


@dataclass(frozen=True, eq=False)
class Step:
    """What :meth:`VectorEnv.step` returns, one row per game.

    Attributes
    ----------
    obs : ndarray, float32, shape (num_envs, obs_dim)
        The learner's next observation (of the new episode where ``done``).
    mask : ndarray of bool, shape (num_envs, num_actions)
        Its legal actions.
    reward : ndarray, float32, shape (num_envs,)
        The learner's return where the game just ended, 0 elsewhere.
    done : ndarray of bool, shape (num_envs,)
    """

    obs: np.ndarray
    mask: np.ndarray
    reward: np.ndarray
    done: np.ndarray


def sample_rows(probs: np.ndarray, mask: np.ndarray, u: np.ndarray) -> np.ndarray:
    """One legal action per row of ``probs``, drawn with the uniform numbers ``u`` (illegal mass ignored).

    Examples
    --------
    >>> sample_rows(np.array([[0.5, 0.5], [0.0, 1.0]]), np.ones((2, 2), bool), np.array([0.7, 0.1])).tolist()
    [1, 1]
    """
    p = np.where(mask, probs, 0.0)
    cdf = np.cumsum(p, axis=1)
    total = cdf[:, -1]
    if not np.all(np.isfinite(cdf)) or np.any(p < 0) or np.any(total <= 0):
        j = int(np.flatnonzero(~np.isfinite(total) | (total <= 0) | (p < 0).any(axis=1))[0])
        raise ValueError(f"a policy gave row {j} no usable probability on its legal actions "
                         f"({probs[j].tolist()} with mask {mask[j].tolist()}).")
    idx = (cdf <= (u * total)[:, None]).sum(axis=1)
    last = p.shape[1] - 1 - np.argmax((p > 0)[:, ::-1], axis=1)   # the last action with mass (round-off guard)
    return np.minimum(idx, last)


class PolicyBank(Sequence):
    """The policies of a batch of games, fixed for their whole play: the tables among them (sharing one layout)
    answer as one :class:`~psro.oracles.learned.observation_table.TableStack` (one search a step, not one per
    member).

    Examples
    --------
    >>> table = ObservationTablePolicy(np.eye(2), np.ones((2, 2)))
    >>> from psro.policies.acting import UniformPolicy
    >>> bank = PolicyBank([UniformPolicy(2), table, table])
    >>> len(bank), bank.slot.tolist()
    (3, [-1, 0, 1])
    """

    def __init__(self, policies: Sequence):
        self.policies = tuple(policies)
        tables = [k for k, p in enumerate(self.policies) if isinstance(p, ObservationTablePolicy)]
        self.slot = np.full(len(self.policies), -1, dtype=np.int64)
        self.stack = None
        if len(tables) > 1 and len({self.policies[k].layout for k in tables}) == 1:
            self.stack = TableStack([self.policies[k] for k in tables])
            self.slot[tables] = np.arange(len(tables))

    def __len__(self) -> int:
        return len(self.policies)

    def __getitem__(self, k):
        return self.policies[k]


def sample_actions(env, step, policy_index: np.ndarray, policies: Sequence, rng: np.random.Generator,
                   u: np.ndarray | None = None) -> np.ndarray:
    """Actions for the rows of ``step`` (an :class:`games.environment.EnvStep`), row ``j`` played by
    ``policies[policy_index[j]]``; every distinct policy is asked once, for all its rows together (and the
    tables of a :class:`PolicyBank` once in all). Each row's action is drawn with a uniform number from ``rng``,
    or ``u[j]`` where given (:func:`sample_rows`).

    Examples
    --------
    >>> from games.environment import make_env
    >>> env = make_env("kuhn_poker", num_envs=3, rng=0)
    >>> s = env.reset()
    >>> from psro.policies.acting import UniformPolicy
    >>> sample_actions(env, s, np.zeros(3, np.int64), [UniformPolicy(2)], np.random.default_rng(0)).shape
    (3,)
    """
    policy_index = np.asarray(policy_index, dtype=np.int64)
    b = policy_index.size
    probs = np.empty((b, step.mask.shape[1]))
    if b == 0:
        return np.zeros(0, dtype=np.int64)
    rest = np.arange(b)
    if isinstance(policies, PolicyBank) and policies.stack is not None:
        slot = policies.slot[policy_index]
        stacked = slot >= 0
        if stacked.any():
            probs[stacked] = policies.stack.probabilities_np(slot[stacked], step.obs[stacked], step.mask[stacked])
            rest = np.flatnonzero(~stacked)
    groups, inverse = np.unique(policy_index[rest], return_inverse=True)
    for g, k in enumerate(groups.tolist()):
        rows = rest[inverse == g] if groups.size > 1 else rest
        policy = policies[k]
        kind = policy_input(policy)
        _check_env_serves(env, policy, kind)
        keys = env.infostate_keys(step.envs[rows]) if kind == "keys" else None
        states = env.states(step.envs[rows]) if kind == "states" else None
        probs[rows] = batch_probabilities(policy, step.obs[rows], step.mask[rows], keys=keys, states=states,
                                          players=step.player[rows])
    return sample_rows(probs, step.mask, rng.random(b) if u is None else u)


def _check_env_serves(env, policy, kind: str) -> None:
    """``ValueError`` when ``policy`` needs states or information-state strings that ``env`` cannot give."""
    if (kind == "keys" and not hasattr(env, "infostate_keys")) or (kind == "states" and not hasattr(env, "states")):
        raise ValueError(f"{type(policy).__name__} acts on game states, which {type(env).__name__} does not have "
                         "(e.g. a PettingZoo environment); use a policy that acts on observations (neural, "
                         "UniformPolicy).")


class VectorEnv:
    """``num_envs`` games where the learner in seat ``player`` meets opponents drawn from a mixture.

    It runs on :func:`games.environment.make_env`: chance and the opponents
    move as batches, and all the envs waiting on the same opponent policy get
    one :func:`batch_probabilities` call. An opponent profile is drawn for
    every new episode of an env.

    Parameters
    ----------
    game : pyspiel.Game, str or a PettingZoo adapter
        Anything :func:`games.environment.make_env` accepts.
    player : int
        The learner's seat.
    opponents : OpponentMixture
    num_envs : int
    rng : numpy.random.Generator or int
        Drives chance, the opponents' actions and the profile draws (a
        generator is shared with the caller).
    **env_options
        Passed to :func:`games.environment.make_env` (e.g. ``cache_bytes``).

    Examples
    --------
    >>> import pyspiel
    >>> from psro.policies.acting import UniformPolicy
    >>> opp = OpponentMixture.single([None, UniformPolicy(2)])
    >>> env = VectorEnv(pyspiel.load_game("kuhn_poker"), 0, opp, num_envs=4, rng=0)
    >>> obs, mask = env.reset()
    >>> obs.shape, mask.tolist()[0]
    ((4, 11), [True, True])
    >>> step = env.step(np.ones(4, dtype=np.int64))   # everyone bets
    >>> step.reward.shape, step.done.dtype
    ((4,), dtype('bool'))
    """

    def __init__(self, game, player: int, opponents: OpponentMixture, num_envs: int = 16, rng=None,
                 **env_options):
        from games.environment import make_env

        if not is_integer(num_envs) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int; got {num_envs!r}.")
        if not isinstance(opponents, OpponentMixture):
            raise TypeError(f"opponents must be an OpponentMixture; got {type(opponents).__name__}.")
        self.rng = np.random.default_rng(rng)
        self.env = make_env(game, int(num_envs), rng=self.rng, **env_options)
        self.game = getattr(self.env, "game", game)
        n = self.env.num_players
        if not is_integer(player) or not 0 <= player < n:
            raise ValueError(f"player must be in [0, {n}); got {player}.")
        self.player, self.opponents = int(player), opponents
        self.num_envs = int(num_envs)
        self.obs_dim, self.num_actions = self.env.obs_dim, self.env.num_actions
        # the distinct opponent policies, and which one plays seat q in profile k
        self._policies: list = []
        seen: dict = {}
        self._table = np.full((len(opponents.profiles), n), -1, dtype=np.int64)
        for k, prof in enumerate(opponents.profiles):
            if len(prof) != n:
                raise ValueError(f"opponents.profiles[{k}] needs one entry per seat ({n}).")
            for q, policy in enumerate(prof):
                if q == self.player or policy is None:
                    continue
                _check_env_serves(self.env, policy, policy_input(policy))   # now rather than at the first move
                if id(policy) not in seen:
                    seen[id(policy)] = len(self._policies)
                    self._policies.append(policy)
                self._table[k, q] = seen[id(policy)]
        self._policies = PolicyBank(self._policies)
        self._profile = np.zeros(self.num_envs, dtype=np.int64)
        self._drawn = np.full(self.num_envs, -1, dtype=np.int64)   # the episode each profile was drawn for
        self._acted = np.zeros(self.num_envs, dtype=bool)          # the learner moved in the current episode
        self._obs = np.zeros((self.num_envs, self.obs_dim), dtype=np.float32)
        self._mask = np.zeros((self.num_envs, self.num_actions), dtype=bool)
        self.episode_returns: list = []   # returns of finished episodes, in the order they ended
        self.episode_envs: list = []      # the game each of them was played in
        self.record_intermediate = False  # step() keeps the decision right after the learner's move
        self.intermediate: Intermediate | None = None

    def _play_out(self, s, reward: np.ndarray, done: np.ndarray) -> None:
        """Play the opponents of the envs in ``s`` until each waits on the learner."""
        me = self.player
        while True:
            if s.done.any():
                ended = np.flatnonzero(s.done)
                envs, rets = s.envs[ended], s.returns[ended, me].astype(np.float64)
                self.episode_returns.extend(rets.tolist())
                self.episode_envs.extend(envs.tolist())
                acted = self._acted[envs]
                reward[envs[acted]], done[envs[acted]], self._acted[envs] = rets[acted], True, False
            new = np.flatnonzero(s.episode != self._drawn[s.envs])
            if new.size:
                envs = s.envs[new]
                self._profile[envs] = self.opponents.sample_many(self.rng, new.size)
                self._drawn[envs] = s.episode[new]
            mine = s.player == me
            self._obs[s.envs[mine]] = s.obs[mine]
            self._mask[s.envs[mine]] = s.mask[mine]
            if mine.all():
                return
            rows = np.flatnonzero(~mine)
            sub = type(s)(envs=s.envs[rows], player=s.player[rows], obs=s.obs[rows], mask=s.mask[rows],
                          done=s.done[rows], returns=s.returns[rows], episode=s.episode[rows])
            index = self._table[self._profile[sub.envs], sub.player]
            if np.any(index < 0):
                q = int(sub.player[np.flatnonzero(index < 0)[0]])
                raise ValueError(f"the opponent profile has no policy for seat {q}.")
            s = self.env.step(sub.envs, sample_actions(self.env, sub, index, self._policies, self.rng))

    # ----------------------------------------------------------------- the API
    def reset(self) -> tuple:
        """Start a new episode in every game; return ``(obs, mask)``."""
        s = self.env.reset()
        self._acted[:] = False
        self._drawn[:] = -1
        scratch = np.zeros(self.num_envs)
        self._play_out(s, scratch, np.zeros(self.num_envs, dtype=bool))
        return self._obs.copy(), self._mask.copy()

    def step(self, actions) -> Step:
        """Apply one learner action per game, play on to the learner's next turn, restart finished games."""
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},); got {actions.shape}.")
        s = self.env.step(np.arange(self.num_envs), actions.astype(np.int64))
        if self.record_intermediate:
            self.intermediate = Intermediate.of(s, self.num_envs, self.player)
        self._acted[:] = True
        reward = np.zeros(self.num_envs, dtype=np.float32)
        done = np.zeros(self.num_envs, dtype=bool)
        self._play_out(s, reward, done)
        return Step(self._obs.copy(), self._mask.copy(), reward, done)


@dataclass(frozen=True, eq=False)
class Intermediate:
    """The decision right after the learner's move, before the opponents play on (``VectorEnv.intermediate``
    when ``record_intermediate`` is set): one row per game.

    Attributes
    ----------
    valid : ndarray of bool, shape (num_envs,)
        An opponent must act there (False where the game ended with the learner's move, or the learner moves
        again).
    player : ndarray of int64
        The opponent seat that acts (-1 where not valid).
    obs : ndarray, float32, shape (num_envs, obs_dim)
        That seat's observation (zeros where not valid).
    mask : ndarray of bool, shape (num_envs, num_actions)
        Its legal actions (all True where not valid, so a masked ``max`` stays finite).

    Examples
    --------
    >>> import pyspiel
    >>> from psro.policies.acting import UniformPolicy
    >>> env = VectorEnv(pyspiel.load_game("kuhn_poker"), 0, OpponentMixture.single([None, UniformPolicy(2)]),
    ...                 num_envs=2, rng=0)
    >>> env.record_intermediate = True
    >>> _ = env.reset(); _ = env.step(np.array([0, 1]))   # pass, bet: player 1 acts next in both
    >>> env.intermediate.valid.tolist(), env.intermediate.player.tolist(), env.intermediate.obs.shape
    ([True, True], [1, 1], (2, 11))
    """

    valid: np.ndarray
    player: np.ndarray
    obs: np.ndarray
    mask: np.ndarray

    @classmethod
    def of(cls, s, num_envs: int, learner: int) -> Intermediate:
        """The rows of ``s`` (a :class:`games.environment.EnvStep` of all games) where an opponent acts next."""
        here = ~s.done & (s.player != learner)
        valid = np.zeros(num_envs, dtype=bool)
        player = np.full(num_envs, -1, dtype=np.int64)
        obs = np.zeros((num_envs, s.obs.shape[1]), dtype=np.float32)
        mask = np.ones((num_envs, s.mask.shape[1]), dtype=bool)
        envs = s.envs[here]
        valid[envs], player[envs], obs[envs], mask[envs] = True, s.player[here], s.obs[here], s.mask[here]
        return cls(valid, player, obs, mask)


@dataclass(frozen=True)
class EpisodeStats:
    """Mean return of a batch of evaluation episodes, with its standard error.

    Attributes
    ----------
    mean : float
    stderr : float
    episodes : int
    """

    mean: float
    stderr: float
    episodes: int


def play_episodes(env: VectorEnv, act, episodes: int) -> EpisodeStats:
    """Play ``episodes`` full episodes with ``act(obs, mask) -> actions`` and summarise the returns.

    Every game plays the same number of episodes and only its first ones
    count, so short episodes (which finish first) are not over-represented.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> opp = OpponentMixture.single([None, TabularStatePolicy(uniform_policy(tree.infostates[1]), tree.infostates[1])])
    >>> env = VectorEnv(tree.game, 0, opp, num_envs=8, rng=0)
    >>> stats = play_episodes(env, lambda obs, mask: mask.argmax(axis=1), 4000)   # always pass
    >>> abs(stats.mean - (-0.5)) < 4 * stats.stderr   # folds to the bets uniform makes half the time
    True
    """
    if episodes < 1:
        raise ValueError(f"episodes must be positive; got {episodes}.")
    quota = -(-episodes // env.num_envs)
    env.episode_returns, env.episode_envs = [], []
    counts = np.zeros(env.num_envs, dtype=np.int64)
    obs, mask = env.reset()
    seen = 0
    while counts.min() < quota:
        step = env.step(act(obs, mask))
        obs, mask = step.obs, step.mask
        np.add.at(counts, env.episode_envs[seen:], 1)
        seen = len(env.episode_envs)
    envs = np.asarray(env.episode_envs)
    rets = np.asarray(env.episode_returns, dtype=np.float64)
    # the first `quota` episodes of every game, in order
    rank = np.zeros(envs.size, dtype=np.int64)
    for i in range(env.num_envs):
        where = np.flatnonzero(envs == i)
        rank[where] = np.arange(where.size)
    returns = rets[rank < quota]
    episodes = returns.size
    env.episode_returns, env.episode_envs = [], []
    stderr = float(returns.std(ddof=1) / math.sqrt(episodes)) if episodes > 1 else math.nan
    return EpisodeStats(float(returns.mean()), stderr, episodes)


#: The names this module re-exported before, each resolved with a DeprecationWarning (CHANGELOG.md)
__getattr__ = moved_names(__name__, {
    "StatePolicy": "psro.policies.acting",
    "UniformPolicy": "psro.policies.acting",
})
