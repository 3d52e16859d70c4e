"""Rectified PSRO (PSRO-rN; Balduzzi et al. 2019, "Open-ended learning in symmetric zero-sum games").

Every iteration, for every player ``p`` and every member ``i`` of ``p``'s population in the support of the
meta-strategy (Nash by default): member ``i`` trains against the meta-strategy's opponents *that it beats or
ties*, weighted by their meta-strategy probabilities: the opponent mixture
``w_j ∝ sigma_q[j] * [margin(i, j) >= -tie_tolerance]``, with ``margin(i, j)`` member ``i``'s advantage over
``j`` in the meta-game ``M`` (:func:`rectified_mixtures`; the baseline below). So an iteration adds up to
``|support|`` policies per player.

- *Beats or ties* (option ``baseline``). The paper's games are symmetric zero-sum, where member ``i`` beats or
  ties ``j`` when ``M_p[i, j] >= 0``. Two readings extend it: ``baseline="value"`` (the default) compares with the
  player's value of the meta-strategy, ``margin(i, j) = M_p[i, j] - v_p`` (0 in a symmetric zero-sum game, half
  the constant ``c / 2`` in a symmetric constant-sum one, and the meta-game's Nash value in an asymmetric game such
  as poker, where the seats are worth different amounts); ``baseline="even"`` compares with the opponent's payoff,
  ``margin(i, j) = M_p[i, j] - M_q[i, j]`` (``2 M_p[i, j]`` when zero-sum, ``M_p[i, j] >= c / 2`` when
  constant-sum), which in an asymmetric game leaves the weaker seat's members beating nobody. With a Nash
  meta-strategy every support member earns exactly ``v_p`` against the opponent's mixture, so under ``"value"``
  it beats or ties at least one support opponent and is always updated. ``tie_tolerance`` (payoff units, default
  0; plus round-off, 1e-12 times the payoff scale) widens "ties" where the meta-game is sampled.
- *A member that beats nobody* in the support (every weight zero) gets no update this iteration, as in the paper
  (the rectified functional is zero). When no support member beats anyone, nothing is trained for that player.
- *Exact oracles* answer each target with the exact best response to the restricted mixture (the member itself
  plays no part). *Learned oracles* (``dqn``, ``ppo``) start the response from the member they rectify (its
  network, :attr:`psro.oracles.base.Target.initial_policy`; the initial uniform policy is not a network, so its
  response starts fresh), which is the paper's "update v_t" rather than a fresh best response; ``warm_start``
  must then stay off (the warm start is the loop's).
- *Which responses join* is PSRO's selection (``br_selection``; ``"novel"`` keeps only new responses that gain
  over the member's value against its mixture), except that a tabular response equal to a member already in the
  population never joins (several rectified targets often share a best response that is already there; PSRO's
  ``"all"`` would add it again every iteration). When no response gains anything the population stops growing,
  whether or not the meta-strategy is a Nash equilibrium of the full game: rectified PSRO can stall away from Nash
  (McAleer et al. 2020; ``experiments/reproduce/rectified_psro.py``).
- *Output and gap.* The output is the meta-strategy (as PSRO's); the gap is measured with fresh exact best
  responses to it (the training responses answer other targets).

Not defined here (refused at construction, naming the field): correlated meta-solvers (JPSRO: there is no
per-player support to rectify), games that are not two-player zero-sum or constant-sum (``game``; normal-form
games are checked on their payoffs, OpenSpiel games by their declared utility, environment games declare none),
and ``warm_start`` with a learned oracle.

Examples
--------
>>> from games import catalog
>>> rect = RectifiedPSRO(catalog.rock_paper_scissors(), initial_policies=[[0], [0]], progress=False)
>>> history = rect.run(iterations=3)
>>> history["population_0"].tolist()     # rock; + paper; + scissors (paper beats rock, rectified to it)
[1, 2, 3, 3]
>>> [round(g, 6) for g in history["gap"]]
[2.0, 2.0, 0.0, 0.0]
"""

from __future__ import annotations

import dataclasses

import numpy as np

from games.validation import check_real
from psro.config.model import PSROConfig, algorithm_options
from psro.errors import ConfigError, with_field
from psro.loop.psro_loop import PSRO
from psro.loop.requirements import LoopRequirements
from psro.loop.state import LoopExtra
from psro.meta.targets import SUPPORT_TOL
from psro.oracles.base import Target

__all__ = ["RectifiedPSRO", "RectifiedOptions", "rectified_mixtures", "BASELINES"]

#: ``RectifiedOptions.baseline``: what "beats or ties" compares a member's payoff with (module docstring).
BASELINES = ("value", "even")


@dataclasses.dataclass(frozen=True)
class RectifiedOptions:
    """Rectified PSRO's own options (``algorithm_options``).

    Attributes
    ----------
    baseline : {"value", "even"}
        What a member's payoff against an opponent is compared with: the player's meta-strategy value, or the
        opponent's payoff (module docstring).
    tie_tolerance : float
        A member "ties" an opponent when its margin is at least ``-tie_tolerance`` (payoff units, >= 0).

    Examples
    --------
    >>> RectifiedOptions.from_dict({"tie_tolerance": 0.05}).tie_tolerance
    0.05
    >>> RectifiedOptions(tie_tolerance=-1)
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: algorithm_options: tie_tolerance must be a number >= 0; got -1.0.
    """

    baseline: str = "value"
    tie_tolerance: float = 0.0

    def __post_init__(self):
        if self.baseline not in BASELINES:
            raise ConfigError("algorithm_options", f"baseline must be one of {list(BASELINES)}; got {self.baseline!r}.")
        value = with_field("algorithm_options", check_real, self.tie_tolerance, "tie_tolerance", minimum=0.0)
        object.__setattr__(self, "tie_tolerance", value)

    @classmethod
    def from_dict(cls, options: dict | None) -> "RectifiedOptions":
        """The options of a config's ``algorithm_options`` mapping (None: the defaults)."""
        return algorithm_options(cls, options, "RectifiedPSRO")


def rectified_mixtures(margin: np.ndarray, own: np.ndarray, opponent: np.ndarray, tolerance: float = 0.0) -> dict:
    """Per support member of the responder, the opponent mixture it trains against under PSRO-rN.

    Parameters
    ----------
    margin : ndarray, shape (k_own, k_opp)
        The responder's payoff minus the opponent's, per pair of members.
    own, opponent : ndarray
        The meta-strategy's mixtures of the responder and of the opponent.
    tolerance : float
        A margin of at least ``-tolerance`` counts as a tie.

    Returns
    -------
    dict
        ``{member: mixture}`` for every member with ``own[member] > 0`` that beats or ties some opponent in the
        opponent's support (the mixture: ``opponent`` restricted to those, renormalised); a support member that
        beats nobody is absent (no update).

    Examples
    --------
    >>> rps = np.array([[0, -1, 1], [1, 0, -1], [-1, 1, 0]]) * 2.0   # margin = 2 x payoff in a zero-sum game
    >>> out = rectified_mixtures(rps, np.full(3, 1 / 3), np.full(3, 1 / 3))
    >>> {i: w.round(3).tolist() for i, w in out.items()}    # each beats one and ties itself: half each
    {0: [0.5, 0.0, 0.5], 1: [0.5, 0.5, 0.0], 2: [0.0, 0.5, 0.5]}
    >>> list(rectified_mixtures(np.array([[-1.0]]), np.ones(1), np.ones(1)))   # beats nobody: no update
    []
    """
    margin = np.asarray(margin, dtype=np.float64)
    opponent = np.asarray(opponent, dtype=np.float64)
    out = {}
    for i in np.flatnonzero(np.asarray(own) > SUPPORT_TOL):
        weights = np.where(margin[i] >= -tolerance, opponent, 0.0)
        weights[weights <= SUPPORT_TOL] = 0.0
        if weights.sum() > 0.0:
            out[int(i)] = weights / weights.sum()
    return out


@dataclasses.dataclass
class RectifiedExtra(LoopExtra):
    """Rectified PSRO's own state: per iteration, the members each player's responses were rectified against."""

    rectified: list = dataclasses.field(default_factory=list)


class RectifiedPSRO(PSRO):
    """Rectified PSRO (PSRO-rN): ``RectifiedPSRO(game, **fields)`` or
    ``RectifiedPSRO(PSROConfig(algorithm="rectified_psro", ...))``; see the module docstring.

    Examples
    --------
    >>> RectifiedPSRO("kuhn_poker", meta_solver="mgcce", progress=False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: meta_solver: RectifiedPSRO needs a product (Nash-style) meta-strategy, ...
    """

    algorithm = "rectified_psro"
    options_class = RectifiedOptions
    Extra = RectifiedExtra
    requirements = LoopRequirements(
        zero_sum=", where 'beats or ties' is a payoff at least the opponent's", product_meta_solver=True,
        fixed=(("warm_start", (False,), "warm-starts each learned response from the support member it rectifies"),))

    def __init__(self, config, /, *, executor=None, checkpoint_dir=None, **fields):
        config, executor = PSROConfig.for_loop(type(self).algorithm, config, executor, fields)
        self.rectified_options = self.options_class.from_dict(config.algorithm_options)
        super().__init__(config, executor=executor, checkpoint_dir=checkpoint_dir)

    def targets(self, meta_game) -> list:
        """Per player, one target per support member that beats or ties someone: the Nash-weighted opponents it
        beats or ties (:func:`rectified_mixtures`), warm-started from that member; the members rectified this
        iteration are recorded in ``state.extra.rectified``."""
        state, payoffs = self.state, meta_game.payoffs
        sigma = state.meta_strategy.marginals
        targets, rectified = [], []
        for p in range(2):
            q = 1 - p
            own_payoffs = payoffs[p] if p == 0 else payoffs[p].T   # (responder's members x opponent's members)
            if self.rectified_options.baseline == "value":
                margin = own_payoffs - float(state.meta_strategy.values[p])
            else:
                margin = own_payoffs - (payoffs[q] if p == 0 else payoffs[q].T)
            tolerance = self.rectified_options.tie_tolerance + self._tolerances[p]
            mixtures = rectified_mixtures(margin, sigma[p], sigma[q], tolerance)
            player_targets = []
            for i, weights in mixtures.items():
                own = np.eye(len(sigma[p]))[i]
                player_targets.append(Target(
                    player=p, populations=state.populations,
                    mixtures=(own, weights) if p == 0 else (weights, own),
                    on_policy_value=float(own_payoffs[i] @ weights), initial_policy=self._start(p, i)))
            targets.append(player_targets)
            rectified.append(list(mixtures))
        state.extra.rectified.append(rectified)
        return targets

    def select(self, t: int, targets: list, responses: list) -> None:
        """PSRO's selection, less the tabular responses equal to a member already in the population."""
        super().select(t, targets, responses)
        state = self.state
        for p, pending in enumerate(state.pending):
            known = state.populations[p].policies
            if isinstance(known, np.ndarray):
                state.pending[p] = [(policy, value) for policy, value in pending
                                    if not np.any(np.all(known == policy, axis=(1, 2)))]

    def _start(self, player: int, member: int):
        """The policy a rectified response starts from: the member itself (an exact oracle ignores it), except the
        initial policy of a learned run, which is not a network."""
        population = self.state.populations[player]
        if self.learned and population.provenance[member].oracle == "initial":
            return None
        return population.policies[member]
