"""The loops where every seat learns at once, in self-play, on the batched environment: NFSP, PPO self-play and
MMD (:class:`SimultaneousLoop`, their shared part).

Each seat has a learner (networks, optimisers and whatever buffers its algorithm keeps). One **iteration** is the
algorithm's learning over fresh games (:meth:`SimultaneousLoop.play`; the games restart at the start of each
iteration, so an iteration boundary is an episode boundary and a checkpoint holds no game state). After every
iteration each seat's output policy (NFSP's average policy, PPO's and MMD's current policy) is copied into its
population (:class:`psro.policies.population.PolicyPopulation`; the first members are the untrained networks of row 0),
the meta-game between the copies is extended (exact where the game tree fits, else sampled play), and the
history row's ``gap`` is the exact NashConv of the current outputs:

* with the game tree (``exact_gap: auto`` where it fits in ``max_histories``, or ``true``), every row;
* on phantom tic-tac-toe and dark hex with ``exact_gap: true``, from the compiled evaluator
  (:func:`psro.exact_nash_conv`) at iterations ``k, 2k, ...`` of ``exact_gap_every`` and on the last row of each
  ``run`` call, its seconds in ``exact_gap_time`` (and in ``time_metric`` and ``wall_time``); NaN on other rows;
* else NaN, with ``approx_gap`` from :func:`psro.measures.approximate_gap.approximate_gap` (a lower bound).

The output, ``meta_strategy``, is the latest output of each seat (a pure meta-strategy on the newest members).

Randomness: torch seeds the networks once (``seed``); everything after draws from the run's numpy generator, so
a checkpoint (JSON and one npz under a SHA-256 digest: networks, Adam states, buffers, populations, meta-game,
the generator's state) resumes bit for bit.

A subclass names its :attr:`~SimultaneousLoop.options_class` and :attr:`~SimultaneousLoop.learner_class` and
implements :meth:`~SimultaneousLoop.play`. A learner has ``policy`` (the seat's output network, a
:class:`psro.oracles.learned.networks.NeuralPolicy`), ``to_arrays(prefix) -> (arrays, json)``,
``load_arrays(prefix, arrays, json)``, ``curve_rows(options)`` (its ``learners.csv`` rows since the last call)
and a static ``check_memory(obs_dim, actions, options, players)`` that refuses options past the memory limit
before anything is allocated.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from games.empirical import EmpiricalGame
from games.environment import make_env, num_actions, observation_size
from psro.config.model import PSROConfig
from psro.errors import ConfigError
from psro.loop.state import EpisodeCounter, LoopExtra, LoopState
from psro.loop.training import TrainingLoop
from psro.measures.approx_gap_schedule import approx_gap_due, share_allows
from psro.measures.approx_gap_settings import approx_gap_settings, unvalued
from psro.measures.approximate_gap import measure_with_oracle, responder_seed
from psro.measures.metrics import nash_conv
from psro.oracles.learned.networks import LearnedProvenance
from psro.oracles.learned.oracle import isolated_torch
from psro.policies.population import PolicyPopulation
from psro.run.checkpoint import member_arrays, member_from_arrays
from psro.run.checkpoint_schema import NFSPDocument, decode
from psro.run.store import previous_name, read_arrays, read_document, read_or_advise, write_arrays
from psro.sequence_form.game_tree import TreeTooLarge, build_game_tree

__all__ = ["SimultaneousLoop", "SimultaneousExtra", "LoopOutput", "network_arrays", "load_network_arrays"]

logger = logging.getLogger(__name__)

#: The checkpoint format of every simultaneous loop (named after the first of them; ``options.algorithm`` says
#: which loop wrote it)
FORMAT = "psro.NFSP/1"
#: The oracle these loops' ``approx_gap_options`` budgets are for (they train no responses of their own): DQN's, whose
#: responses measure ``approx_gap`` where those options set a budget, model_br's otherwise
#: (:func:`psro.measures.approx_gap_settings.default_responder`)
NOMINAL_ORACLE = "dqn"
CHECKPOINT_FILE = "checkpoint.json"


@dataclass(frozen=True)
class LoopOutput:
    """What a simultaneous loop outputs, in the place of a PSRO meta-solver (what run directories record)."""

    name: str
    method: str
    kind: str = "product"


@dataclass
class SimultaneousExtra(LoopExtra):
    """A simultaneous loop's own state: the decisions its learners took so far (schedules and the run's steps)."""

    decisions: int = 0


def network_arrays(prefix: str, networks: dict, optimizers: dict) -> tuple:
    """``(arrays, groups)`` of torch modules and Adam optimisers for a checkpoint: every weight and optimiser
    tensor as an array named ``{prefix}{name}__{key}`` (``{prefix}{name}_{i}__{key}`` for an optimiser's parameter
    ``i``), and the optimisers' param groups and state keys (JSON)."""
    arrays, groups = {}, {}
    for name, net in networks.items():
        arrays.update({f"{prefix}{name}__{k}": v.detach().cpu().numpy().copy() for k, v in net.state_dict().items()})
    for name, optimizer in optimizers.items():
        state = optimizer.state_dict()
        groups[name] = {"param_groups": state["param_groups"],
                        "state": {str(i): sorted(entry) for i, entry in state["state"].items()}}
        for i, entry in state["state"].items():
            arrays.update({f"{prefix}{name}_{i}__{k}": v.detach().cpu().numpy().copy() for k, v in entry.items()})
    return arrays, groups


def load_network_arrays(prefix: str, arrays: dict, groups: dict, networks: dict, optimizers: dict) -> None:
    """Load what :func:`network_arrays` saved into ``networks`` and ``optimizers``; a missing weight, or one whose
    shape differs from the network's, is a ``ValueError`` naming it."""
    for name, net in networks.items():
        head = f"{prefix}{name}__"
        for k, v in net.state_dict().items():
            if head + k not in arrays:
                raise ValueError(f"the arrays hold no {head + k!r} (a network weight of this learner).")
            if tuple(np.shape(arrays[head + k])) != tuple(v.shape):
                raise ValueError(
                    f"{head + k!r} has shape {tuple(np.shape(arrays[head + k]))} but the network of this game "
                    f"and options needs {tuple(v.shape)}: the checkpoint's game or hidden layers were changed "
                    "after its networks were saved.")
        net.load_state_dict({k: torch.from_numpy(np.array(arrays[head + k])) for k in net.state_dict()})
    for name, optimizer in optimizers.items():
        saved = groups[name]
        state = {int(i): {k: torch.from_numpy(np.array(arrays[f"{prefix}{name}_{i}__{k}"])) for k in keys}
                 for i, keys in saved["state"].items()}
        optimizer.load_state_dict({"state": state, "param_groups": saved["param_groups"]})


def _refuse(path: Path, name: str, what: str) -> None:
    raise ValueError(f"{path} is not a readable {name} checkpoint: {what}; it was edited or written by another "
                     "program, and cannot be resumed.")


class SimultaneousLoop(TrainingLoop):
    """Every seat learns at once in self-play; a :class:`psro.loop.training.TrainingLoop` whose step is: learn
    (:meth:`play`), then snapshot the outputs (see the module docstring).

    Parameters
    ----------
    config : PSROConfig or game
        A config naming the loop's ``algorithm`` (its ``algorithm_options`` are the loop's
        :attr:`options_class`), or a game with config fields as keywords. Read: ``game``, ``seed``,
        ``max_histories``, ``exact_gap``, ``exact_gap_every``, ``episodes_per_profile`` (sampled meta-game entries
        where there is no tree), ``approx_gap_every`` and ``approx_gap_options`` (as for PSRO), ``progress``.
    checkpoint_dir : path, optional
        Where a checkpoint is written after every iteration.
    """

    algorithm = "simultaneous"
    Extra = SimultaneousExtra
    is_jpsro = False
    kind = "product"
    #: The class of each seat's learner (see the module docstring)
    learner_class = None
    #: What the loop outputs (its latest output policies)
    output = LoopOutput("simultaneous", "latest policy")

    def __init__(self, config, /, *, executor=None, checkpoint_dir=None, **fields):
        config, executor = PSROConfig.for_loop(type(self).algorithm, config, executor, fields)
        self.config = config
        self.options = self.options_class.from_options(config.algorithm_options)
        self.game, normal_form = config.checked_game()
        if normal_form is not None:
            raise ConfigError("game", f"{type(self).__name__} plays sequential games on games.make_env; a normal-form "
                              "game has no environment (use PSRO).")
        self.check_game(self.game)
        self.seed, self.progress = int(config.seed), config.progress
        self.checkpoint_dir = checkpoint_dir
        self.run_config = None
        self.meta_solver = self.eval_meta_solver = self.output
        self.num_players = int(self.game.num_players())
        self.obs_dim, self.num_actions = observation_size(self.game), num_actions(self.game)
        self.tree, self._compiled_board = self._game_tree(config)
        self._tables: list = [[] for _ in range(self.num_players)]   # members' tabular forms (with a tree)
        self.learner_class.check_memory(self.obs_dim, self.num_actions, self.options, self.num_players)
        with isolated_torch():
            torch.manual_seed(self.seed)
            self.learners = [self.learner_class(self.obs_dim, self.num_actions, self.options)
                             for _ in range(self.num_players)]
        self.state = LoopState(populations=[PolicyPopulation(p, self.num_actions) for p in range(self.num_players)],
                               meta_game=EmpiricalGame((0,) * self.num_players), pending=[[]] * self.num_players,
                               rng=np.random.default_rng(self.seed), sizes_before=[0] * self.num_players,
                               extra=self.Extra())
        self._approx_oracle = None
        self._approx_cost = 0.0   # (seconds of the latest approx_gap measurement, while the run is in memory)
        self._exact_seconds = 0.0   # (seconds of the compiled evaluator on the latest row)

    @staticmethod
    def check_game(game) -> None:
        """Refuse a game the loop cannot learn (here: none)."""

    def _game_tree(self, config: PSROConfig) -> tuple:
        """The game tree where it fits (``exact_gap`` auto or true) and, without one, the board of the compiled
        evaluator where ``exact_gap`` is true and it covers the game (phantom tic-tac-toe, dark hex)."""
        from psro.loop.measures import compiled_board

        if config.exact_gap is False:
            return None, None
        board = compiled_board(self.game) if config.exact_gap is True else None
        if board is not None:
            return None, board
        try:
            return build_game_tree(self.game, max_histories=config.max_histories), None
        except TreeTooLarge:
            if config.exact_gap is True:
                raise ConfigError("exact_gap", f"the tree of {self.game} does not fit in max_histories="
                                  f"{config.max_histories}; raise it or set exact_gap to auto.") from None
            logger.info("%s on %s: no game tree within max_histories; gap is NaN (approx_gap instead)",
                        type(self).__name__, self.game)
            return None, None

    # ------------------------------------------------------------------ what a run shows
    def output_policies(self) -> list:
        """The current output networks (copies), one per seat."""
        return [learner.policy.copy() for learner in self.learners]

    def history_columns(self) -> list:
        return [*super().history_columns(), *(["exact_gap_time"] if self._compiled_board is not None else [])]

    # ------------------------------------------------------------------ the loop (TrainingLoop's phases)
    def running(self):
        """A ``run`` call's iterations keep torch's global state apart (:func:`isolated_torch`)."""
        return isolated_torch()

    def play(self, env, counters: dict) -> None:
        """One iteration's learning on ``env`` (fresh games, :func:`games.environment.make_env` with
        ``options.num_envs`` envs), every draw from ``self.state.rng``; ``counters["decisions"]`` counts the
        decisions of all seats and is advanced."""
        raise NotImplementedError(f"{type(self).__name__} must implement play()")

    def step(self) -> dict:
        """One iteration: the learning of :meth:`play` (none for row 0), then the outputs join the populations, the
        meta-game grows and the latest profile is measured."""
        start = time.perf_counter()
        if self.state.iteration >= 0:
            self._train_iteration()
        oracle_time = time.perf_counter() - start
        return {"meta_solve": 0.0, "oracle": oracle_time, **self._snapshot()}

    def finish_run(self) -> bool:
        """The last row of a ``run`` call has its exact gap where the compiled evaluator measures it, and its
        approximate gap when there is no tree (measured now if not due)."""
        row, changed = self.state.rows[-1], False
        if self._compiled_board is not None and math.isnan(row["gap"]):
            seconds = self._measure_compiled_gap()
            row.update(gap=self.state.gap, train_gap=self.state.train_gap, time_metric=row["time_metric"] + seconds,
                       exact_gap_time=row["exact_gap_time"] + seconds)
            changed = True
        if self.tree is None and self.config.approx_gap_every is not None and math.isnan(row["approx_gap"]):
            row.update(self._approx_gap())
            changed = True
        return changed

    def _train_iteration(self) -> None:
        """One iteration of learning on fresh games, and its ``learners.csv`` rows."""
        env = make_env(self.game, self.options.num_envs, rng=self.state.rng)
        counters = {"decisions": self.state.extra.decisions}
        self.play(env, counters)
        self.state.extra.decisions = counters["decisions"]
        t, steps = self.state.iteration + 1, int(self.state.extra.decisions)
        self.emit_learner_rows([{"iteration": t, "player": p, "env_steps": steps, **chunk, "value": math.nan,
                                 "index": 0} for p, learner in enumerate(self.learners)
                                for chunk in learner.curve_rows(self.options)])

    def _latest_strategy(self, shape) -> None:
        from solvers import make_equilibrium

        st = self.state
        st.meta_strategy = st.eval_meta_strategy = make_equilibrium(
            st.meta_game.mean_game(), concept="nash", method=self.output.name,
            marginals=[np.eye(k)[k - 1] for k in shape])

    def _snapshot(self) -> dict:
        """Snapshot the outputs, extend the meta-game, measure the gap; the seconds of evaluation and
        measurement."""
        t = self.state.iteration + 1
        st = self.state
        st.sizes_before = [len(pop) for pop in st.populations]
        for p, learner in enumerate(self.learners):
            member = learner.policy.copy()
            member.provenance = LearnedProvenance(iteration=t, oracle=self.algorithm, meta_solver="",
                                                  training_steps=int(st.extra.decisions), seed=self.seed)
            st.populations[p].add(member, member.provenance)
            st.meta_game.grow(p, 1)
            if self.tree is not None:
                self._tables[p].append(member.to_tabular(self.tree, p))
        t_eval = time.perf_counter()
        self._evaluate_meta_game()
        t_eval = time.perf_counter() - t_eval
        t_metric = time.perf_counter()
        self._latest_strategy(st.meta_game.shape)
        st.iteration = t
        self._exact_seconds = 0.0
        if self.tree is not None:
            st.gap = st.train_gap = nash_conv(self.tree, [tables[-1] for tables in self._tables])
        elif self._compiled_board is not None and self._exact_due(t):
            self._exact_seconds = self._measure_compiled_gap()
        else:
            st.gap = st.train_gap = math.nan
        t_metric = time.perf_counter() - t_metric
        st.evaluations = int(st.meta_game.evaluated().sum())
        st.env_steps = int(st.extra.decisions)
        return {"evaluation": t_eval, "metric": t_metric}

    def _exact_due(self, t: int) -> bool:
        every = self.config.exact_gap_every
        return every == 1 or (t > 0 and t % every == 0)

    def _measure_compiled_gap(self) -> float:
        """``state.gap`` (and ``train_gap``) of the current outputs from the compiled evaluator; its seconds."""
        from psro.measures.exact import exact_nash_conv

        start = time.perf_counter()
        self.state.gap = self.state.train_gap = exact_nash_conv(self.game, self.output_policies()).nash_conv
        return time.perf_counter() - start

    def row(self, times: dict) -> dict:
        """The history row of the iteration just done (the approximate gap when due and there is no tree)."""
        st, t = self.state, self.state.iteration
        row = {"iteration": t, "gap": st.gap, "train_gap": st.train_gap,
               **{f"population_{p}": len(pop) for p, pop in enumerate(st.populations)},
               **{f"time_{k}": v for k, v in times.items()}, "wall_time": st.wall, "cpu_time": st.cpu,
               "evaluations": st.evaluations, "top_up_episodes": 0,
               "episodes": int(st.meta_game.count[0][~st.meta_game.exact].sum()),
               "efce_gap": math.nan, "efcce_gap": math.nan, "approx_gap": math.nan, "approx_gap_stderr": math.nan,
               "approx_gap_time": 0.0, "meta_gap": float(st.meta_strategy.gap),
               "env_steps": int(st.extra.decisions), "response_ok": True}
        if self._compiled_board is not None:
            row["exact_gap_time"] = self._exact_seconds
        if self.tree is None and approx_gap_due(self.config.approx_gap_every, t, st.gap):
            share = approx_gap_settings({}, self.config.approx_gap_options, NOMINAL_ORACLE)[0]["share"]
            if share_allows(share, st.rows, st.wall, self._approx_cost):
                row.update(self._approx_gap())
            else:
                self.skip_by_share(share)
        row["eval_episodes"] = st.eval_episodes()
        return row

    def _evaluate_meta_game(self) -> None:
        st = self.state
        if self.tree is not None:
            from psro.evaluation.exact import SequenceFormEvaluator
            from psro.policies import realization_plans

            plans = [realization_plans(np.stack(tables), info) for tables, info in zip(self._tables,
                                                                                       self.tree.infostates)]
            payoffs = SequenceFormEvaluator(self.tree).payoffs(plans)
            st.meta_game.set_exact_block([list(range(k)) for k in st.meta_game.shape], payoffs)
            return
        from psro.evaluation.env_play import sample_profiles

        missing = np.asarray(st.meta_game.missing_profiles(), dtype=np.int64).reshape(-1, self.num_players)
        count, total, total_sq = sample_profiles(self.game, [pop.policies for pop in st.populations], missing,
                                                 self.config.episodes_per_profile, seed=self.seed)
        for k, profile in enumerate(missing.tolist()):
            st.meta_game.add_statistics(tuple(profile), count[k], total[k], total_sq[k])

    def _approx_gap(self) -> dict:
        """``approx_gap`` of the current outputs: a lower bound of their NashConv from learned best responses (by
        default model_br's: :func:`psro.measures.approx_gap_settings.default_responder`) and the best members, sampled
        values
        (:mod:`psro.measures.approximate_gap`)."""
        from psro.oracles.learned.oracle import make_learned_oracle

        start = time.perf_counter()
        settings, options = approx_gap_settings({}, self.config.approx_gap_options, NOMINAL_ORACLE)
        if self._approx_oracle is None:
            self._approx_oracle = unvalued(make_learned_oracle(settings["responder"], None,
                                                               seed=responder_seed(self.seed), game=self.game,
                                                               **options), self.config.approx_gap_options)
        counter = EpisodeCounter()
        result = measure_with_oracle(self.game, "product", self.state.meta_strategy, self.state.populations,
                                     self._approx_oracle, settings, seed=self.seed, iteration=self.state.iteration,
                                     payoffs=self.state.meta_game.mean_game().payoffs, counter=counter)
        self.state.measure_episodes += counter.episodes
        self._approx_cost = time.perf_counter() - start
        return {"approx_gap": result.gap, "approx_gap_stderr": result.stderr, "approx_gap_time": self._approx_cost}

    # ------------------------------------------------------------------ checkpoints
    checkpoint_name = CHECKPOINT_FILE
    checkpoint_prefixes = ("nfsp-",)

    def state_dict(self, directory) -> dict:
        """The checkpoint document: one npz of arrays (networks, optimiser states, buffers, populations,
        meta-game), written first, named with its SHA-256; the learners' settings, the members' architectures, the
        history and the loop's state. :meth:`write_checkpoint` writes it atomically after the arrays (a kill at any
        moment leaves the last complete checkpoint), the checkpoint it replaces kept as
        ``checkpoint.previous.json`` (``resume(..., previous=True)``)."""
        st = self.state
        arrays, learners = {}, []
        for p, learner in enumerate(self.learners):
            a, meta = learner.to_arrays(f"learner_{p}_")
            arrays.update(a)
            learners.append(meta)
        members = []
        for p, pop in enumerate(st.populations):
            archs = []
            for k, policy in enumerate(pop.policies):
                arch, values = member_arrays(policy)
                archs.append(arch)
                arrays.update({f"member_{p}_{k}__{name}": v for name, v in values.items()})
            members.append(archs)
        for name in ("count", "total", "total_sq", "exact"):
            arrays[f"meta_game__{name}"] = getattr(st.meta_game, name)
        entry = write_arrays(directory, "nfsp", f"{st.iteration:06d}", arrays)
        return {"format": FORMAT, "version": 1, "iteration": st.iteration,
                "options": {"algorithm": self.algorithm, "config": self.config.to_dict()},
                "config": self.run_config, "arrays": entry,
                "rng": st.rng.bit_generator.state, "history": st.rows, "members": members,
                "columns": list(st.rows[0]) if st.rows else [],
                "learners": learners,
                "state": {"gap": st.gap, "train_gap": st.train_gap, "wall": st.wall, "cpu": st.cpu,
                          "evaluations": st.evaluations, "extra": st.extra.to_document(),
                          "measure_episodes": st.measure_episodes}}

    @classmethod
    def load_checkpoint(cls, checkpoint_dir, previous: bool = False) -> dict:
        """The verified checkpoint document of ``checkpoint_dir`` (``previous``: the one before the latest), its
        arrays under ``"_arrays"``; damage is a ``ValueError`` naming the file and saying whether the previous
        checkpoint is intact."""
        return read_or_advise(lambda prev: cls._read_checkpoint(Path(checkpoint_dir), prev), previous,
                              f"{cls.__name__}.resume({str(checkpoint_dir)!r}, previous=True)")

    @classmethod
    def _read_checkpoint(cls, directory: Path, previous: bool) -> dict:
        name = cls.__name__
        path = directory / (previous_name(CHECKPOINT_FILE) if previous else CHECKPOINT_FILE)
        if not path.is_file():
            raise ValueError(f"checkpoint_dir {str(directory)!r} holds no {name} checkpoint ({path.name}).")
        path, document = read_document(directory, CHECKPOINT_FILE, previous, name)
        if document.get("format") != FORMAT:
            raise ValueError(f"{path} is not a {name} checkpoint (format {document.get('format')!r}).")
        if cls is SimultaneousLoop:   # (read for any of the loops: name the one the document says wrote it)
            try:
                name = cls.writer_of(dict(document, file=str(path))).__name__
            except ValueError:
                pass
        decode(NFSPDocument, document, lambda what: _refuse(path, name, what))   # (psro.run.checkpoint_schema)
        document["_arrays"] = read_arrays(directory, document["arrays"], path)
        document["file"] = str(path)
        return document

    @classmethod
    def from_checkpoint(cls, document: dict, checkpoint_dir=None, progress: bool = True, executor=None):
        return cls(PSROConfig.from_dict(document["options"]["config"]).replace(progress=progress),
                   checkpoint_dir=checkpoint_dir)

    def load_state_dict(self, document: dict) -> None:
        """The learners, the members, the meta-game and the history of the document (its arrays under
        ``"_arrays"``, else read again from :attr:`checkpoint_dir`)."""
        if "_arrays" not in document:
            document = self.load_checkpoint(self.checkpoint_dir)
        arrays = document["_arrays"]
        if len(document["learners"]) != self.num_players:
            raise ValueError(f"learners holds {len(document['learners'])} learners but the game has "
                             f"{self.num_players} players.")
        with isolated_torch():
            for p, (learner, meta) in enumerate(zip(self.learners, document["learners"])):
                learner.load_arrays(f"learner_{p}_", arrays, meta)
        st = self.state
        for p, archs in enumerate(document["members"]):
            for k, arch in enumerate(archs):
                head = f"member_{p}_{k}__"
                member = member_from_arrays(arch, {n[len(head):]: v for n, v in arrays.items() if n.startswith(head)})
                st.populations[p].add(member, member.provenance)
                if self.tree is not None:
                    self._tables[p].append(member.to_tabular(self.tree, p))
        shape = tuple(len(pop) for pop in st.populations)
        st.meta_game = EmpiricalGame(shape)
        for name in ("count", "total", "total_sq", "exact"):
            setattr(st.meta_game, name, np.array(arrays[f"meta_game__{name}"]))
        st.rng.bit_generator.state = document["rng"]
        columns = document["columns"]   # (the document's keys are sorted; the history keeps its column order)
        st.iteration = int(document["iteration"])
        st.rows = [{c: row[c] for c in columns} for row in document["history"]]
        saved = document["state"]
        st.gap, st.train_gap, st.wall, st.cpu = saved["gap"], saved["train_gap"], saved["wall"], saved["cpu"]
        st.evaluations, st.extra = saved["evaluations"], self.Extra.from_document(saved["extra"])
        st.measure_episodes = int(saved.get("measure_episodes", 0))   # (0 in a checkpoint written before it counted)
        st.env_steps = int(st.extra.decisions)
        st.sizes_before = list(shape)
        if st.iteration >= 0:
            self._latest_strategy(shape)
