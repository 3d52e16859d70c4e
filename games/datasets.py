"""Loaders for the published meta-games in ``shared/data`` (see its README).

The data directory is found from the ``PSRO_DATA_DIR`` environment variable, or
else as ``../shared/data`` beside the repository (the layout of a checkout).
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import numpy as np
import pandas as pd

from games.normal_form import NormalFormGame

__all__ = ["data_dir", "load_soccer", "load_rrps_table", "rrps_game"]


def data_dir() -> Path:
    """The reference data directory.

    Examples
    --------
    >>> (data_dir() / "soccer" / "soccer.txt").exists()
    True
    """
    env = os.environ.get("PSRO_DATA_DIR")
    candidates = [Path(env)] if env else []
    repo = Path(__file__).resolve().parent.parent
    candidates += [repo.parent / "shared" / "data", repo / "shared" / "data"]
    for c in candidates:
        if c.is_dir():
            return c
    raise FileNotFoundError(
        "reference data not found; set PSRO_DATA_DIR to the folder holding soccer/ and rrps/ "
        f"(looked in: {', '.join(str(c) for c in candidates)})."
    )


def load_soccer(path=None) -> NormalFormGame:
    """The soccer meta-game of Rowland et al. (2019): 10 agents, ``P[i, j]`` = P(i beats j).

    Returned as a symmetric constant-sum two-player game whose row payoffs are
    the win probabilities ``P`` and column payoffs ``P.T`` (``P + P.T = 1``).

    Examples
    --------
    >>> g = load_soccer()
    >>> g.shape, bool(np.allclose(g.payoffs[0] + g.payoffs[0].T, 1.0))
    ((10, 10), True)
    """
    path = Path(path) if path is not None else data_dir() / "soccer" / "soccer.txt"
    p = np.loadtxt(path)
    if p.ndim != 2 or p.shape[0] != p.shape[1]:
        raise ValueError(f"{path} must hold a square matrix of win probabilities; got shape {p.shape}.")
    names = tuple(f"agent_{i}" for i in range(p.shape[0]))
    return NormalFormGame.from_bimatrix(p, p.T, strategy_names=(names, names), name="soccer")


def load_rrps_table(path=None) -> pd.DataFrame:
    """The published 43-bot repeated-RPS cross-table (Lanctot et al. 2023) as a long DataFrame.

    Columns ``row_bot``, ``col_bot`` and ``value``: the row bot's mean return per
    match of 1000 throws.

    Examples
    --------
    >>> t = load_rrps_table()
    >>> len(t), t["row_bot"].nunique()
    (1849, 43)
    """
    path = Path(path) if path is not None else data_dir() / "rrps" / "bot_table_file.txt"
    rows = []
    with open(path) as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.strip()
            if not line:
                continue
            try:
                row, col, value = ast.literal_eval(line)
            except (ValueError, SyntaxError):
                raise ValueError(f"{path}:{lineno}: expected ('row_bot', 'col_bot', value), got {line!r}") from None
            rows.append((str(row), str(col), float(value)))
    return pd.DataFrame(rows, columns=["row_bot", "col_bot", "value"])


def rrps_game(table: pd.DataFrame | None = None, scale: float = 1.0) -> NormalFormGame:
    """The RRPS cross-table as a symmetric two-player game, payoffs times ``scale``.

    Row payoffs are the table ``M[i, j]`` (bot i's return against bot j) and
    column payoffs ``M.T``. The table is zero-sum only up to sampling noise, as
    ``M[i, j]`` and ``M[j, i]`` were estimated separately. Bots are ordered
    alphabetically. Use ``scale=1/1000`` for returns per throw.

    Examples
    --------
    >>> g = rrps_game(scale=1e-3)
    >>> g.shape
    (43, 43)
    """
    table = load_rrps_table() if table is None else table
    bots = sorted(set(table["row_bot"]) | set(table["col_bot"]))
    index = {b: i for i, b in enumerate(bots)}
    m = np.full((len(bots), len(bots)), np.nan)
    m[table["row_bot"].map(index).to_numpy(), table["col_bot"].map(index).to_numpy()] = table["value"].to_numpy()
    if np.isnan(m).any():
        missing = np.argwhere(np.isnan(m))[0]
        raise ValueError(f"the cross-table has no entry for ({bots[missing[0]]}, {bots[missing[1]]}).")
    m = m * scale
    names = tuple(bots)
    return NormalFormGame.from_bimatrix(m, m.T, strategy_names=(names, names), name="rrps")
