"""The zero-sum Nash LP of a meta-game that grows by rows and columns, warm-started between solves.

PSRO's meta-game gains one strategy per player each iteration and its old
entries never change. The row player's maximin LP

    max v   s.t.   sum_i a[i, j] x_i - v >= 0  for every column j,   sum_i x_i = 1,   x >= 0

therefore only gains variables (new rows of ``a``) and constraints (new
columns). HiGHS keeps its simplex basis across such edits, so a re-solve costs
a few pivots instead of a solve from scratch. The column player's strategy is
read from the duals of the column constraints.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solvers.highs_backend import new_highs

__all__ = ["WarmStartZeroSumLP", "WarmLPSolution"]


@dataclass(frozen=True, eq=False)
class WarmLPSolution:
    """Maximin strategies ``x`` (rows) and ``y`` (columns), the row player's value and simplex iterations."""

    x: np.ndarray
    y: np.ndarray
    value: float
    iterations: int
    warm: bool


class WarmStartZeroSumLP:
    """Solve a sequence of growing zero-sum matrix games, each from the previous basis.

    Examples
    --------
    >>> lp = WarmStartZeroSumLP()
    >>> lp.solve(np.array([[1.0, -1.0], [-1.0, 1.0]])).x.tolist()
    [0.5, 0.5]
    >>> rps = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])
    >>> sol = lp.solve(rps)   # a different game: rebuilt from scratch
    >>> sol.x.round(6).tolist(), sol.warm
    ([0.333333, 0.333333, 0.333333], False)
    """

    def __init__(self):
        self._highs = None
        self._a = np.zeros((0, 0))

    def _fresh(self):
        import highspy

        h = new_highs()   # silent, one thread (see solvers.highs_backend)
        # HiGHS's default 1e-7 feasibility tolerances leave meta-game NashConv up to ~1e-7 on the nearly
        # degenerate meta-games of late PSRO iterations (many near-duplicate policies); 1e-9 costs nothing measurable
        h.setOptionValue("primal_feasibility_tolerance", 1e-9)
        h.setOptionValue("dual_feasibility_tolerance", 1e-9)
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        inf = highspy.kHighsInf
        h.addCol(1.0, -inf, inf, 0, np.array([], dtype=np.int32), np.array([]))  # v, column 0
        h.addRow(1.0, 1.0, 0, np.array([], dtype=np.int32), np.array([]))        # sum x = 1, row 0
        self._highs = h
        self._a = np.zeros((0, 0))

    def _add_rows_of_a(self, block: np.ndarray) -> None:
        """New row-player strategies: variables with coefficient 1 in row 0 and a[i, j] in row 1 + j."""
        k_new, k2 = block.shape
        rows = np.concatenate([[0], 1 + np.arange(k2)]).astype(np.int32)
        starts = (np.arange(k_new) * (k2 + 1)).astype(np.int32)
        indices = np.tile(rows, k_new)
        values = np.hstack([np.ones((k_new, 1)), block]).ravel()
        self._highs.addCols(k_new, np.zeros(k_new), np.zeros(k_new), np.full(k_new, np.inf), values.size, starts,
                            indices, values)

    def _add_columns_of_a(self, block: np.ndarray) -> None:
        """New column-player strategies: constraints sum_i a[i, j] x_i - v >= 0."""
        k1, k_new = block.shape
        cols = np.concatenate([1 + np.arange(k1), [0]]).astype(np.int32)
        starts = (np.arange(k_new) * (k1 + 1)).astype(np.int32)
        indices = np.tile(cols, k_new)
        values = np.vstack([block, -np.ones((1, k_new))]).T.ravel()
        self._highs.addRows(k_new, np.zeros(k_new), np.full(k_new, np.inf), values.size, starts, indices, values)

    def solve(self, a) -> WarmLPSolution:
        """Maximin strategies of the zero-sum game with row payoffs ``a``.

        When ``a`` extends the previous matrix (same old block, more rows or
        columns) only the new part is added and the old basis is reused;
        otherwise the model is rebuilt.
        """
        import highspy

        a = np.asarray(a, dtype=np.float64)
        if a.ndim != 2 or 0 in a.shape or not np.all(np.isfinite(a)):
            raise ValueError(f"a must be a finite, non-empty matrix; got shape {a.shape}.")
        o1, o2 = self._a.shape
        warm = (self._highs is not None and a.shape[0] >= o1 and a.shape[1] >= o2 and (o1 * o2 > 0)
                and np.array_equal(a[:o1, :o2], self._a))
        if not warm:
            self._fresh()
            o1 = o2 = 0
        if a.shape[0] > o1:
            self._add_rows_of_a(a[o1:, :o2])
        if a.shape[1] > o2:
            self._add_columns_of_a(a[:, o2:])
        self._a = a.copy()
        h = self._highs
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            self._highs = None
            raise RuntimeError(f"HiGHS did not solve the zero-sum LP: {h.modelStatusToString(h.getModelStatus())}.")
        sol = h.getSolution()
        x = np.clip(np.asarray(sol.col_value)[1:], 0.0, None)
        y = np.clip(np.abs(np.asarray(sol.row_dual)[1:]), 0.0, None)
        x, y = x / x.sum(), y / y.sum()
        iterations = int(h.getInfo().simplex_iteration_count)
        return WarmLPSolution(x=x, y=y, value=float(x @ a @ y), iterations=iterations, warm=warm)
