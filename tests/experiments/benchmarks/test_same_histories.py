"""experiments/benchmarks/same_histories.py: two histories are the same when every shared column but the time
columns holds the same values; the columns that differ, and those only one history has, are named."""

from __future__ import annotations

import pandas as pd

from experiments.benchmarks import same_histories as bench


def test_time_columns_are_left_out_and_a_changed_value_is_named():
    before = pd.DataFrame({"iteration": [0, 1], "gap": [0.5, 0.25], "wall_time": [1.0, 2.0], "time_oracle": [0.1, 0.2],
                           "exact_gap_time": [0.0, 3.0], "old": [1, 2]})
    after = before.drop(columns="old").assign(wall_time=[5.0, 6.0], time_oracle=[0.3, 0.4], new=[7, 8])
    assert bench.compare(before, after) == {"rows": "2/2", "differ": [], "only_before": ["old"],
                                            "only_after": ["new"]}
    assert bench.compare(before, after.assign(gap=[0.5, 0.25 + 1e-16]))["differ"] == ["gap"]
    assert bench.compare(before, after.iloc[:1])["differ"] == ["iteration", "gap"]   # a row short
    # a NaN matches a NaN (an unmeasured row in both)
    with_nan = before.assign(gap=[float("nan"), 0.25])
    assert bench.compare(with_nan, with_nan.copy())["differ"] == []
