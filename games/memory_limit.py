"""The memory limit: every size a document, config or argument names is checked against it before allocation.

A size read from a file a user may have received (a network's layer widths in a checkpoint, an observation
size, a number of ensemble members, a buffer capacity, a game's shape) is turned into an estimate of the bytes it
needs, and :func:`check_memory` refuses it, with the estimate and the limit, before anything is allocated: a
hostile or mistyped number ends in a clear ``ValueError``, never in a ``MemoryError``, a crash or a machine
brought to a halt.

The limit is :func:`memory_limit`: the environment variable ``PSRO_MAX_MEMORY`` when it is set (bytes, or a
number with a unit ``K``, ``M``, ``G``, ``T``, powers of 1024: ``PSRO_MAX_MEMORY=64G``), else half the memory
available when the check runs (the default of the game tree's budget, :func:`psro.game_tree.memory_budget`).
"""

from __future__ import annotations

import math
import os
import re

__all__ = ["ENV_VAR", "MemoryLimitExceeded", "available_half", "check_memory", "memory_limit", "parse_bytes"]

ENV_VAR = "PSRO_MAX_MEMORY"
_UNITS = {"": 1, "B": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


class MemoryLimitExceeded(ValueError):
    """A size whose estimated memory is above :func:`memory_limit` (a ``ValueError``: the input is refused)."""


def parse_bytes(text: str, name: str = ENV_VAR) -> int:
    """A byte count written as a number with an optional unit (K, M, G, T: powers of 1024; ``iB`` / ``B`` ok).

    Examples
    --------
    >>> parse_bytes("64G"), parse_bytes("1.5 MiB"), parse_bytes("4096")
    (68719476736, 1572864, 4096)
    >>> parse_bytes("lots")
    Traceback (most recent call last):
    ...
    ValueError: PSRO_MAX_MEMORY must be a number of bytes with an optional unit K, M, G or T (e.g. 64G); got 'lots'.
    """
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([KMGT]?)(?:i?B)?\s*", str(text),
                         flags=re.IGNORECASE)
    value = float(match.group(1)) * _UNITS[match.group(2).upper()] if match else math.nan
    if not (math.isfinite(value) and value >= 1):
        raise ValueError(f"{name} must be a number of bytes with an optional unit K, M, G or T (e.g. 64G); "
                         f"got {text!r}.")
    return int(value)


def available_half() -> int:
    """Half the memory available now, in bytes (8 GiB where the system does not say).

    Examples
    --------
    >>> available_half() > 0
    True
    """
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024 // 2
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES") // 2
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30


def memory_limit() -> int:
    """The limit in bytes: ``PSRO_MAX_MEMORY`` when set, else half the memory available now.

    Examples
    --------
    >>> import os
    >>> os.environ["PSRO_MAX_MEMORY"] = "2G"
    >>> memory_limit()
    2147483648
    >>> del os.environ["PSRO_MAX_MEMORY"]
    """
    text = os.environ.get(ENV_VAR, "").strip()
    return parse_bytes(text) if text else available_half()


def _gib(nbytes: float) -> str:
    return f"{nbytes / 2**30:.3g} GiB" if nbytes >= 2**24 else f"{nbytes / 2**20:.3g} MiB"


def check_memory(nbytes: float, what: str, fix: str = "") -> int:
    """Refuse ``what`` when its estimated ``nbytes`` pass :func:`memory_limit`; return the estimate as an int.

    Parameters
    ----------
    nbytes : float
        The estimate (may be astronomically large: it is compared, never allocated).
    what : str
        What needs it, naming the argument or field and its value (``"hidden=[200000, 200000]"``).
    fix : str
        How to ask for less (appended to the message).

    Raises
    ------
    MemoryLimitExceeded
        A ``ValueError`` naming ``what``, the estimate and the limit, and how to raise the limit.

    Examples
    --------
    >>> import os
    >>> os.environ["PSRO_MAX_MEMORY"] = "1G"
    >>> check_memory(8 * 10**6, "shape=(1000, 1000)")
    8000000
    >>> check_memory(8 * 10**10, "shape=(100000, 100000)")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    games.memory_limit.MemoryLimitExceeded: shape=(100000, 100000) needs about 74.5 GiB, above the memory limit
    of 1 GiB (PSRO_MAX_MEMORY). Raise the limit with PSRO_MAX_MEMORY=<bytes, e.g. 64G> if the machine has it.
    >>> del os.environ["PSRO_MAX_MEMORY"]
    """
    limit = memory_limit()
    if not nbytes <= limit:   # (NaN is refused too)
        source = ENV_VAR if os.environ.get(ENV_VAR, "").strip() else "half the memory available now"
        tail = f" {fix}" if fix else ""
        raise MemoryLimitExceeded(
            f"{what} needs about {_gib(nbytes)}, above the memory limit of {_gib(limit)} ({source}).{tail} Raise "
            f"the limit with {ENV_VAR}=<bytes, e.g. 64G> if the machine has it.")
    return int(nbytes)
