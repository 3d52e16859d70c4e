"""A model-based best response from sampled play: estimate the learner's decision problem, then solve it exactly.

Against fixed opponents, a player with perfect recall faces a finite decision problem over its own information
states: from state ``s`` action ``a`` leads to its next state ``s'`` (or to the end of the game with some return)
with probabilities that chance and the opponents alone decide. :func:`train_model_br` samples that problem without a
game tree:

1. about ``total_steps`` learner decisions are played in ``num_envs`` parallel games (:class:`~psro.oracles.
   learned.env.VectorEnv`: chance and an opponent profile drawn per episode from the target), in ``rounds``: the
   first explores uniformly among the legal actions, each later one follows the solution so far and explores with
   probability ``explore``, so the samples gather where the response will play while every action of every
   state reached is still tried;
2. every decision is recorded as ``(state, action, next state or end, return)``, a state being the learner's
   observation (an information-state tensor identifies the information state), and only whole episodes count
   (:mod:`psro.oracles.learned.decisions`);
3. the estimated problem (visit counts and mean returns) is solved by backward induction:
   ``Q(s, a) = mean return at the end after (s, a) + sum over s' of P(s' | s, a) V(s')``, ``V(s) = max_a Q(s, a)``;
4. the response plays ``argmax_a Q(s, a)`` at every state it saw (an
   :class:`~psro.oracles.learned.observation_table.ObservationTablePolicy`), the uniform policy elsewhere, and
   is valued like the networks' responses (greedy evaluation episodes, beside the uniform policy's value).

Because the learner's own behaviour does not change ``P(s' | s, a)``, any exploring behaviour estimates the problem
without bias, and the error falls with the number of visits at the states that matter: those the opponents and
chance reach often, on the response's own path. When play visits more than ``max_states`` distinct states (a game
too large for a table, such as hold'em), the run falls back on the neural response
(:func:`psro.oracles.learned.neural_br.train_neural_br`: the same sampling, fitted Q iteration with a network over
the observations) with the same budget.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

import numpy as np

from psro.deprecation import renamed_names
from psro.errors import ConfigError
from psro.oracles.learned.decisions import DecisionModel, DecisionSampler, check_sampling
from psro.oracles.learned.env import OpponentMixture, VectorEnv, play_episodes, sample_rows
from psro.oracles.learned.observation_table import ObservationTablePolicy
from psro.oracles.learned.training import TrainingResult, check_positive_ints

__all__ = ["ModelBRConfig", "solve_decisions", "train_model_br", "view_size"]

logger = logging.getLogger(__name__)

#: The names before the oracle had one word, ``model_br`` (2026-12): they resolve for one release, with a warning.
__getattr__ = renamed_names(__name__, {"ModelConfig": "ModelBRConfig", "train_model": "train_model_br"})


@dataclass(frozen=True)
class ModelBRConfig:
    """Settings of :func:`train_model_br`.

    Examples
    --------
    >>> ModelBRConfig(total_steps=5000).num_envs
    1024
    """

    total_steps: int = 300_000
    """learner decisions sampled to estimate the decision problem, summed over the parallel games"""
    num_envs: int = 1024
    """games stepped side by side (the environment's cost per decision falls with the batch: 200k decisions of
    Leduc take about 4 CPU-seconds with 128 games, 1 with 1024)"""
    rounds: int = 2
    """rounds of sampling: the first explores uniformly, each later one follows the solution so far (its greedy
    actions), exploring with probability ``explore``; the budget is split evenly"""
    explore: float = 0.5
    """in the rounds after the first, the probability of a uniform legal action instead of the greedy one"""
    max_states: int = 2_000_000
    """distinct learner observations the table may hold; beyond it the run falls back on the neural response"""
    key_size: int | str | None = None
    """the table keys a state by the first ``key_size`` entries of the learner's observation (None: all of it;
    ``"view"``: the board as the player sees it, on phantom tic-tac-toe and dark hex). Their information-state
    tensor starts with that view (27 entries on 3x3 phantom tic-tac-toe, 81 on 3x3 dark hex,
    :attr:`psro.measures.boards.Board.view_size`): keyed by the view alone, one row serves every history that
    shows the player the same board, so the table generalises where the game is too large for play to visit each
    information state (a coarser decision problem, solved the same way)"""
    eval_episodes: int = 2000
    """episodes played at the end (greedy) to estimate the response's value"""
    seed: int = 0
    """seeds the numpy generator that drives chance, the opponents and exploration"""

    def __post_init__(self):
        check_positive_ints(self, ("max_states",))
        if isinstance(self.key_size, str):
            if self.key_size != "view":
                raise ConfigError("key_size", f"must be a positive int, 'view' (the board as the player sees it) or "
                                  f"null; got {self.key_size!r}.")
        elif self.key_size is not None:
            check_positive_ints(self, ("key_size",))
        check_sampling(self)


def view_size(game) -> int:
    """``key_size: view`` on ``game``: the size of the board as the player sees it, at the start of its
    information-state tensor; refused, naming the games that have one, where ``game`` has none.

    Examples
    --------
    >>> import pyspiel
    >>> view_size(pyspiel.load_game("phantom_ttt")), view_size(pyspiel.load_game("dark_hex(num_rows=3,num_cols=3)"))
    (27, 81)
    >>> view_size(pyspiel.load_game("leduc_poker"))
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: oracle_options: key_size 'view' keys by the board as the player sees it, which \
phantom_ttt and dark_hex (reveal-nothing) have; leduc_poker() has none: give a number of observation entries or null.
    """
    from psro.measures.boards import board_of

    board = board_of(game)
    if board is None:
        raise ConfigError("oracle_options", f"key_size 'view' keys by the board as the player sees it, which "
                          f"phantom_ttt and dark_hex (reveal-nothing) have; {game} has none: give a number of "
                          "observation entries or null.")
    return board.view_size


def solve_decisions(model: DecisionModel) -> tuple:
    """Backward induction on the estimated decision problem: ``(Q, V)``.

    ``Q`` has shape ``(num_states, num_actions)``: the estimated value of each action, ``-inf`` where the action
    was never tried (or is illegal); ``V`` is the best ``Q`` of each state. The sweeps repeat until ``V`` stops
    changing (as many as the longest chain of the learner's decisions, plus one, on a perfect-recall game).

    Examples
    --------
    Two decisions in a row: from state 0, action 1 ends with 1 and action 0 leads to state 1, whose action 0
    ends with 3 or 1 (mean 2):

    >>> model = DecisionModel(np.zeros((2, 1), np.float32), np.ones((2, 2), bool), state=np.array([0, 0, 1, 1]),
    ...                       action=np.array([0, 1, 0, 0]), next_state=np.array([1, -1, -1, -1]),
    ...                       reward=np.array([0.0, 1.0, 3.0, 1.0]))
    >>> q, v = solve_decisions(model)
    >>> q.tolist(), v.tolist()
    ([[2.0, 1.0], [2.0, -inf]], [2.0, 2.0])
    """
    num_states, num_actions = model.legal.shape
    pair = model.state * num_actions + model.action
    visits = np.bincount(pair, minlength=num_states * num_actions).astype(np.float64)
    ended = np.bincount(pair, weights=model.reward, minlength=num_states * num_actions)
    going = model.next_state >= 0
    onward, successor = pair[going], model.next_state[going]
    tried = visits > 0
    value = np.zeros(num_states)
    for _ in range(num_states + 1):
        total = ended + np.bincount(onward, weights=value[successor], minlength=num_states * num_actions)
        q = np.where(tried, total / np.where(tried, visits, 1.0), -np.inf).reshape(num_states, num_actions)
        new = q.max(axis=1)
        new = np.where(np.isfinite(new), new, 0.0)
        if np.array_equal(new, value):
            break
        value = new
    return q, value


def train_model_br(game, player: int, opponents: OpponentMixture, config: ModelBRConfig = ModelBRConfig(), *,
                   initial=None, mode: str = "greedy", device="cpu") -> TrainingResult:
    """A best response for seat ``player`` against ``opponents``, from a decision problem estimated by play.

    Parameters
    ----------
    game : pyspiel.Game or an environment game
    player : int
    opponents : OpponentMixture
        An opponent profile is drawn from it at the start of every episode.
    config : ModelBRConfig
    initial, mode, device
        Accepted for the interface the other learners share; a table starts empty, plays greedily and lives on
        the CPU.

    Returns
    -------
    TrainingResult
        Its ``policy`` is an :class:`ObservationTablePolicy` (a greedy neural policy where the run fell back on
        the neural response).

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.oracles.exact import best_response
    >>> from psro.policies.acting import TabularStatePolicy
    >>> from psro.policies import realization_plans, uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> uniform = uniform_policy(tree.infostates[1])
    >>> opponent = TabularStatePolicy(uniform, tree.infostates[1])
    >>> result = train_model_br(tree.game, 0, OpponentMixture.single([None, opponent]),
    ...                         ModelBRConfig(total_steps=20_000, eval_episodes=500))
    >>> plans = [None, realization_plans(uniform[None], tree.infostates[1])[0]]
    >>> best = best_response(tree, 0, plans)
    >>> from psro.oracles.learned.oracle import exact_value
    >>> round(best.value, 4), round(exact_value(tree, 0, result.policy.to_tabular(tree, 0), plans), 4)
    (0.5, 0.5)
    """
    start = time.perf_counter()
    rng = np.random.default_rng(config.seed)
    env = VectorEnv(game, player, opponents, config.num_envs, rng)
    key_size = view_size(game) if config.key_size == "view" else config.key_size
    if key_size is not None and key_size > env.obs_dim:
        raise ConfigError("oracle_options", f"key_size ({key_size}) must be at most the observation's size "
                          f"({env.obs_dim}).")
    sampler, best = DecisionSampler(env, config.max_states, key_size), None
    for r in range(config.rounds):
        sampler.play(config.total_steps // config.rounds, best, 1.0 if r == 0 else config.explore)
        model = sampler.model()
        if model.overflow:
            return _fallback(game, player, opponents, config, model, initial, mode, device)
        q, _ = solve_decisions(model)
        best = np.where(np.isfinite(q).any(axis=1), np.where(model.legal, q, -np.inf).argmax(axis=1), -1)
    probs = np.zeros(model.legal.shape)
    untried = best < 0             # a state seen only where its decision did not count (past a round's cut-off)
    probs[np.flatnonzero(~untried), best[~untried]] = 1.0
    probs[untried] = model.legal[untried]
    policy = ObservationTablePolicy(model.observations, probs, obs_dim=env.obs_dim)
    training_episodes = len(env.episode_returns)
    played = float(np.mean(env.episode_returns)) if training_episodes else math.nan

    def act(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return sample_rows(policy.probabilities_np(obs, mask), mask, env.rng.random(len(obs)))

    def uniform(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return sample_rows(mask.astype(np.float64), mask, env.rng.random(len(obs)))

    evaluation = play_episodes(env, act, config.eval_episodes)
    baseline = play_episodes(env, uniform, config.eval_episodes)
    logger.debug("model-based response of player %d: %d states from %d decisions", player, model.num_states,
                 model.state.size)
    # its learning curve is one chunk: the exploring episodes' mean return, the greedy response's value
    curve = ({"steps": int(model.state.size), "loss": math.nan, "entropy": math.nan, "episode_return": played,
              "value": evaluation.mean, "learning_rate": math.nan},)
    return TrainingResult(policy=policy, evaluation=evaluation, training_steps=int(model.state.size),
                          training_episodes=training_episodes, seconds=time.perf_counter() - start,
                          seed=config.seed, baseline=baseline, curve=curve)


def _fallback(game, player: int, opponents: OpponentMixture, config: ModelBRConfig, model: DecisionModel, initial,
              mode: str, device) -> TrainingResult:
    """The neural response (:func:`psro.oracles.learned.neural_br.train_neural_br`: the same sampling, a Q-network
    over the observations instead of the table) with the same budget, where play visited more states than
    ``max_states``."""
    from psro.oracles.learned.neural_br import NeuralBRConfig, train_neural_br

    logger.warning("model-based response of player %d: play visited more than max_states=%d distinct observations "
                   "after %d decisions; training the neural response (neural_br) with total_steps=%d instead "
                   "(raise max_states to keep a table).", player, config.max_states, model.state.size,
                   config.total_steps)
    neural = NeuralBRConfig(total_steps=config.total_steps, num_envs=config.num_envs, rounds=config.rounds,
                            explore=config.explore, eval_episodes=config.eval_episodes, seed=config.seed)
    return train_neural_br(game, player, opponents, neural, initial=initial, mode=mode, device=device)
