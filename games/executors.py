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

import numpy as np

from games.executor_tasks import EngineError, TaskError, run_chunk, spawn_generators
from games.parent_watch import watch_parent
from games.validation import check_int, is_integer

__all__ = [
    "ENGINES",
    "EngineError",
    "Executor",
    "ProcessPoolExecutor",
    "RayExecutor",
    "SerialExecutor",
    "TaskError",
    "check_reachable",
    "make_executor",
    "portable_spec",
    "spec_from_portable",
    "spawn_generators",
    "watch_parent",
]

ENGINES = ("serial", "process", "ray")

logger = logging.getLogger(__name__)


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
        self.progress = bool(progress)
        self.chunksize = check_int(chunksize, "chunksize", minimum=1, none_ok=True)

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
        """Run ``run_chunk(fn, *chunk)`` for every chunk; return the chunk results in order."""

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
            out.append(run_chunk(fn, start, tasks, seeds))
            if bar is not None:
                bar.update(len(tasks))
        return out

    def __repr__(self) -> str:
        return "SerialExecutor()"


class ProcessPoolExecutor(Executor):
    """Run tasks on a pool of local worker processes.

    The pool starts at the first :meth:`map` and is kept until :meth:`close`
    (or the end of a ``with`` block), so repeated calls do not pay the start-up.

    A worker never outlives the process that started it: each watches its
    parent (:func:`watch_parent`) and ends itself within
    :data:`games.parent_watch.PARENT_WATCH_INTERVAL` seconds of the parent's death, even in the
    middle of a task (a killed main process leaves no worker behind).

    A worker that dies in the middle of a batch (killed by a signal, out of
    memory, a crash in native code) costs a retry, not the run: the broken pool
    is discarded, the chunks whose results had not come back are submitted
    again to a fresh pool, and the results already received are kept. After
    ``max_retries`` fresh pools in one :meth:`map` it raises
    :class:`EngineError`. Seeded results do not change (every task's stream
    comes from its index).

    Parameters
    ----------
    workers : int, optional
        Number of processes; defaults to ``os.cpu_count()``.
    progress, chunksize
        As in :class:`Executor`.
    start_method : str
        ``"spawn"`` (default; safe with threads), ``"forkserver"`` or ``"fork"``.
    max_retries : int
        Fresh pools one :meth:`map` may start after a worker died (default 3).

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
        max_retries: int = 3,
    ):
        super().__init__(progress=progress, chunksize=chunksize)
        workers = (os.cpu_count() or 1) if workers is None else workers
        self.workers = check_int(workers, "workers", minimum=1)
        if start_method not in multiprocessing.get_all_start_methods():
            raise ValueError(
                f"start_method must be one of {multiprocessing.get_all_start_methods()}; got {start_method!r}."
            )
        self.start_method = start_method
        self.max_retries = check_int(max_retries, "max_retries", minimum=0)
        self._pool: cf.ProcessPoolExecutor | None = None

    def _ensure_pool(self) -> cf.ProcessPoolExecutor:
        if self._pool is None:
            ctx = multiprocessing.get_context(self.start_method)
            self._pool = cf.ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx, initializer=watch_parent,
                                                initargs=(os.getpid(),))
            logger.debug("started a process pool with %d workers (%s)", self.workers, self.start_method)
        return self._pool

    def _run_chunks(self, fn, chunks, bar):
        out: list = [None] * len(chunks)
        todo = list(range(len(chunks)))
        for attempt in range(self.max_retries + 1):
            todo = self._run_once(fn, chunks, todo, out, bar)
            if not todo:
                return out
            self._discard_pool()
            first, last = chunks[todo[0]][0], chunks[todo[-1]][0] + len(chunks[todo[-1]][1]) - 1
            if attempt == self.max_retries:
                raise EngineError(
                    f"a worker process of the pool died (killed by a signal, out of memory, or a crash in native "
                    f"code) while running tasks {first}..{last}, on {self.max_retries + 1} pools in a row; the "
                    f"results of the other tasks were kept. If one task kills its worker every time, run it with "
                    f"the 'serial' executor to see its error, or raise max_retries."
                )
            logger.warning("a worker process died; retrying tasks %d..%d (%d chunks) on a fresh pool (%d of %d)",
                           first, last, len(todo), attempt + 1, self.max_retries)
        return out  # pragma: no cover - the loop returns or raises

    def _run_once(self, fn, chunks, todo, out, bar) -> list:
        """Run the chunks ``todo`` on the pool, filling ``out``; return those lost to a dead worker, in order."""
        futures: dict = {}
        try:
            pool = self._ensure_pool()
            for i in todo:
                futures[pool.submit(run_chunk, fn, *chunks[i])] = i
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
        except cf.process.BrokenProcessPool:
            # every result that came back before the pool broke is kept; the rest was lost with the worker
            received = {i: fut for fut, i in futures.items()
                        if fut.done() and not fut.cancelled() and fut.exception() is None}
            for i, fut in received.items():
                if out[i] is None and bar is not None:
                    bar.update(len(chunks[i][1]))
                out[i] = fut.result()
            return [i for i in todo if i not in received]
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise
        return []

    def _discard_pool(self) -> None:
        """Drop a broken pool without waiting for it (its workers are dead or being killed)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

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


#: How to start a cluster, for the errors of an address that cannot be reached.
CLUSTER_HINT = ("on the head node `ray start --head --port=6379` (and `--ray-client-server-port=10001` for ray:// "
                "addresses), on each other node `ray start --address=HEAD:6379`")


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """Raise :class:`EngineError` naming ``address`` when nothing accepts a TCP connection there within ``timeout``
    seconds (``"HOST:PORT"`` or ``"ray://HOST:PORT"``; ``"auto"``, ``"local"`` and other forms are left to Ray).

    Ray itself retries an unreachable address for a minute or more before its own ``ConnectionError``, and an
    address where another service listens for about half a minute (``Failed to get cluster ID``); this check
    answers in at most twice ``timeout`` seconds: something must accept the connection, and answer as a gRPC
    (HTTP/2) server does, as Ray's GCS and Ray Client servers do.

    Examples
    --------
    >>> check_reachable("127.0.0.1:1")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    games.executor_tasks.EngineError: cannot reach the Ray cluster at '127.0.0.1:1' (...): ...
    >>> check_reachable("auto")
    """
    import re
    import socket

    match = re.fullmatch(r"(?:ray://)?\[?([^\[\]]+?)\]?:(\d+)", address.strip())
    if match is None:
        return
    host, port = match[1], int(match[2])
    try:
        with socket.create_connection((host, port), timeout=timeout) as connection:
            speaks_grpc = _answers_http2(connection, timeout)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise EngineError(f"cannot reach the Ray cluster at {address!r} ({reason}): nothing accepts connections on "
                          f"{host} port {port}. Check the address and port (the head's GCS port, 6379 by default, "
                          f"or its Ray Client port with ray://HOST:10001), that the cluster runs ({CLUSTER_HINT}), "
                          "and that no firewall blocks the port.") from None
    if not speaks_grpc:
        raise EngineError(f"{address!r} accepts connections but is not a Ray cluster: no answer in Ray's protocol "
                          f"(gRPC) came within {timeout:g} s. Check the address and port (the head's GCS port, "
                          "6379 by default, or its Ray Client port with ray://HOST:10001); another service listens "
                          "there.")


#: The client preface of HTTP/2 (RFC 9113, 3.4) and an empty SETTINGS frame: a gRPC server answers with its own
#: SETTINGS frame (type 4) at once
_HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


def _answers_http2(connection, timeout: float) -> bool:
    """Whether the server at the other end of ``connection`` speaks HTTP/2 (Ray's GCS and its Ray Client server are
    gRPC servers): its first frame, after our preface, is a SETTINGS frame. Another service (an HTTP/1 server, a
    database, one that stays silent) answers otherwise, closes, or says nothing within ``timeout`` seconds."""
    connection.settimeout(timeout)
    try:
        connection.sendall(_HTTP2_PREFACE)
        header = b""
        while len(header) < 9:
            chunk = connection.recv(9 - len(header))
            if not chunk:
                return False
            header += chunk
    except OSError:   # (a timeout included)
        return False
    return header[3] == 0x04


class _TransientTaskError(TaskError):
    """A task failed with an exception listed as transient; Ray retries it (``retry_exceptions``)."""

    def __reduce__(self):
        return (_TransientTaskError, (self.index, self.task, self.error))


def _run_chunk_transient(fn: Callable, start: int, tasks: list, seeds: list | None, transient: tuple) -> list:
    """:func:`run_chunk` for Ray: failures of the ``transient`` kinds are raised so Ray retries them."""
    try:
        return run_chunk(fn, start, tasks, seeds)
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
        num_cpus = check_int(num_cpus, "num_cpus", minimum=1, none_ok=True)
        if address is not None and not isinstance(address, str):
            raise TypeError(f"address must be a string such as 'auto' or 'ray://host:10001'; got {address!r}.")
        if address is not None and num_cpus is not None:
            raise ValueError(
                "num_cpus starts a local Ray instance and address joins a running cluster; give one of them, "
                "not both (a cluster's CPUs are set when it starts)."
            )
        max_in_flight = check_int(max_in_flight, "max_in_flight", minimum=1, none_ok=True)
        max_retries = check_int(max_retries, "max_retries", minimum=0)
        transient = tuple(transient)
        if not all(isinstance(t, type) and issubclass(t, BaseException) for t in transient):
            raise TypeError(f"transient must be a tuple of exception classes; got {transient!r}.")
        self.num_cpus = num_cpus
        self.address = address
        self.max_in_flight = max_in_flight
        self.max_retries = max_retries
        self.transient = transient
        worker_niceness = check_int(worker_niceness, "worker_niceness", minimum=0, maximum=19, none_ok=True)
        if worker_niceness is not None and address is not None:
            raise ValueError("worker_niceness applies to a local instance this executor starts, not to a cluster "
                             "joined through address; set it where the cluster starts.")
        self.worker_niceness = worker_niceness
        self.init_options = dict(init_options or {})
        self.workers = self.num_cpus or 1
        self._started = False   # whether this executor called ray.init (and so owns the instance)
        self._remote = None

    def _ensure_ray(self):
        ray = _import_ray()
        try:
            if not ray.is_initialized():
                options = {"include_dashboard": False, **self.init_options}
                if self.address is not None:
                    check_reachable(self.address)
                    try:
                        ray.init(address=self.address, **options)
                    except (ConnectionError, TimeoutError, RuntimeError) as exc:
                        raise EngineError(f"could not join the Ray cluster at {self.address!r}: "
                                          f"{' '.join(str(exc).split())[:300]} Check that the cluster runs there "
                                          f"({CLUSTER_HINT}) and that this machine's Ray version and credentials "
                                          "match the cluster's, or run on another engine (executor='process' or "
                                          "'serial').") from exc
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
        except EngineError:
            raise   # (already says which address and what to check)
        except (ConnectionError, TimeoutError, RuntimeError, ray.exceptions.RayError) as exc:
            raise EngineError(
                f"Ray could not be started or reached ({self.address or 'a local instance'}): "
                f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}. Check the cluster (ray status), or run "
                f"on another engine (executor='process' or 'serial')."
            ) from exc
        return ray

    def map(self, fn, tasks, **kwargs) -> list:
        self._ensure_ray()
        return super().map(fn, tasks, **kwargs)

    map.__doc__ = Executor.map.__doc__

    def _run_chunks(self, fn, chunks, bar):
        ray = self._ensure_ray()
        limit = self.max_in_flight or 2 * self.workers
        out: list = [None] * len(chunks)
        pending: dict = {}
        following = 0
        try:
            fn_ref = ray.put(fn)
            while following < len(chunks) or pending:
                while following < len(chunks) and len(pending) < limit:
                    start, tasks, seeds = chunks[following]
                    ref = self._remote.remote(fn_ref, start, tasks, seeds, self.transient)
                    pending[ref] = following
                    following += 1
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    i = pending[ref]
                    out[i] = self._get(ray, ref)
                    del pending[ref]   # (after the get: a chunk whose get failed still counts as in flight)
                    if bar is not None:
                        bar.update(len(chunks[i][1]))
        except TaskError:
            # no cancelling: the chunks in flight finish on the workers and their results are dropped. Cancelling a
            # task as it completes can abort this process (Ray's check 'Tried to complete task that was not
            # pending', ray-project/ray#54846; seen here after a task's exception, about 1 run in 5 on 2 cores)
            raise
        except ray.exceptions.RayError as exc:
            self._cancel(ray, pending)
            raise EngineError(
                f"the Ray engine failed ({type(exc).__name__}) with {len(pending)} chunks in flight: a Ray worker or "
                f"system process (raylet, GCS, object store) died and Ray could not recover it within "
                f"max_retries={self.max_retries}. A run's checkpoint is intact: resume it (on another engine if "
                f"Ray keeps failing, e.g. executor='process'). Ray said: {' '.join(str(exc).split())[:300]}"
            ) from exc
        except BaseException:
            self._cancel(ray, pending)
            raise
        return out

    @staticmethod
    def _cancel(ray, pending) -> None:
        """Cancel the chunks in flight that have not finished (cancelling a finished one races in Ray, above)."""
        refs = list(pending)
        try:
            _, refs = ray.wait(refs, num_returns=len(refs), timeout=0)
        except Exception:  # noqa: BLE001 - Ray may already be gone: try them all
            logger.debug("could not ask Ray which tasks finished", exc_info=True)
        for ref in refs:
            try:
                ray.cancel(ref, force=False)
            except Exception:  # noqa: BLE001 - Ray may already be gone; the original error is what matters
                logger.debug("could not cancel a Ray task", exc_info=True)

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


def portable_spec(spec):
    """The part of an executor spec that a run directory stores: an engine name and a worker count.

    A checkpoint never decides where or how code runs, so everything else (a Ray
    ``address``, ``init_options`` such as a ``runtime_env``, ``chunksize``, ...) is
    left out; an :class:`Executor` instance becomes ``None`` (serial on resume).

    Examples
    --------
    >>> portable_spec({"engine": "ray", "num_cpus": 4, "init_options": {"runtime_env": {}}})
    {'engine': 'ray', 'workers': 4}
    >>> portable_spec({"engine": "process"}), portable_spec(3), portable_spec(SerialExecutor())
    ('process', 3, None)
    """
    if is_integer(spec):
        return int(spec)
    if spec is None or isinstance(spec, Executor) or (isinstance(spec, str) and spec not in ENGINES):
        return None
    if isinstance(spec, str):
        return spec
    if isinstance(spec, dict) and spec.get("engine") in ENGINES:
        workers = spec.get("workers" if spec["engine"] == "process" else "num_cpus")
        if is_integer(workers) and spec["engine"] != "serial":
            return {"engine": spec["engine"], "workers": int(workers)}
        return spec["engine"]
    return None


def spec_from_portable(value, name: str = "executor"):
    """Check a stored executor spec (see :func:`portable_spec`) and turn it into one :func:`make_executor` takes.

    Only ``None``, an engine name (``"serial"``, ``"process"``, ``"ray"``), a
    worker count, or ``{"engine": ..., "workers": n}`` pass; anything else, a
    Ray ``runtime_env``, a hook, an address or any init option among them, is
    refused: a file read from disk must not choose where or how code runs.

    Raises
    ------
    ValueError
        Naming ``name`` and the key that is not allowed.

    Examples
    --------
    >>> spec_from_portable({"engine": "ray", "workers": 2})
    {'engine': 'ray', 'num_cpus': 2}
    >>> spec_from_portable({"engine": "ray", "init_options": {"runtime_env": {"working_dir": "."}}})
    Traceback (most recent call last):
    ...
    ValueError: executor may only name an engine and a worker count; 'init_options' is not allowed ...
    """
    fix = ("a stored run may only choose the engine ('serial', 'process', 'ray') and a worker count, never where "
           "or how code runs; remove it, or pass the executor you want when resuming")
    if value is None or value in ENGINES:
        return value
    if is_integer(value):
        return check_int(value, name, minimum=1)
    if not isinstance(value, dict):
        raise ValueError(f"{name} must be an engine name, a worker count or {{'engine': ..., 'workers': n}}; "
                         f"got {value!r} ({fix}).")
    extra = sorted(str(k) for k in value if k not in ("engine", "workers"))
    if extra:
        raise ValueError(f"{name} may only name an engine and a worker count; {extra[0]!r} is not allowed ({fix}).")
    engine = value.get("engine")
    if engine not in ENGINES:
        raise ValueError(f"{name}['engine'] must be one of {list(ENGINES)}; got {engine!r} ({fix}).")
    if "workers" not in value or engine == "serial":
        return engine
    workers = check_int(value["workers"], f"{name}['workers']", minimum=1)
    return {"engine": engine, ("workers" if engine == "process" else "num_cpus"): workers}


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
    if is_integer(spec):
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
