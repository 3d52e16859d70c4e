"""The live repeated rock-paper-scissors (RRPS) bot tournament.

Plays OpenSpiel's 43 RoShamBo competition bots against each other with
``pyspiel.evaluate_bots`` on ``repeated_game(stage_game=matrix_rps(),
num_repetitions=1000)``, through an :mod:`games.executors` executor, and returns
one record per match plus the :class:`~games.EmpiricalGame` of mean returns.

Determinism. The bots draw their random numbers from the C library's global
``random()``; ``evaluate_bots``' seed only drives chance nodes (RRPS has none).
So before every match the worker reseeds that generator with ``srandom(seed)``
(via ``ctypes``), where ``seed`` is the match's own seed from
``SeedSequence(seed).generate_state(num_matches)``. A match's result then
depends on nothing but its bots and its seed: not on the engine, the number of
workers or how matches are grouped into tasks. ``evaluate_bots`` restarts the
bots at the start of each match, so a task builds each bot once and reuses it
(the tests check that reuse gives the same results as fresh bots).

Cost. Nearly all the time is spent inside ``evaluate_bots``: the loop around it
adds about 1% (``experiments/benchmarks/rrps_tournament.py`` compares it with
``evaluate_bots`` alone). A match of two trivial bots costs about 2.6 ms, mostly
because pyspiel's RoShamBo wrapper copies the whole state history at every throw
(0.35 ms at 250 throws, 2.6 ms at 1000, 6.8 ms at 2000); ``greenberg`` alone
costs about 55 ms a match. The full tournament is about 120 CPU-seconds played
serially (6.5 ms a match on average; 125 CPU-seconds on two workers, which share
the machine's caches), so two cores need about a minute.

Command line (the full tournament, 18,490 matches with 10 per ordered pair)::

    python -m games.roshambo --matches 10 --workers 2
"""

from __future__ import annotations

import argparse
import ctypes
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from games.empirical import EmpiricalGame
from games.executors import Executor, make_executor
from games.validation import check_int

__all__ = [
    "PublishedComparison",
    "TournamentResult",
    "bot_names",
    "compare_with_published",
    "play_match",
    "play_tournament",
]

logger = logging.getLogger(__name__)

GAME_STRING = "repeated_game(stage_game=matrix_rps(),num_repetitions={throws})"
_SRANDOM = None


def _c_srandom():
    """The C library's ``srandom``, bound once per process (``srandom(seed)`` costs ~0.3 us after that)."""
    global _SRANDOM
    if _SRANDOM is None:
        fn = ctypes.CDLL(None).srandom
        fn.argtypes = [ctypes.c_uint]
        fn.restype = None
        _SRANDOM = fn
    return _SRANDOM


def bot_names() -> list:
    """Names of the RoShamBo bots available in ``pyspiel``, sorted.

    Examples
    --------
    >>> names = bot_names()
    >>> len(names), names[0]
    (43, 'actr_lag2_decay')
    """
    import pyspiel

    return sorted(pyspiel.roshambo_bot_names())


def play_match(bot_a: str, bot_b: str, seed: int, num_throws: int = 1000) -> tuple:
    """Play one match of ``num_throws`` throws; return ``(score_a, score_b)``.

    Examples
    --------
    >>> play_match("rotatebot", "rockbot", seed=0, num_throws=11)   # R P S ... : +1 per cycle of 3, then R, P
    (1.0, -1.0)
    """
    scores = _play_chunk(([(bot_a, bot_b)], np.array([[int(seed)]], dtype=np.uint32), int(num_throws)))["scores"]
    return float(scores[0, 0]), float(scores[0, 1])


def _play_chunk(task) -> dict:
    """Worker: play every match of a chunk of ordered pairs, building each bot once.

    ``task = (pairs, seeds, num_throws)``; ``seeds`` is a ``uint32`` array of shape
    ``(len(pairs), matches)`` with the match seeds of each pair. Returns
    ``{"scores": int32 array (num_matches, 2) in pair-major order, "cpu_seconds": float}``:
    a compact array, cheap to send back from a worker process.

    The loop does no more than pyspiel's own per-match work: bots are built once
    per chunk (``evaluate_bots`` restarts them), ``srandom`` is bound once, and
    the scores go straight into a preallocated array.
    """
    import pyspiel

    pairs, seeds, num_throws = task
    seeds = np.asarray(seeds, dtype=np.uint32)
    game = pyspiel.load_game(GAME_STRING.format(throws=num_throws))
    new_state = game.new_initial_state
    evaluate = pyspiel.evaluate_bots
    srandom = _c_srandom()
    bots: dict = {}

    def bot(player: int, name: str):
        key = (player, name)
        if key not in bots:
            bots[key] = pyspiel.make_roshambo_bot(player, name, num_throws)
        return bots[key]

    scores = np.empty((seeds.size, 2), dtype=np.int32)
    cpu = time.process_time()
    row = 0
    for (a, b), pair_seeds in zip(pairs, seeds.tolist()):
        players = [bot(0, a), bot(1, b)]
        for s in pair_seeds:
            srandom(s)
            scores[row] = evaluate(new_state(), players, s & 0x7FFFFFFF)
            row += 1
    return {"scores": scores, "cpu_seconds": time.process_time() - cpu}


@dataclass(frozen=True)
class TournamentResult:
    """Match records and the empirical game of a tournament.

    Attributes
    ----------
    matches : pandas.DataFrame
        One row per match: ``agent_a``, ``agent_b`` (player 0 and 1), ``score_a``,
        ``score_b`` (returns over the match) and ``seed``.
    empirical_game : EmpiricalGame
        Shape ``(num_bots, num_bots)``; profile ``(i, j)`` holds the returns of
        bot ``i`` (as player 0) against bot ``j``.
    bots : tuple of str
    info : dict
        ``seconds`` (wall time), ``cpu_seconds`` (CPU time of the match-playing
        tasks, summed over workers), ``workers``, ``num_throws``.
    """

    matches: pd.DataFrame
    empirical_game: EmpiricalGame
    bots: tuple
    info: dict = field(default_factory=dict)

    def cross_table(self) -> pd.DataFrame:
        """Mean return of the row bot against the column bot.

        Examples
        --------
        >>> r = play_tournament(["rockbot", "rotatebot"], matches=1, num_throws=11, progress=False)
        >>> float(r.cross_table().loc["rotatebot", "rockbot"])
        1.0
        """
        mean = self.empirical_game.mean()[0]
        return pd.DataFrame(mean, index=list(self.bots), columns=list(self.bots))


def play_tournament(
    bots: Sequence[str] | None = None,
    matches: int = 10,
    *,
    num_throws: int = 1000,
    seed: int = 0,
    executor: Executor | str | int | None = None,
    progress: bool = True,
    matches_per_task: int = 50,
) -> TournamentResult:
    """Play ``matches`` matches for every ordered pair of bots (self-play included).

    Parameters
    ----------
    bots : sequence of str, optional
        Bot names (default: all of :func:`bot_names`).
    matches : int
        Matches per ordered pair.
    num_throws : int
        Throws per match.
    seed : int
        Root seed; match ``m`` gets ``SeedSequence(seed).generate_state(total)[m]``.
    executor : Executor, "serial", "process" or int, optional
        Where to play (default: serial in this process).
    progress : bool
        Show a progress bar over tasks.
    matches_per_task : int
        Approximate matches per task sent to a worker. Bot creation and IPC cost
        well under 1% of a 50-match task, and small tasks keep the workers evenly
        loaded at the end (a match costs 3-60 ms depending on the bots).

    Returns
    -------
    TournamentResult

    Examples
    --------
    >>> r = play_tournament(["rockbot", "rotatebot"], matches=2, num_throws=11, progress=False)
    >>> len(r.matches), r.matches["score_a"].tolist()
    (8, [0.0, 0.0, -1.0, -1.0, 1.0, 1.0, 0.0, 0.0])
    """
    names = bot_names()
    bots = list(names if bots is None else bots)
    unknown = [b for b in bots if b not in names]
    if unknown:
        raise ValueError(f"unknown RoShamBo bots {unknown}; choose from games.roshambo.bot_names().")
    if len(set(bots)) != len(bots) or not bots:
        raise ValueError("bots must be a non-empty list of distinct bot names.")
    for arg, value in (("matches", matches), ("num_throws", num_throws), ("matches_per_task", matches_per_task)):
        check_int(value, arg, minimum=1)
    k = len(bots)
    pairs = [(a, b) for a in bots for b in bots]
    seeds = np.random.SeedSequence(seed).generate_state(len(pairs) * matches).reshape(len(pairs), matches)
    per_task = max(1, matches_per_task // matches)
    tasks = [
        (pairs[i : i + per_task], seeds[i : i + per_task], int(num_throws))
        for i in range(0, len(pairs), per_task)
    ]
    ex = make_executor(executor)
    start = time.perf_counter()
    results = ex.map(_play_chunk, tasks, progress=progress, desc="RRPS matches", chunksize=1)
    seconds = time.perf_counter() - start
    scores = np.concatenate([chunk["scores"] for chunk in results]).astype(float)
    cpu_seconds = float(sum(chunk["cpu_seconds"] for chunk in results))
    idx = np.arange(k * k).repeat(matches)
    a_idx, b_idx = np.divmod(idx, k)
    records = pd.DataFrame(
        {
            "agent_a": np.asarray(bots, dtype=object)[a_idx],
            "agent_b": np.asarray(bots, dtype=object)[b_idx],
            "score_a": scores[:, 0],
            "score_b": scores[:, 1],
            "seed": seeds.ravel().astype(np.int64),
        }
    )
    eg = EmpiricalGame((k, k), player_names=("player_0", "player_1"), strategy_names=[bots, bots])
    for p in range(2):
        eg.count[p] = np.bincount(idx, minlength=k * k).reshape(k, k)
        eg.total[p] = np.bincount(idx, weights=scores[:, p], minlength=k * k).reshape(k, k)
        eg.total_sq[p] = np.bincount(idx, weights=scores[:, p] ** 2, minlength=k * k).reshape(k, k)
    logger.info("played %d matches in %.1f s", len(records), seconds)
    return TournamentResult(
        records, eg, tuple(bots),
        {"seconds": seconds, "cpu_seconds": cpu_seconds, "workers": ex.workers, "num_throws": num_throws},
    )


@dataclass(frozen=True)
class PublishedComparison:
    """How a live cross-table compares with the published one (Lanctot et al. 2023).

    Attributes
    ----------
    table : pandas.DataFrame
        Per ordered pair: ``row_bot``, ``col_bot``, ``ours`` (mean), ``se`` (its
        standard error), ``published`` and ``z = (ours - published) / se`` (NaN
        where ``se == 0``, i.e. every match had the same result).
    fraction_within_3se : float
        Among pairs with ``se > 0``, the fraction with ``|z| <= 3``.
    max_abs_z : float
    correlation : float
        Pearson correlation of ours and published over all pairs.
    deterministic_pairs, deterministic_equal : int
        Pairs with ``se == 0``, and how many of them equal the published value
        within 1 (the published means average 1000 matches).
    """

    table: pd.DataFrame
    fraction_within_3se: float
    max_abs_z: float
    correlation: float
    deterministic_pairs: int
    deterministic_equal: int


def compare_with_published(result: TournamentResult, published: pd.DataFrame | None = None) -> PublishedComparison:
    """Compare a tournament's cross-table with the published one, pair by pair.

    Examples
    --------
    >>> r = play_tournament(["rockbot", "rotatebot"], matches=2, progress=False)
    >>> c = compare_with_published(r)
    >>> c.deterministic_pairs == c.deterministic_equal == 4
    True
    """
    from games.datasets import load_rrps_table

    published = load_rrps_table() if published is None else published
    eg = result.empirical_game
    k = len(result.bots)
    ours = pd.DataFrame(
        {
            "row_bot": np.repeat(result.bots, k),
            "col_bot": np.tile(result.bots, k),
            "ours": eg.mean()[0].ravel(),
            "se": np.nan_to_num(eg.standard_error()[0].ravel(), nan=0.0),
        }
    )
    table = ours.merge(published.rename(columns={"value": "published"}), on=["row_bot", "col_bot"], how="inner")
    if len(table) < len(ours):
        raise ValueError(f"the published table lacks {len(ours) - len(table)} of the tournament's pairs.")
    diff = table["ours"] - table["published"]
    with np.errstate(divide="ignore", invalid="ignore"):
        table["z"] = np.where(table["se"] > 0, diff / table["se"], np.nan)
    noisy = table["se"] > 0
    z = table.loc[noisy, "z"].abs()
    varies = len(table) > 1 and table["ours"].std() > 0 and table["published"].std() > 0
    corr = float(np.corrcoef(table["ours"], table["published"])[0, 1]) if varies else float("nan")
    return PublishedComparison(
        table=table,
        fraction_within_3se=float((z <= 3).mean()) if len(z) else float("nan"),
        max_abs_z=float(z.max()) if len(z) else float("nan"),
        correlation=corr,
        deterministic_pairs=int((~noisy).sum()),
        deterministic_equal=int((diff[~noisy].abs() <= 1.0).sum()),
    )


def main(argv=None) -> int:
    """Command line: play the tournament and compare it with the published cross-table."""
    parser = argparse.ArgumentParser(prog="python -m games.roshambo", description=main.__doc__)
    parser.add_argument("--matches", type=int, default=10, help="matches per ordered pair")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (1 = serial)")
    parser.add_argument("--bots", type=int, default=None, help="use only the first N bots (alphabetical)")
    parser.add_argument("--throws", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="write the match records to this CSV file")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    bots = bot_names()[: args.bots] if args.bots else None
    start = time.perf_counter()
    with make_executor(args.workers) as ex:
        result = play_tournament(
            bots, args.matches, num_throws=args.throws, seed=args.seed, executor=ex, progress=not args.no_progress
        )
    wall = time.perf_counter() - start
    if args.out:
        result.matches.to_csv(args.out, index=False)
    lines = [
        (
            f"{len(result.matches)} matches of {args.throws} throws, {args.workers} worker(s): {wall:.1f} s wall "
            f"(tasks used {result.info['cpu_seconds']:.1f} CPU-seconds in all, "
            f"{1e3 * result.info['cpu_seconds'] / len(result.matches):.2f} ms per match)"
        )
    ]
    if args.throws == 1000:
        c = compare_with_published(result)
        lines.append(
            f"vs published cross-table: {100 * c.fraction_within_3se:.1f}% of {len(c.table) - c.deterministic_pairs} "
            f"noisy pairs within 3 SE, max |z| = {c.max_abs_z:.1f}, correlation = {c.correlation:.4f}, "
            f"deterministic pairs equal: {c.deterministic_equal}/{c.deterministic_pairs}"
        )
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
