"""The files of a run directory: written atomically, never through a link, read only inside the directory, and
written by one process at a time.

Every file the toolkit writes into a run directory or a checkpoint directory
goes through :func:`atomic_write`: a temporary file in the same directory,
flushed to disk, renamed over its name. A symbolic link or anything but a
regular file at the name (or a linked directory to write into) is refused
with a ``ValueError`` (:class:`UnsafePath`), so a run directory from elsewhere
can never make a run write outside it. :func:`read_regular` reads a file the
same way (no link followed, regular files only, so a FIFO or ``/dev/zero``
never blocks), and :func:`file_in` turns a name a document gives into a path
inside its directory, or refuses it. :func:`run_lock` holds an exclusive
lock (``fcntl.flock`` on ``.psro.lock``, which holds the writer's pid) while a
process writes a run directory.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path

__all__ = ["UnsafePath", "RunDirLocked", "LOCK_FILE", "atomic_write", "write_bytes", "write_text", "check_target",
           "check_directory", "read_regular", "file_in", "run_lock"]

LOCK_FILE = ".psro.lock"


class UnsafePath(ValueError):
    """A path of a run directory the toolkit refuses to write or read (a link, a device, a FIFO, a name that leaves
    the directory)."""


class RunDirLocked(ValueError):
    """Another process holds the run directory's lock."""


def check_directory(directory) -> Path:
    """``directory`` as a ``Path``, refused (:class:`UnsafePath`) when it is a symbolic link or not a directory.

    Examples
    --------
    >>> import tempfile
    >>> check_directory(tempfile.mkdtemp()).is_dir()
    True
    """
    directory = Path(directory)
    if directory.is_symlink():
        raise UnsafePath(f"{str(directory)!r} is a symbolic link; a run directory is written only into its own "
                         "folders, never through a link (replace the link by a folder).")
    if not directory.is_dir():
        raise UnsafePath(f"{str(directory)!r} is not a directory.")
    return directory


def check_target(path) -> Path:
    """``path`` as a ``Path``, refused when it is a symbolic link or exists as anything but a regular file (a
    folder, a FIFO, a device), or when its folder is a link.

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> os.symlink("/etc/hostname", os.path.join(folder, "report.md"))
    >>> check_target(os.path.join(folder, "report.md"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    psro.run.run_files.UnsafePath: '.../report.md' is a symbolic link; ...
    """
    path = Path(path)
    check_directory(path.parent)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return path
    if stat.S_ISLNK(info.st_mode):
        raise UnsafePath(f"{str(path)!r} is a symbolic link; the toolkit never writes or reads through a link in a "
                         "run directory (remove the link).")
    if not stat.S_ISREG(info.st_mode):
        raise UnsafePath(f"{str(path)!r} is not a regular file (a folder, a FIFO or a device); remove it.")
    return path


def atomic_write(path, write) -> None:
    """Call ``write(fileobj)`` on a temporary file next to ``path``, fsync it and rename it to ``path``.

    ``path`` is checked first (:func:`check_target`): a link or a non-regular file there, or a linked folder, is
    refused, and nothing is written.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "x.txt"
    >>> atomic_write(path, lambda fh: fh.write(b"done"))
    >>> path.read_bytes()
    b'done'
    """
    path = check_target(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise
    _fsync_directory(path.parent)


def write_bytes(path, data: bytes) -> Path:
    """Write ``data`` to ``path`` with :func:`atomic_write`; return the path."""
    atomic_write(path, lambda fh: fh.write(data))
    return Path(path)


def write_text(path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` with :func:`atomic_write`; return the path.

    Examples
    --------
    >>> import tempfile
    >>> write_text(Path(tempfile.mkdtemp()) / "a.txt", "hi").read_text()
    'hi'
    """
    return write_bytes(path, text.encode())


def _fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory handles
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_regular(path) -> bytes:
    """The bytes of the regular file ``path``; a symbolic link, a FIFO, a device or a folder is refused
    (:class:`UnsafePath`) without blocking, and a missing file raises ``FileNotFoundError``.

    Examples
    --------
    >>> read_regular("/dev/zero")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    psro.run.run_files.UnsafePath: '/dev/zero' is not a regular file (a FIFO, a device or a folder); ...
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePath(f"{str(path)!r} is a symbolic link; a run reads no file through a link.") from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnsafePath(f"{str(path)!r} is not a regular file (a FIFO, a device or a folder); a run reads only "
                             "regular files.")
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read()
    finally:
        os.close(fd)


def file_in(directory, name, what: str = "file") -> Path:
    """``directory / name`` for a ``name`` that a document gives: a plain file name (no folder, no ``..``, no
    control character), so the path stays inside ``directory``; anything else is refused (:class:`UnsafePath`).

    Examples
    --------
    >>> file_in("run", "arrays-1.npz").as_posix()
    'run/arrays-1.npz'
    >>> file_in("run", "../../etc/hostname", "arrays.file")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    psro.run.run_files.UnsafePath: arrays.file: '../../etc/hostname' is not a file name inside 'run'; ...
    """
    if not (isinstance(name, str) and name and name not in (".", "..") and "/" not in name and "\\" not in name
            and not any(ord(c) < 32 or ord(c) == 127 for c in name)):
        raise UnsafePath(f"{what}: {name!r} is not a file name inside {str(directory)!r}; a checkpoint names only "
                         "files of its own directory.")
    return Path(directory) / name


@contextlib.contextmanager
def run_lock(run_dir):
    """Hold the exclusive lock of ``run_dir`` (``fcntl.flock`` on ``run_dir/.psro.lock``, which holds this process's
    pid) for the ``with`` block; another process holding it raises :class:`RunDirLocked` naming the lock file and
    its pid. The lock ends with the process, however it ends (on systems without ``fcntl`` no lock is taken).

    Examples
    --------
    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with run_lock(folder):
    ...     with run_lock(folder):  # doctest: +ELLIPSIS
    ...         pass
    Traceback (most recent call last):
    ...
    psro.run.run_files.RunDirLocked: run directory ... is being written by process ... (lock file ...); ...
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not a POSIX system
        yield None
        return
    path = check_target(Path(run_dir) / LOCK_FILE)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "(pid not yet written)"
            raise RunDirLocked(f"run directory {str(run_dir)!r} is being written by process {holder} (lock file "
                               f"{str(path)!r}); wait for it to end, or stop it, before resuming or writing this "
                               "run again.") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield path
    finally:
        os.close(fd)
