"""Tables looked up by observation: one member alone, and a population of them as one stack."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.environment import make_env
from psro.oracles.learned import observation_table
from psro.oracles.learned.env import PolicyBank, sample_actions
from psro.oracles.learned.observation_table import (
    ObservationTablePolicy,
    TableStack,
    observation_keys,
    observation_rows,
)
from psro.policies.acting import UniformPolicy


def _tables(rng, members, width, actions, pool):
    """``members`` tables over observations drawn (with repeats) from ``pool`` binary rows of ``width``."""
    rows = (rng.random((pool, width)) < 0.5).astype(np.float32)
    out = []
    for _ in range(members):
        pick = rng.integers(0, pool, size=rng.integers(0, pool + 3))   # repeats: the last row of a key counts
        out.append(ObservationTablePolicy(rows[pick], rng.random((pick.size, actions)) * (rng.random() < 0.9)))
    return rows, out


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(1, 5), st.integers(1, 4), st.integers(1, 12))
def test_lookup_matches_a_dictionary_of_row_bytes(seed, members, width, actions, pool):
    rng = np.random.default_rng(seed)
    rows, tables = _tables(rng, members, width, actions, pool)
    query = np.concatenate([rows, (rng.random((5, width)) < 0.5).astype(np.float32)])
    for table in tables:
        by_key = {key: i for i, key in enumerate(observation_keys(table.observations))}   # the last one wins
        expected = [by_key.get(key, -1) for key in observation_keys(query)]
        assert table.rows_of(query).tolist() == expected
        assert len(table) == len(by_key)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(1, 5), st.integers(1, 4), st.integers(1, 12))
def test_a_stack_answers_exactly_as_each_member(seed, members, width, actions, pool):
    rng = np.random.default_rng(seed)
    rows, tables = _tables(rng, members, width, actions, pool)
    b = 40
    obs = rows[rng.integers(0, pool, size=b)]
    obs[::7] = (rng.random((len(obs[::7]), width)) < 0.5)   # some rows no member may know
    mask = rng.random((b, actions)) < 0.7
    mask[np.arange(b), rng.integers(0, actions, size=b)] = True
    who = rng.integers(0, members, size=b)
    got = TableStack(tables).probabilities_np(who, obs, mask)
    for j in range(b):
        assert np.array_equal(got[j], tables[who[j]].probabilities_np(obs[j:j + 1], mask[j:j + 1])[0])


def test_keys_are_float32_bytes():
    assert observation_rows(np.array([[1.0, 0.0]])).tobytes() == np.array([1, 0], np.float32).tobytes()
    assert observation_rows(np.zeros((3, 0))).shape == (3,)
    with pytest.raises(ValueError, match="obs must have shape"):
        observation_rows(np.zeros(3))


def test_stack_rejects_mixed_members():
    with pytest.raises(TypeError, match="ObservationTablePolicy"):
        TableStack([UniformPolicy(2)])
    with pytest.raises(ValueError, match="share obs_dim"):
        TableStack([ObservationTablePolicy(np.eye(2), np.ones((2, 2))),
                    ObservationTablePolicy(np.eye(3), np.ones((3, 2)))])


def test_a_bank_samples_the_actions_of_its_policies_one_by_one():
    rng = np.random.default_rng(0)
    env = make_env("leduc_poker", num_envs=64, rng=1)
    s = env.reset()
    while (s.player < 0).any() or s.done.any():   # a batch where every game waits on a player
        s = env.step(s.envs, np.zeros(s.envs.size, np.int64))
    tables = []
    for _ in range(6):   # each knows about half the observations of the batch
        known = s.obs[rng.random(s.envs.size) < 0.5]
        tables.append(ObservationTablePolicy(known, rng.random((len(known), 3))))
    policies = tables + [UniformPolicy(3)]
    index = rng.integers(0, len(policies), size=s.envs.size)
    plain = sample_actions(env, s, index, policies, np.random.default_rng(5))
    bank = PolicyBank(policies)
    assert bank.slot.tolist() == [0, 1, 2, 3, 4, 5, -1]
    assert np.array_equal(sample_actions(env, s, index, bank, np.random.default_rng(5)), plain)
    other = ObservationTablePolicy(np.zeros((1, 4)), np.ones((1, 3)))   # another layout: no stack, one by one
    assert PolicyBank([tables[0], other]).stack is None


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.integers(1, 12))
def test_keys_that_share_a_hash_are_searched_as_bytes(seed, width, pool):
    rng = np.random.default_rng(seed)
    rows, tables = _tables(rng, 1, width, 2, pool)
    with pytest.MonkeyPatch.context() as patch:   # every key hashes alike: the index falls back on the raw bytes
        patch.setattr(observation_table, "_hashes", lambda words: np.zeros(words.shape[0], np.uint64))
        table = ObservationTablePolicy(tables[0].observations, tables[0].table)
    by_key = {key: i for i, key in enumerate(observation_keys(table.observations))}
    query = np.concatenate([rows, (rng.random((5, width)) < 0.5).astype(np.float32)])
    assert table.rows_of(query).tolist() == [by_key.get(key, -1) for key in observation_keys(query)]
    assert len(table) == len(by_key)
    assert not table._index.by_hash or len(by_key) < 2
