"""The approximate gap of a meta-strategy: fresh learned best responses and sampled play, with a standard error.

On a game whose tree does not fit, the exact gap (NashConv, CCE or CE gap) cannot be computed; deep-PSRO papers
report this estimate instead. For every best-response target the meta-strategy defines
(:func:`psro.meta.targets.meta_targets`) a fresh best response is trained with a fixed budget, and

* its value is the mean of its seat's returns over ``episodes`` fresh episodes against opponent profiles drawn
  from the target (the others' meta-strategy marginals, or the conditional joint);
* the meta-strategy's own value is the mean return over ``episodes`` fresh episodes of profiles drawn from the
  meta-strategy (for CE targets: from the joint conditioned on the recommendation).

Then, with ``BR`` the response values and ``v`` the on-policy values,

* PSRO (product): ``sum_p (BR_p - v_p)``;
* CCE: ``sum_p max(0, BR_p - v_p)``;
* CE: ``sum_p sum_i P(i) max(0, BR_{p,i} - v_{p,i})``.

The learned response only bounds the true best response from below, so the estimate is a lower bound of the gap
up to its sampling error. The standard error is the Monte Carlo one of the terms before clipping at zero
(clipping can only narrow a term's spread, so it is conservative for CCE and CE): the responses' episodes are
independent of the meta-strategy's, and the meta-strategy's values of all players come from the same episodes,
so their sum's error is that of the per-episode sum of returns (zero in a constant-sum game).

Every random choice is derived from ``(seed, iteration, "approx_gap")`` (:func:`approximate_seed`): the
profiles drawn for each sampled value and the seeds of their episodes. It never touches the run's own random
generator, so measuring it (or not) leaves the run unchanged.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from psro.meta.targets import SUPPORT_TOL, meta_targets

__all__ = ["APPROX_GAP_KEY", "ApproximateGap", "approximate_gap", "approximate_seed", "mixture_returns",
           "responder_seed"]

#: The key that separates the approximate gap's random streams from the run's (the CRC-32 of "approx_gap")
APPROX_GAP_KEY = zlib.crc32(b"approx_gap")


@dataclass(frozen=True)
class ApproximateGap:
    """An approximate gap and its parts.

    Attributes
    ----------
    gap : float
        The estimate (see the module docstring).
    stderr : float
        Its Monte Carlo standard error (of the terms before clipping at zero).
    terms : tuple of tuple
        One ``(player, mass, response_value, on_policy_value)`` per target, the sampled values.
    """

    gap: float
    stderr: float
    terms: tuple


def approximate_seed(seed: int, iteration: int) -> int:
    """The root seed of the approximate gap measured at ``iteration`` of a run seeded ``seed``.

    Examples
    --------
    >>> approximate_seed(0, 3) == approximate_seed(0, 3) != approximate_seed(0, 4)
    True
    """
    sequence = np.random.SeedSequence(int(seed), spawn_key=(APPROX_GAP_KEY, int(iteration)))
    return int(sequence.generate_state(1, dtype=np.uint32)[0])


def responder_seed(seed: int) -> int:
    """The run seed of the approximate gap's best-response oracle (its calls are keyed by ``(iteration, index)``
    on top of it, as the run's own oracle's are).

    Examples
    --------
    >>> responder_seed(0) != 0
    True
    """
    sequence = np.random.SeedSequence(int(seed), spawn_key=(APPROX_GAP_KEY,))
    return int(sequence.generate_state(1, dtype=np.uint32)[0])


def mixture_returns(game, populations: Sequence, profiles: np.ndarray, weights: np.ndarray, episodes: int,
                    rng: np.random.Generator, *, seat: int | None = None, policy=None,
                    play: Callable | None = None) -> np.ndarray:
    """Returns ``(episodes, num_players)`` of episodes whose profiles are drawn from a distribution over
    population profiles (``seat``, when given, is played by ``policy`` instead).

    How many episodes each profile gets is one multinomial draw from ``rng``; each profile's episodes are
    ``play(game, policies, count, seed)`` (default :func:`psro.evaluation.env_play.sample_returns`) with a seed
    from ``rng``, so the rows are i.i.d. episodes of the mixture.

    Examples
    --------
    >>> pops = [[0.0, 1.0], [0.0, 1.0]]        # stand-ins: a "policy" is its payoff to the row player
    >>> play = lambda game, profile, count, seed: np.tile([profile[0] - profile[1], 0.0], (count, 1))
    >>> r = mixture_returns(None, pops, np.array([[0, 0], [1, 0]]), np.array([0.5, 0.5]), 1000,
    ...                     np.random.default_rng(0), play=play)
    >>> r.shape, bool(abs(r[:, 0].mean() - 0.5) < 0.05)
    ((1000, 2), True)
    """
    if play is None:
        from psro.evaluation.env_play import sample_returns as play
    profiles = np.asarray(profiles, dtype=np.int64)
    weights = np.asarray(weights, dtype=np.float64)
    counts = rng.multinomial(int(episodes), weights / weights.sum())
    seeds = rng.integers(0, 2 ** 32, size=len(profiles), dtype=np.uint64)
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


def approximate_gap(game, kind: str, solution, populations: Sequence, respond: Callable, *, episodes: int,
                    seed: int, iteration: int, play: Callable | None = None) -> ApproximateGap:
    """The approximate gap of ``solution`` (see the module docstring).

    Parameters
    ----------
    game
        What ``play`` plays (a pyspiel game or an environment).
    kind : {"product", "cce", "ce"}
    solution : solvers.Equilibrium
        The meta-strategy (its ``marginals``, or its ``joint`` for JPSRO).
    populations : sequence of PolicyPopulation
    respond : callable
        ``respond(player, target, index) -> BestResponse``: a fresh best response (its ``policy`` plays).
    episodes : int
        Episodes of each sampled value.
    seed, iteration : int
        Derive every random choice (:func:`approximate_seed`).
    play : callable, optional
        As in :func:`mixture_returns`.

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
    >>> bool(abs(result.gap) < 4 * result.stderr)    # the exact gap is 0
    True
    >>> pure = make_equilibrium(catalog.matching_pennies(), joint=np.array([[1.0, 0], [0, 0]]), concept="nash",
    ...                         method="example")
    >>> approximate_gap(None, "product", pure, pops, respond, episodes=100, seed=0, iteration=0, play=play).gap
    2.0
    """
    if kind not in ("product", "cce", "ce"):
        raise ValueError(f"kind must be 'product', 'cce' or 'ce'; got {kind!r}.")
    rng = np.random.default_rng(approximate_seed(seed, iteration))
    n = len(populations)
    joint = np.asarray(solution.joint, dtype=np.float64)
    if kind == "product":
        joint = _outer([np.asarray(m, dtype=np.float64) for m in solution.marginals])
    payoffs = np.zeros((n, *joint.shape))   # (the on-policy values are sampled below, not read from here)
    on_policy = None
    if kind != "ce":
        on_policy = mixture_returns(game, populations, *_support(joint), episodes, rng, play=play)
    terms, gains, variance = [], [], []
    for p in range(n):
        for i, target in enumerate(meta_targets(solution, kind, populations, payoffs, p)):
            br = respond(p, target, i)
            if target.is_joint:
                profiles, weights = np.array(target.profiles), np.asarray(target.weights)
            else:
                profiles, weights = _support(joint.sum(axis=p, keepdims=True))
            response = mixture_returns(game, populations, profiles, weights, episodes, rng, seat=p,
                                       policy=br.policy, play=play)[:, p]
            if kind == "ce":
                conditional = mixture_returns(game, populations, profiles, weights, episodes, rng, play=play)[:, p]
                value = float(conditional.mean())
            else:
                conditional, value = None, float(on_policy[:, p].mean())
            gain = float(response.mean()) - value
            terms.append((p, float(target.mass), float(response.mean()), value))
            gains.append(target.mass * (gain if kind == "product" else max(gain, 0.0)))
            variance.append(target.mass ** 2 * _mean_variance(response))
            if conditional is not None:
                variance.append(target.mass ** 2 * _mean_variance(conditional))
    if on_policy is not None:
        variance.append(_mean_variance(on_policy.sum(axis=1)))
    return ApproximateGap(gap=float(np.sum(gains)), stderr=float(math.sqrt(np.sum(variance))), terms=tuple(terms))


def _mean_variance(samples: np.ndarray) -> float:
    """The variance of the mean of ``samples`` (NaN from a single sample)."""
    return float(samples.var(ddof=1) / samples.size) if samples.size > 1 else math.nan


def _outer(marginals: Sequence) -> np.ndarray:
    joint = np.ones(())
    for m in marginals:
        joint = np.multiply.outer(joint, m)
    return joint
