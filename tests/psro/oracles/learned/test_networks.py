"""NeuralPolicy as a first-class population member (issue 12): batched numpy acting, sizing from any game's flat
observations, saving as plain arrays + JSON (no pickle), and clear errors for a network that does not fit.

Reference values are computed by hand from weights set explicitly (a network without hidden layers is one linear
map, so its softmax can be written down)."""

import io
import json
import pickle
import re

import numpy as np
import pyspiel
import pytest
import torch

from psro.oracles.learned.networks import LearnedProvenance, NeuralPolicy, game_sizes, torch_device
from psro.sequence_form.game_tree import build_game_tree

torch.set_num_threads(1)


def linear_policy(weight, bias, mode="softmax") -> NeuralPolicy:
    """A policy whose scores are ``obs @ weight.T + bias`` (no hidden layer)."""
    weight = np.asarray(weight, dtype=np.float32)
    policy = NeuralPolicy(weight.shape[1], weight.shape[0], hidden=(), mode=mode)
    policy.network.load_state_dict({"layers.0.weight": torch.from_numpy(weight),
                                    "layers.0.bias": torch.as_tensor(bias, dtype=torch.float32)})
    return policy


def test_probabilities_np_is_the_masked_softmax_written_out_by_hand():
    policy = linear_policy([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]], [0.0, 0.0, -1.0])
    obs = np.array([[0.0, 0.0], [1.0, 0.5], [3.0, -1.0]], dtype=np.float32)
    mask = np.array([[True, True, True], [True, False, True], [False, True, False]])
    probs = policy.probabilities_np(obs, mask)
    # scores: row 0 (0, 0, -1); row 1 (1, 1, 0.5) with action 1 illegal; row 2 only action 1 legal
    e = np.exp
    expected = np.array([[1, 1, e(-1)] / (2 + e(-1)), [e(1), 0, e(0.5)] / (e(1) + e(0.5)), [0, 1, 0]])
    assert probs.dtype == np.float64 and probs.shape == (3, 3)
    np.testing.assert_allclose(probs, expected, rtol=1e-6)
    np.testing.assert_array_equal(probs.sum(axis=1), 1.0)
    assert np.all(probs[~mask] == 0)


def test_greedy_mode_plays_the_best_legal_score_lowest_index_on_ties():
    policy = linear_policy([[1.0], [3.0], [3.0]], [0.0, 0.0, 0.0], mode="greedy")
    probs = policy.probabilities_np(np.ones((3, 1), np.float32),
                                    np.array([[True, True, True], [True, False, True], [True, False, False]]))
    np.testing.assert_array_equal(probs, [[0, 1, 0], [0, 0, 1], [1, 0, 0]])


def test_for_game_flattens_the_information_state_tensor_and_acts_on_real_observations():
    game = pyspiel.load_game("phantom_ttt")
    assert list(game.information_state_tensor_shape()) == [1, 108]
    assert game_sizes(game) == (108, 9)
    policy = NeuralPolicy.for_game(game, hidden=(16,))
    assert (policy.obs_dim, policy.num_actions) == (108, 9)
    state = game.new_initial_state()
    state.apply_action(4)
    row = policy.action_probabilities(state, 1)
    assert row.shape == (9,) and row.sum() == pytest.approx(1.0)
    obs = np.asarray(state.information_state_tensor(1), np.float32)[None]
    mask = np.zeros((1, 9), bool)
    mask[0, state.legal_actions(1)] = True
    np.testing.assert_array_equal(policy.probabilities_np(obs, mask)[0], row)


def test_arrays_and_json_architecture_round_trip_without_pickle(tmp_path):
    torch.manual_seed(3)
    prov = LearnedProvenance(iteration=2, oracle="ppo", meta_solver="nash", training_steps=512, seed=11)
    policy = NeuralPolicy.for_game(pyspiel.load_game("leduc_poker"), hidden=(8, 4), provenance=prov)
    path = tmp_path / "policy.npz"
    np.savez(path, **policy.to_arrays())
    (tmp_path / "policy.json").write_text(json.dumps(policy.architecture()))
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    loaded = NeuralPolicy.from_arrays(json.loads((tmp_path / "policy.json").read_text()), arrays)
    assert (loaded.hidden, loaded.mode, loaded.provenance) == ((8, 4), "softmax", prov)
    for k, v in policy.to_arrays().items():
        assert v.dtype == np.float32 and np.array_equal(v, loaded.to_arrays()[k])
    obs = np.random.default_rng(0).random((5, policy.obs_dim)).astype(np.float32)
    mask = np.ones((5, policy.num_actions), bool)
    np.testing.assert_array_equal(policy.probabilities_np(obs, mask), loaded.probabilities_np(obs, mask))


def test_pickling_goes_through_the_plain_arrays():
    policy = NeuralPolicy(4, 3, hidden=(5,), mode="greedy")
    blob = pickle.dumps(policy)
    assert b"torch" not in blob   # no torch module, tensor or storage inside: arrays, dicts and strings only
    again = pickle.loads(blob)
    assert again.mode == "greedy" and again.network is not policy.network
    assert all(np.array_equal(a, b) for a, b in zip(policy.to_arrays().values(), again.to_arrays().values()))


def test_to_tabular_of_a_policy_built_for_another_game_is_refused():
    tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    with pytest.raises(ValueError, match="observations of size 30 .* size 11"):
        NeuralPolicy(30, 2).to_tabular(tree, 0)
    with pytest.raises(ValueError, match="actions"):
        NeuralPolicy(11, 3).to_tabular(tree, 0)


def test_bad_input_names_the_argument():
    policy = NeuralPolicy(4, 3, hidden=(5,))
    with pytest.raises(ValueError, match=r"obs must have shape \(batch, 4\)"):
        policy.probabilities_np(np.zeros((2, 5), np.float32), np.ones((2, 3), bool))
    with pytest.raises(ValueError, match="mask must have shape"):
        policy.probabilities_np(np.zeros((2, 4), np.float32), np.ones((2, 2), bool))
    with pytest.raises(ValueError, match="without a legal action"):
        policy.probabilities_np(np.zeros((1, 4), np.float32), np.zeros((1, 3), bool))
    with pytest.raises(ValueError, match="do not fit the architecture"):
        NeuralPolicy.from_arrays(policy.architecture(), NeuralPolicy(4, 3, hidden=(6,)).to_arrays())
    with pytest.raises(ValueError, match="not a NeuralPolicy architecture"):
        NeuralPolicy.from_arrays({"obs_dim": 4}, policy.to_arrays())
    with pytest.raises(ValueError, match="hidden"):
        NeuralPolicy(4, 3, hidden=(0,))
    with pytest.raises(ValueError, match="device"):
        NeuralPolicy(4, 3, device="tpu7")
    with pytest.raises(ValueError, match="initial_policy: the network takes observations of size 4"):
        policy.check_fits(11, 2, argname="initial_policy")
    assert torch_device("cpu").type == "cpu"
    buffer = io.BytesIO()
    torch.save(policy.state_dict(), buffer)   # the torch file format still loads with weights_only
    buffer.seek(0)
    assert NeuralPolicy.from_state_dict(torch.load(buffer, weights_only=True)).hidden == (5,)


def test_device_is_checked_where_the_policy_is_built():
    if torch.cuda.is_available():   # a GPU machine: the network lives there, acting still answers CPU numpy
        policy = NeuralPolicy(4, 3, hidden=(5,), device="cuda")
        assert next(policy.network.parameters()).is_cuda
        probs = policy.probabilities_np(np.zeros((2, 4), np.float32), np.ones((2, 3), bool))
        assert isinstance(probs, np.ndarray) and probs.dtype == np.float64
        assert all(isinstance(v, np.ndarray) for v in policy.to_arrays().values())
    else:
        with pytest.raises(ValueError, match="needs a CUDA GPU"):
            NeuralPolicy(4, 3, device="cuda")


@pytest.mark.parametrize("obs_dim, hidden, size", [(11, [200000, 200000], "149 GiB"), (10**12, [64], "2.38e+05 GiB")])
def test_a_stored_architecture_past_the_memory_limit_is_refused_before_building(monkeypatch, obs_dim, hidden, size):
    # issue 23 item 5: a resealed member architecture hidden: [200000, 200000] tried to allocate 160 GB
    from psro.run.checkpoint import member_from_arrays

    monkeypatch.setenv("PSRO_MAX_MEMORY", "1G")
    arch = NeuralPolicy(11, 2, hidden=(4,)).architecture()
    arch.update(obs_dim=obs_dim, hidden=hidden)
    message = (f"a network with obs_dim={obs_dim}, hidden={hidden} and 2 actions (float32 weights) needs about "
               f"{size}, above the memory limit of 1 GiB (PSRO_MAX_MEMORY)")
    with pytest.raises(ValueError, match=re.escape(message)):
        member_from_arrays({"kind": "neural", "architecture": arch}, {})
