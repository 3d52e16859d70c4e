"""Agent-versus-task Nash averaging: hand-derived values, OpenSpiel's a_v_a=False, copies and invariances."""

import numpy as np
import pandas as pd
import pyspiel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from open_spiel.python.algorithms.nash_averaging import nash_averaging as openspiel_nash_averaging

from games import NormalFormGame
from ranking import nash_averaging
from ranking.nash_averaging_ratings import agent_task_scores

# OpenSpiel's nash_averaging_test AvT tables: rows 0..2 are dominated by row 3 (game1);
# rows 3 and 4 are identical dominant agents (game2).
GAME1 = np.array([[0.0, 0.0, 0.0], [1.0, 10.0, 100.0], [2.0, 20.0, 200.0], [3.0, 30.0, 300.0]])
GAME2 = np.vstack([GAME1, GAME1[3]])


def avt(scores, **kw):
    return nash_averaging(scores, mode="agent_vs_task", **kw)


def test_specialists_and_a_generalist_by_hand():
    # Optimal agent mixes x satisfy x0 + x2/2 >= 1/2 and x1 + x2/2 >= 1/2, i.e. x0 = x1 = t;
    # entropy -2t log t - (1-2t) log(1-2t) peaks at t = 1/3. The tasks' only optimum is (1/2, 1/2).
    out = avt([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    np.testing.assert_allclose(out.agents["nash"], [1 / 3] * 3, atol=1e-12)
    np.testing.assert_allclose(out.agents["rating"], [0.5] * 3, atol=1e-12)
    np.testing.assert_allclose(out.tasks["nash"], [0.5, 0.5], atol=1e-12)
    np.testing.assert_allclose(out.tasks["rating"], [-0.5, -0.5], atol=1e-12)
    assert abs(out.value - 0.5) < 1e-12


def test_openspiel_dominated_and_dominant_agents():
    out = avt(GAME1)
    np.testing.assert_allclose(out.agents["nash"], [0, 0, 0, 1], atol=1e-12)
    out = avt(GAME2)
    np.testing.assert_allclose(out.agents["nash"], [0, 0, 0, 0.5, 0.5], atol=1e-12)
    np.testing.assert_allclose(out.agents["rating"].iloc[3:], 1.0, atol=1e-12)
    # Every task is equally hard for the dominant agents (normalised score 1): tasks spread uniformly.
    np.testing.assert_allclose(out.tasks["nash"], 1 / 3, atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_matches_openspiel_avt(seed):
    rng = np.random.default_rng(seed)
    s = rng.standard_normal((3 + seed % 3, 2 + seed % 4))
    if seed % 2:
        s = np.round(2 * s)  # ties
        s[0, :] = s.min(axis=0)  # keep every column non-constant
        s[1, :] = s.max(axis=0) + 1
    (ref_x, ref_y), (ref_va, ref_vt) = openspiel_nash_averaging(pyspiel.create_matrix_game(s, -s), a_v_a=False)
    out = avt(s)
    np.testing.assert_allclose(out.agents["nash"], ref_x.ravel(), atol=1e-4)
    np.testing.assert_allclose(out.tasks["nash"], ref_y.ravel(), atol=1e-4)
    np.testing.assert_allclose(out.agents["rating"], ref_va.ravel(), atol=1e-4)
    np.testing.assert_allclose(out.tasks["rating"], ref_vt.ravel(), atol=1e-4)


def test_labels_from_a_dataframe_and_a_game():
    table = pd.DataFrame([[1.0, 0.0], [0.0, 1.0]], index=["ann", "bob"], columns=["pong", "go"])
    out = avt(table)
    assert list(out.agents.index) == ["ann", "bob"] and list(out.tasks.index) == ["pong", "go"]
    assert list(out.agents.columns) == ["nash", "rating"] and list(out.tasks.columns) == ["nash", "rating"]
    game = NormalFormGame(np.stack([GAME1, -GAME1]))
    np.testing.assert_allclose(avt(game).agents["nash"], [0, 0, 0, 1], atol=1e-12)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="same score"):
        avt([[1.0, 2.0], [1.0, 3.0]])
    with pytest.raises(ValueError, match="NaN"):
        avt([[1.0, np.nan], [0.0, 1.0]])
    with pytest.raises(ValueError, match="zero-sum"):
        avt(NormalFormGame(np.stack([GAME1, GAME1])))
    with pytest.raises(ValueError, match="mode"):
        nash_averaging(GAME1, mode="agents")
    with pytest.raises(ValueError, match="normalize"):
        avt(GAME1, normalize="rank")
    with pytest.raises(ValueError, match="2-D"):
        avt([1.0, 2.0])


def random_table(seed, m, n, integer):
    s = np.random.default_rng(seed).standard_normal((m, n))
    return np.round(s) if integer else s


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), m=st.integers(1, 5), n=st.integers(1, 5), integer=st.booleans())
def test_optimality_and_copy_invariance(seed, m, n, integer):
    s = random_table(seed, m, n, integer)
    out = avt(s, normalize="none")
    x, y = out.agents["nash"].to_numpy(), out.tasks["nash"].to_numpy()
    assert abs(x.sum() - 1) < 1e-12 and abs(y.sum() - 1) < 1e-12 and x.min() >= 0 and y.min() >= 0
    # Both sides optimal: no task is harder for x than the value, no agent does better against y.
    scale = max(1.0, np.abs(s).max())
    assert (x @ s).min() >= out.value - 1e-9 * scale and (s @ y).max() <= out.value + 1e-9 * scale
    if integer:
        return  # ties: max entropy spreads over tied strategies, so copies may move mass
    # Generic scores: a copy of a task changes no agent's rating, a copy of an agent no task's rating.
    t = int(np.argmax(y))
    more_tasks = avt(np.column_stack([s, s[:, t]]), normalize="none")
    np.testing.assert_allclose(more_tasks.agents["rating"], out.agents["rating"], atol=1e-8 * scale)
    a = int(np.argmax(x))
    more_agents = avt(np.vstack([s, s[a]]), normalize="none")
    np.testing.assert_allclose(more_agents.tasks["rating"], out.tasks["rating"], atol=1e-8 * scale)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), offset=st.floats(-1e3, 1e3), log_scale=st.floats(-3, 3))
def test_per_task_affine_changes_are_invisible(seed, offset, log_scale):
    s = random_table(seed, 4, 3, integer=False)
    base = avt(s)
    # Any positive affine change of one task's units, and a common offset: same normalised table.
    changed = s.copy()
    changed[:, 1] = changed[:, 1] * 10.0 ** log_scale + offset
    out = avt(changed + offset)
    np.testing.assert_allclose(out.agents.to_numpy(), base.agents.to_numpy(), atol=1e-9)
    np.testing.assert_allclose(out.tasks.to_numpy(), base.tasks.to_numpy(), atol=1e-9)
    # Unnormalised, an offset moves every agent rating and the value by the offset.
    raw, shifted = avt(s, normalize="none"), avt(s + offset, normalize="none")
    np.testing.assert_allclose(shifted.agents["nash"], raw.agents["nash"], atol=1e-9)
    np.testing.assert_allclose(shifted.agents["rating"], raw.agents["rating"] + offset, atol=1e-9 * max(1, abs(offset)))


def test_scores_helper_doc():
    assert agent_task_scores([[0.0, 10.0], [1.0, 20.0]], normalize="none").to_numpy().tolist() == [[0, 10], [1, 20]]
