"""Making HiGHS solver objects the one way this toolkit needs them: silent and single-threaded."""

from __future__ import annotations

import contextlib
import os
import sys

__all__ = ["quiet_c_stdout", "new_highs", "configure_highs"]


@contextlib.contextmanager
def quiet_c_stdout():
    """Send file descriptor 1 to ``/dev/null`` for the duration.

    C++ libraries (HiGHS prints a banner when its first object is made) write
    to descriptor 1 directly, past ``sys.stdout``. That is descriptor 1 itself,
    not ``sys.stdout.fileno()``: a Jupyter kernel replaces ``sys.stdout`` and
    pipes descriptor 1 into the notebook, while its ``fileno()`` names a copy
    of the terminal. Where descriptor 1 is closed, nothing is redirected.

    Examples
    --------
    >>> with quiet_c_stdout():
    ...     pass
    """
    fd = 1
    try:
        os.fstat(fd)
    except OSError:
        yield
        return
    with contextlib.suppress(AttributeError, ValueError, OSError):
        sys.stdout.flush()
    saved = os.dup(fd)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), fd)
        yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)


def configure_highs(h) -> None:
    """Switch off HiGHS's output and ask for one thread.

    HiGHS keeps one task scheduler per process, sized by the first solve;
    every instance must ask for the same number of threads, so every HiGHS
    object of the toolkit asks for one.
    """
    h.setOptionValue("output_flag", False)
    h.setOptionValue("log_to_console", False)
    h.setOptionValue("threads", 1)


def new_highs():
    """A ``highspy.Highs`` object built silently and configured by :func:`configure_highs`.

    Examples
    --------
    >>> h = new_highs()
    >>> h.getOptionValue("threads")[1]
    1
    """
    import highspy

    with quiet_c_stdout():
        h = highspy.Highs()
    configure_highs(h)
    return h
