"""The approximate gap: with exact stand-in best responses and deterministic play it is the meta-game's gap
(NashConv, CCE gap, CE gap computed by hand); with noisy play its standard error is the Monte Carlo one."""

import numpy as np
import pytest

from games import catalog
from psro.approximate_gap import approximate_gap, approximate_seed, mixture_returns
from psro.oracles import BestResponse
from solvers import make_equilibrium

# a stand-in "game": a policy is a pure action of a normal-form game, play returns its payoffs exactly
CHICKEN = catalog.chicken()
PAYOFFS = CHICKEN.payoffs   # (2, 2, 2)
POPS = [[0, 1], [0, 1]]


def play(game, profile, count, seed):
    return np.tile(PAYOFFS[:, profile[0], profile[1]], (count, 1))


def respond(player, target, index):
    """The exact pure best response to a product or joint target of the stand-in game."""
    values = np.zeros(2)
    if target.is_joint:
        for row, w in zip(target.profiles, target.weights):
            for a in range(2):
                profile = list(row)
                profile[player] = a
                values[a] += w * PAYOFFS[player][tuple(profile)]
    else:
        other = np.asarray(target.mixtures[1 - player])
        values = PAYOFFS[0] @ other if player == 0 else other @ PAYOFFS[1]
    return BestResponse(player, int(np.argmax(values)), float(values.max()))


def by_hand(joint, concept):
    """The Nash / CCE / CE gap of ``joint`` in chicken, from the definitions."""
    total = 0.0
    for p in range(2):
        u = PAYOFFS[p] if p == 0 else PAYOFFS[p].T   # own action first
        j = joint if p == 0 else joint.T
        value = float(np.sum(j * u))
        if concept == "ce":
            total += sum(max(0.0, max(float(u[a] @ j[i]) for a in range(2)) - float(u[i] @ j[i])) for i in range(2))
        else:
            other = j.sum(axis=0)
            gain = max(float(u[a] @ other) for a in range(2)) - value
            total += gain if concept == "nash" else max(gain, 0.0)
    return total


@pytest.mark.parametrize("concept, kind", [("nash", "product"), ("cce", "cce"), ("ce", "ce")])
def test_deterministic_play_gives_the_gap_by_hand(concept, kind):
    rng = np.random.default_rng(0)
    for _ in range(5):
        if kind == "product":
            m = [rng.dirichlet(np.ones(2)) for _ in range(2)]
            joint = np.outer(*m)
        else:
            joint = rng.dirichlet(np.ones(4)).reshape(2, 2)
        eq = make_equilibrium(CHICKEN, joint=joint, concept=concept if concept != "nash" else "nash", method="x")
        # play is exact but the profiles are drawn: the sampled on-policy value is exact only in expectation, so
        # use many episodes and compare within the Monte Carlo error
        result = approximate_gap(None, kind, eq, POPS, respond, episodes=20000, seed=1, iteration=0, play=play)
        assert result.gap == pytest.approx(by_hand(joint, concept), abs=4 * result.stderr + 1e-12)


def test_a_pure_profile_is_measured_without_error():
    eq = make_equilibrium(CHICKEN, joint=np.array([[0.0, 0.0], [0.0, 1.0]]), concept="nash", method="x")
    result = approximate_gap(None, "product", eq, POPS, respond, episodes=50, seed=0, iteration=0, play=play)
    assert result.gap == by_hand(eq.joint, "nash") and result.stderr == 0.0
    assert [t[0] for t in result.terms] == [0, 1]


def test_standard_error_matches_the_spread_over_seeds():
    noisy = np.random.default_rng(7)

    def noisy_play(game, profile, count, seed):   # payoffs plus independent unit noise per episode and seat
        return play(game, profile, count, seed) + np.random.default_rng(seed).normal(size=(count, 2))

    eq = make_equilibrium(CHICKEN, joint=np.array([[0.0, 1.0], [0.0, 0.0]]), concept="nash", method="x")
    gaps, errors = [], []
    for seed in noisy.integers(0, 2 ** 31, size=40):
        result = approximate_gap(None, "product", eq, POPS, respond, episodes=400, seed=int(seed), iteration=0,
                                 play=noisy_play)
        gaps.append(result.unclipped)   # (the spread before clipping at zero)
        errors.append(result.stderr)
    # two response estimates (variance 1/400 each) and the on-policy sum of two seats (2/400): sqrt(4/400) = 0.1
    assert np.mean(errors) == pytest.approx(np.sqrt(4 / 400), rel=0.1)
    assert np.std(gaps, ddof=1) == pytest.approx(np.mean(errors), rel=0.35)
    assert np.mean(gaps) == pytest.approx(by_hand(eq.joint, "nash"), abs=3 * np.mean(errors) / np.sqrt(40))


def test_seeds_are_derived_and_independent_of_order():
    assert approximate_seed(3, 1) != approximate_seed(3, 2) != approximate_seed(4, 1)
    draws = [mixture_returns(None, POPS, np.array([[0, 0], [1, 1]]), np.array([0.5, 0.5]), 100,
                             np.random.default_rng(approximate_seed(0, 5)), play=play) for _ in range(2)]
    assert np.array_equal(*draws)


def test_bad_kind():
    eq = make_equilibrium(CHICKEN, joint=np.full((2, 2), 0.25), concept="nash", method="x")
    with pytest.raises(ValueError, match="kind must be"):
        approximate_gap(None, "nash", eq, POPS, respond, episodes=10, seed=0, iteration=0, play=play)
