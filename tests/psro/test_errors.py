"""Tests of psro/errors.py: the exceptions raised on purpose, and with_field, which names the setting."""

import pytest

from games import catalog
from psro import PSRO
from psro.errors import ConfigError, LearnerDiverged, with_field


def test_with_field_makes_a_check_s_error_a_config_error_of_the_field_with_the_original_as_cause():
    with pytest.raises(ConfigError, match=r"^seed: invalid literal for int\(\)") as err:
        with_field("seed", int, "twelve")
    assert err.value.field == "seed" and isinstance(err.value.__cause__, ValueError)
    # a TypeError too, and a ConfigError is both: code that caught either still does
    with pytest.raises(TypeError) as err:
        with_field("episodes", len, 3)
    assert isinstance(err.value, ConfigError) and err.value.field == "episodes"
    assert isinstance(err.value.__cause__, TypeError) and not isinstance(err.value.__cause__, ConfigError)


def test_with_field_does_not_repeat_the_field_nor_rename_an_error_that_names_its_own():
    def check(value):
        raise ValueError("episodes must be positive")

    assert str(pytest.raises(ConfigError, with_field, "episodes", check, 0).value) == "episodes: must be positive"

    def inner(value):
        raise ConfigError("max_states", "must be positive")

    error = pytest.raises(ConfigError, with_field, "oracle_options", inner, 0).value
    assert error.field == "max_states" and str(error) == "max_states: must be positive"


def test_a_refused_config_is_a_config_error_naming_its_field():
    with pytest.raises(ConfigError, match="^oracle: oracle='dqn' learns from sampled episodes") as err:
        PSRO(catalog.rock_paper_scissors(), oracle="dqn", progress=False)
    assert err.value.field == "oracle"
    with pytest.raises(ConfigError, match="^game: ") as err:
        PSRO("no_such_game_here", progress=False)
    assert err.value.field == "game"


def test_learner_diverged_stays_a_value_error_with_its_curve():
    error = LearnerDiverged("learning_rate: the loss became nan")
    assert isinstance(error, ValueError) and not isinstance(error, ConfigError) and error.learner_curve == ()
