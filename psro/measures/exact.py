"""Exact exploitability of a policy profile: :func:`exact_nash_conv`, on a game tree or through compiled walks.

On a game whose tree fits (:func:`psro.sequence_form.game_tree.build_game_tree`) the profile
is tabulated over the tree and measured in sequence form. On phantom
tic-tac-toe and dark hex, whose trees have 10 to 30 billion histories, the
compiled kernels of :mod:`psro.measures.kernels` (numba, the ``numba`` extra)
walk every history once in parallel: the sequences the game reaches are found
once per process (:func:`board_tables`), a network policy is asked for the
probabilities of all its information sets in batches, and each player's best
response comes from one bottom-up pass over its sequences.

The information set is the player's own sequence of attempts and what each
found, as in Rudolph et al.'s exp-a-spiel (ICLR 2026). It is OpenSpiel's
information-state string for phantom tic-tac-toe and for abrupt dark hex;
classical dark hex's string also holds the number of moves made, which lets
OpenSpiel's best response tell how many attempts the opponent failed, so
OpenSpiel's ``nash_conv`` there can exceed this one. The information-state
*tensor* (what the toolkit's networks read) does not hold that count.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from psro.measures import cache
from psro.measures.boards import COVERED, MAX_CELLS, Board, board_of

__all__ = ["Exploitability", "exact_nash_conv", "exact_nash_conv_of_run", "mixture_profile", "board_tables",
           "BoardTables", "compile_walks"]

log = logging.getLogger(__name__)

#: information sets asked of a network policy per batch.
BATCH = 65536
#: boards of this many cells or more keep their sequence tables on disk (smaller ones are found in a second).
DISK_CELLS = 9
_TABLES: dict = {}


@dataclass(frozen=True)
class Exploitability:
    """The exact exploitability of a two-player zero-sum profile.

    Attributes
    ----------
    nash_conv : float
        ``sum_p (best_response_values[p] - values[p])``.
    values : tuple of float
        Each player's expected utility under the profile.
    best_response_values : tuple of float
        Each player's value when it best-responds to the other's policy.
    seconds : float
        Wall time of the evaluation (tables included when they were built by it).
    response_errors : tuple of tuple of float
        With ``responses=`` (:func:`exact_nash_conv`): per player, each response's exact error, player ``p``'s
        best-response value against the others' policies minus the response's value against them; else empty.
    """

    nash_conv: float
    values: tuple
    best_response_values: tuple
    seconds: float
    response_errors: tuple = ()

    @property
    def gains(self) -> tuple:
        """What each player gains by best-responding: ``best_response_values[p] - values[p]``."""
        return tuple(b - v for b, v in zip(self.best_response_values, self.values))


@dataclass(frozen=True)
class BoardTables:
    """The sequences a board game reaches, per player, numbered compactly.

    Attributes
    ----------
    board : Board
    dense : tuple of ndarray of int64
        Each player's reached sequences by their dense index, increasing.
    decision : tuple of ndarray of bool
        Whether the player moves after each of them.
    index : ndarray of int32, shape (2, num_dense)
        The compact number of each dense index, -1 where unreached.
    """

    board: Board
    dense: tuple
    decision: tuple
    index: np.ndarray

    @property
    def num_sequences(self) -> tuple:
        return tuple(d.size for d in self.dense)


def _kernels():
    try:
        from psro.measures import kernels
    except ImportError as exc:
        raise ImportError("the exact evaluator of phantom_ttt and dark_hex needs numba: "
                          "pip install 'psro-toolkit[numba]' (or pip install numba).") from exc
    return kernels


def board_tables(board: Board) -> BoardTables:
    """Find (once per process) the sequences ``board`` reaches.

    Examples
    --------
    >>> import pyspiel
    >>> tables = board_tables(board_of(pyspiel.load_game("dark_hex(num_rows=2,num_cols=2)")))
    >>> tables.num_sequences, [int(d.sum()) for d in tables.decision]   # sequences; those where the player moves
    ((53, 109), [17, 53])
    """
    cached = _TABLES.get(board.key)
    if cached is not None:
        return cached
    kernels = _kernels()
    if board.num_cells > MAX_CELLS:
        raise ValueError(f"game {board.key!r} has {board.num_cells} cells; the exact evaluator walks boards of at "
                         f"most {MAX_CELLS} cells. Measure it with approx_gap (a lower bound) instead.")
    size = _checked_size(kernels, board)
    start = time.perf_counter()
    on_disk = board.num_cells >= DISK_CELLS
    found = _cached(board.key, size) if on_disk else None
    if found is None:
        dense, flags = _discovered(kernels, board, ())
        if on_disk:
            cache.save(board.key, {"dense0": dense[0].astype(np.int32), "dense1": dense[1].astype(np.int32),
                                   "decision0": flags[0], "decision1": flags[1]})
    else:
        dense, flags = found
    tables = _numbered(board, size, dense, flags)
    log.info("%s: %s sequences %s in %.1f s", board.key, tables.num_sequences,
             "found" if found is None else "read from the cache", time.perf_counter() - start)
    _TABLES[board.key] = tables
    return tables


def _history_tables(board: Board, history: tuple) -> BoardTables:
    """The sequences reached below ``history`` (found at each call, not kept: a small walk)."""
    kernels = _kernels()
    return _numbered(board, _checked_size(kernels, board), *_discovered(kernels, board, history))


def _checked_size(kernels, board: Board) -> int:
    """The dense numbering's size, once the memory its tables take is known to be there."""
    from games.memory_limit import check_memory

    size = int(kernels.offsets(board.num_cells)[-1])
    check_memory(2 * size * (1 + 1 + 4), f"the sequence tables of {board.key}",
                 "measure a smaller board, or raise PSRO_MAX_MEMORY")
    return size


def _discovered(kernels, board: Board, history: tuple) -> tuple:
    """``(dense, decision)`` per player: the sequences reached (below ``history``) and whether a player moves
    after each."""
    reached, decision = kernels.discover(board.num_cells, board.abrupt, board.win_table(), history)
    dense = tuple(np.flatnonzero(reached[p]) for p in (0, 1))
    del reached
    return dense, tuple(decision[p, dense[p]].astype(bool) for p in (0, 1))


def _numbered(board: Board, size: int, dense: tuple, flags: tuple) -> BoardTables:
    index = np.full((2, size), -1, dtype=np.int32)
    for p in (0, 1):
        index[p, dense[p]] = np.arange(dense[p].size, dtype=np.int32)
    return BoardTables(board, dense, flags, index)


def _cached(key: str, size: int) -> tuple | None:
    """``(dense, decision)`` per player from the disk cache, when there and well formed."""
    arrays = cache.load(key, ("dense0", "dense1", "decision0", "decision1"))
    if arrays is None:
        return None
    dense = tuple(arrays[f"dense{p}"].astype(np.int64) for p in (0, 1))
    flags = tuple(arrays[f"decision{p}"] for p in (0, 1))
    for d, f in zip(dense, flags):
        if d.ndim != 1 or d.size == 0 or d[0] != 0 or d[-1] >= size or np.any(np.diff(d) <= 0) \
                or f.dtype != np.bool_ or f.shape != d.shape:
            log.warning("ignoring the cached sequence tables of %s: they are not well formed", key)
            return None
    return dense, flags


def exact_nash_conv(game, profile: Sequence, *, history: Sequence = (), responses: Sequence = ()) -> Exploitability:
    """The exact NashConv of a two-player zero-sum profile, and each player's value and best-response value.

    Parameters
    ----------
    game : str or pyspiel.Game
        Phantom tic-tac-toe and dark hex (up to 3x3) go through the compiled
        evaluator; any other game must have a tree that fits.
    profile : sequence
        One entry per player: a policy (a toolkit policy acting on
        observations such as a network or :class:`psro.policies.UniformPolicy`;
        a tabular array or policy over the game tree; an OpenSpiel
        ``policy.Policy`` such as ``UniformRandomPolicy``) or a mixture
        ``(policies, weights)`` (a population and its meta-strategy: the
        realization plans mixed).
    history : sequence of int, optional
        On phantom tic-tac-toe and dark hex: the cells of the game's first
        attempts (both players', in the order played; at most 15). The game is then
        measured as if it began after them, each player's moves there fixed:
        the values and best responses below that history (every history of
        the subgame weighs as if it had been reached for sure).
    responses : sequence of sequences of policies, optional
        Per player (up to all of them), policies of that player to measure
        against the others' policies of ``profile``: how far each is from a
        best response (``response_errors``; a PSRO step's responses against
        their target). The others' realization plans are computed once.

    Returns
    -------
    Exploitability

    Examples
    --------
    >>> from open_spiel.python import policy
    >>> import pyspiel
    >>> game = pyspiel.load_game("dark_hex(num_rows=2,num_cols=2,gameversion=adh)")
    >>> result = exact_nash_conv(game, [policy.UniformRandomPolicy(game)] * 2)
    >>> round(result.nash_conv, 6), round(result.values[0], 6), [round(g, 6) for g in result.gains]
    (0.833333, 0.458333, [0.375, 0.458333])
    >>> round(exact_nash_conv("kuhn_poker", [policy.UniformRandomPolicy(pyspiel.load_game("kuhn_poker"))] * 2)
    ...       .nash_conv, 6)
    0.916667

    Below a history on 2x2 abrupt dark hex (black on cell 0, then white's try of cell 0 failing), black's best
    response wins at once (cell 2 joins the top row to the bottom one):

    >>> exact_nash_conv(game, [policy.UniformRandomPolicy(game)] * 2, history=[0, 0]).best_response_values[0]
    1.0

    How far the uniform policy of each player is from a best response to the other's uniform policy (its gain):

    >>> uniform = policy.UniformRandomPolicy(game)
    >>> [[round(e, 6) for e in errors] for errors in exact_nash_conv(game, [uniform] * 2,
    ...                                                               responses=[[uniform], [uniform]]).response_errors]
    [[0.375], [0.458333]]
    """
    import pyspiel

    if isinstance(game, str):
        game = pyspiel.load_game(game)
    if not hasattr(game, "num_players"):
        raise TypeError(f"game must be a pyspiel.Game or a game string; got {type(game).__name__}.")
    if isinstance(profile, (str, bytes)) or not isinstance(profile, Sequence) or len(profile) != game.num_players():
        raise ValueError(f"profile needs one policy (or (policies, weights) mixture) per player "
                         f"({game.num_players()}).")
    responses = _checked_responses(responses, game.num_players())
    start = time.perf_counter()
    board = board_of(game)
    if board is None and game.get_type().short_name in ("phantom_ttt", "dark_hex"):
        raise ValueError(f"{game} is not one the exact evaluator walks; it covers {COVERED}. Measure this game "
                         "with approx_gap (a lower bound) instead.")
    if board is not None:
        history = _checked_history(game, history)
        with torch_threads_kept():
            values, best, errors = _board_exploitability(board, profile, history, responses)
    elif len(history):
        raise ValueError(f"history: measuring below a history is for the games the compiled evaluator walks "
                         f"({COVERED}); {game} is measured from its root. Pass history=() for it.")
    else:
        values, best, errors = _tree_exploitability(game, profile, responses)
    return Exploitability(float(sum(best) - sum(values)), tuple(values), tuple(best), time.perf_counter() - start,
                          tuple(tuple(e) for e in errors))


def _checked_responses(responses, num_players: int) -> list:
    """``responses`` as one list of policies per player (players past its end: none), refused unless it is a
    sequence of at most ``num_players`` sequences of policies."""
    if isinstance(responses, (str, bytes)) or not isinstance(responses, Sequence) or len(responses) > num_players \
            or any(isinstance(r, (str, bytes)) or not isinstance(r, Sequence) for r in responses):
        raise ValueError(f"responses must hold, per player (at most {num_players}), a sequence of that player's "
                         f"policies to measure; got {responses!r:.80}.")
    return [list(r) for r in responses]


def compile_walks() -> float:
    """Compile the kernels of the compiled evaluator into numba's cache, by measuring the uniform profile of 2x2
    dark hex with a response, and return the seconds it took: the first measure after an install pays this (7-10 s)
    otherwise, and every later process loads the kernels in under a second. ``make install`` runs it.

    Examples
    --------
    >>> compile_walks() >= 0.0
    True
    """
    from psro.policies.acting import UniformPolicy

    start = time.perf_counter()
    uniform = UniformPolicy(4)
    result = exact_nash_conv("dark_hex(num_rows=2,num_cols=2)", [uniform, uniform], responses=[[uniform], [uniform]])
    seconds = time.perf_counter() - start
    log.info("compiled the exact evaluator's kernels (uniform 2x2 dark hex: NashConv %.4f) in %.1f s",
             result.nash_conv, seconds)
    return seconds


def exact_nash_conv_of_run(run_dir) -> Exploitability:
    """:func:`exact_nash_conv` of the final meta-strategy of the run in ``run_dir``: each seat's population mixed by
    its marginal (``psro evaluate RUN_DIR --exact``).

    Examples
    --------
    >>> import tempfile
    >>> from psro import PSRO
    >>> out = tempfile.mkdtemp()
    >>> history = PSRO("kuhn_poker", progress=False, checkpoint_dir=f"{out}/checkpoint").run(iterations=2)
    >>> round(exact_nash_conv_of_run(out).nash_conv, 9) == round(float(history["gap"].iloc[-1]), 9)
    True
    """
    from psro.measures.reference_opponents import final_run

    solver, game, _, strategy = final_run(run_dir)
    if getattr(solver, "kind", "product") != "product" or strategy is None:
        raise ValueError(f"RUN_DIR: {str(run_dir)!r} has no product meta-strategy (a JPSRO run's is joint); --exact "
                         "measures the NashConv of each population mixed by its marginal.")
    seats = solver.seat_populations() if hasattr(solver, "seat_populations") else solver.state.populations
    return exact_nash_conv(game, mixture_profile(seats, strategy.marginals))


def mixture_profile(populations, marginals) -> list:
    """The profile of :func:`exact_nash_conv` in which each population plays mixed by its meta-strategy marginal
    (renormalised: a solver's marginal may sum to one only up to round-off).

    Examples
    --------
    >>> from psro.policies import UniformPolicy
    >>> from psro.policies.population import PolicyPopulation, Provenance
    >>> pop = PolicyPopulation(player=0, num_actions=2)
    >>> _ = pop.add([UniformPolicy(2), UniformPolicy(2)], [Provenance(0, "initial"), Provenance(1, "ppo")])
    >>> [w.tolist() for _, w in mixture_profile([pop], [[1.0, 3.0]])]
    [[0.25, 0.75]]
    """
    weights = [np.asarray(w, dtype=np.float64) for w in marginals]
    return [(list(pop.policies), w / w.sum()) for pop, w in zip(populations, weights)]


def _members(entry, p: int) -> tuple:
    """``(policies, weights)`` of a profile entry: a mixture as given (weights checked), a policy alone."""
    if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], (list, tuple)):
        policies, weights = entry
        weights = np.asarray(weights, dtype=np.float64)
        if weights.shape != (len(policies),) or not np.all(np.isfinite(weights)) or np.any(weights < 0) \
                or abs(weights.sum() - 1.0) > 1e-9:
            raise ValueError(f"profile[{p}]'s weights must be {len(policies)} non-negative numbers summing to "
                             f"one; got {weights.tolist()}.")
        return list(policies), weights
    return [entry], np.ones(1)


@contextlib.contextmanager
def torch_threads_kept():
    """Restore torch's thread count after the compiled walks: numba's OpenMP layer sets the OpenMP thread count
    of the whole process, which torch shares, so training after an exact evaluation would otherwise run on every
    core whatever ``torch.set_num_threads`` the user chose.

    Examples
    --------
    >>> import torch
    >>> before = torch.get_num_threads()
    >>> with torch_threads_kept():
    ...     torch.set_num_threads(before + 1)
    >>> torch.get_num_threads() == before
    True
    """
    torch = sys.modules.get("torch")   # (not imported here: a run without networks need not load torch)
    before = torch.get_num_threads() if torch is not None else None
    try:
        yield
    finally:
        if before is not None and torch.get_num_threads() != before:
            torch.set_num_threads(before)


def _checked_history(game, history) -> tuple:
    """``history`` as cells, refused unless each is legal where it is played and the game goes on after them."""
    if isinstance(history, (str, bytes)) or not isinstance(history, Sequence):
        raise TypeError(f"history must be a sequence of cells (ints); got {type(history).__name__}.")
    most = _kernels().MAX_FIXED
    if len(history) > most:
        raise ValueError(f"history: at most {most} first attempts can be fixed; got {len(history)}.")
    state = game.new_initial_state()
    for k, cell in enumerate(history):
        if isinstance(cell, bool) or not isinstance(cell, (int, np.integer)) or cell not in state.legal_actions():
            raise ValueError(f"history[{k}]={cell!r} is not a legal move after history[:{k}]; the legal cells there "
                             f"are {state.legal_actions()}.")
        state.apply_action(int(cell))
        if state.is_terminal():
            raise ValueError(f"history ends the game at history[{k}]; measure below a history after which a "
                             "player still moves.")
    return tuple(int(c) for c in history)


def _history_sequences(board: Board, history: tuple) -> tuple:
    """Along ``history``: each decision as ``(player, dense index of its sequence, cell)``, and each player's
    dense index at the end (the attempts numbered as in :mod:`psro.measures.kernels`)."""
    n, off = board.num_cells, _kernels().offsets(board.num_cells)
    full = (1 << n) - 1
    tried, stones, code, k = [0, 0], [0, 0], [0, 0], [0, 0]
    decisions, me = [], 0
    for cell in history:
        bit = 1 << cell
        decisions.append((me, int(off[k[me]] + code[me]), cell))
        taken = bool(stones[1 - me] & bit)
        code[me] = code[me] * 2 * (n - k[me]) + 2 * bin((bit - 1) & ~tried[me] & full).count("1") + int(taken)
        k[me] += 1
        tried[me] |= bit
        if not taken:
            stones[me] |= bit
        if not taken or board.abrupt:
            me = 1 - me
    return decisions, [int(off[k[p]] + code[p]) for p in (0, 1)]


def _board_exploitability(board: Board, profile, history: tuple = (), responses: Sequence = ()) -> tuple:
    """``(values, best-response values, response errors)`` of ``profile`` on ``board`` (below ``history``)."""
    kernels = _kernels()
    tables = board_tables(board) if not history else _history_tables(board, history)
    decisions, ends = _history_sequences(board, history)
    n = board.num_cells
    m = max(tables.num_sequences)
    plans = np.zeros((2, m), dtype=np.float64)
    fixed = [[(tables.index[p, s], cell) for q, s, cell in decisions if q == p] for p in (0, 1)]
    plan = [np.empty(tables.num_sequences[p], dtype=np.float64) for p in (0, 1)]
    for p in (0, 1):
        policies, weights = _members(profile[p], p)
        for policy, weight in zip(policies, weights):
            if weight > 0:
                _plan(kernels, tables, p, policy, plan[p], fixed[p])
                plans[p, :plan[p].size] += weight * plan[p]
    value, grad = kernels.evaluate(n, board.abrupt, board.win_table(), tables.index, plans, history)
    best_values = []
    off = kernels.offsets(n)
    for p in (0, 1):
        best = np.empty(tables.num_sequences[p], dtype=np.float64)
        kernels.best_response(n, off, tables.dense[p], tables.decision[p], tables.index[p], grad[p], best)
        best_values.append(float(best[tables.index[p, ends[p]]]))
    errors = []
    for p, policies in enumerate(responses):
        errors.append([])
        for policy in policies:
            swapped = plans.copy()
            _plan(kernels, tables, p, policy, plan[p], fixed[p])
            swapped[p] = 0.0
            swapped[p, :plan[p].size] = plan[p]
            own = kernels.evaluate(n, board.abrupt, board.win_table(), tables.index, swapped, history)[0]
            errors[p].append(best_values[p] - (own if p == 0 else -own))
    return [value, -value], best_values, errors


def _plan(kernels, tables: BoardTables, p: int, policy, out: np.ndarray, fixed=()) -> None:
    """``policy``'s realization plan over player ``p``'s compact sequences, into ``out``; at the compact sequences
    of ``fixed`` (``(sequence, cell)`` pairs: the moves of a history) it plays that cell."""
    board = tables.board
    n = board.num_cells
    off = kernels.offsets(n)
    rows = np.flatnonzero(tables.decision[p])
    table = np.zeros((tables.num_sequences[p], n), dtype=np.float64)
    uniform = _is_uniform(policy)
    if not uniform:
        _check_acts_on_tensors(policy, board)
    from psro.policies.acting import batch_probabilities

    for start in range(0, rows.size, BATCH):
        chunk = rows[start:start + BATCH]
        obs, mask = _tensors(kernels, tables, p, chunk)
        table[chunk] = (mask / mask.sum(axis=1, keepdims=True) if uniform else
                        _checked(batch_probabilities(policy, obs, mask), mask, tables, p, chunk))
    for s, cell in fixed:
        table[s] = 0.0
        table[s, cell] = 1.0
    kernels.plans_from_policy(n, off, tables.dense[p], tables.decision[p], tables.index[p], table, out)


def _tensors(kernels, tables: BoardTables, p: int, rows: np.ndarray) -> tuple:
    board = tables.board
    n = board.num_cells
    width = (9 if board.hex_layout else 3) * n + n * n
    obs = np.zeros((rows.size, width), dtype=np.float32)
    mask = np.ones((rows.size, n), dtype=bool)
    kernels.tensors(n, kernels.offsets(n), tables.dense[p][rows], p, board.hex_layout, obs, mask)
    return obs, mask


def _is_uniform(policy) -> bool:
    from psro.policies.acting import UniformPolicy

    return isinstance(policy, UniformPolicy) or type(policy).__name__ == "UniformRandomPolicy"


def _check_acts_on_tensors(policy, board: Board) -> None:
    from psro.policies.acting import policy_input

    if policy_input(policy) != "obs":
        raise TypeError(f"{type(policy).__name__} acts on states or information-state strings; on {board.key} the "
                        "exact evaluator asks policies that act on the information-state tensor "
                        "(probabilities_np(obs, mask), as the toolkit's networks do) or UniformRandomPolicy.")


def _checked(probs: np.ndarray, mask: np.ndarray, tables: BoardTables, p: int, rows: np.ndarray) -> np.ndarray:
    """Rows of a policy's probabilities, normalised; a row with a NaN, a negative, mass on an illegal action or
    a sum away from one is refused, naming its information set."""
    probs = np.asarray(probs, dtype=np.float64)
    total = probs.sum(axis=1)
    bad = ~np.isfinite(total) | np.any(probs < 0, axis=1) | np.any((probs > 1e-9) & ~mask, axis=1) \
        | (np.abs(total - 1.0) > 1e-5)
    if np.any(bad):
        row = int(np.argmax(bad))
        raise ValueError(f"player {p}'s policy gives {np.round(probs[row], 6).tolist()} at its information set "
                         f"{describe(tables, p, int(rows[row]))}: probabilities must be finite, non-negative, "
                         "zero on illegal actions (cells already tried) and sum to one.")
    return np.where(mask, probs, 0.0) / total[:, None]


def describe(tables: BoardTables, p: int, s: int) -> str:
    """Player ``p``'s compact sequence ``s`` in words.

    Examples
    --------
    >>> import pyspiel
    >>> tables = board_tables(board_of(pyspiel.load_game("dark_hex(num_rows=2,num_cols=2)")))
    >>> describe(tables, 1, 0), describe(tables, 1, 1)
    ('before any attempt', 'after attempts cell 0 placed')
    """
    kernels = _kernels()
    n = tables.board.num_cells
    cells, outcomes = np.zeros(n, np.int64), np.zeros(n, np.int64)
    k = kernels.decode(int(tables.dense[p][s]), n, kernels.offsets(n), cells, outcomes)
    if k == 0:
        return "before any attempt"
    return "after attempts " + ", ".join(f"cell {c} {'taken' if o else 'placed'}"
                                         for c, o in zip(cells[:k], outcomes[:k]))


def _tree_exploitability(game, profile, responses: Sequence = ()) -> tuple:
    """``(values, best-response values, response errors)`` of ``profile`` on the game's tree."""
    from psro.evaluation.exact import SequenceFormEvaluator
    from psro.oracles.exact import best_response
    from psro.policies import realization_plans
    from psro.sequence_form.game_tree import TreeTooLarge, build_game_tree

    try:
        tree = build_game_tree(game)
    except TreeTooLarge as exc:
        raise ValueError(f"the tree of {game} does not fit ({exc}); the exact evaluator covers {COVERED}. "
                         "Measure other large games with approx_gap (a lower bound).") from None
    if tree.num_players != 2:
        raise ValueError(f"exact_nash_conv measures two-player games; {game} has {tree.num_players} players.")
    plans = []
    for p, info in enumerate(tree.infostates):
        policies, weights = _members(profile[p], p)
        tables = np.stack([_tree_table(policy, tree, p) for policy in policies])
        plans.append(weights @ realization_plans(tables, info))
    evaluator = SequenceFormEvaluator(tree)
    values = evaluator.payoffs([x[None] for x in plans]).reshape(2)
    best = [float(best_response(tree, p, plans).value) for p in (0, 1)]
    errors = []
    for p, policies in enumerate(responses):
        errors.append([])
        for policy in policies:
            swapped = list(plans)
            swapped[p] = realization_plans(_tree_table(policy, tree, p)[None], tree.infostates[p])[0]
            errors[p].append(best[p] - float(evaluator.payoffs([x[None] for x in swapped]).reshape(2)[p]))
    return [float(v) for v in values], best, errors


def _tree_table(policy, tree, p: int) -> np.ndarray:
    """``policy`` over ``tree``'s infostates of ``p``: OpenSpiel policies asked at a state of each infostate."""
    from open_spiel.python.policy import Policy as OpenSpielPolicy

    from psro.policies import batch_probabilities, check_policy
    from psro.policies.population import tabular_policy
    from psro.sequence_form.game_tree import infostate_state, infostate_tensors

    if not isinstance(policy, OpenSpielPolicy):
        return tabular_policy(policy, tree, p)
    info = tree.infostates[p]
    states = [infostate_state(tree, p, i) for i in range(info.num_infostates)]
    probs = batch_probabilities(policy, infostate_tensors(tree, p), info.legal_mask.copy(), states=states,
                                players=[p] * len(states))
    return check_policy(probs, info, argname=f"profile[{p}]")[0]
