"""Executors: one interface to run many independent tasks, serially or in parallel.

An executor maps a picklable, module-level function over a list of tasks and
returns the results in task order::

    results = executor.map(fn, tasks)                # fn(task)
    results = executor.map(fn, tasks, seed=7)        # fn(task, rng), one stream per task

Engines:

- :class:`SerialExecutor` runs in the calling process (the default, used by tests);
- :class:`ProcessPoolExecutor` runs on a local pool of worker processes;
- a Ray engine can implement the same :class:`Executor` interface later (only
  :meth:`Executor._run_chunks` differs between engines).

Randomness never depends on the engine: with ``seed=...`` task ``i`` gets the
generator ``numpy.random.default_rng(SeedSequence(seed).spawn(n)[i])``, whichever
process runs it and however tasks are chunked. Tiny tasks are batched into
chunks (``chunksize``) so that one inter-process message carries many tasks.
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import multiprocessing
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "Executor",
    "ProcessPoolExecutor",
    "SerialExecutor",
    "TaskError",
    "make_executor",
    "spawn_generators",
]

logger = logging.getLogger(__name__)


class TaskError(RuntimeError):
    """A task raised an exception; ``index`` and ``task`` say which, ``__cause__`` holds the original.

    Examples
    --------
    >>> err = TaskError(3, "task", ValueError("bad"))
    >>> err.index, "ValueError: bad" in str(err)
    (3, True)
    """

    def __init__(self, index: int, task: Any, error: BaseException):
        text = repr(task)
        if len(text) > 200:
            text = text[:197] + "..."
        super().__init__(f"task {index} ({text}) failed with {type(error).__name__}: {error}")
        self.index = index
        self.task = task
        self.error = error

    def __reduce__(self):
        return (TaskError, (self.index, self.task, self.error))


def spawn_generators(seed, n: int) -> list:
    """``n`` independent generators from ``SeedSequence(seed).spawn(n)``.

    Parameters
    ----------
    seed : int, SeedSequence or None
        Root seed; ``None`` draws fresh entropy.
    n : int
        Number of streams.

    Examples
    --------
    >>> a = spawn_generators(0, 3)
    >>> b = spawn_generators(0, 3)
    >>> [int(g.integers(100)) for g in a] == [int(g.integers(100)) for g in b]
    True
    """
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return [np.random.default_rng(child) for child in root.spawn(int(n))]


def _run_chunk(fn: Callable, start: int, tasks: list, seeds: list | None) -> list:
    """Run one chunk of tasks in a worker; wrap a failure in :class:`TaskError`."""
    out = []
    for offset, task in enumerate(tasks):
        try:
            if seeds is None:
                out.append(fn(task))
            else:
                out.append(fn(task, np.random.default_rng(seeds[offset])))
        except Exception as exc:
            raise TaskError(start + offset, task, exc) from exc
    return out


def _progress_bar(total: int, desc: str | None, enabled: bool):
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, leave=False)


class Executor(ABC):
    """Run a function over tasks and return the results in task order.

    Subclasses implement :meth:`_run_chunks`; chunking, seeding, progress and
    error wrapping are shared.

    Parameters
    ----------
    progress : bool
        Show a ``tqdm.auto`` progress bar by default (each ``map`` call can override).
    chunksize : int or None
        Tasks per chunk. ``None`` picks about four chunks per worker.
    """

    workers: int = 1

    def __init__(self, progress: bool = False, chunksize: int | None = None):
        if chunksize is not None and (not isinstance(chunksize, (int, np.integer)) or chunksize < 1):
            raise ValueError(f"chunksize must be a positive int or None; got {chunksize!r}.")
        self.progress = bool(progress)
        self.chunksize = chunksize

    def map(
        self,
        fn: Callable,
        tasks: Sequence,
        *,
        seed=None,
        progress: bool | None = None,
        desc: str | None = None,
        chunksize: int | None = None,
    ) -> list:
        """Apply ``fn`` to every task; results come back in task order.

        Parameters
        ----------
        fn : callable
            ``fn(task)``, or ``fn(task, rng)`` when ``seed`` is given. For the
            process pool it must be picklable (a module-level function).
        tasks : sequence
            The tasks (picklable for the process pool).
        seed : int or SeedSequence, optional
            If given, task ``i`` receives ``numpy.random.default_rng(SeedSequence(seed).spawn(n)[i])``,
            so results do not depend on the engine or the number of workers.
        progress : bool, optional
            Override the executor's progress-bar setting.
        desc : str, optional
            Progress-bar label.
        chunksize : int, optional
            Override the executor's chunk size.

        Returns
        -------
        list
            ``[fn(task) for task in tasks]``.

        Raises
        ------
        TaskError
            If a task raises; it names the task index and chains the original exception.

        Examples
        --------
        >>> SerialExecutor().map(abs, [-1, 2, -3])
        [1, 2, 3]
        >>> r = SerialExecutor().map(_draw_example, [10, 10], seed=0)
        >>> r == SerialExecutor().map(_draw_example, [10, 10], seed=0)
        True
        """
        if not callable(fn):
            raise TypeError(f"fn must be callable; got {type(fn).__name__}.")
        tasks = list(tasks)
        n = len(tasks)
        if n == 0:
            return []
        seeds = None
        if seed is not None:
            root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
            seeds = root.spawn(n)
        size = chunksize or self.chunksize or max(1, -(-n // (4 * max(1, self.workers))))
        if size < 1:
            raise ValueError(f"chunksize must be a positive int; got {size!r}.")
        chunks = [
            (start, tasks[start : start + size], None if seeds is None else seeds[start : start + size])
            for start in range(0, n, size)
        ]
        bar = _progress_bar(n, desc, self.progress if progress is None else progress)
        try:
            results = self._run_chunks(fn, chunks, bar)
        finally:
            if bar is not None:
                bar.close()
        return [r for chunk in results for r in chunk]

    @abstractmethod
    def _run_chunks(self, fn: Callable, chunks: list, bar) -> list:
        """Run ``_run_chunk(fn, *chunk)`` for every chunk; return the chunk results in order."""

    def close(self) -> None:
        """Release the engine's resources (worker processes); the executor can be reused after."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class SerialExecutor(Executor):
    """Run every task in the calling process, one after the other.

    Examples
    --------
    >>> SerialExecutor().map(len, ["a", "bb"])
    [1, 2]
    """

    workers = 1

    def _run_chunks(self, fn, chunks, bar):
        out = []
        for start, tasks, seeds in chunks:
            out.append(_run_chunk(fn, start, tasks, seeds))
            if bar is not None:
                bar.update(len(tasks))
        return out

    def __repr__(self) -> str:
        return "SerialExecutor()"


class ProcessPoolExecutor(Executor):
    """Run tasks on a pool of local worker processes.

    The pool starts at the first :meth:`map` and is kept until :meth:`close`
    (or the end of a ``with`` block), so repeated calls do not pay the start-up.

    Parameters
    ----------
    workers : int, optional
        Number of processes; defaults to ``os.cpu_count()``.
    progress, chunksize
        As in :class:`Executor`.
    start_method : str
        ``"spawn"`` (default; safe with threads), ``"forkserver"`` or ``"fork"``.

    Examples
    --------
    >>> with ProcessPoolExecutor(workers=2) as ex:
    ...     ex.map(abs, [-1, -2, -3])
    [1, 2, 3]
    """

    def __init__(
        self,
        workers: int | None = None,
        progress: bool = False,
        chunksize: int | None = None,
        start_method: str = "spawn",
    ):
        super().__init__(progress=progress, chunksize=chunksize)
        workers = (os.cpu_count() or 1) if workers is None else workers
        if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
            raise ValueError(f"workers must be a positive int; got {workers!r}.")
        if start_method not in multiprocessing.get_all_start_methods():
            raise ValueError(
                f"start_method must be one of {multiprocessing.get_all_start_methods()}; got {start_method!r}."
            )
        self.workers = int(workers)
        self.start_method = start_method
        self._pool: cf.ProcessPoolExecutor | None = None

    def _ensure_pool(self) -> cf.ProcessPoolExecutor:
        if self._pool is None:
            ctx = multiprocessing.get_context(self.start_method)
            self._pool = cf.ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx)
            logger.debug("started a process pool with %d workers (%s)", self.workers, self.start_method)
        return self._pool

    def _run_chunks(self, fn, chunks, bar):
        pool = self._ensure_pool()
        futures = {pool.submit(_run_chunk, fn, *chunk): i for i, chunk in enumerate(chunks)}
        out: list = [None] * len(chunks)
        try:
            for fut in cf.as_completed(futures):
                i = futures[fut]
                try:
                    out[i] = fut.result()
                except TaskError as remote:
                    # Re-chain to the original exception (the pool chains a remote traceback).
                    err = TaskError(remote.index, remote.task, remote.error)
                    err.remote_traceback = str(remote.__cause__ or "")
                    raise err from remote.error
                if bar is not None:
                    bar.update(len(chunks[i][1]))
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise
        return out

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def __repr__(self) -> str:
        return f"ProcessPoolExecutor(workers={self.workers})"


def make_executor(spec=None, **kwargs) -> Executor:
    """An executor from a short specification.

    Parameters
    ----------
    spec : None, str, int or Executor
        ``None`` or ``"serial"``: :class:`SerialExecutor`; ``"process"``: a process
        pool with one worker per CPU; an int ``n``: serial if ``n == 1`` else a
        pool of ``n`` workers; an :class:`Executor` is returned unchanged.
    **kwargs
        Passed to the engine (``progress``, ``chunksize``, ``start_method``).

    Examples
    --------
    >>> make_executor("serial")
    SerialExecutor()
    >>> make_executor(2)
    ProcessPoolExecutor(workers=2)
    """
    if isinstance(spec, Executor):
        return spec
    if spec is None or spec == "serial":
        kwargs.pop("start_method", None)
        return SerialExecutor(**kwargs)
    if spec == "process":
        return ProcessPoolExecutor(**kwargs)
    if isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
        if spec < 1:
            raise ValueError(f"executor worker count must be >= 1; got {spec}.")
        if spec == 1:
            kwargs.pop("start_method", None)
            return SerialExecutor(**kwargs)
        return ProcessPoolExecutor(workers=int(spec), **kwargs)
    if spec == "ray":
        raise ValueError("the Ray executor is not available yet; use 'serial', 'process' or a worker count.")
    raise ValueError(
        f"executor must be 'serial', 'process', a worker count (int) or an Executor instance; got {spec!r}."
    )


def _draw_example(n: int, rng: np.random.Generator) -> list:
    """A seeded example task used in docstrings: ``n`` integers in [0, 100)."""
    return rng.integers(0, 100, size=n).tolist()
