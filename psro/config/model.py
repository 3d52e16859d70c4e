"""The typed configuration of a PSRO run: one dataclass, loadable from YAML, overridable from the command line.

The fields' types, defaults and docstrings are the one description of the
options: :func:`field_help` reads them (the docstrings from the source, as
attribute docstrings) together with each name field's choices from its
registry (:data:`CHOICES`), and the ``psro`` command builds its ``--help`` from
that. Values are checked when a config is built (ranges, the run name) and by
:meth:`PSROConfig.validate` (names against the registries); every error starts
with the field's name.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import importlib
import logging
import re
import typing
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import yaml
from annotated_types import Ge, Gt  # (the fields' bounds, checked by config_checks.check_bounds)

from games.memory_limit import check_file
from games.validation import check_int, is_integer
from psro.config.checks import (
    algorithm_options,
    check_bounds,
    check_budgets,
    check_reference_opponents,
    check_run_name,
    check_teams,
    field_check,
)
from psro.config.fields import DuplicateKey, FieldHelp, UniqueKeyLoader, assigned_values, checked_value, describe_fields
from psro.config.game import is_environment_game, num_players, resolve_run_game, spec_kept
from psro.config.sections import HELD_IN_OPTIONS, current_spelling, flat_assignment, flatten, nest
from psro.errors import ConfigError, with_field

logger = logging.getLogger(__name__)

__all__ = ["PSROConfig", "CHOICES", "check_teams", "FieldHelp", "choices", "field_help", "with_field",
           "algorithm_options", "resolve_run_game", "is_environment_game", "num_players", "spec_kept"]


#: The fields that name something in a registry, and where their allowed names live: ``(module, attribute)``,
#: a sequence or a function returning one. They are read when asked (the registries are the single source, so a
#: newly registered name appears in ``psro run --help`` too); :func:`choices` reads one.
CHOICES = {
    "meta_solver": ("psro.meta.solvers", "known_names"), "eval_meta_solver": ("psro.meta.solvers", "known_names"),
    "update_players": ("psro.loop.selection", "UPDATE_PLAYERS"),
    "br_selection": ("psro.loop.selection", "BR_SELECTIONS"),
    "oracle": ("psro.oracles", "oracle_names"), "evaluator": ("psro.evaluation", "evaluator_names"),
    "executor": ("games.executors", "ENGINES"),   # or a worker count
    "top_up_method": ("psro.evaluation", "TOP_UP_METHODS"), "oracle_dispatch": ("psro.oracles.jobs", "ORACLE_DISPATCH"),
    "prune_dominated": ("psro.meta.solvers", "PRUNE_DOMINATED"), "exact_gap": ("psro.config.model", "EXACT_GAP"),
    "algorithm": ("psro.loop.algorithms", "ALGORITHMS"),
}

#: The fields of a run rather than of its solver (where it stops, what it writes and shows): a checkpoint's solver
#: options (:meth:`PSROConfig.solver_options`) leave them out; every other field is a solver option.
RUN_FIELDS = ("name", "iterations", "target_gap", "time_limit", "checkpoint", "progress", "rank_population",
              "ranking_alpha")
#: The fields a solver's options hold (:data:`psro.config.sections.HELD_IN_OPTIONS`).
FOLDED_FIELDS = tuple(HELD_IN_OPTIONS)

#: The values of ``exact_gap`` (YAML's true and false are booleans).
EXACT_GAP = ("auto", "true", "false")


def choices(field: str) -> list:
    """The names a registry allows for ``field`` (see :data:`CHOICES`).

    Examples
    --------
    >>> choices("update_players")
    ['all', 'cycle', 'random']
    """
    module, attribute = CHOICES[field]
    names = getattr(importlib.import_module(module), attribute)
    return list(names() if callable(names) else names)


#: The ``evaluator`` a config gets when it names none (an environment game, without a tree, gets monte_carlo)
_DEFAULT_EVALUATOR = "sequence_form"


@dataclass(frozen=True)
class PSROConfig:
    """Everything a PSRO run needs. Field docstrings follow each field.

    A file or mapping may also nest the fields in sections (``oracle: {name: ppo, options: {total_steps: 4096}}``
    for ``oracle: ppo`` and ``oracle_options: {total_steps: 4096}``; the table:
    :data:`psro.config.sections.SECTIONS`; :meth:`to_nested`).

    Examples
    --------
    >>> PSROConfig.from_dict({"run": {"iterations": 5}, "oracle": {"name": "ppo", "options": {"total_steps": 64}}}
    ...                      ).oracle_options
    {'total_steps': 64}
    >>> cfg = PSROConfig.from_dict({"game": "kuhn_poker", "iterations": 5})
    >>> cfg.replace_from_strings(["target_gap=1e-3"]).target_gap
    0.001
    >>> PSROConfig.from_dict({"iteration": 5})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown config field 'iteration'. Did you mean 'iterations'? ...
    """

    name: str = ""
    """Run name; the default run directory is ``runs/<name>-<timestamp>``. Empty: the config file's stem."""

    algorithm: str = "psro"
    """The training loop (:mod:`psro.loop.algorithms`): ``psro`` (PSRO / JPSRO), the self-play family
    (``self_play``, ``fictitious_self_play``, ``nfsp``, ``fxp``, ``league``) or offline training from a dataset
    (``coffee_psro``, ``offline_psro``)."""

    algorithm_options: typing.Optional[dict] = None
    """The algorithm's own options (each algorithm checks them with its own options dataclass; null: its
    defaults), e.g. ``{eta: 0.3}`` for ``fxp``."""

    teams: typing.Optional[list] = None
    """Players that share a payoff, as lists of player indices covering every player once, e.g.
    ``[[0, 1, 2], [3, 4, 5]]`` (null: every player for itself)."""

    symmetric: bool = False
    """Symmetric (single-population) PSRO on a symmetric game: one population plays every seat, one best response
    per iteration, the meta-game solved as a symmetric game (psro.loop.seating). A game that is not
    symmetric is refused (the payoffs of a normal-form game; a one-shot OpenSpiel game's payoff tensor, from its
    tree); only ``algorithm: psro`` takes it."""

    game: str = "kuhn_poker"
    """OpenSpiel game string, e.g. ``kuhn_poker`` or ``leduc_poker``, ``catalog:<name>(<options>)`` for a game
    of games.catalog, e.g. ``catalog:fxp_example(team_size=3)``, ``observation:<game>`` for an OpenSpiel game
    without information-state tensors played through its observation tensor by learned oracles, e.g.
    ``observation:connect_four``, or ``package.module:Name``, a game of your own module, imported when needed
    (games.imported_games) (in Python also a pyspiel.Game, a
    games.NormalFormGame, played as a one-shot game with pure-strategy best responses, or a
    games.SequentialGame)."""

    meta_solver: str = "nash"
    """Meta-solver name (see ``psro.meta.solvers.known_names()``). Product solvers (``nash``, ``alpharank``,
    ``prd``, ``uniform``, ``rae``, ...) run PSRO; correlated ones (``mgcce``, ``mgce``, ...) run JPSRO with CCE or
    CE targets. ``nash`` warm-starts the zero-sum LP on two-player constant-sum games and otherwise calls the
    general-sum / n-player Nash dispatcher."""

    meta_solver_options: typing.Optional[dict] = None
    """Keyword options of the meta-solver, e.g. ``{alpha: 10.0}`` for ``alpharank`` (null: none)."""

    prune_dominated: typing.Optional[str] = None
    """Before each meta-solve, remove the policies that are dominated in the meta-game, iteratively, by pure and
    mixed strategies: ``strict`` or ``weak`` domination (null: no pruning). Pruned policies get zero weight; the
    meta-solvers then solve cold (no warm-started LP)."""

    eval_meta_solver: typing.Optional[str] = None
    """Meta-solver whose solution the reported gap measures (null: the same as ``meta_solver``); it must give
    the same kind of solution (product, CCE or CE)."""

    extensive_form_gaps: bool = False
    """JPSRO: also measure the eval meta-strategy's EFCE and EFCCE gaps in the full game every iteration (the
    history's ``efce_gap`` and ``efcce_gap``; NaN when off or for PSRO). One backward induction per sequence of
    each player: fast on Kuhn and Leduc, minutes per iteration on sheriff."""

    update_players: str = "all"
    """Whose best responses join each iteration: ``all``, ``cycle`` (one player in turn) or ``random``
    (one player drawn from the seeded generator)."""

    br_selection: str = "all"
    """Which best responses join when a player has several (CE-JPSRO: one per recommended policy): ``all``,
    ``novel`` (only those not already in the population) or ``largest_gap`` (the novel one with the largest
    mass-weighted deviation incentive)."""

    initial_policies: typing.Optional[list] = None
    """Each player's first policies, instead of the uniform one: per player a list of pure strategies (action
    indices, for a game where the player decides once, such as a normal-form game), e.g. ``[[0], [0]]`` to start
    rock-paper-scissors at (rock, rock); in Python also tabular policy arrays ``(num_infostates, num_actions)``.
    Needs tabular populations (an exact or OpenSpiel oracle). Null: the uniform policy."""

    oracle: str = "exact"
    """Best-response oracle: ``exact`` (sequence form, numpy), ``openspiel`` (pyspiel.TabularBestResponse and
    cce_dist), the learned ``dqn`` / ``ppo`` (psro.oracles.learned.oracle) and ``minimax_dqn`` (the Minimax
    Exploiter), or ``team_pg`` (decentralised team learners on a normal-form team game)."""

    oracle_options: typing.Optional[dict] = None
    """A learned oracle's settings: fields of ``psro.oracles.learned.dqn.DQNConfig`` /
    ``psro.oracles.learned.ppo.PPOConfig``, ``target_mode`` and ``on_bad_response`` (``error``, the default:
    a response that did not learn stops the run naming ``learning_rate``; ``warn``: logged and recorded in the
    history's ``response_ok``), e.g. ``{total_steps: 4096}`` (null: none; a
    registered oracle of one's own receives them as keyword arguments). ``total_steps`` is the learned response's
    budget (null: the oracle's default, 20,000 for dqn and ppo, 300,000 for model_br and neural_br; before 2026-12
    also the field ``oracle_steps``, still read with a DeprecationWarning)."""

    oracle_dispatch: str = "auto"
    """Which oracle calls go through the executor: ``auto`` (the learned oracles' jobs, seconds each; exact
    oracles are called in-process), ``executor`` (all) or ``in_process`` (none)."""

    evaluator: str = _DEFAULT_EVALUATOR
    """Meta-game evaluator: ``sequence_form`` (exact, numpy), ``openspiel`` (exact, pyspiel.expected_returns) or
    ``monte_carlo`` (sampled episodes, with counts and variances in the meta-game). An environment game (no game
    tree) left at the default gets ``monte_carlo``, said in a log line."""

    episodes_per_profile: Annotated[int, Ge(1)] = 1000
    """Episodes per meta-game profile for the ``monte_carlo`` evaluator (ignored by the exact ones)."""

    evaluator_options: typing.Optional[dict] = None
    """Further options of the ``monte_carlo`` evaluator (``episodes_per_task``, ``tasks_per_batch``, ``num_envs``,
    ``keyed``: the new profiles played side by side on keyed random numbers; its seed defaults to ``seed`` and its
    executor is the run's) (null: none)."""

    max_histories: Annotated[int, Ge(1)] = 1_000_000
    """The game-tree budget: the whole tree (what exact oracles, exact evaluators and the exact gap need) is built
    only for a game with at most this many histories. Beyond it, exact_gap=auto goes on without a tree (gap NaN,
    said once in the log), and an exact oracle or evaluator is an error; a learned oracle (``ppo``, ``dqn``) with
    ``evaluator: monte_carlo`` plays the game without its tree."""

    exact_gap: typing.Union[str, bool] = "auto"
    """Measure the history's exact ``gap`` in the full game (neural policies tabularised over the tree's
    infostates; the meta-strategy's own value computed exactly too): ``auto`` (when the tree fits within
    ``max_histories``), ``true`` (an error when it does not) or ``false`` (no tree unless the oracle or the
    evaluator needs one; gap NaN)."""

    exact_gap_every: Annotated[int, Ge(1)] = 1
    """With ``exact_gap: true`` on phantom_ttt or dark_hex (:func:`psro.exact_nash_conv`, minutes a measure): the gap
    at iterations k, 2k, ... (row 0 only when 1) and on the last row of each run call (NaN on the others)."""

    approx_gap_every: typing.Union[int, str, None] = "auto"
    """When to measure ``approx_gap``, a lower bound of the gap from learned best responses (per target the best of
    the best population member, a fresh and a warm-started response, picked on one set of episodes and valued on
    fresh ones) and sampled play, with a standard error: ``auto`` (where there is no exact gap, at iterations 0, 1,
    2, 4, 8, 16, ...), every this many iterations, 0 (only on the last row) or null (never, e.g. when timing a run
    that calls run() once per iteration). Unless null it is also measured on the last row of each run call. Its cost
    is the history's ``approx_gap_time``. Runs with a learned oracle only (else NaN)."""

    approx_gap_options: typing.Optional[dict] = None
    """approx_gap's settings, e.g. ``{episodes: 500, total_steps: 4096}`` (null: the defaults): the keys of
    :class:`psro.measures.approx_gap_settings.ApproxGapSettings` (``episodes``, ``selection_episodes``,
    ``warm_start``, ``oracle``, ``train``, ``stderr_target``, ``max_episodes``, ``share``, each a nested option of
    psro run, with its default) and the options of its learned oracle. That oracle is ``oracle``, else
    :func:`psro.measures.approx_gap_settings.default_responder`: model_br at its own defaults for a run on ppo, dqn,
    neural_br or model_br, unless these options set the oracle's (then they are the run's oracle's, from the run's
    ``oracle_options`` with ``total_steps`` ``max(s, min(10 s, 40000))`` for its ``total_steps`` s). ``share``
    (default 0.2) is the most of the wall time measuring may take: a due row before the last measures without fresh
    training, or not at all, where training would exceed it, keeping room for the last row, which is always measured
    as ``train`` asks (a run too short for that goes over its share, with a warning); like time_limit it depends on
    the machine's speed."""

    device: str = "cpu"
    """Where the learned oracles train their networks: ``cpu`` or ``cuda`` (``cuda:N``), which needs a GPU that
    torch sees. Acting, evaluation and the saved weights stay on the CPU."""

    warm_start: bool = False
    """Learned oracles: start each player's new best response from the weights of its previous one (default: a
    fresh network every time)."""

    executor: str = "serial"
    """Where the run's jobs go: the learned oracles' (``dqn``, ``ppo``) best-response jobs of all players and
    targets of an iteration, and the ``monte_carlo`` evaluator's episodes. ``serial``, ``process`` (a local
    process pool), ``ray`` (a local Ray instance; needs the ``ray`` extra) or a number of worker processes such
    as ``2``. Results do not depend on it (every job's seed is derived from ``seed``); exact oracles are called
    in-process whatever it is."""

    ray_address: typing.Optional[str] = None
    """With ``executor: ray``, the cluster to join instead of starting a local Ray instance: ``HOST:PORT`` (the
    head's GCS port, e.g. ``head-node:6379``), ``ray://HOST:10001`` (Ray Client) or ``auto`` (null: a local
    instance). In YAML also ``executor: {engine: ray, address: HOST:PORT}``. An address nothing answers on is an
    error within seconds. Never taken from a checkpoint: a resumed run joins a cluster only when told again."""

    top_up_episodes: Annotated[int, Ge(0)] = 0
    """Extra episodes per iteration for the ``monte_carlo`` evaluator, spent after the new profiles are evaluated
    and before the meta-solve on the profiles whose uncertainty matters (0: none; must be 0 with an exact
    evaluator)."""

    top_up_method: str = "support"
    """Where the top-up episodes go: ``support`` (profiles weighted by how much they enter the current
    meta-strategy's regret, times their standard errors) or ``response_graph_ucb`` (the ends of single-deviation
    edges whose confidence intervals still overlap)."""

    top_up_rounds: Annotated[int, Ge(1)] = 4
    """Rounds each iteration's top-up is split into (each re-allocates from the samples so far)."""

    iterations: Annotated[typing.Optional[int], Ge(0)] = 100
    """Stop after this many PSRO iterations in total, resumed parts included (null: no limit)."""

    target_gap: Annotated[typing.Optional[float], Ge(0)] = 1e-6
    """Stop once the meta-strategy's gap in the full game (NashConv, or the CCE / CE gap for JPSRO) is at most
    this (null: never)."""

    time_limit: Annotated[typing.Optional[float], Ge(0)] = None
    """Stop once the run has taken this many wall-clock seconds in total, resumed parts included (null: no
    limit)."""

    checkpoint: bool = True
    """Write a checkpoint into the run directory after every iteration, so ``psro resume RUN_DIR`` can continue."""

    seed: Annotated[int, Ge(0)] = 0
    """Seed of the run's random generator."""

    progress: bool = True
    """Show a progress bar (the CLI prints its table instead)."""

    rank_population: bool = True
    """When the run ends, rank the final population with alpha-Rank, and with Elo where it is defined (two-player
    constant-sum meta-games) (``ranking.csv`` in the run directory, and a table on the console); see
    :mod:`psro.run.population_ranking`."""

    ranking_alpha: Annotated[float, Gt(0)] = 10.0
    """alpha-Rank's selection intensity for that ranking."""

    reference_opponents: typing.Optional[list] = None
    """Track the eval meta-strategy against fixed references every iteration (psro.measures.reference_opponents): a list
    of ``uniform``, ``mcts`` (perfect-information games), ``ismcts``, e.g. ``[uniform, mcts]``; the history gains
    ``<reference>_win_<p>`` and ``<reference>_return_<p>`` per player (40 episodes each, MCTS with 20 simulations
    per move; their episodes count in ``eval_episodes``). A config cannot name a bot of its own (``module:name``
    is for ``psro evaluate``). Null: none."""

    loggers: typing.Optional[list] = None
    """Where ``psro run`` and ``psro sweep`` also send each history row as the run trains (:mod:`psro.run.loggers`):
    ``csv`` (``log.csv``) and ``tensorboard`` (event files under ``tensorboard/``; the ``tensorboard`` extra),
    e.g. ``[tensorboard]`` (null: none)."""

    def __post_init__(self):
        """Check the values whose range does not depend on the game (counts, bounds, the seed, the run name)."""
        check_run_name(self.name)
        check_bounds(self)   # (the bounds annotated on the fields: Ge, Gt)
        if self.approx_gap_every != "auto":
            field_check(check_int, "approx_gap_every", self.approx_gap_every, minimum=0, none_ok=True)
        if self.exact_gap not in (True, False, "auto"):
            raise ConfigError("exact_gap", f"must be auto, true or false; got {self.exact_gap!r}.")
        if not isinstance(self.device, str) or not re.fullmatch(r"cpu|cuda(:\d+)?", self.device):
            raise ConfigError("device", f"must be 'cpu', 'cuda' or 'cuda:N'; got {self.device!r}.")

    # ---------------------------------------------------------------- building
    @classmethod
    def field_names(cls) -> list:
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def from_dict(cls, data: dict, source: str = "config", strict: bool = False) -> "PSROConfig":
        """Build and type-check a config from a mapping; unknown fields and wrong types raise ``ValueError``.

        ``strict=True`` (Python keyword arguments, :class:`psro.PSRO`'s keyword form): numbers written as strings
        are not converted, and a value of the wrong type raises ``TypeError``."""
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise ValueError(f"{source} must be a mapping of field: value; got {type(data).__name__}.")
        known = cls.field_names()
        values = {}
        data = current_spelling(flatten(data, source), source)   # (psro.config.sections)
        for key, value in data.items():
            if key not in known:
                close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
                hint = f" Did you mean {close[0]!r}?" if close else ""
                raise ValueError(f"unknown config field {key!r}.{hint} Known fields: {', '.join(known)}.")
            values[key] = checked_value(key, value, _field_types()[key], strict)
        return cls(**values)

    @classmethod
    def from_keywords(cls, game, executor, fields: dict) -> tuple:
        """:class:`psro.PSRO`'s keyword form: ``(config, executor)`` from a game and config fields (checked
        strictly, :meth:`from_dict`). The run's executor stays an argument when it is an instance or a mapping;
        an ``evaluator_options["executor"]`` (deprecated: a ``DeprecationWarning``) is the run's when none is given.

        Examples
        --------
        >>> config, executor = PSROConfig.from_keywords("leduc_poker", 2, {"meta_solver": "uniform"})
        >>> config.game, config.meta_solver, config.executor, executor
        ('leduc_poker', 'uniform', '2', None)
        """
        fields = dict(fields)
        if "game" in fields:
            raise TypeError("give the game once, as the first argument.")
        options = dict(fields.get("evaluator_options") or {})
        legacy = options.pop("executor", None) if _sampled(fields.get("evaluator")) else None
        if legacy is not None:
            warnings.warn("evaluator_options['executor'] is deprecated and will be removed: give the run's executor "
                          "as PSRO(..., executor=...).", DeprecationWarning, stacklevel=4)
        if executor is not None and legacy is not None and legacy is not executor and legacy != executor:
            raise ValueError(f"executor={executor!r} and evaluator_options['executor']={legacy!r} differ; give one "
                             "executor for the run (the executor argument).")
        if "evaluator_options" in fields:
            fields["evaluator_options"] = options or None
        executor = executor if executor is not None else legacy
        if isinstance(executor, str) or is_integer(executor):
            fields["executor"], executor = str(executor), None
        return cls.from_dict({"game": game, **fields}, source="PSRO keyword arguments", strict=True), executor

    @classmethod
    def for_loop(cls, algorithm: str, config, executor, fields: dict) -> tuple:
        """A training loop's constructor arguments as ``(config, executor)``: a :class:`PSROConfig` as it is, or a
        game and ``fields`` (:meth:`from_keywords`, ``algorithm`` defaulting to the loop's own name); a config of
        another algorithm is refused, naming the class to use.

        Examples
        --------
        >>> PSROConfig.for_loop("psro", "kuhn_poker", None, {"seed": 3})[0].seed
        3
        >>> PSROConfig.for_loop("psro", PSROConfig(algorithm="fxp"), None, {})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        psro.errors.ConfigError: algorithm: this config runs 'fxp', not 'psro'; build it with ...
        """
        if not isinstance(config, PSROConfig):
            config, executor = cls.from_keywords(config, executor, {"algorithm": algorithm, **fields})
        elif fields:
            raise TypeError(f"give the options in the PSROConfig, not also as keywords ({sorted(fields)}).")
        if config.algorithm != algorithm:
            raise ConfigError("algorithm", f"this config runs {config.algorithm!r}, not {algorithm!r}; build it with "
                              f"psro.algorithm_class({config.algorithm!r})(config).")
        return config, executor

    @classmethod
    def from_yaml(cls, path) -> "PSROConfig":
        """Read a YAML file; the run name defaults to the file's stem.

        Examples
        --------
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "tiny.yaml")
        >>> _ = open(path, "w").write("game: kuhn_poker\\niterations: 3\\n")
        >>> cfg = PSROConfig.from_yaml(path)
        >>> cfg.name, cfg.iterations
        ('tiny', 3)
        """
        path = Path(path)
        if path.is_dir():
            raise ValueError(f"config file {str(path)!r} is a directory; give a YAML file such as "
                             "experiments/configs/kuhn_poker.yaml (to continue a run directory: psro resume RUN_DIR).")
        if not path.is_file():
            raise ValueError(f"config file {str(path)!r} does not exist.")
        check_file(path)   # (its size, before it is read whole)
        with open(path) as fh:
            try:
                data = yaml.load(fh, Loader=UniqueKeyLoader)   # a SafeLoader that refuses duplicate keys
            except DuplicateKey as exc:
                raise ValueError(f"config file {str(path)!r}: {exc}") from None
            except yaml.YAMLError as exc:
                raise ValueError(f"config file {str(path)!r} is not valid YAML: {' '.join(str(exc).split())}") \
                    from None
            except UnicodeDecodeError as exc:   # (a binary file, or another encoding than UTF-8)
                raise ValueError(f"config file {str(path)!r} is not UTF-8 text (byte {exc.start}: {exc.reason}); "
                                 "give a YAML config such as experiments/configs/kuhn_poker.yaml.") from None
        cfg = cls.from_dict(data, source=str(path))
        return cfg if cfg.name else dataclasses.replace(cfg, name=path.stem)

    def replace(self, **changes) -> "PSROConfig":
        """A copy with some fields changed (type-checked like :meth:`from_dict`)."""
        return PSROConfig.from_dict({**self.to_dict(), **changes})

    def replace_from_strings(self, assignments) -> "PSROConfig":
        """Apply ``["field=value", ...]`` overrides; values are parsed as YAML (``null``, ``5``, ``1e-6``,
        ``[64, 64]``). ``mapping.key=value`` sets one key of a mapping field, keeping its other keys; a field may
        also be named in its section's form (``run.seed=2``, ``oracle.options.hidden=[8]``).

        Examples
        --------
        >>> config = PSROConfig(oracle="ppo", oracle_options={"total_steps": 64})
        >>> config.replace_from_strings(["oracle_options.hidden=[32, 32]"]).oracle_options
        {'total_steps': 64, 'hidden': [32, 32]}
        >>> PSROConfig(oracle="ppo").replace_from_strings(["oracle.options.total_steps=128", "run.seed=2"]).seed
        2
        """
        assignments = [flat_assignment(item) for item in assignments]
        fields = {name: _is_mapping(annotation) for name, annotation in _field_types().items()}
        changes = assigned_values(assignments, fields, lambda field: getattr(self, field))
        return self.replace(**changes)

    def executor_spec(self):
        """``executor`` as :func:`games.executors.make_executor` takes it: a worker count becomes an int.

        Examples
        --------
        >>> PSROConfig(executor="2").executor_spec(), PSROConfig(executor="ray").executor_spec()
        (2, 'ray')
        """
        text = self.executor.strip()
        if text == "ray" and self.ray_address:
            return {"engine": "ray", "address": self.ray_address}
        return int(text) if text.isdigit() else text

    def to_dict(self) -> dict:
        """The fields as a plain dict (what the run directory's ``config.yaml`` holds)."""
        return {k: getattr(self, k) for k in self.field_names()}

    def to_nested(self) -> dict:
        """The fields grouped in their sections (:mod:`psro.config.sections`); :meth:`from_dict` reads it back.

        Examples
        --------
        >>> nested = PSROConfig(oracle="ppo", oracle_options={"total_steps": 64}).to_nested()
        >>> nested["oracle"]["name"], nested["oracle"]["options"], nested["run"]["iterations"]
        ('ppo', {'total_steps': 64}, 100)
        >>> PSROConfig.from_dict(nested) == PSROConfig(oracle="ppo", oracle_options={"total_steps": 64})
        True
        """
        return nest(self.to_dict())

    def validate(self) -> None:
        """Check the whole config before anything runs: the game, every name against its registry, the options'
        types and how the choices fit together, and that some stopping rule is set.

        This is the one validator: :class:`psro.PSRO` calls :meth:`checked_game` (all of this but the stopping
        rules, which belong to ``run``). Raises ``ValueError`` whose message starts with the field's name.

        Examples
        --------
        >>> PSROConfig(game="kuhn_pokr").validate()  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        psro.errors.ConfigError: game: unknown OpenSpiel game 'kuhn_pokr'. Did you mean 'kuhn_poker'...
        """
        self.checked_game()
        check_budgets(self)   # (episodes and steps refused before the run allocates or trains)
        from psro.run.loggers import check_loggers

        check_loggers(self.loggers)
        if self.iterations is None and self.target_gap is None and self.time_limit is None:
            raise ConfigError("iterations", "give at least one stopping rule (iterations, target_gap or time_limit).")

    def checked_game(self) -> tuple:
        """Validate everything the loop reads (see :meth:`validate`); return ``(pyspiel_game, normal_form)``
        (:func:`psro.sequence_form.matrix_game.resolve_game`; ``normal_form`` is None for an OpenSpiel game).

        Examples
        --------
        >>> PSROConfig(game="kuhn_poker(players=3)", meta_solver="nash", oracle="exact").checked_game()[0]
        kuhn_poker(players=3)
        >>> PSROConfig(oracle="exact", oracle_options={"total_steps": 10}).checked_game()  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        psro.errors.ConfigError: oracle_options: only the learned oracles ['dqn', 'ppo', 'minimax_dqn', ...] train; ...
        """
        from psro.evaluation import TOP_UP_METHODS, evaluator_capabilities
        from psro.loop.algorithms import algorithm_class
        from psro.loop.selection import BR_SELECTIONS, UPDATE_PLAYERS
        from psro.meta.solvers import PRUNE_DOMINATED, get_meta_solver
        from psro.oracles import learned_oracle_names, oracle_capabilities
        from psro.oracles.jobs import ORACLE_DISPATCH
        from psro.sequence_form.matrix_game import check_normal_form_options, game_is_constant_sum

        if isinstance(self.game, str) and not self.game.strip():
            raise ConfigError("game", f"must be an OpenSpiel game string such as 'kuhn_poker'; got {self.game!r}.")
        game, normal_form = with_field("game", resolve_run_game, self.game)
        environment = self._environment(game)
        n = num_players(game)
        constant_sum = False if environment else game_is_constant_sum(game, normal_form)
        for field in ("meta_solver_options", "oracle_options", "evaluator_options", "approx_gap_options",
                      "algorithm_options"):
            value = getattr(self, field)
            if value is not None and not isinstance(value, dict):
                raise ValueError(f"{field}: must be a mapping of option: value (or null); got {value!r}.")
        meta = with_field("meta_solver", get_meta_solver, self.meta_solver)
        with_field("meta_solver_options", get_meta_solver, self.meta_solver, **(self.meta_solver_options or {}))
        with_field("meta_solver", meta.check_fits, n, constant_sum)
        if self.eval_meta_solver is not None:
            evaluation = with_field("eval_meta_solver", get_meta_solver, self.eval_meta_solver)
            with_field("eval_meta_solver", evaluation.check_fits, n, constant_sum)
            if evaluation.kind != meta.kind:
                raise ConfigError("eval_meta_solver", f"{self.eval_meta_solver!r} gives a {evaluation.kind} solution "
                                  f"but meta_solver={self.meta_solver!r} a {meta.kind} one; choose two of the same "
                                  "kind.")
        with_field("algorithm", algorithm_class, self.algorithm)
        if self.teams is not None:
            with_field("teams", check_teams, self.teams, n)
        if self.symmetric:
            from psro.loop.symmetric_games import SYMMETRIC_ALGORITHMS

            if self.algorithm not in SYMMETRIC_ALGORITHMS or self.teams is not None:
                why = "a team game is played on its team view" if self.algorithm in SYMMETRIC_ALGORITHMS else \
                    f"algorithm={self.algorithm!r} keeps its own populations"
                raise ConfigError("symmetric", f"single-population PSRO runs with algorithm "
                                  f"{' or '.join(map(repr, SYMMETRIC_ALGORITHMS))} and no teams; {why} (set symmetric "
                                  "to false).")
        if self.symmetric and self.top_up_episodes:
            raise ConfigError("top_up_episodes", "a symmetric run fills each profile's seat-swapped copies from one "
                              "evaluation, which a top-up of single profiles would break; set top_up_episodes=0.")
        for field, allowed in (("update_players", UPDATE_PLAYERS), ("br_selection", BR_SELECTIONS),
                               ("oracle_dispatch", ORACLE_DISPATCH), ("top_up_method", TOP_UP_METHODS)):
            if getattr(self, field) not in allowed:
                raise ValueError(f"{field}: must be one of {list(allowed)}; got {getattr(self, field)!r}.")
        if self.prune_dominated is not None and self.prune_dominated not in PRUNE_DOMINATED:
            raise ConfigError("prune_dominated", f"must be one of {list(PRUNE_DOMINATED)} or null; "
                              f"got {self.prune_dominated!r}.")
        learned = with_field("oracle", oracle_capabilities, self.oracle).learned
        sampled = with_field("evaluator", evaluator_capabilities, self.evaluator).sampled
        if "total_steps" in (self.oracle_options or {}) and not learned:
            raise ConfigError("oracle_options", f"only the learned oracles {learned_oracle_names()} train; oracle="
                              f"{self.oracle!r} takes no total_steps (remove it).")
        if (self.oracle_options or {}).get("key_size") == "view":   # (model_br's table keyed by the board's view)
            from psro.oracles.learned.model_based import view_size
            view_size(game)
        if not sampled and self.evaluator_options:
            raise ConfigError("evaluator_options", f"the {self.evaluator!r} evaluator takes no options; got "
                              f"{sorted(self.evaluator_options)}.")
        if "executor" in (self.evaluator_options or {}):
            raise ConfigError("evaluator_options", "the evaluator uses the run's executor; set executor instead.")
        spec = int(self.executor.strip()) if self.executor.strip().isdigit() else self.executor.strip()
        if spec not in ("serial", "process", "ray") and not (isinstance(spec, int) and spec >= 1):
            raise ConfigError("executor", f"must be 'serial', 'process', 'ray' or a number of worker processes "
                              f"such as 2; got {self.executor!r}.")
        if self.ray_address is not None and spec_engine(spec) != "ray":
            raise ConfigError("ray_address", f"joins a Ray cluster, which needs executor: ray; got executor "
                              f"{self.executor!r} (set executor to ray, or ray_address to null).")
        if self.top_up_episodes and not evaluator_capabilities(self.evaluator).top_up:
            raise ConfigError("top_up_episodes", f"{self.top_up_episodes} needs evaluator='monte_carlo' (an evaluator "
                              f"that supports top-up); the {self.evaluator!r} evaluator has nothing to top up (set "
                              "top_up_episodes=0).")
        if normal_form is not None:
            check_normal_form_options(self.oracle, self.evaluator, self.oracle_dispatch)   # (a ConfigError)
        self._check_learning(game, environment, learned, sampled)
        if self.reference_opponents is not None:
            with_field("reference_opponents", check_reference_opponents, self.reference_opponents, game)
        return game, normal_form

    def _environment(self, game) -> bool:
        """Whether ``game`` is an environment game (no tree); if so, a default ``evaluator`` becomes
        ``monte_carlo``, said in a log line (an evaluator chosen explicitly stays, and is checked)."""
        environment = is_environment_game(game)
        if environment and self.evaluator == _DEFAULT_EVALUATOR:   # (the default needs a tree; this game has none)
            logger.warning("evaluator: %s is an environment game without a game tree, so the meta-game is "
                           "evaluated by sampled play (evaluator 'monte_carlo' instead of the default %r).", game,
                           _DEFAULT_EVALUATOR)
            object.__setattr__(self, "evaluator", "monte_carlo")   # (the config is frozen; this is its default)
        return environment

    def _check_learning(self, game, environment: bool, learned: bool, sampled: bool) -> None:
        """The options of learned runs and games without a tree: what a learned oracle needs of the game, its
        budgets, ``warm_start``, ``device``, and what an environment (no tree) allows."""
        from psro.evaluation import evaluator_capabilities
        from psro.oracles import learned_oracle_names, oracle_capabilities

        if environment:
            for field, ok, fix in (("oracle", not oracle_capabilities(self.oracle).needs_tree, "oracle='ppo' or 'dqn'"),
                                   ("evaluator", not evaluator_capabilities(self.evaluator).needs_tree,
                                    "evaluator='monte_carlo'"),
                                   ("exact_gap", self.exact_gap is not True, "exact_gap='auto' or false")):
                if not ok:
                    raise ValueError(f"{field}: {getattr(self, field)!r} needs the game tree, which an environment "
                                     f"({game}) does not have; use {fix}.")
        if learned and not environment:
            from games.env_history_cache import missing_tensor_advice
            from games.environment import observation_size

            if not game.get_type().provides_information_state_tensor:
                raise ConfigError("game", f"{game} provides no information-state tensor, which the learned oracle "
                                  f"{self.oracle!r} observes; {missing_tensor_advice(game)}; or use oracle='exact' "
                                  "(and an exact evaluator) where its game tree fits.")
            try:
                observation_size(game)
            except ValueError as exc:   # the game has one, and reading it failed: say why
                raise ConfigError("game", f"the information-state tensor of {game}, which the learned oracle "
                                  f"{self.oracle!r} observes, cannot be read: {exc}") from None
        from psro.measures.approx_gap_settings import approx_gap_settings

        approx_gap_settings(self.oracle_settings(), self.approx_gap_options, self.oracle)   # (episodes >= 2, ...)
        if (self.approx_gap_options or {}).get("lbr") is not None:   # (before training, not at the first measurement)
            from psro.measures.local_best_response import check_observable_actions

            check_observable_actions(game)
        for field in ("oracle_options", "approx_gap_options"):
            options = getattr(self, field) or {}
            for key in ("total_steps", "eval_episodes"):
                if key in options and (not is_integer(options[key]) or options[key] < 1):
                    raise ValueError(f"{field}: {key} must be a positive int (a zero budget trains nothing); got "
                                     f"{options[key]!r}.")
        approx_oracle = (self.approx_gap_options or {}).get("oracle")
        if approx_oracle is not None and not _learned(approx_oracle):
            raise ConfigError("approx_gap_options", f"oracle must be a learned oracle {learned_oracle_names()} (fresh "
                              f"best responses trained on sampled play); got {approx_oracle!r}.")
        if self.warm_start and not learned:
            raise ConfigError("warm_start", f"only the learned oracles train networks to start from; oracle="
                              f"{self.oracle!r} (set warm_start to false).")
        if self.device != "cpu":
            if not learned:
                raise ConfigError("device", f"only the learned oracles train on a device; oracle={self.oracle!r} "
                                  "(set device to 'cpu').")
            import torch

            if not torch.cuda.is_available():
                raise ConfigError("device", f"{self.device!r} needs a GPU that torch sees (torch.cuda.is_available() "
                                  "is False); use device='cpu'.")

    def solver_options(self, game_spec, eval_meta_solver: str, executor) -> dict:
        """What a checkpoint stores to rebuild the solver (:attr:`psro.PSRO.options`): every field but
        :data:`RUN_FIELDS` and :data:`FOLDED_FIELDS`, with the game as ``game_spec`` (its string, or a
        NormalFormGame's JSON), the resolved eval meta-solver, the portable executor spec, the oracle's and the
        evaluator's settings, and every mapping or list copied; ``PSRO(options.pop("game"), **options)`` builds the
        same solver.

        Examples
        --------
        >>> options = PSROConfig(oracle="ppo", oracle_options={"total_steps": 64}).solver_options("kuhn_poker", "nash",
        ...                                                                                   "serial")
        >>> options["oracle_options"], options["meta_solver_options"], "iterations" in options
        ({'total_steps': 64}, {}, False)
        """
        given = dict(game=game_spec, eval_meta_solver=eval_meta_solver, executor=executor, seed=int(self.seed),
                     oracle_options=self.oracle_settings(), evaluator_options=self.evaluator_settings())
        types = _field_types()
        options = {}
        for f in dataclasses.fields(self):
            if f.name not in RUN_FIELDS + FOLDED_FIELDS:
                options[f.name] = given[f.name] if f.name in given else _copied(getattr(self, f.name), types[f.name])
        return options

    def oracle_settings(self) -> dict:
        """The oracle's options: ``oracle_options`` with the run's ``warm_start`` and ``device``.

        Examples
        --------
        >>> PSROConfig(oracle="ppo", oracle_options={"total_steps": 64}, warm_start=True).oracle_settings()
        {'total_steps': 64, 'warm_start': True}
        """
        options = dict(self.oracle_options or {})
        if self.warm_start:
            options["warm_start"] = True
        if self.device != "cpu":
            options["device"] = self.device
        return options

    def evaluator_settings(self) -> dict:
        """The evaluator's options: for ``monte_carlo``, ``episodes_per_profile`` and ``evaluator_options``.

        Examples
        --------
        >>> PSROConfig(evaluator="monte_carlo", episodes_per_profile=50).evaluator_settings()
        {'episodes_per_profile': 50}
        """
        if not _sampled(self.evaluator):
            return dict(self.evaluator_options or {})
        return {"episodes_per_profile": self.episodes_per_profile, **(self.evaluator_options or {})}


def _learned(oracle) -> bool:
    """Whether ``oracle`` names a registered learned oracle; False for a name that is not one."""
    from psro.oracles import oracle_capabilities

    try:
        return isinstance(oracle, str) and oracle_capabilities(oracle).learned
    except ValueError:
        return False


def _sampled(evaluator) -> bool:
    """Whether ``evaluator`` names a registered sampled evaluator (:func:`psro.evaluation.evaluator_capabilities`);
    False for a name that is not one (the field's check reports it)."""
    from psro.evaluation import evaluator_capabilities

    try:
        return isinstance(evaluator, str) and evaluator_capabilities(evaluator).sampled
    except ValueError:
        return False


def spec_engine(spec) -> str:
    """The engine name of an executor spec (``"serial"``, ``"process"``, ``"ray"``; a worker count is a pool)."""
    if isinstance(spec, dict):
        return spec.get("engine")
    return "process" if isinstance(spec, int) and spec > 1 else "serial" if isinstance(spec, int) else spec


@functools.cache
def _field_types() -> dict:   # (once: get_type_hints evaluates every annotation again on each call; read only)
    return typing.get_type_hints(PSROConfig)


def mapping_fields() -> list:
    """The fields whose value is a mapping of options (``oracle_options``, ...): ``field.key`` names one option."""
    return [name for name, annotation in _field_types().items() if _is_mapping(annotation)]


def _is_mapping(annotation) -> bool:
    """Whether a field's annotation is a mapping (``dict``, or ``dict`` or None)."""
    return annotation is dict or dict in typing.get_args(annotation)


def _copied(value, annotation):
    """A field's value as a solver option: a mapping copied (an unset one as ``{}``), a list and its lists copied."""
    if _is_mapping(annotation):
        return dict(value or {})
    if isinstance(value, (list, tuple)):
        return [list(v) if isinstance(v, (list, tuple)) else v for v in value]
    return value


def field_help() -> list:
    """One :class:`FieldHelp` per config field, in declaration order: type, default, choices and description.

    Examples
    --------
    >>> oracle = next(h for h in field_help() if h.name == "oracle")
    >>> oracle.default, oracle.choices[:2], oracle.description
    ('exact', ['exact', 'openspiel'], 'Best-response oracle: exact (sequence form, numpy), ...')
    """
    return describe_fields(PSROConfig, {name: functools.partial(choices, name) for name in CHOICES})
