"""Loaders for the published meta-games shipped with the package (``games/data``).

The files are package data of :mod:`games`, read with :mod:`importlib.resources`,
so they are found wherever the package is installed (a wheel, an editable
install or a checkout). ``games/data/README.md`` gives their source and licence.
"""

from __future__ import annotations

import ast
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import numpy as np
import pandas as pd

from games.normal_form import NormalFormGame

__all__ = ["reference_file", "load_soccer", "load_rrps_table", "rrps_game"]

_REFERENCE_FILES = {"soccer": ("soccer", "soccer.txt"), "rrps": ("rrps", "bot_table_file.txt")}


def reference_file(name: str) -> Traversable:
    """The packaged reference data file ``name`` (``"soccer"`` or ``"rrps"``).

    Parameters
    ----------
    name : str
        Which data set: ``"soccer"`` (Rowland et al. 2019) or ``"rrps"``
        (Lanctot et al. 2023).

    Returns
    -------
    importlib.resources.abc.Traversable
        The file inside the installed :mod:`games` package; open it with
        ``.open()`` or read it with ``.read_text()``.

    Examples
    --------
    >>> reference_file("soccer").name
    'soccer.txt'
    >>> reference_file("soccer").is_file()
    True
    """
    if name not in _REFERENCE_FILES:
        raise ValueError(f"name must be one of {sorted(_REFERENCE_FILES)}; got {name!r}.")
    entry = resources.files("games").joinpath("data", *_REFERENCE_FILES[name])
    if not entry.is_file():
        raise FileNotFoundError(
            f"the packaged data file games/data/{'/'.join(_REFERENCE_FILES[name])} is missing; "
            "reinstall the package (pip install .) so that its package data is included."
        )
    return entry


def _read_text(path, name: str) -> tuple[str, str]:
    """The text of ``path`` (a user's file) or of the packaged file ``name``, and a label for messages."""
    if path is not None:
        return Path(path).read_text(), str(path)
    entry = reference_file(name)
    return entry.read_text(), f"games/data/{'/'.join(_REFERENCE_FILES[name])}"


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
    text, label = _read_text(path, "soccer")
    p = np.loadtxt(text.splitlines())
    if p.ndim != 2 or p.shape[0] != p.shape[1]:
        raise ValueError(f"{label} must hold a square matrix of win probabilities; got shape {p.shape}.")
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
    text, label = _read_text(path, "rrps")
    rows = []
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        try:
            row, col, value = ast.literal_eval(line)
        except (ValueError, SyntaxError, TypeError):
            raise ValueError(f"{label}:{lineno}: expected ('row_bot', 'col_bot', value), got {line!r}") from None
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
