"""experiments/benchmarks/iig_comparison.py: each side is its run config until the budget, then the exact NashConv
of its output off the clock, with where the training time went; the summary is the median over seeds."""

from __future__ import annotations

import subprocess

import pandas as pd
import pytest

from experiments.benchmarks import iig_comparison as bench
from psro.measures.exact import exact_nash_conv_of_run


def test_the_summary_is_the_median_over_seeds_of_each_side():
    table = pd.DataFrame([
        {"side": "a", "seed": 0, "iterations": 4, "decisions": 10, "exact_nash_conv": 1.0},
        {"side": "a", "seed": 1, "iterations": 6, "decisions": 30, "exact_nash_conv": 3.0},
        {"side": "a", "seed": 2, "iterations": 8, "decisions": 20, "exact_nash_conv": 2.0},
        {"side": "b", "seed": 0, "iterations": 1, "decisions": 5, "exact_nash_conv": float("nan")},
    ])
    summary = bench.summary(table)
    assert summary.to_dict("records") == [{"side": "a", "seeds": 3, "median exact NashConv": 2.0, "lowest": 1.0,
                                           "highest": 3.0, "median iterations": 6, "median decisions": 20}]


def test_the_psro_sides_run_each_games_deep_config_and_a_silent_failure_is_a_row(tmp_path, monkeypatch):
    """A PSRO side reads the game's own deep config (dark hex's on dark hex); a run killed with nothing on stderr
    (out of memory) is an error row naming its exit status."""
    commands = []

    def killed(command, **kwargs):
        commands.append(command)
        return subprocess.CompletedProcess(command, -9, stdout=None, stderr="")

    monkeypatch.setattr(bench.subprocess, "run", killed)
    for game, config in [("dark_hex3_abrupt", "dark_hex3_deep.yaml"), ("phantom_ttt", "phantom_ttt_deep.yaml")]:
        row = bench.run_side("psro_model_br", 3, bench.GAMES[game], 1.0, tmp_path)
        assert row == {"side": "psro_model_br", "seed": 3, "error": "exit status -9, nothing on stderr"}
        assert str(bench.CONFIGS / config) in commands[-1] and f"game={bench.GAMES[game]}" in commands[-1]


@pytest.mark.slow
def test_a_side_trains_until_its_budget_and_its_last_row_is_the_exact_nash_conv_of_its_output(tmp_path):
    # measured at 1 s too: the run stops there, is measured, and resumes with the measurement's time added
    row = bench.run_side("psro_model_br", 0, bench.GAMES["dark_hex2"], 2.0, tmp_path / "runs", keep=tmp_path / "kept",
                         at=(1.0, 5.0))
    assert "error" not in row, row
    history = pd.read_csv(tmp_path / "kept" / "psro_model_br-0.csv")
    assert row["iterations"] == int(history["iteration"].iloc[-1]) >= 1
    measured = history[history["exact_gap_time"].fillna(0) > 0]
    assert len(measured) == 2 and row["exact_at_1s"] == measured["gap"].iloc[0] and "exact_at_5s" not in row
    assert measured["wall_time"].iloc[0] - measured["exact_gap_time"].iloc[0] >= 1.0
    assert row["training_wall_s"] >= 2.0 and row["exact_eval_s"] > 0.0
    assert [row[f"response_error_{p}"] for p in (0, 1)] == [round(history[f"response_error_{p}"].iloc[-1], 4)
                                                            for p in (0, 1)]
    assert min(row["response_error_0"], row["response_error_1"]) >= 0.0
    assert row["oracle_s"] == round(float(history["time_oracle"].sum()), 1)
    assert row["oracle_s"] + row["evaluation_s"] + row["meta_solve_s"] <= row["training_wall_s"] + 0.1
    # the same NashConv, measured again from the run directory's saved populations and meta-strategy
    again = exact_nash_conv_of_run(tmp_path / "runs" / "psro_model_br-0").nash_conv
    assert row["exact_nash_conv"] == pytest.approx(again, rel=1e-9, abs=1e-12) and row["exact_nash_conv"] >= 0.0


@pytest.mark.slow
@pytest.mark.parametrize("side", bench.OPENSPIEL_SIDES)
def test_an_openspiel_side_trains_until_its_budget_then_its_output_is_measured_exactly(side):
    row = bench.run_side(side, 0, bench.GAMES["dark_hex2"], 10.0, None, at=(5.0,))
    assert "error" not in row, row
    assert 10.0 <= row["training_wall_s"] < 11.0
    assert 0.0 <= row["exact_nash_conv"] <= 4.0   # (payoffs in [-1, 1]: each gain is at most 2)
    assert 0.0 <= row["exact_at_5s"] <= 4.0
    if side == "openspiel_nfsp":   # (blocks of 1,000 episodes; a 2x2 episode takes at least 2 decisions)
        assert row["iterations"] % 1000 == 0 and row["decisions"] >= row["iterations"] * 2
