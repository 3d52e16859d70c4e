"""Best-response jobs: one oracle call as a pure, picklable function of its inputs.

PSRO asks every player for best responses to its targets at every iteration.
Each such call is an :class:`OracleJob`: the game's string, the oracle's
registered name (:func:`psro.oracles.base.make_oracle`) and options, the run's
seed, the call's key ``(iteration, index)`` and the target as plain arrays
(every population's policies and realization plans, plus the mixtures or the
joint distribution). :func:`run_oracle_job` is a module-level function of
the job alone, so any :class:`games.executors.Executor` (serial, process pool,
Ray) can map it, and the answer never depends on which process computes it.

Seeds
-----
The training seed of a learned response is derived, never drawn from a
counter: :func:`job_seed` hashes ``(run seed, iteration, player, target index)``
with ``numpy.random.SeedSequence(seed, spawn_key=(iteration, player, index))``.
A run resumed from a checkpoint, or computed by different workers, therefore
trains every response with the same seed as an uninterrupted serial run.

Workers rebuild the game tree from the game's string once per process
(:func:`tree_for`, cached); the calling process registers the tree it already
has (:func:`remember_tree`), so serial jobs reuse it.

Which jobs go through the executor (``PSRO(oracle_dispatch=...)``,
:data:`ORACLE_DISPATCH`): with ``"auto"`` the learned oracles (``dqn``,
``ppo``), whose jobs take seconds, are mapped through the run's executor, and
the exact ones (``exact``, ``openspiel``), whose jobs take milliseconds, are
called in-process, where sending the populations would cost more than the
work; ``"executor"`` maps every oracle's jobs, ``"in_process"`` none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from games.validation import is_integer
from psro.game_tree import GameTree, PlayerInfostates
from psro.oracles.base import BestResponse, Target, make_oracle

__all__ = ["ORACLE_DISPATCH", "OracleJob", "PopulationArrays", "job_seed", "oracle_jobs", "remember_tree",
           "run_oracle_job", "tree_for"]

ORACLE_DISPATCH = ("auto", "executor", "in_process")

_TREES: dict = {}   # game string -> GameTree, per process


def job_seed(seed: int, iteration: int, player: int, index: int) -> int:
    """The training seed of a learned best-response job: a pure function of its four keys.

    ``SeedSequence(seed, spawn_key=(iteration, player, index))`` reduced to one
    32-bit word: the same keys give the same seed in every process and after
    a resume; different keys give independent streams.

    Parameters
    ----------
    seed : int
        The run's seed (non-negative).
    iteration : int
        The PSRO iteration whose targets the job answers.
    player : int
        The responder.
    index : int
        Which of the player's targets (several under CE-JPSRO, else 0).

    Examples
    --------
    >>> job_seed(0, 3, 1, 0) == job_seed(0, 3, 1, 0)
    True
    >>> len({job_seed(0, 3, 1, 0), job_seed(0, 3, 0, 0), job_seed(0, 4, 1, 0), job_seed(1, 3, 1, 0)})
    4
    """
    keys = {"seed": seed, "iteration": iteration, "player": player, "index": index}
    for name, value in keys.items():
        if not is_integer(value) or value < 0:
            raise ValueError(f"{name} must be a non-negative int; got {value!r}.")
    sequence = np.random.SeedSequence(int(seed), spawn_key=(int(iteration), int(player), int(index)))
    return int(sequence.generate_state(1, dtype=np.uint32)[0])


@dataclass(frozen=True, eq=False)
class PopulationArrays:
    """What an oracle reads from a :class:`psro.population.Population`, as plain arrays.

    Attributes
    ----------
    infostates : PlayerInfostates
    policies : ndarray, shape (k, num_infostates, num_actions)
    plans : ndarray, shape (k, num_sequences)
    """

    infostates: PlayerInfostates
    policies: np.ndarray
    plans: np.ndarray

    def __len__(self) -> int:
        return int(self.policies.shape[0])


@dataclass(frozen=True, eq=False)
class OracleJob:
    """One best-response call: everything :func:`run_oracle_job` needs, picklable.

    Attributes
    ----------
    game : str
        The game's string (:func:`games.load` rebuilds it in a worker).
    oracle : str
        A registered oracle name (:func:`psro.oracles.base.oracle_names`); the worker builds it with
        :func:`psro.oracles.base.make_oracle` (a user's oracle must be registered where the job runs).
    options : dict
        The oracle's options (``PSRO(oracle_options=...)``).
    player, iteration, index : int
        The responder, the PSRO iteration and the target's position in the player's list: the call's key
        is ``(iteration, index)``.
    seed : int
        The run's seed; a learned oracle trains with :func:`job_seed` of ``(seed, iteration, player, index)``.
    policies, plans : tuple of ndarray
        Every player's population: policies ``(k_q, I_q, A)`` and realization plans ``(k_q, S_q)``.
    mixtures, profiles, weights, recommendation, mass, on_policy_value
        The :class:`psro.oracles.exact.Target` fields.
    """

    game: str
    oracle: str
    options: dict
    player: int
    iteration: int
    index: int
    seed: int
    policies: tuple
    plans: tuple
    mixtures: tuple | None = None
    profiles: np.ndarray | None = None
    weights: np.ndarray | None = None
    recommendation: int | None = None
    mass: float = 1.0
    on_policy_value: float = float("nan")

    def __repr__(self) -> str:   # short: it is what TaskError prints when a job fails
        return (f"OracleJob({self.game!r}, oracle={self.oracle!r}, player={self.player}, "
                f"iteration={self.iteration}, index={self.index}, seed={self.seed})")

    def target(self, tree: GameTree) -> Target:
        """The :class:`psro.oracles.exact.Target` this job answers, on ``tree``'s infostates."""
        pops = [PopulationArrays(info, pol, plan)
                for info, pol, plan in zip(tree.infostates, self.policies, self.plans)]
        return Target(player=self.player, populations=pops, mixtures=self.mixtures, profiles=self.profiles,
                      weights=self.weights, recommendation=self.recommendation, mass=self.mass,
                      on_policy_value=self.on_policy_value)


def remember_tree(game: str, tree: GameTree) -> None:
    """Register ``tree`` as this process's tree of ``game``, so :func:`tree_for` does not rebuild it.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.game_tree import build_game_tree
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> remember_tree("kuhn_poker()", tree)
    >>> tree_for("kuhn_poker()") is tree
    True
    """
    _TREES[str(game)] = tree


def tree_for(game: str) -> GameTree:
    """The game tree of the game string ``game``, built once per process.

    Examples
    --------
    >>> tree_for("kuhn_poker()").num_terminals
    30
    """
    key = str(game)
    if key not in _TREES:
        import games
        from psro.game_tree import build_game_tree

        _TREES[key] = build_game_tree(games.load(key))
    return _TREES[key]


def oracle_jobs(oracle: str, game: str, targets: Sequence, iteration: int, seed: int, *,
                options: dict | None = None) -> list:
    """One :class:`OracleJob` per target, in order: player 0's targets first, then player 1's, ...

    Parameters
    ----------
    oracle : str
        The oracle's name (``"exact"``, ``"openspiel"``, ``"dqn"``, ``"ppo"``).
    game : str
        The game's string.
    targets : sequence of list of Target
        ``targets[p]``: player p's targets (:func:`psro.oracles.exact.meta_targets`).
    iteration : int
        The PSRO iteration (a key of every job's seed).
    seed : int
        The run's seed.
    options : dict, optional
        The oracle's options (for a learned one: config fields and ``target_mode``).

    Examples
    --------
    >>> from psro.policies import uniform_policy
    >>> from psro.population import Population, Provenance
    >>> tree = tree_for("kuhn_poker()")
    >>> pops = [Population(i) for i in tree.infostates]
    >>> _ = [p.add(uniform_policy(p.infostates), Provenance(0, "initial")) for p in pops]
    >>> targets = [[Target(player=p, populations=pops, mixtures=(np.ones(1), np.ones(1)))] for p in range(2)]
    >>> jobs = oracle_jobs("exact", "kuhn_poker()", targets, iteration=0, seed=0)
    >>> [round(run_oracle_job(job).value, 6) for job in jobs]
    [0.5, 0.416667]
    """
    jobs = []
    for p, player_targets in enumerate(targets):
        for i, target in enumerate(player_targets):
            pops = target.populations
            jobs.append(OracleJob(
                game=str(game), oracle=oracle, options=dict(options or {}),
                player=int(target.player), iteration=int(iteration), index=i, seed=int(seed),
                policies=tuple(np.asarray(pop.policies) for pop in pops),
                plans=tuple(np.asarray(pop.plans) for pop in pops),
                mixtures=None if target.mixtures is None else tuple(np.asarray(m) for m in target.mixtures),
                profiles=target.profiles, weights=target.weights, recommendation=target.recommendation,
                mass=target.mass, on_policy_value=target.on_policy_value))
    return jobs


def run_oracle_job(job: OracleJob) -> BestResponse:
    """Answer one :class:`OracleJob`: the best response (exact or learned) to its target.

    A pure function of ``job``: a learned oracle trains a fresh network seeded
    with :func:`job_seed` of the job's keys (torch seeded inside the call, on one thread, the
    caller's torch random state restored afterwards), so the result does not
    depend on the process, the engine or what ran before.

    Examples
    --------
    See :func:`oracle_jobs`.
    """
    tree = tree_for(job.game)
    oracle = make_oracle(job.oracle, tree, seed=job.seed, **job.options)
    return oracle.respond(job.player, job.target(tree), key=(job.iteration, job.index))
