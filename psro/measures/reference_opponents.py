"""How a run's policies fare against fixed reference opponents: win, draw and loss rates and mean returns, with
confidence intervals.

A population is only ever measured against itself (the meta-game) and against fresh best responses (the gap);
fixed references say whether it plays the game well at all, on one scale across runs and algorithms:

* ``uniform``: the uniform random policy over the legal actions;
* ``mcts``: OpenSpiel's MCTS bot (``pyspiel.MCTSBot``, random-rollout evaluator) for perfect-information games;
* ``ismcts``: OpenSpiel's information-set MCTS bot (``pyspiel.ISMCTSBot``) for imperfect-information ones whose
  OpenSpiel game implements ``ResampleFromInfostate`` (Kuhn and Leduc poker do; phantom tic-tac-toe, dark hex and
  Liar's dice do not, and are refused by name before anything is played, the references that work named:
  :func:`available_references`);
* ``module:name``: a bot of one's own, ``name`` in an importable module: a factory ``name(game, player, seed)``
  returning a pyspiel-style bot (``step(state) -> action``) or a callable ``state -> action``; for an
  environment game (no pyspiel states), a policy on observations (``probabilities_np(obs, mask)`` or
  ``probabilities(obs, mask)``) or a callable ``(obs, mask) -> actions`` of a batch (only from the command line
  or the Python API: a config cannot name code);
* another run's directory: cross-play against that run's final meta-strategy (in every other seat, a member
  drawn from its marginal per episode), on the same game.

Each agent (every member of every population, and each player's meta-strategy, a member drawn from its marginal
per episode) plays its own seat ``episodes`` times with the reference in every other seat; a game is won when
the agent's return is strictly the highest, drawn when it ties for the highest, lost otherwise. Rates come with
Wilson score intervals, the mean return with a normal one. Every episode is seeded from ``(seed, agent,
reference)``, so a table is a pure function of its inputs, except against ``ismcts``: OpenSpiel's
``ISMCTSBot`` given the same seed does not always choose the same actions (measured: two bots seeded alike differ
on Kuhn poker), so its rows vary within their intervals from one call to the next.

Play is state by state on the OpenSpiel game (turn-based games; chance sampled from its outcome
distribution): a network member acts on the observation it was trained on (the information-state tensor, or
the observation tensor for an ``observation:`` game), a tabular member by its infostate's row. Where there are
no pyspiel states (an environment game: PettingZoo, a user's own batched environment), and against another run,
play is sampled on the environment layer (:func:`psro.evaluation.env_play.sample_mixture_returns`, batched,
seeded alike); ``mcts`` and ``ismcts`` search states, so they are refused there.

Every reference is made (and an unsupported one refused) before anything is played; ``on_reference`` of
:func:`evaluate_against` then receives each reference's rows as soon as they are all played (``psro evaluate``
prints them then), so an error in a later reference loses none of the earlier ones.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import math
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from games.contracts import is_environment_game
from games.validation import check_int, check_real, check_seed
from psro.errors import ConfigError

__all__ = ["BUILT_IN", "Reference", "make_reference", "available_references", "evaluate_against", "evaluate_run",
           "final_run", "wilson_interval", "outcomes"]

logger = logging.getLogger(__name__)

#: The references a config may name (``reference_opponents``); a ``module:name`` bot only from code or the CLI
BUILT_IN = ("uniform", "mcts", "ismcts")


@dataclass(frozen=True)
class Reference:
    """A fixed opponent: its ``name``; ``make(player, seed) -> act``, where ``act(state)`` returns the action it
    takes at a pyspiel ``state`` where ``player`` moves (state-by-state play; None where it has none); and
    ``policies(player, seed) -> (policies, weights)``, what plays seat ``player`` on the environment layer (a
    policy drawn per episode; weights None: uniform; None where it cannot play there)."""

    name: str
    make: Callable | None = None
    policies: Callable | None = None


def wilson_interval(successes, trials, confidence: float = 0.95) -> tuple:
    """The Wilson score interval ``(low, high)`` of a binomial proportion (arrays broadcast).

    Examples
    --------
    >>> low, high = wilson_interval(0, 10)
    >>> float(low), round(float(high), 4)    # no success in 10: still up to about 28%
    (0.0, 0.2775)
    >>> [round(float(v), 4) for v in wilson_interval(50, 100)]
    [0.4038, 0.5962]
    """
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + confidence / 2))
    n = np.asarray(trials, dtype=np.float64)
    p = np.asarray(successes, dtype=np.float64) / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def outcomes(returns: np.ndarray, seat: int) -> np.ndarray:
    """Per episode (a row of ``returns``), 1 for a win of ``seat`` (strictly the highest return), 0 for a draw
    (tied for the highest), -1 for a loss.

    Examples
    --------
    >>> outcomes(np.array([[1.0, -1.0], [0.0, 0.0], [-1.0, 1.0]]), 0).tolist()
    [1, 0, -1]
    """
    returns = np.asarray(returns, dtype=np.float64)
    own = returns[:, seat]
    best_other = np.delete(returns, seat, axis=1).max(axis=1)
    return np.where(own > best_other, 1, np.where(own == best_other, 0, -1))


def _is_pyspiel(game) -> bool:
    import pyspiel

    return isinstance(game, pyspiel.Game)


def _turn_based(game) -> bool:
    import pyspiel

    return _is_pyspiel(game) and game.get_type().dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL


def _check_game(game) -> None:
    if not (_is_pyspiel(game) or is_environment_game(game)):
        raise TypeError(f"game: reference opponents play a pyspiel.Game or an environment game (an object with "
                        f"batched_env, e.g. games.from_pettingzoo's or your own); got {type(game).__name__}. Load a "
                        "game string with games.load, or run evaluate_run on the run directory.")


def _check_turn_based(game, name: str) -> None:
    if not _turn_based(game):
        kind = "a simultaneous-move game" if _is_pyspiel(game) else "an environment game, without pyspiel states"
        raise ConfigError("against", f"{name!r} plays state by state, and {game} is {kind}; use 'uniform', another "
                          "run's directory or a bot of your own ('module:name' acting on observations).")


def _native(game) -> bool:
    """Whether ``game`` is one of OpenSpiel's own (C++) games, which its C++ search bots can play."""
    return _is_pyspiel(game) and type(game).__module__.split(".")[0] == "pyspiel"


def _perfect_information(game) -> bool:
    import pyspiel

    return game.get_type().information == pyspiel.GameType.Information.PERFECT_INFORMATION


@contextlib.contextmanager
def _native_stderr_silenced():
    """The process's standard error (file descriptor 2) sent to the null device meanwhile: OpenSpiel prints
    ``OpenSpiel exception: ...`` there before it raises ``pyspiel.SpielError``, which a probe expects."""
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:   # (no standard error at all: nothing to silence)
        yield
        return
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, 2)
        finally:
            os.close(null)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _resamples(game) -> bool:
    """Whether the turn-based OpenSpiel ``game`` implements ``ResampleFromInfostate`` (what IS-MCTS calls at every
    search), probed once at its first decision node (chance resolved by its first outcome): microseconds."""
    import pyspiel

    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    if state.is_terminal():
        return True
    try:
        with _native_stderr_silenced():
            state.resample_from_infostate(state.current_player(), lambda: 0.5)
    except pyspiel.SpielError:
        return False
    return True


def available_references(game) -> list:
    """The built-in references (:data:`BUILT_IN`) that can play ``game``: ``uniform`` always, ``mcts`` on a
    turn-based OpenSpiel game of perfect information, ``ismcts`` on a turn-based OpenSpiel game that implements
    ``ResampleFromInfostate``. (Besides these: a bot of one's own, ``module:name``, and another run's directory.)

    Examples
    --------
    >>> import pyspiel
    >>> available_references(pyspiel.load_game("tic_tac_toe"))
    ['uniform', 'mcts', 'ismcts']
    >>> available_references(pyspiel.load_game("kuhn_poker"))
    ['uniform', 'ismcts']
    >>> available_references(pyspiel.load_game("phantom_ttt"))   # (no ResampleFromInfostate: no IS-MCTS)
    ['uniform']
    """
    _check_game(game)
    names = ["uniform"]
    if _turn_based(game) and _native(game):
        if _perfect_information(game):
            names.append("mcts")
        if _resamples(game):
            names.append("ismcts")
    return names


def _refusal(name: str, game, reason: str) -> ConfigError:
    """The one-line refusal of reference ``name`` on ``game`` for ``reason``, naming the references that work."""
    working = ", ".join(repr(n) for n in available_references(game))
    return ConfigError("against", f"{name!r} {reason}; references that work for {game}: {working}, a bot of your own "
                       "('module:name') or another run's directory.")


def make_reference(name: str, game, *, simulations: int = 20, uct_c: float = 2.0,
                   observation: str | None = None) -> Reference:
    """The reference called ``name`` for ``game`` (see the module docstring).

    Parameters
    ----------
    name : str
        ``"uniform"``, ``"mcts"``, ``"ismcts"``, ``"module:name"`` or a run directory.
    game : pyspiel.Game or an environment game
    simulations : int
        The MCTS bots' simulations per move (small is fast and weak; OpenSpiel's examples use 1000).
    uct_c : float
        Their exploration constant.
    observation : {"information_state", "observation"}, optional
        The tensor this run's networks act on (a run reference must have been trained on the same).

    Examples
    --------
    >>> import pyspiel
    >>> make_reference("mcts", pyspiel.load_game("tic_tac_toe")).name
    'mcts'
    >>> make_reference("mcts", pyspiel.load_game("kuhn_poker"))
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: against: 'mcts' is OpenSpiel's MCTS for perfect-information games, and kuhn_poker() has \
imperfect information; references that work for kuhn_poker(): 'uniform', 'ismcts', a bot of your own ('module:name') \
or another run's directory.
    >>> make_reference("ismcts", pyspiel.load_game("phantom_ttt"))   # refused before anything is played
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: against: 'ismcts' is OpenSpiel's IS-MCTS, which resamples histories through the game's \
ResampleFromInfostate, and phantom_ttt() does not implement it; references that work for phantom_ttt(): 'uniform', a \
bot of your own ('module:name') or another run's directory.
    >>> from games.examples.trust_dilemma import TrustDilemma
    >>> make_reference("ismcts", TrustDilemma().to_pyspiel())   # (a game defined in Python: refused, not a crash)
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: against: 'ismcts' is OpenSpiel's C++ IS-MCTS bot, which crashes on a game defined in \
Python such as trust_dilemma() (games.custom_sequential); use 'uniform' or a bot of your own ('module:name').
    >>> from games.environment import ObservationGame
    >>> env_game = ObservationGame("tic_tac_toe")         # an environment game: no pyspiel states
    >>> make_reference("uniform", env_game).policies(1, 0)
    ([UniformPolicy(9)], None)
    """
    if not isinstance(name, str) or not name.strip():
        raise ConfigError("against", f"a reference is a name such as 'uniform', 'mcts', 'ismcts', 'module:name' or a "
                          f"run directory; got {name!r}.")
    name = name.strip()
    _check_game(game)
    check_int(simulations, "simulations", minimum=1)
    check_real(uct_c, "uct_c", minimum=0.0)
    if name == "uniform":
        return _uniform(game)
    if name not in BUILT_IN and Path(name).is_dir():
        return _run_reference(name, game, observation)
    if is_environment_game(game) and name not in BUILT_IN:
        return Reference(name, policies=_user_env_bot(name, game))
    _check_turn_based(game, name)
    return _state_reference(name, game, simulations, uct_c)


def _uniform(game) -> Reference:
    """The uniform random reference: state by state where the game is turn-based, on the environment layer always."""
    from games.environment import num_actions
    from psro.policies import UniformPolicy

    def make(player, seed):
        rng = np.random.default_rng(seed)
        return lambda state: int(rng.choice(state.legal_actions()))
    width = num_actions(game)
    return Reference("uniform", make if _turn_based(game) else None,
                     lambda player, seed: ([UniformPolicy(width)], None))


def _state_reference(name: str, game, simulations: int, uct_c: float) -> Reference:
    """A reference that plays the turn-based pyspiel ``game`` state by state (MCTS, IS-MCTS or a user's bot)."""
    import pyspiel

    if name in ("mcts", "ismcts") and not _native(game):
        # (OpenSpiel's C++ search bots end the process with SIGSEGV on a game implemented in Python)
        raise ConfigError("against", f"{name!r} is OpenSpiel's C++ {'IS-' if name == 'ismcts' else ''}MCTS bot, which "
                          f"crashes on a game defined in Python such as {game} ({type(game).__module__}); use "
                          "'uniform' or a bot of your own ('module:name').")
    if name == "mcts":
        if not _perfect_information(game):
            raise _refusal(name, game, f"is OpenSpiel's MCTS for perfect-information games, and {game} has "
                                       "imperfect information")

        def make(player, seed):
            evaluator = pyspiel.RandomRolloutEvaluator(1, int(seed))
            bot = pyspiel.MCTSBot(game, evaluator, float(uct_c), int(simulations), 64, True, int(seed), False)
            return bot.step
        return Reference(name, make)
    if name == "ismcts":
        if not _resamples(game):   # (else pyspiel.SpielError in the middle of the first episode)
            raise _refusal(name, game, f"is OpenSpiel's IS-MCTS, which resamples histories through the game's "
                                       f"ResampleFromInfostate, and {game} does not implement it")

        def make(player, seed):
            evaluator = pyspiel.RandomRolloutEvaluator(1, int(seed))
            bot = pyspiel.ISMCTSBot(int(seed), evaluator, float(uct_c), int(simulations), -1,
                                    pyspiel.ISMCTSFinalPolicyType.MAX_VISIT_COUNT, False, False)
            return bot.step
        return Reference(name, make)
    return Reference(name, _user_bot(name, game))


def _bot_factory(name: str) -> Callable:
    """The factory ``name(game, player, seed)`` a ``module:name`` reference names."""
    module_name, _, attribute = name.partition(":")
    if not module_name or not attribute:
        raise ConfigError("against", f"{name!r} is not a reference; use one of {list(BUILT_IN)}, 'module:name' (a "
                          "factory name(game, player, seed) of a bot in an importable module) or a run directory.")
    try:
        factory = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ConfigError("against", f"cannot load the bot {name!r}: {exc}.") from None
    if not callable(factory):
        raise ConfigError("against", f"{name!r} is not callable; give a factory name(game, player, seed).")
    return factory


def _user_bot(name: str, game) -> Callable:
    """``make(player, seed)`` of a ``module:name`` factory (see the module docstring)."""
    factory = _bot_factory(name)

    def make(player, seed):
        bot = factory(game, player, int(seed))
        act = getattr(bot, "step", bot)
        if not callable(act):
            raise ConfigError("against", f"{name!r}(game, player, seed) returned {bot!r}, which is neither a bot with "
                              "step(state) nor a callable state -> action.")
        return act
    return make


class _ActionsPolicy:
    """A bot ``act(obs, mask) -> actions`` of a batch, as a policy: all its mass on the action it picks."""

    def __init__(self, act: Callable, name: str):
        self.act, self.name = act, name

    def probabilities_np(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        actions = np.asarray(self.act(obs, mask)).reshape(-1)
        if actions.shape != (len(mask),) or not np.issubdtype(actions.dtype, np.integer):
            raise ConfigError("against", f"the bot {self.name!r} returned {actions!r}; act(obs, mask) returns one int "
                              f"action per row ({len(mask)}).")
        if np.any(actions < 0) or np.any(actions >= mask.shape[1]) or not mask[np.arange(len(mask)), actions].all():
            raise ConfigError("against", f"the bot {self.name!r} chose an illegal action; choose where mask is True.")
        probs = np.zeros(mask.shape)
        probs[np.arange(len(mask)), actions] = 1.0
        return probs


def _user_env_bot(name: str, game) -> Callable:
    """``policies(player, seed)`` of a ``module:name`` factory for an environment game: its bot is a policy on
    observations or a callable ``(obs, mask) -> actions``."""
    from psro.policies import policy_input

    factory = _bot_factory(name)

    def policies(player, seed):
        bot = factory(game, player, int(seed))
        try:
            policy_input(bot)
        except TypeError:
            if not callable(bot):
                raise ConfigError("against", f"{name!r}(game, player, seed) returned {bot!r}; for an environment game "
                                  "return a policy with probabilities_np(obs, mask) or probabilities(obs, mask), or a "
                                  "callable (obs, mask) -> actions.") from None
            bot = _ActionsPolicy(bot, name)
        return [bot], None
    return policies


def _run_game(solver) -> tuple:
    """The game a run's policies play, and the tensor its networks act on (None: the game's default)."""
    from games.environment import ObservationGame

    if isinstance(solver.game, ObservationGame):
        return solver.game.game, "observation"
    return solver.game, None


def _game_key(game, observation) -> tuple:
    """What must agree between two runs for their policies to meet: the game and the observation."""
    if _is_pyspiel(game):
        return "pyspiel", str(game), observation == "observation"
    text = str(game)
    return (type(game).__module__, type(game).__qualname__, int(game.num_players), int(game.num_actions),
            int(game.obs_dim), "" if " object at 0x" in text else text)


def _run_reference(name: str, game, observation) -> Reference:
    """Cross-play against the final meta-strategy of the run in directory ``name``."""
    other, other_game, other_observation, strategy = final_run(name, "against")
    if _game_key(other_game, other_observation) != _game_key(game, observation):
        raise ConfigError("against", f"the run in {name!r} played {other_game}"
                          f"{' (observation tensor)' if other_observation else ''}, not {game}"
                          f"{' (observation tensor)' if observation == 'observation' else ''}; cross-play needs two "
                          "runs of the same game.")
    if strategy is None:
        raise ConfigError("against", f"the run in {name!r} has no meta-strategy yet; let it finish an iteration.")
    seats = [_env_members(list(getattr(pop, "policies", pop)), q, getattr(other, "tree", None))
             for q, pop in enumerate(other.state.populations)]
    marginals = [_weights(m, len(seats[q]), q) for q, m in enumerate(strategy.marginals)]
    return Reference(name, policies=lambda player, seed: (seats[player], marginals[player]))


def _env_members(policies: list, player: int, tree) -> list:
    """A population's members as policies the environment layer plays (a tabular one through its infostates)."""
    from psro.policies import TabularStatePolicy

    if any(isinstance(policy, np.ndarray) for policy in policies) and tree is None:
        raise ConfigError("populations", "a tabular member needs the run's game tree.")
    return [TabularStatePolicy(policy, tree.infostates[player]) if isinstance(policy, np.ndarray) else policy
            for policy in policies]


def _agent_actor(policy, player: int, tree, observation: str, rng: np.random.Generator) -> Callable:
    """``act(state)`` of a population member in seat ``player``: sampled from its action probabilities."""
    from psro.policies import UniformPolicy

    def game_actions(state):
        return state.get_game().num_distinct_actions()
    if isinstance(policy, np.ndarray):
        if tree is None:
            raise ConfigError("populations", "a tabular member needs the run's game tree.")
        from psro.policies import TabularStatePolicy

        table = TabularStatePolicy(policy, tree.infostates[player])
        probabilities = table.action_probabilities
    elif isinstance(policy, UniformPolicy):
        def probabilities(state, seat):
            return np.ones(game_actions(state))
    elif hasattr(policy, "probabilities_np"):
        def probabilities(state, seat):
            obs = np.asarray(getattr(state, f"{observation}_tensor")(seat), dtype=np.float32).reshape(1, -1)
            mask = np.zeros((1, policy.num_actions), dtype=bool)
            mask[0, state.legal_actions(seat)] = True
            return policy.probabilities_np(obs, mask)[0]
    elif hasattr(policy, "action_probabilities"):
        probabilities = policy.action_probabilities
    else:
        raise TypeError(f"populations: cannot play a member of type {type(policy).__name__}.")

    def act(state):
        probs = np.asarray(probabilities(state, player), dtype=np.float64)
        legal = state.legal_actions()
        weights = probs[legal]
        weights = np.full(len(legal), 1.0 / len(legal)) if not weights.sum() > 0 else weights / weights.sum()
        return int(legal[rng.choice(len(legal), p=weights)])
    return act


def _play(game, actors: Sequence, rng: np.random.Generator) -> np.ndarray:
    """The returns of one episode where ``actors[p](state)`` moves for seat ``p``."""
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(int(actions[rng.choice(len(actions), p=np.asarray(probs) / np.sum(probs))]))
        else:
            state.apply_action(actors[state.current_player()](state))
    return np.asarray(state.returns(), dtype=np.float64)


def evaluate_against(game, populations: Sequence, references: Sequence, *, marginals: Sequence | None = None,
                     episodes: int = 40, seed: int = 0, confidence: float = 0.95, simulations: int = 20,
                     tree=None, observation: str | None = None, members: bool = True,
                     on_reference: Callable[[pd.DataFrame], None] | None = None) -> pd.DataFrame:
    """Every member's (and each meta-strategy's) results against fixed references (see the module docstring).

    Parameters
    ----------
    game : pyspiel.Game or an environment game
    populations : sequence
        Per player, its population (anything with ``policies``) or a list of policies.
    references : sequence of str or Reference
        Names for :func:`make_reference` (a run directory: cross-play against that run), or references.
    marginals : sequence of array, optional
        Per player, its meta-strategy over its population (a row ``agent="meta"`` per player).
    episodes : int
        Episodes per agent and reference.
    seed : int
    confidence : float
        Of the intervals.
    simulations : int
        The MCTS references' simulations per move.
    tree : psro.sequence_form.game_tree.GameTree, optional
        For tabular members.
    members : bool
        Also every member (False: only the meta-strategies, which needs ``marginals``).
    observation : {"information_state", "observation"}, optional
        The tensor networks act on (default: the information-state tensor where the game has one, else the
        observation tensor, as an ``observation:`` run trains on).
    on_reference : callable, optional
        Called with each reference's rows (a DataFrame, in the order of the table) as soon as that reference has
        played every agent, references in the order given: what a caller writes then is kept whatever a later
        reference does. Every reference is made, and one the game cannot support refused, before any is played.

    Returns
    -------
    pandas.DataFrame
        One row per ``(player, agent, reference)``: ``agent`` (``"member <k>"`` or ``"meta"``), ``member`` (its
        index; -1 for the meta-strategy), ``episodes``, ``win``, ``draw``, ``loss`` rates with ``*_low`` /
        ``*_high`` Wilson bounds, ``mean_return`` with ``return_low`` / ``return_high``.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.policies import UniformPolicy
    >>> game = pyspiel.load_game("tic_tac_toe")
    >>> table = evaluate_against(game, [[UniformPolicy(9)], [UniformPolicy(9)]], ["uniform", "mcts"], episodes=20,
    ...                          simulations=10)
    >>> table[["player", "agent", "reference", "episodes"]].values.tolist()[:2]
    [[0, 'member 0', 'uniform', 20], [0, 'member 0', 'mcts', 20]]
    >>> bool(((table.win_low <= table.win) & (table.win <= table.win_high)).all())
    True
    >>> done = []
    >>> _ = evaluate_against(game, [[UniformPolicy(9)], [UniformPolicy(9)]], ["uniform", "mcts"], episodes=4,
    ...                      simulations=2, on_reference=lambda rows: done.append(rows.reference.tolist()))
    >>> done   # each reference's rows as it finishes
    [['uniform', 'uniform'], ['mcts', 'mcts']]
    >>> from games.environment import ObservationGame   # an environment game: sampled on the environment layer
    >>> table = evaluate_against(ObservationGame("tic_tac_toe"), [[UniformPolicy(9)], [UniformPolicy(9)]],
    ...                          ["uniform"], episodes=20)
    >>> table[["player", "reference", "episodes"]].values.tolist()
    [[0, 'uniform', 20], [1, 'uniform', 20]]
    """
    episodes = check_int(episodes, "episodes", minimum=1)
    seed = check_seed(seed)
    confidence = check_real(confidence, "confidence", minimum=0.0, maximum=1.0, strict=True)
    _check_game(game)
    if observation is None and _is_pyspiel(game):
        observation = "information_state" if game.get_type().provides_information_state_tensor else "observation"
    if _is_pyspiel(game) and observation not in ("information_state", "observation"):
        raise ValueError(f"observation must be 'information_state' or 'observation'; got {observation!r}.")
    refs = [r if isinstance(r, Reference) else make_reference(r, game, simulations=simulations,
                                                              observation=observation) for r in references]
    if not refs:
        raise ConfigError("against", "name at least one reference (uniform, mcts, ismcts, module:name or a run "
                          "directory).")
    policies = [list(pop.policies) if hasattr(pop, "policies") else list(pop) for pop in populations]
    n = game.num_players() if _is_pyspiel(game) else int(game.num_players)
    if len(policies) != n:
        raise ConfigError("populations", f"one per player ({n}); got {len(policies)}.")
    if not members and marginals is None:
        raise ConfigError("marginals", "members=False evaluates the meta-strategies only; give their marginals.")
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + confidence / 2))
    bounds = (float(game.min_utility()), float(game.max_utility())) if _is_pyspiel(game) else (-math.inf, math.inf)
    agents = [_agents(policies[p], marginals[p] if marginals is not None else None, members, p) for p in range(n)]
    rows = {}
    for r, ref in enumerate(refs):   # (a reference at a time, so that its rows can be handed on as it finishes)
        block = {}
        for p in range(n):
            for a, (label, k, agent) in enumerate(agents[p]):
                sequence = np.random.SeedSequence(seed, spawn_key=(p, k + 1, r))
                if ref.make is not None and _turn_based(game):
                    returns = _state_returns(game, p, agent, ref, sequence, episodes, tree, observation)
                else:
                    returns = _env_returns(game, p, agent, ref, sequence, episodes, tree, observation)
                block[(p, a, r)] = _row(p, label, k, ref.name, returns, z, confidence, *bounds)
        rows.update(block)
        if on_reference is not None:
            on_reference(pd.DataFrame(list(block.values())))
    return pd.DataFrame([rows[key] for key in sorted(rows)])   # (by player, agent, then reference)


def _agents(policies: list, marginal, members: bool, player: int) -> list:
    """``(label, member index, (members, weights))`` of each agent of ``player``: every member (``members``), then
    the meta-strategy over them where its ``marginal`` is given (index -1)."""
    agents = [(f"member {k}", k, ([policy], None)) for k, policy in enumerate(policies)] if members else []
    if marginal is not None:
        agents.append(("meta", -1, (policies, _weights(marginal, len(policies), player))))
    return agents


def _state_returns(game, p: int, agent: tuple, ref: Reference, sequence, episodes: int, tree,
                   observation: str) -> np.ndarray:
    """``episodes`` returns of ``agent`` (its members and weights) in seat ``p``, ``ref`` in the others, played
    state by state."""
    n = game.num_players()
    rng = np.random.default_rng(sequence)
    seats = (sequence.generate_state(n) >> 1).tolist()   # (31 bits: what OpenSpiel's bots take)
    actors = [None if q == p else ref.make(q, seats[q]) for q in range(n)]
    members, weights = agent
    returns = []
    for _ in range(episodes):
        member = members[0] if weights is None else members[int(rng.choice(len(weights), p=weights))]
        actors[p] = _agent_actor(member, p, tree, observation, rng)
        returns.append(_play(game, actors, rng))
    return np.array(returns)


def _env_returns(game, p: int, agent: tuple, ref: Reference, sequence, episodes: int, tree,
                 observation) -> np.ndarray:
    """The same, sampled on the environment layer (:func:`psro.evaluation.env_play.sample_mixture_returns`)."""
    from psro.evaluation.env_play import sample_mixture_returns

    if ref.policies is None:
        raise ConfigError("against", f"{ref.name!r} plays pyspiel states only; {game} is played on the environment "
                          "layer here.")
    n = game.num_players() if _is_pyspiel(game) else int(game.num_players)
    seeds = (sequence.generate_state(n) >> 1).tolist()
    members, weights = agent
    seats = [(_env_members(members, p, tree), weights) if q == p else ref.policies(q, seeds[q]) for q in range(n)]
    options = {"observation": observation} if _is_pyspiel(game) else {}
    return sample_mixture_returns(game, seats, episodes, sequence, num_envs=min(episodes, 64), **options)


def _weights(marginal, size: int, player: int) -> np.ndarray:
    w = np.asarray(marginal, dtype=np.float64).reshape(-1)
    if w.shape != (size,) or not np.all(np.isfinite(w)) or np.any(w < 0) or not w.sum() > 0:
        raise ValueError(f"marginals[{player}]: one non-negative weight per member ({size}); got {w}.")
    return w / w.sum()


def _row(player: int, label: str, member: int, reference: str, returns: np.ndarray, z: float,
         confidence: float, worst: float, best: float) -> dict:
    """One table row; the return's interval is clipped to the game's utility range ``[worst, best]``."""
    result = outcomes(returns, player)
    n = len(result)
    row = {"player": player, "agent": label, "member": member, "reference": reference, "episodes": n}
    for name, value in (("win", 1), ("draw", 0), ("loss", -1)):
        count = int(np.sum(result == value))
        low, high = wilson_interval(count, n, confidence)
        row.update({name: count / n, f"{name}_low": float(low), f"{name}_high": float(high)})
    own = returns[:, player]
    mean = float(own.mean())
    half = z * float(own.std(ddof=1)) / math.sqrt(n) if n > 1 else math.nan
    row.update(mean_return=mean, return_low=max(mean - half, worst), return_high=min(mean + half, best))
    return row


def evaluate_run(run_dir, against: Sequence = ("uniform",), **options) -> pd.DataFrame:
    """:func:`evaluate_against` for the final populations and meta-strategy of the run in ``run_dir`` (its
    checkpoint, verified, :mod:`psro.run.checkpoint`).

    Examples
    --------
    >>> import tempfile
    >>> from psro import PSRO
    >>> out = tempfile.mkdtemp()
    >>> _ = PSRO("kuhn_poker", progress=False, checkpoint_dir=f"{out}/checkpoint").run(iterations=2)
    >>> table = evaluate_run(out, ["uniform"], episodes=10)
    >>> sorted(set(table.agent)), len(table)
    (['member 0', 'member 1', 'member 2', 'meta'], 8)
    """
    solver, game, observation, strategy = final_run(run_dir)
    marginals = None if strategy is None else [np.asarray(m) for m in strategy.marginals]
    return evaluate_against(game, solver.state.populations, against, marginals=marginals,
                            tree=getattr(solver, "tree", None), observation=observation, **options)


def final_run(run_dir, what: str = "RUN_DIR") -> tuple:
    """``(solver, game, observation, strategy)`` of the run in ``run_dir`` (:func:`_load_run`): its training loop
    resumed from the checkpoint, the game its policies play and the tensor they read (:func:`_run_game`), and its
    final meta-strategy (the eval meta-solver's where there is one; None before the first iteration)."""
    solver = _load_run(run_dir, what)
    game, observation = _run_game(solver)
    return solver, game, observation, solver.state.eval_meta_strategy or solver.state.meta_strategy


def _load_run(run_dir, what: str = "RUN_DIR"):
    """The solver of the run in ``run_dir`` (``ValueError`` naming it, as ``what``, when it is not a run directory),
    resumed from its checkpoint by the training loop the checkpoint names (which verifies it)."""
    import json

    from psro.loop.algorithms import algorithm_capabilities, algorithm_class

    path = Path(run_dir)
    checkpoint = path / "checkpoint"
    document = checkpoint / "checkpoint.json"
    if not path.is_dir() or not document.is_file():
        raise ConfigError(what, f"{str(path)!r} is not a run directory (no checkpoint/checkpoint.json in it); give "
                          "the directory `psro run` wrote.")
    try:
        options = json.loads(document.read_text()).get("options", {})
        algorithm = options.get("algorithm", "psro") if isinstance(options, dict) else "psro"
        oracle = options.get("oracle") if isinstance(options, dict) else None
    except (ValueError, AttributeError, UnicodeDecodeError):
        raise ConfigError(what, f"{str(document)!r} is not a checkpoint document (damaged?).") from None
    if algorithm_capabilities(str(algorithm)).offline:
        raise ConfigError(what, f"{str(path)!r} is an offline run ({algorithm}), whose policies live in its learned "
                          "model's infostates, not the game's; reference opponents play the game itself.")
    return algorithm_class(str(algorithm), oracle if isinstance(oracle, str) else None).resume(checkpoint,
                                                                                                progress=False)
