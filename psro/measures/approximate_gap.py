"""The approximate gap of a meta-strategy: a lower bound of its exact gap, from learned best responses and sampled
play, with a standard error.

On a game whose tree does not fit, the exact gap (NashConv, CCE or CE gap) cannot be computed; deep-PSRO papers
report a learned best response's gain instead (Timbers et al. 2020), which is only a lower bound, and only a
meaningful one when the response is strong. For every best-response target the meta-strategy defines
(:func:`psro.meta.targets.meta_targets`), the response value is the best of several **candidates**:

* the responder's population members: its best member against the target by the empirical meta-game's payoffs
  (``payoffs``), or every member when no payoffs are given;
* a fresh learned response (``respond``; unless ``fresh`` is false);
* a response warm-started from that best member (``warm_start``: the same call with the target's
  ``initial_policy`` set to the member; ``respond`` may decline by returning None);
* the ``variants`` of each learned response (for instance the greedy version of a softmax network);
* a local best response (``lbr``, :class:`psro.measures.local_best_response.LocalBestResponse`): one-step lookahead over
  the race's winner, its beliefs from the target's members, no training (Lisy & Bowling 2017, generalised;
  OpenSpiel games whose actions every player sees); it replaces the winner where it beats it in a second race.

**Selection and estimation use different episodes.** The candidates race against the target by successive halving
(:func:`successive_halving`: the better half of them goes on each round, the last two having played
``selection_episodes`` each) and the best mean wins; the winner's value is then the mean of its seat's returns over
``episodes`` fresh episodes, independent of the selection, so its expectation is the winner's true value (no
winner's curse), which is at most the best response's. The meta-strategy's own value is the mean return over
``episodes`` fresh episodes of profiles drawn from the meta-strategy (for CE targets: from the joint conditioned on
the recommendation).

**Paired episodes.** Episodes are played with every random number keyed by episode and decision
(:func:`psro.evaluation.env_play.paired_returns`, common random numbers): the candidates of one race round play the
same opponents on the same deals with the same random numbers, and (product and CCE) each winner's episode ``j``
replays the meta-strategy's episode ``j`` with the winner in its seat, so a gain is measured as the mean of
per-episode differences, which come only from where the winner acts otherwise (on a hold'em checkpoint, with the
same winners, a standard error of 0.25 against 0.44 unpaired).

With ``BR`` the winners' values and ``v`` the on-policy values:

* PSRO (product): ``max(0, sum_p (BR_p - v_p))``;
* CCE: ``sum_p max(0, BR_p - v_p)``;
* CE: ``sum_p sum_i P(i) max(0, BR_{p,i} - v_{p,i})``.

**A lower bound.** Each ``BR`` is the value of some policy, at most the best response's, so the expected sum
before clipping is at most the exact gap (NashConv for PSRO: every player's regret is at least 0, so it also
bounds the clipped sum; the CCE and CE gaps are sums of clipped regrets). Clipping at zero only moves the estimate
towards a true value that is never negative (``|max(0, x) - g| <= |x - g|`` for ``g >= 0``); the unclipped sum is
kept in :attr:`ApproximateGap.unclipped`. Because the best member is a candidate, the estimate is never below the
regret the meta-game itself shows (``meta_gap``) beyond the sampling errors of the two. The standard error is the
Monte Carlo one of the winners' and on-policy values before clipping (clipping can only narrow a term's spread, so
it is conservative). PSRO: the error of the mean of the per-episode sum over players of the paired differences
(winner's return minus the meta-strategy's), exact whatever their correlation; CCE: the sum of the players'
errors, which bounds the error of a sum of correlated terms; CE: the winners' and the conditional values' episodes
are independent, their variances add. The selection's episodes pick the winner and add nothing to the estimate.

Every random choice is derived from ``(seed, iteration, "approx_gap")`` (:func:`approximate_seed`): the
profiles drawn for each sampled value and the seeds of their episodes. It never touches the run's own random
generator, so measuring it (or not) leaves the run unchanged.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from psro.deprecation import moved_names
from psro.measures.approx_gap_schedule import halving_counts
from psro.measures.approx_gap_settings import STDERR_FLOOR, check_stderr_target
from psro.meta.targets import SUPPORT_TOL, meta_targets

logger = logging.getLogger(__name__)

__all__ = ["APPROX_GAP_KEY", "ApproximateGap", "Candidate", "approximate_gap", "approximate_seed",
           "nash_conv_lower_bound", "measure_with_oracle", "member_values", "mixture_returns", "oracle_responder",
           "paired_draw", "response_variants", "responder_seed", "successive_halving"]

#: The key that separates the approximate gap's random streams from the run's (the CRC-32 of "approx_gap")
APPROX_GAP_KEY = zlib.crc32(b"approx_gap")


@dataclass(frozen=True)
class Candidate:
    """One candidate response to one target.

    Attributes
    ----------
    source : str
        ``"member <i>"`` (population member ``i``), ``"step"`` (the step's own response), ``"fresh"`` or
        ``"warm"`` (the learned responses), with ``" (<variant>)"`` for a variant of a learned one, or
        ``"lbr (<source>)"`` (the local best response over the race's winner ``source``).
    selection_value : float
        Its mean return over the selection episodes.
    """

    source: str
    selection_value: float


@dataclass(frozen=True)
class ApproximateGap:
    """An approximate gap (a lower bound of the exact gap up to its sampling error) and its parts.

    Attributes
    ----------
    gap : float
        The estimate (see the module docstring), clipped at zero.
    stderr : float
        Its Monte Carlo standard error (of the terms before clipping at zero).
    terms : tuple of tuple
        One ``(player, mass, response_value, on_policy_value, winner)`` per target: the winner's value on fresh
        episodes, the meta-strategy's, and the winning candidate's ``source``.
    unclipped : float
        The estimate before clipping at zero (PSRO: the sum of the players' gains).
    candidates : tuple of tuple
        Per target, its :class:`Candidate` s in the order they were tried.
    episodes : int
        The episodes of each value in the estimate (more than the first round's where ``stderr_target`` asked).
    """

    gap: float
    stderr: float
    terms: tuple
    unclipped: float = math.nan
    candidates: tuple = ()
    episodes: int = 0


def approximate_seed(seed: int, iteration: int) -> int:
    """The root seed of the approximate gap measured at ``iteration`` of a run seeded ``seed``.

    Examples
    --------
    >>> approximate_seed(0, 3) == approximate_seed(0, 3) != approximate_seed(0, 4)
    True
    """
    return _keyed_seed(seed, iteration)


def responder_seed(seed: int) -> int:
    """The run seed of the approximate gap's best-response oracle (its calls are keyed by ``(iteration, index)``
    on top of it, as the run's own oracle's are).

    Examples
    --------
    >>> responder_seed(0) != 0
    True
    """
    return _keyed_seed(seed)


def _keyed_seed(seed: int, *key: int) -> int:
    """A 32-bit seed of the approximate gap's own stream ``key`` of a run seeded ``seed`` (spawned apart from the
    run's streams by :data:`APPROX_GAP_KEY`)."""
    sequence = np.random.SeedSequence(int(seed), spawn_key=(APPROX_GAP_KEY, *(int(k) for k in key)))
    return int(sequence.generate_state(1, dtype=np.uint32)[0])


def mixture_returns(game, populations: Sequence, profiles: np.ndarray, weights: np.ndarray, episodes: int,
                    rng: np.random.Generator, *, seat: int | None = None, policy=None,
                    play: Callable | None = None) -> np.ndarray:
    """Returns ``(episodes, num_players)`` of episodes whose profiles are drawn from a distribution over
    population profiles (``seat``, when given, is played by ``policy`` instead).

    How many episodes each profile gets is one multinomial draw from ``rng``; each profile's episodes are
    ``play(game, policies, count, seed)`` (default :func:`psro.evaluation.env_play.paired_returns`) with a seed
    from ``rng``, so the rows are i.i.d. episodes of the mixture. Two calls from generators in the same state
    draw the same profiles and seeds, so their rows are paired episodes (see :func:`paired_draw`).

    Examples
    --------
    >>> pops = [[0.0, 1.0], [0.0, 1.0]]        # stand-ins: a "policy" is its payoff to the row player
    >>> play = lambda game, profile, count, seed: np.tile([profile[0] - profile[1], 0.0], (count, 1))
    >>> r = mixture_returns(None, pops, np.array([[0, 0], [1, 0]]), np.array([0.5, 0.5]), 1000,
    ...                     np.random.default_rng(0), play=play)
    >>> r.shape, bool(abs(r[:, 0].mean() - 0.5) < 0.05)
    ((1000, 2), True)
    """
    return paired_draw(game, populations, profiles, _draw(rng, weights, episodes), seat=seat, policy=policy,
                       play=play)


def _draw(rng: np.random.Generator, weights, episodes: int) -> tuple:
    """``(counts, seeds)``: the episodes of each profile (one multinomial draw) and each profile's seed."""
    weights = np.asarray(weights, dtype=np.float64)
    counts = rng.multinomial(int(episodes), weights / weights.sum())
    return counts, rng.integers(0, 2 ** 32, size=len(weights), dtype=np.uint64)


def paired_draw(game, populations: Sequence, profiles: np.ndarray, draw: tuple, *, seat: int | None = None,
                policy=None, play: Callable | None = None) -> np.ndarray:
    """The returns of one draw ``(counts, seeds)`` of ``profiles``: ``counts[k]`` episodes of profile ``k`` played
    with ``seeds[k]``, profile after profile (``seat``, when given, played by ``policy``).

    Played with :func:`psro.evaluation.env_play.paired_returns` (the default ``play``), row ``j`` of two calls with
    the same draw is the same profile's episode on the same deal with the same random numbers: a response's row
    and the meta-strategy's row differ only where the policy in ``seat`` acts otherwise (common random numbers).

    Examples
    --------
    >>> pops = [[0.0, 1.0], [0.0, 1.0]]
    >>> play = lambda game, profile, count, seed: np.tile([profile[0] - profile[1], seed % 7], (count, 1))
    >>> draw = (np.array([2, 1]), np.array([10, 20], dtype=np.uint64))
    >>> paired_draw(None, pops, np.array([[0, 1], [1, 1]]), draw, play=play).tolist()
    [[-1.0, 3.0], [-1.0, 3.0], [0.0, 6.0]]
    >>> paired_draw(None, pops, np.array([[0, 1], [1, 1]]), draw, seat=0, policy=5.0, play=play)[:, 0].tolist()
    [4.0, 4.0, 4.0]
    """
    if play is None:
        from psro.evaluation.env_play import paired_returns as play
    profiles = np.asarray(profiles, dtype=np.int64)
    counts, seeds = draw
    rows = []
    for k in np.flatnonzero(counts):
        members = [policy if q == seat else _member(populations[q], int(i)) for q, i in enumerate(profiles[k])]
        rows.append(np.asarray(play(game, members, int(counts[k]), int(seeds[k])), dtype=np.float64))
    return np.concatenate(rows)


def _member(population, index: int):
    policies = population.policies if hasattr(population, "policies") else population
    return policies[index]


def _support(joint: np.ndarray) -> tuple:
    profiles = np.argwhere(joint > SUPPORT_TOL)
    weights = joint[tuple(profiles.T)]
    return profiles, weights / weights.sum()


def member_values(payoffs: np.ndarray, player: int, profiles: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Each of ``player``'s members' value against a distribution over the others' profiles, read from the
    meta-game ``payoffs`` ``(num_players, k_1, ..., k_n)`` (the responder's column of ``profiles`` is ignored).

    Examples
    --------
    >>> from games import catalog
    >>> member_values(catalog.matching_pennies().payoffs, 1, np.array([[0, 0], [1, 0]]), np.array([0.75, 0.25]))
    array([-0.5,  0.5])
    """
    moved = np.moveaxis(np.asarray(payoffs[player], dtype=np.float64), player, -1)
    others = np.delete(np.asarray(profiles, dtype=np.int64), player, axis=1)
    return np.asarray(weights, dtype=np.float64) @ moved[tuple(others.T)]


def approximate_gap(game, kind: str, solution, populations: Sequence, respond: Callable, *, episodes: int,
                    seed: int, iteration: int, play: Callable | None = None, payoffs: np.ndarray | None = None,
                    selection_episodes: int | None = None, warm_start: bool = False, fresh: bool = True,
                    variants: Callable | None = None, ready: Callable | None = None, train=True,
                    stderr_target: float | None = None, stderr_floor: float = 0.0,
                    max_episodes: int | None = None, lbr: int | None = None) -> ApproximateGap:
    """The approximate gap of ``solution``: a lower bound of its exact gap up to the sampling error (see the
    module docstring).

    Parameters
    ----------
    game
        What ``play`` plays (a pyspiel game or an environment).
    kind : {"product", "cce", "ce"}
    solution : solvers.Equilibrium
        The meta-strategy (its ``marginals``, or its ``joint`` for JPSRO).
    populations : sequence of PolicyPopulation
    respond : callable
        ``respond(player, target, index) -> BestResponse or None``: a learned response (its ``policy`` plays).
        ``index`` numbers one player's calls: ``2 i`` the fresh response to target ``i``, ``2 i + 1`` the one
        warm-started from the best member (the target's ``initial_policy``). None: no candidate.
    episodes : int
        Episodes of each value that enters the estimate (the winners' and the meta-strategy's), at least 2: the
        first round, when ``stderr_target`` adds more.
    seed, iteration : int
        Derive every random choice (:func:`approximate_seed`).
    play : callable, optional
        As in :func:`mixture_returns`.
    payoffs : ndarray, optional
        The empirical meta-game's payoffs ``(num_players, k_1, ..., k_n)``: they pick each target's best member
        (and give the CE targets' meta-game values). None: every member is a candidate.
    selection_episodes : int, optional
        Episodes the last two candidates play in the race that picks the winner (:func:`successive_halving`; the
        others play fewer), default ``episodes``, at least 1.
    warm_start : bool
        Also ask ``respond`` for a response warm-started from the best member.
    fresh : bool
        Ask ``respond`` for a fresh response (default; False with ``warm_start``: only the warm-started one).
    variants : callable, optional
        ``variants(policy) -> list of (name, policy)``: more candidates from a learned response (default none;
        :func:`response_variants` adds a softmax network's greedy version).
    ready : callable, optional
        ``ready(player, index, target) -> policy or None``: a response that already answers target ``index``
        (the run's own learned response of the same step), a candidate (``"step"``) at no training cost.
    train : bool or "auto"
        Ask ``respond`` for learned responses: always (True), never (False), or only for targets ``ready`` does
        not answer ("auto").
    stderr_target : float, optional
        Add rounds of episodes (each doubling them) while the estimate is more than twice its standard error
        (clearly above zero), until the standard error is at most this fraction of the estimate, or at most
        ``stderr_floor``, or ``max_episodes`` are reached. None: one round. (The stopping
        rule looks at the spread, not at the mean, so the mean stays an unbiased estimate in every practical
        sense.)
    stderr_floor : float
        A standard error small enough whatever the estimate (the caller's :data:`STDERR_FLOOR` of the payoff
        range), so that an estimate near zero does not spend the cap.
    max_episodes : int, optional
        The cap of each value's episodes (default :data:`MAX_EPISODES_FACTOR` ``* episodes``), at least
        ``episodes``.
    lbr : int, optional
        Playouts per legal action of a local best response that continues with the race's winner
        (``"lbr (<winner>)"``), raced against the winner on ``selection_episodes`` of their own; ``game`` must be
        an OpenSpiel game whose actions every player sees. None: none.

    Examples
    --------
    Matching pennies as a stand-in game (a "policy" is the action it plays; ``play`` is exact): against the
    uniform meta-strategy nobody gains (the estimate is 0 up to its sampling error), against a pure one the
    second player gains 2.

    >>> from solvers import make_equilibrium
    >>> from games import catalog
    >>> from psro.oracles import BestResponse
    >>> pennies = catalog.matching_pennies().payoffs
    >>> play = lambda game, profile, count, seed: np.tile(pennies[:, profile[0], profile[1]], (count, 1))
    >>> pops = [[0, 1], [0, 1]]
    >>> def respond(player, target, index):   # the pure best response to the other's marginal
    ...     other = target.mixtures[1 - player]
    ...     values = pennies[0] @ other if player == 0 else other @ pennies[1]
    ...     return BestResponse(player, int(np.argmax(values)), float(values.max()))
    >>> uniform = make_equilibrium(catalog.matching_pennies(), joint=np.full((2, 2), 0.25), concept="nash",
    ...                            method="example")
    >>> result = approximate_gap(None, "product", uniform, pops, respond, episodes=400, seed=0, iteration=0,
    ...                          play=play)
    >>> bool(result.gap <= 4 * result.stderr)    # the exact gap is 0
    True
    >>> pure = make_equilibrium(catalog.matching_pennies(), joint=np.array([[1.0, 0], [0, 0]]), concept="nash",
    ...                         method="example")
    >>> approximate_gap(None, "product", pure, pops, respond, episodes=100, seed=0, iteration=0, play=play).gap
    2.0

    With a standard-error target, noisy play gets more episodes until the error is small enough; noise that
    depends on the seed only (the deals of paired episodes) cancels in the paired differences, the policies' own
    does not:

    >>> actions = np.random.default_rng(1)
    >>> def noisy(game, profile, count, seed):
    ...     deals = np.random.default_rng(seed).normal(0, 4, (count, 2))
    ...     return play(game, profile, count, seed) + deals + actions.normal(0, 2, (count, 2))
    >>> result = approximate_gap(None, "product", pure, pops, respond, episodes=100, seed=0, iteration=0,
    ...                          play=noisy, stderr_target=0.1, max_episodes=10_000)
    >>> result.episodes, bool(result.stderr <= 0.1 * result.gap)
    (400, True)
    """
    if kind not in ("product", "cce", "ce"):
        raise ValueError(f"kind must be 'product', 'cce' or 'ce'; got {kind!r}.")
    if not isinstance(episodes, (int, np.integer)) or episodes < 2:
        raise ValueError(f"episodes must be an int >= 2 (a standard error needs two episodes); got {episodes!r}.")
    selection_episodes = episodes if selection_episodes is None else selection_episodes
    if not isinstance(selection_episodes, (int, np.integer)) or selection_episodes < 1:
        raise ValueError(f"selection_episodes must be a positive int; got {selection_episodes!r}.")
    max_episodes = check_stderr_target(stderr_target, max_episodes, episodes)
    rng = np.random.default_rng(approximate_seed(seed, iteration))
    joint = np.asarray(solution.joint, dtype=np.float64)
    if kind == "product":
        joint = _outer([np.asarray(m, dtype=np.float64) for m in solution.marginals])
    meta_payoffs = np.zeros((len(populations), *joint.shape)) if payoffs is None else \
        np.asarray(payoffs, dtype=np.float64)
    plans, tried = [], []
    for p in range(len(populations)):
        for i, target in enumerate(meta_targets(solution, kind, populations, meta_payoffs, p)):
            if target.is_joint:
                profiles, weights = np.array(target.profiles), np.asarray(target.weights)
            else:
                profiles, weights = _support(joint.sum(axis=p, keepdims=True))
            mine = None if ready is None else ready(p, i, target)
            candidates = _candidates(p, i, target, populations[p], respond, profiles, weights, payoffs,
                                     (fresh, warm_start), variants or (lambda policy: []), mine,
                                     train is True or (train == "auto" and mine is None))
            race = _race(game, populations, profiles, weights, p, int(rng.integers(2 ** 63)), play)
            winner, values = successive_halving(list(enumerate(policy for _, policy in candidates)), race,
                                                selection_episodes)
            if lbr is not None:   # (one step of lookahead over the winner, against it on episodes of their own)
                name, base = candidates[winner]
                local = _local_best_response(game, p, populations, profiles, weights, base, lbr,
                                             (seed, iteration, p, i))
                race = _race(game, populations, profiles, weights, p, int(rng.integers(2 ** 63)), play)
                better, pair = successive_halving([(0, base), (1, local)], race, selection_episodes)
                candidates, values = [*candidates, (f"lbr ({name})", local)], [*values, pair[1]]
                winner = len(candidates) - 1 if better == 1 else winner
            tried.append(tuple(Candidate(name, float(v)) for (name, _), v in zip(candidates, values)))
            plans.append((p, float(target.mass), profiles, weights, *candidates[winner]))
    samples, done, size = None, 0, episodes
    while True:   # (rounds of episodes, doubling, until the standard error meets its target or the cap)
        samples = _more_samples(game, kind, populations, joint, plans, size, rng, play, samples)
        done += size
        total, stderr, terms = _estimate(kind, plans, samples)
        if stderr_target is None or done >= max_episodes or stderr <= max(stderr_target * total, stderr_floor) \
                or total <= 2 * stderr:   # (met, capped, or not clearly above zero: more episodes only narrow 0)
            break
        size = min(done, max_episodes - done)
    return ApproximateGap(gap=max(total, 0.0), stderr=stderr, terms=terms, unclipped=total, candidates=tuple(tried),
                          episodes=done)


def nash_conv_lower_bound(game, profile: Sequence, *, episodes: int = 2000, rollouts: int = 32, seed: int = 0,
                          stderr_target: float | None = 0.25):
    """A lower bound of the NashConv of a policy ``profile`` (one policy per seat, of any kind the environment
    plays: networks, tabular, OpenSpiel's ``policy.Policy``) without the game tree: each seat's local best
    response against the others' policies, raced against the seat's own policy, valued on paired episodes
    (:func:`approximate_gap` with one member per population and no training). For OpenSpiel
    games whose actions every player sees.

    Returns
    -------
    ApproximateGap
        ``gap`` the estimate, ``stderr`` its standard error, ``terms`` each seat's values.

    Examples
    --------
    Kuhn poker's uniform profile has NashConv 11/12 (OpenSpiel's ``exploitability.nash_conv``):

    >>> import pyspiel
    >>> from psro.policies import UniformPolicy
    >>> result = nash_conv_lower_bound(pyspiel.load_game("kuhn_poker"), [UniformPolicy(2)] * 2, rollouts=16)
    >>> bool(0.8 < result.gap <= 11 / 12 + 3 * result.stderr)
    True

    OpenSpiel's own policies play too (their ``action_probabilities`` dicts are read as they are):

    >>> from open_spiel.python import policy
    >>> game = pyspiel.load_game("leduc_poker")
    >>> uniform = policy.UniformRandomPolicy(game)
    >>> result = nash_conv_lower_bound("leduc_poker", [uniform, uniform], rollouts=16)
    >>> bool(3.5 < result.gap <= 4.7472 + 3 * result.stderr)    # exploitability.nash_conv: 4.7472
    True
    """
    import pyspiel

    from games import NormalFormGame
    from solvers import make_equilibrium

    game = pyspiel.load_game(game) if isinstance(game, str) else game
    players = game.num_players()
    if len(profile) != players:
        raise ValueError(f"profile must hold one policy per seat ({players}); got {len(profile)}.")
    shape = (players,) + (1,) * players
    solution = make_equilibrium(NormalFormGame(np.zeros(shape)), joint=np.ones(shape[1:]), concept="nash",
                                method="profile")
    return approximate_gap(game, "product", solution, [[policy] for policy in profile], lambda *args: None,
                           episodes=episodes, seed=seed, iteration=0, train=False, lbr=rollouts,
                           stderr_target=stderr_target)


def successive_halving(arms: Sequence, returns: Callable, episodes: int) -> tuple:
    """``(winner, means)``: the arm with the best mean return after successive halving (Karnin, Koren & Somekh
    2013), and each arm's mean over the episodes it played. Over ``r = ceil(log2 n)`` rounds for ``n`` arms, every
    arm still in plays up to ``episodes / 2 ** (r - k)`` episodes in round ``k`` (``returns(arm, count)`` gives
    ``count`` more) and the better half goes on, so the last two are compared on ``episodes`` each, as when every
    arm plays them all, for about half the episodes of that with seven arms. Ties go to the earlier arm.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> winner, means = successive_halving([0.1, 0.5, 0.2, 0.45, 0.0], lambda mean, k: rng.normal(mean, 0.1, k), 64)
    >>> winner, [round(m, 2) for m in means]
    (1, [0.07, 0.49, 0.21, 0.45, 0.03])
    """
    played = [np.empty(0) for _ in arms]
    alive = list(range(len(arms)))
    counts = halving_counts(len(arms), episodes)
    for k, count in enumerate(counts, start=1):
        for arm in alive:
            played[arm] = np.concatenate([played[arm], returns(arms[arm], count - len(played[arm]))])
        means = [float(played[arm].mean()) for arm in alive]
        order = sorted(range(len(alive)), key=lambda i: -means[i])   # (stable: ties keep the earlier arm first)
        alive = sorted(alive[i] for i in order[:max(1, math.ceil(len(alive) / 2))]) if k < len(counts) else \
            [alive[order[0]]]
    return alive[0], [float(r.mean()) for r in played]


def _race(game, populations: Sequence, profiles, weights, seat: int, key: int, play) -> Callable:
    """The ``returns(arm, count)`` of :func:`successive_halving` for arms ``(index, policy)`` in ``seat``: an arm's
    episodes ``n .. n + count - 1`` are drawn from ``(key, n)``, so the arms of one round play the same opponents on
    the same deals with the same random numbers (paired: the race compares the responses, not their luck)."""
    played: dict = {}

    def returns(arm, count):
        index, policy = arm
        start = played.get(index, 0)
        played[index] = start + count
        draw = _draw(np.random.default_rng([key, start]), weights, count)
        return paired_draw(game, populations, profiles, draw, seat=seat, policy=policy, play=play)[:, seat]

    return returns


def _more_samples(game, kind: str, populations, joint, plans: list, size: int, rng, play, samples) -> dict:
    """``samples`` (None at first) with ``size`` more episodes of every value in the estimate: the meta-strategy's
    (``"on"``, all players' returns; per target ``"conditional"`` for CE targets) and each winner's (``"response"``,
    its seat's returns). Product and CCE: each winner's episode ``j`` replays the meta-strategy's episode ``j``
    (the same profile, the same deal) with the winner in its seat."""
    if kind == "ce":
        new = {"on": None, "response": [], "conditional": []}
        for p, _, profiles, weights, _, policy in plans:
            new["response"].append(mixture_returns(game, populations, profiles, weights, size, rng, seat=p,
                                                   policy=policy, play=play)[:, p])
            new["conditional"].append(mixture_returns(game, populations, profiles, weights, size, rng,
                                                      play=play)[:, p])
    else:
        profiles, weights = _support(joint)
        draw = _draw(rng, weights, size)
        new = {"on": paired_draw(game, populations, profiles, draw, play=play),
               "response": [paired_draw(game, populations, profiles, draw, seat=p, policy=policy, play=play)[:, p]
                            for p, _, _, _, _, policy in plans],
               "conditional": [None] * len(plans)}
    if samples is None:
        return new
    join = (lambda a, b: None if a is None else np.concatenate([a, b]))
    return {"on": join(samples["on"], new["on"]),
            "response": [join(a, b) for a, b in zip(samples["response"], new["response"])],
            "conditional": [join(a, b) for a, b in zip(samples["conditional"], new["conditional"])]}


def _estimate(kind: str, plans: list, samples: dict) -> tuple:
    """``(unclipped estimate, standard error, terms)`` of the samples (module docstring)."""
    terms, gains, variance, differences = [], [], [], []
    for (p, mass, _, _, winner, _), response, conditional in zip(plans, samples["response"],
                                                                 samples["conditional"]):
        value = float((conditional if kind == "ce" else samples["on"][:, p]).mean())
        gain = float(response.mean()) - value
        terms.append((p, mass, float(response.mean()), value, winner))
        gains.append(mass * (gain if kind == "product" else max(gain, 0.0)))
        if kind == "ce":
            variance.append(mass ** 2 * (_mean_variance(response) + _mean_variance(conditional)))
        else:
            differences.append(mass * (response - samples["on"][:, p]))
    if kind == "product":   # (the per-episode sum of the paired gains)
        variance.append(_mean_variance(np.sum(differences, axis=0)))
    stderr = math.sqrt(np.sum(variance)) if kind != "cce" else \
        float(np.sum([math.sqrt(_mean_variance(d)) for d in differences]))
    return float(np.sum(gains)), float(stderr), tuple(terms)


def _local_best_response(game, player: int, populations, profiles, weights, continuation, rollouts: int, key: tuple):
    from psro.measures.local_best_response import LocalBestResponse

    return LocalBestResponse(game, player, populations, profiles, weights, continuation, rollouts=rollouts,
                             seed=_keyed_seed(*key))


def _candidates(player: int, index: int, target, population, respond: Callable, profiles, weights, payoffs,
                learned: tuple, variants: Callable, ready=None, train: bool = True) -> list:
    """``(source, policy)`` for every candidate response of ``player`` to ``target`` (see the module docstring):
    the best member (every member without ``payoffs``), the ``ready`` response and, when ``train``, the fresh and
    warm-started ones that ``learned`` ``(fresh, warm_start)`` asks for (``respond``'s index ``2 index`` and
    ``2 index + 1``), each with its ``variants``."""
    size = len(population.policies if hasattr(population, "policies") else population)
    if payoffs is None:
        best, members = 0, range(size)
    else:
        best = int(np.argmax(member_values(payoffs, player, profiles, weights)))
        members = [best]
    out = [(f"member {m}", _member(population, m)) for m in members]
    fresh, warm_start = learned
    calls = [("fresh", target, 0)] if fresh and train else []
    if warm_start and train:
        calls.append(("warm", dataclasses.replace(target, initial_policy=_member(population, best)), 1))
    responses = [] if ready is None else [("step", ready)]
    for name, call, k in calls:
        br = respond(player, call, 2 * index + k)
        if br is not None:
            responses.append((name, br.policy))
    for name, policy in responses:
        out.append((name, policy))
        out.extend((f"{name} ({variant})", other) for variant, other in variants(policy))
    return out


def response_variants(policy) -> list:
    """The greedy version of a softmax network (a best response can be deterministic, and a network that learned
    the right action may still sample the wrong one), as ``[("greedy", policy)]``; nothing for other policies.

    Examples
    --------
    >>> from psro.oracles.learned.networks import NeuralPolicy
    >>> [(name, p.mode) for name, p in response_variants(NeuralPolicy(3, 2, hidden=(4,)))]
    [('greedy', 'greedy')]
    >>> response_variants(NeuralPolicy(3, 2, hidden=(4,), mode="greedy"))
    []
    """
    if getattr(policy, "mode", None) == "softmax" and hasattr(policy, "copy"):
        return [("greedy", policy.copy(mode="greedy"))]
    return []


def oracle_responder(oracle, iteration: int, *, warm_start: bool = True) -> Callable:
    """The ``respond`` of :func:`approximate_gap` from a learned oracle: ``oracle.respond(player, target,
    key=(iteration, index))``; a warm start (a target with an ``initial_policy``) only from a network the same
    oracle trained (``provenance.oracle``) and only when ``warm_start``, else None (no candidate).

    Examples
    --------
    >>> from psro.policies.acting import UniformPolicy
    >>> from psro.oracles.base import Target
    >>> class Echo:   # a stand-in oracle
    ...     name = "ppo"
    ...     def respond(self, player, target, *, key):
    ...         return key
    >>> respond = oracle_responder(Echo(), 3)
    >>> target = Target(player=0, populations=[], mixtures=())
    >>> respond(0, target, 4), respond(0, dataclasses.replace(target, initial_policy=UniformPolicy(2)), 5)
    ((3, 4), None)
    """
    def respond(player, target, index):
        initial = getattr(target, "initial_policy", None)
        if initial is not None and not (warm_start and getattr(getattr(initial, "provenance", None), "oracle", None)
                                        == oracle.name and hasattr(initial, "to_arrays")):
            return None
        return oracle.respond(player, target, key=(iteration, index))

    return respond


def measure_with_oracle(game, kind: str, solution, populations: Sequence, oracle, settings: dict, *, seed: int,
                        iteration: int, payoffs: np.ndarray | None = None, counter=None, ready=None,
                        train=None, payoff_range: float = 2.0) -> ApproximateGap:
    """:func:`approximate_gap` with a learned ``oracle`` (:func:`oracle_responder`), the candidates' greedy
    variants (:func:`response_variants`) and ``settings`` (:func:`approx_gap_settings`): what the training loops
    measure. ``counter`` (a :class:`psro.loop.state.EpisodeCounter`) counts the episodes it plays, the responses'
    training and evaluation included; ``ready`` as in :func:`approximate_gap`; ``train`` overrides
    ``settings["train"]``; ``payoff_range`` (one player's highest minus lowest return) sets the standard error
    that is always small enough (:data:`STDERR_FLOOR` of it). It logs at INFO when it starts (what it will play)
    and when it ends (the estimate and its cost).

    Examples
    --------
    >>> import pyspiel
    >>> from psro.oracles.learned.oracle import make_learned_oracle
    >>> from psro.policies.population import PolicyPopulation, Provenance
    >>> from psro.policies.acting import UniformPolicy
    >>> from solvers import make_equilibrium
    >>> from games import NormalFormGame
    >>> game = pyspiel.load_game("kuhn_poker")
    >>> pops = [PolicyPopulation(p, 2) for p in range(2)]
    >>> _ = [pop.add(UniformPolicy(2), Provenance(0, "initial")) for pop in pops]
    >>> uniform = make_equilibrium(NormalFormGame(np.array([[[0.125]], [[-0.125]]])), joint=np.ones((1, 1)),
    ...                            concept="nash", method="example")
    >>> oracle = make_learned_oracle("ppo", None, game=game, total_steps=2048, eval_episodes=10)
    >>> from psro.measures.approx_gap_settings import approx_gap_settings
    >>> settings, _ = approx_gap_settings({}, {"episodes": 1000}, "ppo")
    >>> result = measure_with_oracle(game, "product", uniform, pops, oracle, settings, seed=0, iteration=0)
    >>> bool(0.5 < result.gap <= 11 / 12 + 3 * result.stderr)   # Kuhn's uniform profile: NashConv 11/12
    True
    """
    respond = oracle_responder(oracle, iteration, warm_start=settings["warm_start"])
    if counter is not None:
        inner = respond

        def respond(player, target, index):
            response = inner(player, target, index)
            return response if response is None else counter.response(response)

    train = settings["train"] if train is None else train
    start, cpu = time.perf_counter(), time.process_time()
    logger.info("approx_gap of iteration %d: measuring (oracle %s, training %s, %d episodes per value%s)", iteration,
                getattr(oracle, "name", type(oracle).__name__),
                {True: "fresh responses", False: "nothing", "auto": "where the step's responses do not answer"}[train],
                int(settings["episodes"]), "" if settings["stderr_target"] is None else
                f" until stderr <= {settings['stderr_target']:g} x estimate, at most "
                f"{check_stderr_target(settings['stderr_target'], settings['max_episodes'], settings['episodes'])}")
    result = approximate_gap(game, kind, solution, populations, respond,
                             episodes=int(settings["episodes"]), selection_episodes=settings["selection_episodes"],
                             seed=seed, iteration=iteration, payoffs=payoffs, warm_start=settings["warm_start"],
                             fresh=settings["fresh"],
                             variants=response_variants, play=None if counter is None else counter.play,
                             ready=ready, train=train, stderr_target=settings["stderr_target"],
                             stderr_floor=STDERR_FLOOR * float(payoff_range), max_episodes=settings["max_episodes"],
                             lbr=settings["lbr"])
    logger.info("approx_gap of iteration %d: %.4g +- %.2g (winners and their gains %s; %d episodes per value) in "
                "%.1f s wall, %.1f s CPU", iteration, result.gap, result.stderr,
                ", ".join(f"{term[4]} {term[2] - term[3]:+.3g}" for term in result.terms),
                result.episodes, time.perf_counter() - start, time.process_time() - cpu)
    return result


def _mean_variance(samples: np.ndarray) -> float:
    """The variance of the mean of ``samples`` (NaN from a single sample)."""
    return float(samples.var(ddof=1) / samples.size) if samples.size > 1 else math.nan


def _outer(marginals: Sequence) -> np.ndarray:
    joint = np.ones(())
    for m in marginals:
        joint = np.multiply.outer(joint, m)
    return joint


#: The names this module re-exported before, each resolved with a DeprecationWarning (CHANGELOG.md)
__getattr__ = moved_names(__name__, {
    "APPROX_GAP_SETTINGS": "psro.measures.approx_gap_settings",
    "APPROX_GAP_STEPS": "psro.measures.approx_gap_settings",
    "APPROX_GAP_STEPS_FACTOR": "psro.measures.approx_gap_settings",
    "MAX_EPISODES_FACTOR": "psro.measures.approx_gap_settings",
    "RESPONSE_EVAL_EPISODES": "psro.measures.approx_gap_settings",
    "ApproxGapSettings": "psro.measures.approx_gap_settings",
    "approx_gap_settings": "psro.measures.approx_gap_settings",
    "unvalued": "psro.measures.approx_gap_settings",
    "approx_gap_due": "psro.measures.approx_gap_schedule",
    "approx_gap_mode": "psro.measures.approx_gap_schedule",
})
