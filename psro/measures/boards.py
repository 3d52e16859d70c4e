"""The board games the compiled evaluator walks: OpenSpiel's ``phantom_ttt`` and ``dark_hex``, as a :class:`Board`.

Examples
--------
>>> import pyspiel
>>> board = board_of(pyspiel.load_game("dark_hex(num_rows=3,num_cols=3,gameversion=adh)"))
>>> board.name, board.num_cells, board.abrupt
('dark_hex', 9, True)
>>> board_of(pyspiel.load_game("kuhn_poker")) is None
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Board", "board_of", "MAX_CELLS", "COVERED"]

#: the most cells the dense numbering of sequences takes (about 306 million sequences per player at 9).
MAX_CELLS = 9
#: what the compiled evaluator covers, for error messages.
COVERED = ("phantom_ttt (gameversion classical or abrupt, obstype reveal-nothing) and dark_hex with at most "
           f"{MAX_CELLS} cells (num_rows x num_cols, each at least 2; gameversion cdh or adh, obstype reveal-nothing)")

_LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


@dataclass(frozen=True)
class Board:
    """One of the covered games, as the kernels see it.

    Attributes
    ----------
    name : {"phantom_ttt", "dark_hex"}
    num_rows, num_cols : int
    abrupt : bool
        Whether a failed attempt passes the turn (``abrupt`` / ``adh``).
    key : str
        The game's OpenSpiel string, to key the caches.
    """

    name: str
    num_rows: int
    num_cols: int
    abrupt: bool
    key: str

    @property
    def num_cells(self) -> int:
        return self.num_rows * self.num_cols

    @property
    def view_size(self) -> int:
        """The entries at the start of the information-state tensor that hold the board as the player sees it:
        three cell states a cell on phantom tic-tac-toe (27), nine on dark hex (81 on 3x3).

        Examples
        --------
        >>> Board("dark_hex", 2, 3, False, "dark_hex(num_rows=2,num_cols=3)").view_size
        54
        """
        return self.num_cells * (9 if self.hex_layout else 3)

    @property
    def hex_layout(self) -> bool:
        """Whether the information-state tensor is dark hex's (cell-major, nine cell states)."""
        return self.name == "dark_hex"

    def win_table(self) -> np.ndarray:
        """``(2, 2**num_cells)`` bool: whether player ``p``'s stones (a bit mask over cells) win.

        Examples
        --------
        >>> board = Board("dark_hex", 2, 2, False, "dark_hex(num_rows=2,num_cols=2)")
        >>> table = board.win_table()
        >>> bool(table[0, 0b0101]), bool(table[1, 0b0011]), bool(table[0, 0b0011])   # a column; a row
        (True, True, False)
        """
        masks = np.arange(2 ** self.num_cells)
        if self.name == "phantom_ttt":
            bits = (masks[:, None] >> np.arange(9)) & 1
            won = np.zeros(masks.size, dtype=bool)
            for line in _LINES:
                won |= bits[:, list(line)].all(axis=1)
            return np.stack([won, won])
        return np.stack([[self._hex_connects(int(m), p) for m in masks] for p in (0, 1)])

    def _hex_connects(self, mask: int, player: int) -> bool:
        """Player 0 (black) joins the first row to the last; player 1 (white) the first column to the last."""
        rows, cols = self.num_rows, self.num_cols
        start = [(0, c) for c in range(cols)] if player == 0 else [(r, 0) for r in range(rows)]
        todo = [cell for cell in start if mask >> (cell[0] * cols + cell[1]) & 1]
        seen = set(todo)
        while todo:
            r, c = todo.pop()
            if (player == 0 and r == rows - 1) or (player == 1 and c == cols - 1):
                return True
            for dr, dc in ((-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0)):
                nr, nc = r + dr, c + dc
                if 0 <= nr < rows and 0 <= nc < cols and (nr, nc) not in seen and mask >> (nr * cols + nc) & 1:
                    seen.add((nr, nc))
                    todo.append((nr, nc))
        return False


def board_of(game) -> Board | None:
    """The :class:`Board` of a ``pyspiel.Game`` the compiled evaluator covers, else ``None``."""
    if hasattr(game, "make_py_observer") or not hasattr(game, "get_type"):
        return None
    name = game.get_type().short_name
    params = game.get_parameters()
    if params.get("obstype", "reveal-nothing") != "reveal-nothing":
        return None
    if name == "phantom_ttt" and params.get("gameversion", "classical") in ("classical", "abrupt"):
        return Board(name, 3, 3, params.get("gameversion") == "abrupt", str(game))
    if name == "dark_hex" and params.get("gameversion", "cdh") in ("cdh", "adh"):
        rows, cols = int(params["num_rows"]), int(params["num_cols"])
        if min(rows, cols) >= 2 and rows * cols <= MAX_CELLS:
            return Board(name, rows, cols, params.get("gameversion") == "adh", str(game))
    return None
