"""Anytime PSRO (McAleer et al. 2022, "Anytime PSRO for Two-Player Zero-Sum Games": anytime double oracle, ADO;
RM-BR DO; APSRO): exploitability that never increases from one iteration to the next.

PSRO's restricted distribution is a Nash equilibrium of the restricted game, where each player's opponent may only
play its population; a new best response can make it worse against the full game. Anytime PSRO gives each player
the mixture of its own population that is least exploitable by *any* policy of the full game (the opponent
unrestricted), and trains each player's best response against the opponent's such mixture. A population only
grows, so the least exploitability over it can only fall: NashConv of a two-player zero-sum profile is the sum of
the two players' own exploitabilities (:mod:`psro.variants.least_exploitable`), and each is a minimum over a set
that grows.

How the restricted distribution is found (``algorithm_options``, :class:`AnytimeOptions`), where the game tree is
built (an exact oracle, or a learned one whose members are tabularised on a game that fits ``max_histories``):

* ``method: lp`` (default): exactly, as one sequence-form linear program over the population's mixtures
  (:func:`psro.variants.least_exploitable.least_exploitable_mixture`; a normal-form game is its own one-infostate
  tree, so this is the LP of the population against all of the opponent's pure strategies);
* ``method: rm_br``: the paper's RM-BR, ``rm_br_steps`` rounds of regret matching over the population against the
  opponent's exact best response (:func:`psro.variants.least_exploitable.rm_br_mixture`).

Either way the new mixture is kept only when its exactly measured exploitability (an exact best response in the
tree) is lower than that of the previous iteration's mixture padded with zeros for the new members; otherwise the
previous one stays (``state.extra.restricted``, in the checkpoint). So the reported exact gap never increases:
by construction, not up to a solver's tolerance (only the float round-off of mixing the same plans, ~1e-15).

What joins: each player's best response to the opponent's restricted distribution, as in the paper. Taken
literally (``repeated: keep``) this stalls: a player's best response to the opponent's least exploitable mixture can
be a member it already has, and then nothing lowers its exploitability again (``biased_rock_paper_scissors``
stays at 0.3125 from iteration 1; the 20 random 100x100 zero-sum games of experiments/reproduce/anytime_psro.py
stop falling after 1 to 5 iterations, Leduc after 24). By default (``repeated: minimax``), with exact responses,
such a repeated member is replaced by the player's best response to the opponent's minimax strategy against the
player's population (the LP's dual solution; RM-BR's average best response): no member does better against that
strategy than the population's least exploitability, so its best response either is new and can lower it, or
proves it already least (the double-oracle argument, for each player's half of the game). Learned responses are never
replaced (the minimax strategy is a full-game plan, not a mixture of members).

With a learned oracle on a game whose tree fits, the members are tabularised and the restricted distributions are
the same exact ones, so the guarantee holds whatever the quality of the learned best responses (they only decide
how fast it falls). Without a tree (a game too large for ``max_histories``) the full game's best responses are not
available: the restricted distribution is then the meta-solver's solution of the empirical meta-game (``nash``,
the default: each player's maxmin mixture against the opponent's population, which holds the approximate best
responses to the earlier restricted distributions), and nothing guarantees monotone exploitability (running
RM-BR with a learned best response per round would cost ``rm_br_steps`` oracle calls per iteration; this loop
does not).

Anytime PSRO is defined for two-player zero-sum (constant-sum) games and product meta-solutions: other games,
correlated meta-solvers (``meta_solver`` of kind CE/CCE: JPSRO), an ``eval_meta_solver`` (the reported gap is the
restricted distribution's) and ``teams`` are refused with a ``ValueError`` naming the field.

Examples
--------
>>> from games import catalog
>>> history = AnytimePSRO(catalog.random_game((12, 12), kind="zero_sum", rng=0), progress=False).run(iterations=8)
>>> gaps = history["gap"].to_numpy()
>>> bool((gaps[1:] <= gaps[:-1] + 1e-12).all())
True
>>> rps = catalog.biased_rock_paper_scissors()
>>> [AnytimePSRO(rps, algorithm_options={"repeated": r}, progress=False).run(iterations=3)["gap"].round(4).tolist()
...  for r in ("minimax", "keep")]
[[0.3333, 0.3125, 0.05, 0.0], [0.3333, 0.3125, 0.3125, 0.3125]]
"""

from __future__ import annotations

import dataclasses

import numpy as np

from games.validation import check_int
from psro.config.model import PSROConfig, algorithm_options
from psro.errors import ConfigError, with_field
from psro.loop.psro_loop import PSRO
from psro.loop.requirements import LoopRequirements, check_two_player_zero_sum
from psro.loop.state import LoopExtra
from psro.oracles.exact import best_response
from psro.variants.least_exploitable import least_exploitable_mixture, opponent_value, rm_br_mixture
from solvers import make_equilibrium

__all__ = ["AnytimePSRO", "AnytimeOptions", "METHODS", "REPEATED", "check_two_player_zero_sum"]

#: ``AnytimeOptions.method``: how the least exploitable mixture is found.
METHODS = ("lp", "rm_br")
#: ``AnytimeOptions.repeated``: what joins when a best response is already a member.
REPEATED = ("minimax", "keep")


@dataclasses.dataclass(frozen=True)
class AnytimeOptions:
    """Anytime PSRO's own options (``algorithm_options``).

    Attributes
    ----------
    method : {"lp", "rm_br"}
        The restricted distribution: the exact sequence-form LP, or the paper's RM-BR (see the module docstring).
    rm_br_steps : int
        ``method="rm_br"``: rounds of regret matching per player and iteration.
    repeated : {"minimax", "keep"}
        With exact responses, when a player's best response to the opponent's restricted distribution is already a
        member: ``"minimax"`` adds instead its best response to the opponent's minimax strategy against its
        population (the double-oracle step, which lowers its exploitability unless it is already least), ``"keep"``
        adds the repeated member as the paper's ADO does (which can stall; see the module docstring).

    Examples
    --------
    >>> AnytimeOptions.from_dict({"method": "rm_br"}).rm_br_steps
    200
    >>> AnytimeOptions.from_dict({"method": "cfr"})
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: algorithm_options: method must be one of ['lp', 'rm_br']; got 'cfr'.
    """

    method: str = "lp"
    rm_br_steps: int = 200
    repeated: str = "minimax"

    def __post_init__(self):
        if self.method not in METHODS:
            raise ConfigError("algorithm_options", f"method must be one of {list(METHODS)}; got {self.method!r}.")
        if self.repeated not in REPEATED:
            raise ConfigError("algorithm_options", f"repeated must be one of {list(REPEATED)}; got {self.repeated!r}.")
        steps = with_field("algorithm_options", check_int, self.rm_br_steps, "rm_br_steps", minimum=1)
        object.__setattr__(self, "rm_br_steps", steps)

    #: The loop these options belong to (named in the messages).
    loop_name = "AnytimePSRO"

    @classmethod
    def from_dict(cls, options: dict | None) -> "AnytimeOptions":
        """The options of a config's ``algorithm_options`` mapping (None: the defaults)."""
        return algorithm_options(cls, options, cls.loop_name)


@dataclasses.dataclass
class AnytimeExtra(LoopExtra):
    """Anytime PSRO's own state: the restricted meta-strategy of the last iteration (its marginals; None before
    the first)."""

    restricted: list | None = None


class AnytimePSRO(PSRO):
    """Anytime PSRO: ``AnytimePSRO(game, **fields)`` or ``AnytimePSRO(PSROConfig(algorithm="anytime_psro", ...))``;
    see the module docstring.

    Examples
    --------
    >>> anytime = AnytimePSRO("kuhn_poker", progress=False)
    >>> history = anytime.run(iterations=4)
    >>> gaps = history["gap"].to_numpy()
    >>> bool((gaps[1:] <= gaps[:-1] + 1e-12).all()), len(anytime.state.extra.restricted[0])
    (True, 5)
    >>> AnytimePSRO("kuhn_poker(players=3)", progress=False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: game: AnytimePSRO is defined for two-player games; kuhn_poker(players=3) has 3 players.
    """

    algorithm = "anytime_psro"
    options_class = AnytimeOptions
    Extra = AnytimeExtra
    requirements = LoopRequirements(
        zero_sum="", product_meta_solver=True, own_eval_meta_solver="reports the gap of its restricted distribution",
        no_teams="is defined for two-player zero-sum games, not team games")

    def __init__(self, config, /, *, executor=None, checkpoint_dir=None, **fields):
        config, executor = PSROConfig.for_loop(type(self).algorithm, config, executor, fields)
        self.anytime_options = self.options_class.from_dict(config.algorithm_options)
        super().__init__(config, executor=executor, checkpoint_dir=checkpoint_dir)

    def meta_solve(self):
        """Phase 3: each player's least exploitable mixture of its population (``state.meta_strategy``, also the
        eval meta-strategy), never more exploitable than the previous one; without a tree, the meta-solver's."""
        state = self.state
        if self.tree is None:
            return super().meta_solve()
        meta_game = state.meta_game.mean_game()
        weights = [self.restricted_distribution(p) for p in range(2)]
        state.meta_strategy = make_equilibrium(meta_game, concept="least_exploitable",
                                               method=f"anytime_{self.anytime_options.method}", marginals=weights)
        state.eval_meta_strategy = state.meta_strategy
        state.extra.restricted = [[float(w) for w in m] for m in state.meta_strategy.marginals]
        return meta_game

    def restricted_distribution(self, player: int) -> np.ndarray:
        """``player``'s least exploitable mixture of its population now, or the previous one (padded with zeros)
        when the new one is not less exploitable, measured exactly."""
        plans = self._tabular_populations()[player].plans
        if self.anytime_options.method == "lp":
            found = least_exploitable_mixture(self.tree, player, plans)
        else:
            found = rm_br_mixture(self.tree, player, plans, steps=self.anytime_options.rm_br_steps)
        self._minimax = {**getattr(self, "_minimax", {}), player: found.opponent_plan}
        previous = self.state.extra.restricted
        if previous is None:
            return found.weights
        padded = np.zeros(len(plans))
        padded[:len(previous[player])] = previous[player]
        return found.weights if found.opponent_value < opponent_value(self.tree, player, padded @ plans) else padded

    def select(self, t: int, targets: list, responses: list) -> None:
        """The responses join by the usual rules (:meth:`psro.PSRO.select`); with exact responses and ``repeated:
        minimax``, one that is already a member of its population is replaced by the player's best response to
        the opponent's minimax strategy against that population (the restricted-distribution LP's dual)."""
        super().select(t, targets, responses)
        if self.learned or self.tree is None or self.anytime_options.repeated != "minimax":
            return
        for p, pending in enumerate(self.state.pending):
            members = self.state.populations[p].policies
            for i, (policy, _) in enumerate(pending):
                if any(np.array_equal(policy, member) for member in members):
                    plans = [None, None]
                    plans[1 - p] = self._minimax[p]
                    response = best_response(self.tree, p, plans)
                    pending[i] = (response.policy, response.value)
