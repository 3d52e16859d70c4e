"""The budget clock every learned-path comparison runs on: wall or process-CPU seconds of training, measuring
excluded, with a timer that cuts the step running when the budget ends (so that it never counts).

Examples
--------
>>> clock = Clock(budget=0.05)
>>> with until_budget():   # the budget ends the loop, quietly
...     with clock:
...         while True:
...             pass
>>> clock.wall >= 0.05
True
"""

from __future__ import annotations

import contextlib
import signal
import time

__all__ = ["CLOCKS", "BudgetSpent", "Clock", "until_budget", "from_budget"]


#: The clocks a budget can run on: wall seconds, or the process's CPU seconds.
CLOCKS = ("wall", "cpu")


class BudgetSpent(Exception):
    """The budget's clock ran out (raised by :class:`Clock`'s timer inside the step that was running)."""


def _budget_spent(signum, frame):
    raise BudgetSpent


class Clock:
    """The budget's clock: wall and process-CPU seconds between :meth:`start` and :meth:`stop` (or inside
    ``with clock:``), summed; measuring happens while it is stopped.

    With a ``budget`` (wall seconds; process-CPU seconds with ``clock="cpu"``), :meth:`start` arms a timer
    (``SIGALRM``, or ``SIGPROF`` for CPU time, where the platform has it) for the time left, so the step running
    when the budget ends is cut short by :class:`BudgetSpent` and never counts; starting with nothing left raises
    it at once. The CPU clock makes a run's budget independent of how loaded a shared machine is.

    Examples
    --------
    >>> clock = Clock()
    >>> with clock:
    ...     pass
    >>> clock.wall >= 0.0 and clock.cpu >= 0.0
    True
    >>> clock = Clock(budget=0.05)
    >>> try:
    ...     with clock:
    ...         while True:
    ...             pass
    ... except BudgetSpent:
    ...     print(round(clock.wall, 1))
    0.1
    """

    def __init__(self, budget: float | None = None, clock: str = "wall"):
        if clock not in CLOCKS:
            raise ValueError(f"clock: must be one of {CLOCKS}; got {clock!r}.")
        self.wall, self.cpu, self.budget, self.clock = 0.0, 0.0, budget, clock
        self._timer = budget is not None and hasattr(signal, "setitimer")
        self._signal, self._itimer = ((signal.SIGALRM, signal.ITIMER_REAL) if clock == "wall"
                                      else (signal.SIGPROF, signal.ITIMER_PROF))

    @property
    def spent(self) -> float:
        """Seconds of the budget's clock so far."""
        return self.wall if self.clock == "wall" else self.cpu

    def start(self) -> None:
        if self.budget is not None and self.spent >= self.budget:
            raise BudgetSpent
        self._wall0, self._cpu0 = time.perf_counter(), time.process_time()
        if self._timer:
            signal.signal(self._signal, _budget_spent)
            signal.setitimer(self._itimer, self.budget - self.spent)

    def stop(self) -> None:
        if self._timer:
            signal.setitimer(self._itimer, 0)
        self.wall += time.perf_counter() - self._wall0
        self.cpu += time.process_time() - self._cpu0

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False


@contextlib.contextmanager
def until_budget():
    """Run the block until the budget ends it: :class:`BudgetSpent` raised inside it, also wrapped by a library
    (dm-tree, inside OpenSpiel's replay buffer, raises a ``TypeError`` from it) or an executor, ends it quietly;
    any other exception propagates."""
    try:
        yield
    except Exception as exc:
        if not from_budget(exc):
            raise


def from_budget(exc: BaseException) -> bool:
    """Whether ``exc`` is :class:`BudgetSpent` or was raised from it (an executor wraps a job's exception)."""
    while exc is not None:
        if isinstance(exc, BudgetSpent):
            return True
        exc = exc.__cause__ or exc.__context__
    return False
