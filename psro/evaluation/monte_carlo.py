"""Sampled payoffs of policy profiles, registered as evaluator ``"monte_carlo"``.

:class:`MonteCarloEvaluator` estimates them from episodes, records counts,
sums and sums of squares in an :class:`~games.EmpiricalGame`, and can top up
samples adaptively (ResponseGraphUCB, or on a meta-strategy's support). Two
ways to play the episodes, chosen per call by what the populations hold:

* **tabular populations and a tree**: in lockstep over the flattened history
  tree (:mod:`psro.evaluation.sampled_play`), about a microsecond per episode;
* **policy objects** (neural networks, the uniform policy; no tree needed):
  on the batched environment (:func:`psro.evaluation.env_play.sample_profiles`),
  each profile's episodes with their own seed, so the estimates do not depend
  on the batching, the executor or the order of the profiles either.

The expected payoff of player ``p`` under a profile of tabular policies is
``sum_z c(z) u_p(z) prod_q x_q(sigma_q(z))`` over terminal histories ``z``,
where ``c`` is the chance probability, ``x_q`` player q's realization plan and
``sigma_q(z)`` its last sequence on the path to ``z``. For two players the sum
over terminals is a sparse bilinear form ``X_0 A_p X_1^T`` with
``A_p[s0, s1] = sum of c(z) u_p(z)`` over terminals that end both sequences,
so the payoffs of a whole block of profiles are two matrix products.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence

import numpy as np

from games.empirical import EmpiricalGame
from games.executors import make_executor
from games.memory_limit import check_memory
from games.validation import is_integer
from psro.evaluation.base import EvaluationBatch, block_done, register_evaluator
from psro.evaluation.sampled_play import ProfileSampler, SampleStatistics, build_play_tree
from psro.evaluation.top_up import (
    _TOP_UP_KEY,
    TOP_UP_METHODS,
    TOP_UP_PROFILES_PER_ROUND,
    TopUpProgress,
    _as_joint,
    _check_top_up_game,
    _support_allocation,
    support_weights,
)
from psro.sequence_form.game_tree import GameTree, build_game_tree

__all__ = ["EnvProfileSampler", "MonteCarloEvaluator", "check_episode_budget"]

logger = logging.getLogger(__name__)


def check_episode_budget(field: str, episodes: int, episodes_per_task: int = 20_000) -> None:
    """Refuse ``episodes`` (the value of ``field``: ``episodes_per_profile``, ``top_up_episodes``) whose Monte Carlo
    task table (a row of about 16 int64 per ``episodes_per_task`` episodes) would pass the memory limit, before the
    run allocates it.

    Examples
    --------
    >>> check_episode_budget("episodes_per_profile", 1000)
    >>> check_episode_budget("episodes_per_profile", 10**15)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    games.memory_limit.MemoryLimitExceeded: episodes_per_profile=1000000000000000 needs about ...
    """
    if not is_integer(episodes) or not is_integer(episodes_per_task) or episodes_per_task < 1:
        return   # (their own checks name them)
    pieces = -(-int(episodes) // int(episodes_per_task))
    check_memory(pieces * 16 * 8, f"{field}={int(episodes)}",
                 "Ask for fewer episodes (the table holds 128 bytes per episodes_per_task episodes).")


class EnvProfileSampler:
    """Episodes of pure profiles over populations of policy objects, on the batched environment; picklable.

    The counterpart of :class:`psro.evaluation.sampled_play.ProfileSampler`
    for populations that act on observations: called with segments (rows
    ``(profile..., start, count)``) it plays ``count`` episodes of each
    profile with :func:`psro.evaluation.env_play.sample_profiles`, whose
    stream is fixed by ``(seed, profile, start)``. Pickled (for a worker
    process), its networks travel as plain arrays
    (:class:`psro.oracles.learned.networks.NeuralPolicy` pickles so).

    Parameters
    ----------
    game : pyspiel.Game, str or environment game
    populations : sequence of sequence
        ``populations[p][i]``: player p's policy i.
    seed : int
    num_envs : int
        Episodes of one profile played side by side.
    keyed : bool
        Every random number keyed by profile, episode and draw, the profiles of a task played in one batch
        (:func:`psro.evaluation.env_play.sample_profiles`).

    Examples
    --------
    >>> from psro.policies import UniformPolicy
    >>> sampler = EnvProfileSampler("kuhn_poker", [[UniformPolicy(2)], [UniformPolicy(2)]], seed=0)
    >>> stats = sampler(np.array([[0, 0, 0, 4000]]))
    >>> int(stats.count[0]), bool(abs(stats.total[0, 0] / 4000 - 0.125) < 0.05)   # uniform vs uniform: 1/8
    (4000, True)
    """

    def __init__(self, game, populations, seed: int, num_envs: int = 64, keyed: bool = False):
        self.game = game
        self.populations = [list(pop) for pop in populations]
        self.shape = tuple(len(pop) for pop in self.populations)
        self.seed = int(seed)
        self.num_envs = int(num_envs)
        self.keyed = bool(keyed)

    def __call__(self, segments: np.ndarray) -> SampleStatistics:
        from psro.evaluation.env_play import sample_profiles

        segments = np.asarray(segments, dtype=np.int64).reshape(-1, len(self.shape) + 2)
        n = len(self.shape)
        count, total, total_sq = sample_profiles(self.game, self.populations, segments[:, :n], segments[:, -1],
                                                 self.seed, starts=segments[:, n], num_envs=self.num_envs,
                                                 keyed=self.keyed)
        return SampleStatistics(count=count[:, 0].astype(np.int64), total=total, total_sq=total_sq)

    def episodes(self, strategies: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Returns of one episode per row of ``strategies`` ``(E, num_players)``; the episodes of each distinct
        profile come from one stream seeded by ``rng`` (drawn in the order the profiles first appear)."""
        from psro.evaluation.env_play import sample_returns

        strategies = np.asarray(strategies, dtype=np.int64)
        out = np.empty(strategies.shape, dtype=np.float64)
        distinct, first, inverse = np.unique(strategies, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        for g in np.argsort(first, kind="stable").tolist():
            rows = np.flatnonzero(inverse == g)
            profile = [self.populations[p][i] for p, i in enumerate(distinct[g].tolist())]
            seed = int(rng.integers(2 ** 63))
            out[rows] = sample_returns(self.game, profile, len(rows), seed, num_envs=self.num_envs)
        return out


class _EpisodeDrawer:
    """The sampler interface of :mod:`ranking.samplers` over either sampler: one episode per flat profile index."""

    binary = False

    def __init__(self, sampler, payoff_range):
        self.sampler = sampler
        self.shape = sampler.shape
        self.payoff_range = payoff_range

    def draw(self, profiles: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        strategies = np.stack(np.unravel_index(np.asarray(profiles, dtype=np.int64), self.shape), axis=1)
        if isinstance(self.sampler, EnvProfileSampler):
            return self.sampler.episodes(strategies, rng)
        return self.sampler.play(strategies, rng.random((self.sampler.max_depth, len(profiles))))


def _tabular(populations) -> bool:
    return all(isinstance(pop.policies, np.ndarray) for pop in populations)


@register_evaluator("monte_carlo", sampled=True, needs_tree=False, top_up=True)
class MonteCarloEvaluator:
    """Estimated payoffs of profiles of policies, from sampled episodes.

    With tabular populations and a tree, every episode of a profile samples
    chance from its probabilities and each player's action from its policy
    row at the current infostate; the episodes of many profiles run together
    over the flat history tree
    (:class:`psro.evaluation.sampled_play.ProfileSampler`), about a microsecond per
    episode in numpy. With populations of policy objects (neural networks,
    :class:`psro.policies.acting.UniformPolicy`), with or without a tree,
    the episodes are played on the batched environment
    (:class:`EnvProfileSampler`). Either way the work is cut into tasks of at
    most ``episodes_per_task`` episodes, run through ``executor``, and each
    segment of episodes of a profile draws from its own generator (keyed by
    the profile and its first episode's number), so the estimates do not
    depend on the executor, the number of workers or the batching.

    Parameters
    ----------
    tree : GameTree, pyspiel.Game or None
        The game (its tree is built when a pyspiel game is given); None: no
        tree, give ``game`` (populations of policy objects only).
    episodes_per_profile : int
        Episodes per profile that :meth:`evaluate` brings every profile up to.
    executor : Executor, str, int or dict, optional
        Anything :func:`games.executors.make_executor` accepts (default: serial).
    seed : int
        Root seed of all episode streams.
    episodes_per_task : int
        Most episodes in one executor task (a profile with more is split).
    tasks_per_batch : int
        Tasks per batch; after each batch the statistics are stored and ``on_batch`` runs.
    game : pyspiel.Game, str or environment game, optional
        The game to play without a tree (default ``tree.game``).
    num_envs : int
        Episodes of one profile played side by side on the environment.
    keyed : bool
        Populations of policy objects only: every random number of an episode keyed by ``(seed, profile,
        episode)``, so the profiles of a task batch are played side by side in one environment (where profiles
        are many and episodes short: the meta-game of a 600-s PSRO run on phantom tic-tac-toe, 128 episodes a
        profile, took 170-180 s of it instead of 324-332 s); the estimates then do not depend on ``num_envs``,
        ``episodes_per_task`` or ``tasks_per_batch``. Different episodes from the default (False) streams.

    Examples
    --------
    >>> import pyspiel
    >>> from games import EmpiricalGame
    >>> from psro.policies import uniform_policy
    >>> from psro.policies.population import Population, Provenance
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> pops = [Population(i) for i in tree.infostates]
    >>> _ = [p.add(uniform_policy(p.infostates), Provenance(0, "initial")) for p in pops]
    >>> mc = MonteCarloEvaluator(tree, episodes_per_profile=20000, seed=0)
    >>> meta = EmpiricalGame((1, 1))
    >>> means = mc.evaluate(pops, [range(1), range(1)], meta_game=meta)
    >>> int(meta.count[0, 0, 0]), bool(abs(means[0, 0, 0] - 0.125) < 0.05)   # exact value: 1/8
    (20000, True)

    Without a tree, on populations of policy objects:

    >>> from psro.policies import UniformPolicy
    >>> from psro.policies.population import PolicyPopulation
    >>> neural = [PolicyPopulation(p, 2) for p in range(2)]
    >>> _ = [pop.add(UniformPolicy(2), Provenance(0, "initial")) for pop in neural]
    >>> mc = MonteCarloEvaluator(None, episodes_per_profile=4000, game="kuhn_poker", seed=0)
    >>> means = mc.evaluate(neural, [range(1), range(1)])
    >>> bool(abs(means[0, 0, 0] - 0.125) < 0.05)
    True
    """

    name = "monte_carlo"
    exact = False

    def __init__(self, tree, episodes_per_profile: int = 1000, executor=None, seed: int = 0,
                 episodes_per_task: int = 20_000, tasks_per_batch: int = 64, *, game=None, num_envs: int = 64,
                 keyed: bool = False):
        for name, value in (("episodes_per_profile", episodes_per_profile),
                            ("episodes_per_task", episodes_per_task), ("tasks_per_batch", tasks_per_batch),
                            ("num_envs", num_envs)):
            if not is_integer(value) or value < 1:
                raise ValueError(f"{name} must be a positive int; got {value!r}.")
        if not is_integer(seed) or seed < 0:
            raise ValueError(f"seed must be a non-negative int; got {seed!r}.")
        check_episode_budget("episodes_per_profile", episodes_per_profile, episodes_per_task)   # (before the tables)
        if tree is None:
            if game is None:
                raise ValueError("the monte_carlo evaluator needs game= (the game to play) when no tree is given.")
            if isinstance(game, str):
                import games

                game = games.load(game)
        elif not isinstance(tree, GameTree):
            if not hasattr(tree, "new_initial_state"):
                raise TypeError(f"tree must be a GameTree or a pyspiel.Game (or None, with game=); "
                                f"got {type(tree).__name__}.")
            tree = build_game_tree(tree)
        self.tree = tree
        self.game = tree.game if game is None else game
        self.play_tree = None if tree is None else build_play_tree(tree)
        self.num_players = tree.num_players if tree is not None else _num_players(self.game)
        self.episodes_per_profile = int(episodes_per_profile)
        self.executor = make_executor(executor)
        self.seed = int(seed)
        self.episodes_per_task = int(episodes_per_task)
        self.tasks_per_batch = int(tasks_per_batch)
        self.num_envs = int(num_envs)
        if not isinstance(keyed, bool):
            raise ValueError(f"keyed must be true or false; got {keyed!r}.")
        self.keyed = keyed
        self.payoff_range = _utility_range(self.game)

    def __repr__(self) -> str:
        return (f"MonteCarloEvaluator({self.game}, episodes_per_profile={self.episodes_per_profile}, "
                f"executor={self.executor!r}, seed={self.seed})")

    # ------------------------------------------------------------- sampling
    def sampler(self, populations):
        """The picklable episode player for the current populations: a
        :class:`~psro.evaluation.sampled_play.ProfileSampler` over the tree for tabular populations, an
        :class:`EnvProfileSampler` for populations of policy objects."""
        if len(populations) != self.num_players:
            raise ValueError(f"populations needs one per player ({self.num_players}); got {len(populations)}.")
        if _tabular(populations):
            if self.play_tree is None:
                raise ValueError("tabular populations are sampled over the game tree, and this evaluator has none; "
                                 "give populations of policy objects (neural or uniform policies) or a tree.")
            if self.keyed:
                raise ValueError("keyed applies to populations of policy objects, played on the environment; these "
                                 "are tabular, sampled over the game tree: leave keyed false.")
            return ProfileSampler(self.play_tree, [np.asarray(pop.policies) for pop in populations], self.seed)
        members = [[self._playable(member, p) for member in pop.policies] for p, pop in enumerate(populations)]
        return EnvProfileSampler(self.game, members, self.seed, self.num_envs, self.keyed)

    def _playable(self, member, player: int):
        """A population member as the environment plays it (a tabular array looks its rows up by infostate)."""
        if not isinstance(member, np.ndarray):
            return member
        if self.tree is None:
            raise ValueError(f"populations[{player}] holds a tabular policy, which needs the game tree to be "
                             "played, and this evaluator has none.")
        from psro.policies import TabularStatePolicy

        return TabularStatePolicy(member, self.tree.infostates[player])

    def _segments(self, profiles: np.ndarray, starts: np.ndarray, episodes: np.ndarray) -> np.ndarray:
        """Rows ``(profile..., start, count)``; a profile's episodes split into pieces of ``episodes_per_task``."""
        keep = episodes > 0
        profiles, starts, episodes = profiles[keep], starts[keep], episodes[keep]
        pieces = -(-episodes // self.episodes_per_task)
        owner = np.repeat(np.arange(len(episodes)), pieces)
        piece = np.arange(len(owner)) - np.repeat(np.cumsum(pieces) - pieces, pieces)
        first = starts[owner] + piece * self.episodes_per_task
        count = np.minimum(self.episodes_per_task, episodes[owner] - piece * self.episodes_per_task)
        return np.column_stack([profiles[owner], first, count]).astype(np.int64)

    def _tasks(self, segments: np.ndarray) -> list:
        """Consecutive segments grouped into tasks of at most ``episodes_per_task`` episodes."""
        if len(segments) == 0:
            return []
        ends = np.cumsum(segments[:, -1])
        task_of = (ends - 1) // self.episodes_per_task
        cuts = np.flatnonzero(np.diff(task_of)) + 1
        return np.split(segments, cuts)

    def sample(self, populations, profiles, episodes, starts=None, meta_game: EmpiricalGame | None = None,
               on_batch: Callable[[EvaluationBatch], None] | None = None,
               profile_sampler=None) -> SampleStatistics:
        """Play ``episodes[i]`` episodes of ``profiles[i]``; return per-profile statistics.

        Parameters
        ----------
        populations : sequence of Population
        profiles : array_like of int, shape (m, num_players)
        episodes : array_like of int, shape (m,)
        starts : array_like of int, shape (m,), optional
            Number of each profile's first episode (selects its random stream;
            default 0). :meth:`evaluate` passes the samples already recorded.
        meta_game : EmpiricalGame, optional
            If given, every batch's statistics are added to it as soon as the batch ends.
        on_batch : callable, optional
            Called with an :class:`EvaluationBatch` after each batch is recorded.
        profile_sampler : ProfileSampler or EnvProfileSampler, optional
            ``self.sampler(populations)`` built earlier (saves rebuilding it for calls on the same populations).

        Returns
        -------
        SampleStatistics
            ``count`` ``(m,)``, ``total`` and ``total_sq`` ``(m, num_players)``.
        """
        n = self.num_players
        profiles = np.asarray(profiles, dtype=np.int64).reshape(-1, n)
        m = len(profiles)
        episodes = np.broadcast_to(np.asarray(episodes, dtype=np.int64), (m,))
        starts = np.zeros(m, dtype=np.int64) if starts is None else np.broadcast_to(
            np.asarray(starts, dtype=np.int64), (m,))
        if np.any(episodes < 0) or np.any(starts < 0):
            raise ValueError("episodes and starts must be non-negative.")
        sizes = np.array([len(pop) for pop in populations])
        if m and (np.any(profiles < 0) or np.any(profiles >= sizes)):
            raise ValueError(f"profiles must index the populations, whose sizes are {sizes.tolist()}.")
        sampler = self.sampler(populations) if profile_sampler is None else profile_sampler
        count = np.zeros(m, dtype=np.int64)
        total = np.zeros((m, n))
        total_sq = np.zeros((m, n))
        segments = self._segments(profiles, starts, episodes)
        # which input row each segment belongs to (segments keep the order of the rows with episodes)
        row_of = np.repeat(np.flatnonzero(episodes > 0), -(-episodes[episodes > 0] // self.episodes_per_task))
        tasks = self._tasks(segments)
        bounds = np.cumsum([0] + [len(t) for t in tasks])
        num_batches = -(-len(tasks) // self.tasks_per_batch)
        for b in range(num_batches):
            group = tasks[b * self.tasks_per_batch:(b + 1) * self.tasks_per_batch]
            results = self.executor.map(sampler, group, chunksize=1)
            lo, hi = bounds[b * self.tasks_per_batch], bounds[min(len(tasks), (b + 1) * self.tasks_per_batch)]
            rows = row_of[lo:hi]
            seg_count = np.concatenate([r.count for r in results])
            seg_total = np.concatenate([r.total for r in results])
            seg_sq = np.concatenate([r.total_sq for r in results])
            np.add.at(count, rows, seg_count)
            np.add.at(total, rows, seg_total)
            np.add.at(total_sq, rows, seg_sq)
            if meta_game is not None:
                _record(meta_game, segments[lo:hi, :n], seg_count, seg_total, seg_sq)
            if on_batch is not None:
                touched, _first = np.unique(rows, return_index=True)
                on_batch(EvaluationBatch(profiles=profiles[touched], episodes=np.bincount(
                    rows, weights=seg_count, minlength=m)[touched].astype(np.int64), batch=b, num_batches=num_batches))
        return SampleStatistics(count=count, total=total, total_sq=total_sq)

    def evaluate(self, populations, indices: Sequence[Sequence[int]], *, meta_game: EmpiricalGame | None = None,
                 on_batch: Callable[[EvaluationBatch], None] | None = None) -> np.ndarray:
        """Sample the block ``indices[0] x indices[1] x ...``; return its mean payoffs.

        With ``meta_game`` (whose shape covers the block), each profile is
        brought up to ``episodes_per_profile`` samples: only the missing
        episodes are played, so a block interrupted after some batches resumes
        where it stopped, and the statistics are added to ``meta_game`` batch
        by batch. Without it, ``episodes_per_profile`` fresh episodes are played.

        Parameters
        ----------
        populations : sequence of Population
        indices : sequence of sequences of int
            One list (or range) of policy indices per player.
        meta_game : EmpiricalGame, optional
            Where the samples are recorded (never with ``set_exact``).
        on_batch : callable, optional
            ``on_batch(EvaluationBatch)`` after each batch has been added to
            ``meta_game``: the place to checkpoint.

        Returns
        -------
        ndarray, shape (num_players, len(indices[0]), ...)
            Sample means over all recorded samples of each profile.
        """
        n = self.num_players
        if len(indices) != n:
            raise ValueError(f"indices needs one list of policy indices per player ({n}); got {len(indices)}.")
        idx = [np.asarray(list(ix), dtype=np.int64) for ix in indices]
        shape = tuple(len(ix) for ix in idx)
        grid = np.stack(np.meshgrid(*idx, indexing="ij"), axis=-1).reshape(-1, n)
        if meta_game is None:
            stats = self.sample(populations, grid, self.episodes_per_profile, on_batch=on_batch)
            return (stats.total / np.maximum(stats.count, 1)[:, None]).T.reshape(n, *shape)
        if meta_game.num_players != n or any(int(ix.max(initial=-1)) >= k for ix, k in zip(idx, meta_game.shape)):
            raise ValueError(f"meta_game (shape {meta_game.shape}) does not cover the block of shape {shape}; "
                             "grow it first.")
        if meta_game.exact[tuple(grid.T)].any():
            raise ValueError("meta_game has exact values in this block; sample into a game without set_exact entries.")
        have = meta_game.count[(0, *grid.T)].astype(np.int64)
        self.sample(populations, grid, np.maximum(self.episodes_per_profile - have, 0), starts=have,
                    meta_game=meta_game, on_batch=on_batch)
        return meta_game.mean()[(slice(None), *np.ix_(*idx))]

    def done(self, meta_game: EmpiricalGame, indices: Sequence[Sequence[int]]) -> bool:
        """True when every profile of the block has ``episodes_per_profile`` samples in ``meta_game``."""
        return block_done(meta_game, indices, self.episodes_per_profile)

    # --------------------------------------------------------------- top-up
    def top_up(self, meta_game: EmpiricalGame, populations, budget: int, *, method: str = "response_graph_ucb",
               strategy=None, rounds: int = 4, delta: float = 0.1, bound: str = "hoeffding",
               scheme: str = "count-weighted", rng=None, **options):
        """Spend up to ``budget`` more episodes on the profiles whose uncertainty matters.

        Two rules (``method``):

        ``"response_graph_ucb"`` (default)
            ResponseGraphUCB (:func:`ranking.response_graph_sampling.response_graph_ucb`)
            on ``meta_game``, with episodes of the populations as its samples: it
            keeps sampling the ends of single-deviation edges whose confidence
            intervals still overlap (scheme ``scheme``, bound ``bound`` over the
            game's utility range, level ``delta``) until every edge is resolved or
            the budget is spent. Runs in this process (its batches are small and
            sequential). Returns its ``ResponseGraphUCBResult``.
        ``"support"``
            The payoffs a meta-strategy's regret depends on: player ``p``'s
            payoff at profile ``a`` enters its deviation payoffs with weight
            ``w_p(a)``, the probability of ``a_{-p}`` under ``strategy`` (its
            joint summed over ``p``'s axis). In each of ``rounds`` rounds the
            round's share of the budget goes to profiles in proportion to
            ``sum_p w_p(a) * standard_error_p(a)``, through the executor.
            Returns the number of episodes played per profile (an int array of
            the meta-game's shape).

        Samples are added to ``meta_game`` in place.

        Parameters
        ----------
        meta_game : EmpiricalGame
            Sampled statistics of every profile (no ``set_exact`` entries).
        populations : sequence of Population
        budget : int
            Most new episodes.
        method : {"response_graph_ucb", "support"}
        strategy : Equilibrium, ndarray or sequence of ndarray
            For ``"support"``: a meta-strategy (its ``joint``), a joint
            distribution over profiles, or one mixed strategy per player.
        rounds : int
            For ``"support"``: re-allocation rounds.
        delta, bound, scheme, **options
            For ``"response_graph_ucb"``, as in
            :func:`~ranking.response_graph_sampling.response_graph_ucb`.
        rng : int or Generator, optional
            For ``"response_graph_ucb"``: seed of the schedule and the episodes
            (default: derived from ``seed`` and the samples so far).

        Examples
        --------
        >>> import pyspiel
        >>> from games import EmpiricalGame
        >>> from psro.policies import uniform_policy
        >>> from psro.policies.population import Population, Provenance
        >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
        >>> pops = [Population(i) for i in tree.infostates]
        >>> for p in pops:
        ...     always = np.zeros((6, 2)); always[:, 1] = 1          # always bet / call
        ...     _ = p.add(np.stack([uniform_policy(p.infostates), always]), [Provenance(0, "initial")] * 2)
        >>> mc = MonteCarloEvaluator(tree, episodes_per_profile=100, seed=0)
        >>> meta = EmpiricalGame((2, 2))
        >>> _ = mc.evaluate(pops, [range(2), range(2)], meta_game=meta)
        >>> result = mc.top_up(meta, pops, budget=5000, rng=1)
        >>> int(meta.count[0].sum()) == 400 + result.total_samples <= 400 + 5000
        True
        >>> played = mc.top_up(meta, pops, budget=1000, method="support", strategy=[[1.0, 0.0], [1.0, 0.0]])
        >>> int(played.sum()), int(played[1, 1])     # (1, 1) deviates from (0, 0) in both players: no weight
        (1000, 0)
        """
        if not is_integer(budget) or budget < 1:
            raise ValueError(f"budget must be a positive int (episodes); got {budget!r}.")
        _check_top_up_game(meta_game, populations)
        if method == "support":
            return self._top_up_support(meta_game, populations, int(budget), strategy, rounds)
        if method != "response_graph_ucb":
            raise ValueError(f"method must be 'response_graph_ucb' or 'support'; got {method!r}.")
        from ranking.response_graph_sampling import response_graph_ucb

        if rng is None:
            rng = np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(2 ** 31 - 1,
                                                                                     int(meta_game.count.sum()))))
        if self.payoff_range is None:
            raise ValueError(f"method='response_graph_ucb' needs the game's utility range, and {self.game} has no "
                             "min_utility()/max_utility(); use method='support'.")
        drawer = _EpisodeDrawer(self.sampler(populations), self.payoff_range)
        return response_graph_ucb(drawer, delta=delta, bound=bound, scheme=scheme, max_samples=int(budget),
                                  rng=rng, empirical_game=meta_game, **options)

    def _top_up_support(self, meta_game: EmpiricalGame, populations, budget: int, strategy, rounds: int):
        if not is_integer(rounds) or rounds < 1:
            raise ValueError(f"rounds must be a positive int; got {rounds!r}.")
        if strategy is None:
            raise ValueError("method='support' needs strategy= (an Equilibrium, a joint or one mixture per player).")
        weight = support_weights(meta_game.shape, strategy)
        if not meta_game.is_complete():
            raise ValueError("meta_game must have samples at every profile before a top-up; evaluate it first.")
        played = np.zeros(meta_game.shape, dtype=np.int64)
        remaining = budget
        for r in range(rounds):
            share = remaining // (rounds - r)
            episodes = _support_allocation(meta_game, weight, share)
            if not episodes.any():
                continue
            self.fill_to(meta_game, populations, meta_game.count[0].astype(np.int64) + episodes)
            played += episodes
            remaining -= int(episodes.sum())
        return played

    def top_up_rounds(self, meta_game: EmpiricalGame, populations, budget: int, *, method: str = "support",
                      rounds: int = 4, key: tuple = (), strategy=None, progress: TopUpProgress | None = None,
                      on_progress: Callable[[TopUpProgress], None] | None = None,
                      on_batch: Callable[[EvaluationBatch], None] | None = None, **options) -> TopUpProgress:
        """:meth:`top_up` cut into ``rounds`` rounds that a checkpoint can resume exactly.

        Round ``r`` gets ``(budget - spent) // (rounds - r)`` episodes, so the
        rounds together spend the whole budget unless a round finds nothing to
        sample (``"support"``: every weighted profile has zero variance;
        ``"response_graph_ucb"``: every edge is resolved).

        ``"support"``: the meta-strategy is ``strategy(meta_game)`` (or
        ``strategy`` itself when it is not callable), taken once, before the
        first round, and kept in ``progress.strategy``. Each round's episodes
        are apportioned as in :meth:`top_up`, from the standard errors so far,
        in equal quanta to at most :data:`TOP_UP_PROFILES_PER_ROUND` profiles
        (every profile costs a random stream), and stored as a target count
        per profile (``progress.target``); they are then played in batches
        with episode numbers that continue each profile's stream
        (:func:`psro.evaluation.sampled_play.segment_generator`), so a round cut short
        after any batch resumes to the same samples.
        ``"response_graph_ucb"``: one ResponseGraphUCB run per round with the
        generator ``SeedSequence(seed, spawn_key=(2**31 - 1, *key, r))``; a
        round is the unit of resumption (``on_batch`` runs once after it).

        Parameters
        ----------
        meta_game : EmpiricalGame
            Sampled statistics of every profile (no ``set_exact`` entries); updated in place.
        populations : sequence of Population
        budget : int
            Episodes to spend over all rounds (0: none).
        method : {"support", "response_graph_ucb"}
        rounds : int
            Number of rounds (positive).
        key : tuple of int
            Names this top-up (the PSRO loop passes ``(iteration,)``); part of the round seeds.
        strategy : callable or strategy, optional
            For ``"support"``: ``strategy(meta_game)`` gives the meta-strategy
            (an :class:`~solvers.Equilibrium`, a joint or one mixture per
            player), or a fixed one.
        progress : TopUpProgress, optional
            Where a previous call stopped; ignored unless its ``key`` is ``key``.
        on_progress : callable, optional
            Called with the new :class:`TopUpProgress` whenever it changes
            (before a round's episodes are played, and after each round): keep
            it where a checkpoint will find it.
        on_batch : callable, optional
            Called with an :class:`EvaluationBatch` after each batch is recorded.
        **options
            For ``"response_graph_ucb"``: ``delta``, ``bound``, ``scheme``, ... of :meth:`top_up`.

        Returns
        -------
        TopUpProgress
            With ``round == rounds``; ``spent`` is the number of episodes played.

        Examples
        --------
        >>> import pyspiel
        >>> from games import EmpiricalGame
        >>> from psro.policies import uniform_policy
        >>> from psro.policies.population import Population, Provenance
        >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
        >>> pops = [Population(i) for i in tree.infostates]
        >>> for p in pops:
        ...     always = np.zeros((6, 2)); always[:, 1] = 1          # always bet / call
        ...     _ = p.add(np.stack([uniform_policy(p.infostates), always]), [Provenance(0, "initial")] * 2)
        >>> mc = MonteCarloEvaluator(tree, episodes_per_profile=100, seed=0)
        >>> meta = EmpiricalGame((2, 2))
        >>> _ = mc.evaluate(pops, [range(2), range(2)], meta_game=meta)
        >>> done = mc.top_up_rounds(meta, pops, 1000, rounds=3, key=(7,), strategy=[[1.0, 0.0], [0.5, 0.5]])
        >>> done.round, done.spent, int(meta.count[0].sum())
        (3, 1000, 1400)
        """
        if not is_integer(budget) or budget < 0:
            raise ValueError(f"budget must be a non-negative int (episodes); got {budget!r}.")
        if not is_integer(rounds) or rounds < 1:
            raise ValueError(f"rounds must be a positive int; got {rounds!r}.")
        if method not in TOP_UP_METHODS:
            raise ValueError(f"method must be one of {list(TOP_UP_METHODS)}; got {method!r}.")
        if method == "support" and strategy is None:
            raise ValueError("method='support' needs strategy= (a function of the meta-game, an Equilibrium, "
                             "a joint or one mixture per player).")
        key = tuple(int(k) for k in key)
        _check_top_up_game(meta_game, populations)
        if progress is None or progress.key != key:
            progress = TopUpProgress(key=key)
        budget, rounds = int(budget), int(rounds)

        def advance(new: TopUpProgress) -> TopUpProgress:
            if on_progress is not None:
                on_progress(new)
            return new

        profile_sampler = None

        while progress.round < rounds:
            r = progress.round
            share = (budget - progress.spent) // (rounds - r)
            if progress.target is None and share > 0 and method == "response_graph_ucb":
                rng = np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(_TOP_UP_KEY, *key, r)))
                before = meta_game.count[0].copy()
                result = self.top_up(meta_game, populations, share, method=method, rng=rng, **options)
                progress = advance(dataclasses.replace(progress, round=r + 1,
                                                       spent=progress.spent + int(result.total_samples)))
                if on_batch is not None and result.total_samples:
                    played = meta_game.count[0] - before
                    touched = np.flatnonzero(played)
                    on_batch(EvaluationBatch(
                        profiles=np.stack(np.unravel_index(touched, meta_game.shape), axis=1),
                        episodes=played.ravel()[touched].astype(np.int64), batch=r, num_batches=rounds))
                continue
            if progress.target is None and share > 0:
                if not meta_game.is_complete():
                    raise ValueError("meta_game must have samples at every profile before a top-up; "
                                     "evaluate it first.")
                if progress.strategy is None:
                    chosen = strategy(meta_game) if callable(strategy) else strategy
                    progress = advance(dataclasses.replace(progress, strategy=_as_joint(meta_game.shape, chosen)))
                weight = support_weights(meta_game.shape, progress.strategy)
                episodes = _support_allocation(meta_game, weight, share, TOP_UP_PROFILES_PER_ROUND)
                if episodes.any():
                    progress = advance(dataclasses.replace(progress, spent=progress.spent + int(episodes.sum()),
                                                           target=meta_game.count[0].astype(np.int64) + episodes))
            if progress.target is not None:
                if profile_sampler is None:
                    profile_sampler = self.sampler(populations)
                self.fill_to(meta_game, populations, progress.target, on_batch=on_batch,
                             profile_sampler=profile_sampler)
            progress = advance(dataclasses.replace(progress, round=r + 1, target=None))
        if progress.spent < budget:
            logger.info("top-up %s spent %d of %d episodes: %s", key, progress.spent, budget,
                        "every edge of the response graph is resolved" if method == "response_graph_ucb"
                        else "the profiles the meta-strategy depends on have zero variance")
        return progress

    def fill_to(self, meta_game: EmpiricalGame, populations, target,
                on_batch: Callable[[EvaluationBatch], None] | None = None,
                profile_sampler=None) -> int:
        """Bring every profile's count in ``meta_game`` up to ``target``; return the episodes played.

        Each profile's new episodes continue its stream where its samples stop,
        so calling this again after an interruption plays exactly the episodes
        that were missing.

        Parameters
        ----------
        meta_game : EmpiricalGame
        populations : sequence of Population
        target : array_like of int, shape ``meta_game.shape``
        on_batch : callable, optional
        profile_sampler : ProfileSampler or EnvProfileSampler, optional
            As in :meth:`sample`.

        Examples
        --------
        >>> import pyspiel
        >>> from games import EmpiricalGame
        >>> from psro.policies import uniform_policy
        >>> from psro.policies.population import Population, Provenance
        >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
        >>> pops = [Population(i) for i in tree.infostates]
        >>> _ = [p.add(uniform_policy(p.infostates), Provenance(0, "initial")) for p in pops]
        >>> meta = EmpiricalGame((1, 1))
        >>> mc = MonteCarloEvaluator(tree, episodes_per_profile=10, seed=0)
        >>> mc.fill_to(meta, pops, [[30]]), mc.fill_to(meta, pops, [[30]]), int(meta.count[0, 0, 0])
        (30, 0, 30)
        """
        target = np.asarray(target)
        if target.shape != tuple(meta_game.shape) or not np.issubdtype(target.dtype, np.integer):
            raise ValueError(f"target must be an int array of the meta-game's shape {meta_game.shape}; "
                             f"got {target.dtype} of shape {target.shape}.")
        have = meta_game.count[0].astype(np.int64)
        need = np.maximum(target.astype(np.int64) - have, 0).ravel()
        todo = np.flatnonzero(need)
        if len(todo) == 0:
            return 0
        profiles = np.stack(np.unravel_index(todo, meta_game.shape), axis=1)
        self.sample(populations, profiles, need[todo], starts=have.ravel()[todo], meta_game=meta_game,
                    on_batch=on_batch, profile_sampler=profile_sampler)
        return int(need.sum())


def _num_players(game) -> int:
    n = game.num_players
    return int(n() if callable(n) else n)


def _utility_range(game) -> tuple | None:
    """``(min_utility, max_utility)`` of ``game`` (ResponseGraphUCB's confidence bounds); None when it has none."""
    try:
        return float(game.min_utility()), float(game.max_utility())
    except (AttributeError, TypeError, RuntimeError):
        return None


def _record(meta_game: EmpiricalGame, profiles: np.ndarray, count, total, total_sq) -> None:
    """Add per-profile statistics to ``meta_game`` (vectorised; repeated profiles accumulate)."""
    n = meta_game.num_players
    where = tuple(profiles.T)
    for p in range(n):
        np.add.at(meta_game.count[p], where, count)
        np.add.at(meta_game.total[p], where, total[:, p])
        np.add.at(meta_game.total_sq[p], where, total_sq[:, p])
