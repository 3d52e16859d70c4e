"""games.datasets: the published meta-games are package data of games, read through importlib.resources."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import games
from games import datasets


def test_reference_files_live_inside_the_games_package():
    package = Path(games.__file__).resolve().parent
    for name, filename in (("soccer", "soccer.txt"), ("rrps", "bot_table_file.txt")):
        entry = datasets.reference_file(name)
        assert entry.name == filename and entry.is_file()
        assert package in Path(str(entry)).resolve().parents
    readme = " ".join((package / "data" / "README.md").read_text().split())
    assert "open_spiel/data/paper_data" in readme and "Apache License, Version 2.0" in readme   # source, licence


def test_soccer_is_constant_sum_win_probabilities():
    g = datasets.load_soccer()
    p = g.payoffs[0]
    assert g.shape == (10, 10)
    np.testing.assert_allclose(p + p.T, 1.0, atol=1e-12)      # P(i beats j) + P(j beats i) = 1
    np.testing.assert_allclose(np.diag(p), 0.5, atol=1e-12)    # a mirror match is a coin flip
    assert ((p >= 0) & (p <= 1)).all() and g.is_constant_sum()


def test_rrps_table_has_every_ordered_pair_once():
    t = datasets.load_rrps_table()
    assert len(t) == 43 * 43 and not t.duplicated(["row_bot", "col_bot"]).any()
    g = datasets.rrps_game(scale=1e-3)
    assert g.strategy_names[0] == tuple(sorted(t["row_bot"].unique()))
    # returns per throw of a 1000-throw match lie in [-1, 1]
    assert np.abs(g.payoffs).max() <= 1.0


def test_user_files_and_their_errors(tmp_path):
    table = tmp_path / "table.txt"
    table.write_text("('a', 'a', 0.0)\n('a', 'b', 2.5)\n\n('b', 'a', -2.5)\n('b', 'b', 0.0)\n")
    g = datasets.rrps_game(datasets.load_rrps_table(table))
    np.testing.assert_array_equal(g.payoffs[0], [[0.0, 2.5], [-2.5, 0.0]])
    table.write_text("('a', 'a', 0.0)\nnot a tuple\n")
    with pytest.raises(ValueError, match=r"table\.txt:2: expected"):
        datasets.load_rrps_table(table)
    square = tmp_path / "soccer.txt"
    square.write_text("0.5 0.4 0.3\n0.6 0.5 0.2\n")
    with pytest.raises(ValueError, match="square matrix"):
        datasets.load_soccer(square)
    with pytest.raises(ValueError, match="name must be one of"):
        datasets.reference_file("chess")


def test_rrps_table_is_complete():
    t = datasets.load_rrps_table()
    assert len(t) == 43 * 43
    g = datasets.rrps_game()
    assert "iocainebot" in g.strategy_names[0]
    # a bot against itself is a fair match on average
    assert np.abs(np.diag(g.payoffs[0])).max() < 50
