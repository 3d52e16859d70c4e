"""Diversity-aware PSRO: the response that joins maximises its payoff against the meta-strategy plus a weighted
diversity gain over the population (Perez-Nieves et al. 2021; Liu et al. 2021).

Every iteration, for every player ``p`` (two-player games), a set of *candidate* policies is scored by

    ``score(c) = v(c) + diversity_weight * gain(c)``

where ``v(c)`` is ``c``'s exact expected payoff against the opponent's meta-strategy and ``gain(c)`` the
``diversity`` option's measure (:mod:`psro.variants.diversity_measures`), computed exactly on the game tree from
the payoff vectors ``M`` (each own member's payoffs against each opponent member) and the candidate's own vector:

- ``"dpp"``: the gain in expected cardinality of the DPP with ``L = M M^T`` when the candidate's row is added
  (Perez-Nieves et al. 2021);
- ``"response"``: the squared distance of the candidate's payoff vector to the convex hull of the population's
  (Liu et al. 2021's response diversity);
- ``"behavioural"``: the total-variation distance between the distribution over terminal histories of
  (candidate, opponent meta-strategy) and that of (the player's meta-strategy mixture, opponent meta-strategy):
  an occupancy measure over whole trajectories (Liu et al. use an f-divergence of occupancy measures; total
  variation keeps it finite for a pure candidate outside the mixture's support);
- ``"unified"``: behavioural plus response diversity (Liu et al.'s two terms with equal weights).

The candidates: in a normal-form game, every pure strategy (the objective is evaluated exactly on each); in a
sequential game with an exact oracle, the best response to the meta-strategy and the best response to each single
opponent member; with a learned oracle (``dqn``, ``ppo``), ``candidates`` responses to the meta-strategy trained
with different seeds (the keys ``(t, i)``), tabularised on the tree. A candidate already in the population (a
tabular one, equal to a member) is not scored; when every candidate is, the best response is kept. The best one
joins when it is new (a diverse response joins for its diversity even when it gains nothing over the
meta-strategy's value; ``br_selection`` has one response per player to pass), except at an exact oracle's fixed
point (no best response to the meta-strategy gains anything: nothing joins, as in PSRO). The compute of the
candidates that do not join counts in ``env_steps`` too. Per iteration ``state.extra.diversity`` keeps the
chosen candidate's index, score terms and each population's expected cardinality.

With ``diversity_weight = 0`` the loop is PSRO (one best response per player; the same history).

How this differs from the papers: they shape a reinforcement-learning objective and follow its gradient (a
diversity-regularised best response); here the diversity term only *chooses among* candidates, exact in
normal-form games (where it is the papers' objective maximised over pure strategies) and a selection among a few
responses in sequential games. Payoff vectors are exact on the tree, so the loop needs the game tree (refused
otherwise, naming ``exact_gap`` / ``max_histories``), a two-player game and a product meta-solver.

Examples
--------
>>> from games import catalog
>>> game = catalog.rock_paper_scissors()
>>> diverse = DiversePSRO(game, initial_policies=[[0], [0]], algorithm_options={"diversity_weight": 2.0},
...                       progress=False)
>>> history = diverse.run(iterations=2)
>>> history["population_0"].tolist(), [round(g, 6) for g in history["gap"]]
([1, 2, 3], [2.0, 2.0, 0.0])
"""

from __future__ import annotations

import dataclasses

import numpy as np

from games.validation import check_int, check_real
from psro.config.model import PSROConfig, algorithm_options
from psro.errors import ConfigError, with_field
from psro.loop import selection
from psro.loop.measures import is_exact
from psro.loop.psro_loop import PSRO
from psro.loop.requirements import LoopRequirements
from psro.loop.state import LoopExtra
from psro.oracles.base import BestResponse, Target
from psro.policies import realization_plans
from psro.policies.population import PolicyPopulation, tabular_policy
from psro.variants.diversity_measures import (
    dpp_gain,
    expected_cardinality,
    hull_distance,
    payoff_rows,
    terminal_distributions,
    total_variation,
)

__all__ = ["DiversePSRO", "DiverseOptions", "DIVERSITY_KINDS", "diversity_gains"]

#: ``DiverseOptions.diversity``: the diversity term (module docstring).
DIVERSITY_KINDS = ("dpp", "response", "behavioural", "unified")


@dataclasses.dataclass(frozen=True)
class DiverseOptions:
    """Diversity-aware PSRO's own options (``algorithm_options``).

    Attributes
    ----------
    diversity_weight : float
        The weight of the diversity gain in the score (>= 0; 0 is PSRO).
    diversity : {"dpp", "response", "behavioural", "unified"}
        The diversity term (module docstring).
    candidates : int
        With a learned oracle: responses trained per player and iteration (>= 1).

    Examples
    --------
    >>> DiverseOptions.from_dict({"diversity": "response"}).diversity
    'response'
    >>> DiverseOptions(diversity_weight=-0.5)
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: algorithm_options: diversity_weight must be a number >= 0; got -0.5.
    """

    diversity_weight: float = 0.5
    diversity: str = "dpp"
    candidates: int = 2

    def __post_init__(self):
        weight = with_field("algorithm_options", check_real, self.diversity_weight, "diversity_weight", minimum=0.0)
        object.__setattr__(self, "diversity_weight", weight)
        if self.diversity not in DIVERSITY_KINDS:
            raise ConfigError("algorithm_options", f"diversity must be one of {list(DIVERSITY_KINDS)}; got "
                              f"{self.diversity!r}.")
        with_field("algorithm_options", check_int, self.candidates, "candidates", minimum=1)

    @classmethod
    def from_dict(cls, options: dict | None) -> "DiverseOptions":
        """The options of a config's ``algorithm_options`` mapping (None: the defaults)."""
        return algorithm_options(cls, options, "DiversePSRO")


def diversity_gains(kind: str, rows: np.ndarray, candidate_rows: np.ndarray, candidate_terminals: np.ndarray,
                    mixture_terminals: np.ndarray) -> np.ndarray:
    """Per candidate, the diversity term ``kind`` (module docstring): ``rows`` the population's payoff vectors,
    ``candidate_rows`` the candidates', ``candidate_terminals`` / ``mixture_terminals`` the terminal distributions
    of the candidates and of the meta-strategy's mixture against the opponent's meta-strategy.

    Examples
    --------
    >>> rows, cands = np.array([[0.0, -1.0]]), np.array([[1.0, 0.0], [0.0, -1.0]])
    >>> diversity_gains("response", rows, cands, np.eye(2), np.eye(2)[0]).round(9).tolist()
    [2.0, 0.0]
    >>> diversity_gains("behavioural", rows, cands, np.eye(2), np.eye(2)[0]).tolist()
    [0.0, 1.0]
    """
    behavioural = total_variation(candidate_terminals, mixture_terminals) if kind in ("behavioural", "unified") \
        else 0.0
    if kind == "dpp":
        return dpp_gain(rows, candidate_rows)
    if kind == "behavioural":
        return np.asarray(behavioural, dtype=np.float64)
    response = np.array([hull_distance(rows, row) for row in candidate_rows])
    return response if kind == "response" else response + behavioural


@dataclasses.dataclass
class DiverseExtra(LoopExtra):
    """Diverse PSRO's own state: per iteration, the diversity record of each player's response."""

    diversity: list = dataclasses.field(default_factory=list)


class DiversePSRO(PSRO):
    """Diversity-aware PSRO: ``DiversePSRO(game, **fields)`` or ``DiversePSRO(PSROConfig(algorithm="diverse_psro",
    ...))``; see the module docstring.

    Examples
    --------
    >>> DiversePSRO("kuhn_poker", algorithm_options={"diversity": "entropy"}, progress=False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: algorithm_options: diversity must be one of ['dpp', 'response', 'behavioural', \
'unified']; ...
    """

    algorithm = "diverse_psro"
    options_class = DiverseOptions
    Extra = DiverseExtra
    requirements = LoopRequirements(two_players=True, product_meta_solver=True)

    def __init__(self, config, /, *, executor=None, checkpoint_dir=None, **fields):
        config, executor = PSROConfig.for_loop(type(self).algorithm, config, executor, fields)
        self.diverse_options = self.options_class.from_dict(config.algorithm_options)
        super().__init__(config, executor=executor, checkpoint_dir=checkpoint_dir)
        self.active = self.diverse_options.diversity_weight > 0.0
        if self.active and self.tree is None:
            raise ConfigError("exact_gap", "DiversePSRO scores payoff vectors exactly on the game tree, and this run "
                              f"has none (exact_gap={config.exact_gap!r}, max_histories={config.max_histories}); use "
                              "exact_gap auto or true on a game whose tree fits max_histories.")
        self._best = None

    def respond(self, t: int, targets: list) -> list:
        """Per player, the candidate with the best score (module docstring), answering its one target; with
        ``diversity_weight = 0``, PSRO's best responses."""
        if not self.active:
            return super().respond(t, targets)
        candidate_targets = [self._candidate_targets(p, targets[p][0]) for p in range(2)]
        responses = super().respond(t, candidate_targets)
        self._best = [[player[0]] for player in responses]   # (candidate 0 answers the meta-strategy)
        chosen, record = [], {"chosen": [], "value": [], "gain": [], "expected_cardinality": []}
        for p in range(2):
            response, terms = self._choose(p, None if self.normal_form is not None else responses[p])
            chosen.append([response])
            for key, value in terms.items():
                record[key].append(value)
        self.state.extra.diversity.append(record)
        return chosen

    def _candidate_targets(self, player: int, target: Target):
        """The targets whose responses are the player's candidates (in a normal-form game only the meta-strategy's,
        for the fixed point: every pure strategy is a candidate)."""
        if self.normal_form is not None:
            return [target]
        if self.learned:
            return [target] * self.diverse_options.candidates
        q, mixtures = 1 - player, list(target.mixtures)
        singles = []
        for j in range(len(self.state.populations[q])):
            mixtures[q] = np.eye(len(self.state.populations[q]))[j]
            singles.append(dataclasses.replace(target, mixtures=tuple(mixtures), on_policy_value=float("nan")))
        return [target, *singles]

    def _choose(self, player: int, responses) -> tuple:
        """The best-scoring candidate of ``player`` (among ``responses``; None: every pure strategy) as a
        :class:`BestResponse`, and its score terms."""
        tree, q = self.tree, 1 - player
        tabular = [pop.tabular(tree) if isinstance(pop, PolicyPopulation) else pop for pop in self.state.populations]
        info = tree.infostates[player]
        if responses is None:   # a normal-form game: every pure strategy
            policies = np.eye(info.num_actions)[:, None, :] * np.ones((1, info.num_infostates, 1))
        else:
            policies = np.stack([tabular_policy(br.policy, tree, player) for br in responses])
        plans = realization_plans(policies, info)
        sigma = self.state.meta_strategy.marginals
        rows = payoff_rows(tree, player, tabular[player].plans, tabular[q].plans)
        candidate_rows = payoff_rows(tree, player, plans, tabular[q].plans)
        opponent_plan = sigma[q] @ tabular[q].plans
        gains = diversity_gains(self.diverse_options.diversity, rows, candidate_rows,
                                terminal_distributions(tree, player, plans, opponent_plan),
                                terminal_distributions(tree, player, sigma[player][None] @ tabular[player].plans,
                                                       opponent_plan)[0])
        values = candidate_rows @ sigma[q]
        scores = values + self.diverse_options.diversity_weight * gains
        if not self.learned:   # (a candidate equal to a member adds nothing new)
            known = np.array([np.any(np.all(tabular[player].policies == c, axis=(1, 2))) for c in policies])
            scores = np.where(known, -np.inf, scores)
        best = int(np.argmax(scores)) if np.isfinite(scores).any() else 0
        if responses is None:
            response = BestResponse(player=player, policy=policies[best], value=float(values[best]))
        else:   # (an exact response to one opponent member is valued against the meta-strategy instead)
            response = responses[best] if self.learned else dataclasses.replace(responses[best],
                                                                               value=float(values[best]))
            self._count_unchosen([br for i, br in enumerate(responses) if i != best])
        terms = {"chosen": best, "value": float(values[best]), "gain": float(gains[best]),
                 "expected_cardinality": expected_cardinality(rows)}
        return response, terms

    def _count_unchosen(self, responses: list) -> None:
        """The compute of candidates that do not join counts too (the loop counts the chosen ones)."""
        self.state.env_steps += sum(br.env_steps for br in responses)
        self.state.measure_episodes += sum(br.eval_episodes for br in responses)

    def select(self, t: int, targets: list, responses: list) -> None:
        """The chosen response of each updated player joins when it is new, except at an exact oracle's fixed
        point (judged on the best responses to the meta-strategy); with ``diversity_weight = 0``, PSRO's
        selection."""
        if not self.active:
            return super().select(t, targets, responses)
        state = self.state
        fixed_point = is_exact(self.oracle) and selection.at_fixed_point(self._tolerances, targets, self._best)
        for p in selection.players_to_update(self.update_players, t, 2, state.rng):
            br, pop = responses[p][0], state.populations[p]
            known = not isinstance(pop, PolicyPopulation) and bool(
                np.any(np.all(pop.policies == br.policy, axis=(1, 2))))
            state.pending[p] = [] if fixed_point or known else [(br.policy, br.value)]
