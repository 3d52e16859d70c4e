"""The oracle seam: what an oracle answers (:class:`Target`), what it returns (:class:`BestResponse`), the
:class:`Oracle` protocol and the registry of oracle factories by name.

An oracle is anything with a ``learned`` flag and a method
``respond(player, target, *, key=None) -> BestResponse``. ``key`` is the
call's ``(iteration, index)`` (the PSRO iteration and the target's position
in the player's list): a learned oracle derives its training seed from it and
the run's seed, so a resumed run, or one on another executor, trains exactly
the same responses; an exact oracle ignores it.

:func:`register_oracle` registers a factory ``factory(tree, seed=0, **options)
-> Oracle`` under a name; :func:`make_oracle` builds one by name. A learned
oracle's factory also takes ``game=`` and accepts ``tree=None`` (it plays the
game without a tree); an exact one needs the tree. The built-in
``exact``, ``openspiel``, ``dqn`` and ``ppo`` oracles are registered that way
(by :mod:`psro.oracles.exact`, :mod:`psro.oracles.openspiel` and
:mod:`psro.oracles.learned`), which :mod:`psro.oracles` imports; a new oracle
is one module with one ``@register_oracle("name")`` and needs no edit of the
loop.

Examples
--------
>>> import numpy as np
>>> from psro.oracles import register_oracle, make_oracle, oracle_names
>>> @register_oracle("first_action_example")
... class FirstAction:
...     learned = False
...     def __init__(self, tree, seed=0):
...         self.tree = tree
...     def respond(self, player, target, *, key=None):
...         info = self.tree.infostates[player]
...         policy = np.zeros((info.num_infostates, info.num_actions))
...         policy[np.arange(info.num_infostates), info.legal_mask.argmax(axis=1)] = 1.0
...         return BestResponse(player=player, policy=policy, value=float("nan"))
>>> "first_action_example" in oracle_names()
True
>>> unregister_oracle("first_action_example")
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from games.registry import Registry
from psro.policies import behaviour_from_plan

__all__ = ["BestResponse", "Target", "Oracle", "OracleCapabilities", "OracleInfo", "register_oracle",
           "unregister_oracle", "make_oracle", "oracle_names", "learned_oracle_names", "oracle_info",
           "oracle_capabilities"]


@dataclass(frozen=True, eq=False)
class BestResponse:
    """A deterministic best response and its value.

    Attributes
    ----------
    player : int
    policy : ndarray or policy object
        An exact oracle's: one-hot rows ``(num_infostates, num_actions)``. A
        learned oracle's on sampled play: the trained policy itself (a
        :class:`psro.oracles.learned.networks.NeuralPolicy`).
    value : float
        The responder's expected payoff against the opponents' policies.

    The compute a response used (0 for an exact one; a learned one counts its training and evaluation) reads as
    ``env_steps`` (environment decisions of its training), ``training_episodes`` (episodes its training
    finished) and ``eval_episodes`` (episodes played to value it); its learning curve as ``curve`` (one plain
    dict per training chunk, :mod:`psro.run.learning_curves`; none for an exact one).
    """

    player: int
    policy: np.ndarray
    value: float

    env_steps = property(lambda self: 0, doc="Environment decisions its training used.")
    training_episodes = property(lambda self: 0, doc="Episodes its training finished.")
    eval_episodes = property(lambda self: 0, doc="Episodes played to value it.")
    curve = property(lambda self: (), doc="A learned response's learning curve: one dict per training chunk.")


@dataclass(frozen=True, eq=False)
class Target:
    """What one player best-responds to: the others' policies, as a product or as a joint distribution.

    Attributes
    ----------
    player : int
        The responder.
    populations : sequence of populations
        Every player's population (anything with ``policies`` and ``len()``:
        tabular :class:`psro.policies.population.Population` arrays, or lists of
        policy objects such as neural networks); the responder's own is read
        only for a learned oracle's warm start.
    mixtures : tuple of ndarray, optional
        Product target: one probability vector per player over its
        population (the responder's entry is ignored).
    profiles : ndarray of int, shape (K, num_players), optional
        Joint target: the support, one population index per player and row
        (the responder's column is ignored) ...
    weights : ndarray, shape (K,), optional
        ... and the probability of each row (summing to one).
    recommendation : int, optional
        CE-JPSRO: the responder's recommended policy this target conditions on.
    mass : float
        Probability of this target's condition (the recommendation) under the
        meta-distribution; 1 for product and CCE targets.
    on_policy_value : float
        The responder's meta-game value under the target when it follows the
        recommendation (NaN when not known); a best response's gain over it is
        the deviation incentive.
    initial_policy : NeuralPolicy, optional
        For a learned oracle: the network whose weights the training starts
        from (a warm start); None: the oracle's ``warm_start`` option decides.
    """

    player: int
    populations: Sequence
    mixtures: tuple | None = None
    profiles: np.ndarray | None = None
    weights: np.ndarray | None = None
    recommendation: int | None = None
    mass: float = 1.0
    on_policy_value: float = float("nan")
    initial_policy: object = None

    @property
    def is_joint(self) -> bool:
        return self.profiles is not None

    def opponent_plans(self) -> list:
        """Product target: each player's mixed realization plan ``w @ plans`` (the responder's entry too)."""
        if self.is_joint:
            raise ValueError("opponent_plans() needs a product target; this target is joint.")
        return [np.asarray(w, dtype=np.float64) @ pop.plans for w, pop in zip(self.mixtures, self.populations)]

    def opponent_policies(self) -> list:
        """Product target: each player's mixture as one behaviour policy ``(I_q, A)``."""
        return [behaviour_from_plan(x, pop.infostates) for x, pop in zip(self.opponent_plans(), self.populations)]



@runtime_checkable
class Oracle(Protocol):
    """A best-response oracle: ``respond`` answers one :class:`Target`; ``learned`` says whether its values
    only bound the best response from below (a trained response) or are exact (then the loop may stop at a
    fixed point, and the gap is measured with this oracle's responses)."""

    learned: bool

    def respond(self, player: int, target: Target, *, key: tuple | None = None) -> BestResponse:
        """The best response of ``player`` to ``target``; ``key`` is ``(iteration, index)`` or None."""
        ...


@dataclass(frozen=True)
class OracleCapabilities:
    """What a registered oracle declares it can do (read before any oracle is built).

    Attributes
    ----------
    learned : bool
        It trains its responses on sampled play (their values only bound the best response from below); the
        config's ``oracle_options.total_steps`` applies to it, and its responses may be policy objects rather than
        arrays.
    needs_tree : bool
        Its factory needs the game tree (it cannot work from ``game=`` alone).
    normal_form : bool
        It works on a :class:`games.NormalFormGame` (its responses are pure strategies found exactly on the
        game's tree).
    teams : bool
        It responds for a team of members (``oracle_options["members"]``) on a team view
        (:func:`psro.sequence_form.team_view.team_payoffs`).

    Examples
    --------
    >>> from psro.oracles import oracle_capabilities
    >>> oracle_capabilities("exact")
    OracleCapabilities(learned=False, needs_tree=True, normal_form=True, teams=False)
    >>> oracle_capabilities("ppo").learned, oracle_capabilities("ppo").needs_tree
    (True, False)
    """

    learned: bool = False
    needs_tree: bool = True
    normal_form: bool = False
    teams: bool = False


@dataclass(frozen=True)
class OracleInfo:
    """A registered oracle: its name, its factory ``factory(tree, seed=0, **options)`` (a learned one's also
    takes ``game=``) and its declared :class:`OracleCapabilities`."""

    name: str
    factory: Callable
    capabilities: OracleCapabilities

    @property
    def learned(self) -> bool:
        return self.capabilities.learned


def _adopt(name: str, factory) -> OracleInfo:
    """A ``module:name`` whose module registered no oracle: the module's attribute ``name`` is the factory, with
    the capabilities :func:`register_oracle` gives by default (``learned``, ``needs_tree``, ``normal_form``,
    ``teams`` read from the factory's attributes of those names where it has them)."""
    if not callable(factory):
        raise ValueError(f"oracle {name!r} is a {type(factory).__name__}, not a factory; give a function or class "
                         "factory(tree, seed=0, **options).")
    learned = bool(getattr(factory, "learned", False))
    needs_tree = getattr(factory, "needs_tree", None)
    needs_tree = not (learned and _accepts(factory, "game")) if needs_tree is None else bool(needs_tree)
    return OracleInfo(name, factory, OracleCapabilities(
        learned=learned, needs_tree=needs_tree, normal_form=bool(getattr(factory, "normal_form", False)),
        teams=bool(getattr(factory, "teams", False))))


_ORACLES = Registry("oracle", hint="Register a new one with @psro.oracles.register_oracle(name).", adopt=_adopt)


def register_oracle(name: str, *, learned: bool = False, needs_tree: bool | None = None, normal_form: bool = False,
                    teams: bool = False, replace: bool = False) -> Callable:
    """Decorator: register ``factory(tree, seed=0, **options) -> Oracle`` under ``name``.

    ``learned`` must say what the built oracles' ``learned`` says; the config
    reads it before any oracle exists (``total_steps`` is for learned oracles
    only). A learned oracle's factory that accepts ``game=`` gets the game
    whenever the caller has it, and must then work with ``tree=None`` (no tree
    built); one without ``game=`` is only used with a tree. Registering a taken
    name again raises ``ValueError`` unless it is the same factory with the same
    capabilities or ``replace=True`` (the rule of every registry,
    :class:`games.registry.Registry`). A config may name an oracle as
    ``"package.module:name"``: the module is imported on first use (see
    :mod:`games.registry` for which modules may be) and registers ``name``.

    ``needs_tree`` (default: unless it is learned and its factory takes
    ``game=``), ``normal_form`` and ``teams``
    declare the oracle's :class:`OracleCapabilities`, which
    :func:`oracle_capabilities` answers.

    Examples
    --------
    See the module docstring.
    """
    if not isinstance(name, str) or not name.strip():
        raise TypeError(f"name must be a non-empty string naming the oracle; got {name!r}.")

    def decorate(factory: Callable) -> Callable:
        if not callable(factory):
            raise TypeError(f"register_oracle({name!r}) decorates a factory (a class or function); "
                            f"got {type(factory).__name__}.")
        plays_without_tree = bool(learned) and _accepts(factory, "game")
        capabilities = OracleCapabilities(learned=bool(learned),
                                          needs_tree=not plays_without_tree if needs_tree is None else bool(needs_tree),
                                          normal_form=bool(normal_form), teams=bool(teams))
        _ORACLES.register(name, OracleInfo(name, factory, capabilities), replace=replace)
        return factory
    return decorate


def unregister_oracle(name: str) -> None:
    """Remove a registered oracle (for tests and notebooks that register a temporary one)."""
    _ORACLES.unregister(name)


def oracle_names() -> list:
    """The registered oracle names, in registration order (the built-ins first)."""
    return _ORACLES.names()


def learned_oracle_names() -> list:
    """The registered names of learned oracles."""
    return [name for name, info in _ORACLES.items() if info.learned]


def oracle_info(name: str) -> OracleInfo:
    """The registry entry of ``name`` (a ``module:name`` imports its module); ``ValueError`` listing the known
    names when there is none."""
    return _ORACLES.get(name)


def oracle_capabilities(name: str) -> OracleCapabilities:
    """What the oracle registered as ``name`` declares it can do (:class:`OracleCapabilities`).

    Examples
    --------
    >>> from psro.oracles import oracle_capabilities
    >>> oracle_capabilities("team_pg").teams
    True
    """
    return oracle_info(name).capabilities


def _accepts(factory: Callable, argument: str) -> bool:
    """Whether ``factory`` takes the keyword ``argument`` (by name, or through ``**kwargs``)."""
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == argument and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) or p.kind == p.VAR_KEYWORD
               for p in parameters)


def _options_of(factory: Callable) -> list:
    """The keyword options a factory names (its parameters but the tree, ``seed`` and ``game``)."""
    try:
        parameters = list(inspect.signature(factory).parameters.values())[1:]
    except (TypeError, ValueError):
        return []
    return [p.name for p in parameters if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
            and p.name not in ("seed", "game")]


def make_oracle(name: str, tree, seed: int = 0, *, game=None, **options) -> Oracle:
    """The oracle registered as ``name``, built on ``tree`` (or ``game``) with the run's ``seed`` and ``options``.

    Parameters
    ----------
    name : str
        A registered oracle (:func:`oracle_names`).
    tree : GameTree or None
        The game tree; None when it is not built (learned oracles only).
    seed : int
    game : pyspiel.Game, str or environment game, optional
        Passed to learned factories that take ``game=`` (they play the game
        without a tree); an exact oracle's factory, or a learned one without
        that argument (then a tree is needed), does not get it.
    **options
        The oracle's options (``PSRO(oracle_options=...)``).

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.oracles import make_oracle
    >>> from psro.policies import uniform_policy
    >>> from psro.policies.population import Population, Provenance
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> pops = [Population(i) for i in tree.infostates]
    >>> _ = [p.add(uniform_policy(p.infostates), Provenance(0, "initial")) for p in pops]
    >>> target = Target(player=1, populations=pops, mixtures=(np.ones(1), np.ones(1)))
    >>> round(make_oracle("exact", tree).respond(1, target).value, 6)
    0.416667
    >>> make_oracle("ppo", None, game="leduc_poker", total_steps=2048).learned
    True
    >>> try:
    ...     make_oracle("exact", None, game="leduc_poker")
    ... except ValueError as error:
    ...     print(str(error).split(";")[0])
    oracle 'exact' needs the game tree, which was not built
    """
    info = oracle_info(name)
    takes_game = (info.learned or not info.capabilities.needs_tree) and game is not None \
        and _accepts(info.factory, "game")
    if tree is None and info.learned and not takes_game:
        raise ValueError(f"oracle {name!r} has no game tree to work on and its factory takes no game=; "
                         "give its factory a game= argument (it plays the game without a tree).")
    if tree is None and (info.capabilities.needs_tree or not takes_game):
        raise ValueError(f"oracle {name!r} needs the game tree, which was not built; use an oracle that needs "
                         f"none ({[n for n in oracle_names() if not oracle_capabilities(n).needs_tree]}) for games "
                         "whose tree is not built.")
    refused = sorted(key for key in options if not _accepts(info.factory, key))
    if refused:
        close = difflib.get_close_matches(refused[0], _options_of(info.factory), n=1)
        raise TypeError(f"oracle {name!r} takes no option {refused[0]!r}"
                        + (f"; did you mean {close[0]!r}?" if close else "")
                        + (f" Its options: {_options_of(info.factory)}." if _options_of(info.factory) else
                           " and no other (set oracle_options to null)."))
    oracle = info.factory(tree, seed=seed, **({"game": game} if takes_game else {}), **options)
    if not isinstance(oracle, Oracle):
        raise TypeError(f"the factory of oracle {name!r} returned {type(oracle).__name__}, which has no "
                        "respond(player, target, *, key) method and learned flag (see psro.oracles.Oracle).")
    return oracle
