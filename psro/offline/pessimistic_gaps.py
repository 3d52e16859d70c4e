"""The pessimistic equilibrium gap of a candidate solution, from an offline dataset alone.

Zhang, Bai & Jiang (2023) judge a candidate offline with value *intervals*:
an upper bound for the value of every deviation and a lower bound for the
candidate's own value. The **relaxed gap** of a player is its best deviation's
upper bound minus the candidate's lower bound; if each bound holds, it is at
least the player's true gain from deviating.

Here the bounds are those of :class:`games.offline_model.GameModel` (see
:mod:`games.offline_model`: every chance history's distribution within an L1
ball of its empirical one, untried actions and unseen outcomes worth the
utility bounds), which hold for every profile at once with probability at
least ``1 - delta`` over the draw of the data, whatever the behaviour policy and
whether or not the data cover the candidate. The candidate's value is bounded
by robust backward induction (:meth:`~games.offline_model.GameModel.count_interval`);
the best deviation's by :meth:`~games.offline_model.GameModel.deviation_interval`:
above by the exact best response on the model's tree to the optimistic
(additive) bound, or by a deviator who sees the whole history, whichever is
smaller; below by the robust value of best responses that exist. Bounds are
clipped to the game's utility range.

Concepts (``gap`` sums the players' relaxed gaps, NashConv-style; ``max_gap``
is the largest player's, the form Zhang et al. state):

* ``"nash"``: the candidate is a product (one policy, or one mixture
  ``[(weight, policy), ...]``, per player); a player's gap is
  ``upper(best deviation against the others) - lower(candidate)``, so
  ``gap >= NashConv``.
* ``"cce"``: the candidate is a joint (``[(weight, profile), ...]`` or
  ``(populations, joint_array)``); the deviation is one policy against the
  joint's other players, unconditional; a player's gap is clipped at 0, so
  ``gap >= `` the CCE gap of :func:`psro.measures.metrics.joint_gap`.
* ``"ce"``: the deviator sees its own recommendation, **a policy of its**
  (normal-form granularity: the population member, or for a list of profiles
  the player's policy, grouped when equal) and may answer each with any
  policy of the game; a player's gap is the sum over recommendations of the
  clipped relaxed gains, weighted by their probability, so ``gap >=`` the
  CE gap of :func:`psro.measures.metrics.joint_gap`.

``lower_gap`` is the mirror image (best deviation's lower bound minus the
candidate's upper bound, clipped at 0 per player or recommendation): a lower
confidence bound of the true gap. ``model_gap`` is the point estimate in the
count-based model.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from games.offline_model import GameModel, fit_model
from games.validation import check_real

__all__ = ["PessimisticGap", "covers", "pessimistic_gap"]

_CONCEPTS = ("nash", "cce", "ce")


@dataclass(frozen=True)
class PessimisticGap:
    """The pessimistic gap of a candidate and the bounds it is made from.

    Attributes
    ----------
    concept : str
        ``"nash"``, ``"cce"`` or ``"ce"``.
    gap : float
        The relaxed gap, summed over players (an upper confidence bound of the
        true NashConv / CCE gap / CE gap).
    max_gap : float
        The largest player's relaxed gap.
    lower_gap : float
        A lower confidence bound of the true gap (summed over players).
    model_gap : float
        The same gap in the count-based model (no widths, unknown leaves at the
        observed mean): a point estimate, not a bound.
    player_gaps : numpy.ndarray
        Each player's relaxed gap.
    candidate_lower, candidate_upper : numpy.ndarray
        Bounds of the candidate's value per player.
    deviation_lower, deviation_upper : numpy.ndarray
        Bounds of the best deviation's value per player (for ``"ce"``: summed
        over recommendations, each weighted by its probability).
    delta : float
        The bounds hold together with probability at least ``1 - delta``.
    covered : bool
        Whether the data cover every history the candidate and the deviations
        used here reach (:func:`covers`).
    deviations : tuple
        Per player, the tuple of its :class:`games.offline_model.Deviation` (one;
        for ``"ce"`` one per recommendation) that reached ``deviation_upper``.
    """

    concept: str
    gap: float
    max_gap: float
    lower_gap: float
    model_gap: float
    player_gaps: np.ndarray
    candidate_lower: np.ndarray
    candidate_upper: np.ndarray
    deviation_lower: np.ndarray
    deviation_upper: np.ndarray
    delta: float
    covered: bool
    deviations: tuple = field(repr=False)


def _components(candidate, concept: str, num_players: int) -> list[tuple[float, list, tuple]]:
    """The candidate as ``[(weight, profile, recommendation keys)]``; keys identify each player's policy."""
    if isinstance(candidate, tuple) and len(candidate) == 2 and isinstance(candidate[1], np.ndarray):
        populations, joint = candidate
        joint = np.asarray(joint, dtype=np.float64)
        if len(populations) != num_players or joint.shape != tuple(len(p) for p in populations):
            raise ValueError(
                f"candidate (populations, joint): joint has shape {joint.shape}; expected one axis per player "
                f"of the population sizes {tuple(len(p) for p in populations)}."
            )
        out = [(float(joint[idx]), [populations[p][i] for p, i in enumerate(idx)], idx)
               for idx in itertools.product(*(range(len(p)) for p in populations)) if joint[idx] > 0]
        return _normalised(out)
    if not isinstance(candidate, (list, tuple)) or not candidate:
        raise ValueError("candidate must be a profile (one policy per player), a joint [(weight, profile), ...] "
                         "or (populations, joint_array).")
    if all(_is_weighted(e) for e in candidate):  # a joint over profiles
        return _normalised([(float(w), list(p), None) for w, p in candidate])
    if len(candidate) != num_players:
        raise ValueError(f"candidate profile has {len(candidate)} entries; expected one per player ({num_players}).")
    mixtures = [list(e) if isinstance(e, list) and e and all(_is_weighted(x) for x in e) else [(1.0, e)]
                for e in candidate]
    out = []
    for idx in itertools.product(*(range(len(m)) for m in mixtures)):
        weight = float(np.prod([mixtures[p][i][0] for p, i in enumerate(idx)]))
        if weight > 0:
            out.append((weight, [mixtures[p][i][1] for p, i in enumerate(idx)], idx))
    return _normalised(out)


def _is_weighted(entry) -> bool:
    return isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], (int, float, np.floating))


def _normalised(components: list) -> list:
    weights = np.array([w for w, _, _ in components])
    if not len(weights) or not np.isfinite(weights).all() or (weights < 0).any() or weights.sum() <= 0:
        raise ValueError("candidate weights must be finite, non-negative and not all zero.")
    return [(w / weights.sum(), p, k) for w, p, k in components]


def _recommendations(model: GameModel, components: list, player: int) -> dict:
    """Component indices grouped by ``player``'s recommended policy."""
    groups: dict = {}
    for c, (_, profile, keys) in enumerate(components):
        key = ("index", keys[player]) if keys is not None else (
            "table", model._table(player, profile[player]).round(12).tobytes())
        groups.setdefault(key, []).append(c)
    return groups


def _as_model(dataset, game, members: int, seed: int) -> GameModel:
    if isinstance(dataset, GameModel):
        return dataset
    if isinstance(dataset, pd.DataFrame):
        return fit_model(dataset, members=members, seed=seed, game=game)
    raise TypeError(f"dataset must be a trajectory DataFrame or a fitted GameModel; got {type(dataset).__name__}.")


def pessimistic_gap(dataset, candidate, concept: str = "nash", game=None, *, delta: float = 0.05,
                    members: int = 0, seed: int = 0) -> PessimisticGap:
    """The pessimistic (relaxed) equilibrium gap of ``candidate`` from the dataset alone.

    Parameters
    ----------
    dataset : pandas.DataFrame or games.offline_model.GameModel
        A trajectory table (fitted here with ``fit_model(dataset, members, seed, game)``)
        or a model already fitted.
    candidate
        ``"nash"``: a profile, one policy per player (a policy as in
        :mod:`games.offline_model`, or a mixture ``[(weight, policy), ...]``).
        ``"cce"`` / ``"ce"``: a joint, ``[(weight, profile), ...]`` or
        ``(populations, joint)`` with ``populations[p]`` a list of policies and
        ``joint`` an array with one axis per player; a profile is also accepted
        (a joint of one profile, or of the product of its mixtures).
    concept : {"nash", "cce", "ce"}
    game : str or pyspiel.Game, optional
        Its declarations (utility range, actions) when ``dataset`` is a table.
    delta : float
        Confidence: every bound holds together with probability ``>= 1 - delta``.

    Returns
    -------
    PessimisticGap

    Examples
    --------
    >>> import pyspiel
    >>> from games.datasets import collect
    >>> game = pyspiel.load_game("kuhn_poker")
    >>> data = collect(game, pyspiel.UniformRandomPolicy(game), 1000, seed=0)
    >>> result = pessimistic_gap(data, [None, None], game=game)   # uniform play; its NashConv is 0.9167
    >>> bool(result.lower_gap <= 0.9167 <= result.gap), result.covered
    (True, True)
    """
    if concept not in _CONCEPTS:
        raise ValueError(f"concept must be one of {_CONCEPTS}; got {concept!r}.")
    delta = check_real(delta, "delta", minimum=0.0, maximum=1.0, strict=True)
    model = _as_model(dataset, game, members, seed)
    n = model.num_players
    components = _components(candidate, concept, n)
    cand_lo, cand_hi, dev_lo, dev_hi = (np.zeros(n) for _ in range(4))
    player_gaps, lower_gaps, model_gaps = np.zeros(n), np.zeros(n), np.zeros(n)
    deviations, profiles_reached = [], [(w, p) for w, p, _ in components]
    for player in range(n):
        groups = _recommendations(model, components, player) if concept == "ce" else {None: range(len(components))}
        mine = []
        for members_of in groups.values():
            part = [components[c] for c in members_of]
            mass = sum(w for w, _, _ in part)
            mixture = [(w / mass, p) for w, p, _ in part]
            candidate_interval = model.count_interval(mixture, delta)
            low, high = mass * candidate_interval.low[player], mass * candidate_interval.high[player]
            mean = mass * candidate_interval.values[0, player]
            d_lo, d_hi, upper = model.deviation_interval(player, mixture, delta)
            point = model.best_response(player, mixture, bound="mean")
            d_lo, d_hi = mass * d_lo, mass * d_hi  # the values are per unit of this recommendation's mass
            gain, gain_low, gain_mean = d_hi - low, d_lo - high, mass * point.value - mean
            if concept != "nash":
                gain, gain_low, gain_mean = max(gain, 0.0), max(gain_low, 0.0), max(gain_mean, 0.0)
            player_gaps[player] += gain
            lower_gaps[player] += gain_low
            model_gaps[player] += gain_mean
            cand_lo[player] += low
            cand_hi[player] += high
            dev_lo[player] += d_lo
            dev_hi[player] += d_hi
            mine.append(upper)
            profiles_reached += [(w, _replace(p, player, upper.policy)) for w, p in mixture]
        deviations.append(tuple(mine))
    if concept == "nash":
        lower_gaps = np.maximum(lower_gaps, 0.0)
    return PessimisticGap(
        concept=concept, gap=float(player_gaps.sum()), max_gap=float(player_gaps.max()),
        lower_gap=float(lower_gaps.sum()), model_gap=float(model_gaps.sum()), player_gaps=player_gaps,
        candidate_lower=cand_lo, candidate_upper=cand_hi, deviation_lower=dev_lo, deviation_upper=dev_hi,
        delta=delta, covered=not model.uncovered(profiles_reached, limit=1), deviations=tuple(deviations),
    )


def _replace(profile: list, player: int, policy) -> list:
    out = list(profile)
    out[player] = policy
    return out


def covers(dataset, candidate, deviations=None, *, concept: str = "nash", game=None, delta: float = 0.05) -> bool:
    """Whether the data cover every history the candidate and the deviations reach.

    A history is covered when the data can value it: no legal action the
    profile plays with positive probability was left untried at an observed
    decision, and every outcome of each chance history reached was observed
    (:meth:`games.offline_model.GameModel.uncovered`).

    Parameters
    ----------
    dataset : pandas.DataFrame or games.offline_model.GameModel
    candidate
        As for :func:`pessimistic_gap`.
    deviations : list, optional
        One policy per player (e.g. the true game's best responses, from
        OpenSpiel): each is played by its player against every component of the
        candidate. ``None``: the deviations :func:`pessimistic_gap` uses (the
        optimistic best responses, which are drawn to untried actions, so this
        is the strict reading).

    Examples
    --------
    >>> import pyspiel
    >>> from games.datasets import collect
    >>> game = pyspiel.load_game("kuhn_poker")
    >>> few = collect(game, pyspiel.UniformRandomPolicy(game), 20, seed=0)
    >>> covers(few, [None, None]), covers(collect(game, pyspiel.UniformRandomPolicy(game), 500, seed=0),
    ...                                   [None, None])
    (False, True)
    """
    model = _as_model(dataset, game, 0, 0)
    if deviations is None:
        return pessimistic_gap(model, candidate, concept, delta=delta).covered
    components = _components(candidate, concept, model.num_players)
    if len(deviations) != model.num_players:
        raise ValueError(f"deviations must give one policy per player ({model.num_players}); got {len(deviations)}.")
    reached = [(w, p) for w, p, _ in components]
    reached += [(w, _replace(p, i, d)) for i, d in enumerate(deviations) for w, p, _ in components]
    return not model.uncovered(reached, limit=1)
