"""The meta-solver registry: names in a PSRO config mapped to solver-registry functions.

A meta-solver takes the meta-game (a :class:`games.NormalFormGame`) and returns
a :class:`solvers.Equilibrium`. Its ``kind`` decides the loop:

* ``"product"`` (concepts nash, qre, rae, uniform, dynamics, alpharank):
  Nash-style PSRO; each player responds to the product of the others'
  ``marginals``;
* ``"cce"`` / ``"ce"`` (the correlated family: ``ce``, ``cce``, ``mgce``,
  ``mgcce``, ...): JPSRO; players respond to conditionals of the ``joint``.

Names are any method of :func:`solvers.methods` (or a ``"package.module:name"``
solver, see :func:`solvers.register`), plus the meta-solvers registered here
with :func:`register_meta_solver`: ``"alpharank"`` (:func:`ranking.alpharank`
on the meta-game as a multi-population chain, its stationary distribution over
joint profiles marginalised per player). Both registries are
:class:`games.registry.Registry` objects: a second registration of a name
raises unless ``replace=True``.

``"nash"`` is the registry's Nash dispatcher (general-sum and n-player
meta-games), except on two-player constant-sum meta-games, where it keeps the
zero-sum LP between iterations and warm-starts it (:mod:`psro.meta.warm_start_lp`),
since the meta-game only grows. The warm answer is checked like any solver's:
if its NashConv on the meta-game exceeds a round-off tolerance, the cold solve
of ``"nash_zero_sum"`` is used.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

import numpy as np

from games.normal_form import NormalFormGame
from games.registry import Registry, split_name
from psro.meta.warm_start_lp import WarmStartZeroSumLP
from solvers import make_equilibrium, methods, solve
from solvers.equilibrium import Equilibrium
from solvers.registry import PRODUCT_CONCEPTS, method_info

logger = logging.getLogger(__name__)

__all__ = ["MetaSolver", "MetaSolverCapabilities", "meta_solver_capabilities", "WARM_STARTED", "JOINT_KINDS",
           "PRUNE_DOMINATED", "known_names", "get_meta_solver", "loop_meta_solvers"]

WARM_STARTED = frozenset({"nash"})  # names whose 2-player constant-sum LP is kept and warm-started across iterations
JOINT_KINDS = ("ce", "cce")         # meta-solver kinds that make the loop JPSRO
PRUNE_DOMINATED = ("strict", "weak")  # PSROConfig.prune_dominated: which domination prunes meta-game policies
ALPHARANK = "alpharank"


@dataclass(frozen=True)
class _Registered:
    """A meta-solver registered here: ``function(meta_game, **options) -> Equilibrium`` and whether it is joint."""

    function: object
    joint: bool


def _adopt(name: str, function):
    """A ``module:name`` whose module registered no meta-solver: the module's function ``name`` (its ``joint``
    attribute, where it has one, says whether it answers a joint distribution)."""
    if not callable(function):
        raise ValueError(f"meta_solver {name!r} is a {type(function).__name__}, not a function "
                         "function(meta_game, **options) -> Equilibrium.")
    return _Registered(function, bool(getattr(function, "joint", False)))


_META_SOLVERS = Registry("meta_solver", hint="Register one with psro.meta.solvers.register_meta_solver(name) or "
                         "solvers.register(name, concept=...).", adopt=_adopt)


def register_meta_solver(name: str, *, joint: bool = False, replace: bool = False):
    """Decorator: register ``function(meta_game, **options) -> Equilibrium`` as the meta-solver ``name``.

    ``joint`` declares its :class:`MetaSolverCapabilities` (a joint answer makes the loop JPSRO, a product one
    PSRO). A second registration of ``name`` raises ``ValueError`` unless it is the same or ``replace=True``.
    A solver of :func:`solvers.register` is a meta-solver already; this is for meta-solvers that are not solvers
    of the game (such as alpha-Rank, a ranking).

    Examples
    --------
    >>> import numpy as np
    >>> from solvers import make_equilibrium
    >>> @register_meta_solver("last_policy_example")
    ... def last_policy(meta_game):
    ...     return make_equilibrium(meta_game, marginals=[np.eye(k)[k - 1] for k in meta_game.shape],
    ...                             concept="nash", method="last_policy_example")
    >>> from games import catalog
    >>> get_meta_solver("last_policy_example")(catalog.matching_pennies()).marginals[0].tolist()
    [0.0, 1.0]
    >>> unregister_meta_solver("last_policy_example")
    """
    def decorate(function):
        if not callable(function):
            raise TypeError(f"register_meta_solver({name!r}) decorates a function; got {type(function).__name__}.")
        _META_SOLVERS.register(name, _Registered(function, bool(joint)), replace=replace)
        return function
    return decorate


def unregister_meta_solver(name: str) -> None:
    """Remove a meta-solver of :func:`register_meta_solver` (for tests and notebooks)."""
    _META_SOLVERS.unregister(name)


@dataclass(frozen=True)
class MetaSolverCapabilities:
    """What a meta-solver name can do.

    Attributes
    ----------
    joint : bool
        It answers with a joint distribution the players respond to conditionals of (JPSRO: the correlated
        family); False: a product one, each player responding to the others' marginals (PSRO).

    Examples
    --------
    >>> meta_solver_capabilities("mgcce"), meta_solver_capabilities("nash").joint
    (MetaSolverCapabilities(joint=True), False)
    """

    joint: bool = False


def meta_solver_capabilities(name: str) -> MetaSolverCapabilities:
    """What the meta-solver ``name`` can do (:class:`MetaSolverCapabilities`); unknown names raise
    ``ValueError`` listing the known ones."""
    return MetaSolverCapabilities(joint=get_meta_solver(name).is_joint)


@dataclass(frozen=True)
class MetaSolver:
    """A named meta-solver.

    Attributes
    ----------
    name : str
        The name used in configs (``"nash"``, ``"mgcce"``, ``"alpharank"``, ...).
    method : str
        The :func:`solvers.solve` method it calls (``"alpharank"`` for alpha-Rank).
    kind : {"product", "ce", "cce"}
        What the loop does with its answer: PSRO on the marginals, or JPSRO on the joint.
    options : tuple of (str, value)
        Keyword options passed to the solver.
    prune : {None, "strict", "weak"}
        Solve the meta-game left after iterated elimination of (strictly or weakly) dominated policies, by pure
        and mixed strategies, embedded back with zero weight on the pruned ones
        (:func:`solvers.dominance.solve_pruned`); see :meth:`pruning`.

    Examples
    --------
    >>> from games import catalog
    >>> get_meta_solver("nash")(catalog.matching_pennies()).marginals[0].tolist()
    [0.5, 0.5]
    >>> get_meta_solver("mgcce").kind
    'cce'
    """

    name: str
    method: str
    kind: str = "product"
    options: tuple = ()
    warm_lp: WarmStartZeroSumLP | None = field(default=None, repr=False, compare=False)
    prune: str | None = None

    @property
    def is_joint(self) -> bool:
        return self.kind in JOINT_KINDS

    def pruning(self, mode: str | None) -> "MetaSolver":
        """This solver with dominated policies pruned first (``mode``: ``"strict"``, ``"weak"`` or None: as is).

        A pruning solver solves cold (no warm-started LP): the reduced games of
        successive iterations are not one growing game.

        Examples
        --------
        >>> import numpy as np
        >>> from games import NormalFormGame
        >>> game = NormalFormGame(np.array([[[1.0, 1.0], [0.0, 0.0]], [[1.0, 0.0], [1.0, 0.0]]]))
        >>> eq = get_meta_solver("nash").pruning("weak")(game)
        >>> [m.tolist() for m in eq.marginals], eq.info["dominance_eliminated"]
        ([[1.0, 0.0], [1.0, 0.0]], 2)
        """
        if mode is None:
            return self
        if mode not in PRUNE_DOMINATED:
            raise ValueError(f"prune_dominated must be one of {list(PRUNE_DOMINATED)} or None; got {mode!r}.")
        return replace(self, warm_lp=None, prune=mode)

    def __call__(self, meta_game: NormalFormGame) -> Equilibrium:
        if self.prune is not None:
            from solvers.dominance import solve_pruned  # (scipy.optimize: loaded when pruning is asked for)

            return solve_pruned(meta_game, solver=replace(self, prune=None), strict=self.prune == "strict")
        if self.method in _META_SOLVERS:
            return _META_SOLVERS.get(self.method).function(meta_game, **dict(self.options))
        if self.warm_lp is None or meta_game.num_players != 2 or not meta_game.is_constant_sum():
            return solve(meta_game, self.method, **dict(self.options))
        try:
            sol = self.warm_lp.solve(meta_game.payoffs[0])
        except RuntimeError as exc:
            logger.warning("warm-started LP failed (%s); solving from scratch", exc)
            return solve(meta_game, "nash_zero_sum")
        eq = make_equilibrium(meta_game, marginals=[sol.x, sol.y], concept="nash", method=self.method,
                              info={"value": sol.value, "warm_start": sol.warm, "simplex_iterations": sol.iterations,
                                    "converged": True})
        scale = max(1.0, float(np.abs(meta_game.payoffs).max()))
        if eq.gap > 1e-9 * scale:
            logger.info("warm-started LP gave meta-game NashConv %.3g; solving from scratch", eq.gap)
            return solve(meta_game, "nash_zero_sum")
        return eq

    def check_fits(self, num_players: int, constant_sum: bool) -> None:
        """Raise ``ValueError`` (naming ``meta_solver``) if it cannot solve this game's meta-games.

        Examples
        --------
        >>> get_meta_solver("nash_zero_sum").check_fits(3, constant_sum=False)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: meta_solver='nash_zero_sum' (solver 'nash_zero_sum') solves 2-player constant-sum meta-games; ...
        >>> get_meta_solver("nash").check_fits(3, constant_sum=False)   # the n-player dispatcher
        """
        if self.method in _META_SOLVERS:
            return
        spec = method_info(self.method)
        too_few = num_players < spec.min_players
        too_many = spec.max_players is not None and num_players > spec.max_players
        if too_few or too_many or (spec.zero_sum_only and not constant_sum):
            need = []
            if spec.max_players is not None:
                need.append(f"{spec.max_players}-player" if spec.max_players == spec.min_players
                            else f"{spec.min_players}-{spec.max_players}-player")
            if spec.zero_sum_only:
                need.append("constant-sum")
            kind = "constant-sum" if constant_sum else "not constant-sum"
            raise ValueError(
                f"meta_solver={self.name!r} (solver {self.method!r}) solves {' '.join(need)} meta-games; the game "
                f"has {num_players} players and is {kind}. Use meta_solver='nash', 'uniform', a correlated "
                f"solver such as 'mgcce', or another of: {', '.join(known_names())}."
            )


@register_meta_solver(ALPHARANK)
def _alpharank_meta(meta_game: NormalFormGame, **options) -> Equilibrium:
    """alpha-Rank of the meta-game as a multi-population chain; ``pi`` (C order) marginalised per player."""
    from ranking import alpharank

    options.setdefault("single_population", False)
    result = alpharank(meta_game, **options)
    joint = np.asarray(result.pi, dtype=np.float64).reshape(meta_game.shape)
    n = meta_game.num_players
    marginals = [joint.sum(axis=tuple(q for q in range(n) if q != p)) for p in range(n)]
    return make_equilibrium(meta_game, marginals=marginals, concept="alpharank", method=ALPHARANK,
                            info={"pi": joint})


def known_names() -> list:
    """Every name :func:`get_meta_solver` accepts.

    Examples
    --------
    >>> {"nash", "uniform", "alpharank", "mgcce", "mgce"} <= set(known_names())
    True
    """
    return sorted(set(methods()) | set(_META_SOLVERS.names()))


def get_meta_solver(name: str, **options) -> MetaSolver:
    """Resolve a meta-solver name; unknown names raise ``ValueError`` listing the known ones.

    Parameters
    ----------
    name : str
    **options
        Keyword options for the solver (e.g. ``alpha=10.0`` for ``"alpharank"``).

    Examples
    --------
    >>> get_meta_solver("nash")
    MetaSolver(name='nash', method='nash', kind='product', options=(), prune=None)
    >>> get_meta_solver("nash_zero_sum").warm_lp is None   # the registry's cold solve
    True
    >>> get_meta_solver("mgce").kind
    'ce'
    >>> get_meta_solver("nahs")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown meta_solver 'nahs'. Known meta-solvers: ...
    """
    if not isinstance(name, str):
        raise TypeError(f"meta_solver must be a name (str); got {type(name).__name__}.")
    if name in _META_SOLVERS or (split_name(name)[0] is not None and _imports_meta_solver(name)):
        kind = "cce" if _META_SOLVERS.get(name).joint else "product"
        return MetaSolver(name=name, method=name, kind=kind, options=tuple(sorted(options.items())))
    if name not in methods() and split_name(name)[0] is None:
        raise ValueError(f"unknown meta_solver {name!r}. Known meta-solvers: {', '.join(known_names())}.")
    concept = method_info(name).concept
    if concept in PRODUCT_CONCEPTS:
        kind = "product"
    elif concept in JOINT_KINDS:
        kind = concept
    else:
        raise ValueError(f"meta_solver {name!r} has concept {concept!r}, which PSRO cannot use; "
                         f"choose one of: {', '.join(known_names())}.")
    warm = WarmStartZeroSumLP() if name in WARM_STARTED and not options else None
    return MetaSolver(name=name, method=name, kind=kind, options=tuple(sorted(options.items())), warm_lp=warm)


def _imports_meta_solver(name: str) -> bool:
    """Whether the ``module:name`` ``name`` is a meta-solver of this registry (rather than a solver): importing its
    module registered it here."""
    try:
        _META_SOLVERS.get(name)
    except ValueError:
        return False
    return True


def loop_meta_solvers(config) -> tuple:
    """The training and evaluation meta-solvers of a :class:`psro.config.PSROConfig` (one object when they are
    the same). With a top-up or pruning both solve cold: a top-up changes old entries and pruning solves reduced
    games, so a warm-started LP would be rebuilt anyway, and cold solves keep a resumed run's solutions
    independent of the solves before it.

    Examples
    --------
    >>> from psro.config.model import PSROConfig
    >>> train, evaluation = loop_meta_solvers(PSROConfig(meta_solver="nash", prune_dominated="weak"))
    >>> train is evaluation, train.prune, train.warm_lp
    (True, 'weak', None)
    """
    meta = get_meta_solver(config.meta_solver, **(config.meta_solver_options or {}))
    same = config.eval_meta_solver in (None, config.meta_solver)
    evaluation = meta if same else get_meta_solver(config.eval_meta_solver)
    if config.top_up_episodes or config.prune_dominated:
        cold = [replace(m, warm_lp=None).pruning(config.prune_dominated) for m in (meta, evaluation)]
        meta, evaluation = cold[0], cold[0] if same else cold[1]
    return meta, evaluation
