"""The skeleton every training loop shares: :class:`TrainingLoop` runs the iterations and keeps the history.

A training loop (:class:`psro.PSRO`, the self-play family, :class:`psro.NFSP`, the offline loops) is a
:class:`TrainingLoop` with a :class:`psro.loop.state.LoopState` in ``state``. The base owns what every loop does the
same way: :meth:`TrainingLoop.run` (the stopping rules: iterations in this call, a target gap, wall seconds in
this call; the progress bar; the callback), the history (:attr:`TrainingLoop.history`, one row per iteration of
:data:`psro.loop.state.HISTORY_COLUMNS`), the wall and CPU clocks, writing a checkpoint after every row
(:meth:`TrainingLoop.save_checkpoint`), and :meth:`TrainingLoop.resume` (load the checkpoint, then
:meth:`TrainingLoop.restore` the loop it describes). The state's fields read as the loop's own properties
(``solver.gap``, ``solver.populations``, ...; :data:`psro.loop.state.STATE_FIELDS`).

A loop says what one iteration is (:meth:`TrainingLoop.step`, returning the seconds of each phase) and which
columns its row has (:meth:`TrainingLoop.row`); where it keeps its checkpoint (:meth:`TrainingLoop.write_checkpoint`,
:meth:`TrainingLoop.load_checkpoint`, :meth:`TrainingLoop.restore`). PSRO splits its step into public phases
(add, evaluate, meta-solve, targets, respond, measure: :class:`psro.loop.PSRO`), and a loop built on PSRO
overrides one or two of them.

Examples
--------
>>> from psro import PSRO
>>> solver = PSRO("kuhn_poker", progress=False)
>>> isinstance(solver, TrainingLoop), solver.iteration
(True, -1)
>>> history = solver.run(iterations=2)
>>> solver.iteration == solver.state.iteration == int(history["iteration"].iloc[-1]) == 2
True
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from games.validation import check_int, check_real
from psro.errors import ConfigError
from psro.loop.requirements import LoopRequirements
from psro.loop.state import HISTORY_COLUMNS, LoopExtra

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TrainingLoop", "PHASES"]

logger = logging.getLogger(__name__)

#: The phases whose seconds a history row reports (``time_<phase>``).
PHASES = ("meta_solve", "oracle", "evaluation", "metric")


def _state_field(name: str) -> property:
    """The state's field ``name`` as the loop's own property (read and written on ``state``)."""
    return property(lambda self: getattr(self.state, name), lambda self, value: setattr(self.state, name, value),
                    doc=f"``state.{name}`` (:class:`psro.loop.state.LoopState`).")


class TrainingLoop:
    """What every training loop shares (module docstring): ``run``, the history, the checkpoint and the resume.

    A subclass sets :attr:`algorithm` (its name in :data:`psro.loop.algorithms.ALGORITHMS`), builds ``state``
    (a :class:`psro.loop.state.LoopState`), ``config``, ``checkpoint_dir``, ``progress`` and ``run_config`` in its
    constructor, and implements :meth:`step`, :meth:`row`, :meth:`write_checkpoint`, :meth:`load_checkpoint` and
    :meth:`restore`.
    """

    #: The :data:`psro.loop.algorithms.ALGORITHMS` name of this training loop (a subclass sets its own).
    algorithm = None
    #: The dataclass of the loop's ``algorithm_options`` (None: it takes none); ``psro run --help`` lists its fields.
    options_class = None
    #: What the loop needs of its config and game, checked before anything is built (:mod:`psro.loop.requirements`).
    requirements = LoopRequirements()
    #: The loop's own state beyond :class:`psro.loop.state.LoopState` (``state.extra``): a subclass of
    #: :class:`psro.loop.state.LoopExtra` where the loop keeps some, saved in and restored from its checkpoints.
    Extra = LoopExtra
    #: ``resume``'s progress bar when the caller does not say.
    default_progress = True
    #: "product" (a meta-strategy per player) or "cce" / "ce" (a joint one).
    kind = "product"
    checkpoint_dir = None
    run_config = None   # the CLI's config (a dict), stored in checkpoints
    #: Called with the learning-curve rows of every step that trained a network (:mod:`psro.run.learning_curves`);
    #: ``psro run`` sets it (``learners.csv`` and the loggers); None: the rows are not kept
    on_learner_rows = None

    populations, meta_game, rng = _state_field("populations"), _state_field("meta_game"), _state_field("rng")
    iteration, in_iteration = _state_field("iteration"), _state_field("in_iteration")
    meta_strategy, eval_meta_strategy = _state_field("meta_strategy"), _state_field("eval_meta_strategy")
    gap, train_gap, evaluations = _state_field("gap"), _state_field("train_gap"), _state_field("evaluations")

    @property
    def top_up_progress(self):
        """Where the Monte Carlo top-up stands: ``key == (iteration,)`` once this iteration's has started."""
        return self.state.top_up

    @property
    def pending_responses(self) -> list:
        """Per player, the ``(policy, value)`` best responses that join at the next step."""
        return [list(p) for p in self.state.pending]

    is_jpsro = property(lambda self: self.kind != "product", doc="True for a joint (correlated) meta-strategy.")

    # ------------------------------------------------------------------------------------------ the run
    def run(self, iterations: int | None = None, target_gap: float | None = None,
            time_limit: float | None = None, progress: bool | None = None,
            callback: Callable[[dict], None] | None = None) -> pd.DataFrame:
        """Run until one stopping rule fires (``iterations`` in this call, ``gap <= target_gap``, ``time_limit``
        wall seconds in this call); return the whole history. The first call also records row 0 (the initial
        population); a step a checkpoint cut short is finished first. ``callback(row)`` sees each new row before
        the checkpoint is written; calling ``run`` again continues where the last call stopped.

        Examples
        --------
        >>> from psro import PSRO
        >>> solver = PSRO("kuhn_poker", progress=False)
        >>> history = solver.run(target_gap=1e-6, iterations=100)
        >>> bool(history["gap"].iloc[-1] <= 1e-6)
        True
        >>> solver.run()
        Traceback (most recent call last):
        ...
        ValueError: give at least one stopping rule: iterations, target_gap or time_limit.
        """
        if iterations is None and target_gap is None and time_limit is None:
            raise ValueError("give at least one stopping rule: iterations, target_gap or time_limit.")
        check_int(iterations, "iterations", minimum=0, none_ok=True)
        check_real(target_gap, "target_gap", minimum=0.0, none_ok=True)
        check_real(time_limit, "time_limit", minimum=0.0, none_ok=True)
        from tqdm.auto import tqdm

        show = self.progress if progress is None else progress
        bar = tqdm(total=iterations, disable=not show, desc=self.progress_label, unit="it")
        wall0, cpu0 = time.perf_counter() - self.state.wall, time.process_time() - self.state.cpu
        started, done = time.perf_counter(), 0
        self._share_skips = ((), None)
        with self.running():
            try:
                if self.state.iteration < 0 or self.state.in_iteration:   # row 0, or a step cut short
                    self.record(self.step(), wall0, cpu0, callback)
                while not ((target_gap is not None and self.state.gap <= target_gap)
                           or (iterations is not None and done >= iterations)
                           or (time_limit is not None and time.perf_counter() - started >= time_limit)):
                    self.record(self.step(), wall0, cpu0, callback)
                    done += 1
                    bar.update(1)
                    bar.set_postfix(gap=f"{self.state.gap:.3g}", refresh=False)
            finally:
                bar.close()
            if self.finish_run() and self.state.rows:   # (the last row's measurement counts in its clocks)
                self.tick(wall0, cpu0, self.state.rows[-1])
                if self.checkpoint_dir is not None:
                    self.save_checkpoint()
        self._warn_share_skips()
        return self.history

    @property
    def progress_label(self) -> str:
        """The progress bar's label."""
        return type(self).__name__

    def running(self):
        """A context manager around a :meth:`run` call's iterations (here: none)."""
        return contextlib.nullcontext()

    def step(self) -> dict:
        """One iteration (at ``iteration == -1``: the initial population); the seconds of each of :data:`PHASES`."""
        raise NotImplementedError(f"{type(self).__name__} must implement step()")

    def row(self, times: dict) -> dict:
        """The history row of the iteration :meth:`step` just finished (``times``: its phases' seconds)."""
        raise NotImplementedError(f"{type(self).__name__} must implement row()")

    def record(self, times: dict, wall0: float, cpu0: float, callback=None) -> None:
        """After a step: update the clocks (seconds since ``wall0`` / ``cpu0``), append :meth:`row` (its
        ``wall_time`` and ``cpu_time`` read again after it, so that what the row measured counts), call the callback,
        write the checkpoint."""
        state = self.state
        self.tick(wall0, cpu0)
        row = self.tick(wall0, cpu0, self.row(times))
        state.rows.append(row)
        logger.info("%s iteration %d: gap %.3e, populations %s, %.2fs", type(self).__name__, state.iteration,
                    state.gap, [len(p) for p in state.populations], state.wall)
        if callback is not None:
            callback(row)
        if self.checkpoint_dir is not None:
            self.save_checkpoint()

    def tick(self, wall0: float, cpu0: float, row: dict | None = None) -> dict | None:
        """Set the state's clocks to the seconds since ``wall0`` / ``cpu0`` (those of the run so far, everything it
        did included) and ``row``'s ``wall_time`` and ``cpu_time`` to them; return ``row``."""
        state = self.state
        state.wall, state.cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        if row is not None:
            row.update(wall_time=state.wall, cpu_time=state.cpu)
        return row

    def emit_learner_rows(self, rows: list) -> None:
        """Hand learning-curve rows (:data:`psro.run.learning_curves.LEARNER_COLUMNS`) to :attr:`on_learner_rows`."""
        if rows and self.on_learner_rows is not None:
            self.on_learner_rows(rows)

    #: The iterations of the current :meth:`run` call whose due approximate gap ``approx_gap_options``' share
    #: skipped, and that share
    _share_skips = ((), None)

    def skip_by_share(self, share) -> None:
        """Record that the approximate gap due on this row is not measured, measuring having taken its ``share`` of
        the wall time (logged at INFO; the run ends with one WARNING counting them where ``approx_gap_every`` asked
        for them by number: :func:`psro.measures.approx_gap_schedule.share_skips_warning`)."""
        self._share_skips = ((*self._share_skips[0], self.state.iteration), share)
        logger.info("approx_gap of iteration %d: not measured (measuring has taken its share, %g, of the wall time)",
                    self.state.iteration, share)

    def _warn_share_skips(self) -> None:
        """The one WARNING of a :meth:`run` call whose share left rows ``approx_gap_every`` asked for by number
        unmeasured (the last row, measured as the run ends, not counted)."""
        from psro.measures.approx_gap_schedule import share_skips_warning

        iterations, share = self._share_skips
        if not iterations:
            return
        skipped = set(iterations)
        unmeasured = sum(1 for row in self.state.rows
                         if row.get("iteration") in skipped and math.isnan(row.get("approx_gap", math.nan)))
        every = getattr(getattr(self, "config", None), "approx_gap_every", None)
        message = share_skips_warning(every, unmeasured, share)
        if message is not None:
            logger.warning(message)

    def finish_run(self) -> bool:
        """At the end of a :meth:`run` call, after the last row: complete it (here: nothing; PSRO measures the
        approximate gap of the last row). Returns whether the last row changed: then :meth:`run` sets its
        ``wall_time`` and ``cpu_time`` again (the finishing work counts) and writes the checkpoint."""
        return False

    # ------------------------------------------------------------------------------------------ the history
    def history_columns(self) -> list:
        """The history's columns: :data:`psro.loop.state.HISTORY_COLUMNS` with ``population_<p>`` per player."""
        n = len(self.state.populations)
        return [*HISTORY_COLUMNS[:3], *(f"population_{p}" for p in range(n)), *HISTORY_COLUMNS[3:]]

    @property
    def history(self) -> pd.DataFrame:
        """One row per iteration (row 0: the initial population); see :data:`psro.loop.state.HISTORY_COLUMNS`."""
        import pandas as pd  # (here: importing the loop should not cost pandas)

        return pd.DataFrame(self.state.rows, columns=self.history_columns())

    # ------------------------------------------------------------------------------------------ checkpoints
    def save_checkpoint(self, directory=None) -> Path:
        """Write a checkpoint now (into ``directory`` or ``checkpoint_dir``, :meth:`write_checkpoint`); return its
        path."""
        directory = self.checkpoint_dir if directory is None else directory
        if directory is None:
            raise ConfigError("directory", f"give a directory, or construct {type(self).__name__} with checkpoint_dir.")
        return self.write_checkpoint(directory)

    #: The checkpoint document's file name in its directory
    checkpoint_name = "checkpoint.json"
    #: The name prefixes of the files a checkpoint document lists: those that no kept document lists are removed
    #: (:func:`psro.run.store.replace_document`)
    checkpoint_prefixes: tuple = ()

    def write_checkpoint(self, directory) -> Path:
        """Write this loop's checkpoint into ``directory`` and return the document's path: the files
        :meth:`state_dict` writes, then its document, sealed, as the latest checkpoint (the one it replaces kept as
        the previous one), all through the store (:func:`psro.run.store.write_document`)."""
        from psro.run.store import prepare_directory, write_document

        directory = prepare_directory(directory)
        return write_document(directory, self.checkpoint_name, self.state_dict(directory), self.checkpoint_files,
                              self.checkpoint_prefixes)

    def state_dict(self, directory) -> dict:
        """The checkpoint document of this run (what :meth:`load_state_dict` takes back): its options, its
        :class:`psro.loop.state.LoopState` and its :attr:`Extra`, with the array files it names written into
        ``directory`` first (:func:`psro.run.store.write_arrays`), each named with its SHA-256."""
        raise NotImplementedError(f"{type(self).__name__} must implement state_dict()")

    @staticmethod
    def checkpoint_files(document: dict):
        """The names of the files a checkpoint document of this loop lists (here: the one arrays file its
        ``arrays`` entry names, :func:`psro.run.store.write_arrays`)."""
        return [document["arrays"]["file"]]

    @classmethod
    def load_checkpoint(cls, checkpoint_dir, previous: bool = False) -> dict:
        """The verified checkpoint document in ``checkpoint_dir`` (``previous``: the one before the latest)."""
        raise NotImplementedError(f"{cls.__name__} must implement load_checkpoint()")

    @classmethod
    def resume(cls, checkpoint_dir, progress: bool | None = None, executor=None, previous: bool = False):
        """Rebuild a run from the checkpoint in ``checkpoint_dir`` (verified first, :meth:`load_checkpoint`;
        ``previous=True``: the one before); :meth:`run` continues it bit for bit. ``executor`` may differ from the
        interrupted run's: results do not depend on it."""
        document = cls.load_checkpoint(checkpoint_dir, previous=previous)
        return cls.restore(document, checkpoint_dir=checkpoint_dir, executor=executor,
                           progress=cls.default_progress if progress is None else progress)

    @classmethod
    def writer_of(cls, document) -> type:
        """The loop that wrote a checkpoint ``document`` (its ``options.algorithm``): ``cls`` itself, or, for the
        base of several loops (``PSRO.resume`` of a League run), the subclass named; another kind of loop raises
        ``ValueError`` naming the file."""
        from psro.loop.algorithms import ALGORITHMS, algorithm_class

        options = document.get("options") if isinstance(document, dict) else None
        algorithm = options.get("algorithm", cls.algorithm) if isinstance(options, dict) else cls.algorithm
        oracle = options.get("oracle") if isinstance(options, dict) else None
        oracle = oracle if isinstance(oracle, str) else None
        if algorithm == cls.algorithm:   # cls, or the registry's subclass of it for this oracle (XDO's: NXDO)
            loop = algorithm_class(algorithm, oracle) if algorithm in ALGORITHMS else cls
            return loop if loop is not cls and issubclass(loop, cls) else cls
        source = document.get("file", "the checkpoint")
        try:
            loop = algorithm_class(algorithm, oracle)
        except ValueError as exc:
            raise ValueError(f"checkpoint file {source!r}: options.{exc}") from exc
        if not issubclass(loop, cls):
            raise ValueError(f"checkpoint file {source!r}: options.algorithm is {algorithm!r}, a loop that keeps its "
                             f"own kind of checkpoint ({loop.__name__}), not this {cls.__name__} checkpoint; the "
                             "document was edited or mixed up with another run's.")
        return loop

    @classmethod
    def restore(cls, document: dict, checkpoint_dir=None, progress: bool = True, executor=None):
        """The run a checkpoint document (:meth:`load_checkpoint`) describes: the loop its options build
        (:meth:`from_checkpoint`; the subclass its ``options.algorithm`` names, for the base of several loops),
        then given the document's state (:meth:`load_state_dict`). Anything in the document the loop cannot take
        raises ``ValueError`` naming the file; a game the file names as ``module:Name`` is imported only where the
        user allowed its module (:mod:`games.imported_games`)."""
        from psro.run.checkpoint import restoring

        loop = cls.writer_of(document)
        if loop is not cls:   # (``PSRO.resume`` of any algorithm's checkpoint)
            return loop.restore(document, checkpoint_dir=checkpoint_dir, progress=progress, executor=executor)
        with restoring(document):
            solver = cls.from_checkpoint(document, checkpoint_dir=checkpoint_dir, progress=progress,
                                         executor=executor)
            solver.run_config = document.get("config")
            solver.load_state_dict(document)
        return solver

    @classmethod
    def from_checkpoint(cls, document: dict, checkpoint_dir=None, progress: bool = True, executor=None):
        """The loop of a checkpoint document's options, before its state is loaded (``executor``, where given,
        replaces the document's; results do not depend on it)."""
        raise NotImplementedError(f"{cls.__name__} must implement from_checkpoint()")

    def load_state_dict(self, document: dict) -> None:
        """Take the state a checkpoint document (:meth:`load_checkpoint`) holds: populations, meta-game, random
        generator, history, clocks and :attr:`Extra`, so that :meth:`run` continues the saved run bit for bit."""
        raise NotImplementedError(f"{type(self).__name__} must implement load_state_dict()")

    # ------------------------------------------------------------------------------------------ resources
    def close(self) -> None:
        """Release the executor's workers if this loop built its executor (one passed in is left open); also on
        leaving ``with Loop(...) as solver:``."""
        if getattr(self, "_owns_executor", False):
            self.executor.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False
