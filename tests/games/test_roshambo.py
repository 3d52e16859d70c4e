"""The live RRPS tournament: deterministic, engine-independent, well-formed, consistent with published data."""

import numpy as np
import pandas as pd
import pytest

from games.executors import ProcessPoolExecutor, SerialExecutor
from games.roshambo import (
    bot_names,
    compare_with_published,
    play_match,
    play_tournament,
)

BOTS = ["iocainebot", "randbot", "rotatebot"]


@pytest.fixture(scope="module")
def small():
    return play_tournament(BOTS, matches=2, seed=3, progress=False, matches_per_task=4)


def test_records_well_formed(small):
    m = small.matches
    assert list(m.columns) == ["agent_a", "agent_b", "score_a", "score_b", "seed"]
    assert len(m) == 3 * 3 * 2
    pairs = m.groupby(["agent_a", "agent_b"]).size()
    assert len(pairs) == 9 and set(pairs) == {2}
    np.testing.assert_array_equal(m["score_a"], -m["score_b"])  # RPS is zero-sum
    assert m["score_a"].abs().max() <= 1000 and m["seed"].is_unique
    eg = small.empirical_game
    assert eg.shape == (3, 3) and np.all(eg.count == 2)
    means = m.groupby(["agent_a", "agent_b"])["score_a"].mean()
    for (a, b), value in means.items():
        assert eg.mean()[0, BOTS.index(a), BOTS.index(b)] == pytest.approx(value)
    assert small.cross_table().loc["iocainebot", "randbot"] == pytest.approx(means["iocainebot", "randbot"])


def test_deterministic_under_seed_and_independent_of_grouping(small):
    again = play_tournament(BOTS, matches=2, seed=3, progress=False, matches_per_task=1)
    pd.testing.assert_frame_equal(small.matches, again.matches)
    other = play_tournament(BOTS, matches=2, seed=4, progress=False)
    assert not np.array_equal(other.matches["score_a"], small.matches["score_a"])


def test_serial_equals_process_pool(small):
    with ProcessPoolExecutor(workers=2) as ex:
        pooled = play_tournament(BOTS, matches=2, seed=3, progress=False, executor=ex, matches_per_task=4)
    pd.testing.assert_frame_equal(small.matches, pooled.matches)
    np.testing.assert_array_equal(small.empirical_game.total, pooled.empirical_game.total)


def test_reused_bots_equal_fresh_bots(small):
    # each match replayed alone (fresh bots, own task) gives the recorded score
    for row in small.matches.itertuples():
        assert play_match(row.agent_a, row.agent_b, row.seed) == (row.score_a, row.score_b)


def test_deterministic_bots_by_hand():
    # rotatebot plays R, P, S, R, ...; against rockbot it nets +1 per 3 throws, then R (tie), P (+1)
    assert play_match("rotatebot", "rockbot", seed=0, num_throws=11) == (1.0, -1.0)
    assert play_match("rotatebot", "rockbot", seed=5, num_throws=12) == (0.0, 0.0)


def test_deterministic_pairs_equal_published_table():
    r = play_tournament(["rockbot", "rotatebot"], matches=1, seed=0, progress=False, executor=SerialExecutor())
    c = compare_with_published(r)
    assert c.deterministic_pairs == 4 and c.deterministic_equal == 4
    published = c.table.set_index(["row_bot", "col_bot"])["published"]
    assert published["rotatebot", "rockbot"] == pytest.approx(r.cross_table().loc["rotatebot", "rockbot"], abs=1)


def test_bad_arguments():
    assert len(bot_names()) == 43
    with pytest.raises(ValueError, match="unknown RoShamBo bots"):
        play_tournament(["nobot"], progress=False)
    with pytest.raises(ValueError, match="matches"):
        play_tournament(BOTS, matches=0, progress=False)
    with pytest.raises(ValueError, match="distinct"):
        play_tournament(["randbot", "randbot"], progress=False)
