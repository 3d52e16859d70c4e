"""One codec for population members: a policy as a JSON-able description and plain arrays, and back, without pickle.

Checkpoints (:func:`psro.run.checkpoint.member_arrays`) and oracle jobs sent to workers
(:func:`psro.oracles.jobs.encode_policy`) both use it. :func:`encode_policy` gives ``(description, arrays)``:
``description`` is a dict whose ``"kind"`` names a registered policy kind (the rest is that kind's JSON-able spec)
and ``arrays`` maps names to ndarrays; :func:`decode_policy` rebuilds the policy.

The kinds are a :class:`games.registry.Registry` (a second registration of a name raises unless ``replace=True``):

* ``"tabular"``: a tabular array ``(num_infostates, num_actions)``, stored as ``table``;
* ``"uniform"``: :class:`psro.policies.acting.UniformPolicy`, ``{"num_actions": A}``;
* ``"neural"``: :class:`psro.oracles.learned.networks.NeuralPolicy`, ``{"architecture": ...}`` and its weights;
* ``"observation_table"``: :class:`psro.oracles.learned.observation_table.ObservationTablePolicy` (a model-based
  response), its observations and their action probabilities;
* any class with the **codec protocol**: ``policy.architecture() -> dict`` (JSON-able), ``policy.to_arrays() ->
  {name: ndarray}`` and ``Class.from_arrays(architecture, arrays) -> policy``. Such a class needs no
  registration: its kind is ``"module:Class"`` (its module and name), and decoding imports the module on demand,
  under the rule of :mod:`games.registry` (only modules already imported or allowed in ``PSRO_IMPORT``), so a
  checkpoint or job names code but cannot run any that was not allowed. :func:`register_policy_kind` gives a class
  a short name, or an ``encode``/``decode`` pair for a class without the protocol.

Examples
--------
>>> import numpy as np
>>> from psro.policies import UniformPolicy
>>> encode_policy(UniformPolicy(3))
({'kind': 'uniform', 'num_actions': 3}, {})
>>> decode_policy(*encode_policy(np.full((2, 2), 0.5))).tolist()
[[0.5, 0.5], [0.5, 0.5]]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from games.registry import Registry, import_named, split_name
from psro.policies.acting import UniformPolicy

__all__ = ["PolicyKind", "register_policy_kind", "unregister_policy_kind", "policy_kind_names", "encode_policy",
           "encode_policy_as", "decode_policy", "has_codec"]

_PROTOCOL = ("architecture", "to_arrays")


@dataclass(frozen=True)
class PolicyKind:
    """A registered policy kind.

    Attributes
    ----------
    name : str
        The ``"kind"`` written in descriptions.
    cls : type, str or None
        The policy class (or its ``"module:Class"``, matched without importing); None for tabular arrays.
    encode : callable
        ``encode(policy) -> (spec, arrays)``: a JSON-able dict (without ``"kind"``) and ``{name: ndarray}``.
    decode : callable
        ``decode(spec, arrays) -> policy``.
    """

    name: str
    cls: object
    encode: Callable
    decode: Callable

    def matches(self, policy) -> bool:
        """Whether ``policy`` is of this kind (its exact class; a subclass is its own kind)."""
        if self.cls is None:
            return isinstance(policy, np.ndarray)
        if isinstance(self.cls, str):
            return _class_name(type(policy)) == self.cls
        return type(policy) is self.cls


def _class_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def has_codec(cls) -> bool:
    """Whether ``cls`` has the codec protocol (``architecture``, ``to_arrays`` and ``from_arrays``)."""
    return isinstance(cls, type) and all(callable(getattr(cls, m, None)) for m in _PROTOCOL + ("from_arrays",))


def _protocol_encode(policy) -> tuple:
    return ({"architecture": policy.architecture()},
            {name: np.asarray(value) for name, value in policy.to_arrays().items()})


def _protocol_kind(name: str, cls) -> PolicyKind:
    """The kind of a class with the codec protocol (``cls`` a class or ``"module:Class"``)."""
    def decode(spec, arrays):
        target = cls if isinstance(cls, type) else _load(cls)
        return target.from_arrays(spec["architecture"], arrays)
    return PolicyKind(name, cls, _protocol_encode, decode)


def _load(target: str) -> type:
    module, attribute = split_name(target)
    return getattr(import_named(module, field="policy kind"), attribute)


def _adopt(name: str, cls) -> PolicyKind:
    """A ``module:Class`` kind its module did not register: the class, if it has the codec protocol."""
    if not has_codec(cls):
        raise ValueError(f"policy kind {name!r} is not a policy class with architecture(), to_arrays() and "
                         "from_arrays(architecture, arrays); register it with psro.policies.register_policy_kind.")
    return _protocol_kind(name, cls)


_KINDS = Registry("policy kind", hint="Register one with psro.policies.register_policy_kind(name, cls).",
                  adopt=_adopt)


def register_policy_kind(name: str, cls, *, encode: Callable | None = None, decode: Callable | None = None,
                         replace: bool = False):
    """Register the policy class ``cls`` (or ``"module:Class"``) as the kind ``name``; returns ``cls``.

    Without ``encode``/``decode`` the class must have the codec protocol (see the module docstring). A second
    registration of ``name`` raises ``ValueError`` unless it is the same or ``replace=True``.

    Examples
    --------
    >>> class Fixed:
    ...     def __init__(self, action): self.action = action
    >>> _ = register_policy_kind("fixed_example", Fixed, encode=lambda p: ({"action": p.action}, {}),
    ...                          decode=lambda spec, arrays: Fixed(spec["action"]))
    >>> description, arrays = encode_policy(Fixed(2))
    >>> description, decode_policy(description, arrays).action
    ({'kind': 'fixed_example', 'action': 2}, 2)
    >>> unregister_policy_kind("fixed_example")
    """
    if (encode is None) != (decode is None):
        raise TypeError(f"register_policy_kind({name!r}): give both encode and decode, or neither (then the class "
                        "needs architecture(), to_arrays() and from_arrays()).")
    if encode is None:
        if isinstance(cls, type) and not has_codec(cls):
            raise TypeError(f"register_policy_kind({name!r}): {cls.__name__} lacks architecture(), to_arrays() or "
                            "from_arrays(); give encode= and decode=.")
        kind = _protocol_kind(name, cls)
    else:
        kind = PolicyKind(name, cls, encode, decode)
    _KINDS.register(name, kind, replace=replace)
    return cls


def unregister_policy_kind(name: str) -> None:
    """Remove a registered policy kind (for tests and notebooks)."""
    _KINDS.unregister(name)


def policy_kind_names() -> list:
    """The registered policy kinds, the built-ins first."""
    return _KINDS.names()


def encode_policy(policy) -> tuple:
    """``(description, arrays)`` of a population member (see the module docstring); ``TypeError`` for a policy of
    no kind.

    Examples
    --------
    >>> encode_policy(object())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: a population member must be a tabular array, a UniformPolicy, a NeuralPolicy, ...
    """
    for name, kind in _KINDS.items():
        if kind.matches(policy):
            spec, arrays = kind.encode(policy)
            return {"kind": name, **spec}, arrays
    cls = type(policy)
    if has_codec(cls) and "." not in cls.__qualname__ and cls.__module__ != "__main__":
        return encode_policy_as(_class_name(cls), policy)
    raise TypeError(f"a population member must be a tabular array, a UniformPolicy, a NeuralPolicy, a policy of a "
                    f"registered kind ({policy_kind_names()}) or a module-level class with architecture(), to_arrays() "
                    f"and from_arrays() to be saved or sent to a worker; got {cls.__name__}.")


def encode_policy_as(name: str, policy) -> tuple:
    """``(description, arrays)`` of ``policy`` as a class with the codec protocol, of kind ``name``."""
    spec, arrays = _protocol_encode(policy)
    return {"kind": name, **spec}, arrays


def decode_policy(description: dict, arrays: dict):
    """The policy :func:`encode_policy` described; ``ValueError`` naming the kind when it is not known (a
    ``"module:Class"`` kind imports its module only under the rule of :mod:`games.registry`)."""
    kind = description.get("kind") if isinstance(description, dict) else None
    if not isinstance(kind, str):
        raise ValueError(f"a stored policy's description must be a dict with a 'kind' (one of "
                         f"{policy_kind_names()} or 'module:Class'); got {description!r}.")
    entry = _KINDS.get(kind)
    spec = {key: value for key, value in description.items() if key != "kind"}
    return entry.decode(spec, dict(arrays))


def _decode_tabular(spec, arrays):
    return np.asarray(arrays["table"], dtype=np.float64)


register_policy_kind("tabular", None, encode=lambda p: ({}, {"table": np.asarray(p, dtype=np.float64)}),
                     decode=_decode_tabular)
register_policy_kind("uniform", UniformPolicy, encode=lambda p: ({"num_actions": int(p.num_actions)}, {}),
                     decode=lambda spec, arrays: UniformPolicy(int(spec["num_actions"])))
register_policy_kind("neural", "psro.oracles.learned.networks:NeuralPolicy")   # (torch loads with the first one)
register_policy_kind("observation_table", "psro.oracles.learned.observation_table:ObservationTablePolicy")
