"""The evaluator seam: the :class:`Evaluator` protocol, the registry of evaluators by name, and what the exact
ones share.

An evaluator fills blocks of the meta-game: ``evaluate(populations, block,
meta_game=..., on_batch=...)`` records the payoffs of the profiles
``block[0] x block[1] x ...`` in the :class:`games.EmpiricalGame` (exactly,
through ``set_exact_block``, or as sampled episodes with their counts and
variances) and calls ``on_batch`` after each batch it stored; ``done(meta_game,
block)`` says whether a block needs nothing more. The loop treats every
evaluator the same way.

:func:`register_evaluator` registers a factory ``factory(tree, **options)``;
the built-ins ``sequence_form``, ``openspiel`` (:mod:`psro.evaluation.exact`)
and ``monte_carlo`` (:mod:`psro.evaluation.monte_carlo`) are registered so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from games.empirical import EmpiricalGame
from games.registry import Registry

__all__ = ["Evaluator", "EvaluationBatch", "EvaluatorCapabilities", "EvaluatorInfo", "TopUpEvaluator",
           "register_evaluator", "evaluator_capabilities", "unregister_evaluator", "make_evaluator", "evaluator_names",
           "record_exact_block", "block_done", "new_profile_blocks"]


@dataclass(frozen=True)
class EvaluationBatch:
    """One batch of sampled episodes, already added to the meta-game when ``on_batch`` sees it.

    Attributes
    ----------
    profiles : ndarray of int, shape (num_profiles, num_players)
        The pure profiles sampled in this batch.
    episodes : ndarray of int, shape (num_profiles,)
        Episodes played per profile in this batch.
    batch : int
        Batch number within the current call (from 0).
    num_batches : int
        Number of batches of the current call.
    """

    profiles: np.ndarray
    episodes: np.ndarray
    batch: int
    num_batches: int


@runtime_checkable
class Evaluator(Protocol):
    """What the loop asks of an evaluator (see the module docstring). ``exact`` says whether its entries are
    exact payoffs (no sampling error); ``name`` is its registered name."""

    name: str
    exact: bool

    def evaluate(self, populations, indices: Sequence[Sequence[int]], *, meta_game: EmpiricalGame | None = None,
                 on_batch: Callable[[EvaluationBatch], None] | None = None) -> np.ndarray:
        """Record the block's payoffs in ``meta_game`` (calling ``on_batch`` after each batch); return them."""
        ...

    def done(self, meta_game: EmpiricalGame, indices: Sequence[Sequence[int]]) -> bool:
        """True when the block needs no more evaluation."""
        ...


@dataclass(frozen=True)
class EvaluatorCapabilities:
    """What a registered evaluator declares it can do (read before any evaluator is built).

    Attributes
    ----------
    sampled : bool
        Its entries are sampled episodes (counts, variances), not exact payoffs; it takes the sampling options
        (``episodes_per_profile``, ``executor``, ``seed``, ...).
    needs_tree : bool
        Its factory needs the game tree (a sampled one may play policy objects without one).
    top_up : bool
        It has ``top_up_rounds(meta_game, populations, budget, *, method, rounds, start, progress, on_round)``
        (:func:`psro.evaluation.top_up.run_top_up`), so ``top_up_episodes`` may be set.

    Examples
    --------
    >>> from psro.evaluation import evaluator_capabilities
    >>> evaluator_capabilities("monte_carlo")
    EvaluatorCapabilities(sampled=True, needs_tree=False, top_up=True)
    >>> evaluator_capabilities("sequence_form").sampled
    False
    """

    sampled: bool = False
    needs_tree: bool = True
    top_up: bool = False


@dataclass(frozen=True)
class EvaluatorInfo:
    """A registered evaluator: its name, its factory ``factory(tree, **options)`` and its capabilities."""

    name: str
    factory: Callable
    capabilities: EvaluatorCapabilities


@runtime_checkable
class TopUpEvaluator(Evaluator, Protocol):
    """An evaluator that declares ``top_up`` (:class:`EvaluatorCapabilities`) also has ``top_up_rounds``, which
    :func:`psro.evaluation.top_up.run_top_up` calls (see
    :meth:`psro.evaluation.monte_carlo.MonteCarloEvaluator.top_up_rounds`)."""

    def top_up_rounds(self, meta_game: EmpiricalGame, populations, budget: int, *, method: str = "support",
                      rounds: int = 4, key: tuple = (), strategy=None, progress=None, on_progress=None,
                      on_batch=None, **options):
        """Spend ``budget`` more episodes in ``rounds`` resumable rounds; return the progress (``TopUpProgress``)."""
        ...


def _adopt(name: str, factory) -> EvaluatorInfo:
    """A ``module:name`` whose module registered no evaluator: the module's attribute ``name`` is the factory, with
    :func:`register_evaluator`'s default capabilities (or the factory's ``sampled``, ``needs_tree``, ``top_up``
    attributes where it has them)."""
    if not callable(factory):
        raise ValueError(f"evaluator {name!r} is a {type(factory).__name__}, not a factory; give a function or "
                         "class factory(tree, **options).")
    return EvaluatorInfo(name, factory, EvaluatorCapabilities(
        sampled=bool(getattr(factory, "sampled", False)), needs_tree=bool(getattr(factory, "needs_tree", True)),
        top_up=bool(getattr(factory, "top_up", False))))


_EVALUATORS = Registry("evaluator", hint="Register a new one with @psro.evaluation.register_evaluator(name).",
                       adopt=_adopt)


def register_evaluator(name: str, *, sampled: bool = False, needs_tree: bool = True, top_up: bool = False,
                       replace: bool = False) -> Callable:
    """Decorator: register ``factory(tree, **options) -> Evaluator`` under ``name``.

    ``sampled``, ``needs_tree`` and ``top_up`` declare its
    :class:`EvaluatorCapabilities` (:func:`evaluator_capabilities`).
    Registering a taken name again raises ``ValueError`` unless it is the same
    factory with the same capabilities or ``replace=True`` (the rule of every
    registry, :class:`games.registry.Registry`); a config may name an
    evaluator as ``"package.module:name"``, whose module is imported on first
    use (see :mod:`games.registry`).

    Examples
    --------
    >>> from psro.evaluation import SequenceFormEvaluator, evaluator_names
    >>> @register_evaluator("exact_again_example")
    ... class ExactAgain(SequenceFormEvaluator):
    ...     name = "exact_again_example"
    >>> "exact_again_example" in evaluator_names()
    True
    >>> unregister_evaluator("exact_again_example")
    """
    if not isinstance(name, str) or not name.strip():
        raise TypeError(f"name must be a non-empty string naming the evaluator; got {name!r}.")

    def decorate(factory: Callable) -> Callable:
        if not callable(factory):
            raise TypeError(f"register_evaluator({name!r}) decorates a factory (a class or function); "
                            f"got {type(factory).__name__}.")
        capabilities = EvaluatorCapabilities(sampled=bool(sampled), needs_tree=bool(needs_tree), top_up=bool(top_up))
        _EVALUATORS.register(name, EvaluatorInfo(name, factory, capabilities), replace=replace)
        return factory
    return decorate


def unregister_evaluator(name: str) -> None:
    """Remove a registered evaluator (for tests and notebooks that register a temporary one)."""
    _EVALUATORS.unregister(name)


def evaluator_names() -> list:
    """The registered evaluator names, the built-ins first."""
    return _EVALUATORS.names()


def evaluator_capabilities(name: str) -> EvaluatorCapabilities:
    """What the evaluator registered as ``name`` declares it can do (:class:`EvaluatorCapabilities`);
    ``ValueError`` listing the known names when there is none."""
    return _EVALUATORS.get(name).capabilities


def make_evaluator(name: str, tree, **options) -> Evaluator:
    """Build the evaluator registered as ``name`` on ``tree`` with its ``options``.

    The built-in exact evaluators take no options; ``"monte_carlo"`` takes
    ``episodes_per_profile``, ``executor``, ``seed``, ``episodes_per_task``,
    ``tasks_per_batch``, ``game``, ``num_envs`` and ``keyed``.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> make_evaluator("sequence_form", tree).name
    'sequence_form'
    >>> make_evaluator("monte_carlo", tree, episodes_per_profile=500, executor="serial", seed=3)
    MonteCarloEvaluator(kuhn_poker(), episodes_per_profile=500, executor=SerialExecutor(), seed=3)
    """
    info = _EVALUATORS.get(name)
    evaluator = info.factory(tree, **options)
    if not isinstance(evaluator, Evaluator):
        raise TypeError(f"the factory of evaluator {name!r} returned {type(evaluator).__name__}, which lacks "
                        "name, exact, evaluate() or done() (see psro.evaluation.Evaluator).")
    if info.capabilities.top_up and not isinstance(evaluator, TopUpEvaluator):
        raise TypeError(f"evaluator {name!r} declares top_up but its {type(evaluator).__name__} has no "
                        "top_up_rounds() (see psro.evaluation.base.TopUpEvaluator); register it without top_up=True.")
    return evaluator


def block_done(meta_game: EmpiricalGame, indices: Sequence[Sequence[int]], count: int) -> bool:
    """True when every profile of the block has at least ``count`` samples (an exact entry counts as one)."""
    ix = np.ix_(*[np.asarray(i, dtype=np.intp) for i in indices])
    return bool((meta_game.count[0][ix] >= count).all())


def record_exact_block(payoffs: np.ndarray, indices, meta_game: EmpiricalGame | None, on_batch) -> np.ndarray:
    """Write an exact block into ``meta_game`` (when given) and report it to ``on_batch`` as one batch."""
    if meta_game is not None:
        meta_game.set_exact_block(indices, payoffs)
        if on_batch is not None:
            grid = np.stack(np.meshgrid(*[np.asarray(list(i), dtype=np.int64) for i in indices], indexing="ij"),
                            axis=-1).reshape(-1, len(indices))
            on_batch(EvaluationBatch(profiles=grid, episodes=np.zeros(len(grid), dtype=np.int64), batch=0,
                                     num_batches=1))
    return payoffs


def new_profile_blocks(old_sizes, new_sizes) -> list:
    """Blocks of profiles, as one ``range`` per player, that cover each new profile exactly once.

    A profile is new when some player's index is ``>= old_sizes[p]``. Block
    ``q`` holds the profiles whose first new index is player q's: players
    before q old, player q new, players after q anything.

    Examples
    --------
    >>> new_profile_blocks([2, 3], [3, 4])
    [[range(2, 3), range(0, 4)], [range(0, 2), range(3, 4)]]
    """
    blocks = []
    for q in range(len(new_sizes)):
        index = ([range(old_sizes[r]) for r in range(q)] + [range(old_sizes[q], new_sizes[q])]
                 + [range(new_sizes[r]) for r in range(q + 1, len(new_sizes))])
        if all(len(ix) for ix in index):
            blocks.append(index)
    return blocks
