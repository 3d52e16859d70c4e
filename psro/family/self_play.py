"""Self-play and fictitious self-play as PSRO loops: every player trains against the others' latest policies, or
against the uniform mixture of their past ones.

Both are :class:`psro.loop.PSRO` with a fixed meta-strategy instead of a meta-solve: **self-play** (``SelfPlay``,
``algorithm: self_play``) answers the *latest* profile (the last member of every population), **fictitious
self-play** (``FictitiousSelfPlay``, ``algorithm: fictitious_self_play``) the uniform mixture over every
population (Brown's fictitious play when the oracle is exact). That meta-strategy is also what the algorithm
outputs, so the history's ``gap`` is the exploitability of the latest profile (self-play) or of the uniform
mixture (fictitious self-play). Every iteration each player's response joins its population, also when it equals
a member already there (the uniform mixture counts every iterate); the learner continues from the player's latest
policy (a tabular learner such as ``team_pg`` from that policy; ``dqn`` / ``ppo`` from their latest network when
``warm_start`` is on).

**Team games.** With ``teams`` set (a :class:`games.NormalFormGame` whose teams share payoffs), the loops play the
team view (:func:`psro.sequence_form.team_view.team_payoffs`): one player per team, its strategies the team's joint
actions, so the populations, the meta-game and the mixtures are the teams'. With oracle ``team_pg`` each team's
response is learned by its members, each its own learner (the ``members`` option is filled in), and the gap is
the team view's NashConv: the sum over teams of the best pure team deviation's gain (``len(teams)`` times the
team exploitability, :func:`psro.family.teams.team_exploitability`).

Examples
--------
>>> from games import catalog
>>> history = FictitiousSelfPlay(catalog.rock_paper_scissors(), progress=False).run(iterations=6)
>>> history["population_0"].tolist()           # one member joins every iteration, repeats included
[1, 2, 3, 4, 5, 6, 7]
>>> sp = SelfPlay(catalog.rock_paper_scissors(), progress=False)
>>> [round(g, 6) for g in sp.run(iterations=3)["gap"]]   # the latest profile is always pure: NashConv 2
[0.0, 2.0, 2.0, 2.0]
"""

from __future__ import annotations

import dataclasses
import logging

import numpy as np

from psro.config.model import PSROConfig
from psro.errors import ConfigError
from psro.loop.psro_loop import PSRO
from psro.meta.solvers import MetaSolver
from psro.sequence_form.team_view import team_config
from solvers import make_equilibrium

__all__ = ["SelfPlay", "FictitiousSelfPlay", "FamilyLoop", "LatestProfile"]

logger = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class LatestProfile(MetaSolver):
    """The meta-"solver" of self-play: the latest profile, every player's newest policy with probability one.

    Examples
    --------
    >>> from games import catalog
    >>> [m.tolist() for m in LatestProfile()(catalog.rock_paper_scissors()).marginals]
    [[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]]
    """

    name: str = "latest"
    method: str = "latest"

    def __call__(self, meta_game):
        marginals = [np.eye(k)[-1] for k in meta_game.shape]
        return make_equilibrium(meta_game, marginals=marginals, concept="latest", method="latest")


class FamilyLoop(PSRO):
    """The shared part of the self-play family's PSRO loops.

    A subclass sets :attr:`algorithm`, may fix the meta-solver (:meth:`_prepared`) and says what each player
    trains against (:meth:`targets`); here: team games play their team view (:func:`team_config`), the gap is
    measured with fresh exact best responses to the output (never the training responses), and every response of
    an iteration joins its player's population, in the order of its targets (no selection).
    """

    algorithm = "family"

    def __init__(self, config, /, *, executor=None, checkpoint_dir=None, **fields):
        config, executor = PSROConfig.for_loop(type(self).algorithm, config, executor, fields)
        for field, default in (("update_players", "all"), ("br_selection", "all")):
            if getattr(config, field) != default:
                raise ConfigError(field, f"{type(self).__name__} adds every player's response each iteration; "
                                  f"leave {field}={default!r} (got {getattr(config, field)!r}).")
        super().__init__(self._prepared(team_config(config)), executor=executor, checkpoint_dir=checkpoint_dir)

    def _prepared(self, config: PSROConfig) -> PSROConfig:
        """The config the loop runs (a subclass fixes its meta-solver here)."""
        return config

    def select(self, t: int, targets: list, responses: list) -> None:
        """Every response joins its player's population, in the order of its targets (no selection)."""
        self.state.pending = [[(br.policy, br.value) for br in player_responses] for player_responses in responses]

    def _own_start(self, player: int, member: int = -1):
        """The policy a continuing learner of ``player`` starts from: its ``member`` for a tabular learner (an
        exact oracle ignores it); None for a learned oracle, whose ``warm_start`` option decides."""
        return None if self.learned else self.state.populations[player].policies[member]


#: The meta-solver the family's loops run under: their targets are their own (:meth:`FamilyLoop.targets`), so it only
#: names the run's uniform eval meta-strategy (fictitious self-play's output).
FIXED_META_SOLVER = "uniform"


def _fixed_meta_solver(config: PSROConfig, algorithm: str) -> PSROConfig:
    """``config`` with ``meta_solver`` uniform: the family's fixed meta-strategies leave no meta-solver to choose."""
    left = (PSROConfig.__dataclass_fields__["meta_solver"].default, FIXED_META_SOLVER)   # (default, or fixed here)
    if config.meta_solver not in left or config.eval_meta_solver not in (None, FIXED_META_SOLVER) \
            or config.meta_solver_options:   # (a checkpoint's options name the uniform solver it ran)
        raise ConfigError("meta_solver", f"{algorithm} has its own fixed meta-strategy; leave meta_solver, "
                          f"eval_meta_solver and meta_solver_options at their defaults (got meta_solver="
                          f"{config.meta_solver!r}, eval_meta_solver={config.eval_meta_solver!r}).")
    return config.replace(meta_solver=FIXED_META_SOLVER, eval_meta_solver=None)


class SelfPlay(FamilyLoop):
    """Self-play: every player best-responds to the others' latest policies; the output is the latest profile.

    ``SelfPlay(game, **fields)`` or ``SelfPlay(PSROConfig(algorithm="self_play", ...))``, with any oracle; the
    meta-solver is fixed (:class:`LatestProfile`). See the module docstring.

    Examples
    --------
    >>> from games import catalog
    >>> sp = SelfPlay(catalog.fxp_example(), teams=catalog.fxp_teams(3), oracle="team_pg", progress=False)
    >>> history = sp.run(iterations=2)
    >>> [round(g / 2, 3) for g in history["gap"]]    # team exploitability: uniform, then the all-1 trap (C = 0.1)
    [1.113, 0.1, 0.1]
    """

    algorithm = "self_play"

    def __init__(self, config, /, **kwargs):
        super().__init__(config, **kwargs)
        self.meta_solver = self.eval_meta_solver = LatestProfile()

    def _prepared(self, config: PSROConfig) -> PSROConfig:
        return _fixed_meta_solver(config, "self_play")

    def targets(self, meta_game) -> list:
        return [[dataclasses.replace(target, initial_policy=self._own_start(p)) for target in targets]
                for p, targets in enumerate(super().targets(meta_game))]


class FictitiousSelfPlay(SelfPlay):
    """Fictitious self-play: every player best-responds to the uniform mixture of the others' past policies; the
    output is that uniform mixture (meta-solver ``uniform``). See the module docstring.

    Examples
    --------
    >>> fsp = FictitiousSelfPlay("kuhn_poker", progress=False)
    >>> gaps = fsp.run(iterations=20)["gap"]
    >>> bool(gaps.iloc[-1] < gaps.iloc[1] / 3)     # fictitious play converges in two-player zero-sum games
    True
    """

    algorithm = "fictitious_self_play"

    def __init__(self, config, /, **kwargs):
        FamilyLoop.__init__(self, config, **kwargs)   # (the config's uniform meta-solver is the algorithm's)

    def _prepared(self, config: PSROConfig) -> PSROConfig:
        return _fixed_meta_solver(config, "fictitious_self_play")

