"""Best-response jobs: one oracle call as a pure, picklable function of its inputs.

PSRO asks every player for best responses to its targets at every iteration.
Each such call is an :class:`OracleJob`: the game's string, the oracle's
registered name (:func:`psro.oracles.base.make_oracle`) and options, the run's
seed, the call's key ``(iteration, index)`` and the target as plain arrays
(every population's policies and realization plans, plus the mixtures or the
joint distribution). A population of policy objects (neural networks, the
uniform policy, a user's policy class) travels as :class:`PolicyArrays`, one
per member, written by the policy codec (:mod:`psro.policies.codec`): a kind,
a JSON-able spec (a network's architecture) and its weights as numpy arrays;
nothing is pickled but arrays, strings and numbers (a policy of no kind is
carried as the object itself). :func:`run_oracle_job` is
a module-level function of the job alone, so any
:class:`games.executors.Executor` (serial, process pool, Ray) can map it, and
the answer never depends on which process computes it.

Seeds
-----
The training seed of a learned response is derived, never drawn from a
counter: :func:`job_seed` hashes ``(run seed, iteration, player, target index)``
with ``numpy.random.SeedSequence(seed, spawn_key=(iteration, player, index))``.
A run resumed from a checkpoint, or computed by different workers, therefore
trains every response with the same seed as an uninterrupted serial run.

Workers rebuild the game tree from the game's string once per process
(:func:`tree_for`, cached); the calling process registers the tree it already
has (:func:`remember_tree`), so serial jobs reuse it. A job made with
``use_tree=False`` (the run built no tree) never builds one: its learned
oracle plays the game loaded from the string (:func:`games.load`), so the
game must have one (a PettingZoo environment has none: answer its targets
in-process).

Which jobs go through the executor (``PSRO(oracle_dispatch=...)``,
:data:`ORACLE_DISPATCH`): with ``"auto"`` the learned oracles (``dqn``,
``ppo``), whose jobs take seconds, are mapped through the run's executor, and
the exact ones (``exact``, ``openspiel``), whose jobs take milliseconds, are
called in-process, where sending the populations would cost more than the
work; ``"executor"`` maps every oracle's jobs, ``"in_process"`` none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from games.validation import is_integer
from psro.errors import with_field
from psro.oracles.base import BestResponse, Target, make_oracle
from psro.policies import codec
from psro.sequence_form.game_tree import GameTree, PlayerInfostates

__all__ = ["ORACLE_DISPATCH", "OracleJob", "PolicyArrays", "PolicyList", "PopulationArrays", "decode_policy",
           "encode_policy", "game_for", "job_seed", "oracle_jobs", "remember_tree", "run_oracle_job", "tree_for"]

ORACLE_DISPATCH = ("auto", "executor", "in_process")

_TREES: dict = {}   # game string -> GameTree, per process
_GAMES: dict = {}   # game string -> loaded game, per process (jobs without a tree)


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
    """What an oracle reads from a :class:`psro.policies.population.Population`, as plain arrays.

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
class PolicyList:
    """A population of policy objects as an oracle reads it: ``policies`` (a list) and ``len()``.

    Attributes
    ----------
    policies : list
    """

    policies: list

    def __len__(self) -> int:
        return len(self.policies)


@dataclass(frozen=True, eq=False)
class PolicyArrays:
    """One policy object as plain data: what :func:`encode_policy` writes and :func:`decode_policy` reads.

    Attributes
    ----------
    kind : str
        A policy kind of :mod:`psro.policies.codec` (``"tabular"``, ``"uniform"``, ``"neural"``, a registered
        name or ``"module:Class"``), or ``"object"``.
    spec : dict
        JSON-able: the codec's description without its kind (a network's ``{"architecture": ...}``, the uniform
        policy's ``num_actions``).
    arrays : dict of str to ndarray
        A network's weights, a tabular policy's ``"table"``.
    obj : object, optional
        ``kind="object"`` only: a policy of no codec kind, carried as it is (the
        executor pickles it; its class must be importable where the job runs).
    """

    kind: str
    spec: dict = field(default_factory=dict)
    arrays: dict = field(default_factory=dict)
    obj: object = None


def encode_policy(policy) -> PolicyArrays:
    """A population member as :class:`PolicyArrays`, through :func:`psro.policies.codec.encode_policy` (no
    pickled objects for a policy of a codec kind).

    Examples
    --------
    >>> from psro.policies import UniformPolicy
    >>> encode_policy(UniformPolicy(3))
    PolicyArrays(kind='uniform', spec={'num_actions': 3}, arrays={}, obj=None)
    >>> decode_policy(encode_policy(np.full((2, 2), 0.5))).tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    """
    try:
        description, arrays = codec.encode_policy(policy)
    except TypeError:
        return PolicyArrays("object", obj=policy)
    return PolicyArrays(description.pop("kind"), spec=description, arrays=arrays)


def decode_policy(encoded: PolicyArrays):
    """The policy :func:`encode_policy` encoded (a network with bit-identical weights, on the CPU).

    Examples
    --------
    See :func:`encode_policy`.
    """
    if encoded.kind == "object":
        return encoded.obj
    return with_field("encoded.kind", codec.decode_policy, {"kind": encoded.kind, **encoded.spec}, encoded.arrays)


def _is_tabular(pop) -> bool:
    return isinstance(pop.policies, np.ndarray) and hasattr(pop, "plans")


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
    policies, plans : tuple
        Every player's population: a tabular one as policies ``(k_q, I_q, A)`` and realization plans
        ``(k_q, S_q)``; one of policy objects as a tuple of :class:`PolicyArrays` and ``None``.
    mixtures, profiles, weights, recommendation, mass, on_policy_value
        The :class:`psro.oracles.base.Target` fields.
    initial_policy : PolicyArrays, optional
        The target's warm-start network, encoded.
    use_tree : bool
        Whether the worker builds (or reuses) the game tree; False for a run without one.
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
    initial_policy: PolicyArrays | None = None
    use_tree: bool = True

    def __repr__(self) -> str:   # short: it is what TaskError prints when a job fails
        return (f"OracleJob({self.game!r}, oracle={self.oracle!r}, player={self.player}, "
                f"iteration={self.iteration}, index={self.index}, seed={self.seed})")

    def target(self, tree: GameTree | None) -> Target:
        """The :class:`psro.oracles.base.Target` this job answers (tabular populations on ``tree``'s infostates)."""
        pops = []
        for q, (pol, plan) in enumerate(zip(self.policies, self.plans)):
            if plan is None:
                pops.append(PolicyList([decode_policy(e) for e in pol]))
            elif tree is None:
                raise ValueError(f"population {q} is tabular, which needs the game tree; make the job with "
                                 "use_tree=True.")
            else:
                pops.append(PopulationArrays(tree.infostates[q], pol, plan))
        initial = None if self.initial_policy is None else decode_policy(self.initial_policy)
        return Target(player=self.player, populations=pops, mixtures=self.mixtures, profiles=self.profiles,
                      weights=self.weights, recommendation=self.recommendation, mass=self.mass,
                      on_policy_value=self.on_policy_value, initial_policy=initial)


def remember_tree(game: str, tree: GameTree) -> None:
    """Register ``tree`` as this process's tree of ``game``, so :func:`tree_for` does not rebuild it.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
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
        from psro.sequence_form.game_tree import build_game_tree

        _TREES[key] = build_game_tree(games.load(key))
    return _TREES[key]


def game_for(game: str):
    """The game of the string ``game`` (:func:`games.load`), loaded once per process.

    Examples
    --------
    >>> game_for("kuhn_poker()").num_players()
    2
    """
    key = str(game)
    if key not in _GAMES:
        import games
        from games.imported_games import import_game, is_import_spec

        _GAMES[key] = import_game(key) if is_import_spec(key) else games.load(key)   # (the user's env too)
    return _GAMES[key]


def oracle_jobs(oracle: str, game: str, targets: Sequence, iteration: int, seed: int, *,
                options: dict | None = None, use_tree: bool = True) -> list:
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
    use_tree : bool
        False when the run has no game tree: the workers then build none
        (learned oracles on populations of policy objects only).

    Examples
    --------
    >>> from psro.policies import uniform_policy
    >>> from psro.policies.population import Population, Provenance
    >>> tree = tree_for("kuhn_poker()")
    >>> pops = [Population(i) for i in tree.infostates]
    >>> _ = [p.add(uniform_policy(p.infostates), Provenance(0, "initial")) for p in pops]
    >>> targets = [[Target(player=p, populations=pops, mixtures=(np.ones(1), np.ones(1)))] for p in range(2)]
    >>> jobs = oracle_jobs("exact", "kuhn_poker()", targets, iteration=0, seed=0)
    >>> [round(run_oracle_job(job).value, 6) for job in jobs]
    [0.5, 0.416667]

    Populations of policy objects travel as arrays, and no tree is needed:

    >>> from psro.policies import UniformPolicy
    >>> neural = [PolicyList([UniformPolicy(2)]) for _ in range(2)]
    >>> target = Target(player=0, populations=neural, mixtures=(np.ones(1), np.ones(1)))
    >>> (job,) = oracle_jobs("ppo", "kuhn_poker()", [[target]], iteration=1, seed=0, use_tree=False,
    ...                      options={"total_steps": 256, "num_envs": 8, "eval_episodes": 20})
    >>> job.policies[1][0].kind, job.plans
    ('uniform', (None, None))
    >>> type(run_oracle_job(job).policy).__name__
    'NeuralPolicy'
    """
    jobs = []
    encoded: dict = {}   # id(population) -> its encoded members (targets share populations)
    for p, player_targets in enumerate(targets):
        for i, target in enumerate(player_targets):
            pops = target.populations
            policies, plans = [], []
            for pop in pops:
                if _is_tabular(pop):
                    policies.append(np.asarray(pop.policies))
                    plans.append(np.asarray(pop.plans))
                    continue
                if id(pop) not in encoded:
                    encoded[id(pop)] = tuple(encode_policy(member) for member in pop.policies)
                policies.append(encoded[id(pop)])
                plans.append(None)
            initial = getattr(target, "initial_policy", None)
            jobs.append(OracleJob(
                game=str(game), oracle=oracle, options=dict(options or {}),
                player=int(target.player), iteration=int(iteration), index=i, seed=int(seed),
                policies=tuple(policies), plans=tuple(plans),
                mixtures=None if target.mixtures is None else tuple(np.asarray(m) for m in target.mixtures),
                profiles=target.profiles, weights=target.weights, recommendation=target.recommendation,
                mass=target.mass, on_policy_value=target.on_policy_value,
                initial_policy=None if initial is None else encode_policy(initial), use_tree=bool(use_tree)))
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
    if job.use_tree:
        tree = tree_for(job.game)
        oracle = make_oracle(job.oracle, tree, seed=job.seed, **job.options)
    else:
        tree = None
        oracle = make_oracle(job.oracle, None, seed=job.seed, game=game_for(job.game), **job.options)
    return oracle.respond(job.player, job.target(tree), key=(job.iteration, job.index))
