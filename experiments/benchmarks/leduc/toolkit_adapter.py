"""The toolkit's own training loops as a side of a Leduc comparison (adapter ``toolkit``).

A side runs a run config (YAML; its
``algorithm``, PSRO by default, and its oracle, evaluator and meta-solver settings) with the comparison's seed, its
clock instead of a stopping rule and no game tree in training (:data:`BENCHMARK_FIELDS`), or, without a config,
deep PSRO with the PPO oracle and the Monte Carlo evaluator (:class:`Options`).

After every iteration the clock stops and the loop's output is measured exactly
(:class:`~experiments.benchmarks.leduc.measure.Measure`; :func:`loop_output`: PSRO's meta-strategy over its
populations, XDO/NXDO's restricted solution, NFSP's average policies).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from experiments.benchmarks.leduc.measure import GAME, Measure, population_members, row
from experiments.clock import Clock, until_budget
from experiments.harness import REPO_ROOT

__all__ = ["Options", "BENCHMARK_FIELDS", "configured_solver", "toolkit_solver", "loop_output", "run", "config_path"]

#: What a row's ``iteration`` counts.
UNIT = "iterations"


def config_path(path) -> Path:
    """A run config's path: absolute as given, else relative to the repository root (so that a comparison's
    YAML names ``experiments/configs/...`` from wherever it runs)."""
    path = Path(path)
    return path if path.is_absolute() else REPO_ROOT / path


@dataclasses.dataclass(frozen=True)
class Options:
    """The run's settings: a run ``config``, or else deep PSRO with the PPO oracle and these fields of
    ``psro.PSROConfig`` (``oracle_options`` goes to the PPO oracle; the defaults are the best of the PPO settings
    tried, results/deep_psro_leduc.md lists them with their curves)."""

    total_steps: int = 20_000
    """the PPO oracle's budget (``oracle_options.total_steps``)"""
    episodes_per_profile: int = 300
    meta_solver: str = "nash"
    oracle_options: dict = dataclasses.field(default_factory=lambda: {"eval_episodes": 200})
    config: str | None = None
    """a run config (YAML, e.g. ``experiments/configs/leduc_deep_tuned.yaml``, relative to the repository root or
    absolute) that replaces the fields above"""
    executor: str | None = None
    """with ``config``: the executor instead of the config's (``serial`` for one process on one core)"""
    fields: dict = dataclasses.field(default_factory=dict)
    """further fields of ``psro.PSROConfig``, over the config's or the fields above (not over
    :data:`BENCHMARK_FIELDS`), e.g. ``{algorithm: xdo, algorithm_options: {nfsp: {steps_per_iteration: 20000}}}``"""


#: The fields a ``config`` cannot set: the benchmark's (its seed, its clock instead of a stopping rule, no
#: checkpoints or ranking, no game tree in training, and no ``approx_gap``, whose extra responses would train inside
#: the budget: the benchmark measures the exact NashConv itself, off the clock).
BENCHMARK_FIELDS = dict(iterations=None, target_gap=None, time_limit=None, checkpoint=False, progress=False,
                        rank_population=False, exact_gap=False, approx_gap_every=None)


def configured_solver(seed: int, path, game: str = GAME, **fields):
    """The training loop of the run config at ``path`` (its ``algorithm``, PSRO by default) on ``game`` (Leduc),
    with the benchmark's :data:`BENCHMARK_FIELDS`, ``seed`` and ``fields`` (a ``mapping.key`` field, such as
    ``oracle_options.total_steps``, changes that option of the config's mapping). The file is read as ``psro run``
    reads it: flat or in sections (:func:`psro.config.sections.flatten`), no key given twice."""
    import yaml

    from psro import PSROConfig
    from psro.config.fields import UniqueKeyLoader, field_changes
    from psro.config.sections import flatten
    from psro.loop.algorithms import algorithm_class

    data = flatten(yaml.load(Path(path).read_text(), Loader=UniqueKeyLoader) or {}, source=str(path))
    if data.get("game", game) != game:
        raise ValueError(f"--config: the benchmark plays {game}; {path} names game {data['game']!r}.")
    data.update(field_changes({**BENCHMARK_FIELDS, "game": game, "seed": seed, **fields}, data.get))
    config = PSROConfig.from_dict(data, source=str(path))
    return algorithm_class(config.algorithm)(config)


def toolkit_solver(seed: int, options: Options):
    """The training loop of ``options``: with ``options.config``, that config's (:func:`configured_solver`), else
    PSRO with the PPO oracle and the Monte Carlo evaluator and no exact gap (no game tree); ``options.fields`` over
    either."""
    from psro import PSROConfig
    from psro.loop.algorithms import algorithm_class

    if options.config:
        executor = {"executor": options.executor} if options.executor else {}
        return configured_solver(seed, config_path(options.config), **executor, **options.fields)
    fields = dict(game=GAME, oracle="ppo", evaluator="monte_carlo", meta_solver=options.meta_solver,
                  episodes_per_profile=options.episodes_per_profile,
                  oracle_options={**options.oracle_options, "total_steps": options.total_steps}, seed=seed,
                  iterations=None,
                  target_gap=None, checkpoint=False, progress=False, rank_population=False, exact_gap=False)
    config = PSROConfig.from_dict({**fields, **options.fields}, source="the toolkit side's options")
    return algorithm_class(config.algorithm)(config)


def loop_output(solver, iteration: int) -> tuple:
    """What a training loop outputs, as ``(members, weights)`` per player, each member with a key under which
    its tabulation can be kept: XDO/NXDO's restricted solution and NFSP's average policies (one policy per
    player, new each iteration), else the populations mixed by the meta-strategy."""
    for method in ("restricted_solution", "average_policies"):
        if hasattr(solver, method):
            policies = getattr(solver, method)()
            return [[((iteration, p), pol)] for p, pol in enumerate(policies)], [[1.0]] * len(policies)
    state = solver.state
    return ([[((p, i), member) for i, member in enumerate(population_members(pop))]
             for p, pop in enumerate(state.populations)],
            state.meta_strategy.marginals)


def run(seed: int, budget: float, options: Options, clock: str = "wall", side: str = "ours") -> list:
    """The toolkit's loop of ``options`` (:func:`toolkit_solver`) for ``budget`` seconds of ``clock``; one row per
    iteration (row 0: the initial population), named ``side``.

    One ``run`` call; its history callback stops the clock, measures the output (:func:`loop_output`) and restarts
    it; the clock's timer ends the run at the budget (no per-call work, such as the last row's ``approx_gap``, is
    added; the iteration running at the end does not count).
    """
    import pyspiel
    import torch

    from psro.policies.population import tabular_policy

    torch.manual_seed(seed)
    exact = Measure(pyspiel.load_game(GAME))   # its tree is for measuring only, never given to the solver
    rows, clock, solver = [], Clock(budget, clock), None

    def measure(history_row):
        clock.stop()
        iteration = history_row["iteration"]
        members, weights = loop_output(solver, iteration)
        plans = [[exact.plan(key, p, lambda p=p, member=member: tabular_policy(member, exact.tree, p))
                  for key, member in keyed] for p, keyed in enumerate(members)]
        rows.append(row(side, seed, clock, iteration, exact.nash_conv(plans, weights), history_row.get("env_steps")))
        clock.start()

    try:
        with until_budget():   # the iteration running at the end of the budget does not count
            clock.start()
            solver = toolkit_solver(seed, options)
            if getattr(solver, "tree", None) is not None:
                raise RuntimeError(f"the {side} solver built the game tree; the benchmark runs it without one "
                                   "(exact_gap=False).")
            solver.run(iterations=10**9, callback=measure)
    finally:
        if solver is not None:
            solver.close()
    return rows
