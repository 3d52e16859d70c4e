"""A pool worker that ends with the process that started it: :func:`watch_parent` (every worker of
:class:`games.executors.ProcessPoolExecutor` runs it at start-up)."""

from __future__ import annotations

import os
import threading
import time

__all__ = ["watch_parent", "PARENT_WATCH_INTERVAL"]


#: Seconds between a pool worker's checks that the process that started it is alive
PARENT_WATCH_INTERVAL = 0.5


def watch_parent(creator: int | None = None, interval: float | None = None) -> threading.Thread:
    """Start a daemon thread that ends this process (``os._exit``) once the process ``creator`` (by default the
    parent) is gone; every pool worker runs it at start-up, with the pid of the process that made the pool.

    A worker whose parent is ``creator`` (the ``spawn`` and ``fork`` start methods) ends when its parent pid
    changes (the orphan was handed to another process), also when that happened before this call; otherwise (a
    ``forkserver`` worker) when ``creator`` no longer exists.

    Examples
    --------
    >>> watch_parent(interval=60).daemon   # (the parent of this process is alive: nothing happens)
    True
    """
    interval = PARENT_WATCH_INTERVAL if interval is None else interval
    creator = os.getppid() if creator is None else creator
    child = os.getppid() == creator

    def gone() -> bool:
        return os.getppid() != creator if child else not _exists(creator)

    def watch() -> None:
        while not gone():
            time.sleep(interval)
        os._exit(1)

    if not child and not _exists(creator):   # spawned, and the creator died before this worker started
        os._exit(1)
    thread = threading.Thread(target=watch, name="watch-parent", daemon=True)
    thread.start()
    return thread


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
