"""Match records to win/draw/loss count matrices, shared by the rankers.

A *match-records* table is a :class:`pandas.DataFrame` with one row per match:

``agent_a``, ``agent_b``
    The two agents (any hashable labels).
``score_a``
    agent_a's result: ``1`` win, ``0.5`` draw, ``0`` loss, or a numeric return.
``score_b`` (optional)
    agent_b's result or return.
``seed`` / ``episode`` (optional)
    Ignored here; kept for the user's bookkeeping.

How a score becomes a win, draw or loss (``scores=``):

``"outcome"``
    ``score_a`` must be 1, 0.5 or 0.
``"return"``
    By sign: agent_a wins when ``score_a - score_b > 0``, draws when it is 0 and
    loses otherwise. Without a ``score_b`` column the returns are taken as
    zero-sum and the sign of ``score_a`` decides.
``"auto"`` (default)
    ``"outcome"`` when every ``score_a`` is 0, 0.5 or 1 and (if present)
    ``score_a + score_b == 1`` on every row; ``"return"`` otherwise.

Count matrices follow OpenSpiel's convention: ``wins[i, j]`` is the number of
matches ``i`` won against ``j`` and ``draws[i, j] == draws[j, i]`` the number of
draws between them. Diagonals (self-play) are ignored by the rankers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

__all__ = [
    "REQUIRED_COLUMNS",
    "MatchCounts",
    "MatchOutcomes",
    "as_match_counts",
    "count_matrices",
    "counts_from_matrices",
    "match_outcomes",
]

REQUIRED_COLUMNS = ("agent_a", "agent_b", "score_a")
ScoreKind = Literal["auto", "outcome", "return"]


@dataclass(frozen=True)
class MatchOutcomes:
    """Matches as integer agent indices and agent_a's result (1, 0.5 or 0), in row order."""

    agents: tuple
    index_a: np.ndarray
    index_b: np.ndarray
    outcome_a: np.ndarray


@dataclass(frozen=True)
class MatchCounts:
    """Win and draw counts between agents.

    Attributes
    ----------
    agents : tuple
        Agent labels; row/column ``i`` of the matrices is ``agents[i]``.
    wins : ndarray, shape (n, n)
        ``wins[i, j]``: matches ``i`` won against ``j``.
    draws : ndarray, shape (n, n)
        Symmetric; ``draws[i, j]``: draws between ``i`` and ``j``.
    """

    agents: tuple
    wins: np.ndarray
    draws: np.ndarray

    @property
    def num_agents(self) -> int:
        """Number of agents."""
        return len(self.agents)

    def scores(self) -> np.ndarray:
        """``wins + draws / 2``: the points ``i`` scored against ``j``."""
        return self.wins + 0.5 * self.draws

    def games(self) -> np.ndarray:
        """Symmetric matrix of the number of matches between ``i`` and ``j``."""
        return self.wins + self.wins.T + self.draws


def _check_frame(matches: pd.DataFrame, argname: str) -> None:
    if not isinstance(matches, pd.DataFrame):
        raise TypeError(
            f"{argname} must be a pandas DataFrame of match records with columns "
            f"{list(REQUIRED_COLUMNS)}; got {type(matches).__name__}."
        )
    for col in REQUIRED_COLUMNS:
        if col not in matches.columns:
            raise ValueError(
                f"{argname} has no {col!r} column (columns: {list(matches.columns)}). A match-records "
                "table needs one row per match with agent_a, agent_b and score_a (1 win, 0.5 draw, "
                "0 loss for agent_a, or a numeric return)."
            )
    for col in ("agent_a", "agent_b"):
        if matches[col].isna().any():
            row = int(np.flatnonzero(matches[col].isna().to_numpy())[0])
            raise ValueError(f"{argname}[{col!r}] is missing at row {row}; every match needs two agents.")


def _numeric_column(matches: pd.DataFrame, col: str, argname: str) -> np.ndarray:
    try:
        values = pd.to_numeric(matches[col]).to_numpy(dtype=np.float64)
    except (ValueError, TypeError):
        raise ValueError(f"{argname}[{col!r}] must hold numbers (1 win, 0.5 draw, 0 loss, or returns).") from None
    if not np.all(np.isfinite(values)):
        row = int(np.flatnonzero(~np.isfinite(values))[0])
        raise ValueError(
            f"{argname}[{col!r}] has a NaN or inf at row {row}; drop or fill unfinished matches first."
        )
    return values


def match_outcomes(matches: pd.DataFrame, scores: ScoreKind = "auto", agents: Sequence | None = None,
                   argname: str = "matches") -> MatchOutcomes:
    """Validate a match-records table and read every match as a win, draw or loss.

    Parameters
    ----------
    matches : DataFrame
        One row per match (see the module docstring).
    scores : {"auto", "outcome", "return"}
        How ``score_a`` (and ``score_b``) become results; see the module docstring.
    agents : sequence, optional
        Agent order (may include agents with no match). Defaults to the order of
        first appearance.

    Returns
    -------
    MatchOutcomes

    Examples
    --------
    >>> df = pd.DataFrame({"agent_a": ["x", "y"], "agent_b": ["y", "z"], "score_a": [3.0, -1.0]})
    >>> m = match_outcomes(df)
    >>> m.agents, m.outcome_a.tolist()
    (('x', 'y', 'z'), [1.0, 0.0])
    """
    _check_frame(matches, argname)
    if scores not in ("auto", "outcome", "return"):
        raise ValueError(f"scores must be 'auto', 'outcome' or 'return'; got {scores!r}.")
    score_a = _numeric_column(matches, "score_a", argname)
    score_b = _numeric_column(matches, "score_b", argname) if "score_b" in matches.columns else None
    is_outcome = np.isin(score_a, (0.0, 0.5, 1.0))
    if scores == "auto":
        consistent = score_b is None or bool(np.all(np.abs(score_a + score_b - 1.0) < 1e-12))
        scores = "outcome" if bool(is_outcome.all()) and consistent else "return"
    if scores == "outcome":
        if not is_outcome.all():
            row = int(np.flatnonzero(~is_outcome)[0])
            raise ValueError(
                f"{argname}['score_a'] = {score_a[row]} at row {row} is not 1 (win), 0.5 (draw) or 0 (loss); "
                "pass scores='return' to convert returns to results by sign."
            )
        outcome = score_a
    else:
        diff = score_a if score_b is None else score_a - score_b
        outcome = 0.5 * (1.0 + np.sign(diff))

    a = matches["agent_a"].to_numpy()
    b = matches["agent_b"].to_numpy()
    if agents is None:
        labels = pd.unique(np.column_stack([a, b]).ravel()) if len(a) else np.array([])
        agents = tuple(labels.tolist())
    else:
        agents = tuple(agents)
        if len(set(agents)) != len(agents):
            raise ValueError("agents lists an agent twice; give each agent once.")
    lookup = pd.Index(agents)
    ia = lookup.get_indexer(a)
    ib = lookup.get_indexer(b)
    if (ia < 0).any() or (ib < 0).any():
        unknown = sorted({str(x) for x in np.concatenate([a[ia < 0], b[ib < 0]])})
        raise ValueError(f"{argname} names agents missing from agents=: {unknown[:5]}. Add them to agents.")
    return MatchOutcomes(agents=agents, index_a=ia, index_b=ib, outcome_a=np.asarray(outcome, dtype=np.float64))


def count_matrices(matches: pd.DataFrame, scores: ScoreKind = "auto", agents: Sequence | None = None,
                   argname: str = "matches") -> MatchCounts:
    """Win and draw count matrices of a match-records table.

    Examples
    --------
    >>> df = pd.DataFrame({"agent_a": ["a", "a", "b"], "agent_b": ["b", "b", "a"],
    ...                    "score_a": [1, 0.5, 1]})
    >>> c = count_matrices(df)
    >>> c.wins.tolist(), c.draws.tolist()
    ([[0.0, 1.0], [1.0, 0.0]], [[0.0, 1.0], [1.0, 0.0]])
    """
    m = match_outcomes(matches, scores=scores, agents=agents, argname=argname)
    n = len(m.agents)
    ia, ib, s = m.index_a, m.index_b, m.outcome_a
    wins = np.zeros((n, n))
    draws = np.zeros((n, n))
    np.add.at(wins, (ia[s == 1.0], ib[s == 1.0]), 1.0)
    np.add.at(wins, (ib[s == 0.0], ia[s == 0.0]), 1.0)
    d = s == 0.5
    np.add.at(draws, (ia[d], ib[d]), 1.0)
    np.add.at(draws, (ib[d], ia[d]), 1.0)
    draws[np.diag_indices(n)] /= 2.0  # a self-draw was counted twice above
    return MatchCounts(agents=m.agents, wins=wins, draws=draws)


def _check_count_matrix(x, argname: str, shape=None) -> np.ndarray:
    try:
        arr = np.array(x, dtype=np.float64)
    except (ValueError, TypeError):
        raise ValueError(f"{argname} must be a square matrix of match counts.") from None
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise ValueError(f"{argname} must be a square (n, n) matrix of counts; got shape {arr.shape}.")
    if shape is not None and arr.shape != shape:
        raise ValueError(f"{argname} has shape {arr.shape} but the win matrix has shape {shape}.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{argname} contains NaN or inf; counts must be finite numbers of matches.")
    if arr.min() < 0:
        i, j = np.unravel_index(np.argmin(arr), arr.shape)
        raise ValueError(f"{argname}[{i}, {j}] = {arr[i, j]} is negative; counts of matches must be >= 0.")
    return arr


def counts_from_matrices(wins, draws=None, agents: Sequence | None = None) -> MatchCounts:
    """Validate a win matrix and an optional symmetric draw matrix.

    Parameters
    ----------
    wins : array_like, shape (n, n)
        ``wins[i, j]``: matches ``i`` won against ``j`` (non-negative, may be fractional).
    draws : array_like, shape (n, n), optional
        Symmetric; ``draws[i, j]``: draws between ``i`` and ``j``.
    agents : sequence, optional
        Labels, default ``0, ..., n-1``.

    Examples
    --------
    >>> counts_from_matrices([[0, 2], [1, 0]]).games().tolist()
    [[0.0, 3.0], [3.0, 0.0]]
    """
    w = _check_count_matrix(wins, "win_matrix")
    d = np.zeros_like(w) if draws is None else _check_count_matrix(draws, "draws", w.shape)
    if not np.allclose(d, d.T, rtol=0, atol=1e-12):
        raise ValueError(
            "draws must be symmetric: draws[i, j] counts the draws between i and j once, so it "
            "equals draws[j, i]. Use draws + draws.T if you stored each draw on one side only."
        )
    n = w.shape[0]
    agents = tuple(range(n)) if agents is None else tuple(agents)
    if len(agents) != n:
        raise ValueError(f"agents has {len(agents)} labels but the matrices have {n} rows.")
    return MatchCounts(agents=agents, wins=w, draws=d)


def _game_scores(game, games_per_pair: float) -> tuple:
    """``(game, count, s_row, s_col)`` of a two-player game: its profiles' match counts and the expected points
    of the row and the column strategy at each profile (win probabilities, or zero-sum returns in [-1, 1] read as
    ``(1 + U) / 2``); ``game`` is an EmpiricalGame's mean game."""
    from games.normal_form import NormalFormGame

    if isinstance(game, NormalFormGame):
        payoffs = game.payoffs
        count = np.full(game.shape, float(games_per_pair)) if game.num_players == 2 else None
    else:  # EmpiricalGame: per-profile sample counts
        count = np.asarray(game.count[0], dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            payoffs = np.nan_to_num(game.mean(), nan=0.0)
        game = NormalFormGame(payoffs, player_names=tuple(game.player_names),
                              strategy_names=tuple(tuple(s) for s in game.strategy_names))
    if payoffs.shape[0] != 2 or payoffs.ndim != 3:
        raise ValueError(f"game must be a two-player game; got payoffs of shape {payoffs.shape}.")
    total = payoffs[0] + payoffs[1]
    evaluated = count > 0
    if np.allclose(total[evaluated], 1.0, atol=1e-9) and payoffs.min() >= -1e-12 and payoffs.max() <= 1 + 1e-12:
        s_row, s_col = payoffs[0], payoffs[1]  # win probabilities / expected scores
    elif np.allclose(total[evaluated], 0.0, atol=1e-9) and np.abs(payoffs).max() <= 1 + 1e-12:
        s_row, s_col = 0.5 * (1.0 + payoffs[0]), 0.5 * (1.0 + payoffs[1])  # returns in [-1, 1]
    else:
        raise ValueError(
            "game payoffs must be win probabilities (the two players' payoffs sum to 1, entries in "
            "[0, 1]) or zero-sum returns in [-1, 1] (win 1, draw 0, loss -1); rescale them first."
        )
    return game, count, np.clip(s_row, 0, 1), np.clip(s_col, 0, 1)


def _game_score_matrix(game, games_per_pair: float, single_population: bool | None = None) -> tuple:
    """Points each agent scored against each other in a two-player game.

    One population (``single_population=True``, or ``None`` for a symmetric game): the agents are the
    strategies, and ``W[i, j]`` = expected points of ``i`` against ``j`` summed over the profiles ``(i, j)`` and
    ``(j, i)``, half the matches at each (an EmpiricalGame: weighted by its counts). Two populations (``False``):
    the agents are ``(player, strategy)`` pairs, and only the cross pairs meet. ``None`` on a game that is not
    symmetric raises ``ValueError``: which it is cannot be told from the payoffs.
    """
    sampled = not hasattr(game, "payoffs")   # (an EmpiricalGame: its counts are per profile)
    game, count, s_row, s_col = _game_scores(game, games_per_pair)
    square = game.shape[0] == game.shape[1]
    if single_population is None:
        scale = max(1.0, float(np.abs(game.payoffs).max(initial=0.0)))
        if not (square and np.allclose(game.payoffs[1], game.payoffs[0].T, rtol=0.0, atol=1e-9 * scale)):
            raise ValueError(
                f"single_population: this {game.shape[0]}x{game.shape[1]} two-player game is not symmetric "
                "(payoffs[1] != payoffs[0].T), so its strategies may be one population seen from both seats "
                "(a noisy symmetric meta-game) or two populations; pass single_population=False to rate every "
                "strategy of each player (only the cross pairs meet), or True to rate one population."
            )
        single_population = True
    if single_population:
        if not square:
            raise ValueError(
                f"single_population=True needs a two-player game between the same agents (square); got shape "
                f"{game.shape}. Pass single_population=False to rate each player's strategies."
            )
        if not sampled:
            count = count * 0.5   # (a game's matches per pair, half in each seating)
        w = count * s_row + (count * s_col).T
        np.fill_diagonal(w, 0.0)
        return game.strategy_names[0], w
    k0, k1 = game.shape
    names = [(game.player_names[0], s) for s in game.strategy_names[0]]
    names += [(game.player_names[1], s) for s in game.strategy_names[1]]
    w = np.zeros((k0 + k1, k0 + k1))
    w[:k0, k0:] = count * s_row
    w[k0:, :k0] = (count * s_col).T
    return tuple(names), w


def as_match_counts(data, draws=None, scores: ScoreKind = "auto", agents: Sequence | None = None,
                    games_per_pair: float = 1.0, argname: str = "matches",
                    single_population: bool | None = None) -> MatchCounts:
    """Coerce match records, a win matrix (with draws) or a symmetric game into :class:`MatchCounts`.

    A two-player ``NormalFormGame`` between the same agents, of win probabilities
    (payoffs summing to 1) or zero-sum returns ``U`` in [-1, 1] (read as the
    expected score ``(1 + U) / 2``), gives fractional counts: ``games_per_pair``
    matches per pair, half at each of the profiles ``(i, j)`` and ``(j, i)``, and
    ``wins[i, j]`` is the points ``i`` scored. An ``EmpiricalGame`` uses its
    per-profile sample counts instead of ``games_per_pair``. ``single_population``
    says whether a two-player game is one population (the same agents in both
    seats) or two (agents ``(player, strategy)``, ``games_per_pair`` matches per
    cross pair); ``None`` takes a symmetric game as one population and refuses
    any other game.

    Examples
    --------
    >>> from games import NormalFormGame
    >>> g = NormalFormGame.from_bimatrix([[0.5, 0.75], [0.25, 0.5]], [[0.5, 0.25], [0.75, 0.5]])
    >>> as_match_counts(g, games_per_pair=4).wins.tolist()
    [[0.0, 3.0], [1.0, 0.0]]
    >>> two = as_match_counts(NormalFormGame.from_bimatrix([[0.5, 0.75]], [[0.5, 0.25]]), single_population=False)
    >>> two.agents, two.wins.tolist()
    ((('p0', 's0'), ('p1', 's0'), ('p1', 's1')), [[0.0, 0.5, 0.75], [0.5, 0.0, 0.0], [0.25, 0.0, 0.0]])
    """
    if single_population not in (None, True, False):
        raise TypeError(f"single_population must be None, True or False; got {single_population!r}.")
    if isinstance(data, MatchCounts):
        return data
    if isinstance(data, pd.DataFrame):
        if draws is not None:
            raise ValueError("draws is only for a win matrix; match records carry their draws in score_a.")
        return count_matrices(data, scores=scores, agents=agents, argname=argname)
    if hasattr(data, "payoffs") or hasattr(data, "mean_game"):
        if not games_per_pair > 0:
            raise ValueError(f"games_per_pair must be > 0; got {games_per_pair}.")
        names, w = _game_score_matrix(data, games_per_pair, single_population)
        return MatchCounts(agents=tuple(names) if agents is None else tuple(agents), wins=w,
                           draws=np.zeros_like(w))
    if isinstance(data, (np.ndarray, list, tuple)):
        return counts_from_matrices(data, draws, agents=agents)
    raise TypeError(
        f"{argname} must be a match-records DataFrame, a win matrix, or a symmetric two-player game; "
        f"got {type(data).__name__}."
    )
