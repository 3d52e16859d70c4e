"""The training loops a run can use, by name: PSRO, the self-play family, offline PSRO and the PSRO variants.

``PSROConfig.algorithm`` names one; :func:`algorithm_class` imports its class on first use (so a worker that
only needs PSRO never imports the others). Every class takes ``Cls(config)`` or ``Cls(game, **fields)``, runs
with ``.run(iterations=..., time_limit=..., callback=...)`` to a history of the same columns
(:data:`psro.loop.state.HISTORY_COLUMNS`) and resumes from its checkpoint with ``Cls.resume(directory)``.

:data:`ALGORITHMS` is a :class:`games.registry.Registry` (the rule of every registry: a second registration of a
name raises unless ``replace=True``). :func:`register_algorithm` adds a loop, by its class or lazily as
``"module:Class"``, and declares its :class:`AlgorithmCapabilities`. A config may also name a loop as
``"package.module:Class"``: the module is imported on first use (see :mod:`games.registry` for which may be) and
its ``Class`` (a subclass of :class:`psro.PSRO`) is used.

Examples
--------
>>> algorithm_class("psro").__name__
'PSRO'
>>> algorithm_capabilities("coffee_psro").offline
True
>>> algorithm_class("alphazero")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
psro.errors.ConfigError: algorithm: unknown algorithm 'alphazero'; choose one of ['psro', ...] or 'module:Class'.
"""

from __future__ import annotations

from dataclasses import dataclass

from games.registry import Registry, import_named, split_name
from psro.errors import ConfigError

__all__ = ["ALGORITHMS", "AlgorithmCapabilities", "AlgorithmInfo", "algorithm_capabilities", "algorithm_class",
           "algorithm_names", "register_algorithm", "unregister_algorithm"]


@dataclass(frozen=True)
class AlgorithmCapabilities:
    """What a registered training loop declares.

    Attributes
    ----------
    offline : bool
        It learns from a dataset of trajectories (its policies live in the learned model's infostates, not the
        game's), not by playing the game.
    """

    offline: bool = False


@dataclass(frozen=True)
class AlgorithmInfo:
    """A registered training loop: its name, its class (or ``"module:Class"``, imported on first use), its
    :class:`AlgorithmCapabilities` and, if the algorithm runs another class when its oracle is learned (XDO: NXDO),
    that class as ``learned_target``."""

    name: str
    target: object
    capabilities: AlgorithmCapabilities
    learned_target: object = None

    def load(self, learned: bool = False) -> type:
        """The loop's class (importing its module the first time); ``learned``: the class for a learned oracle."""
        target = self.learned_target if learned and self.learned_target is not None else self.target
        if not isinstance(target, str):
            return target
        module, attribute = split_name(target)
        return getattr(import_named(module, field="algorithm"), attribute)


def _adopt(name: str, cls) -> AlgorithmInfo:
    """A ``module:Class`` naming a loop class its module did not register."""
    if not isinstance(cls, type):
        raise ConfigError("algorithm", f"{name!r} is not a class; name a training-loop class (a subclass of "
                          "psro.PSRO).")
    return AlgorithmInfo(name, cls, AlgorithmCapabilities())


#: Algorithm name -> :class:`AlgorithmInfo` (``list(ALGORITHMS)``: the names, ``name in ALGORITHMS``).
ALGORITHMS = Registry("algorithm", hint="Register one with psro.loop.algorithms.register_algorithm(name, Class).",
                      adopt=_adopt)


def register_algorithm(name: str, target, *, offline: bool = False, learned=None, replace: bool = False):
    """Register the training loop ``target`` (a class, or ``"module:Class"`` imported on first use) as ``name``;
    ``learned``, the same, is the loop a run of ``name`` uses when its oracle is learned (default: ``target``).

    A second registration of ``name`` raises ``ValueError`` unless it is the same or ``replace=True``. Returns
    ``target`` (so it decorates a class: ``register_algorithm("mine", MyLoop)``).

    Examples
    --------
    >>> from psro import PSRO
    >>> class Quiet(PSRO):
    ...     algorithm = "quiet_example"
    >>> _ = register_algorithm("quiet_example", Quiet)
    >>> algorithm_class("quiet_example") is Quiet
    True
    >>> unregister_algorithm("quiet_example")
    """
    for given in (target, learned) if learned is not None else (target,):
        if not isinstance(given, (type, str)):
            raise TypeError(f"register_algorithm({name!r}) takes a class or 'module:Class'; got "
                            f"{type(given).__name__}.")
    ALGORITHMS.register(name, AlgorithmInfo(name, target, AlgorithmCapabilities(offline=bool(offline)), learned),
                        replace=replace)
    return target


def unregister_algorithm(name: str) -> None:
    """Remove a registered training loop (for tests and notebooks)."""
    ALGORITHMS.unregister(name)


def algorithm_names() -> list:
    """The registered training-loop names, the built-ins first."""
    return ALGORITHMS.names()


def _info(name: str) -> AlgorithmInfo:
    if isinstance(name, str) and name not in ALGORITHMS and split_name(name)[0] is None:
        raise ConfigError("algorithm", f"unknown algorithm {name!r}; choose one of {algorithm_names()} or "
                          "'module:Class'.")
    return ALGORITHMS.get(name)


def algorithm_class(name: str, oracle: str | None = None) -> type:
    """The class that runs the algorithm ``name`` (a registered name or ``"module:Class"``) with the oracle
    ``oracle`` (None: the class registered for the exact oracles).

    Examples
    --------
    >>> algorithm_class("xdo").__name__, algorithm_class("xdo", oracle="ppo").__name__
    ('XDO', 'NXDO')
    """
    info = _info(name)
    if oracle is None or info.learned_target is None:
        return info.load()
    from psro.oracles import learned_oracle_names

    return info.load(learned=oracle in learned_oracle_names())


def algorithm_capabilities(name: str) -> AlgorithmCapabilities:
    """What the training loop ``name`` declares (:class:`AlgorithmCapabilities`)."""
    return _info(name).capabilities


for _name, _target in (("psro", "psro.loop.psro_loop:PSRO"), ("self_play", "psro.family.self_play:SelfPlay"),
                       ("fictitious_self_play", "psro.family.self_play:FictitiousSelfPlay"),
                       ("fxp", "psro.family.fxp:FXP"), ("league", "psro.family.league:League"),
                       ("nfsp", "psro.family.nfsp:NFSP"), ("xdo", "psro.variants.xdo:XDO"),
                       ("ppo_self_play", "psro.family.policy_gradient:PPOSelfPlay"),
                       ("mmd", "psro.family.policy_gradient:MMDSelfPlay")):
    register_algorithm(_name, _target, learned="psro.variants.nxdo:NXDO" if _name == "xdo" else None)
register_algorithm("rectified_psro", "psro.variants.rectified:RectifiedPSRO")
register_algorithm("diverse_psro", "psro.variants.diverse:DiversePSRO")
register_algorithm("anytime_psro", "psro.variants.anytime:AnytimePSRO")
register_algorithm("self_play_psro", "psro.variants.self_play_psro:SelfPlayPSRO")
register_algorithm("pipeline_psro", "psro.variants.pipeline:PipelinePSRO")
register_algorithm("coffee_psro", "psro.offline.coffee_psro:COffeEPSRO", offline=True)
register_algorithm("offline_psro", "psro.offline.coffee_psro:OfflinePSRO", offline=True)
