"""What running tasks means, whatever the engine (:mod:`games.executors`): the errors a run raises, seeded
generator streams, and one chunk of tasks run in a worker."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["TaskError", "EngineError", "spawn_generators", "run_chunk"]


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


class EngineError(RuntimeError):
    """The engine itself failed, not a task: a worker process died and retries did not help, or Ray's system
    processes went away. The message says what happened and what to do.

    Examples
    --------
    >>> str(EngineError("a worker died"))
    'a worker died'
    """


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


def run_chunk(fn: Callable, start: int, tasks: list, seeds: list | None) -> list:
    """Run one chunk of tasks in a worker (task ``j`` with a generator seeded by ``seeds[j]`` when given); wrap a
    failure in :class:`TaskError`.

    Examples
    --------
    >>> run_chunk(abs, 0, [-1, 2], None)
    [1, 2]
    """
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
