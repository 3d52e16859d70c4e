"""The memory limit: every size a document, config or argument names is checked against it before allocation.

A size read from a file a user may have received (a network's layer widths in a checkpoint, an observation
size, a number of ensemble members, a buffer capacity, a game's shape) is turned into an estimate of the bytes it
needs, and :func:`check_memory` refuses it, with the estimate and the limit, before anything is allocated: a
hostile or mistyped number ends in a clear ``ValueError``, never in a ``MemoryError``, a crash or a machine
brought to a halt.

The limit is :func:`memory_limit`: the environment variable ``PSRO_MAX_MEMORY`` when it is set (bytes, or a
number with a unit ``K``, ``M``, ``G``, ``T``, powers of 1024: ``PSRO_MAX_MEMORY=64G``), else half the memory
available when the check runs (the default of the game tree's budget,
:func:`psro.sequence_form.game_tree.memory_budget`): the
smallest of the machine's available memory, the process's address-space limit (``ulimit -v``, ``RLIMIT_AS``) and
its cgroup's limit (``memory.max`` less ``memory.current``), halved.

:func:`check_file` and :func:`check_npz` apply the limit to a file before it is read: its size on disk (a sparse
file of 30 GB is refused without reading a byte), and for an ``.npz`` the shapes its array headers declare.
"""

from __future__ import annotations

import math
import os
import re
import zipfile

__all__ = ["ENV_VAR", "MemoryLimitExceeded", "available_half", "check_memory", "memory_limit", "parse_bytes",
           "check_file", "check_npz", "npz_bytes"]

#: The cgroup (v2) files of the process's memory limit and use
CGROUP_FILES = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current")

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
    """Half the memory available now, in bytes: the smallest of the machine's available memory, the address-space
    limit (``ulimit -v``) and the cgroup's room (``memory.max`` less ``memory.current``), halved (8 GiB where the
    system says nothing).

    Examples
    --------
    >>> available_half() > 0
    True
    """
    bounds = [_machine_available(), _address_space_limit(), _cgroup_room()]
    return max(1, min(b for b in bounds if b is not None) // 2)


def _address_space_limit() -> int | None:
    """The soft ``RLIMIT_AS`` in bytes (``ulimit -v``), None when unlimited or unknown."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, OSError, ValueError, AttributeError):   # pragma: no cover - not a POSIX system
        return None
    return None if soft == resource.RLIM_INFINITY or soft < 0 else int(soft)


def _cgroup_room(files=CGROUP_FILES) -> int | None:
    """The cgroup's ``memory.max`` less its ``memory.current`` in bytes; None where there is no such limit."""
    try:
        with open(files[0]) as fh:
            text = fh.read().strip()
    except OSError:
        return None
    if not text.isdigit():   # "max": no limit
        return None
    try:
        with open(files[1]) as fh:
            used = int(fh.read().strip() or 0)
    except (OSError, ValueError):
        used = 0
    return max(0, int(text) - used)


def _machine_available() -> int:
    """The machine's available memory in bytes (16 GiB where the system does not say)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 16 * 2**30


def memory_limit() -> int:
    """The limit in bytes: ``PSRO_MAX_MEMORY`` when set, else :func:`available_half`.

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


def check_file(path, size: int | None = None) -> int:
    """Refuse the file ``path`` before it is read whole when its size (``os.stat``, or ``size``) passes
    :func:`memory_limit`; return the size.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "history.csv")
    >>> with open(path, "wb") as fh:
    ...     _ = fh.truncate(2**40)   # a sparse file of 1 TiB: nothing is read
    >>> check_file(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    games.memory_limit.MemoryLimitExceeded: the file '.../history.csv' (1.1e+12 bytes) needs about 1.02e+03 GiB, ...
    """
    size = os.stat(path).st_size if size is None else int(size)
    return check_memory(size, f"the file {str(path)!r} ({size:.3g} bytes)",
                        "It is not read; a run's files are far smaller (a damaged or hostile file?).")


def npz_bytes(source) -> int:
    """The bytes the arrays of the ``.npz`` ``source`` (a path or a binary file object) declare in their headers
    (shape times item size, summed), read from the headers alone: no array is loaded.

    Examples
    --------
    >>> import io, numpy as np
    >>> buffer = io.BytesIO()
    >>> np.savez(buffer, a=np.zeros((10, 10)), b=np.zeros(3, dtype=np.int32))
    >>> npz_bytes(buffer)
    812
    """
    import numpy as np
    from numpy.lib import format as npy

    total = 0
    with zipfile.ZipFile(source) as archive:
        for info in archive.infolist():
            if not info.filename.endswith(".npy"):
                continue
            with archive.open(info) as member:
                version = npy.read_magic(member)
                if version == (1, 0):
                    shape, _, dtype = npy.read_array_header_1_0(member)
                else:
                    shape, _, dtype = npy.read_array_header_2_0(member)
            total += math.prod(int(n) for n in shape) * max(np.dtype(dtype).itemsize, 1)
    return total


def check_npz(source, what: str) -> int:
    """Refuse the ``.npz`` ``source`` (a path or a binary file object; ``what`` names it) when the arrays its
    headers declare pass :func:`memory_limit`, before any is loaded; return their bytes. A file that is no
    ``.npz`` is a ``ValueError`` naming ``what``.

    Examples
    --------
    >>> import io, numpy as np
    >>> from numpy.lib import format as npy
    >>> buffer = io.BytesIO()
    >>> with zipfile.ZipFile(buffer, "w") as archive:   # a header declaring 10**7 x 10**7 floats, and no data
    ...     with archive.open("a.npy", "w") as member:
    ...         npy.write_array_header_2_0(member, {"descr": "<f8", "fortran_order": False,
    ...                                             "shape": (10**7, 10**7)})
    >>> check_npz(buffer, "arrays-3.npz")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    games.memory_limit.MemoryLimitExceeded: the arrays of arrays-3.npz (as their headers declare) needs about ...
    """
    try:
        nbytes = npz_bytes(source)
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, TypeError, SyntaxError) as exc:
        raise ValueError(f"{what} is not a readable .npz ({type(exc).__name__}: {exc}).") from None
    if hasattr(source, "seek"):
        source.seek(0)
    return check_memory(nbytes, f"the arrays of {what} (as their headers declare)",
                        "They are not loaded (a damaged or hostile file?).")
