"""The Monte Carlo top-up's bookkeeping: where a top-up stands (:class:`TopUpProgress`, what a checkpoint
keeps), and how the ``"support"`` rule weights and apportions episodes over profiles. The rounds themselves are
:meth:`psro.evaluation.monte_carlo.MonteCarloEvaluator.top_up_rounds`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from games.empirical import EmpiricalGame
from games.normal_form import product_distribution

__all__ = ["TOP_UP_METHODS", "TOP_UP_PROFILES_PER_ROUND", "TopUpProgress", "run_top_up", "support_weights"]


TOP_UP_METHODS = ("support", "response_graph_ucb")
TOP_UP_PROFILES_PER_ROUND = 128   # most profiles one round of a "support" top-up in rounds samples
_TOP_UP_KEY = 2 ** 31 - 1   # first spawn-key entry of top-up generators (segment keys start with a profile index)


@dataclass(frozen=True, eq=False)
class TopUpProgress:
    """How far :meth:`psro.evaluation.monte_carlo.MonteCarloEvaluator.top_up_rounds` has got: what a checkpoint
    keeps to resume it.

    Attributes
    ----------
    key : tuple of int
        The top-up it belongs to (the PSRO loop: ``(iteration,)``).
    round : int
        Rounds finished.
    spent : int
        Episodes of the finished rounds, plus those planned for a ``"support"`` round in progress.
    target : ndarray of int, optional
        During a ``"support"`` round: the count (per profile, the meta-game's
        shape) that the round brings every profile up to; None between rounds.
    strategy : ndarray, optional
        ``"support"``: the joint meta-strategy (the meta-game's shape) the rounds weight profiles by.
    """

    key: tuple = ()
    round: int = 0
    spent: int = 0
    target: np.ndarray | None = None
    strategy: np.ndarray | None = None


def support_weights(shape, strategy) -> np.ndarray:
    """How much each payoff enters the deviation payoffs of a meta-strategy: ``w[p, a] = P(a_{-p})``.

    Parameters
    ----------
    shape : tuple of int
        Strategies per player.
    strategy : Equilibrium, ndarray or sequence of ndarray
        A meta-strategy (its ``joint``), a joint distribution over profiles, or one mixed strategy per player.

    Returns
    -------
    ndarray, shape (num_players, *shape)

    Examples
    --------
    >>> support_weights((2, 2), [[1.0, 0.0], [0.25, 0.75]])[0].tolist()   # player 0: the column's probability
    [[0.25, 0.75], [0.25, 0.75]]
    """
    shape = tuple(int(k) for k in shape)
    joint = _as_joint(shape, strategy)
    return np.stack([np.broadcast_to(joint.sum(axis=p, keepdims=True), shape) for p in range(len(shape))])


def _as_joint(shape: tuple, strategy) -> np.ndarray:
    """The joint distribution of a strategy given as an Equilibrium, a joint or one mixture per player (validated)."""
    shape = tuple(int(k) for k in shape)
    joint = getattr(strategy, "joint", strategy)
    if isinstance(joint, (list, tuple)):
        if len(joint) != len(shape):
            raise ValueError(f"strategy needs one mixed strategy per player ({len(shape)}); got {len(joint)}.")
        joint = product_distribution([np.asarray(m, dtype=np.float64) for m in joint])
    joint = np.asarray(joint, dtype=np.float64)
    if joint.shape != shape or np.any(joint < -1e-12) or not np.isclose(joint.sum(), 1.0, atol=1e-6):
        raise ValueError(f"strategy must be a probability distribution over the {shape} profiles; "
                         f"got shape {joint.shape}.")
    return joint


def _support_allocation(meta_game: EmpiricalGame, weight: np.ndarray, episodes: int,
                        max_profiles: int | None = None) -> np.ndarray:
    """``episodes`` apportioned to profiles by ``sum_p w_p(a) * standard_error_p(a)`` (the meta-game's shape).

    Profiles whose error is unknown (one sample) come first: when any has weight, only they get episodes.
    With ``max_profiles``, episodes go in quanta of ``ceil(episodes / max_profiles)`` (the remainder to the
    profile with the largest score), so at most about ``max_profiles`` profiles get any.
    """
    out = np.zeros(meta_game.shape, dtype=np.int64)
    if episodes <= 0:
        return out
    se = np.nan_to_num(meta_game.standard_error(), nan=np.inf)
    score = (weight * np.where(weight > 0, se, 0.0)).sum(axis=0).ravel()
    if not np.isfinite(score).all():      # a profile with a single sample: its error is unknown
        score = np.where(np.isfinite(score), 0.0, 1.0) * (weight.sum(axis=0).ravel() > 0)
    if score.sum() <= 0:
        return out
    quantum = 1 if max_profiles is None else max(1, -(-episodes // max_profiles))
    units = _apportion(score / score.sum(), episodes // quantum) * quantum
    units[int(np.argmax(score))] += episodes - int(units.sum())
    return units.reshape(meta_game.shape)


def _check_top_up_game(meta_game: EmpiricalGame, populations) -> None:
    shape = tuple(len(pop) for pop in populations)
    if tuple(meta_game.shape) != shape:
        raise ValueError(f"meta_game has shape {meta_game.shape} but the populations have sizes {shape}.")
    if meta_game.exact.any():
        raise ValueError("meta_game has exact (set_exact) profiles; top_up needs sampled statistics only.")


def _apportion(weights: np.ndarray, total: int) -> np.ndarray:
    """Integers proportional to ``weights`` summing to ``total`` (largest remainders; ties to lower indices)."""
    raw = weights * total
    out = np.floor(raw).astype(np.int64)
    left = total - int(out.sum())
    if left > 0:
        order = np.argsort(-(raw - out), kind="stable")
        out[order[:left]] += 1
    return out


def run_top_up(evaluator, state, episodes: int, method: str, rounds: int, iteration: int, solve, on_batch) -> None:
    """The loop's top-up of iteration ``iteration``: ``episodes`` more episodes in ``rounds`` resumable rounds
    (:meth:`psro.evaluation.monte_carlo.MonteCarloEvaluator.top_up_rounds`), its progress kept in ``state.top_up``
    (a :class:`psro.loop.state.LoopState`).

    The progress (round, episodes, the ``"support"`` meta-strategy, which ``solve(meta_game)`` gives once per
    iteration, and a round's target counts) is stored before any episode of a round is played, so a checkpoint
    written by ``on_batch`` resumes the top-up at the batch where it stopped. Episode streams come from the
    evaluator's seed and each profile's episode numbers; ResponseGraphUCB rounds from ``(seed, iteration, round)``.
    """
    def keep(progress: TopUpProgress) -> None:
        state.top_up = progress

    state.top_up = evaluator.top_up_rounds(
        state.meta_game, state.populations, episodes, method=method, rounds=rounds, key=(iteration,),
        strategy=solve if method == "support" else None, progress=state.top_up, on_progress=keep,
        on_batch=on_batch)
