"""Compiled walks (numba) of the imperfect-information board games: phantom tic-tac-toe and dark hex.

Both games are one family: a player picks a cell it has not tried; if the
opponent holds it, the attempt fails and reveals the opponent's stone there
(``classical``: the same player picks again; ``abrupt``: the turn passes),
else the player's stone goes there and the game ends if it completes a win
(a win table over the ``2**n`` stone masks) or fills the board (a draw).

A player's information set is its own **sequence**: the cells it tried, in
order, and what each found (placed or taken). Such a sequence is numbered
densely: after ``k`` attempts, ``code' = code * 2 (n - k) + 2 r + o``, where
``r`` is the cell's rank among the cells still untried and ``o`` is 1 when
the attempt failed; ``offsets[k]`` separates the lengths, so the index of a
sequence is ``offsets[k] + code``. :func:`discover` marks the indices the
game reaches; the evaluator numbers the marked ones compactly and then
works on arrays over them.

Every function here is a pure function on arrays; the state of a walk is the
two stone masks (``b``), the two masks of tried cells (``t``), and each
player's sequence (``c``, ``k``), passed with the mover first.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = ["offsets", "discover", "evaluate", "plans_from_policy", "best_response", "decode", "tensors",
           "PLACED", "TAKEN", "WORKERS", "MAX_FIXED"]

#: the workers the opening tasks are dealt to (in a fixed order, whatever the number of threads, so that results are
#: the same on every machine); each keeps its own gradient (0.55 GB on abrupt 3x3 dark hex), so this bounds both the
#: threads used and the memory.
WORKERS = 2
#: the outcome bit of an attempt: the stone went there / the opponent held the cell.
PLACED, TAKEN = 0, 1
#: the most first attempts a walk can fix (:func:`_walk_all` packs them into one integer, four bits a cell).
MAX_FIXED = 15


def offsets(n: int) -> np.ndarray:
    """``offsets[k]``: the index of the first sequence of length ``k`` (``offsets[n + 1]``: their count).

    Examples
    --------
    >>> offsets(2).tolist()   # 1 empty sequence, 4 of length 1 (2 cells x 2 outcomes), 8 of length 2
    [0, 1, 5, 13]
    """
    out = np.zeros(n + 2, dtype=np.int64)
    count = 1
    for k in range(n + 1):
        out[k + 1] = out[k] + count
        count *= 2 * (n - k)
    return out


def _popcounts(n: int) -> np.ndarray:
    return np.array([bin(m).count("1") for m in range(2 ** n)], dtype=np.int64)


# The two walks are depth-first searches with their own stack (a row per attempt made: at most 2 n + 1 rows), not
# recursive functions: numba's cache cannot keep recursive functions (it fails to load them again, numba issue 6061),
# and compiling the walks took 6 s in every process. A row holds the node's state, the mover's first: me, b_me, b_op,
# t_me, t_op, c_me, k_me, c_op, k_op, then (the evaluation's) the other's compact sequence s_op, and the next cell to
# try.
_ME, _B_ME, _B_OP, _T_ME, _T_OP, _C_ME, _K_ME, _C_OP, _K_OP, _S_OP, _NEXT = range(11)


@njit(cache=True)
def _push(rows, top, me, b_me, b_op, t_me, t_op, c_me, k_me, c_op, k_op, s_op) -> None:
    row = rows[top]
    row[_ME], row[_B_ME], row[_B_OP], row[_T_ME], row[_T_OP] = me, b_me, b_op, t_me, t_op
    row[_C_ME], row[_K_ME], row[_C_OP], row[_K_OP], row[_S_OP], row[_NEXT] = c_me, k_me, c_op, k_op, s_op, 0


@njit(cache=True)
def _attempt(j, n, full, pop, t_me, b_op, c_me, k_me, depth, prefix, fixed) -> tuple:
    """``(o, c)`` of the mover trying cell ``j``: 1 when the opponent holds it, and the mover's sequence code after
    the attempt; ``(-1, 0)`` when the mover cannot try it (tried before, or not the attempt ``prefix`` fixes)."""
    bit = 1 << j
    if (t_me & bit) or (depth < fixed and j != (prefix >> (4 * depth)) & 15):
        return -1, 0
    o = 1 if (b_op & bit) else 0
    return o, c_me * 2 * (n - k_me) + 2 * pop[(bit - 1) & ~t_me & full] + o


@njit(cache=True)
def _push_child(rows, top, o, abrupt, bit, c, s) -> None:
    """Push the node after the mover of ``rows[top]`` tried cell ``bit`` (outcome ``o``, its sequence code ``c`` and
    compact sequence ``s`` after it): the same mover again after a failed attempt in the classical game, else the
    other player (with the mover's stone placed where it went)."""
    me, b_me, b_op, t_me, t_op = rows[top, _ME], rows[top, _B_ME], rows[top, _B_OP], rows[top, _T_ME], rows[top, _T_OP]
    c_op, k_me, k_op, s_op = rows[top, _C_OP], rows[top, _K_ME], rows[top, _K_OP], rows[top, _S_OP]
    if o == 1 and not abrupt:
        _push(rows, top + 1, me, b_me, b_op, t_me | bit, t_op, c, k_me + 1, c_op, k_op, s_op)
    else:
        stones = b_me | bit if o == 0 else b_me
        _push(rows, top + 1, 1 - me, b_op, stones, t_op, t_me | bit, c_op, k_op, c, k_me + 1, s)


@njit(cache=True)
def _discover_walk(n, abrupt, full, win, off, pop, reached, decision, prefix, fixed) -> None:
    """Mark the sequences reached below the root (``reached``) and those where a player moves (``decision``); the
    first ``fixed`` attempts of the game are those of ``prefix`` (see :func:`_walk_all`)."""
    rows = np.empty((2 * n + 2, 11), dtype=np.int64)
    _push(rows, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    top = 0
    decision[0, 0] = 1
    while top >= 0:
        me, b_me, b_op, t_me = rows[top, _ME], rows[top, _B_ME], rows[top, _B_OP], rows[top, _T_ME]
        c_me, k_me, depth = rows[top, _C_ME], rows[top, _K_ME], rows[top, _K_ME] + rows[top, _K_OP]
        pushed = False
        j = rows[top, _NEXT]
        while j < n and not pushed:
            o, c = _attempt(j, n, full, pop, t_me, b_op, c_me, k_me, depth, prefix, fixed)
            bit = 1 << j
            j += 1
            if o < 0:
                continue
            reached[me, off[k_me + 1] + c] = 1
            stones = b_me | bit
            if o == 0 and (win[me, stones] or (stones | b_op) == full):   # the game ends here
                continue
            _push_child(rows, top, o, abrupt, bit, c, 0)
            pushed = True
        rows[top, _NEXT] = j
        if pushed:
            top += 1
            decision[rows[top, _ME], off[rows[top, _K_ME]] + rows[top, _C_ME]] = 1
        else:
            top -= 1


@njit(cache=True)
def _eval_walk(n, abrupt, full, win, off, pop, index, plans, grad, tid, prefix, fixed) -> float:
    """Add each terminal's utility times the other player's realization to each player's last sequence
    (``grad[tid]``); return player 0's expected utility. Each node's value is the sum of its children's in the
    order of its cells, as a recursive walk adds them (so the value does not depend on the stack)."""
    rows = np.empty((2 * n + 2, 11), dtype=np.int64)
    reals = np.zeros((2 * n + 2, 2))   # the other's realization x_op, the value summed so far
    _push(rows, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    reals[0, 0] = plans[1, 0]
    if plans[0, 0] == 0.0 and plans[1, 0] == 0.0:
        return 0.0
    top = 0
    while True:
        me, b_me, b_op, t_me = rows[top, _ME], rows[top, _B_ME], rows[top, _B_OP], rows[top, _T_ME]
        c_me, k_me, depth, s_op = rows[top, _C_ME], rows[top, _K_ME], rows[top, _K_ME] + rows[top, _K_OP], \
            rows[top, _S_OP]
        x_op, value = reals[top, 0], reals[top, 1]
        sign = 1.0 if me == 0 else -1.0
        pushed = False
        j = rows[top, _NEXT]
        while j < n and not pushed:
            o, c = _attempt(j, n, full, pop, t_me, b_op, c_me, k_me, depth, prefix, fixed)
            bit = 1 << j
            j += 1
            if o < 0:
                continue
            s = index[me, off[k_me + 1] + c]
            x = plans[me, s]
            stones = b_me | bit
            if o == 0 and win[me, stones]:
                grad[tid, me, s] += x_op
                grad[tid, 1 - me, s_op] -= x
                value += sign * x * x_op
                continue
            if o == 0 and (stones | b_op) == full:
                continue
            if o == 1 and not abrupt:   # the same player tries again
                child_x_me, child_x_op = x, x_op
            else:
                child_x_me, child_x_op = x_op, x
            if child_x_me == 0.0 and child_x_op == 0.0:   # (nothing below is reached)
                value += 0.0
                continue
            _push_child(rows, top, o, abrupt, bit, c, s)
            reals[top + 1, 0], reals[top + 1, 1] = child_x_op, 0.0
            pushed = True
        rows[top, _NEXT] = j
        reals[top, 1] = value
        if pushed:
            top += 1
        elif top == 0:
            return value
        else:
            top -= 1
            reals[top, 1] += value


@njit(parallel=True, cache=True)
def _walk_all(discovering, n, abrupt, full, win, off, pop, reached, decision, index, plans, grad, values, history):
    """Walk the histories in ``n * n`` tasks, one per opening (player 0's first cell, player 1's first cell), task
    ``i`` by worker ``i % workers`` in order: each worker adds into its own ``grad[w]``, always in the same order,
    so that the sums do not depend on the threads that ran them. Only the histories that begin with ``history``
    (the cells of the first attempts) are walked."""
    workers = grad.shape[0]
    for w in prange(workers):
        for task in range(w, n * n, workers):
            first, second = task // n, task % n
            if (history.size > 0 and history[0] != first) or (history.size > 1 and history[1] != second):
                continue
            prefix = first | second << 4   # (the cells of the fixed attempts, four bits each: n <= 9)
            for k in range(2, history.size):
                prefix |= history[k] << (4 * k)
            fixed = max(2, history.size)
            if discovering:
                _discover_walk(n, abrupt, full, win, off, pop, reached, decision, prefix, fixed)
            else:
                values[task] = _eval_walk(n, abrupt, full, win, off, pop, index, plans, grad, w, prefix, fixed)


def _run(discovering, n, abrupt, win, reached, decision, index, plans, grad, history) -> float:
    if len(history) > MAX_FIXED:
        raise ValueError(f"history: a walk fixes at most {MAX_FIXED} attempts; got {len(history)}.")
    values = np.zeros(n * n, dtype=np.float64)
    _walk_all(discovering, n, bool(abrupt), (1 << n) - 1, np.ascontiguousarray(win, dtype=np.bool_), offsets(n),
              _popcounts(n), reached, decision, index, plans, grad, values,
              np.ascontiguousarray(history, dtype=np.int64))
    return float(values.sum())


def discover(n: int, abrupt: bool, win: np.ndarray, history=()) -> tuple:
    """Mark every sequence the game reaches: ``reached`` (after an attempt) and ``decision`` (a player to move).

    Parameters
    ----------
    n : int
        Number of cells (at most 9: the dense numbering has ``offsets(n)[-1]`` entries per player).
    abrupt : bool
        Whether a failed attempt passes the turn.
    win : ndarray of bool, shape (2, 2**n)
        Whether a player's stone mask wins; no single stone may win.
    history : sequence of int
        The cells of the game's first attempts (both players', in order; legal, the game not over after them; at
        most :data:`MAX_FIXED`): only the histories that begin with them are walked.

    Returns
    -------
    reached, decision : ndarray of uint8, shape (2, offsets(n)[-1])

    Examples
    --------
    >>> win = np.zeros((2, 4), dtype=bool); win[:, 3] = True   # two cells: whoever holds both wins
    >>> reached, decision = discover(2, False, win)
    >>> decision.sum(axis=1).tolist(), reached.sum(axis=1).tolist()   # x places once; o may find x's cell first
    ([1, 3], [3, 7])
    >>> reached, decision = discover(2, False, win, history=[0])   # x placed on cell 0
    >>> decision.sum(axis=1).tolist(), reached.sum(axis=1).tolist()
    ([1, 2], [2, 4])
    """
    size = int(offsets(n)[-1])
    reached = np.zeros((2, size), dtype=np.uint8)
    decision = np.zeros((2, size), dtype=np.uint8)
    reached[:, 0] = 1
    _run(True, n, abrupt, win, reached, decision, np.zeros((2, 1), np.int32), np.ones((2, 1)),
         np.zeros((WORKERS, 2, 1)), history)
    return reached, decision


def evaluate(n: int, abrupt: bool, win: np.ndarray, index: np.ndarray, plans: np.ndarray, history=()) -> tuple:
    """Walk every history once (those that begin with ``history``): player 0's expected utility and each player's
    utility gradient.

    Parameters
    ----------
    n, abrupt, win, history
        As for :func:`discover`.
    index : ndarray of int32, shape (2, offsets(n)[-1])
        The compact number of each reached sequence (-1 elsewhere).
    plans : ndarray of float64, shape (2, m)
        Each player's realization plan over its compact sequences (the product
        of its own probabilities along the sequence).

    Returns
    -------
    value : float
        Player 0's expected utility (player 1's is its negative).
    grad : ndarray of float64, shape (2, m)
        ``grad[p, s]``: the sum, over the terminal histories whose last
        sequence of ``p`` is ``s``, of ``p``'s utility times the other player's
        realization. The same on every machine: the tasks go to :data:`WORKERS` workers in a fixed order.
    """
    grad = np.zeros((WORKERS, 2, plans.shape[1]), dtype=np.float64)
    dummy = np.zeros((2, 1), dtype=np.uint8)
    value = _run(False, n, abrupt, win, dummy, dummy, index, plans, grad, history)
    return value, grad.sum(axis=0)


@njit(cache=True)
def decode(dense: int, n: int, off: np.ndarray, cells: np.ndarray, outcomes: np.ndarray) -> int:
    """Write the cells and outcomes of the sequence at index ``dense`` into ``cells``/``outcomes``; return its
    length.

    Examples
    --------
    >>> n, off = 3, offsets(3)
    >>> cells, outcomes = np.zeros(3, np.int64), np.zeros(3, np.int64)
    >>> code = (0 * 6 + 2 * 2 + 1) * 4 + 2 * 0 + 0   # cell 2 taken, then cell 0 placed
    >>> k = decode(off[2] + code, n, off, cells, outcomes)
    >>> k, cells[:k].tolist(), outcomes[:k].tolist()
    (2, [2, 0], [1, 0])
    """
    k = 0
    while off[k + 1] <= dense:
        k += 1
    code = dense - off[k]
    ranks = np.empty(k, dtype=np.int64)
    for i in range(k - 1, -1, -1):
        base = 2 * (n - i)
        digit = code % base
        code //= base
        ranks[i] = digit // 2
        outcomes[i] = digit % 2
    tried = 0
    for i in range(k):
        r = ranks[i]
        for j in range(n):
            if not (tried >> j) & 1:
                if r == 0:
                    cells[i] = j
                    tried |= 1 << j
                    break
                r -= 1
    return k


@njit(cache=True)
def _tried(dense, n, off, cells, outcomes):
    k = decode(dense, n, off, cells, outcomes)
    tried = 0
    for i in range(k):
        tried |= 1 << cells[i]
    return k, tried


@njit(cache=True)
def plans_from_policy(n, off, dense, decision, index_row, policy, plan):
    """Fill ``plan`` (the realization plan over compact sequences) from a behaviour ``policy`` ``(m, n)``.

    ``dense`` holds each compact sequence's dense index (increasing, so a
    parent comes before its children), ``decision`` whether the player moves
    there, ``index_row`` the compact number of each dense index.
    """
    cells = np.empty(n, dtype=np.int64)
    outcomes = np.empty(n, dtype=np.int64)
    plan[:] = 0.0
    plan[0] = 1.0
    for s in range(dense.size):
        if not decision[s] or plan[s] == 0.0:
            continue
        k, tried = _tried(dense[s], n, off, cells, outcomes)
        code = dense[s] - off[k]
        r = 0
        for j in range(n):
            if (tried >> j) & 1:
                continue
            for o in range(2):
                child = index_row[off[k + 1] + code * 2 * (n - k) + 2 * r + o]
                if child >= 0:
                    plan[child] = plan[s] * policy[s, j]
            r += 1


@njit(cache=True)
def best_response(n, off, dense, decision, index_row, grad, best):
    """Each sequence's best-response value bottom-up (``best[s] = grad[s] + max_a sum_o best[s + (a, o)]``) and
    the best action at each decision (-1 elsewhere); ``best[0]`` is the best-response value."""
    cells = np.empty(n, dtype=np.int64)
    outcomes = np.empty(n, dtype=np.int64)
    action = np.full(dense.size, -1, dtype=np.int64)
    for s in range(dense.size - 1, -1, -1):
        best[s] = grad[s]
        if not decision[s]:
            continue
        k, tried = _tried(dense[s], n, off, cells, outcomes)
        code = dense[s] - off[k]
        r = 0
        top = -np.inf
        for j in range(n):
            if (tried >> j) & 1:
                continue
            total = 0.0
            for o in range(2):
                child = index_row[off[k + 1] + code * 2 * (n - k) + 2 * r + o]
                if child >= 0:
                    total += best[child]
            if total > top:
                top = total
                action[s] = j
            r += 1
        best[s] += top
    return action


@njit(cache=True)
def tensors(n, off, dense, player, hex_layout, obs, mask):
    """OpenSpiel's information-state tensor (``reveal-nothing``) and the legal mask of each sequence in ``dense``.

    Phantom tic-tac-toe: the view one-hot over (empty, nought, cross), state-major (``state * n + cell``);
    dark hex: cell-major over nine cell states (``cell * 9 + 4`` empty, ``+ 1`` black, ``- 1`` white). Then the
    player's own attempts in order, one-hot over the cells each.
    """
    cells = np.empty(n, dtype=np.int64)
    outcomes = np.empty(n, dtype=np.int64)
    base = 9 * n if hex_layout else 3 * n
    mine = 1 if player == 0 else -1   # hex: black is player 0
    obs[:] = 0.0
    mask[:] = True
    for row in range(dense.size):
        k = decode(dense[row], n, off, cells, outcomes)
        state = np.zeros(n, dtype=np.int64)   # 0 empty, +1 player 0's stone, -1 player 1's
        for i in range(k):
            state[cells[i]] = mine if outcomes[i] == PLACED else -mine
            mask[row, cells[i]] = False
            obs[row, base + i * n + cells[i]] = 1.0
        for j in range(n):
            if hex_layout:
                obs[row, j * 9 + 4 + state[j]] = 1.0
            else:   # empty 0, nought (player 1) 1, cross (player 0) 2
                obs[row, (0 if state[j] == 0 else (2 if state[j] == 1 else 1)) * n + j] = 1.0
