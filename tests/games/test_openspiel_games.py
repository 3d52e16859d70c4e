"""games.load: OpenSpiel games by string, with suggestions for typos."""

import pytest

from games import load


def test_load_openspiel_game_and_suggestions():
    assert load("kuhn_poker(players=3)").num_players() == 3
    with pytest.raises(ValueError, match="Did you mean 'kuhn_poker'"):
        load("kuhn_pokr")
    with pytest.raises(ValueError, match="could not load"):
        load("kuhn_poker(players=banana)")
    with pytest.raises(TypeError, match="spec must be"):
        load(3)
