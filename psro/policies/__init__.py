"""Policies: tabular arrays (:mod:`psro.policies.tabular`), how a policy acts (:mod:`psro.policies.acting`, with
the uniform policy), conversion to and from OpenSpiel (:mod:`psro.policies.openspiel`) and one codec with a
registry of policy kinds (:mod:`psro.policies.codec`), so that a user's policy class saves, loads and travels to
workers without library edits.

Examples
--------
>>> from psro.policies import UniformPolicy, decode_policy, encode_policy
>>> decode_policy(*encode_policy(UniformPolicy(2)))
UniformPolicy(2)
"""

from psro.policies.acting import (
    BatchPolicy,
    StatePolicy,
    TabularStatePolicy,
    UniformPolicy,
    batch_probabilities,
    policy_input,
)
from psro.policies.codec import (
    PolicyKind,
    decode_policy,
    encode_policy,
    has_codec,
    policy_kind_names,
    register_policy_kind,
    unregister_policy_kind,
)
from psro.policies.openspiel import from_openspiel_policy, members_policy, to_openspiel_policy
from psro.policies.tabular import (
    Policy,
    aggregate,
    as_tabular,
    behaviour_from_plan,
    check_policy,
    own_reach,
    random_policies,
    realization_plans,
    starting_policies,
    to_openspiel_dict,
    uniform_policy,
)

__all__ = ["BatchPolicy", "Policy", "PolicyKind", "StatePolicy", "TabularStatePolicy", "UniformPolicy", "aggregate",
           "as_tabular", "batch_probabilities", "behaviour_from_plan", "check_policy", "decode_policy",
           "encode_policy", "from_openspiel_policy", "has_codec", "members_policy", "own_reach", "policy_input",
           "policy_kind_names", "random_policies", "realization_plans", "register_policy_kind", "starting_policies",
           "to_openspiel_dict",
           "to_openspiel_policy", "uniform_policy", "unregister_policy_kind"]
