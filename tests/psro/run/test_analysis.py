"""psro.run.analysis and ``psro compare``: tidy histories, aligned curves with bootstrap bands over seeds, final values
with intervals (issue 26, item 2)."""

import numpy as np
import pandas as pd
import pytest

from psro.config.model import PSROConfig
from psro.run.analysis import aggregate_curves, compare_runs, final_values, load_histories
from psro.run.cli import main
from psro.run.sweep import run_sweep


def runs_table(curves: dict, group="a", x="wall_time") -> pd.DataFrame:
    """``{run: (xs, ys)}`` as a tidy table."""
    return pd.concat([pd.DataFrame({"group": group, "run": run, x: xs, "gap": ys})
                      for run, (xs, ys) in curves.items()], ignore_index=True)


def test_runs_of_different_lengths_are_interpolated_never_extrapolated():
    # r0: gap = 10 - x on [0, 4]; r1: gap = 2x on [1, 3] (its own x values, not r0's)
    table = runs_table({"r0": ([0, 1, 2, 4], [10, 9, 8, 6]), "r1": ([1, 3], [2, 6])})
    curves = aggregate_curves(table, x="wall_time", points=9, resamples=200)
    assert curves["x"].tolist() == pytest.approx([0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4])   # the span of all runs
    inside = (curves["x"] >= 1) & (curves["x"] <= 3)
    assert curves["runs"].tolist() == [1, 1, 2, 2, 2, 2, 2, 1, 1]   # r1 only inside its own range
    expected = [(10 - x) if not 1 <= x <= 3 else ((10 - x) + 2 * x) / 2 for x in curves["x"]]
    assert curves["estimate"].tolist() == pytest.approx(expected)
    assert curves.loc[~inside, "low"].isna().all() and curves.loc[inside, "low"].notna().all()   # one run: no band
    assert (curves["of"] == 2).all()


def test_runs_whose_x_ranges_do_not_overlap_still_give_a_curve():
    # wall times of a loaded machine: r0 on [0, 1], r1 on [2, 3]; each point is one run's own value
    table = runs_table({"r0": ([0, 1], [1.0, 0.5]), "r1": ([2, 3], [0.4, 0.2])})
    curves = aggregate_curves(table, x="wall_time", points=7, resamples=200)
    assert curves["runs"].tolist() == [1, 1, 1, 0, 1, 1, 1]
    assert curves["estimate"].iloc[3] != curves["estimate"].iloc[3]   # (NaN in the gap between them)
    assert curves["estimate"].iloc[[0, 2, 4, 6]].tolist() == pytest.approx([1.0, 0.5, 0.4, 0.2])


def test_interquartile_mean_drops_the_outer_quarters():
    table = runs_table({f"r{i}": ([0, 1], [v, v]) for i, v in enumerate([1.0, 2.0, 3.0, 4.0, 100.0])})
    curves = aggregate_curves(table, x="wall_time", statistic="iqm", points=2, resamples=200)
    assert curves["estimate"].tolist() == pytest.approx([3.0, 3.0])   # mean of 2, 3, 4
    mean = aggregate_curves(table, x="wall_time", statistic="mean", points=2, resamples=200)
    assert mean["estimate"].tolist() == pytest.approx([22.0, 22.0])


def test_the_bootstrap_resamples_runs_not_points():
    # each run is its own constant plus the same slope: resampling whole runs moves the band up and down
    # rigidly, so its width is the same at every x; resampling points independently would not keep it exact
    rng = np.random.default_rng(0)
    offsets = rng.normal(size=8)
    xs = np.linspace(0, 1, 6)
    table = runs_table({f"r{i}": (xs, c + 3 * xs) for i, c in enumerate(offsets)})
    curves = aggregate_curves(table, x="wall_time", points=6, resamples=500)
    width_low = (curves["estimate"] - curves["low"]).to_numpy()
    width_high = (curves["high"] - curves["estimate"]).to_numpy()
    assert np.ptp(width_low) == pytest.approx(0, abs=1e-9) and np.ptp(width_high) == pytest.approx(0, abs=1e-9)
    assert (width_low > 0).all() and (width_high > 0).all()
    assert (curves["low"] <= curves["estimate"]).all() and (curves["estimate"] <= curves["high"]).all()


def test_final_values_are_each_runs_last_measured_value():
    # approx_gap measured on some rows only: the last measured one counts
    table = pd.DataFrame({"group": "a", "run": ["r0"] * 3 + ["r1"] * 3, "iteration": [0, 1, 2] * 2,
                          "gap": [3.0, 2.0, 1.0, 5.0, 4.0, 3.0], "approx_gap": [np.nan, 0.5, np.nan, 1.5, np.nan,
                                                                                np.nan]})
    final = final_values(table, y="approx_gap", resamples=200).iloc[0]
    assert final["estimate"] == pytest.approx(1.0) and final["runs"] == 2
    assert final["low"] == pytest.approx(0.5) and final["high"] == pytest.approx(1.5)   # the two resampled runs
    single = final_values(table[table["run"] == "r0"], y="gap").iloc[0]
    assert single["estimate"] == 1.0 and np.isnan(single["low"])   # one run: no interval


def test_unknown_column_lists_the_columns():
    table = runs_table({"r0": ([0, 1], [1, 0])})
    with pytest.raises(ValueError, match=r"x: 'env_step' is not a numeric history column .* \['wall_time', 'gap'\]"):
        aggregate_curves(table, x="env_step")
    with pytest.raises(ValueError, match="statistic: must be one of"):
        aggregate_curves(table, x="wall_time", statistic="median")


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep")
    run_sweep(PSROConfig(iterations=3, target_gap=None, rank_population=False), out, seeds="0-2",
              grid={"meta_solver": ["nash", "uniform"]})
    return out


def test_load_histories_of_a_sweep_and_of_single_runs(sweep_dir):
    table = load_histories([sweep_dir])
    assert set(table["group"]) == {"meta_solver=nash", "meta_solver=uniform"}
    assert table.groupby("group")["run"].nunique().tolist() == [3, 3]
    assert sorted(table["seed"].unique().tolist()) == [0, 1, 2]
    one = load_histories(sweep_dir / "meta_solver=nash,seed=0")
    assert one["group"].unique().tolist() == ["psro"] and len(one) == 4
    with pytest.raises(ValueError, match="does not exist"):
        load_histories([sweep_dir / "nothing"])


def test_psro_compare_writes_a_figure_and_tables(sweep_dir, tmp_path, capsys):
    out = tmp_path / "cmp"
    assert main(["compare", str(sweep_dir), "--x", "wall_time", "--y", "gap", "--out", str(out),
                 "--resamples", "200"]) == 0
    assert (out / "comparison.png").stat().st_size > 10_000
    final = pd.read_csv(out / "final.csv")
    assert final["group"].tolist() == ["meta_solver=nash", "meta_solver=uniform"]
    assert (final["runs"] == 3).all() and (final["low"] <= final["estimate"]).all()
    assert (final["estimate"] <= final["high"]).all()
    # Kuhn with exact oracles is deterministic given the meta-solver: every seed ends at the same gap
    histories = load_histories([sweep_dir])
    last = histories.groupby("run").tail(1).groupby("group")["gap"].mean()
    assert final.set_index("group")["estimate"].to_dict() == pytest.approx(last.to_dict())
    assert "| meta_solver=nash | mean |" in (out / "final.md").read_text()
    capsys.readouterr()
    assert main(["compare", str(sweep_dir), "--y", "gapp", "--out", str(out)]) == 2
    assert "'gapp' is not a numeric history column" in capsys.readouterr().err


def test_compare_result_holds_the_curves(sweep_dir, tmp_path):
    result = compare_runs([sweep_dir], tmp_path, x="iteration", statistic="iqm", resamples=200)
    assert set(result.curves["group"]) == {"meta_solver=nash", "meta_solver=uniform"}
    assert result.curves["x"].max() == 3.0


def test_few_runs_are_flagged_in_the_table_and_the_figure(tmp_path, caplog):
    # issue 36 item 13: with 3 seeds the "95% interval" equals the seeds' min-max, and nothing said so
    import logging

    table = runs_table({f"r{i}": ([0, 1], [1.0, v]) for i, v in enumerate([0.2, 0.5, 0.9])}, x="iteration")
    final = final_values(table, resamples=200)
    assert final["note"].iloc[0] == "only 3 runs: the 95% interval is about the runs' min-max and covers less than 95%"
    assert final["low"].iloc[0] == pytest.approx(0.2) and final["high"].iloc[0] == pytest.approx(0.9)
    for i in range(3):
        run = tmp_path / f"r{i}"
        run.mkdir()
        table[table.run == f"r{i}"].drop(columns=["group", "run"]).to_csv(run / "history.csv", index=False)
    with caplog.at_level(logging.WARNING, logger="psro.run.analysis"):
        result = compare_runs([tmp_path / f"r{i}" for i in range(3)], tmp_path / "out", resamples=200)
    assert "only 3 runs" in caplog.text and "only 3 runs" in result.table_md.read_text()


def test_compare_writes_nothing_through_a_link_in_out(sweep_dir, tmp_path):
    from psro.run.run_files import UnsafePath

    victim = tmp_path / "victim"
    victim.write_text("precious")
    out = tmp_path / "C"
    out.mkdir()
    for name in ("final.md", "final.csv"):
        (out / name).symlink_to(victim)
        with pytest.raises(UnsafePath, match="symbolic link"):
            compare_runs([sweep_dir], out, resamples=50)
        (out / name).unlink()
        assert list(out.iterdir()) == []   # (refused before anything was written)
    assert victim.read_text() == "precious"
