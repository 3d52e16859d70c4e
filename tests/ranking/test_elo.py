"""ranking.elo at the edges: empty input, and win counts of any magnitude (issue 15, item 11)."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ranking import elo
from ranking.elo_ratings import bradley_terry_strengths


@pytest.mark.parametrize("empty", [np.zeros((0, 0)), [], [[]]])
def test_an_empty_win_matrix_is_a_clear_error(empty):
    with pytest.raises(ValueError, match=r"^data is empty .* at least two agents"):
        elo(empty)


def test_empty_match_records_are_a_clear_error():
    with pytest.raises(ValueError, match="at least two agents"):
        elo(pd.DataFrame({"agent_a": [], "agent_b": [], "score_a": []}))


@pytest.mark.parametrize("scale", [1e-300, 1e-8, 1.0, 1e8, 1e300])
def test_win_counts_of_any_magnitude_give_the_odds_rating(scale):
    """i beat j three times as often as j beat i: the rating gap is 400 log10(3) whatever the unit of counting."""
    ratings = elo(np.array([[0.0, 3.0], [1.0, 0.0]]) * scale, smoothing=0.0)["rating"].to_numpy()
    assert ratings[0] - ratings[1] == pytest.approx(400 * math.log10(3), abs=1e-9)


@given(st.floats(-300, 300), st.integers(2, 5), st.integers(0, 2**32 - 1))
def test_bradley_terry_is_invariant_to_the_unit_of_the_scores(exponent, n, seed):
    rng = np.random.default_rng(seed)
    scores = rng.integers(1, 20, size=(n, n)).astype(float)
    reference = bradley_terry_strengths(scores)
    scaled = bradley_terry_strengths(scores * 10.0 ** exponent)
    np.testing.assert_allclose(scaled, reference, atol=1e-9)


def test_a_one_agent_score_matrix_is_refused():
    with pytest.raises(ValueError, match="at least 2 x 2"):
        bradley_terry_strengths([[0.0]])
