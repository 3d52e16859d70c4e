"""The sequence tables on disk: written once, read back only when their digest and shape check."""

import logging

import numpy as np
import pyspiel
import pytest

from psro.measures import cache

pytest.importorskip("numba")


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path))
    return tmp_path


def test_arrays_read_back_and_a_damaged_file_is_ignored(folder, caplog):
    arrays = {"a": np.arange(5, dtype=np.int32), "b": np.array([True, False])}
    cache.save("game()", arrays)
    back = cache.load("game()", ("a", "b"))
    assert all(np.array_equal(back[k], arrays[k]) for k in arrays)
    assert cache.load("other()", ("a", "b")) is None
    path = cache.cache_path("game()")
    with np.load(path) as data:   # other contents under the old digest
        np.savez(path, digest=data["digest"], a=np.arange(1, 6, dtype=np.int32), b=data["b"])
    with caplog.at_level(logging.WARNING):
        assert cache.load("game()", ("a", "b")) is None
    assert "digest does not check" in caplog.text
    data = bytearray(path.read_bytes())   # one bit flipped: the zip's own check refuses it first
    data[data.index(np.arange(1, 6, dtype=np.int32).tobytes()) + 4] ^= 1
    path.write_bytes(bytes(data))
    assert cache.load("game()", ("a", "b")) is None


def test_a_link_and_the_off_switch_are_not_read(folder, monkeypatch):
    cache.save("game()", {"a": np.zeros(2)})
    path = cache.cache_path("game()")
    target = path.with_name("elsewhere.npz")
    path.rename(target)
    path.symlink_to(target)
    assert cache.load("game()", ("a",)) is None
    monkeypatch.setenv(cache.ENV_VAR, "off")
    assert cache.cache_path("game()") is None and cache.load("game()", ("a",)) is None


def test_board_tables_are_written_once_and_read_back_equal(folder, monkeypatch, caplog):
    from psro.measures import exact
    from psro.measures.boards import board_of

    monkeypatch.setattr(exact, "DISK_CELLS", 4)
    monkeypatch.setattr(exact, "_TABLES", {})
    board = board_of(pyspiel.load_game("dark_hex(num_rows=2,num_cols=2,gameversion=adh)"))
    built = exact.board_tables(board)
    assert exact.cache.cache_path(board.key).is_file()
    monkeypatch.setattr(exact, "_TABLES", {})
    with caplog.at_level(logging.INFO, logger="psro.measures.exact"):
        read = exact.board_tables(board)
    assert "read from the cache" in caplog.text
    assert all(np.array_equal(a, b) for a, b in zip(built.dense + built.decision, read.dense + read.decision))
    assert np.array_equal(built.index, read.index)
