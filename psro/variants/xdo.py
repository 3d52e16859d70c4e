"""Extensive-form double oracle (XDO, McAleer, Lanier, Baldi & Fox, NeurIPS 2021): PSRO that mixes the best
responses at every information state instead of only at the root.

Every iteration (``XDO``, ``algorithm: xdo``; two-player zero-sum games only, as in the paper):

1. the best responses found so far join the populations (PSRO's ``add``; the meta-game between them is kept and
   evaluated as in PSRO, for rankings and ``meta_gap``);
2. **meta-solve**: the *restricted game* keeps, at each information state, the actions the population's pure
   members (the best responses) take there (:func:`psro.variants.restricted_game.restricted_masks`); it is
   solved by CFR+ on the game tree until its NashConv in the restricted game is at most ``precision``
   (:func:`psro.variants.restricted_game.cfr_plus`);
3. **targets**: each player best-responds, in the full game, to the other's restricted solution;
4. **measure**: the history's ``gap`` is the restricted solution's NashConv in the full game (the sum of the
   responses' gains): the restricted solution is the run's output (:meth:`XDO.aggregate_policies`).

While a player has no pure member (row 0: the uniform policy only) there is no restricted game yet, and the
solution is PSRO's meta-strategy. When no response gains more than ``precision`` over the restricted solution the
run has converged (a response that gains more than the restricted game's NashConv must play an action the
restricted game lacks); :attr:`XDO.converged` reports the first such iteration (``state.extra``); the run goes on
until its own stopping rule (``run(target_gap=...)`` stops it once the restricted solution's NashConv is low
enough).

With a learned oracle (``ppo``, ``dqn``) it is **NXDO** (:mod:`psro.variants.nxdo`): the restricted game's actions
at a decision are the population's policies (a meta-action picks whose action to play), it is solved by NFSP on
sampled play, and the responses are trained against the NFSP average policy; no tree is needed. Its
``approx_gap`` (on ``approx_gap_every``'s schedule) is the restricted solution's, as its exact ``gap`` is.

The options (:class:`XDOOptions`) come from ``algorithm_options``.

Examples
--------
>>> xdo = XDO("kuhn_poker", progress=False, algorithm_options={"precision": 1e-4})
>>> history = xdo.run(target_gap=1e-3, iterations=20)
>>> bool(history["gap"].iloc[-1] <= 1e-3), len(history) < 10
(True, True)
"""

from __future__ import annotations

import dataclasses
import logging
import math
import warnings

import numpy as np

from games.validation import check_int, check_real
from psro.config.model import PSROConfig, algorithm_options
from psro.errors import ConfigError, with_field
from psro.loop.psro_loop import PSRO
from psro.loop.requirements import LoopRequirements, check_two_player_zero_sum
from psro.loop.state import LoopExtra
from psro.variants.restricted_game import cfr_plus, fixed_solution, restricted_masks, restricted_tree, solution_targets

__all__ = ["XDO", "XDOOptions", "check_two_player_zero_sum", "pure_members"]

logger = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class XDOOptions:
    """XDO's own options (``algorithm_options``).

    Attributes
    ----------
    precision : float
        The restricted game is solved until its NashConv (in the restricted game) is at most this; the run has
        converged when no best response gains more than this (> 0).
    max_cfr_iterations : int
        CFR+ stops after this many iterations on one restricted game even if ``precision`` is not reached.
    check_every : int
        CFR+ measures its NashConv every this many iterations.
    nfsp : dict
        NXDO (a learned oracle): the options of the NFSP that solves each restricted game
        (:class:`psro.variants.nxdo.RestrictedNFSPOptions`).

    Examples
    --------
    >>> XDOOptions.from_dict({"precision": 0.01}).precision
    0.01
    >>> XDOOptions.from_dict({"precision": 0})
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: algorithm_options: precision must be > 0 (the restricted game's target NashConv); got 0.
    """

    precision: float = 1e-3
    max_cfr_iterations: int = 100_000
    check_every: int = 10
    nfsp: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.precision, int | float) or isinstance(self.precision, bool) \
                or not self.precision > 0 or not math.isfinite(self.precision):
            raise ConfigError("algorithm_options", f"precision must be > 0 (the restricted game's target NashConv); "
                              f"got {self.precision!r}.")
        object.__setattr__(self, "precision", with_field("algorithm_options", check_real, self.precision, "precision"))
        for name in ("max_cfr_iterations", "check_every"):
            object.__setattr__(self, name, check_int(getattr(self, name), f"algorithm_options: {name}", minimum=1))
        if not isinstance(self.nfsp, dict):
            raise ConfigError("algorithm_options", f"nfsp must be a mapping of NFSP options; got {self.nfsp!r}.")

    @classmethod
    def from_dict(cls, options: dict | None) -> "XDOOptions":
        """The options of a config's ``algorithm_options`` mapping (None: the defaults)."""
        return algorithm_options(cls, options, "XDO")


def pure_members(policies: np.ndarray) -> np.ndarray:
    """The members of a stack of tabular policies ``(k, I, A)`` that are pure (every row one-hot).

    Examples
    --------
    >>> pure_members(np.array([[[0.5, 0.5]], [[0.0, 1.0]]])).shape
    (1, 1, 2)
    """
    policies = np.asarray(policies)
    return policies[np.all((policies == 0) | (policies == 1), axis=(1, 2))]


@dataclasses.dataclass
class XDOExtra(LoopExtra):
    """XDO's own state: per iteration, the CFR+ iterations of the restricted solve and the restricted game's gap
    (None where not measured), and the first iteration whose restricted solution was an equilibrium of the game
    (``converged``; None before)."""

    cfr_iterations: list = dataclasses.field(default_factory=list)
    restricted_gap: list = dataclasses.field(default_factory=list)
    converged: int | None = None


class XDO(PSRO):
    """Extensive-form double oracle: ``XDO(game, **fields)`` or ``XDO(PSROConfig(algorithm="xdo", ...))``; NXDO
    with a learned oracle. See the module docstring.

    Examples
    --------
    >>> xdo = XDO("kuhn_poker", progress=False)
    >>> _ = xdo.run(iterations=2)
    >>> xdo.restricted_solution().iterations > 0, [int(m.sum()) for m in xdo.restricted_masks()]
    (True, [8, 9])
    """

    algorithm = "xdo"
    options_class = XDOOptions
    Extra = XDOExtra
    requirements = LoopRequirements(zero_sum=" (as in McAleer et al. 2021)", product_meta_solver=True)

    def __new__(cls, config=None, /, **fields):
        """Deprecated: ``XDO(...)`` with a learned oracle builds a :class:`psro.variants.nxdo.NXDO`, with a
        ``DeprecationWarning`` (until the next release); the registry chooses the class,
        ``psro.algorithm_class("xdo", oracle)``, and ``NXDO(...)`` builds one directly."""
        if cls is XDO:
            from psro.loop.algorithms import algorithm_class

            oracle = fields.get("oracle", getattr(config, "oracle", PSROConfig.oracle))
            chosen = algorithm_class("xdo", oracle if isinstance(oracle, str) else None)
            if chosen is not XDO:
                warnings.warn(f"XDO(...) with the learned oracle {oracle!r} builds {chosen.__name__}: build "
                              f"{chosen.__module__}.{chosen.__name__}(...) or psro.algorithm_class('xdo', "
                              f"{oracle!r})(...); this goes in the next release.", DeprecationWarning, stacklevel=2)
                cls = chosen
        return super().__new__(cls)

    def __init__(self, config, /, *, executor=None, checkpoint_dir=None, **fields):
        config, executor = PSROConfig.for_loop(type(self).algorithm, config, executor, fields)
        self.xdo_options = self.options_class.from_dict(config.algorithm_options)   # (bad options fail before the tree)
        super().__init__(config, executor=executor, checkpoint_dir=checkpoint_dir)
        self._solution = None   # (iteration, RestrictedSolution or NXDO's solution), recomputed after a resume

    @property
    def converged(self):
        """The first iteration at which no best response gained more than ``precision`` (None: not yet)."""
        return self.state.extra.converged

    # ------------------------------------------------------------------ the restricted game
    def restricted_masks(self) -> list | None:
        """Per player, the restricted game's legal mask (the actions of its pure members); None while a player
        has no pure member."""
        pure = [pure_members(pop.policies) for pop in self.state.populations]
        if any(len(p) == 0 for p in pure):
            return None
        return restricted_masks(self.tree, pure)

    def restricted_solution(self):
        """The restricted game's solution of the current iteration (solved now if it is not known yet, e.g. after
        a resume): a :class:`psro.variants.restricted_game.RestrictedSolution`, or NXDO's restricted policies."""
        if self._solution is None or self._solution[0] != self.state.iteration:
            self._solution = (self.state.iteration, self._solve())
        return self._solution[1]

    def _solve(self):
        masks = self.restricted_masks()
        if masks is None:   # (no restricted game yet: PSRO's meta-strategy)
            policies = [pop.aggregate(w) for pop, w in zip(self.state.populations, self.state.meta_strategy.marginals)]
            return fixed_solution(self.tree, policies)
        o = self.xdo_options
        return cfr_plus(restricted_tree(self.tree, masks), o.precision, max_iterations=o.max_cfr_iterations,
                        check_every=o.check_every)

    # ------------------------------------------------------------------ the phases
    def meta_solve(self):
        """Phase 3: PSRO's meta-solve (the meta-game's Nash, for rankings), then the restricted game's solution."""
        meta_game = super().meta_solve()
        self._solution = None
        self._note_solution(self.restricted_solution())
        return meta_game

    def _note_solution(self, solution) -> None:
        """What the restricted solve cost, in ``state.extra``: CFR+ iterations and the restricted game's gap."""
        extra = self.state.extra
        extra.cfr_iterations.append(int(solution.iterations))
        gap = float(solution.nash_conv)
        extra.restricted_gap.append(None if math.isnan(gap) else gap)

    def targets(self, meta_game) -> list:
        """Phase 4: each player answers the other's restricted solution (one target per player)."""
        self._targets = solution_targets(self.tree, self.restricted_solution(), self.state.iteration)
        return self._targets

    def measure(self, meta_game, responses: list) -> None:
        """Phase 6: ``gap`` is the restricted solution's NashConv in the full game (exact responses reused; a
        learned run's from fresh exact responses where the tree is built, else NaN); notes convergence."""
        state = self.state
        gains = [br.value - ts[0].on_policy_value for ts, br in zip(self._targets, (r[0] for r in responses))]
        state.gap = state.train_gap = math.nan
        if self.tree is not None and self.config.exact_gap is not False:
            state.gap = state.train_gap = self._restricted_nash_conv(gains)
        if self.converged is None and self.state.iteration > 0 and all(g <= self.xdo_options.precision
                                                                      for g in gains):
            state.extra.converged = state.iteration
            logger.info("XDO converged at iteration %d: no best response gains more than %g", state.iteration,
                        self.xdo_options.precision)

    def _restricted_nash_conv(self, gains: list) -> float:
        """The restricted solution's NashConv in the full game: the sum of the exact responses' ``gains``."""
        return float(sum(gains))

    def aggregate_policies(self) -> list:
        """The run's output: the restricted game's solution, one behaviour policy ``(I, A)`` per player."""
        if self.state.meta_strategy is None:
            raise ValueError("run() has not evaluated any population yet; call run() first.")
        return [np.array(pi) for pi in self.restricted_solution().policies]
