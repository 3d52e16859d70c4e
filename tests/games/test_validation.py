"""games.validation: the shared checks of scalar arguments."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from games.validation import check_int, check_positive, check_real, check_seed, check_tolerance


@pytest.mark.parametrize("bad", [True, False, np.bool_(True), 2.0, "3", None, 1 + 0j])
def test_check_int_refuses_non_integers_with_type_error_naming_the_argument(bad):
    with pytest.raises(TypeError, match=r"^workers must be an int"):
        check_int(bad, "workers", minimum=1)


def test_check_int_bounds_and_none():
    assert check_int(np.int32(4), "n", minimum=1, maximum=4) == 4 and type(check_int(np.int32(4), "n")) is int
    assert check_int(None, "n", none_ok=True) is None
    with pytest.raises(ValueError, match=r"^n must be an int in \[1, 4\]; got 5\."):
        check_int(5, "n", minimum=1, maximum=4)
    with pytest.raises(ValueError, match=r"^iterations must be an int >= 0; got -5\."):
        check_int(-5, "iterations", minimum=0)


@pytest.mark.parametrize("bad", [True, "1e-6", 1j, None, [0.1]])
def test_check_real_refuses_non_reals(bad):
    with pytest.raises(TypeError, match=r"^tol must be a real number"):
        check_real(bad, "tol")


def test_tolerance_refuses_nan_negative_zero_and_infinite():
    for bad, text in ((math.nan, "not NaN"), (-1, "> 0"), (0.0, "> 0"), (math.inf, "finite")):
        with pytest.raises(ValueError, match=rf"^tol .*{text}"):
            check_tolerance(bad)
    assert check_tolerance(np.float32(0.5)) == 0.5


def test_check_real_strict_and_inclusive_bounds():
    assert check_real(0, "time_limit", minimum=0) == 0.0
    with pytest.raises(ValueError, match=r"time_limit must be a number >= 0; got -3\.0"):
        check_real(-3, "time_limit", minimum=0)
    with pytest.raises(ValueError, match=r"p must be a number in \(0, 1\)"):
        check_real(1.0, "p", minimum=0, maximum=1, strict=True)
    assert check_real(math.inf, "cap", finite=False) == math.inf
    assert check_positive(None, "alpha", none_ok=True) is None


def test_seed():
    assert check_seed(0) == 0
    with pytest.raises(ValueError, match=r"^seed must be an int >= 0; got -1\."):
        check_seed(-1)


@given(st.integers(min_value=-10**30, max_value=10**30), st.integers(-50, 50))
def test_check_int_accepts_exactly_the_integers_at_or_above_the_minimum(value, minimum):
    if value >= minimum:
        assert check_int(value, "x", minimum=minimum) == value
    else:
        with pytest.raises(ValueError):
            check_int(value, "x", minimum=minimum)


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_check_positive_matches_the_definition(value):
    if math.isfinite(value) and value > 0:
        assert check_positive(value, "x") == value
    else:
        with pytest.raises(ValueError, match="^x "):
            check_positive(value, "x")


def _library_calls():
    # imported here: the checks above need none of these modules
    from games import catalog, check_game
    from ranking import alpharank
    from solvers import stackelberg
    from solvers.dominance import iterated_dominance
    from solvers.dynamics.evolutionary_dynamics import trajectory
    from solvers.dynamics.moran import fixation_probability
    from solvers.nash.lemke_howson import lemke_howson
    from solvers.nash.nash_n_player import nash_n_player

    bos, rps = catalog.bach_or_stravinsky(), catalog.rock_paper_scissors()
    return [
        ("initial_label", lambda v: lemke_howson(bos, initial_label=v)),
        ("max_iter", lambda v: nash_n_player(bos, max_iter=v)),
        ("max_rounds", lambda v: iterated_dominance(bos, max_rounds=v)),
        ("leader", lambda v: stackelberg(bos, leader=v)),
        ("mutant", lambda v: fixation_probability(catalog.stag_hunt().payoffs[0], 5, mutant=v)),
        ("num_points", lambda v: trajectory(rps, [0.5, 0.3, 0.2], t_max=1.0, num_points=v, single_population=True)),
        ("population_size", lambda v: alpharank(rps, population_size=v)),
        ("max_nodes", lambda v: check_game(catalog.matching_pennies(), max_nodes=v)),
    ]


@pytest.mark.parametrize("value", [True, np.bool_(False), "3"])
def test_library_arguments_go_through_these_checks(value):
    # games, solvers and ranking check their integer arguments here: a bool or a string is a TypeError naming it
    for name, call in _library_calls():
        with pytest.raises(TypeError, match=rf"^{name}\b.* must be "):
            call(value)


def test_library_arguments_out_of_range_name_the_argument():
    for name, call in _library_calls():
        with pytest.raises(ValueError, match=rf"^{name}\b"):
            call(-7)
