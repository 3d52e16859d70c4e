"""PSRO from a fixed dataset of trajectories, inside a learned game model: COffeE-PSRO and naive offline PSRO.

Both fit a tabular game model to the dataset (:func:`games.offline_model.fit_model`: the mean model and an
ensemble of bootstrap members) and run PSRO with exact best responses and exact payoffs **inside the model**;
nothing is played in the true game. Each iteration ``t``:

1. **add**: the best responses of step ``t - 1`` join the populations (at ``t = 0``: the uniform policies);
2. **evaluate**: every profile of the populations is evaluated exactly in the mean model and in every ensemble
   member; the meta-game entry of a profile is the interval ``[low, high]`` of its payoffs over the ensemble (the
   mean model included), its mean-model payoff the point estimate;
3. **meta-solve**: COffeE-PSRO: the robust regularised replicator dynamics over the interval meta-game, its
   entropy regularisation annealed to 0 (:func:`solvers.risk_averse.robust_replicator.robust_replicator`); the output
   is the meta-strategy with the lowest pessimistic regret. Naive offline PSRO: a Nash equilibrium of the
   mean-model meta-game (:func:`solvers.solve`, ``"nash"``);
4. **best responses**: every player's exact best response in the model, to the others' meta-strategies mixed with
   the uniform policy (member 0 of every population) with weight ``uniform_weight`` (alpha: "with probability
   alpha an opponent plays uniformly"). COffeE-PSRO answers in the *penalised* model (MOPO-style: each terminal's
   return minus ``penalty`` times the uncertainty of the branch that reaches it, :func:`model_trees`); naive
   offline PSRO in the mean model, without a penalty, alpha 0;
5. **measure**: ``gap`` is the **true game's exact NashConv** of the output (each population mixed with its
   meta-strategy, mapped onto the true game's information states, unseen ones uniform), when the true ``game``
   is given and its tree fits (NaN otherwise; the learner never uses it); ``meta_gap`` is the output's
   pessimistic regret in the interval meta-game (COffeE-PSRO) or its NashConv in the mean meta-game (naive).

A run with ``checkpoint_dir`` writes a checkpoint after every iteration (JSON and ``.npz`` only, atomic, with the
SHA-256 of every file; :mod:`psro.run.checkpoint`'s writer): the options, the history, the populations and the
responses waiting to join. The checkpoint keeps its own copy of the dataset (a DataFrame written once as
``dataset.csv``, a file copied once as ``dataset-<digest><suffix>``) and names it by file name and SHA-256: a
checkpoint reads no file outside its directory. :meth:`OfflinePSRO.resume` re-reads it, checks its digest, refits
the same model (seeded) and continues bit for bit (timing columns aside).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from games.empirical import EmpiricalGame
from games.memory_limit import check_memory
from games.validation import check_int, check_real
from psro.config.model import algorithm_options
from psro.errors import ConfigError
from psro.evaluation.exact import SequenceFormEvaluator
from psro.loop.state import LoopState
from psro.loop.training import PHASES, TrainingLoop
from psro.measures.metrics import nash_conv
from psro.offline.behaviour_cloning import policy_on_tree
from psro.oracles.exact import best_response
from psro.policies import uniform_policy
from psro.policies.population import Population, Provenance
from psro.run.checkpoint_schema import OfflineDocument, decode
from psro.run.run_files import file_in, read_regular
from psro.run.store import read_arrays, read_document, read_or_advise, write_arrays, write_file
from psro.sequence_form.game_tree import GameTree, build_game_tree

__all__ = ["ModelTrees", "model_trees", "OfflineOptions", "OfflinePSRO", "COffeEPSRO", "map_policy", "resume_offline",
           "DOCUMENT"]

logger = logging.getLogger(__name__)

DOCUMENT = "offline_checkpoint.json"


@dataclass(frozen=True, eq=False)
class ModelTrees:
    """The game trees an offline run plays in.

    Attributes
    ----------
    mean : GameTree
        The mean model: its infostates index the populations.
    penalised : GameTree
        The mean model with each terminal's returns lowered by ``penalty`` times its branch's uncertainty (same
        structure as ``mean``); the best responses of COffeE-PSRO are computed here.
    members : tuple of GameTree
        The ensemble members (their own structures; policies are mapped onto them by infostate string).
    """

    mean: GameTree
    penalised: GameTree
    members: tuple


def map_policy(policy: np.ndarray, source: GameTree, target: GameTree, player: int) -> np.ndarray:
    """``player``'s tabular policy over ``source``'s infostates as one over ``target``'s, matched by infostate
    string (infostates ``source`` lacks: uniform); the same array when the trees share their infostates.

    Examples
    --------
    >>> import pyspiel
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> policy = np.tile([1.0, 0.0], (6, 1))
    >>> map_policy(policy, tree, tree, 0) is policy
    True
    """
    if source.infostates[player].keys == target.infostates[player].keys:
        return policy
    return policy_on_tree(dict(zip(source.infostates[player].keys, policy)), target, player)


def model_trees(model, penalty: float = 0.0, max_histories: int = 1_000_000) -> ModelTrees:
    """The trees of a fitted :class:`games.offline_model.GameModel`: the mean model, its penalised copy
    (``model.model_game("mean", uncertainty=penalty)``: every leaf's returns lowered by ``penalty`` times the
    count-based confidence width accumulated on the way to it, the uncertainty of its branch) and the ensemble
    members.

    Examples
    --------
    >>> import pyspiel
    >>> from games.datasets import collect
    >>> from games.offline_model import fit_model
    >>> game = pyspiel.load_game("kuhn_poker")
    >>> model = fit_model(collect(game, pyspiel.UniformRandomPolicy(game), episodes=300, seed=0), members=3, seed=0)
    >>> trees = model_trees(model, penalty=1.0)
    >>> len(trees.members), bool(np.all(trees.penalised.terminal_returns <= trees.mean.terminal_returns + 1e-12))
    (3, True)
    """
    penalty = check_real(penalty, "penalty", minimum=0.0)
    # a model's trees are a function of the model, which does not change: kept on it, so that solvers sharing a
    # model (COffeE-PSRO beside naive offline PSRO) build each once (like the trees' own caches, outside __init__)
    built = model.__dict__.setdefault("_model_trees", {})

    def tree_of(kind, **options):
        key = (kind, tuple(sorted(options.items())), max_histories)
        if key not in built:
            built[key] = build_game_tree(_as_pyspiel(model.model_game(kind, **options)), max_histories=max_histories)
        return built[key]

    mean = tree_of("mean")
    # every member's tree is about the size of the mean model's: its arrays and, per history, the walk's records
    per_tree = sum(a.nbytes for a in (mean.terminal_chance, mean.terminal_returns, mean.terminal_sequence)) \
        + 128 * mean.num_histories + 256 * sum(len(info.keys) for info in mean.infostates)
    check_memory((model.members + 1) * per_tree, f"the game trees of members={model.members} model members",
                 "Use fewer members.")
    members = tuple(tree_of(i) for i in range(model.members))
    penalised = mean
    if penalty > 0:
        penalised = tree_of("mean", uncertainty=penalty)
        if any(a.keys != b.keys for a, b in zip(mean.infostates, penalised.infostates)) \
                or penalised.num_terminals != mean.num_terminals:
            raise ConfigError("model", "its penalised mean game has another tree than its mean game; the penalty "
                              "may change the returns only.")
    return ModelTrees(mean, penalised, members)


def _as_pyspiel(game):
    """A model game as a ``pyspiel.Game``: as it is, loaded from its string, or through its ``to_pyspiel()``."""
    import pyspiel

    if isinstance(game, pyspiel.Game):
        return game
    return pyspiel.load_game(game) if isinstance(game, str) else game.to_pyspiel()


def _sha256(path) -> str:
    """The SHA-256 of the regular file ``path`` (a link, a FIFO or a device is refused)."""
    return hashlib.sha256(read_regular(path)).hexdigest()


@dataclass(frozen=True)
class OfflineOptions:
    """The options of an offline run (``PSROConfig.algorithm_options`` of ``coffee_psro`` / ``offline_psro``).

    Attributes
    ----------
    dataset : str or None
        Path of the trajectory table (CSV or Parquet); required in a config.
    members : int
        Bootstrap members of the model ensemble (:func:`games.offline_model.fit_model`).
    penalty : float or None
        lambda of the MOPO-style penalty of the best responses (None: the algorithm's default).
    uniform_weight : float or None
        alpha, the uniform policy's weight in every best-response target (None: the algorithm's default).
    meta_iterations : int
        Steps of the robust replicator dynamics (COffeE-PSRO's meta-solver).
    tau : float
        Their initial entropy regularisation (annealed to 0).

    Examples
    --------
    >>> OfflineOptions.from_dict({"members": 3}).members
    3
    >>> OfflineOptions.from_dict({"lambda": 1.0})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: algorithm_options: offline PSRO has no option 'lambda'. Its options are ['dataset', ...].
    """

    dataset: str | None = None
    members: int = 5
    penalty: float | None = None
    uniform_weight: float | None = None
    meta_iterations: int = 2000
    tau: float = 0.2

    def __post_init__(self):
        check_int(self.members, "algorithm_options.members", minimum=1)
        check_real(self.penalty, "algorithm_options.penalty", minimum=0.0, none_ok=True)
        check_real(self.uniform_weight, "algorithm_options.uniform_weight", minimum=0.0, maximum=1.0, none_ok=True)
        check_int(self.meta_iterations, "algorithm_options.meta_iterations", minimum=1)
        check_real(self.tau, "algorithm_options.tau", minimum=0.0)

    @classmethod
    def from_dict(cls, options: dict | None) -> "OfflineOptions":
        """The options from a dict, refusing an unknown key by name."""
        return algorithm_options(cls, options, "offline PSRO")


@dataclass(frozen=True)
class OfflineMetaSolver:
    """The name of an offline run's meta-solver (what :func:`psro.run.run_dir.write_run` records)."""

    name: str
    method: str
    kind: str = "product"


class OfflinePSRO(TrainingLoop):
    """Naive offline PSRO: PSRO in the dataset's mean game model, exact best responses without a penalty, a
    Nash meta-solver; the baseline of COffeE-PSRO (module docstring).

    Parameters
    ----------
    dataset : pandas.DataFrame, str, Path or PSROConfig
        Trajectories in the table format of :mod:`games.trajectories` (a path: a CSV or Parquet file of it). Or a
        :class:`psro.config.PSROConfig` whose ``algorithm_options`` (:class:`OfflineOptions`) name the dataset's
        path and the options below; its ``game`` is the true game, ``seed`` and ``max_histories`` are used.
    game : str or pyspiel.Game, optional
        The true game, only to measure the output's true NashConv (the ``gap`` column); never used to learn.
    members : int
        Bootstrap members of the model ensemble (:func:`games.offline_model.fit_model`).
    seed : int
        Seeds the ensemble's resamples.
    penalty : float
        The uncertainty penalty lambda of the best responses (0 here).
    uniform_weight : float
        alpha: the weight of the uniform policy in every best-response target (0 here).
    meta_iterations, tau : int, float
        Steps and initial regularisation of the robust replicator dynamics (COffeE-PSRO).
    checkpoint_dir : str or Path, optional
        Write a checkpoint there after every iteration (:meth:`resume` continues it).
    model : games.offline_model.GameModel, optional
        An already fitted model of ``dataset`` (else fitted here).
    max_histories : int
        The largest model or true tree built.

    Attributes
    ----------
    populations : list of psro.policies.population.Population
        Over the mean model's infostates (member 0: the uniform policy).
    meta_strategy : solvers.Equilibrium
        The output's mixtures (``marginals``) with their mean-model values; ``policies()`` mixes them.
    payoffs, low, high : ndarray
        The mean-model meta-game and its interval over the ensemble.

    Examples
    --------
    >>> import pyspiel
    >>> from games.datasets import collect
    >>> game = pyspiel.load_game("kuhn_poker")
    >>> data = collect(game, pyspiel.UniformRandomPolicy(game), episodes=300, seed=0)
    >>> history = OfflinePSRO(data, game=game, members=3).run(iterations=2)
    >>> history["iteration"].tolist(), bool(history["gap"].notna().all())
    ([0, 1, 2], True)
    """

    algorithm = "offline_psro"
    options_class = OfflineOptions
    robust = False
    default_penalty, default_uniform_weight = 0.0, 0.0
    meta_solver = OfflineMetaSolver("nash", "nash")
    kind, is_jpsro = "product", False
    default_progress = False

    def __init__(self, dataset, game=None, *, members: int = 5, seed: int = 0, penalty: float | None = None,
                 uniform_weight: float | None = None, meta_iterations: int = 2000, tau: float = 0.2,
                 checkpoint_dir=None, model=None, max_histories: int = 1_000_000, progress: bool = False):
        from games.trajectories import load_trajectories
        from psro.config.model import PSROConfig

        self.config = None
        if isinstance(dataset, PSROConfig):
            self.config = config = dataset
            options = self.options_class.from_dict(config.algorithm_options)
            if options.dataset is None:
                raise ConfigError("algorithm_options", f"give the dataset's path (dataset: PATH) for {self.algorithm}.")
            if config.algorithm != self.algorithm:
                raise ConfigError("algorithm", f"this config runs {config.algorithm!r}, not {self.algorithm!r}.")
            dataset, game, seed, max_histories = options.dataset, config.game, config.seed, config.max_histories
            members, penalty, uniform_weight = options.members, options.penalty, options.uniform_weight
            meta_iterations, tau = options.meta_iterations, options.tau
        options = OfflineOptions(None, members, self.default_penalty if penalty is None else penalty,
                                 self.default_uniform_weight if uniform_weight is None else uniform_weight,
                                 meta_iterations, tau)
        self.members, self.seed = options.members, check_int(seed, "seed", minimum=0)
        self.penalty, self.uniform_weight = float(options.penalty), float(options.uniform_weight)
        self.meta_iterations, self.tau = options.meta_iterations, float(options.tau)
        self.max_histories = check_int(max_histories, "max_histories", minimum=1)
        self.checkpoint_dir = None if checkpoint_dir is None else Path(checkpoint_dir)
        self.progress = progress
        self.run_config = None   # the CLI's config (a dict)
        self.dataset_path = None
        if isinstance(dataset, (str, Path)):
            self.dataset_path = Path(dataset)
            dataset = load_trajectories(self.dataset_path)
        elif not isinstance(dataset, pd.DataFrame):
            raise TypeError(f"dataset must be a pandas.DataFrame of trajectories or a path to one; got "
                            f"{type(dataset).__name__}.")
        self.dataset = dataset
        self.game_spec = None if game is None else str(game)
        self.true_tree = None
        if game is not None:
            import pyspiel

            game = pyspiel.load_game(game) if isinstance(game, str) else game
            try:
                self.true_tree = build_game_tree(game, max_histories=max_histories)
            except ValueError as exc:   # the gap is then NaN
                logger.warning("the true game's tree does not fit (%s); gap = NaN", exc)
        self.game = game
        if model is None:
            from games.offline_model import fit_model

            model = fit_model(dataset, members=self.members, seed=self.seed, game=game)
        self.model = model
        self.trees = model_trees(self.model, self.penalty, max_histories=self.max_histories)
        self._evaluators = [SequenceFormEvaluator(t) for t in (self.trees.mean, *self.trees.members)]
        self.num_players = self.trees.mean.num_players
        infostates = self.trees.mean.infostates
        self.state = LoopState(populations=[Population(info) for info in infostates],
                               meta_game=EmpiricalGame((0,) * self.num_players),
                               pending=[[(uniform_policy(info), math.nan)] for info in infostates],
                               rng=np.random.default_rng(self.seed), sizes_before=[0] * self.num_players)
        self._mapped = [[Population(info) for info in t.infostates] for t in self.trees.members]
        self.payoffs = self.low = self.high = None

    # ----------------------------------------------------------------------------------------- the loop
    def step(self) -> dict:
        """One iteration: the waiting responses join (mapped into every ensemble member's tree), the mean-model
        meta-game and its interval are evaluated and solved, every player's exact best response in the penalised
        model waits for the next step, and the output's true NashConv is measured."""
        times = dict.fromkeys(PHASES, 0.0)
        start = time.perf_counter()
        self.iteration += 1
        t = self.iteration
        for p, (pop, pending) in enumerate(zip(self.populations, self.state.pending)):
            for policy, value in pending:
                pop.add(policy, self._provenance(t, value))
                for tree, mapped in zip(self.trees.members, self._mapped):
                    mapped[p].add(map_policy(policy, self.trees.mean, tree, p), Provenance(t, "mapped"))
        self.state.pending = [[] for _ in self.populations]
        times["oracle"] += time.perf_counter() - start

        start = time.perf_counter()
        self._evaluate()
        times["evaluation"] = time.perf_counter() - start

        start = time.perf_counter()
        marginals, self._meta_gap = self.meta_solve()
        self.meta_strategy = self._equilibrium(marginals)
        times["meta_solve"] = time.perf_counter() - start

        start = time.perf_counter()
        a = self.uniform_weight
        for p in range(self.num_players):
            plans = []
            for pop, w in zip(self.populations, self.meta_strategy.marginals):
                mix = (1.0 - a) * w
                mix[0] += a    # member 0 is the uniform policy
                plans.append(mix @ pop.plans)
            response = best_response(self.trees.penalised, p, plans)
            self.state.pending[p].append((response.policy, float(response.value)))
        times["oracle"] += time.perf_counter() - start

        start = time.perf_counter()
        self.gap = self.true_nash_conv()
        times["metric"] = time.perf_counter() - start
        return times

    def _evaluate(self) -> None:
        """The mean-model meta-game of the populations (``payoffs``, also as ``state.meta_game``) and its interval
        over the ensemble (``low``, ``high``)."""
        from games.normal_form import NormalFormGame

        whole = [range(len(pop)) for pop in self.populations]
        self.payoffs = self._evaluators[0].block_payoffs(self.populations, whole)
        values = [self.payoffs] + [ev.block_payoffs(mapped, whole) for ev, mapped in
                                   zip(self._evaluators[1:], self._mapped)]
        self.low, self.high = np.min(values, axis=0), np.max(values, axis=0)
        self.state.meta_game = EmpiricalGame.from_game(NormalFormGame(self.payoffs))

    def _provenance(self, iteration: int, value: float) -> Provenance:
        """Where the policy that joins at ``iteration`` came from (the uniform policy at 0; else the model's exact
        best response to this loop's meta-solver)."""
        if iteration == 0:
            return Provenance(0, "initial")
        return Provenance(iteration, "exact_model", self.meta_solver.name, value)

    def meta_solve(self) -> tuple:
        """(per player its mixture, the meta gap): a Nash equilibrium of the mean-model meta-game."""
        from games.normal_form import NormalFormGame
        from solvers import nash_conv as meta_nash_conv
        from solvers import solve

        game = NormalFormGame(self.payoffs)
        marginals = [np.asarray(m, dtype=np.float64) for m in solve(game, "nash").marginals]
        return marginals, float(meta_nash_conv(game, marginals))

    def _equilibrium(self, marginals):
        """The output's mixtures as a :class:`solvers.Equilibrium` of the mean-model meta-game."""
        from games.normal_form import NormalFormGame
        from solvers import make_equilibrium

        return make_equilibrium(NormalFormGame(self.payoffs), marginals=[np.asarray(m) for m in marginals],
                                concept="nash", method=self.meta_solver.method)

    def policies(self) -> list:
        """The output: each population mixed with its meta-strategy, one policy ``(I, A)`` per player over the
        mean model's infostates."""
        if self.meta_strategy is None:
            raise ValueError("run() has not run yet; call run() first.")
        return [pop.aggregate(w) for pop, w in zip(self.populations, self.meta_strategy.marginals)]

    def true_policies(self) -> list:
        """:meth:`policies` over the true game's infostates (unseen ones uniform)."""
        if self.true_tree is None:
            raise ValueError("the true game was not given (or its tree does not fit); give game=.")
        return [map_policy(pol, self.trees.mean, self.true_tree, p) for p, pol in enumerate(self.policies())]

    def true_nash_conv(self) -> float:
        """The output's exact NashConv in the true game (NaN without it)."""
        return math.nan if self.true_tree is None else float(nash_conv(self.true_tree, self.true_policies()))

    def row(self, times: dict) -> dict:
        """The history row of the iteration just done (PSRO's columns; no episode is played)."""
        row = {"iteration": self.iteration, "gap": self.gap, "train_gap": self.gap}
        row.update({f"population_{p}": len(pop) for p, pop in enumerate(self.populations)})
        row.update({f"time_{k}": v for k, v in times.items()})
        row.update(wall_time=self.state.wall, cpu_time=self.state.cpu, evaluations=int(np.prod(self.payoffs.shape[1:])),
                   top_up_episodes=0, episodes=0, efce_gap=math.nan, efcce_gap=math.nan, approx_gap=math.nan,
                   approx_gap_stderr=math.nan, approx_gap_time=0.0, meta_gap=self._meta_gap,
                   env_steps=0, eval_episodes=0, response_ok=True)   # (exact in the model: no episode is played)
        return row

    # ----------------------------------------------------------------------------------------- checkpoints
    def _options(self) -> dict:
        return {"algorithm": self.algorithm, "members": self.members, "seed": self.seed, "penalty": self.penalty,
                "uniform_weight": self.uniform_weight, "meta_iterations": self.meta_iterations, "tau": self.tau,
                "max_histories": self.max_histories, "game": self.game_spec}

    def _run_config(self) -> dict:
        """The run's config as a dict (the CLI's, else one made from the options; None without a true game), stored
        in the checkpoint so that a resume needs nothing else."""
        if self.run_config is not None:
            return dict(self.run_config)
        if self.game_spec is None:   # (a config always names the true game; this run has none)
            return None
        return config_from_options(self._options(), str(self.dataset_path))

    checkpoint_name = DOCUMENT
    checkpoint_prefixes = ("offline_arrays-",)

    def state_dict(self, directory) -> dict:
        """The checkpoint document, its files written into ``directory`` first: the dataset (a copy in the
        directory, once) and the arrays file, each named with its SHA-256. :meth:`write_checkpoint` writes it
        atomically after them (the document it replaces kept as ``offline_checkpoint.previous.json``, for
        ``resume(..., previous=True)``)."""
        if self.dataset_path is None or self.dataset_path.parent.resolve() != directory.resolve():
            # the checkpoint keeps its own copy (an in-memory dataset as CSV): it names only files of its
            # directory, never a path elsewhere
            if self.dataset_path is None:
                from games.trajectories import validate_trajectories

                validate_trajectories(self.dataset)
                data, suffix = self.dataset.to_csv(index=False).encode(), ".csv"
            else:
                data, suffix = self.dataset_path.read_bytes(), self.dataset_path.suffix
            self.dataset_path = directory / write_file(directory, "dataset", data, suffix)[0]
        arrays = {}
        for p, pop in enumerate(self.populations):
            arrays[f"policies_{p}"] = np.asarray(pop.policies)
            arrays[f"values_{p}"] = np.array([prov.value for prov in pop.provenance])
            arrays[f"pending_{p}"] = np.array([policy for policy, _ in self.state.pending[p]]).reshape(
                (-1, *pop.infostates.legal_mask.shape))
            arrays[f"pending_values_{p}"] = np.array([value for _, value in self.state.pending[p]],
                                                     dtype=np.float64)
        entry = write_arrays(directory, "offline_arrays", str(self.iteration), arrays)
        rows = [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
                for row in self.state.rows]   # (strict JSON: NaN is written as null and read back as NaN)
        document = {"options": self._options(), "config": self._run_config(), "iteration": self.iteration, "rows": rows,
                    "wall": self.state.wall, "cpu": self.state.cpu, "arrays": entry,
                    "dataset": {"path": self.dataset_path.name, "sha256": _sha256(self.dataset_path)}}
        return json.loads(json.dumps(document, default=_json_default, allow_nan=False))

    @classmethod
    def _read_checkpoint(cls, directory: Path, previous: bool) -> dict:
        """The document of the checkpoint in ``directory``, verified with its dataset and arrays files."""
        path, document = read_document(directory, DOCUMENT, previous, "offline PSRO")
        _check_document(document, path)
        algorithm = document["options"]["algorithm"]
        if algorithm != cls.algorithm:
            raise ValueError(f"{path}: the checkpoint is of {algorithm!r}, not {cls.algorithm!r}; resume it with "
                             f"its own class.")
        dataset = file_in(directory, document["dataset"]["path"], "dataset.path")
        if not (dataset.is_symlink() or dataset.exists()) or _sha256(dataset) != document["dataset"]["sha256"]:
            raise ValueError(f"{dataset}: the dataset of this run is missing or has changed since the checkpoint "
                             "(its SHA-256 differs); restore the original file.")
        document["_arrays"] = read_arrays(directory, document["arrays"], path)   # (verified now, restored from)
        document["file"] = str(path)
        return document

    @classmethod
    def load_checkpoint(cls, checkpoint_dir, previous: bool = False) -> dict:
        """The verified checkpoint document in ``checkpoint_dir``; a damaged checkpoint raises ``ValueError``
        naming the file and saying whether the previous checkpoint is intact (``previous``: resume from that one)."""
        directory = Path(checkpoint_dir)
        return read_or_advise(lambda prev: cls._read_checkpoint(directory, prev), previous,
                              f"{cls.__name__}.resume({str(directory)!r}, previous=True)")

    @classmethod
    def from_checkpoint(cls, document: dict, checkpoint_dir=None, progress: bool = False,
                        executor=None) -> "OfflinePSRO":
        """The run of the document's options on its dataset, re-read from ``checkpoint_dir`` (its SHA-256 checked)
        with its model refit. (``executor``: unused, the offline loop runs in-process.)"""
        directory = Path(checkpoint_dir)
        options = dict(document["options"])
        options.pop("algorithm")
        return cls(directory / document["dataset"]["path"], game=options.pop("game"), **options,
                   checkpoint_dir=directory, progress=progress)

    def load_state_dict(self, document: dict) -> None:
        """The populations, the waiting responses and the history of the document; the last meta-solve is
        recomputed (deterministic)."""
        directory = self.checkpoint_dir
        arrays = document["_arrays"] if "_arrays" in document else \
            read_arrays(directory, document["arrays"], directory / DOCUMENT)
        self.iteration = int(document["iteration"])
        self.state.rows = [{k: (math.nan if v is None else v) for k, v in row.items()} for row in document["rows"]]
        self.state.wall, self.state.cpu = float(document["wall"]), float(document["cpu"])
        for p in range(self.num_players):
            values = arrays[f"values_{p}"]
            for k, policy in enumerate(arrays[f"policies_{p}"]):
                # one response per player joins each iteration, so member k joined at iteration k: the provenance
                # is rebuilt exactly as _step wrote it (the meta-solver's name included)
                self.populations[p].add(policy, self._provenance(k, float(values[k])))
                for tree, mapped in zip(self.trees.members, self._mapped):
                    mapped[p].add(map_policy(policy, self.trees.mean, tree, p), Provenance(k, "mapped"))
            self.state.pending[p] = [(policy, float(v)) for policy, v in
                                     zip(arrays[f"pending_{p}"], arrays[f"pending_values_{p}"])]
        if self.iteration >= 0:   # the last meta-solve, for policies() (deterministic: recomputed)
            self._evaluate()
            marginals, self._meta_gap = self.meta_solve()
            self.meta_strategy = self._equilibrium(marginals)
            self.gap = float(self.state.rows[-1]["gap"])


class COffeEPSRO(OfflinePSRO):
    """COffeE-PSRO: PSRO in the dataset's game model with uncertainty-penalised best responses (``penalty``),
    uniform opponents mixed into their targets (``uniform_weight``), an interval meta-game over the model
    ensemble and the robust regularised replicator dynamics as meta-solver (module docstring). Parameters as
    :class:`OfflinePSRO` (defaults: ``penalty=1.0``, ``uniform_weight=0.1``).

    Examples
    --------
    >>> import pyspiel
    >>> from games.datasets import collect
    >>> game = pyspiel.load_game("kuhn_poker")
    >>> data = collect(game, pyspiel.UniformRandomPolicy(game), episodes=300, seed=0)
    >>> history = COffeEPSRO(data, game=game, members=3).run(iterations=2)
    >>> bool((history["meta_gap"] >= 0).all()), len(history)
    (True, 3)
    """

    algorithm = "coffee_psro"
    robust = True
    default_penalty, default_uniform_weight = 1.0, 0.1
    meta_solver = OfflineMetaSolver("robust_replicator", "robust_replicator")

    def meta_solve(self) -> tuple:
        """(per player its mixture, its pessimistic regret): the robust replicator dynamics on the interval."""
        from solvers.risk_averse.robust_replicator import robust_replicator

        result = robust_replicator(self.low, self.high, iterations=self.meta_iterations, tau=self.tau)
        return [np.array(m) for m in result.marginals], float(result.regret)


def _check_document(document, path: Path) -> None:
    """Refuse a document that does not decode against :class:`psro.run.checkpoint_schema.OfflineDocument`, naming
    the first field that is wrong."""
    def refuse(what):
        raise ValueError(f"{path} is not a readable offline PSRO checkpoint: {what} (the document was edited or "
                         "written by another program).")

    decode(OfflineDocument, document, refuse)


def config_from_options(options: dict, dataset: str | None) -> dict:
    """The run config (a :class:`psro.config.PSROConfig` dict) that an offline checkpoint's options stand for.

    Examples
    --------
    >>> c = config_from_options({"algorithm": "coffee_psro", "members": 3, "seed": 1, "penalty": 1.0,
    ...     "uniform_weight": 0.1, "meta_iterations": 2000, "tau": 0.2, "max_histories": 1000, "game": "kuhn_poker"},
    ...     "data.csv")
    >>> c["algorithm"], c["seed"], c["algorithm_options"]["members"], c["algorithm_options"]["dataset"]
    ('coffee_psro', 1, 3, 'data.csv')
    """
    from psro.config.model import PSROConfig

    algorithm_options = {"dataset": dataset, **{k: options[k] for k in ("members", "penalty", "uniform_weight",
                                                                         "meta_iterations", "tau")}}
    return PSROConfig(game=options["game"], algorithm=options["algorithm"], seed=options["seed"],
                      max_histories=options["max_histories"], algorithm_options=algorithm_options).to_dict()


def resume_offline(checkpoint_dir, progress: bool = False) -> OfflinePSRO:
    """The offline run checkpointed in ``checkpoint_dir``, of whichever class wrote it (:class:`COffeEPSRO` or
    :class:`OfflinePSRO`, read from the document; ``psro resume`` can call this where
    ``offline_checkpoint.json`` is found). A directory without one raises ``ValueError``.

    Examples
    --------
    >>> import tempfile, pyspiel
    >>> from games.datasets import collect
    >>> game = pyspiel.load_game("kuhn_poker")
    >>> data = collect(game, pyspiel.UniformRandomPolicy(game), episodes=200, seed=0)
    >>> _ = COffeEPSRO(data, members=2, checkpoint_dir=(out := tempfile.mkdtemp())).run(iterations=1)
    >>> type(solver := resume_offline(out)).__name__, solver.iteration
    ('COffeEPSRO', 1)
    """
    path = Path(checkpoint_dir) / DOCUMENT
    try:
        algorithm = json.loads(read_regular(path))["options"]["algorithm"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a readable offline PSRO checkpoint ({exc}).") from None
    classes = {cls.algorithm: cls for cls in (OfflinePSRO, COffeEPSRO)}
    if algorithm not in classes:
        raise ValueError(f"{path}: unknown offline algorithm {algorithm!r}; expected one of {sorted(classes)}.")
    return classes[algorithm].resume(checkpoint_dir, progress=progress)


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} to a checkpoint.")
