"""The files of a run directory: written atomically, never through a link, read only inside the directory, and
written by one process at a time.

Every file the toolkit writes into a run directory or a checkpoint directory
goes through :func:`atomic_write`: a temporary file in the same directory,
flushed to disk, renamed over its name. A symbolic link or anything but a
regular file at the name (or a linked directory to write into) is refused
with a ``ValueError`` (:class:`UnsafePath`), and so is a hard link (a file with
more than one name), so a run directory from elsewhere can never make a run
write outside it. :func:`open_append` is the one way to append (the ``csv``
logger's ``log.csv``), under the same refusals. :func:`read_regular` reads a file the
same way (no link followed, regular files only, so a FIFO or ``/dev/zero``
never blocks, and a file larger than the memory limit is refused before a byte
is read: :func:`games.memory_limit.check_file`), and :func:`file_in` turns a name a document gives into a path
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

from games.memory_limit import check_file

__all__ = ["UnsafePath", "RunDirLocked", "LOCK_FILE", "atomic_write", "write_bytes", "write_text", "check_target",
           "check_directory", "read_regular", "file_in", "run_lock", "open_append"]

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


def check_target(path, shared_with=None) -> Path:
    """``path`` as a ``Path``, refused when it is a symbolic link or exists as anything but a regular file (a
    folder, a FIFO, a device), when it is a hard link (a file with more than one name), or when its folder is a
    link. (``shared_with``: a name in the same folder that may share the file, as the previous checkpoint shares
    the latest one's until the latest is replaced.)

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
    _check_regular(path, info, shared_with)
    return path


def _check_regular(path, info: os.stat_result, shared_with=None) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise UnsafePath(f"{str(path)!r} is not a regular file (a folder, a FIFO or a device); remove it.")
    if info.st_nlink == 2 and shared_with is not None:
        try:
            other = os.lstat(shared_with)
        except FileNotFoundError:
            other = None
        if other is not None and (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino):
            return
    if info.st_nlink > 1:
        raise UnsafePath(f"{str(path)!r} is a hard link (the file has {info.st_nlink} names); the toolkit never "
                         "writes a file that another name shares (remove it, or replace it by a copy).")


def atomic_write(path, write, shared_with=None) -> None:
    """Call ``write(fileobj)`` on a temporary file next to ``path``, fsync it and rename it to ``path``.

    ``path`` is checked first (:func:`check_target`): a link or a non-regular file there, or a linked folder, is
    refused, and nothing is written; so is a hard link (but for one shared with ``shared_with``: see
    :func:`check_target`).

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "x.txt"
    >>> atomic_write(path, lambda fh: fh.write(b"done"))
    >>> path.read_bytes()
    b'done'
    """
    path = check_target(path, shared_with)
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
    (:class:`UnsafePath`) without blocking, a file above the memory limit is refused before it is read
    (:class:`games.memory_limit.MemoryLimitExceeded`, a ``ValueError`` naming the file and the limit), and a
    missing file raises ``FileNotFoundError``.

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
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafePath(f"{str(path)!r} is not a regular file (a FIFO, a device or a folder); a run reads only "
                             "regular files.")
        check_file(path, info.st_size)
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


def open_append(path):
    """``path`` opened for appending text (``newline=""``, for ``csv``), created when missing: a symbolic link, a
    hard link, a non-regular file or a linked folder there is refused (:class:`UnsafePath`), checked again on the
    opened file, so nothing is ever appended outside the run directory.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "log.csv"
    >>> with open_append(path) as fh:
    ...     _ = fh.write("a,b\\n")
    >>> path.read_text()
    'a,b\\n'
    """
    path = check_target(path)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePath(f"{str(path)!r} is a symbolic link; the toolkit never writes through a link in a run "
                             "directory (remove the link).") from None
        raise
    try:
        _check_regular(path, os.fstat(fd))
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "a", newline="")


@contextlib.contextmanager
def run_lock(run_dir, what: str = "run directory"):
    """Hold the exclusive lock of ``run_dir`` (``fcntl.flock`` on ``run_dir/.psro.lock``, which holds this process's
    pid) for the ``with`` block; another process holding it raises :class:`RunDirLocked` naming the lock file and
    its pid (``what`` names the folder in that message: a run directory, a sweep directory). A link at the lock's
    name is refused, never opened. The lock ends with the process, however it ends (on systems without ``fcntl``
    no lock is taken).

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
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0),
                     0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePath(f"{str(path)!r} is a symbolic link; remove it (the lock is never taken through a "
                             "link).") from None
        raise
    try:
        _check_regular(path, os.fstat(fd))   # (checked on the open file too: nothing outside is truncated)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "(pid not yet written)"
            raise RunDirLocked(f"{what} {str(run_dir)!r} is being written by process {holder} (lock file "
                               f"{str(path)!r}); wait for it to end, or stop it, before resuming or writing this "
                               "run again.") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield path
    finally:
        os.close(fd)
