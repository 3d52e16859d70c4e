"""Sampled returns of policy profiles of any kind, played on :func:`games.environment.make_env`.

No game tree is needed: each seat of a profile is played by its policy
(neural, :class:`psro.policies.acting.UniformPolicy`, or tabular through
:class:`psro.policies.acting.TabularStatePolicy`), in batches: every step,
the envs where the same policy must act get one call.

:func:`sample_returns` plays exactly ``episodes`` full episodes of one profile.
Env ``i`` of the batch plays its first ``q_i`` episodes and stops (the quotas
differ by at most one), so short episodes are not over-represented. The result
is a pure function of the seed. :func:`sample_mixture_returns` does the same where a seat is played by a
mixture of policies, one drawn per episode (a meta-strategy). :func:`paired_returns` keys every random number by
the episode and the decision, so that two profiles played with one seed are compared episode by episode (common
random numbers). :func:`sample_profiles` gives the per-profile
statistics an :class:`games.EmpiricalGame` records; every profile's episodes
come from a generator keyed by ``(seed, profile indices, start)``
(:class:`numpy.random.SeedSequence`), so an estimate does not depend on which
profiles are sampled together or in what order. With ``keyed=True`` every random
number of an episode is keyed by ``(seed, profile, episode, draw)`` instead, and
all the profiles of a call are played side by side in one batch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from games.validation import check_int, is_integer
from psro.errors import with_field
from psro.oracles.learned.env import PolicyBank, sample_actions
from psro.policies import policy_input

__all__ = ["paired_returns", "profile_seed", "sample_mixture_returns", "sample_profiles", "sample_returns"]


def profile_seed(seed: int, profile, start: int = 0) -> np.random.SeedSequence:
    """The seed sequence of the episodes ``start, start + 1, ...`` of ``profile`` (population indices).

    Examples
    --------
    >>> a = profile_seed(3, (0, 1)).generate_state(2).tolist()
    >>> a == profile_seed(3, (0, 1)).generate_state(2).tolist(), a == profile_seed(3, (1, 0)).generate_state(2).tolist()
    (True, False)
    """
    key = tuple(int(a) for a in profile) + (int(start),)
    return np.random.SeedSequence(int(seed), spawn_key=key)


def sample_returns(game, profile: Sequence, episodes: int, seed=0, num_envs: int = 64, **env_options) -> np.ndarray:
    """Returns ``(episodes, num_players)`` of ``episodes`` full episodes where ``profile[p]`` plays seat ``p``.

    Parameters
    ----------
    game : pyspiel.Game, str or a PettingZoo adapter
        Anything :func:`games.environment.make_env` accepts.
    profile : sequence
        One policy per seat (see :func:`psro.policies.acting.batch_probabilities`).
    episodes : int
    seed : int or numpy.random.SeedSequence
        Draws chance and every action.
    num_envs : int
        Episodes played side by side.
    **env_options
        Passed to :func:`games.environment.make_env`.

    Returns
    -------
    ndarray, float64
        Row ``k`` is one episode's returns; env ``i``'s episodes come in order,
        env after env.

    Examples
    --------
    >>> from psro.policies import UniformPolicy
    >>> r = sample_returns("kuhn_poker", [UniformPolicy(2), UniformPolicy(2)], 4000, seed=0)
    >>> r.shape, bool(abs(r[:, 0].mean() - 0.125) < 4 * r[:, 0].std() / np.sqrt(4000))   # uniform vs uniform: 1/8
    ((4000, 2), True)
    """
    return sample_mixture_returns(game, [([policy], None) for policy in profile], episodes, seed, num_envs,
                                  **env_options)


def paired_returns(game, profile: Sequence, episodes: int, seed=0, num_envs: int = 64, **env_options) -> np.ndarray:
    """Like :func:`sample_returns`, with every random number keyed by episode (:mod:`games.keyed_chance`): row
    ``k`` is played on the ``k``-th deal of ``seed``, and the ``t``-th decision of its episode samples its action
    from the ``t``-th uniform number of the episode (inverse CDF). Two profiles played with the same seed see the
    same deals row by row, and where their policies agree they take the same actions (paired episodes, common
    random numbers: the difference of their returns comes only from where they differ). An environment without
    ``chance_keys`` pairs the actions only.

    Examples
    --------
    >>> from psro.policies import UniformPolicy
    >>> class Last:   # always the last legal action (Leduc: raise where it may)
    ...     def probabilities_np(self, obs, mask):
    ...         out = np.zeros(mask.shape)
    ...         out[np.arange(len(mask)), mask.shape[1] - 1 - np.argmax(mask[:, ::-1], axis=1)] = 1.0
    ...         return out
    >>> uniform = UniformPolicy(3)
    >>> raising = paired_returns("leduc_poker", [Last(), uniform], 2000, seed=3)[:, 0]
    >>> paired = raising - paired_returns("leduc_poker", [uniform, uniform], 2000, seed=3)[:, 0]
    >>> unpaired = raising - paired_returns("leduc_poker", [uniform, uniform], 2000, seed=4)[:, 0]
    >>> round(float(paired.var()), 1), round(float(unpaired.var()), 1)   # (the same deals and numbers: half)
    (33.6, 64.0)
    """
    return sample_mixture_returns(game, [([policy], None) for policy in profile], episodes, seed, num_envs,
                                  paired=True, **env_options)


def sample_mixture_returns(game, seats: Sequence, episodes: int, seed=0, num_envs: int = 64, *,
                           paired: bool = False, **env_options) -> np.ndarray:
    """Like :func:`sample_returns`, where seat ``p`` is played by a policy drawn per episode from a mixture.

    Parameters
    ----------
    game : pyspiel.Game, str or an environment game
        Anything :func:`games.environment.make_env` accepts.
    seats : sequence of (sequence, array or None)
        Per seat, ``(policies, weights)``: at the start of every episode the seat's policy is drawn with
        probabilities ``weights`` (None: uniform). A seat with one policy draws nothing, so a profile of single
        policies gives exactly :func:`sample_returns`'s episodes.
    episodes : int
    seed : int or numpy.random.SeedSequence
        Draws chance, the policies and every action.
    num_envs : int
    paired : bool
        Chance and the actions' random numbers keyed by episode (:func:`paired_returns`) instead of drawn in the
        order the envs need them (the mixture seats' draws of their policies are not keyed).
    **env_options
        Passed to :func:`games.environment.make_env`.

    Returns
    -------
    ndarray, float64, shape (episodes, num_players)

    Examples
    --------
    >>> from psro.policies import UniformPolicy
    >>> seats = [([UniformPolicy(2)], None), ([UniformPolicy(2), UniformPolicy(2)], [0.25, 0.75])]
    >>> sample_mixture_returns("kuhn_poker", seats, 50, seed=1).shape
    (50, 2)
    """
    from games.environment import make_env

    episodes = check_int(episodes, "episodes", minimum=1)
    num_envs = check_int(num_envs, "num_envs", minimum=1)
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(_seed(seed))
    chance_seq, action_seq, draw_seq = seq.spawn(3)   # (the first two as sample_returns always spawned them)
    width = min(num_envs, episodes)
    env = make_env(game, width, rng=np.random.default_rng(chance_seq), **env_options)
    policies, weights = _mixture_seats(seats, env.num_players)
    offsets = np.cumsum([0] + [len(p) for p in policies[:-1]])
    flat = PolicyBank([policy for seat in policies for policy in seat])
    draw_rng = np.random.default_rng(draw_seq)
    choice = np.zeros((width, env.num_players), dtype=np.int64)

    def draw(envs):
        for p, w in enumerate(weights):
            if w is not None and len(envs):
                choice[envs, p] = draw_rng.choice(len(w), size=len(envs), p=w)
    draw(np.arange(width))
    rng = np.random.default_rng(action_seq)
    quota = np.full(width, episodes // width, dtype=np.int64)
    quota[: episodes % width] += 1
    keys = None
    if paired:
        from games.keyed_chance import KeyedChance

        first = np.cumsum(quota) - quota   # (env i's episodes come after env i - 1's)
        if hasattr(env, "chance_keys"):
            env.chance_keys = KeyedChance(int(chance_seq.generate_state(1, dtype=np.uint64)[0]), first)
        keys = KeyedChance(int(action_seq.generate_state(1, dtype=np.uint64)[0]), first)
    out = _play(env, flat, lambda envs, players: offsets[players] + choice[envs, players], quota, rng, keys,
                on_end=draw)
    return np.array([r for rows in out for r in rows], dtype=np.float64).reshape(episodes, env.num_players)


def _play(env, bank: PolicyBank, acting, quota: np.ndarray, rng, keys=None, on_end=None) -> list:
    """Play ``env`` until env ``i`` has finished ``quota[i]`` episodes; per env, the returns of its episodes in
    order. ``acting(envs, players)``: the index in ``bank`` of the policy that moves; ``keys``: a
    :class:`games.keyed_chance.KeyedChance` the actions are drawn with (by episode and decision), else ``rng``;
    ``on_end(envs)``: called with the envs whose episode just ended."""
    turn = np.zeros(env.num_envs, dtype=np.int64)   # (decisions so far in each env's episode)
    counts = np.zeros(env.num_envs, dtype=np.int64)
    out = [[] for _ in range(env.num_envs)]
    s = env.reset()
    while True:
        live = counts[s.envs] < quota[s.envs]
        if not live.all():
            keep = np.flatnonzero(live)
            s = type(s)(envs=s.envs[keep], player=s.player[keep], obs=s.obs[keep], mask=s.mask[keep],
                        done=s.done[keep], returns=s.returns[keep], episode=s.episode[keep])
        if s.envs.size == 0:
            return out
        index = acting(s.envs, s.player)
        u = None if keys is None else keys.uniform(s.envs, s.episode, turn[s.envs])
        moved = s.envs
        s = env.step(moved, sample_actions(env, s, index, bank, rng, u=u))
        if keys is not None:
            turn[moved] += 1
            turn[s.envs[s.done]] = 0
        finished = s.envs[s.done]
        for e, r in zip(finished.tolist(), s.returns[s.done]):
            out[e].append(r)
            counts[e] += 1
        if on_end is not None:
            on_end(finished)


def _mixture_seats(seats: Sequence, num_players: int) -> tuple:
    """Per seat its policies (checked to act) and its weights (None for a single policy), or an error naming the
    seat."""
    seats = list(seats)
    if len(seats) != num_players:
        raise ValueError(f"profile needs one policy per seat ({num_players}); got {len(seats)}.")
    policies, weights = [], []
    for p, (members, w) in enumerate(seats):
        members = list(members)
        if not members:
            raise ValueError(f"seats[{p}]: no policy to play the seat; give at least one.")
        for policy in members:
            with_field(f"profile[{p}]", policy_input, policy)
        w = np.full(len(members), 1.0 / len(members)) if w is None else np.asarray(w, dtype=np.float64).ravel()
        if w.shape != (len(members),) or not np.all(np.isfinite(w)) or np.any(w < 0) or not w.sum() > 0:
            raise ValueError(f"seats[{p}]: one non-negative weight per policy ({len(members)}); got {w}.")
        policies.append(members)
        weights.append(None if len(members) == 1 else w / w.sum())
    return policies, weights


def sample_profiles(game, populations: Sequence, profiles, episodes_each, seed: int = 0, *, starts=None,
                    num_envs: int = 64, keyed: bool = False, **env_options) -> tuple:
    """Sample statistics of pure profiles over populations of policies, for an :class:`games.EmpiricalGame`.

    Parameters
    ----------
    game : pyspiel.Game, str or a PettingZoo adapter
    populations : sequence of sequence
        ``populations[p][i]`` is player ``p``'s policy ``i``.
    profiles : array of int, shape (K, num_players)
        Population indices, one row per profile.
    episodes_each : int or array of int, shape (K,)
        Episodes per profile.
    seed : int
        Root seed; profile ``k`` uses :func:`profile_seed` ``(seed, profiles[k], starts[k])``.
    starts : array of int, shape (K,), optional
        How many episodes of each profile were sampled before (so a top-up
        gets fresh episodes); default 0.
    num_envs : int
        Episodes of one profile played side by side.
    keyed : bool
        Every random number keyed (:class:`games.keyed_chance.KeyedChance`): episode ``e`` of a profile is a
        function of ``(seed, profile indices, e)`` alone, so all the profiles are played side by side in one batch
        (far fewer, larger steps where profiles are many and episodes short) and the statistics do not depend on
        ``num_envs`` or on how the episodes are split (``starts``). Different episodes from the default's
        streams. The environment must key its chance (a ``chance_keys`` attribute), else a ``ValueError``.

    Returns
    -------
    count, total, total_sq : ndarray, shape (K, num_players)
        Per profile and player: the number of episodes, the sum of the returns
        and the sum of their squares.

    Examples
    --------
    >>> from psro.policies import UniformPolicy
    >>> u = UniformPolicy(2)
    >>> count, total, total_sq = sample_profiles("kuhn_poker", [[u], [u, u]], [[0, 0], [0, 1]], 100, seed=1)
    >>> count.tolist(), bool(np.allclose(total[:, 0], -total[:, 1]))
    ([[100.0, 100.0], [100.0, 100.0]], True)
    >>> keyed = sample_profiles("kuhn_poker", [[u], [u, u]], [[0, 0], [0, 1]], 100, seed=1, keyed=True)
    >>> halves = sample_profiles("kuhn_poker", [[u], [u, u]], [[0, 0], [0, 1]], 50, seed=1, starts=[0, 50],
    ...                          num_envs=7, keyed=True)
    >>> rest = sample_profiles("kuhn_poker", [[u], [u, u]], [[0, 0], [0, 1]], 50, seed=1, starts=[50, 0],
    ...                        keyed=True)
    >>> bool(np.array_equal(keyed[1], halves[1] + rest[1]))   # episodes 0-49 and 50-99 of each profile
    True
    """
    profiles = np.asarray(profiles)
    if profiles.ndim != 2 or profiles.shape[1] != len(populations) or not (
            profiles.size == 0 or np.issubdtype(profiles.dtype, np.integer)):
        raise ValueError(f"profiles must be an int array (K, {len(populations)}): one population index per "
                         f"player; got shape {profiles.shape}.")
    k = profiles.shape[0]
    sizes = np.array([len(pop) for pop in populations])
    if k and (profiles.min() < 0 or np.any(profiles >= sizes)):
        raise ValueError(f"profiles must index the populations (sizes {sizes.tolist()}).")
    each = np.broadcast_to(np.asarray(episodes_each), (k,))
    if not all(is_integer(e) and e >= 1 for e in each.tolist()):
        raise ValueError(f"episodes_each must be positive ints (one or one per profile); got {episodes_each!r}.")
    starts = np.zeros(k, dtype=np.int64) if starts is None else np.broadcast_to(np.asarray(starts), (k,))
    if keyed:
        return _keyed_profiles(game, populations, profiles, each.astype(np.int64), _seed(seed),
                               starts.astype(np.int64), check_int(num_envs, "num_envs", minimum=1), **env_options)
    n = len(populations)
    count, total, total_sq = np.zeros((k, n)), np.zeros((k, n)), np.zeros((k, n))
    for row, prof in enumerate(profiles.tolist()):
        policies = [populations[p][i] for p, i in enumerate(prof)]
        r = sample_returns(game, policies, int(each[row]), profile_seed(_seed(seed), prof, int(starts[row])),
                           num_envs=num_envs, **env_options)
        count[row], total[row], total_sq[row] = r.shape[0], r.sum(axis=0), (r * r).sum(axis=0)
    return count, total, total_sq


def _keyed_profiles(game, populations: Sequence, profiles: np.ndarray, each: np.ndarray, seed: int,
                    starts: np.ndarray, num_envs: int, **env_options) -> tuple:
    """:func:`sample_profiles` with ``keyed=True``: profile ``k`` on ``min(num_envs, each[k])`` envs of one batch,
    env ``i`` of it playing the profile's episodes ``first[i], first[i] + 1, ...`` (``starts[k]`` on), each
    drawn with the profile's keys (:func:`profile_seed` at start 0)."""
    from games.environment import make_env
    from games.keyed_chance import KeyedChance

    k, n = profiles.shape
    widths = np.minimum(num_envs, each)
    owner = np.repeat(np.arange(k), widths)                     # (the profile each env plays)
    block = np.cumsum(widths) - widths                          # (its first env)
    local = np.arange(owner.size) - block[owner]
    quota = each[owner] // widths[owner] + (local < each[owner] % widths[owner])
    before = np.cumsum(quota) - quota
    first = starts[owner] + before - before[block][owner]
    keys = np.array([profile_seed(seed, prof).generate_state(2, dtype=np.uint64) for prof in profiles.tolist()],
                    dtype=np.uint64).reshape(k, 2)
    env = make_env(game, owner.size, rng=np.random.default_rng(seed), **env_options)
    if not hasattr(env, "chance_keys"):
        raise ValueError(f"keyed: {type(env).__name__} draws its chance from one generator (it has no chance_keys), "
                         "so the profiles cannot share a batch; sample with keyed=False.")
    env.chance_keys = KeyedChance(keys[owner, 0], first)
    used, member = np.unique(profiles + np.cumsum([0] + [len(pop) for pop in populations[:-1]]),
                             return_inverse=True)           # (the bank holds only the policies these profiles use)
    member = member.reshape(k, n)
    flat = [policy for pop in populations for policy in pop]
    for p, i in {(p, i) for prof in profiles.tolist() for p, i in enumerate(prof)}:
        with_field(f"populations[{p}][{i}]", policy_input, populations[p][i])
    out = _play(env, PolicyBank([flat[i] for i in used.tolist()]), lambda envs, players: member[owner[envs], players],
                quota, None, KeyedChance(keys[owner, 1], first))
    returns = np.array([r for rows in out for r in rows], dtype=np.float64).reshape(-1, n)
    played = np.repeat(owner, quota)   # (the profile of each episode, env after env)
    count, total, total_sq = np.zeros((k, n)), np.zeros((k, n)), np.zeros((k, n))
    np.add.at(count, played, 1.0)
    np.add.at(total, played, returns)
    np.add.at(total_sq, played, returns * returns)
    return count, total, total_sq


def _seed(seed) -> int:
    if not is_integer(seed) or seed < 0:
        raise ValueError(f"seed must be a non-negative int; got {seed!r}.")
    return int(seed)
