"""Fictitious Cross-Play (FXP, Xu et al. 2023): a main policy trained by fictitious self-play and cross-play, and
a population of counter policies, each freshly initialised, against the main's checkpoints.

Every iteration, for every player (every team, in a team game's team view):

1. the **main** policy continues training against a mixture of the opponents' policies: weight ``eta`` (0.3) on
   their current main, the rest on the Nash mixture of the meta-game over all past main and counter policies
   (``opponent_sampling="nash"``), or, as in the paper's deep version, ``0.2`` on the current main, ``0.4``
   spread uniformly over the past mains and ``0.4`` over the counters (``opponent_sampling="deep"``,
   ``deep_weights``); the result is checkpointed: it joins the population as a main;
2. a **counter** policy, freshly initialised, trains as a best response to the Nash mixture of the meta-game
   restricted to the main checkpoints (the initial policy counts as the main's first checkpoint), and joins as a
   counter.

The output, and so the history's ``gap``, is the Nash mixture over all (the meta-solver, ``nash`` by default).
For team games (``teams`` set) FXP plays the team view (:func:`psro.sequence_form.team_view.team_payoffs`, as
:mod:`psro.family.self_play` does), so its Nash mixtures are the team-level ones of the two-team meta-game; with
oracle ``team_pg`` every team's main and counters are learned by its members, each its own learner. The roles of
the members (``initial``, ``main``, ``counter``) are kept in ``state.extra.roles`` (in the checkpoint).

The options (:class:`FXPOptions`) come from ``algorithm_options``. With a learned oracle (``dqn``, ``ppo``) the
main's warm start is FXP's (the main's latest network), so ``warm_start`` must stay off (the counters start
fresh).

Examples
--------
>>> from games import catalog
>>> fxp = FXP(catalog.biased_rock_paper_scissors(), progress=False)
>>> history = fxp.run(iterations=3)
>>> history["population_0"].tolist(), fxp.state.extra.roles[0]
([1, 3, 5, 7], ['initial', 'main', 'counter', 'main', 'counter', 'main', 'counter'])
>>> [round(g, 4) for g in history["gap"]]    # NashConv of the Nash mixture over all
[0.3333, 1.0, 0.2, 0.0]
"""

from __future__ import annotations

import dataclasses

import numpy as np

from games.normal_form import NormalFormGame
from games.validation import check_real
from psro.config.model import PSROConfig, algorithm_options
from psro.errors import ConfigError, with_field
from psro.family.self_play import FamilyLoop
from psro.loop.requirements import LoopRequirements
from psro.loop.state import RolesExtra
from psro.oracles.base import Target

__all__ = ["FXP", "FXPOptions", "OPPONENT_SAMPLING"]

#: ``FXPOptions.opponent_sampling``: the main's opponents as ``eta`` on the current main plus the Nash mixture, or
#: the deep version's fixed weights on the current main, the past mains and the counters.
OPPONENT_SAMPLING = ("nash", "deep")

MAIN_ROLES = ("initial", "main")


@dataclasses.dataclass(frozen=True)
class FXPOptions:
    """FXP's own options (``algorithm_options``).

    Attributes
    ----------
    eta : float
        ``opponent_sampling="nash"``: the weight of the opponents' current main in the main's mixture (the rest is
        the Nash mixture over all past mains and counters).
    opponent_sampling : {"nash", "deep"}
        How the main's opponents are mixed (see the module docstring).
    deep_weights : tuple of float
        ``opponent_sampling="deep"``: the weights of the current main, the past mains and the counters (a group
        that is still empty gives its weight to the current main).

    Examples
    --------
    >>> FXPOptions.from_dict({"eta": 0.5}).eta
    0.5
    >>> FXPOptions.from_dict({"etta": 0.5})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: algorithm_options: FXP has no option 'etta'. Did you mean 'eta'? Its options are [...].
    """

    eta: float = 0.3
    opponent_sampling: str = "nash"
    deep_weights: tuple = (0.2, 0.4, 0.4)

    def __post_init__(self):
        with_field("algorithm_options", check_real, self.eta, "eta", minimum=0.0, maximum=1.0)
        if self.opponent_sampling not in OPPONENT_SAMPLING:
            raise ConfigError("algorithm_options", f"opponent_sampling must be one of {list(OPPONENT_SAMPLING)}; got "
                              f"{self.opponent_sampling!r}.")
        weights = np.asarray(self.deep_weights, dtype=np.float64)
        if weights.shape != (3,) or np.any(weights < 0) or not np.isclose(weights.sum(), 1.0):
            raise ConfigError("algorithm_options", f"deep_weights must be three non-negative weights summing to 1 "
                              f"(current main, past mains, counters); got {self.deep_weights!r}.")
        object.__setattr__(self, "eta", float(self.eta))
        object.__setattr__(self, "deep_weights", tuple(float(w) for w in weights))

    @classmethod
    def from_dict(cls, options: dict | None) -> "FXPOptions":
        """The options of a config's ``algorithm_options`` mapping (None: the defaults)."""
        return algorithm_options(cls, options, "FXP")


class FXP(FamilyLoop):
    """Fictitious Cross-Play: ``FXP(game, **fields)`` or ``FXP(PSROConfig(algorithm="fxp", ...))``; see the module
    docstring.

    Examples
    --------
    >>> from games import catalog
    >>> fxp = FXP(catalog.biased_rock_paper_scissors(), algorithm_options={"opponent_sampling": "deep"},
    ...           progress=False)
    >>> fxp.fxp_options.deep_weights, len(fxp.run(iterations=2)), fxp.roles(1)
    ((0.2, 0.4, 0.4), 3, ['initial', 'main', 'counter', 'main', 'counter'])
    """

    algorithm = "fxp"
    options_class = FXPOptions
    Extra = RolesExtra
    requirements = LoopRequirements(product_meta_solver=True, fixed=(
        ("warm_start", (False,), "warm-starts its main policy itself and trains every counter from a fresh network"),))

    def __init__(self, config, /, **kwargs):
        super().__init__(config, **kwargs)
        self.fxp_options = self.options_class.from_dict(self.config.algorithm_options)

    def _prepared(self, config: PSROConfig) -> PSROConfig:
        self.options_class.from_dict(config.algorithm_options)   # (bad options fail before the tree is built)
        return config

    def roles(self, player: int) -> list:
        """The role of each member of ``player``'s population: ``initial``, ``main`` or ``counter``."""
        return self.state.extra.of(player)

    def add(self) -> None:
        """The waiting responses join with their roles: the initial policies, then a main and a counter each."""
        self.state.extra.join(self.state.pending)
        super().add()

    def targets(self, meta_game) -> list:
        """Per player ``[main target, counter target]`` (see the module docstring)."""
        state, n = self.state, self.num_players
        roles = [self.roles(p) for p in range(n)]
        mains = [np.array([i for i, r in enumerate(rs) if r in MAIN_ROLES]) for rs in roles]
        counters = [np.array([i for i, r in enumerate(rs) if r == "counter"], dtype=int) for rs in roles]
        main_mix = [self._main_mixture(state.meta_strategy.marginals[q], mains[q], counters[q]) for q in range(n)]
        counter_mix = self._mains_nash(meta_game, mains)
        state.extra.pending_roles = [["main", "counter"] for _ in range(n)]
        targets = []
        for p in range(n):
            current = np.eye(len(roles[p]))[mains[p][-1]]
            main = Target(player=p, populations=state.populations,
                          mixtures=tuple(current if q == p else main_mix[q] for q in range(n)),
                          on_policy_value=_value(meta_game.payoffs[p], p, current, main_mix),
                          initial_policy=self._main_start(p, mains[p][-1]))
            counter = Target(player=p, populations=state.populations,
                             mixtures=tuple(counter_mix),
                             on_policy_value=_value(meta_game.payoffs[p], p, counter_mix[p], counter_mix))
            targets.append([main, counter])
        return targets

    def _main_start(self, player: int, member: int):
        """The main continues from its latest checkpoint (a learned oracle's initial policy is not a network: it
        starts fresh)."""
        if self.learned and self.roles(player)[member] == "initial":
            return None
        return self.state.populations[player].policies[member]

    def _main_mixture(self, nash: np.ndarray, mains: np.ndarray, counters: np.ndarray) -> np.ndarray:
        """An opponent's mixture for the main: ``eta`` on its current main plus the Nash mixture, or the deep
        version's weights."""
        mixture = np.zeros(len(nash))
        if self.fxp_options.opponent_sampling == "nash":
            mixture[mains[-1]] += self.fxp_options.eta
            return mixture + (1.0 - self.fxp_options.eta) * nash
        current, past, counter = self.fxp_options.deep_weights
        mixture[mains[-1]] += current
        for group, weight in ((mains[:-1], past), (counters, counter)):
            if len(group):
                mixture[group] += weight / len(group)
            else:
                mixture[mains[-1]] += weight
        return mixture

    def _mains_nash(self, meta_game, mains) -> list:
        """Per player, the Nash mixture of the meta-game restricted to every player's main checkpoints, embedded
        in its whole population (a cold solve: the training meta-solver's warm start follows the whole game)."""
        payoffs = meta_game.payoffs[(slice(None), *np.ix_(*mains))]
        solver = dataclasses.replace(self.meta_solver, warm_lp=None)
        marginals = solver(NormalFormGame(payoffs)).marginals
        out = []
        for q, (index, weights) in enumerate(zip(mains, marginals)):
            mixture = np.zeros(meta_game.shape[q])
            mixture[index] = weights
            out.append(mixture)
        return out


def _value(payoffs: np.ndarray, player: int, own: np.ndarray, mixtures: list) -> float:
    """``player``'s meta-game value when it plays ``own`` and every other player ``q`` its ``mixtures[q]``."""
    value = payoffs
    for q in reversed(range(payoffs.ndim)):
        value = np.tensordot(value, own if q == player else mixtures[q], axes=([q], [0]))
    return float(value)
