"""The run directory's plot: approx_gap drawn as what it is (a lower bound with error bars, at its value)."""

import numpy as np
import pandas as pd

from psro.run.run_dir import history_figure

NO_TREE = pd.DataFrame({"iteration": [0, 1, 2, 3], "gap": [np.nan] * 4, "wall_time": [1.0, 2.0, 3.0, 4.0],
                        "approx_gap": [1.5, np.nan, -0.2, 0.0], "approx_gap_stderr": [0.1, np.nan, 0.15, 0.05]})


def test_approx_gap_is_drawn_at_its_value_with_two_se_error_bars():
    fig = history_figure(NO_TREE)
    for ax in fig.axes:
        (container,) = ax.containers   # one errorbar per panel
        x, y = container.lines[0].get_data()
        assert list(y) == [1.5, -0.2, 0.0]                  # negative and zero values where they are, no floor
        segments = container.lines[2][0].get_segments()
        assert [round(s[1][1] - s[0][1], 12) for s in segments] == [0.4, 0.6, 0.2]   # +- 2 se
        assert ax.get_legend().get_texts()[0].get_text() == "approx_gap (lower bound, +- 2 se)"
    assert [list(c.lines[0].get_data()[0]) for c in (ax.containers[0] for ax in fig.axes)] == [[0, 2, 3],
                                                                                              [1.0, 3.0, 4.0]]
    assert fig.axes[0].get_yscale() == "symlog" and fig.axes[0].get_ylim()[0] < -0.2


def test_exact_gap_alone_keeps_the_log_axis():
    fig = history_figure(pd.DataFrame({"iteration": [0, 1], "gap": [1.0, 0.0], "wall_time": [0.1, 0.2]}))
    assert fig.axes[0].get_yscale() == "log"
    assert list(fig.axes[0].lines[0].get_ydata()) == [1.0, 1e-16]   # an exact 0 at the floor of the log axis
    assert not fig.axes[0].containers
