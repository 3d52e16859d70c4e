"""Datasets of trajectories: the table format, its validation, and CSV / Parquet files.

An offline dataset is a :class:`pandas.DataFrame` with **one row per step** of
play (chance steps included), episodes one after another, steps in order:

=================  =========  =====================================================================
column             dtype      meaning
=================  =========  =====================================================================
``episode``        int64      the episode's id (rows of one episode are contiguous)
``step``           int64      0, 1, 2, ... within the episode
``player``         int64      the actor: 0, 1, ... or -1 for a chance step
``infostate``      str        the actor's OpenSpiel information-state string; ``""`` on chance rows
``history``        str        the world state's action history before the step, e.g. ``"0 1 2"``
                              (``""`` at the root); a tabular model rebuilds the tree from it
``legal_actions``  str        the actor's legal actions (chance: the possible outcomes),
                              space-separated ints, e.g. ``"0 1"``
``action``         int64      the action taken (or the chance outcome drawn)
``reward``         str        the per-player reward vector received after the step, space-separated
                              floats (one per player, e.g. ``"0.0 0.0"``); an episode's return is
                              the sum of its rows' rewards
``done``           bool       True on the episode's last row only (the state after it is terminal)
=================  =========  =====================================================================

The reward is one string column (rather than ``reward_0``, ``reward_1``, ...)
so that the same schema holds for any number of players. Other columns may be
present (``games.datasets.collect`` adds ``behaviour_prob``, the probability
the behaviour policy gave the action, NaN on chance rows, and ``component``,
the mixture component of the episode); validation ignores them.

:func:`validate_trajectories` refuses a malformed table with a ``ValueError``
naming the first bad row and its column. :func:`save_trajectories` and
:func:`load_trajectories` write and read CSV (always) and Parquet (when
``pyarrow`` is installed); loading validates.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from games.memory_limit import check_file

__all__ = [
    "COLUMNS",
    "Episode",
    "episodes",
    "load_trajectories",
    "parse_ints",
    "parse_floats",
    "save_trajectories",
    "validate_trajectories",
]

#: The required columns, in the order :func:`games.datasets.collect` writes them.
COLUMNS: tuple[str, ...] = (
    "episode", "step", "player", "infostate", "history", "legal_actions", "action", "reward", "done",
)
_INT_COLUMNS = ("episode", "step", "player", "action")
_STR_COLUMNS = ("infostate", "history", "legal_actions", "reward")


def parse_ints(text: str) -> tuple[int, ...]:
    """The ints of a space-separated string (``""`` gives ``()``).

    Examples
    --------
    >>> parse_ints("0 1 2"), parse_ints("")
    ((0, 1, 2), ())
    """
    return tuple(int(t) for t in text.split())


def parse_floats(text: str) -> np.ndarray:
    """The floats of a space-separated string, as a float64 array.

    Examples
    --------
    >>> parse_floats("1.5 -1.5").tolist()
    [1.5, -1.5]
    """
    return np.array([float(t) for t in text.split()], dtype=np.float64)


def _bad(row, column: str, message: str) -> ValueError:
    where = "" if row is None else f"row {row}, "
    return ValueError(f"trajectory table: {where}column {column!r}: {message}")


def validate_trajectories(df: pd.DataFrame) -> pd.DataFrame:
    """Check a trajectory table and return it (unchanged) if it is well formed.

    Checks, in order: every column of :data:`COLUMNS` is present; the integer
    columns hold integers, ``done`` booleans, the string columns strings;
    rows of an episode are contiguous with steps ``0, 1, 2, ...``; each
    row's ``history`` is the previous row's history plus its action; chance
    rows have player -1 and an empty infostate; every ``action`` is one of
    its row's ``legal_actions``; every ``reward`` has one float per player;
    ``done`` is True on the last row of each episode and only there.

    Parameters
    ----------
    df : pandas.DataFrame
        The table (row labels are ignored: "row r" in messages is the r-th
        row, counting from 0).

    Returns
    -------
    pandas.DataFrame
        ``df`` itself.

    Raises
    ------
    ValueError
        Naming the first bad row and its column, e.g. ``row 3, column
        'action': 2 is not one of the legal actions (0, 1)``.

    Examples
    --------
    >>> ok = pd.DataFrame({"episode": [0, 0], "step": [0, 1], "player": [-1, 0],
    ...     "infostate": ["", "p0:1"], "history": ["", "1"], "legal_actions": ["0 1", "0 1"],
    ...     "action": [1, 0], "reward": ["0 0", "1 -1"], "done": [False, True]})
    >>> validate_trajectories(ok) is ok
    True
    >>> validate_trajectories(ok.assign(done=[False, False]))
    Traceback (most recent call last):
    ...
    ValueError: trajectory table: row 1, column 'done': episode 0 has no done row (its last row needs done=True).
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas.DataFrame of trajectories; got {type(df).__name__}.")
    for column in COLUMNS:
        if column not in df.columns:
            raise _bad(None, column, f"missing (needed on every row, from row 0; the table has {list(df.columns)}).")
    if len(df) == 0:
        raise _bad(None, "episode", "the table has no rows; a dataset needs at least one episode.")
    ints, done, strs = _typed_columns(df)
    episode, step, player, action = (ints[c] for c in _INT_COLUMNS)
    starts = _check_episodes(episode, step, done)
    _check_rows(player, action, starts, strs)
    return df


def _typed_columns(df: pd.DataFrame) -> tuple:
    """``(ints, done, strs)``: the integer columns as int64 arrays, ``done`` and the string columns, each checked."""
    ints = {}
    for column in _INT_COLUMNS:
        values = df[column].to_numpy()
        if values.dtype == bool or values.dtype.kind not in "iuf":
            bad = next((r for r, v in enumerate(values) if not _is_int(v)), 0)
            raise _bad(bad, column, f"expected an integer, got {values[bad]!r} (dtype {df[column].dtype}).")
        if values.dtype.kind == "f":
            wrong = ~np.isfinite(values) | (values != np.round(values))
            if wrong.any():
                bad = int(np.argmax(wrong))
                raise _bad(bad, column, f"expected an integer, got {values[bad]!r}.")
        ints[column] = values.astype(np.int64)
    done = df["done"].to_numpy()
    if done.dtype != bool:
        bad = next((r for r, v in enumerate(done) if not isinstance(v, (bool, np.bool_))), 0)
        raise _bad(bad, "done", f"expected a bool (True on an episode's last row), got {done[bad]!r}.")
    strs = {}
    for column in _STR_COLUMNS:
        values = df[column].to_numpy()
        bad = next((r for r, v in enumerate(values) if not isinstance(v, str)), None)
        if bad is not None:
            raise _bad(bad, column, f"expected a string, got {values[bad]!r}.")
        strs[column] = values
    return ints, done, strs


def _check_episodes(episode: np.ndarray, step: np.ndarray, done: np.ndarray) -> np.ndarray:
    """Check that episodes are contiguous, their steps count from 0 and ``done`` marks their last rows; return
    where each episode starts."""
    n = len(episode)
    starts = np.r_[True, episode[1:] != episode[:-1]]
    first_rows = np.flatnonzero(starts)
    if len(np.unique(episode[first_rows])) != len(first_rows):
        seen: set = set()
        for r in first_rows:
            if episode[r] in seen:
                raise _bad(int(r), "episode", f"episode {episode[r]} resumes after other episodes; "
                                              "keep each episode's rows together.")
            seen.add(episode[r])
    expected_step = np.arange(n) - np.repeat(first_rows, np.diff(np.r_[first_rows, n]))
    wrong = step != expected_step
    if wrong.any():
        r = int(np.argmax(wrong))
        raise _bad(r, "step", f"steps out of order: expected step {expected_step[r]} of episode {episode[r]}, "
                              f"got {step[r]}.")
    ends = np.r_[episode[1:] != episode[:-1], True]
    missing_end = ends & ~done
    early_end = ~ends & done
    if missing_end.any() or early_end.any():
        r = int(np.argmax(missing_end | early_end))
        if missing_end[r]:
            raise _bad(r, "done", f"episode {episode[r]} has no done row (its last row needs done=True).")
        raise _bad(r, "done", f"done=True before the end of episode {episode[r]} (more rows follow).")
    return starts


def _check_rows(player: np.ndarray, action: np.ndarray, starts: np.ndarray, strs: dict) -> None:
    """Check each row: its player, chance rows' empty infostate, its history, legal action and reward."""
    num_players = None
    legal_cache: dict[str, tuple] = {}
    reward_cache: dict[str, int] = {}
    previous: tuple = ()
    infostate, histories, legals, rewards = strs["infostate"], strs["history"], strs["legal_actions"], strs["reward"]
    for r in range(len(player)):
        if player[r] < -1:
            raise _bad(r, "player", f"expected a player id >= 0 or -1 for chance, got {player[r]}.")
        if player[r] == -1 and infostate[r] != "":
            raise _bad(r, "infostate", "a chance row (player -1) must have an empty infostate.")
        history = histories[r]
        try:
            hist = parse_ints(history)
        except ValueError:
            raise _bad(r, "history", f"expected space-separated ints, got {history!r}.") from None
        expected = () if starts[r] else previous + (int(action[r - 1]),)
        if hist != expected:
            raise _bad(r, "history", f"expected {' '.join(map(str, expected))!r} (the previous row's history "
                                     f"plus its action), got {history!r}.")
        previous = hist
        legal = legals[r]
        legal_actions = legal_cache.get(legal)
        if legal_actions is None:
            try:
                legal_actions = legal_cache[legal] = parse_ints(legal)
            except ValueError:
                raise _bad(r, "legal_actions", f"expected space-separated ints, got {legal!r}.") from None
        if action[r] not in legal_actions:
            raise _bad(r, "action", f"{action[r]} is not one of the legal actions {legal_actions}.")
        reward = rewards[r]
        size = reward_cache.get(reward)
        if size is None:
            try:
                values = parse_floats(reward)
            except ValueError:
                raise _bad(r, "reward", f"expected space-separated floats (one per player), got {reward!r}.") from None
            size = reward_cache[reward] = len(values) if np.isfinite(values).all() else -1
        if num_players is None:
            num_players = size
        if size != num_players or num_players <= 0:
            raise _bad(r, "reward", f"expected {num_players if num_players and num_players > 0 else 'one or more'} "
                                    f"finite floats (one per player), got {reward!r}.")
        if player[r] >= num_players:
            raise _bad(r, "player", f"player {player[r]} does not exist in a {num_players}-player reward vector.")




def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


@dataclass(frozen=True)
class Episode:
    """One episode of a validated table, parsed.

    Attributes
    ----------
    episode : int
        Its id.
    histories : tuple of tuple of int
        The action history before each step.
    players : tuple of int
        The actor of each step (-1 chance).
    infostates : tuple of str
        The actor's information state at each step (``""`` for chance).
    legal_actions : tuple of tuple of int
        The legal actions (or chance outcomes) at each step.
    actions : tuple of int
        The action taken at each step.
    returns : numpy.ndarray
        The episode's per-player return (the sum of its rewards).
    """

    episode: int
    histories: tuple
    players: tuple
    infostates: tuple
    legal_actions: tuple
    actions: tuple
    returns: np.ndarray

    @property
    def terminal(self) -> tuple[int, ...]:
        """The terminal history: the last step's history plus its action."""
        return self.histories[-1] + (self.actions[-1],)


def episodes(df: pd.DataFrame) -> list[Episode]:
    """The episodes of a trajectory table (validated first), parsed, in table order.

    Examples
    --------
    >>> df = pd.DataFrame({"episode": [7, 7], "step": [0, 1], "player": [-1, 0],
    ...     "infostate": ["", "p0:1"], "history": ["", "1"], "legal_actions": ["0 1", "0 1"],
    ...     "action": [1, 0], "reward": ["0 0", "1 -1"], "done": [False, True]})
    >>> [e] = episodes(df)
    >>> e.episode, e.terminal, e.returns.tolist()
    (7, (1, 0), [1.0, -1.0])
    """
    validate_trajectories(df)
    episode = df["episode"].to_numpy().astype(np.int64)
    bounds = np.flatnonzero(np.r_[True, episode[1:] != episode[:-1], True])
    player = df["player"].to_numpy().astype(np.int64)
    action = df["action"].to_numpy().astype(np.int64)
    infostate, history, legal, reward = (df[c].to_numpy() for c in _STR_COLUMNS)
    legal_cache: dict[str, tuple] = {}
    reward_cache: dict[str, np.ndarray] = {}

    def legal_of(text: str) -> tuple:
        got = legal_cache.get(text)
        if got is None:
            got = legal_cache[text] = parse_ints(text)
        return got

    def reward_of(text: str) -> np.ndarray:
        got = reward_cache.get(text)
        if got is None:
            got = reward_cache[text] = parse_floats(text)
        return got

    out = []
    players, actions = player.tolist(), action.tolist()
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        acts = tuple(actions[lo:hi])
        out.append(Episode(
            episode=int(episode[lo]),
            histories=tuple(acts[:t] for t in range(hi - lo)),  # validated: each row's history is the prefix
            players=tuple(players[lo:hi]),
            infostates=tuple(str(s) for s in infostate[lo:hi]),
            legal_actions=tuple(legal_of(a) for a in legal[lo:hi]),
            actions=acts,
            returns=np.sum([reward_of(x) for x in reward[lo:hi]], axis=0),
        ))
    return out


def _format(path) -> str:
    suffix = Path(path).suffix.lower()
    if suffix in (".csv", ".parquet", ".pq"):
        return "csv" if suffix == ".csv" else "parquet"
    raise ValueError(f"path must end in .csv or .parquet (the format is read from it); got {str(path)!r}.")


def _need_pyarrow():
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise ImportError(
            "Parquet files need pyarrow, which is not installed: pip install pyarrow, or use a .csv path."
        ) from None


def save_trajectories(df: pd.DataFrame, path) -> Path:
    """Validate ``df`` and write it to ``path`` (``.csv``, or ``.parquet`` with pyarrow installed).

    Examples
    --------
    >>> import tempfile, os
    >>> df = pd.DataFrame({"episode": [0], "step": [0], "player": [0], "infostate": ["p0"],
    ...     "history": [""], "legal_actions": ["0 1"], "action": [1], "reward": ["1 -1"], "done": [True]})
    >>> with tempfile.TemporaryDirectory() as d:
    ...     back = load_trajectories(save_trajectories(df, os.path.join(d, "data.csv")))
    >>> back.equals(df)
    True
    """
    validate_trajectories(df)
    path = Path(path)
    if _format(path) == "parquet":
        _need_pyarrow()
        df.to_parquet(path, index=False)
    else:
        df.to_csv(path, index=False)
    return path


def load_trajectories(path) -> pd.DataFrame:
    """Read a trajectory table from ``.csv`` or ``.parquet`` and validate it.

    Empty strings (the root's history, chance rows' infostates) stay empty
    strings, not NaN. See :func:`save_trajectories` for an example.

    Raises
    ------
    ValueError
        If the table is malformed (naming the row and column), or the suffix is unknown.
    games.memory_limit.MemoryLimitExceeded
        A ``ValueError``: the file is larger than the memory limit (:func:`games.memory_limit.check_file`, the
        check of a checkpoint's files), refused before it is read.
    ImportError
        For a Parquet file without pyarrow installed.
    """
    path = Path(path)
    kind = _format(path)
    if not path.exists():
        raise FileNotFoundError(f"path: no trajectory file at {str(path)!r}; check the path (collect a table "
                                "with games.datasets.collect and write it with save_trajectories).")
    if not path.is_file():
        raise ValueError(f"path: {str(path)!r} is not a regular file; a trajectory table is a .csv or .parquet file.")
    size = path.stat().st_size
    if size == 0:
        raise ValueError(f"path: the trajectory file {str(path)!r} is empty; it needs a header row and one row per "
                         f"step (columns {list(COLUMNS)}).")
    check_file(path, size)   # (before it is read whole: a sparse 20 GB file is refused at once)
    if kind == "parquet":
        _need_pyarrow()
        try:
            df = pd.read_parquet(path)
        except (OSError, ValueError) as err:
            raise ValueError(f"path: {str(path)!r} is not a readable Parquet file ({err}).") from None
    else:
        try:
            header = pd.read_csv(path, nrows=0).columns
            dtypes = {c: str for c in _STR_COLUMNS if c in header}
            df = pd.read_csv(path, dtype=dtypes, keep_default_na=False, na_values={
                c: ["", "nan", "NaN"] for c in header if c not in _STR_COLUMNS and c not in COLUMNS})
        except (UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as err:
            raise ValueError(f"path: {str(path)!r} is not a UTF-8 CSV trajectory table "
                             f"({type(err).__name__}: {str(err)[:120]}).") from None
    return validate_trajectories(df)
