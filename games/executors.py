"""Executors: one interface to run many independent tasks, serially or in parallel.

An executor maps a picklable, module-level function over a list of tasks and
returns the results in task order::

    results = executor.map(fn, tasks)                # fn(task)
    results = executor.map(fn, tasks, seed=7)        # fn(task, rng), one stream per task

Engines:

- :class:`SerialExecutor` runs in the calling process (the default, used by tests);
- :class:`ProcessPoolExecutor` runs on a local pool of worker processes;
- :class:`RayExecutor` runs Ray tasks on a local Ray instance it starts or on a
  cluster it joins (``pip install 'psro-toolkit[ray]'``; Ray is imported only
  when the engine starts). Only :meth:`Executor._run_chunks` differs between engines.

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
    "RayExecutor",
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


RAY_EXTRA_HINT = "pip install 'psro-toolkit[ray]'"


def _import_ray():
    """Import Ray, or raise an ImportError that names the extra to install."""
    try:
        import ray
    except ImportError as exc:
        raise ImportError(
            f"the Ray executor needs the optional dependency Ray, which is not installed; install it with "
            f"{RAY_EXTRA_HINT} (or use the 'serial' or 'process' executor)."
        ) from exc
    return ray


class _TransientTaskError(TaskError):
    """A task failed with an exception listed as transient; Ray retries it (``retry_exceptions``)."""

    def __reduce__(self):
        return (_TransientTaskError, (self.index, self.task, self.error))


def _run_chunk_transient(fn: Callable, start: int, tasks: list, seeds: list | None, transient: tuple) -> list:
    """:func:`_run_chunk` for Ray: failures of the ``transient`` kinds are raised so Ray retries them."""
    try:
        return _run_chunk(fn, start, tasks, seeds)
    except TaskError as err:
        if transient and isinstance(err.error, transient):
            raise _TransientTaskError(err.index, err.task, err.error) from err.error
        raise


class RayExecutor(Executor):
    """Run tasks as Ray tasks, on a local Ray instance or on a cluster.

    Chunks of tasks are submitted as remote tasks with a bounded number in
    flight (``ray.wait`` back-pressure). The function is put in the object
    store once per :meth:`map`. A worker that dies mid-batch costs a retry,
    not data: the remote function has ``max_retries`` (worker or node death)
    and ``retry_exceptions`` for the exception types listed in ``transient``
    (other task exceptions are not retried; they raise :class:`TaskError`).
    Seeds are spawned exactly as in the other engines, so seeded results do not
    depend on the engine or on the number of workers.

    Ray starts at the first :meth:`map` (import and start take a few seconds).
    :meth:`close` shuts down only an instance this executor started; if Ray is
    already initialised in the process, the executor joins it and leaves it running.

    Parameters
    ----------
    num_cpus : int, optional
        Start a local instance with this many CPUs (default: all). Not allowed with ``address``.
    address : str, optional
        Join a running cluster instead: ``"auto"`` (from a cluster node) or
        ``"ray://host:10001"`` (Ray Client, whose ``grpcio`` the ``[ray]`` extra includes).
    max_in_flight : int, optional
        Most chunks submitted and not yet collected (default: twice the cluster's CPUs).
    max_retries : int
        Retries of a chunk whose worker died or that raised a ``transient`` exception.
    transient : tuple of exception types
        Task exceptions treated as system failures and retried (default: ``ConnectionError``).
    progress, chunksize
        As in :class:`Executor`.
    worker_niceness : int, optional
        Niceness of the workers of a local instance this executor starts. Ray's
        default is 15, which starves them on a machine loaded by other
        processes; ``0`` lets them compete equally with the driver.
    init_options : dict, optional
        Extra keyword arguments for ``ray.init`` (e.g. ``runtime_env``).

    Raises
    ------
    ImportError
        At the first :meth:`map` when Ray is not installed (``pip install 'psro-toolkit[ray]'``).

    Examples
    --------
    >>> ex = RayExecutor(num_cpus=2)      # nothing starts until the first map()
    >>> ex
    RayExecutor(num_cpus=2)
    >>> RayExecutor(address="auto", max_in_flight=8)
    RayExecutor(address='auto')
    """

    def __init__(
        self,
        num_cpus: int | None = None,
        address: str | None = None,
        progress: bool = False,
        chunksize: int | None = None,
        max_in_flight: int | None = None,
        max_retries: int = 3,
        transient: tuple = (ConnectionError,),
        worker_niceness: int | None = None,
        init_options: dict | None = None,
    ):
        super().__init__(progress=progress, chunksize=chunksize)
        if num_cpus is not None and (
            isinstance(num_cpus, bool) or not isinstance(num_cpus, (int, np.integer)) or num_cpus < 1
        ):
            raise ValueError(f"num_cpus must be a positive int or None; got {num_cpus!r}.")
        if address is not None and not isinstance(address, str):
            raise TypeError(f"address must be a string such as 'auto' or 'ray://host:10001'; got {address!r}.")
        if address is not None and num_cpus is not None:
            raise ValueError(
                "num_cpus starts a local Ray instance and address joins a running cluster; give one of them, "
                "not both (a cluster's CPUs are set when it starts)."
            )
        if max_in_flight is not None and (
            isinstance(max_in_flight, bool) or not isinstance(max_in_flight, (int, np.integer)) or max_in_flight < 1
        ):
            raise ValueError(f"max_in_flight must be a positive int or None; got {max_in_flight!r}.")
        if isinstance(max_retries, bool) or not isinstance(max_retries, (int, np.integer)) or max_retries < 0:
            raise ValueError(f"max_retries must be a non-negative int; got {max_retries!r}.")
        transient = tuple(transient)
        if not all(isinstance(t, type) and issubclass(t, BaseException) for t in transient):
            raise TypeError(f"transient must be a tuple of exception classes; got {transient!r}.")
        self.num_cpus = None if num_cpus is None else int(num_cpus)
        self.address = address
        self.max_in_flight = None if max_in_flight is None else int(max_in_flight)
        self.max_retries = int(max_retries)
        self.transient = transient
        if worker_niceness is not None and (
            isinstance(worker_niceness, bool) or not isinstance(worker_niceness, (int, np.integer))
            or not 0 <= worker_niceness <= 19
        ):
            raise ValueError(f"worker_niceness must be an int in [0, 19] or None; got {worker_niceness!r}.")
        if worker_niceness is not None and address is not None:
            raise ValueError("worker_niceness applies to a local instance this executor starts, not to a cluster "
                             "joined through address; set it where the cluster starts.")
        self.worker_niceness = None if worker_niceness is None else int(worker_niceness)
        self.init_options = dict(init_options or {})
        self.workers = self.num_cpus or 1
        self._started = False   # whether this executor called ray.init (and so owns the instance)
        self._remote = None

    def _ensure_ray(self):
        ray = _import_ray()
        if not ray.is_initialized():
            options = {"include_dashboard": False, **self.init_options}
            if self.address is not None:
                ray.init(address=self.address, **options)
            else:
                if self.worker_niceness is not None:
                    system = dict(options.pop("_system_config", {}))
                    options["_system_config"] = {**system, "worker_niceness": self.worker_niceness}
                ray.init(num_cpus=self.num_cpus, **options)
            self._started = True
            logger.info("started Ray (%s)", self.address or f"local, num_cpus={self.num_cpus}")
        if self._remote is None:
            self._remote = ray.remote(
                max_retries=self.max_retries,
                retry_exceptions=[_TransientTaskError],
            )(_run_chunk_transient)
            self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        return ray

    def map(self, fn, tasks, **kwargs) -> list:
        self._ensure_ray()
        return super().map(fn, tasks, **kwargs)

    map.__doc__ = Executor.map.__doc__

    def _run_chunks(self, fn, chunks, bar):
        ray = self._ensure_ray()
        limit = self.max_in_flight or 2 * self.workers
        fn_ref = ray.put(fn)
        out: list = [None] * len(chunks)
        pending: dict = {}
        following = 0
        try:
            while following < len(chunks) or pending:
                while following < len(chunks) and len(pending) < limit:
                    start, tasks, seeds = chunks[following]
                    ref = self._remote.remote(fn_ref, start, tasks, seeds, self.transient)
                    pending[ref] = following
                    following += 1
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    i = pending.pop(ref)
                    out[i] = self._get(ray, ref)
                    if bar is not None:
                        bar.update(len(chunks[i][1]))
        except BaseException:
            for ref in pending:
                ray.cancel(ref, force=False)
            raise
        return out

    @staticmethod
    def _get(ray, ref):
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, TaskError):
                err = TaskError(cause.index, cause.task, cause.error)
                err.remote_traceback = str(exc)
                raise err from cause.error
            raise

    def close(self) -> None:
        """Shut Ray down if this executor started it; a joined instance is left running."""
        if self._started:
            ray = _import_ray()
            ray.shutdown()
            self._started = False
            logger.info("shut down the Ray instance this executor started")
        self._remote = None

    def __repr__(self) -> str:
        if self.address is not None:
            return f"RayExecutor(address={self.address!r})"
        return f"RayExecutor(num_cpus={self.num_cpus})"


def make_executor(spec=None, **kwargs) -> Executor:
    """An executor from a short specification.

    Parameters
    ----------
    spec : None, str, int, dict or Executor
        ``None`` or ``"serial"``: :class:`SerialExecutor`; ``"process"``: a process
        pool with one worker per CPU; ``"ray"``: a :class:`RayExecutor` (a local
        Ray instance with all CPUs, unless ``num_cpus`` or ``address`` is given);
        an int ``n``: serial if ``n == 1`` else a pool of ``n`` workers; a dict
        ``{"engine": "serial" | "process" | "ray", **options}`` (e.g.
        ``{"engine": "ray", "num_cpus": 2, "address": None}`` or
        ``{"engine": "process", "workers": 4}``), the options going to the engine;
        an :class:`Executor` is returned unchanged.
    **kwargs
        Passed to the engine (``progress``, ``chunksize``, ``start_method``, ...).

    Examples
    --------
    >>> make_executor("serial")
    SerialExecutor()
    >>> make_executor(2)
    ProcessPoolExecutor(workers=2)
    >>> make_executor({"engine": "ray", "num_cpus": 2, "address": None})   # Ray starts at the first map()
    RayExecutor(num_cpus=2)
    """
    if isinstance(spec, Executor):
        return spec
    if isinstance(spec, dict):
        options = dict(spec)
        engine = options.pop("engine", None)
        if engine not in ("serial", "process", "ray"):
            raise ValueError(
                f"an executor dict needs 'engine': 'serial', 'process' or 'ray'; got {spec!r}."
            )
        if engine == "ray" and options.get("address") is None:
            options.pop("address", None)
        return make_executor(engine, **{**options, **kwargs})
    if spec is None or spec == "serial":
        kwargs.pop("start_method", None)
        return SerialExecutor(**kwargs)
    if spec == "process":
        return ProcessPoolExecutor(**kwargs)
    if spec == "ray":
        return RayExecutor(**kwargs)
    if isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
        if spec < 1:
            raise ValueError(f"executor worker count must be >= 1; got {spec}.")
        if spec == 1:
            kwargs.pop("start_method", None)
            return SerialExecutor(**kwargs)
        return ProcessPoolExecutor(workers=int(spec), **kwargs)
    raise ValueError(
        "executor must be 'serial', 'process', 'ray', a worker count (int), a dict with an 'engine' key "
        f"or an Executor instance; got {spec!r}."
    )


def _draw_example(n: int, rng: np.random.Generator) -> list:
    """A seeded example task used in docstrings: ``n`` integers in [0, 100)."""
    return rng.integers(0, 100, size=n).tolist()
