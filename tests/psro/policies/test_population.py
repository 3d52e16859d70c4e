"""Populations of policy objects: provenance, one tabularisation per member, saving without pickle."""

import numpy as np
import pyspiel
import pytest
import torch

from psro.oracles.learned.networks import NeuralPolicy
from psro.policies.acting import UniformPolicy
from psro.policies.population import PolicyPopulation, Provenance, load_populations, save_populations, tabular_policy
from psro.run.checkpoint import member_arrays, member_from_arrays
from psro.sequence_form.game_tree import build_game_tree


@pytest.fixture(scope="module")
def kuhn():
    return build_game_tree(pyspiel.load_game("kuhn_poker"))


class Counting:
    """A policy object that counts how often it is tabularised (plays the last legal action)."""

    def __init__(self):
        self.calls = 0

    def to_tabular(self, tree, player):
        self.calls += 1
        mask = tree.infostates[player].legal_mask
        out = np.zeros(mask.shape)
        out[np.arange(len(mask)), mask.shape[1] - 1 - np.argmax(mask[:, ::-1], axis=1)] = 1.0
        return out


def test_members_are_tabularised_once_each(kuhn):
    pop = PolicyPopulation(player=1, num_actions=2)
    first, second = Counting(), Counting()
    assert pop.add(UniformPolicy(2), Provenance(0, "initial")) == [0]
    assert pop.add([first, second], [Provenance(1, "ppo", "nash", 0.5), Provenance(2, "ppo", "nash", 0.25)]) == [1, 2]
    table = pop.tabular(kuhn)
    assert table.policies.shape == (3, 6, 2) and np.allclose(table.policies[0], 0.5)
    assert (table.policies[1][:, 1] == 1).all()   # always the last action
    pop.add(Counting(), Provenance(3, "ppo"))
    assert pop.tabular(kuhn) is table and len(table) == 4
    assert (first.calls, second.calls) == (1, 1)
    assert pop.provenance_table()["value"].tolist()[1:3] == [0.5, 0.25]
    with pytest.raises(ValueError, match="provenance needs one entry per policy"):
        pop.add([first], [])


def test_a_network_is_tabularised_by_its_softmax_over_the_infostate_tensors(kuhn):
    torch.manual_seed(0)
    net = NeuralPolicy.for_game(kuhn.game, hidden=(8,))
    table = tabular_policy(net, kuhn, 0)
    from psro.sequence_form.game_tree import infostate_tensors

    obs = infostate_tensors(kuhn, 0)
    mask = kuhn.infostates[0].legal_mask
    with torch.no_grad():
        logits = net.network(torch.as_tensor(obs.copy())).double().numpy()
    expected = np.exp(logits - logits.max(axis=1, keepdims=True)) * mask
    np.testing.assert_allclose(table, expected / expected.sum(axis=1, keepdims=True), atol=1e-6)


def test_members_round_trip_through_plain_arrays(tmp_path, kuhn):
    torch.manual_seed(1)
    net = NeuralPolicy.for_game(kuhn.game, hidden=(8,))
    for member in (UniformPolicy(2), net, np.full((6, 2), 0.5)):
        architecture, arrays = member_arrays(member)
        back = member_from_arrays(architecture, arrays)
        assert type(back) is type(member)
        np.testing.assert_array_equal(tabular_policy(back, kuhn, 0), tabular_policy(member, kuhn, 0))
    with pytest.raises(TypeError, match="population member"):
        member_arrays(object())
    pops = [PolicyPopulation(p, 2) for p in range(2)]
    for pop in pops:
        pop.add([UniformPolicy(2), net], [Provenance(0, "initial"), Provenance(1, "ppo")])
    path = tmp_path / "population.npz"
    save_populations(path, pops, encode=member_arrays)
    data = load_populations(path)   # allow_pickle=False
    assert data["architecture_0"].shape == (2,) and all(v.dtype != object for v in data.values())
    assert np.array_equal(data["member_1_1__" + next(iter(net.to_arrays()))], next(iter(net.to_arrays().values())))
    with pytest.raises(ValueError, match="encode"):
        save_populations(path, pops)


def test_load_populations_refuses_a_header_declaring_a_huge_shape_before_loading(tmp_path, monkeypatch):
    import zipfile

    from numpy.lib import format as npy

    monkeypatch.setenv("PSRO_MAX_MEMORY", "1G")
    path = tmp_path / "population.npz"
    with zipfile.ZipFile(path, "w") as archive:
        with archive.open("policies_0.npy", "w") as member:
            npy.write_array_header_2_0(member, {"descr": "<f8", "fortran_order": False, "shape": (10**7, 10**7)})
    with pytest.raises(ValueError, match="population.npz .*headers declare.*memory limit of 1 GiB"):
        load_populations(path)
