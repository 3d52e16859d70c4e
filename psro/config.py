"""The typed configuration of a PSRO run: one dataclass, loadable from YAML, overridable from the command line."""

from __future__ import annotations

import dataclasses
import difflib
import typing
from dataclasses import dataclass
from pathlib import Path

import yaml

__all__ = ["PSROConfig"]


@dataclass(frozen=True)
class PSROConfig:
    """Everything a PSRO run needs. Field docstrings follow each field.

    Examples
    --------
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

    game: str = "kuhn_poker"
    """OpenSpiel game string, e.g. ``kuhn_poker`` or ``leduc_poker``."""

    meta_solver: str = "nash"
    """Meta-solver name (see ``psro.meta_solvers.known_names()``). Product solvers (``nash``, ``alpharank``,
    ``prd``, ``uniform``, ``rae``, ...) run PSRO; correlated ones (``mgcce``, ``mgce``, ...) run JPSRO with CCE or
    CE targets. ``nash`` warm-starts the zero-sum LP on two-player constant-sum games and otherwise calls the
    general-sum / n-player Nash dispatcher."""

    eval_meta_solver: typing.Optional[str] = None
    """Meta-solver whose solution the reported gap measures (null: the same as ``meta_solver``); it must give
    the same kind of solution (product, CCE or CE)."""

    update_players: str = "all"
    """Whose best responses join each iteration: ``all``, ``cycle`` (one player in turn) or ``random``
    (one player drawn from the seeded generator)."""

    br_selection: str = "all"
    """Which best responses join when a player has several (CE-JPSRO: one per recommended policy): ``all``,
    ``novel`` (only those not already in the population) or ``largest_gap`` (the novel one with the largest
    mass-weighted deviation incentive)."""

    oracle: str = "exact"
    """Best-response oracle: ``exact`` (sequence form, numpy), ``openspiel`` (pyspiel.TabularBestResponse and
    cce_dist), or the learned ``dqn`` / ``ppo`` (psro.oracles_rl)."""

    oracle_steps: typing.Optional[int] = None
    """Training steps per learned best response (``dqn`` / ``ppo``; the ``total_steps`` of
    ``psro.dqn_oracle.DQNConfig`` / ``psro.ppo_oracle.PPOConfig``). Null: the oracle's default (20,000). Must be
    null with the ``exact`` and ``openspiel`` oracles."""

    evaluator: str = "sequence_form"
    """Meta-game evaluator: ``sequence_form`` (exact, numpy), ``openspiel`` (exact, pyspiel.expected_returns) or
    ``monte_carlo`` (sampled episodes, with counts and variances in the meta-game)."""

    episodes_per_profile: int = 1000
    """Episodes per meta-game profile for the ``monte_carlo`` evaluator (ignored by the exact ones)."""

    executor: str = "serial"
    """Where the run's jobs go: the learned oracles' (``dqn``, ``ppo``) best-response jobs of all players and
    targets of an iteration, and the ``monte_carlo`` evaluator's episodes. ``serial``, ``process`` (a local
    process pool), ``ray`` (a local Ray instance; needs the ``ray`` extra) or a number of worker processes such
    as ``2``. Results do not depend on it (every job's seed is derived from ``seed``); exact oracles are called
    in-process whatever it is."""

    top_up_episodes: int = 0
    """Extra episodes per iteration for the ``monte_carlo`` evaluator, spent after the new profiles are evaluated
    and before the meta-solve on the profiles whose uncertainty matters (0: none; must be 0 with an exact
    evaluator)."""

    top_up_method: str = "support"
    """Where the top-up episodes go: ``support`` (profiles weighted by how much they enter the current
    meta-strategy's regret, times their standard errors) or ``response_graph_ucb`` (the ends of single-deviation
    edges whose confidence intervals still overlap)."""

    top_up_rounds: int = 4
    """Rounds each iteration's top-up is split into (each re-allocates from the samples so far)."""

    iterations: typing.Optional[int] = 100
    """Stop after this many PSRO iterations in total, resumed parts included (null: no limit)."""

    target_gap: typing.Optional[float] = 1e-6
    """Stop once the meta-strategy's gap in the full game (NashConv, or the CCE / CE gap for JPSRO) is at most
    this (null: never)."""

    time_limit: typing.Optional[float] = None
    """Stop once the run has taken this many wall-clock seconds in total, resumed parts included (null: no
    limit)."""

    checkpoint: bool = True
    """Write a checkpoint into the run directory after every iteration, so ``psro resume RUN_DIR`` can continue."""

    seed: int = 0
    """Seed of the run's random generator."""

    progress: bool = True
    """Show a progress bar (the CLI prints its table instead)."""

    rank_population: bool = True
    """When the run ends, rank the final population with alpha-Rank and Elo (``ranking.csv`` in the run
    directory, and a table on the console); see :mod:`psro.population_ranking`."""

    ranking_alpha: float = 10.0
    """alpha-Rank's selection intensity for that ranking."""

    # ---------------------------------------------------------------- building
    @classmethod
    def field_names(cls) -> list:
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def from_dict(cls, data: dict, source: str = "config") -> "PSROConfig":
        """Build and type-check a config from a mapping; unknown fields and wrong types raise ``ValueError``."""
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise ValueError(f"{source} must be a mapping of field: value; got {type(data).__name__}.")
        known = cls.field_names()
        values = {}
        for key, value in data.items():
            if key not in known:
                close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
                hint = f" Did you mean {close[0]!r}?" if close else ""
                raise ValueError(f"unknown config field {key!r}.{hint} Known fields: {', '.join(known)}.")
            values[key] = _coerce(key, value, _field_types()[key])
        return cls(**values)

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
        if not path.is_file():
            raise ValueError(f"config file {str(path)!r} does not exist.")
        with open(path) as fh:
            try:
                data = yaml.safe_load(fh)
            except yaml.YAMLError as exc:
                raise ValueError(f"config file {str(path)!r} is not valid YAML: {exc}") from None
        cfg = cls.from_dict(data, source=str(path))
        return cfg if cfg.name else dataclasses.replace(cfg, name=path.stem)

    def replace(self, **changes) -> "PSROConfig":
        """A copy with some fields changed (type-checked like :meth:`from_dict`)."""
        return PSROConfig.from_dict({**self.to_dict(), **changes})

    def replace_from_strings(self, assignments) -> "PSROConfig":
        """Apply ``["field=value", ...]`` overrides; values are parsed as YAML scalars (``null``, ``5``, ``1e-6``)."""
        changes = {}
        for item in assignments:
            if "=" not in item:
                raise ValueError(f"override {item!r} must look like field=value, e.g. iterations=5.")
            key, text = item.split("=", 1)
            changes[key.strip()] = yaml.safe_load(text) if text.strip() else ""
        return self.replace(**changes)

    def solver_kwargs(self) -> dict:
        """The keyword arguments of :class:`psro.PSRO` that this config sets.

        Examples
        --------
        >>> PSROConfig(meta_solver="mgcce").solver_kwargs()["meta_solver"]
        'mgcce'
        """
        evaluator_options = None
        if self.evaluator == "monte_carlo":
            evaluator_options = dict(episodes_per_profile=self.episodes_per_profile)
        return dict(game=self.game, meta_solver=self.meta_solver, oracle=self.oracle, evaluator=self.evaluator,
                    seed=self.seed, eval_meta_solver=self.eval_meta_solver, update_players=self.update_players,
                    br_selection=self.br_selection, evaluator_options=evaluator_options,
                    executor=self.executor_spec(), top_up_episodes=self.top_up_episodes,
                    top_up_method=self.top_up_method, top_up_rounds=self.top_up_rounds,
                    oracle_options=None if self.oracle_steps is None else {"total_steps": self.oracle_steps})

    def executor_spec(self):
        """``executor`` as :func:`games.executors.make_executor` takes it: a worker count becomes an int.

        Examples
        --------
        >>> PSROConfig(executor="2").executor_spec(), PSROConfig(executor="ray").executor_spec()
        (2, 'ray')
        """
        text = self.executor.strip()
        return int(text) if text.isdigit() else text

    def to_dict(self) -> dict:
        """The fields as a plain dict (what the run directory's ``config.yaml`` holds)."""
        return {k: getattr(self, k) for k in self.field_names()}

    def validate(self) -> None:
        """Check the names (game, meta-solver, oracle, evaluator) before anything runs.

        Raises ``ValueError`` whose message starts with the field's name.

        Examples
        --------
        >>> PSROConfig(game="kuhn_pokr").validate()  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: game: unknown OpenSpiel game 'kuhn_pokr'. Did you mean 'kuhn_poker'...
        """
        import games
        from psro.best_response import LEARNED, ORACLES
        from psro.evaluation import EVALUATORS
        from psro.loop import BR_SELECTIONS, UPDATE_PLAYERS, _constant_sum
        from psro.meta_solvers import get_meta_solver

        try:
            game = games.load(self.game)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"game: {exc}") from None
        try:
            get_meta_solver(self.meta_solver).check_fits(game.num_players(), _constant_sum(game))
        except (ValueError, TypeError) as exc:
            raise ValueError(f"meta_solver: {exc}") from None
        if self.eval_meta_solver is not None:
            try:
                get_meta_solver(self.eval_meta_solver).check_fits(game.num_players(), _constant_sum(game))
            except (ValueError, TypeError) as exc:
                raise ValueError(f"eval_meta_solver: {exc}") from None
            if get_meta_solver(self.eval_meta_solver).kind != get_meta_solver(self.meta_solver).kind:
                raise ValueError(f"eval_meta_solver: {self.eval_meta_solver!r} gives a different kind of solution "
                                 f"than meta_solver={self.meta_solver!r}; choose one of the same kind.")
        if self.update_players not in UPDATE_PLAYERS:
            raise ValueError(f"update_players: must be one of {list(UPDATE_PLAYERS)}; got {self.update_players!r}.")
        if self.br_selection not in BR_SELECTIONS:
            raise ValueError(f"br_selection: must be one of {list(BR_SELECTIONS)}; got {self.br_selection!r}.")
        if self.oracle not in ORACLES:
            raise ValueError(f"oracle: must be one of {list(ORACLES)}; got {self.oracle!r}.")
        if self.oracle_steps is not None:
            if self.oracle not in LEARNED:
                raise ValueError(f"oracle_steps: only the learned oracles {list(LEARNED)} train; oracle="
                                 f"{self.oracle!r} takes no steps (set oracle_steps to null).")
            if self.oracle_steps < 1:
                raise ValueError(f"oracle_steps: must be a positive number of training steps; got {self.oracle_steps}.")
        if self.evaluator not in EVALUATORS:
            raise ValueError(f"evaluator: must be one of {sorted(EVALUATORS)}; got {self.evaluator!r}.")
        spec = self.executor_spec()
        if spec not in ("serial", "process", "ray") and not (isinstance(spec, int) and spec >= 1):
            raise ValueError(f"executor: must be 'serial', 'process', 'ray' or a number of worker processes "
                             f"such as 2; got {self.executor!r}.")
        from psro.loop import _check_top_up

        try:
            _check_top_up(self.top_up_episodes, self.top_up_method, self.top_up_rounds, self.evaluator)
        except ValueError as exc:
            field = next(f for f in ("top_up_episodes", "top_up_method", "top_up_rounds") if str(exc).startswith(f))
            raise ValueError(f"{field}: {exc}") from None
        if self.iterations is None and self.target_gap is None and self.time_limit is None:
            raise ValueError("iterations: give at least one stopping rule (iterations, target_gap or time_limit).")


def _field_types() -> dict:
    return typing.get_type_hints(PSROConfig)


def _coerce(key: str, value, annotation):
    """Check ``value`` against the field's type; numbers written as strings (``"1e-6"``) are converted."""
    optional = typing.get_origin(annotation) is typing.Union and type(None) in typing.get_args(annotation)
    base = next((a for a in typing.get_args(annotation) if a is not type(None)), annotation) if optional else annotation
    if value is None:
        if optional:
            return None
        raise ValueError(f"config field {key!r} cannot be null; give a {base.__name__}.")
    if base is bool:
        if isinstance(value, bool):
            return value
    elif base is int:
        if isinstance(value, str):
            try:
                value = int(value)
            except ValueError:
                pass
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
    elif base is float:
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                pass
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif base is str:
        if isinstance(value, str):
            return value
        if isinstance(value, int) and not isinstance(value, bool):   # YAML reads `executor: 2` as an int
            return str(value)
    raise ValueError(
        f"config field {key!r} must be {'null or ' if optional else ''}{_article(base.__name__)} {base.__name__}; "
        f"got {value!r} "
        f"({type(value).__name__})."
    )


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"
