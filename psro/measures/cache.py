"""The sequence tables of a board game on disk, so that a machine finds them once: one ``.npz`` per game.

Only boards of :data:`psro.measures.exact.DISK_CELLS` cells or more are kept (3x3 dark hex and phantom
tic-tac-toe, whose tables take minutes to find); smaller ones are found again in a second.

The folder is ``PSRO_CACHE`` when set, else ``~/.cache/psro-toolkit``; ``PSRO_CACHE=off`` turns the cache off. A
file holds plain arrays only (read with ``allow_pickle=False``, its size checked against the memory limit first)
and the SHA-256 of their bytes; a file whose digest or shape does not check is ignored, with a warning, and
rebuilt.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

import numpy as np

__all__ = ["cache_path", "load", "save", "ENV_VAR"]

log = logging.getLogger(__name__)

ENV_VAR = "PSRO_CACHE"
#: bump when the numbering of sequences changes
FORMAT = 1


def cache_path(key: str) -> Path | None:
    """The file of game ``key``'s tables, or ``None`` when the cache is off.

    Examples
    --------
    >>> import os
    >>> os.environ["PSRO_CACHE"] = "off"; cache_path("phantom_ttt()") is None
    True
    >>> os.environ["PSRO_CACHE"] = "/tmp/c"; cache_path("phantom_ttt()").parent.as_posix()
    '/tmp/c'
    >>> del os.environ["PSRO_CACHE"]
    """
    folder = os.environ.get(ENV_VAR, "")
    if folder.lower() == "off":
        return None
    root = Path(folder) if folder else Path.home() / ".cache" / "psro-toolkit"
    name = hashlib.sha256(f"{FORMAT}:{key}".encode()).hexdigest()[:20]
    return root / f"sequences-{name}.npz"


def _digest(arrays: dict) -> str:
    h = hashlib.sha256()
    for name in sorted(arrays):
        h.update(name.encode())
        h.update(np.ascontiguousarray(arrays[name]).tobytes())
    return h.hexdigest()


def save(key: str, arrays: dict) -> None:
    """Write ``arrays`` (name -> ndarray) for ``key`` atomically; a failure to write is logged, never raised."""
    path = cache_path(key)
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        with open(tmp, "wb") as f:
            np.savez(f, digest=np.frombuffer(_digest(arrays).encode(), dtype=np.uint8), **arrays)
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("could not cache the sequence tables of %s in %s: %s", key, path, exc)


def load(key: str, names: tuple) -> dict | None:
    """The arrays cached for ``key`` if a file holds them all and its digest checks, else ``None``."""
    from games.memory_limit import check_npz

    path = cache_path(key)
    if path is None or not path.is_file() or path.is_symlink():
        return None
    try:
        check_npz(path, f"the cached sequence tables {path}")
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in names}
            digest = bytes(data["digest"]).decode()
    except (OSError, ValueError, KeyError) as exc:
        log.warning("ignoring the cached sequence tables %s (%s); building them again", path, exc)
        return None
    if digest != _digest(arrays):
        log.warning("ignoring the cached sequence tables %s: its digest does not check; building them again", path)
        return None
    return arrays
