"""games.trajectories: the table format, its validation (naming row and column) and CSV / Parquet files."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyspiel
import pytest

from games.datasets import collect
from games.trajectories import (
    COLUMNS,
    episodes,
    load_trajectories,
    save_trajectories,
    validate_trajectories,
)


@pytest.fixture(scope="module")
def kuhn_table() -> pd.DataFrame:
    game = pyspiel.load_game("kuhn_poker")
    return collect(game, pyspiel.UniformRandomPolicy(game), episodes=30, seed=3)


def _refused(df: pd.DataFrame, row: int | None, column: str) -> str:
    with pytest.raises(ValueError) as info:
        validate_trajectories(df)
    message = str(info.value)
    assert f"column {column!r}" in message, message
    if row is not None:
        assert f"row {row}," in message, message
    return message


def test_a_collected_table_is_valid_and_has_the_documented_columns(kuhn_table):
    assert validate_trajectories(kuhn_table) is kuhn_table
    assert tuple(kuhn_table.columns[: len(COLUMNS)]) == COLUMNS
    assert kuhn_table.dtypes["episode"] == np.int64 and kuhn_table.dtypes["done"] == np.dtype(bool)
    # a Kuhn episode: two chance deals, then 2 or 3 bets; its return is zero-sum and at most 2 chips
    for e in episodes(kuhn_table):
        assert e.players[:2] == (-1, -1) and len(e.actions) in (4, 5)
        assert e.returns.sum() == 0 and abs(e.returns[0]) in (1.0, 2.0)


def test_missing_column_is_named(kuhn_table):
    message = _refused(kuhn_table.drop(columns=["legal_actions"]), None, "legal_actions")
    assert "missing" in message and "row 0" in message


def test_action_not_legal_names_row_and_column(kuhn_table):
    bad = kuhn_table.copy()
    r = int(np.flatnonzero(bad["player"].to_numpy() == 0)[2])
    bad.loc[r, "legal_actions"] = "0"  # the action taken there is no longer legal...
    bad.loc[r, "action"] = 1
    if r + 1 < len(bad) and bad.loc[r + 1, "episode"] == bad.loc[r, "episode"]:
        bad.loc[r + 1, "history"] = bad.loc[r, "history"] + " 1"
    message = _refused(bad, r, "action")
    assert "not one of the legal actions (0,)" in message


def test_episode_without_done_row_names_row_and_column(kuhn_table):
    bad = kuhn_table.copy()
    last = int(np.flatnonzero(bad["episode"].to_numpy() == 4)[-1])
    bad.loc[last, "done"] = False
    assert "episode 4 has no done row" in _refused(bad, last, "done")
    # and the end of the table, where an episode is cut short
    message = _refused(kuhn_table.iloc[:-1].reset_index(drop=True), len(kuhn_table) - 2, "done")
    assert "has no done row" in message


def test_early_done_steps_out_of_order_and_broken_histories(kuhn_table):
    bad = kuhn_table.copy()
    bad.loc[2, "done"] = True  # row 2 is a decision in the middle of episode 0
    assert "before the end of episode 0" in _refused(bad, 2, "done")
    bad = kuhn_table.copy()
    bad.loc[5, "step"] = 7
    assert "steps out of order" in _refused(bad, 5, "step")
    swapped = kuhn_table.iloc[[0, 2, 1, *range(3, len(kuhn_table))]].reset_index(drop=True)
    _refused(swapped, 1, "step")
    bad = kuhn_table.copy()
    bad.loc[3, "history"] = "9 9"
    _refused(bad, 3, "history")


def test_wrong_dtypes_and_rewards_name_row_and_column(kuhn_table):
    bad = kuhn_table.copy()
    bad["action"] = bad["action"].astype(float)
    bad.loc[6, "action"] = 0.5
    assert "expected an integer" in _refused(bad, 6, "action")
    bad = kuhn_table.copy().astype({"player": object})
    bad.loc[4, "player"] = "zero"
    _refused(bad, 4, "player")
    bad = kuhn_table.copy().astype({"done": object})
    bad.loc[3, "done"] = "yes"
    _refused(bad, 3, "done")
    bad = kuhn_table.copy()
    bad.loc[2, "reward"] = "0.0"  # one entry for two players
    _refused(bad, 2, "reward")
    bad = kuhn_table.copy()
    bad.loc[0, "infostate"] = "chance knows"
    _refused(bad, 0, "infostate")
    bad = kuhn_table.copy()
    bad.loc[9, "legal_actions"] = "zero one"
    _refused(bad, 9, "legal_actions")


def test_rows_of_an_episode_must_stay_together(kuhn_table):
    first = kuhn_table[kuhn_table["episode"] == 0]
    rest = kuhn_table[kuhn_table["episode"] != 0]
    table = pd.concat([first.iloc[:2], rest, first.iloc[2:]], ignore_index=True)
    assert "resumes after other episodes" in _refused(table, 2 + len(rest), "episode")


def test_csv_round_trip_keeps_empty_strings_and_validates(tmp_path, kuhn_table):
    path = save_trajectories(kuhn_table, tmp_path / "kuhn.csv")
    back = load_trajectories(path)
    pd.testing.assert_frame_equal(back, kuhn_table)
    assert back.loc[0, "history"] == "" and back.loc[0, "infostate"] == ""
    broken = kuhn_table.copy()
    broken.loc[3, "action"] = 5
    broken.to_csv(tmp_path / "broken.csv", index=False)
    with pytest.raises(ValueError, match=r"row 3, column 'action'"):
        load_trajectories(tmp_path / "broken.csv")
    with pytest.raises(ValueError, match=r"\.csv or \.parquet"):
        save_trajectories(kuhn_table, tmp_path / "kuhn.txt")


def test_parquet_round_trips_with_pyarrow_and_otherwise_says_what_to_install(tmp_path, kuhn_table):
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pip install pyarrow"):
            save_trajectories(kuhn_table, tmp_path / "kuhn.parquet")
        (tmp_path / "other.parquet").write_bytes(b"PAR1")
        with pytest.raises(ImportError, match="pip install pyarrow"):
            load_trajectories(tmp_path / "other.parquet")
    else:
        back = load_trajectories(save_trajectories(kuhn_table, tmp_path / "kuhn.parquet"))
        pd.testing.assert_frame_equal(back, kuhn_table)


def test_not_a_dataframe_and_empty_tables_are_refused():
    with pytest.raises(TypeError, match="pandas.DataFrame"):
        validate_trajectories({"episode": [0]})
    with pytest.raises(ValueError, match="no rows"):
        validate_trajectories(pd.DataFrame({c: [] for c in COLUMNS}))


def test_a_missing_empty_or_binary_file_is_refused_naming_the_path(tmp_path):
    # issue 23 item 12: these ended in pandas' or the codec's own messages
    with pytest.raises(FileNotFoundError, match="path: no trajectory file at"):
        load_trajectories(tmp_path / "missing.csv")
    (tmp_path / "empty.csv").write_bytes(b"")
    with pytest.raises(ValueError, match="path: the trajectory file .* is empty"):
        load_trajectories(tmp_path / "empty.csv")
    (tmp_path / "binary.csv").write_bytes(bytes(range(128, 256)) * 4)
    with pytest.raises(ValueError, match="path: .* is not a UTF-8 CSV trajectory table"):
        load_trajectories(tmp_path / "binary.csv")
    (tmp_path / "folder.csv").mkdir()
    with pytest.raises(ValueError, match="path: .* is not a regular file"):
        load_trajectories(tmp_path / "folder.csv")


# -- issue 57 item 3: a table is size-checked before it is read, by the check of a checkpoint's files ----------------


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_huge_sparse_table_is_refused_before_it_is_read(tmp_path, monkeypatch, suffix):
    import time

    from games.memory_limit import MemoryLimitExceeded, check_file

    monkeypatch.setenv("PSRO_MAX_MEMORY", "1G")
    path = tmp_path / f"big{suffix}"
    with open(path, "wb") as fh:
        fh.write(",".join(COLUMNS).encode() + b"\n")   # a valid header, then a 20 GB hole (sparse: nothing on disk)
        fh.truncate(20 * 10**9)
    start = time.perf_counter()
    with pytest.raises(MemoryLimitExceeded) as error:
        load_trajectories(path)
    assert time.perf_counter() - start < 1.0
    with pytest.raises(MemoryLimitExceeded) as same:
        check_file(path)   # (what a checkpoint's file gets: the same message)
    assert str(error.value) == str(same.value)
    assert "big" in str(error.value) and "(2e+10 bytes)" in str(error.value) and "memory limit of 1 GiB" in str(
        error.value)
