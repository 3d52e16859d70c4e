"""How a run's policies fare against fixed reference opponents: win, draw and loss rates and mean returns, with
confidence intervals.

A population is only ever measured against itself (the meta-game) and against fresh best responses (the gap);
fixed references say whether it plays the game well at all, on one scale across runs and algorithms:

* ``uniform``: the uniform random policy over the legal actions;
* ``mcts``: OpenSpiel's MCTS bot (``pyspiel.MCTSBot``, random-rollout evaluator) for perfect-information games;
* ``ismcts``: OpenSpiel's information-set MCTS bot (``pyspiel.ISMCTSBot``) for imperfect-information ones;
* ``module:name``: a bot of one's own, ``name`` in an importable module: a factory ``name(game, player, seed)``
  returning a pyspiel-style bot (``step(state) -> action``) or a callable ``state -> action`` (only from the
  command line or the Python API: a config cannot name code).

Each agent (every member of every population, and each player's meta-strategy, a member drawn from its marginal
per episode) plays its own seat ``episodes`` times with the reference in every other seat; a game is won when
the agent's return is strictly the highest, drawn when it ties for the highest, lost otherwise. Rates come with
Wilson score intervals, the mean return with a normal one. Every episode is seeded from ``(seed, agent,
reference)``, so a table is a pure function of its inputs, except against ``ismcts``: OpenSpiel's
``ISMCTSBot`` given the same seed does not always choose the same actions (measured: two bots seeded alike differ
on Kuhn poker), so its rows vary within their intervals from one call to the next.

Play is state by state on the OpenSpiel game (turn-based games; chance sampled from its outcome
distribution): a network member acts on the observation it was trained on (the information-state tensor, or
the observation tensor for an ``observation:`` game), a tabular member by its infostate's row.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from games.validation import check_int, check_real, check_seed

__all__ = ["BUILT_IN", "Reference", "make_reference", "evaluate_against", "evaluate_run", "wilson_interval",
           "outcomes"]

#: The references a config may name (``reference_opponents``); a ``module:name`` bot only from code or the CLI
BUILT_IN = ("uniform", "mcts", "ismcts")


@dataclass(frozen=True)
class Reference:
    """A fixed opponent: its ``name`` and ``make(player, seed) -> act``, where ``act(state)`` returns the action
    it takes at a pyspiel ``state`` where ``player`` moves."""

    name: str
    make: Callable


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


def _check_turn_based(game, what: str) -> None:
    import pyspiel

    if not isinstance(game, pyspiel.Game):
        raise ValueError(f"{what}: reference opponents play OpenSpiel games state by state; got {game!r} (a "
                         "PettingZoo environment has no pyspiel states to search).")
    if game.get_type().dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
        raise ValueError(f"{what}: {game} is a simultaneous-move game; reference opponents play turn-based games.")


def make_reference(name: str, game, *, simulations: int = 20, uct_c: float = 2.0) -> Reference:
    """The reference called ``name`` for ``game`` (see the module docstring).

    Parameters
    ----------
    name : str
        ``"uniform"``, ``"mcts"``, ``"ismcts"`` or ``"module:name"``.
    game : pyspiel.Game
    simulations : int
        The MCTS bots' simulations per move (small is fast and weak; OpenSpiel's examples use 1000).
    uct_c : float
        Their exploration constant.

    Examples
    --------
    >>> import pyspiel
    >>> make_reference("mcts", pyspiel.load_game("tic_tac_toe")).name
    'mcts'
    >>> make_reference("mcts", pyspiel.load_game("kuhn_poker"))
    Traceback (most recent call last):
    ...
    ValueError: against: 'mcts' is OpenSpiel's MCTS for perfect-information games, and kuhn_poker() has imperfect \
information; use 'ismcts' (information-set MCTS) instead.
    """
    import pyspiel

    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"against: a reference is a name such as 'uniform', 'mcts', 'ismcts' or 'module:name'; "
                         f"got {name!r}.")
    name = name.strip()
    _check_turn_based(game, "against")
    check_int(simulations, "simulations", minimum=1)
    check_real(uct_c, "uct_c", minimum=0.0)
    if name == "uniform":
        def make(player, seed):
            rng = np.random.default_rng(seed)
            return lambda state: int(rng.choice(state.legal_actions()))
        return Reference(name, make)
    if name == "mcts":
        if game.get_type().information != pyspiel.GameType.Information.PERFECT_INFORMATION:
            raise ValueError(f"against: 'mcts' is OpenSpiel's MCTS for perfect-information games, and {game} has "
                             "imperfect information; use 'ismcts' (information-set MCTS) instead.")

        def make(player, seed):
            evaluator = pyspiel.RandomRolloutEvaluator(1, int(seed))
            bot = pyspiel.MCTSBot(game, evaluator, float(uct_c), int(simulations), 64, True, int(seed), False)
            return bot.step
        return Reference(name, make)
    if name == "ismcts":
        def make(player, seed):
            evaluator = pyspiel.RandomRolloutEvaluator(1, int(seed))
            bot = pyspiel.ISMCTSBot(int(seed), evaluator, float(uct_c), int(simulations), -1,
                                    pyspiel.ISMCTSFinalPolicyType.MAX_VISIT_COUNT, False, False)
            return bot.step
        return Reference(name, make)
    return Reference(name, _user_bot(name, game))


def _user_bot(name: str, game) -> Callable:
    """``make(player, seed)`` of a ``module:name`` factory (see the module docstring)."""
    module_name, _, attribute = name.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"against: {name!r} is not a reference; use one of {list(BUILT_IN)} or 'module:name' (a "
                         "factory name(game, player, seed) of a bot in an importable module).")
    try:
        factory = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"against: cannot load the bot {name!r}: {exc}.") from None
    if not callable(factory):
        raise ValueError(f"against: {name!r} is not callable; give a factory name(game, player, seed).")

    def make(player, seed):
        bot = factory(game, player, int(seed))
        act = getattr(bot, "step", bot)
        if not callable(act):
            raise ValueError(f"against: {name!r}(game, player, seed) returned {bot!r}, which is neither a bot with "
                             "step(state) nor a callable state -> action.")
        return act
    return make


def _agent_actor(policy, player: int, tree, observation: str, rng: np.random.Generator) -> Callable:
    """``act(state)`` of a population member in seat ``player``: sampled from its action probabilities."""
    from psro.policies import UniformPolicy

    def game_actions(state):
        return state.get_game().num_distinct_actions()
    if isinstance(policy, np.ndarray):
        if tree is None:
            raise ValueError("populations: a tabular member needs the run's game tree.")
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
                     tree=None, observation: str | None = None, members: bool = True) -> pd.DataFrame:
    """Every member's (and each meta-strategy's) results against fixed references (see the module docstring).

    Parameters
    ----------
    game : pyspiel.Game
    populations : sequence
        Per player, its population (anything with ``policies``) or a list of policies.
    references : sequence of str or Reference
        Names for :func:`make_reference`, or references.
    marginals : sequence of array, optional
        Per player, its meta-strategy over its population (a row ``agent="meta"`` per player).
    episodes : int
        Episodes per agent and reference.
    seed : int
    confidence : float
        Of the intervals.
    simulations : int
        The MCTS references' simulations per move.
    tree : psro.game_tree.GameTree, optional
        For tabular members.
    members : bool
        Also every member (False: only the meta-strategies, which needs ``marginals``).
    observation : {"information_state", "observation"}, optional
        The tensor networks act on (default: the information-state tensor where the game has one, else the
        observation tensor, as an ``observation:`` run trains on).

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
    """
    episodes = check_int(episodes, "episodes", minimum=1)
    seed = check_seed(seed)
    confidence = check_real(confidence, "confidence", minimum=0.0, maximum=1.0, strict=True)
    _check_turn_based(game, "game")
    if observation is None:
        observation = "information_state" if game.get_type().provides_information_state_tensor else "observation"
    if observation not in ("information_state", "observation"):
        raise ValueError(f"observation must be 'information_state' or 'observation'; got {observation!r}.")
    refs = [r if isinstance(r, Reference) else make_reference(r, game, simulations=simulations) for r in references]
    if not refs:
        raise ValueError("against: name at least one reference (uniform, mcts, ismcts or module:name).")
    policies = [list(pop.policies) if hasattr(pop, "policies") else list(pop) for pop in populations]
    n = game.num_players()
    if len(policies) != n:
        raise ValueError(f"populations: one per player ({n}); got {len(policies)}.")
    if not members and marginals is None:
        raise ValueError("marginals: members=False evaluates the meta-strategies only; give their marginals.")
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + confidence / 2))
    rows = []
    for p in range(n):
        agents = [(f"member {k}", k) for k in range(len(policies[p]))] if members else []
        if marginals is not None:
            agents.append(("meta", -1))
        for label, k in agents:
            for r, ref in enumerate(refs):
                sequence = np.random.SeedSequence(seed, spawn_key=(p, k + 1, r))
                rng = np.random.default_rng(sequence)
                seats = (sequence.generate_state(n) >> 1).tolist()   # (31 bits: what OpenSpiel's bots take)
                actors = [None if q == p else ref.make(q, seats[q]) for q in range(n)]
                weights = None if k >= 0 else _weights(marginals[p], len(policies[p]), p)
                returns = []
                for _ in range(episodes):
                    member = policies[p][k] if k >= 0 else policies[p][int(rng.choice(len(weights), p=weights))]
                    actors[p] = _agent_actor(member, p, tree, observation, rng)
                    returns.append(_play(game, actors, rng))
                rows.append(_row(p, label, k, ref.name, np.array(returns), z, confidence,
                                 float(game.min_utility()), float(game.max_utility())))
    return pd.DataFrame(rows)


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
    solver = _load_run(run_dir)
    from games.environment import ObservationGame

    game, observation = solver.game, None
    if isinstance(game, ObservationGame):
        game, observation = game.game, "observation"
    strategy = solver.state.eval_meta_strategy or solver.state.meta_strategy
    marginals = None if strategy is None else [np.asarray(m) for m in strategy.marginals]
    return evaluate_against(game, solver.state.populations, against, marginals=marginals,
                            tree=getattr(solver, "tree", None), observation=observation, **options)


def _load_run(run_dir):
    """The solver of the run in ``run_dir`` (``ValueError`` naming it when it is not a run directory), resumed from
    its checkpoint by the training loop the checkpoint names (which verifies it)."""
    import json

    from psro.algorithms import algorithm_capabilities, algorithm_class

    path = Path(run_dir)
    checkpoint = path / "checkpoint"
    document = checkpoint / "checkpoint.json"
    if not path.is_dir() or not document.is_file():
        raise ValueError(f"RUN_DIR: {str(path)!r} is not a run directory (no checkpoint/checkpoint.json in it); give "
                         "the directory `psro run` wrote.")
    try:
        options = json.loads(document.read_text()).get("options", {})
        algorithm = options.get("algorithm", "psro") if isinstance(options, dict) else "psro"
    except (ValueError, AttributeError, UnicodeDecodeError):
        raise ValueError(f"RUN_DIR: {str(document)!r} is not a checkpoint document (damaged?).") from None
    if algorithm_capabilities(str(algorithm)).offline:
        raise ValueError(f"RUN_DIR: {str(path)!r} is an offline run ({algorithm}), whose policies live in its learned "
                         "model's infostates, not the game's; reference opponents play the game itself.")
    return algorithm_class(str(algorithm)).resume(checkpoint, progress=False)
