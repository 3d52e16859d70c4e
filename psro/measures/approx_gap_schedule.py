"""When the approximate gap is measured, and how, so that measuring keeps to its share of a run's wall time.

The schedule (:func:`approx_gap_due`: which rows are due), the mode of a due row under ``approx_gap_options``'
``share`` (:func:`approx_gap_mode`: with training, without, or not at all; :func:`share_allows` for the loops that
always train), the seconds measuring took so far (:func:`measured_seconds`) and the episodes a measurement plays
(:func:`expected_episodes`, to price one before the first; :func:`halving_counts`, the race's schedule), and the
warning a run ends with when the share skipped rows the user asked for (:func:`share_skips_warning`). Pure
functions of the history's numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["approx_gap_due", "approx_gap_mode", "measured_seconds", "share_allows", "expected_episodes",
           "halving_counts", "share_skips_warning"]


def approx_gap_due(every, iteration: int, gap: float) -> bool:
    """Whether ``approx_gap_every`` schedules a measurement on row ``iteration`` (the last row of each run call is
    measured whatever this says, unless ``every`` is None).

    ``"auto"``: where the exact ``gap`` is NaN (no tree), at iterations 0, 1, 2, 4, 8, 16, ... (a learning curve
    whose cost grows with the log of the run's length); where the exact gap is measured, never. An int ``k > 0``:
    every ``k`` iterations. 0 or None: never.

    Examples
    --------
    >>> [t for t in range(20) if approx_gap_due("auto", t, float("nan"))]
    [0, 1, 2, 4, 8, 16]
    >>> approx_gap_due("auto", 4, 0.5), [t for t in range(7) if approx_gap_due(3, t, 0.5)]
    (False, [0, 3, 6])
    """
    if every == "auto":
        return math.isnan(gap) and (iteration & (iteration - 1)) == 0
    return every is not None and every > 0 and iteration % every == 0


def approx_gap_mode(train, share, *, spent: float, other: float, trained_cost: float, untrained_cost: float,
                    final: bool):
    """How a due measurement is made so that measuring takes at most ``share`` of the run's wall time: the
    ``final`` row (the last of a run call, the value a reader takes away) always with its training as asked
    (``train``); an earlier row with ``train`` where that fits, else False (no fresh training: the best member and
    the step's own responses, which answer the same meta-strategy) where that fits, else None (not measured).

    ``spent`` is the wall time measurement took so far, ``other`` the rest of the run's wall time so far, and the
    costs are the expected seconds of a measurement with and without training: one fits when
    ``spent + cost <= share * (other + spent + cost)``, where a row before the final one also keeps room for the
    final row's measurement (``trained_cost`` more, ``untrained_cost`` where ``train`` is False). A run too short
    for the final row's fresh responses goes over its share (the loop warns, naming the options): without them the
    final bound of a short run is weak (on the shipped dark hex config 0.56 where fresh responses find 1.38).
    ``share`` None: ``train``, always. It is a wall-clock budget like ``time_limit``: which rows are measured (and
    how) depends on the machine's speed, their values do not.

    Examples
    --------
    >>> approx_gap_mode(True, 0.2, spent=0.0, other=200.0, trained_cost=20.0, untrained_cost=2.0, final=False)
    True
    >>> approx_gap_mode(True, 0.2, spent=8.0, other=150.0, trained_cost=20.0, untrained_cost=2.0, final=False)
    False
    >>> approx_gap_mode(True, 0.2, spent=25.0, other=100.0, trained_cost=20.0, untrained_cost=2.0, final=False)
    >>> approx_gap_mode(True, 0.2, spent=25.0, other=100.0, trained_cost=20.0, untrained_cost=2.0, final=True)
    True
    >>> approx_gap_mode(True, None, spent=25.0, other=1.0, trained_cost=20.0, untrained_cost=2.0, final=False)
    True
    """
    if share is None or final:
        return train
    reserve = untrained_cost if train is False else trained_cost   # (room for the final row)

    def fits(cost: float) -> bool:
        return spent + cost + reserve <= share * (other + spent + cost + reserve)

    if train is not False and fits(trained_cost):
        return train
    if fits(untrained_cost):
        return False
    return None


def share_skips_warning(every, skipped: int, share) -> str | None:
    """The warning a run ends with when ``skipped`` rows that ``approx_gap_every`` scheduled were left unmeasured by
    ``approx_gap_options``' ``share``: only where ``every`` was set to a number (rows the user asked for
    explicitly; the ``"auto"`` schedule's rows are the share's to skip, said at INFO level); else None.

    Examples
    --------
    >>> print(share_skips_warning(1, 3, 0.2))   # doctest: +NORMALIZE_WHITESPACE
    approx_gap: 3 of the rows approx_gap_every=1 asks for were not measured, to keep measuring within
    approx_gap_options' share (0.2) of the run's wall time; set approx_gap_options: {share: null} to measure every
    row it asks for.
    >>> share_skips_warning("auto", 3, 0.2), share_skips_warning(1, 0, 0.2)
    (None, None)
    """
    explicit = isinstance(every, int) and not isinstance(every, bool) and every > 0
    if not explicit or skipped <= 0:
        return None
    rows = "1 of the rows" if skipped == 1 else f"{skipped} of the rows"
    return (f"approx_gap: {rows} approx_gap_every={every} asks for {'was' if skipped == 1 else 'were'} not measured, "
            f"to keep measuring within approx_gap_options' share ({share:g}) of the run's wall time; set "
            "approx_gap_options: {share: null} to measure every row it asks for.")


def measured_seconds(rows: Sequence) -> float:
    """The seconds measuring the approximate gap took in a history's ``rows`` (their ``approx_gap_time``).

    Examples
    --------
    >>> measured_seconds([{"approx_gap_time": 2.0}, {"approx_gap_time": float("nan")}, {}])
    2.0
    """
    return float(sum(r["approx_gap_time"] for r in rows if math.isfinite(r.get("approx_gap_time", math.nan))))


def share_allows(share, rows: Sequence, wall: float, cost: float) -> bool:
    """Whether a due row (not the final one) of a loop that always trains its responses (NFSP, NXDO's restricted
    solution) is measured under ``share``: measuring at ``cost`` seconds (the latest measurement's; 0 before one)
    keeps the history's ``rows`` within ``share`` of the run's ``wall`` time, with room for the final row's
    measurement at the same cost (:func:`approx_gap_mode`).

    Examples
    --------
    >>> rows = [{"approx_gap_time": 5.0}]
    >>> share_allows(0.2, rows, wall=100.0, cost=5.0), share_allows(0.2, rows, wall=30.0, cost=5.0)
    (True, False)
    >>> share_allows(None, rows, wall=30.0, cost=5.0)
    True
    """
    spent = measured_seconds(rows)
    return approx_gap_mode(True, share, spent=spent, other=max(wall - spent, 0.0), trained_cost=cost,
                           untrained_cost=cost, final=False) is True


def expected_episodes(targets: int, arms: int, selection_episodes: int, episodes: int) -> int:
    """The episodes a measurement plays in its first round: per target, the race of its ``arms`` candidates
    (:func:`psro.measures.approximate_gap.successive_halving` with ``selection_episodes``), then ``episodes`` of each
    winner and of the meta-strategy itself (the rounds a ``stderr_target`` adds are not counted).

    Examples
    --------
    >>> expected_episodes(2, 3, 200, 500)   # (2 rounds: 3 arms x 100, then 2 arms x 100 more; 3 x 500 values)
    2500
    >>> expected_episodes(2, 7, 200, 500)   # (3 rounds: 7 x 50, 4 x 50, 2 x 100)
    3000
    """
    alive, played, race = arms, 0, 0
    for count in halving_counts(arms, selection_episodes):
        race += alive * (count - played)
        played, alive = count, math.ceil(alive / 2)
    return targets * (race + episodes) + episodes


def halving_counts(arms: int, episodes: int) -> list:
    """Successive halving's schedule over ``arms`` arms (:func:`psro.measures.approximate_gap.successive_halving`): per
    round ``k`` of ``r = ceil(log2 arms)`` (at least one), the episodes every arm still in has played by its end,
    ``episodes / 2 ** (r - k)`` (at least one).

    Examples
    --------
    >>> halving_counts(7, 200), halving_counts(2, 200), halving_counts(1, 200), halving_counts(0, 200)
    ([50, 100, 200], [200], [200], [])
    """
    rounds = max(1, math.ceil(math.log2(arms))) if arms else 0
    return [max(1, episodes >> (rounds - k)) for k in range(1, rounds + 1)]
