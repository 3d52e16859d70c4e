"""The compiled walks against pyspiel: the rules, the numbering of sequences and the information-state tensors."""

import numpy as np
import pyspiel
import pytest

pytest.importorskip("numba")

from psro.measures import kernels  # noqa: E402
from psro.measures.boards import board_of  # noqa: E402

GAMES = ["phantom_ttt", "phantom_ttt(gameversion=abrupt)", "dark_hex(num_rows=2,num_cols=3)",
         "dark_hex(num_rows=3,num_cols=2,gameversion=adh)", "dark_hex(num_rows=3,num_cols=3)",
         "dark_hex(num_rows=3,num_cols=3,gameversion=adh)"]


def _sequence_index(n, attempts):
    """The dense index of a sequence of (cell, taken) attempts, numbered as the kernels number it."""
    code, tried = 0, 0
    for k, (cell, taken) in enumerate(attempts):
        rank = sum(1 for c in range(cell) if not tried >> c & 1)
        code = code * 2 * (n - k) + 2 * rank + int(taken)
        tried |= 1 << cell
    return int(kernels.offsets(n)[len(attempts)]) + code


@pytest.mark.parametrize("name", GAMES)
def test_rules_and_tensors_equal_pyspiel_on_random_plays(name):
    """Replay random games in pyspiel beside the board's rules: who moves, when it ends, the returns, and at
    every decision the tensor and legal mask the kernels derive from the mover's sequence alone."""
    game = pyspiel.load_game(name)
    board = board_of(game)
    n = board.num_cells
    win = board.win_table()
    rng = np.random.default_rng(0)
    off = kernels.offsets(n)
    width = len(game.new_initial_state().information_state_tensor(0))
    for _ in range(40):
        state = game.new_initial_state()
        stones, attempts, player = [0, 0], [[], []], 0
        while True:
            assert state.current_player() == player
            obs, mask = np.zeros((1, width), np.float32), np.ones((1, n), bool)
            kernels.tensors(n, off, np.array([_sequence_index(n, attempts[player])]), player, board.hex_layout,
                            obs, mask)
            np.testing.assert_array_equal(obs[0], state.information_state_tensor(player))
            np.testing.assert_array_equal(np.flatnonzero(mask[0]), state.legal_actions())
            cell = int(rng.choice(state.legal_actions()))
            state.apply_action(cell)
            taken = bool(stones[1 - player] >> cell & 1)
            attempts[player].append((cell, taken))
            if taken:
                player = 1 - player if board.abrupt else player
                continue
            stones[player] |= 1 << cell
            full = (stones[0] | stones[1]) == (1 << n) - 1
            if win[player, stones[player]] or full:
                assert state.is_terminal()
                expected = 0.0 if not win[player, stones[player]] else (1.0 if player == 0 else -1.0)
                assert state.returns() == [expected, -expected]
                break
            player = 1 - player


def test_decode_inverts_the_numbering():
    n, off = 4, kernels.offsets(4)
    cells, outcomes = np.zeros(n, np.int64), np.zeros(n, np.int64)
    attempts = [(2, True), (0, False), (3, True)]
    k = kernels.decode(_sequence_index(n, attempts), n, off, cells, outcomes)
    assert list(zip(cells[:k].tolist(), outcomes[:k].astype(bool).tolist())) == attempts


def test_discovery_counts_on_a_board_counted_by_hand():
    """Two cells, whoever holds both wins, classical. x places on either cell and never moves again (o then
    fills the board: a draw). o tries either cell: the free one (placed, the board is full) or x's (taken, then it
    places on the other)."""
    win = np.zeros((2, 4), dtype=bool)
    win[:, 3] = True
    reached, decision = kernels.discover(2, False, win)
    assert int(decision[0].sum()) == 1 and int(reached[0].sum()) == 1 + 2
    assert int(decision[1].sum()) == 1 + 2 and int(reached[1].sum()) == 1 + 4 + 2


def test_a_second_process_loads_the_walks_from_numbas_cache():
    """The walks are loops over their own stack, not recursive functions, so numba's cache keeps them: a process
    after the first compiles none of them (the recursive walks compiled for 6 s in every process)."""
    import subprocess
    import sys

    probe = ("import numpy as np\nfrom psro.measures import kernels as k\n"
             "win = np.zeros((2, 4), dtype=bool); win[:, 3] = True\n"
             "reached, decision = k.discover(2, False, win)\n"
             "index = np.full((2, reached.shape[1]), -1, np.int32)\n"
             "for p in (0, 1): index[p, np.flatnonzero(reached[p])] = np.arange(int(reached[p].sum()))\n"
             "k.evaluate(2, False, win, index, np.ones((2, int(reached.sum(axis=1).max()))))\n"
             "print(sum(k._walk_all.stats.cache_hits.values()), sum(k._walk_all.stats.cache_misses.values()))")
    runs = [subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
            for _ in range(2)]
    assert all(run.returncode == 0 for run in runs), runs[-1].stderr[-2000:]
    assert runs[1].stdout.split() == ["1", "0"]   # loaded (with the walks it calls), not compiled
