"""psro.policies.codec: one codec for population members with a registry of policy kinds; a user's class with
architecture / to_arrays / from_arrays saves and loads by its module:Class name, without pickle."""

import numpy as np
import pytest

from games.registry import IMPORT_VARIABLE, from_untrusted_file
from psro.policies import (
    UniformPolicy,
    decode_policy,
    encode_policy,
    policy_kind_names,
    register_policy_kind,
    unregister_policy_kind,
)


class Biased:
    """A module-level policy class with the codec protocol (its kind is this module's ``module:Biased``)."""

    def __init__(self, table):
        self.table = np.asarray(table, dtype=np.float64)

    def architecture(self):
        return {"rows": int(self.table.shape[0])}

    def to_arrays(self):
        return {"table": self.table}

    @classmethod
    def from_arrays(cls, architecture, arrays):
        assert architecture["rows"] == len(arrays["table"])
        return cls(arrays["table"])


def test_built_in_kinds_keep_the_checkpoint_format():
    assert policy_kind_names()[:3] == ["tabular", "uniform", "neural"]
    description, arrays = encode_policy(np.eye(2))
    assert description == {"kind": "tabular"} and arrays["table"].tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert encode_policy(UniformPolicy(4)) == ({"kind": "uniform", "num_actions": 4}, {})
    assert decode_policy({"kind": "uniform", "num_actions": 4}, {}) == UniformPolicy(4)


def test_a_user_class_travels_by_module_and_name():
    description, arrays = encode_policy(Biased([[0.25, 0.75]]))
    assert description == {"kind": f"{Biased.__module__}:Biased", "architecture": {"rows": 1}}
    back = decode_policy(description, arrays)
    assert type(back) is Biased and back.table.tolist() == [[0.25, 0.75]]


def test_a_registered_kind_with_its_own_encode_and_decode():
    class Fixed:
        def __init__(self, action):
            self.action = action

    register_policy_kind("fixed_test", Fixed, encode=lambda p: ({"action": p.action}, {}),
                         decode=lambda spec, arrays: Fixed(spec["action"]))
    try:
        assert encode_policy(Fixed(1)) == ({"kind": "fixed_test", "action": 1}, {})
        assert decode_policy({"kind": "fixed_test", "action": 3}, {}).action == 3
        with pytest.raises(ValueError, match="policy kind 'fixed_test' is already registered"):
            register_policy_kind("fixed_test", UniformPolicy, encode=repr, decode=repr)
    finally:
        unregister_policy_kind("fixed_test")
    with pytest.raises(TypeError, match="lacks architecture"):
        register_policy_kind("fixed_test", Fixed)


def test_what_cannot_be_encoded_or_decoded_is_named(monkeypatch):
    with pytest.raises(TypeError, match="a population member must be .* got object"):
        encode_policy(object())
    with pytest.raises(ValueError, match="description must be a dict with a 'kind'"):
        decode_policy({"table": 1}, {})
    with pytest.raises(ValueError, match="policy kind 'os:system' is not a policy class"):
        decode_policy({"kind": "os:system"}, {})   # (os is imported already; system is no policy class)
    monkeypatch.setenv(IMPORT_VARIABLE, "")
    with from_untrusted_file(), pytest.raises(ValueError, match="was named by a checkpoint or run directory"):
        decode_policy({"kind": "reg_codec_absent.module:Policy", "architecture": {}}, {})
