"""Custom sequential games in plain Python, registered as OpenSpiel games.

Subclass :class:`SequentialGame`, describe the game with a few class
attributes, implement a handful of methods on a plain Python state (any object:
a tuple, a dataclass, a dict), and call ``MyGame.register()`` (or use it as a
class decorator). The game then loads by name with ``games.load("my_game")`` or
``pyspiel.load_game("my_game")``, and OpenSpiel's algorithms (``pyspiel``'s
C++ ones such as ``TabularBestResponse`` and ``expected_returns``, and the
Python ones such as ``exploitability.nash_conv``) run on it unchanged.

The methods to implement (``state`` is your own object):

========================================  =====================================================
``initial_state()``                       the state at the root of the game
``current_player(state)``                 the player to act, or ``CHANCE`` / ``TERMINAL``
``legal_actions(state)``                  the acting player's legal actions (ints, ascending)
``chance_outcomes(state)``                at chance nodes: a list of ``(action, probability)``
``apply_action(state, action)``           the next state (return a new object; see below)
``returns(state)``                        at terminal states: one payoff per player
``information_state(state, player)``      a string: all that ``player`` knows at ``state``
``observation(state, player)``            optional, defaults to ``information_state``
``action_to_string(state, player, a)``    optional, a readable action name
========================================  =====================================================

States are copied with :func:`copy.deepcopy` when OpenSpiel clones a state, so
``apply_action`` may either return a fresh object or modify its argument and
return it. ``information_state`` must have perfect recall (it must determine
the player's own earlier information states and actions), as OpenSpiel's
information-state strings do, and must name the player (OpenSpiel's tabular
policies key on the string alone); in a perfect-information game it must
identify the history. Transitions must be deterministic: randomness belongs in
chance nodes. Run :func:`games.check_game` on the game to validate all of this.
"""

from __future__ import annotations

import logging
import math
import operator
from collections.abc import Sequence
from typing import Any, ClassVar

from games.registry import Registry
from games.validation import check_int

__all__ = ["CHANCE", "TERMINAL", "SequentialGame", "register_game"]

#: Marker returned by ``current_player`` at chance nodes (OpenSpiel's ``PlayerId.CHANCE``).
CHANCE: int = -1
#: Marker returned by ``current_player`` at terminal states (OpenSpiel's ``PlayerId.TERMINAL``).
TERMINAL: int = -4

logger = logging.getLogger(__name__)

_UTILITIES = ("zero_sum", "constant_sum", "general_sum", "identical")


class SequentialGame:
    """Base class for a custom sequential (turn-based) game with optional chance.

    Attributes
    ----------
    name : str
        The short name the game is registered and loaded under, e.g. ``"my_game"``.
    num_players : int
        Number of players (default 2).
    num_distinct_actions : int
        Player actions are integers in ``[0, num_distinct_actions)``.
    max_chance_outcomes : int
        Chance actions are integers in ``[0, max_chance_outcomes)``; 0 (the
        default) declares a deterministic game.
    max_game_length : int
        The most player decisions (chance nodes not counted) in any play.
    max_chance_nodes_in_history : int or None
        The most chance nodes in any play; ``None`` (the default) declares
        ``max_game_length`` for a game with chance, as OpenSpiel does.
    min_utility, max_utility : float
        Bounds on every player's terminal return.
    utility : str
        ``"zero_sum"``, ``"constant_sum"`` (then set ``utility_sum``),
        ``"general_sum"`` (default) or ``"identical"``.
    utility_sum : float or None
        The constant sum of returns of a constant-sum game.
    perfect_information : bool
        Whether every player sees everything (default False).
    long_name : str
        A readable name (defaults to ``name``).
    parameters : dict
        Game parameters and their defaults (ints, floats, bools or strings). They
        are passed to ``__init__`` as keyword arguments and kept in ``self.params``;
        ``pyspiel.load_game("my_game(size=3)")`` sets them.

    information_state_tensor_shape, observation_tensor_shape : tuple or None
        Set these (and implement ``information_state_tensor`` /
        ``observation_tensor``) to give OpenSpiel's neural-network algorithms
        float tensors; by default only strings are provided.

    Override ``__init__`` (calling ``super().__init__(**params)``) to derive
    instance attributes such as ``max_utility`` from parameters. If
    ``num_players`` depends on a parameter, also set the class attributes
    ``min_num_players`` and ``max_num_players``.

    Examples
    --------
    Matching pennies played in turns, where player 1 does not see player 0's coin:

    >>> import pyspiel
    >>> from games import SequentialGame, TERMINAL, load
    >>> class HiddenPennies(SequentialGame):
    ...     name = "doc_hidden_pennies"
    ...     num_distinct_actions = 2
    ...     max_game_length = 2
    ...     min_utility, max_utility, utility = -1.0, 1.0, "zero_sum"
    ...     def initial_state(self):
    ...         return ()
    ...     def current_player(self, state):
    ...         return TERMINAL if len(state) == 2 else len(state)
    ...     def legal_actions(self, state):
    ...         return [0, 1]
    ...     def apply_action(self, state, action):
    ...         return state + (action,)
    ...     def returns(self, state):
    ...         win = 1.0 if state[0] == state[1] else -1.0
    ...         return [win, -win]
    ...     def information_state(self, state, player):
    ...         return f"p{player}:" + (str(state[0]) if player == 0 and state else "")
    >>> _ = HiddenPennies.register()
    >>> game = load("doc_hidden_pennies")
    >>> game.num_players(), game.num_distinct_actions()
    (2, 2)
    >>> s = game.new_initial_state(); s.apply_action(1)
    >>> s.information_state_string(1), s.legal_actions()
    ('p1:', [0, 1])
    >>> uniform = pyspiel.UniformRandomPolicy(game)
    >>> pyspiel.expected_returns(game.new_initial_state(), uniform, -1, True)
    [0.0, 0.0]
    """

    CHANCE: ClassVar[int] = CHANCE
    TERMINAL: ClassVar[int] = TERMINAL

    name: ClassVar[str] = ""
    long_name: ClassVar[str] = ""
    num_players: int = 2
    num_distinct_actions: int = 0
    max_chance_outcomes: int = 0
    max_game_length: int = 0
    max_chance_nodes_in_history: int | None = None
    min_utility: float = math.nan
    max_utility: float = math.nan
    utility: str = "general_sum"
    utility_sum: float | None = None
    perfect_information: bool = False
    parameters: ClassVar[dict] = {}
    information_state_tensor_shape: ClassVar[tuple | None] = None
    observation_tensor_shape: ClassVar[tuple | None] = None

    def __init__(self, **params: Any) -> None:
        unknown = sorted(set(params) - set(type(self).parameters))
        if unknown:
            raise ValueError(
                f"{type(self).__name__} got unknown parameter(s) {unknown}; declare them in the "
                f"class attribute `parameters` (known: {sorted(type(self).parameters)})."
            )
        self.params = {**type(self).parameters, **params}

    # ------------------------------------------------------------- user API
    def initial_state(self) -> Any:
        """The state at the root of the game (any Python object)."""
        raise NotImplementedError(f"{type(self).__name__} must implement initial_state().")

    def current_player(self, state: Any) -> int:
        """The player to act at ``state`` (0-based), or ``CHANCE`` or ``TERMINAL``."""
        raise NotImplementedError(f"{type(self).__name__} must implement current_player(state).")

    def legal_actions(self, state: Any) -> Sequence[int]:
        """The acting player's legal actions at a decision node, ascending, in ``[0, num_distinct_actions)``."""
        raise NotImplementedError(f"{type(self).__name__} must implement legal_actions(state).")

    def chance_outcomes(self, state: Any) -> Sequence[tuple[int, float]]:
        """At a chance node: ``(action, probability)`` pairs with probabilities summing to 1."""
        raise NotImplementedError(
            f"{type(self).__name__} has a chance node but does not implement chance_outcomes(state)."
        )

    def apply_action(self, state: Any, action: int) -> Any:
        """The state reached by playing ``action`` (a player's or chance's) at ``state``."""
        raise NotImplementedError(f"{type(self).__name__} must implement apply_action(state, action).")

    def returns(self, state: Any) -> Sequence[float]:
        """At a terminal state: one payoff per player, within ``[min_utility, max_utility]``."""
        raise NotImplementedError(f"{type(self).__name__} must implement returns(state).")

    def information_state(self, state: Any, player: int) -> str:
        """Everything ``player`` knows at ``state``, as a string (with perfect recall)."""
        raise NotImplementedError(f"{type(self).__name__} must implement information_state(state, player).")

    def observation(self, state: Any, player: int) -> str:
        """What ``player`` observes now (may forget the past); defaults to ``information_state``."""
        return self.information_state(state, player)

    def information_state_tensor(self, state: Any, player: int):
        """Optional: a float array of shape ``information_state_tensor_shape`` (for neural oracles)."""
        raise NotImplementedError(f"{type(self).__name__} does not provide information_state_tensor.")

    def observation_tensor(self, state: Any, player: int):
        """Optional: a float array of shape ``observation_tensor_shape``."""
        raise NotImplementedError(f"{type(self).__name__} does not provide observation_tensor.")

    def action_to_string(self, state: Any, player: int, action: int) -> str:
        """A readable name for ``action`` taken by ``player`` (``CHANCE`` for chance)."""
        return f"chance:{action}" if player == CHANCE else f"p{player}:{action}"

    def state_to_string(self, state: Any) -> str:
        """A readable description of ``state`` (defaults to ``repr(state)``)."""
        return repr(state)

    # -------------------------------------------------------- registration
    @classmethod
    def register(cls) -> type:
        """Register the game with OpenSpiel under ``cls.name``; returns ``cls`` (usable as a decorator).

        Registering the same class twice is a no-op. A new definition of the
        same class (same module and qualified name, as when a notebook cell is
        run again) replaces the old one, provided its ``parameters`` keep the
        same names. Registering another class under a taken name raises
        ``ValueError``: OpenSpiel cannot unregister a game.

        Examples
        --------
        >>> import games
        >>> from games.examples.trust_dilemma import TrustDilemma
        >>> TrustDilemma.register() is TrustDilemma
        True
        >>> games.load("trust_dilemma").num_players()
        2
        """
        import pyspiel

        _validate_class(cls)
        _validate_instance(cls())  # the declarations with default parameters
        key = cls.name
        owner = _REGISTERED.get(key) if key in _REGISTERED else None
        if owner is cls:
            return cls
        if owner is not None and (owner.__module__, owner.__qualname__) == (cls.__module__, cls.__qualname__):
            if set(owner.parameters) != set(cls.parameters):
                raise ValueError(
                    f"{cls.__qualname__} was registered with parameters {sorted(owner.parameters)}; a new "
                    f"definition cannot change them (now {sorted(cls.parameters)}). Give it another `name`."
                )
            logger.info("replacing the registered definition of %r", key)
            _REGISTERED.register(key, cls, replace=True)
            return cls
        if owner is not None or key in pyspiel.registered_names():
            raise ValueError(
                f"an OpenSpiel game named {key!r} is already registered"
                f"{f' by {owner.__qualname__}' if owner else ''}; give {cls.__qualname__} another `name`."
            )
        base = _make_wrapper_classes()[0]

        def __init__(self, params=None):
            current = _REGISTERED.get(key)  # the latest definition of the class
            impl = current(**dict(params or {}))
            _validate_instance(impl)
            base.__init__(self, impl, _game_type(current), _game_info(impl), dict(impl.params))

        # OpenSpiel keeps the factory until after the interpreter has shut down. Giving it a class
        # (which lives in a reference cycle, so is never freed) rather than a closure avoids freeing a
        # Python object without the GIL at exit, which aborts the process.
        factory = type(f"{cls.__name__}OpenSpielGame", (base,), {"__init__": __init__, "__module__": cls.__module__})
        pyspiel.register_game(_game_type(cls), factory)
        _REGISTERED.register(key, cls)
        return cls

    @classmethod
    def is_registered(cls) -> bool:
        """Whether this class has been registered with OpenSpiel.

        Examples
        --------
        >>> from games.examples.trust_dilemma import TrustDilemma
        >>> TrustDilemma.is_registered()
        True
        """
        return cls.name in _REGISTERED and _REGISTERED.get(cls.name) is cls

    def to_pyspiel(self):
        """This game as a ``pyspiel.Game`` object, without registering it.

        Useful to try a game (e.g. with :func:`games.check_game`) before giving
        it a permanent name. Algorithms that reload a game by name need
        :meth:`register` instead.

        Examples
        --------
        >>> from games.examples.trust_dilemma import TrustDilemma
        >>> game = TrustDilemma().to_pyspiel()
        >>> game.get_type().short_name, game.max_game_length()
        ('trust_dilemma', 2)
        """
        _validate_class(type(self))
        _validate_instance(self)
        return _make_wrapper_classes()[0](self, _game_type(type(self)), _game_info(self), dict(self.params))


#: The registered game classes by OpenSpiel name (the rule of every registry, :class:`games.registry.Registry`: a
#: second registration raises, except a new definition of the same class, which replaces the old one).
_REGISTERED = Registry("game", hint="Register one with games.register_game (a SequentialGame subclass).")


def register_game(cls: type) -> type:
    """Class decorator: register a :class:`SequentialGame` subclass with OpenSpiel (``cls.register()``).

    Examples
    --------
    >>> import games
    >>> @register_game
    ... class Coin(SequentialGame):
    ...     name = "doc_coin"
    ...     num_players, num_distinct_actions, max_chance_outcomes, max_game_length = 1, 1, 2, 1
    ...     min_utility, max_utility = 0.0, 1.0
    ...     def initial_state(self): return None
    ...     def current_player(self, state): return CHANCE if state is None else TERMINAL
    ...     def chance_outcomes(self, state): return [(0, 0.5), (1, 0.5)]
    ...     def legal_actions(self, state): return []
    ...     def apply_action(self, state, action): return action
    ...     def returns(self, state): return [float(state)]
    ...     def information_state(self, state, player): return str(state)
    >>> games.load("doc_coin").max_chance_outcomes()
    2
    """
    if not (isinstance(cls, type) and issubclass(cls, SequentialGame)):
        raise TypeError(f"register_game decorates SequentialGame subclasses; got {cls!r}.")
    return cls.register()


# ----------------------------------------------------------------- validation
def _validate_class(cls: type) -> None:
    if not (isinstance(cls, type) and issubclass(cls, SequentialGame)):
        raise TypeError(f"expected a SequentialGame subclass, got {cls!r}.")
    name = cls.name
    if not isinstance(name, str) or not name or not name.replace("_", "").isalnum() or not name[0].isalpha():
        raise ValueError(
            f"{cls.__qualname__}.name must be a short identifier such as 'my_game' (letters, digits, "
            f"underscores, starting with a letter); got {name!r}."
        )
    for key, value in cls.parameters.items():
        if not isinstance(value, (bool, int, float, str)):
            raise TypeError(
                f"{cls.__qualname__}.parameters[{key!r}] = {value!r}: defaults must be bool, int, float or str."
            )
    for method in ("initial_state", "current_player", "legal_actions", "apply_action", "returns",
                   "information_state"):
        if getattr(cls, method) is getattr(SequentialGame, method):
            raise TypeError(f"{cls.__qualname__} must implement {method}(); see the SequentialGame docstring.")


def _validate_instance(game: SequentialGame) -> None:
    cls = type(game).__qualname__

    def positive_int(attr: str, minimum: int) -> int:
        return check_int(getattr(game, attr), f"{cls}.{attr}", minimum=minimum)

    positive_int("num_players", 1)
    positive_int("num_distinct_actions", 1)
    positive_int("max_chance_outcomes", 0)
    positive_int("max_game_length", 1)
    if game.max_chance_nodes_in_history is not None:
        positive_int("max_chance_nodes_in_history", 0)
    lo, hi = game.min_utility, game.max_utility
    if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in (lo, hi)) or lo > hi:
        raise ValueError(
            f"{cls}.min_utility and max_utility must be finite numbers with min <= max; got {lo!r}, {hi!r}."
        )
    if game.utility not in _UTILITIES:
        raise ValueError(f"{cls}.utility must be one of {_UTILITIES}; got {game.utility!r}.")
    if game.utility == "constant_sum" and game.utility_sum is None:
        raise ValueError(f"{cls}.utility is 'constant_sum', so set utility_sum to the constant.")
    for attr in ("information_state_tensor_shape", "observation_tensor_shape"):
        shape = getattr(game, attr)
        if shape is not None and (
            not isinstance(shape, tuple) or not all(isinstance(d, int) and d > 0 for d in shape)
        ):
            raise ValueError(f"{cls}.{attr} must be None or a tuple of positive ints; got {shape!r}.")


def _game_type(cls: type):
    import pyspiel

    GT = pyspiel.GameType
    utility = {
        "zero_sum": GT.Utility.ZERO_SUM,
        "constant_sum": GT.Utility.CONSTANT_SUM,
        "general_sum": GT.Utility.GENERAL_SUM,
        "identical": GT.Utility.IDENTICAL,
    }[cls.utility]
    players = cls.num_players
    return GT(
        short_name=cls.name,
        long_name=cls.long_name or cls.name,
        dynamics=GT.Dynamics.SEQUENTIAL,
        chance_mode=GT.ChanceMode.EXPLICIT_STOCHASTIC if cls.max_chance_outcomes else GT.ChanceMode.DETERMINISTIC,
        information=GT.Information.PERFECT_INFORMATION if cls.perfect_information
        else GT.Information.IMPERFECT_INFORMATION,
        utility=utility,
        reward_model=GT.RewardModel.TERMINAL,
        max_num_players=getattr(cls, "max_num_players", players),
        min_num_players=getattr(cls, "min_num_players", players),
        provides_information_state_string=True,
        provides_information_state_tensor=cls.information_state_tensor_shape is not None,
        provides_observation_string=True,
        provides_observation_tensor=cls.observation_tensor_shape is not None,
        parameter_specification=dict(cls.parameters),
    )


def _game_info(game: SequentialGame):
    import pyspiel

    utility_sum = {"zero_sum": 0.0, "constant_sum": game.utility_sum}.get(game.utility)
    return pyspiel.GameInfo(
        num_distinct_actions=game.num_distinct_actions,
        max_chance_outcomes=game.max_chance_outcomes,
        num_players=game.num_players,
        min_utility=float(game.min_utility),
        max_utility=float(game.max_utility),
        utility_sum=None if utility_sum is None else float(utility_sum),
        max_game_length=game.max_game_length,
    )


# ------------------------------------------------------- the pyspiel wrapper
class _Shared:
    """Holds the user's game object in a state's ``__dict__``; OpenSpiel's clone must not copy it."""

    __slots__ = ("impl",)

    def __init__(self, impl: SequentialGame) -> None:
        self.impl = impl

    def __deepcopy__(self, memo) -> _Shared:
        return self


_WRAPPERS: tuple | None = None


def _make_wrapper_classes() -> tuple:
    """Build (once) the ``pyspiel.Game`` / ``pyspiel.State`` subclasses; pyspiel is imported lazily."""
    global _WRAPPERS
    if _WRAPPERS is not None:
        return _WRAPPERS
    import pyspiel

    CustomObserver = _observer_class()

    class CustomGame(pyspiel.Game):
        """A :class:`SequentialGame` seen through OpenSpiel's ``pyspiel.Game`` interface."""

        def __init__(self, impl, game_type, game_info, params):
            super().__init__(game_type, game_info, params)
            self.impl = impl

        def new_initial_state(self):
            return CustomState(self, self.impl)

        def __reduce__(self):
            # Pickled by name (e.g. to send it to a worker process): the unpickler imports the module
            # that defines the game, which registers it, then loads the game from its string.
            return _load_by_name, (type(self.impl).__module__, str(self))

        def max_chance_nodes_in_history(self):
            declared = self.impl.max_chance_nodes_in_history
            if declared is not None:
                return declared
            return self.impl.max_game_length if self.impl.max_chance_outcomes else 0

        def make_py_observer(self, iig_obs_type=None, params=None):
            if isinstance(iig_obs_type, dict):  # OpenSpiel calls make_py_observer(params) for the default
                iig_obs_type, params = None, iig_obs_type
            return CustomObserver(self.impl, iig_obs_type, params)

    class CustomState(pyspiel.State):
        """A state of a :class:`SequentialGame`: the user's state plus OpenSpiel's history."""

        def __init__(self, game, impl):
            super().__init__(game)
            self._impl = _Shared(impl)
            self.state = impl.initial_state()
            self._player = _player_of(impl, self.state)

        def __reduce__(self):
            # Pickled as its game and history; unpickling replays the actions (the game is deterministic
            # given its chance outcomes, which are in the history).
            return _replay_by_name, (type(self._impl.impl).__module__, str(self.get_game()), self.history())

        def current_player(self):
            return self._player

        def is_terminal(self):
            return self._player == TERMINAL

        def _legal_actions(self, player):
            return [operator.index(a) for a in self._impl.impl.legal_actions(self.state)]

        def chance_outcomes(self):
            return [(operator.index(a), float(p)) for a, p in self._impl.impl.chance_outcomes(self.state)]

        def _apply_action(self, action):
            impl = self._impl.impl
            self.state = impl.apply_action(self.state, int(action))
            self._player = _player_of(impl, self.state)

        def _action_to_string(self, player, action):
            return str(self._impl.impl.action_to_string(self.state, player, action))

        def returns(self):
            impl = self._impl.impl
            if self._player != TERMINAL:
                return [0.0] * impl.num_players
            return [float(r) for r in impl.returns(self.state)]

        def __str__(self):
            return str(self._impl.impl.state_to_string(self.state))

    _WRAPPERS = (CustomGame, CustomState, CustomObserver)
    return _WRAPPERS


def _observer_class() -> type:
    """The observer of a :class:`SequentialGame` (OpenSpiel's ``make_py_observer``); pyspiel is imported lazily."""
    import numpy as np
    import pyspiel

    class CustomObserver:
        """Information-state (perfect recall) or observation strings and tensors from the user's methods."""

        def __init__(self, impl, iig_obs_type, params):
            if params:
                raise ValueError(f"{type(impl).__name__} takes no observation parameters; got {params}.")
            if iig_obs_type is not None and (
                not iig_obs_type.public_info
                or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER
            ):
                raise ValueError(
                    f"{type(impl).__name__} provides a player's own information state or observation "
                    "only (public_info=True, private_info=SINGLE_PLAYER)."
                )
            self._impl = impl
            self._info_state = iig_obs_type is not None and iig_obs_type.perfect_recall
            shape = impl.information_state_tensor_shape if self._info_state else impl.observation_tensor_shape
            self._fill = impl.information_state_tensor if self._info_state else impl.observation_tensor
            self.tensor = None if shape is None else np.zeros(int(np.prod(shape)), np.float32)
            self.dict = {} if shape is None else {"observation": self.tensor.reshape(shape)}

        def set_from(self, state, player):
            if self.tensor is not None:
                what = "information_state_tensor" if self._info_state else "observation_tensor"
                shape = self.dict["observation"].shape
                try:
                    values = np.asarray(self._fill(state.state, player), dtype=np.float32)
                except (TypeError, ValueError) as exc:
                    raise ValueError(f"{type(self._impl).__name__}.{what}({player}) is not an array of numbers "
                                     f"({exc}); {what}_shape declares {shape}.") from None
                if values.size != self.tensor.size:   # (never broadcast: a wrong length is the user's bug)
                    raise ValueError(f"{type(self._impl).__name__}.{what}({player}) has {values.size} entries "
                                     f"(shape {values.shape}) but {what}_shape declares {shape} "
                                     f"({self.tensor.size} entries).")
                self.dict["observation"][...] = values.reshape(shape)

        def string_from(self, state, player):
            text = (self._impl.information_state if self._info_state else self._impl.observation)(
                state.state, player
            )
            if not isinstance(text, str):
                raise TypeError(
                    f"{type(self._impl).__name__}.{'information_state' if self._info_state else 'observation'}"
                    f" must return a str; got {type(text).__name__} ({text!r})."
                )
            return text

    return CustomObserver


def _load_by_name(module: str, game_string: str):
    """Unpickle a registered custom game: import the module that registers it, then load it."""
    import importlib

    import pyspiel

    if module != "__main__":
        importlib.import_module(module)
    return pyspiel.load_game(game_string)


def _replay_by_name(module: str, game_string: str, history: list):
    """Unpickle a state of a registered custom game by replaying its history."""
    state = _load_by_name(module, game_string).new_initial_state()
    for action in history:
        state.apply_action(action)
    return state


def _player_of(impl: SequentialGame, state: Any) -> int:
    player = impl.current_player(state)
    try:
        player = int(player)
    except (TypeError, ValueError):
        raise TypeError(
            f"{type(impl).__name__}.current_player must return an int player, CHANCE or TERMINAL; got {player!r}."
        ) from None
    if player not in (CHANCE, TERMINAL) and not 0 <= player < impl.num_players:
        raise ValueError(
            f"{type(impl).__name__}.current_player returned {player}; expected 0..{impl.num_players - 1}, "
            f"CHANCE ({CHANCE}) or TERMINAL ({TERMINAL})."
        )
    return player
