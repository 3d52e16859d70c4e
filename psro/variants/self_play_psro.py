"""Self-play PSRO (McAleer et al. 2022, "Self-Play PSRO: Toward Optimal Populations in Two-Player Zero-Sum Games"):
anytime PSRO that adds, besides each player's best response, a near-optimal *stochastic* policy every iteration.

Anytime and plain PSRO add deterministic best responses, and may need most of a game's pure strategies before a
mixture of them is an equilibrium. SP-PSRO also trains a policy ``nu`` of each player as a best response to the
opponent's best response ``beta`` (which itself best-responds to the player's restricted distribution, that
distribution including the time average ``nu-bar``), and adds ``nu-bar``, the time average of ``nu``, to the
population. The restricted distributions are anytime PSRO's (:mod:`psro.variants.anytime`: each player's least
exploitable mixture of its population, exploitability never increasing where the tree is built), and the best
responses that join answer them.

What ``nu-bar`` is here:

* **tabular** (an exact oracle): the paper's inner loop run exactly
  (:func:`psro.variants.least_exploitable.self_play_policy`): ``self_play_steps`` rounds of regret matching over
  the population plus ``nu-bar`` against the opponent's exact best response ``beta``, each round's ``nu`` the exact
  best response to ``beta``, ``nu-bar`` their average realization plan (started at the restricted mixture). It
  joins the population with the best response, as a behaviour policy;
* **learned** (``ppo``, ``dqn``): the oracle trains ``nu`` each iteration against the opponent's newest best
  response (``beta`` of the previous iteration; the opponent's restricted distribution before there is one),
  continuing from the player's previous ``nu`` (a warm start), and the trained policy joins. The paper trains
  ``nu`` off-policy concurrently with ``beta`` and distils its average ``nu-bar`` by supervised learning; this loop
  has no average-policy learner, so the chain of warm-started checkpoints stands in for the average, and nothing
  makes ``nu`` near-optimal beyond what its training reaches. The monotone exact gap still holds where the tree is
  built (it depends only on the restricted distributions, over tabularised members).

Each member's role (``initial``, ``best_response``, ``self_play``) is kept in ``state.extra.roles`` (in the
checkpoint). The options (:class:`SelfPlayOptions`: anytime PSRO's plus ``self_play_steps``) come from
``algorithm_options``; the refusals are anytime PSRO's (two-player zero-sum games, product meta-solvers, no
``eval_meta_solver``, no ``teams``).

Examples
--------
>>> from games import catalog
>>> sp = SelfPlayPSRO(catalog.biased_rock_paper_scissors(), progress=False)
>>> history = sp.run(iterations=2)
>>> history["population_0"].tolist(), sp.roles(0)
([1, 3, 5], ['initial', 'best_response', 'self_play', 'best_response', 'self_play'])
>>> [round(g, 4) for g in history["gap"]]    # anytime PSRO: 0.3333, 0.3125, 0.05 (psro.variants.anytime)
[0.3333, 0.02, 0.0]
"""

from __future__ import annotations

import dataclasses

import numpy as np

from games.validation import check_int
from psro.loop.state import RolesExtra
from psro.oracles.base import Target
from psro.variants.anytime import AnytimeExtra, AnytimeOptions, AnytimePSRO
from psro.variants.least_exploitable import self_play_policy

__all__ = ["SelfPlayPSRO", "SelfPlayOptions", "ROLES"]

#: The roles of a population's members.
ROLES = ("initial", "best_response", "self_play")


@dataclasses.dataclass(frozen=True)
class SelfPlayOptions(AnytimeOptions):
    """Self-play PSRO's options (``algorithm_options``): anytime PSRO's ``method`` and ``rm_br_steps``, and

    Attributes
    ----------
    self_play_steps : int
        Tabular ``nu-bar``: rounds of the inner loop per player and iteration.

    Examples
    --------
    >>> SelfPlayOptions.from_dict({"self_play_steps": 10}).self_play_steps
    10
    >>> SelfPlayOptions.from_dict({"self_play_step": 10})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: algorithm_options: SelfPlayPSRO has no option 'self_play_step'. Did you mean ...
    """

    self_play_steps: int = 50
    loop_name = "SelfPlayPSRO"

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "self_play_steps", check_int(self.self_play_steps,
                                                              "algorithm_options: self_play_steps", minimum=1))


@dataclasses.dataclass
class SelfPlayExtra(AnytimeExtra, RolesExtra):
    """Self-play PSRO's own state: anytime PSRO's restricted meta-strategy and the members' roles."""


class SelfPlayPSRO(AnytimePSRO):
    """Self-play PSRO: ``SelfPlayPSRO(game, **fields)`` or ``SelfPlayPSRO(PSROConfig(algorithm="self_play_psro",
    ...))``; see the module docstring."""

    algorithm = "self_play_psro"
    options_class = SelfPlayOptions
    Extra = SelfPlayExtra

    def roles(self, player: int) -> list:
        """The role of each member of ``player``'s population: ``initial``, ``best_response`` or ``self_play``."""
        return self.state.extra.of(player)

    def add(self) -> None:
        """The waiting policies join with their roles (the initial policies, then best responses and ``nu-bar``)."""
        self.state.extra.join(self.state.pending)
        super().add()

    def targets(self, meta_game) -> list:
        """Per player, the best-response target of anytime PSRO; with a learned oracle also ``nu``'s target: the
        opponent's newest best response, continuing from the player's previous ``nu``."""
        targets = super().targets(meta_game)
        if not self.learned:
            return targets
        state = self.state
        newest = []
        for q in range(self.num_players):
            responses = [i for i, role in enumerate(self.roles(q)) if role == "best_response"]
            newest.append(np.eye(len(state.populations[q]))[responses[-1]] if responses
                          else np.asarray(state.meta_strategy.marginals[q], dtype=np.float64))
        for p in range(self.num_players):
            own = [i for i, role in enumerate(self.roles(p)) if role == "self_play"]
            start = state.populations[p].policies[own[-1]] if own else None
            targets[p].append(Target(player=p, populations=state.populations, mixtures=tuple(newest),
                                     initial_policy=start))
        return targets

    def select(self, t: int, targets: list, responses: list) -> None:
        """The best responses join by the usual rules (:meth:`psro.PSRO.select`); ``nu-bar`` joins after them."""
        super().select(t, [ts[:1] for ts in targets], [rs[:1] for rs in responses])
        state = self.state
        roles = [["best_response"] * len(pending) for pending in state.pending]
        for p in range(self.num_players):
            state.pending[p].append(self._new_policy(p, responses[p]))
            roles[p].append("self_play")
        state.extra.pending_roles = roles

    def _new_policy(self, player: int, responses: list) -> tuple:
        """``(policy, value)`` of ``player``'s ``nu-bar``: the learned oracle's ``nu``, or the tabular inner loop's
        average (its value: the player's worst-case payoff, minus the opponent's best-response value)."""
        if self.learned:
            return responses[1].policy, responses[1].value
        plans = self.state.populations[player].plans
        start = np.asarray(self.state.meta_strategy.marginals[player]) @ plans
        nu = self_play_policy(self.tree, player, plans, start, steps=self.anytime_options.self_play_steps)
        return nu.policy, -nu.opponent_value
