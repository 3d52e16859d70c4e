"""Scaffolding shared by the learned oracles (:mod:`psro.oracles.learned.dqn`, :mod:`psro.oracles.learned.ppo`).

The parts of a training run that do not depend on the learning rule: checking
the settings of a config (integers, finite reals in range, layer widths),
seeding and building the vector of games, the network a run starts from (fresh,
or a copy of a previous response: a warm start), the learner's health during
training (:func:`check_finite`: a non-finite loss, score or weight stops the
run with a ``ValueError`` naming the options to change), and the final
evaluation of the trained policy, greedy or sampled from its softmax, beside
the uniform policy's value against the same opponents, packed into a
:class:`TrainingResult`. A run's learning curve (:class:`Curve`: one row per
training chunk, its loss, entropy, learning rate and the mean return of the
episodes it finished) travels in :attr:`TrainingResult.curve` as plain dicts,
and with the ``ValueError`` of a diverged run as its ``learner_curve``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch

from games.validation import check_real, is_integer
from psro.errors import LearnerDiverged
from psro.oracles.learned.env import EpisodeStats, OpponentMixture, VectorEnv, play_episodes
from psro.oracles.learned.networks import MODES, NeuralPolicy, masked_scores

__all__ = ["TrainingResult", "Curve", "CURVE_KEYS", "SCORE_LIMIT", "check_positive_ints", "check_real_fields",
           "check_hidden", "check_finite", "responds_to_input", "seeded_env", "initial_network", "evaluated_result"]


@dataclass(frozen=True, eq=False)
class TrainingResult:
    """What a training run (:func:`psro.oracles.learned.dqn.train_dqn`, :func:`psro.oracles.learned.ppo.train_ppo`)
    returns.

    Attributes
    ----------
    policy : NeuralPolicy
        The trained network, in the mode it was evaluated in (by default
        ``"greedy"`` for DQN, ``"softmax"`` for PPO).
    evaluation : EpisodeStats
        Mean return of ``policy`` over the evaluation episodes.
    training_steps : int
        Learner decisions used for training.
    training_episodes : int
        Episodes finished during training.
    seconds : float
        Wall-clock seconds of training and evaluation.
    seed : int
    baseline : EpisodeStats or None
        Mean return of the uniform random policy (over the legal actions) in the same seat against the same
        opponents, over as many episodes: what a response must beat (None where it was not measured).
    responsive : bool
        Whether the trained network's scores still depend on its observation (:func:`responds_to_input`).
    curve : tuple of dict
        The learning curve: one row per training chunk (:class:`Curve`, keys :data:`CURVE_KEYS`), the last one's
        ``value`` the evaluation's mean return.
    """

    policy: NeuralPolicy
    evaluation: EpisodeStats
    training_steps: int
    training_episodes: int
    seconds: float
    seed: int
    baseline: EpisodeStats | None = None
    responsive: bool = True
    curve: tuple = ()


#: The keys of a learning-curve row: learner decisions of this training run so far, the chunk's mean loss and
#: policy entropy (NaN where the learner has none), the mean return of the episodes it finished (NaN: none
#: finished), the value against the target where known (NaN in intermediate chunks), the step size it used
CURVE_KEYS = ("steps", "loss", "entropy", "episode_return", "value", "learning_rate")


class Curve:
    """The learning curve of one training run, collected chunk by chunk as plain dicts (:data:`CURVE_KEYS`).

    The learner calls :meth:`add` after every gradient step and :meth:`end_chunk` at the end of every chunk;
    :meth:`kept` gives a ``ValueError`` raised inside it (a diverged run: :func:`check_finite`) the rows so far
    as its ``learner_curve``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> env = SimpleNamespace(episode_returns=[])
    >>> curve = Curve(env)
    >>> curve.add(0.5, entropy=0.6); curve.add(0.25, entropy=0.4); env.episode_returns += [1.0, -1.0, 1.0]
    >>> row = curve.end_chunk(64, learning_rate=0.01)
    >>> row["steps"], row["loss"], round(row["entropy"], 3), round(row["episode_return"], 3)
    (64, 0.375, 0.5, 0.333)
    >>> math.isnan(curve.end_chunk(128, learning_rate=0.01)["loss"])   # no gradient step in that chunk
    True
    >>> with curve.kept():
    ...     raise ValueError("learning_rate: diverged")
    Traceback (most recent call last):
    ...
    ValueError: learning_rate: diverged
    """

    def __init__(self, env):
        self.env = env
        self.rows: list = []
        self._losses: list = []
        self._entropies: list = []
        self._episodes = len(env.episode_returns)

    def add(self, loss, entropy=None) -> None:
        """One gradient step's loss (a tensor or a number) and, where the learner has one, its policy entropy."""
        self._losses.append(float(loss))
        if entropy is not None:
            self._entropies.append(float(entropy))

    def end_chunk(self, steps: int, learning_rate: float, value: float = math.nan) -> dict:
        """Close the chunk that ends after ``steps`` learner decisions: append its row and return it."""
        returns = self.env.episode_returns[self._episodes:]
        self._episodes = len(self.env.episode_returns)
        row = {"steps": int(steps), "loss": _mean(self._losses), "entropy": _mean(self._entropies),
               "episode_return": _mean(returns), "value": float(value), "learning_rate": float(learning_rate)}
        self.rows.append(row)
        self._losses, self._entropies = [], []
        return row

    def result(self, value: float) -> tuple:
        """The rows, the last one's ``value`` set to ``value`` (the evaluation's mean return)."""
        rows = [dict(row) for row in self.rows]
        if rows:
            rows[-1]["value"] = float(value)
        return tuple(rows)

    @contextmanager
    def kept(self) -> Iterator[None]:
        """A ``ValueError`` raised in the body leaves with the rows so far as its ``learner_curve`` attribute."""
        try:
            yield
        except ValueError as exc:
            exc.learner_curve = tuple(dict(row) for row in self.rows)
            raise


def _mean(values) -> float:
    return float(np.mean(values)) if len(values) else math.nan


def check_positive_ints(config, names: Iterable[str]) -> None:
    """Raise ``ValueError`` unless every field ``names`` of ``config`` is a positive int (bools are not).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> check_positive_ints(SimpleNamespace(total_steps=10), ["total_steps"])
    >>> check_positive_ints(SimpleNamespace(total_steps=0), ["total_steps"])
    Traceback (most recent call last):
    ...
    ValueError: total_steps must be a positive int; got 0.
    """
    for name in names:
        value = getattr(config, name)
        if not is_integer(value) or value < 1:
            raise ValueError(f"{name} must be a positive int; got {value!r}.")


def check_real_fields(config, bounds: dict) -> None:
    """Raise ``ValueError`` (``TypeError`` for a non-number) naming the field unless every field of ``config`` in
    ``bounds`` is a finite real number in its range; ``bounds[name] = (minimum, maximum, strict)`` (``None``: no
    bound; ``strict``: the bounds themselves excluded).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> check_real_fields(SimpleNamespace(learning_rate=1e-3), {"learning_rate": (0.0, None, True)})
    >>> check_real_fields(SimpleNamespace(learning_rate=float("inf")), {"learning_rate": (0.0, None, True)})
    Traceback (most recent call last):
    ...
    ValueError: learning_rate must be finite; got inf.
    """
    for name, (minimum, maximum, strict) in bounds.items():
        check_real(getattr(config, name), name, minimum=minimum, maximum=maximum, strict=strict)


def check_hidden(config) -> None:
    """Check ``config.hidden`` (the hidden layer widths: positive ints) and store it as a tuple (a config read
    back from JSON or YAML gives a list).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> check_hidden(SimpleNamespace(hidden=[0]))
    Traceback (most recent call last):
    ...
    ValueError: hidden must be a list of positive ints (the hidden layer widths); got [0].
    """
    hidden = config.hidden
    if not isinstance(hidden, (list, tuple)) or not all(is_integer(h) and h > 0 for h in hidden):
        shown = list(hidden) if isinstance(hidden, (list, tuple)) else hidden
        raise ValueError(f"hidden must be a list of positive ints (the hidden layer widths); got {shown!r}.")
    object.__setattr__(config, "hidden", tuple(int(h) for h in hidden))


#: The options that steady a diverging learner, in the order a message names them
_STEADYING = (("learning_rate", "lower"), ("max_grad_norm", "lower"), ("clip_coef", "lower"),
              ("ent_coef", "lower"), ("batch_size", "raise"))


#: The largest action score (a logit or a Q-value) a healthy network gives: a tenth of the score that masks an
#: illegal action (:func:`psro.oracles.learned.networks.masked_scores`), beyond which the mask no longer holds
SCORE_LIMIT = 1e8


def check_finite(value, what: str, config, algorithm: str, steps: int, limit: float = math.inf,
                 names: tuple | None = None, unit: str = "learner steps") -> None:
    """Stop a diverged training run: ``ValueError`` naming the options to change unless every entry of ``value``
    (a tensor, an array or a number) is finite and at most ``limit`` in absolute value (action scores:
    :data:`SCORE_LIMIT`).

    Parameters
    ----------
    value : torch.Tensor, ndarray or float
    what : str
        What it is (``"loss"``, ``"actor's action scores"``, ...).
    config : DQNConfig or PPOConfig
        Its ``learning_rate`` (and, where it has them, ``max_grad_norm``, ``clip_coef``, ...) are named.
    algorithm : str
    steps : int
        Learner decisions so far.
    limit : float
        The largest absolute value allowed.
    names : tuple of str, optional
        The options of ``config`` to lower, the first named first (default: ``learning_rate`` and those of
        ``max_grad_norm``, ``clip_coef``, ``ent_coef`` the config has; ``batch_size`` to raise).
    unit : str
        What ``steps`` counts.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> check_finite(torch.tensor([1.0, 2.0]), "loss", SimpleNamespace(learning_rate=1e4), "ppo", 512)
    >>> check_finite(torch.tensor([1.0, float("nan")]), "loss", SimpleNamespace(learning_rate=1e4), "ppo", 512)
    Traceback (most recent call last):
    ...
    psro.errors.LearnerDiverged: learning_rate: ppo training diverged (its loss became nan after 512 learner \
steps); lower learning_rate (now 10000.0).
    >>> check_finite(float("inf"), "loss", SimpleNamespace(learning_rate=1e4), "ppo", 512)
    Traceback (most recent call last):
    ...
    psro.errors.LearnerDiverged: learning_rate: ppo training diverged (its loss became inf after 512 learner \
steps); lower learning_rate (now 10000.0).
    """
    array = value.detach().cpu().double().numpy() if isinstance(value, torch.Tensor) \
        else np.asarray(value, dtype=np.float64)
    healthy = np.isfinite(array) & (np.abs(array) <= limit)
    if healthy.all():
        return
    bad = float(array[~healthy].reshape(-1)[0])
    beyond = "" if math.isnan(bad) or math.isinf(bad) else f", beyond {limit:g}"
    steadying = _STEADYING if names is None else [(name, "lower") for name in names]
    fixes = [f"{verb} {name} (now {getattr(config, name)!r})" for name, verb in steadying if hasattr(config, name)]
    first = steadying[0][0]
    raise LearnerDiverged(f"{first}: {algorithm} training diverged (its {what} became {bad:g}{beyond} after "
                     f"{steps} {unit}); {', or '.join(fixes)}.")


def seeded_env(game, player: int, opponents: OpponentMixture, num_envs: int,
               seed: int) -> tuple[np.random.Generator, VectorEnv]:
    """Seed torch and a numpy generator with ``seed`` and build the games the learner plays.

    Everything random in a training run draws from these two: torch (network
    initialisation, sampling) and the returned generator (chance, opponents,
    exploration), which the environment shares.

    Examples
    --------
    >>> import pyspiel
    >>> game = pyspiel.load_game("kuhn_poker")
    >>> opponent = NeuralPolicy.for_game(game)   # any policy with action_probabilities(state, player)
    >>> rng, env = seeded_env(game, 0, OpponentMixture.single([None, opponent]), 4, seed=0)
    >>> obs, mask = env.reset()
    >>> obs.shape[0], mask.shape
    (4, (4, 2))
    """
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    return rng, VectorEnv(game, player, opponents, num_envs, rng)


def initial_network(game, mode: str, hidden: tuple, initial: NeuralPolicy | None, device) -> NeuralPolicy:
    """The network a training run starts from: fresh for ``game``, or a copy of ``initial`` (a warm start).

    A warm start keeps ``initial``'s layer widths (``hidden`` is then not
    used) and must fit the game's observations and actions (``ValueError``
    naming ``initial`` otherwise); ``initial`` itself is never modified.

    Examples
    --------
    >>> import pyspiel
    >>> game = pyspiel.load_game("kuhn_poker")
    >>> previous = NeuralPolicy.for_game(game, hidden=(8,))
    >>> net = initial_network(game, "greedy", (64,), previous, "cpu")
    >>> net.hidden, net.mode, net.network is previous.network
    ((8,), 'greedy', False)
    """
    fresh = NeuralPolicy.for_game(game, hidden=hidden, mode=mode, device=device)
    if initial is None:
        return fresh
    if not isinstance(initial, NeuralPolicy):
        raise TypeError(f"initial must be a NeuralPolicy (the response to start from); got {type(initial).__name__}.")
    initial.check_fits(fresh.obs_dim, fresh.num_actions, argname="initial")
    arch = {**initial.architecture(), "mode": mode, "provenance": None}
    return NeuralPolicy.from_arrays(arch, initial.to_arrays(), device=device)


def evaluated_result(env: VectorEnv, policy: NeuralPolicy, *, eval_episodes: int, training_steps: int,
                     seed: int, start: float, mode: str = "greedy", config=None,
                     algorithm: str = "learner", curve: Curve | None = None) -> TrainingResult:
    """Evaluate ``policy`` in ``mode`` and pack the training run.

    ``"greedy"`` plays the highest legal score; ``"softmax"`` samples from
    the softmax of the legal scores with the environment's generator. The
    returned :attr:`TrainingResult.policy` is ``policy`` with ``mode`` set,
    so its value estimate is the value of the policy as returned. The
    uniform random policy then plays as many episodes in the same seat
    (:attr:`TrainingResult.baseline`), drawn after the policy's, so the
    policy's own value is as it would be without it. With ``config``, weights
    that are not finite stop the run first (:func:`check_finite`).

    Parameters
    ----------
    env : VectorEnv
        The games the policy was trained on; the episodes finished so far
        count as training episodes.
    policy : NeuralPolicy
        The trained network (its scores are Q-values or logits).
    eval_episodes : int
        Episodes to play.
    training_steps : int
        Learner decisions used for training.
    seed : int
        The seed of the run, recorded in the result.
    start : float
        ``time.perf_counter()`` at the start of the run.
    mode : {"greedy", "softmax"}
    config : DQNConfig or PPOConfig, optional
        The training settings a divergence message names.
    algorithm : str
        The learner's name in that message.
    curve : Curve, optional
        The run's learning curve (:attr:`TrainingResult.curve`; its last row valued by the evaluation).

    Returns
    -------
    TrainingResult

    Examples
    --------
    >>> import pyspiel
    >>> game = pyspiel.load_game("kuhn_poker")
    >>> untrained = NeuralPolicy.for_game(game, mode="greedy")
    >>> _, env = seeded_env(game, 0, OpponentMixture.single([None, untrained]), num_envs=4, seed=0)   # self-play
    >>> result = evaluated_result(env, untrained, eval_episodes=8, training_steps=0, seed=0,
    ...                           start=time.perf_counter(), mode="softmax")
    >>> result.training_episodes, result.evaluation.episodes, result.policy.mode, result.baseline.episodes
    (0, 8, 'softmax', 8)
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}; got {mode!r}.")
    if config is not None:
        for name, weights in policy.network.named_parameters():
            check_finite(weights.detach(), f"weights ({name})", config, algorithm, training_steps)
    training_episodes = len(env.episode_returns)
    policy.mode = mode
    device = policy.device

    seen = []   # (the first observations it acts on: does its output still depend on them?)

    def act(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if len(seen) < 16:
            seen.append(obs)
        with torch.no_grad():
            scores = masked_scores(policy.network(torch.from_numpy(obs).to(device)),
                                   torch.from_numpy(mask).to(device))
        if mode == "greedy":
            return scores.argmax(dim=1).cpu().numpy()
        probs = torch.softmax(scores, dim=1).cpu().double().numpy() * mask
        cumulative = np.cumsum(probs, axis=1)
        u = env.rng.random(len(obs)) * cumulative[:, -1]
        return np.minimum((cumulative <= u[:, None]).sum(axis=1), mask.shape[1] - 1)

    evaluation = play_episodes(env, act, eval_episodes)
    if config is not None:
        check_finite(evaluation.mean, "evaluation return", config, algorithm, training_steps)

    def uniform(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return (env.rng.random(mask.shape) * mask).argmax(axis=1)

    baseline = play_episodes(env, uniform, eval_episodes)
    return TrainingResult(policy=policy, evaluation=evaluation, training_steps=training_steps,
                          training_episodes=training_episodes, seconds=time.perf_counter() - start, seed=seed,
                          baseline=baseline, responsive=responds_to_input(policy, np.concatenate(seen)),
                          curve=() if curve is None else curve.result(evaluation.mean))


def responds_to_input(policy: NeuralPolicy, obs: np.ndarray) -> bool:
    """Whether ``policy``'s scores differ between the distinct rows of ``obs`` (True when fewer than two): False
    for a network whose hidden units all died (a step size too large pushes every ReLU below zero, after which the
    network answers every observation alike and never learns again).

    Examples
    --------
    >>> net = NeuralPolicy(3, 2, hidden=(4,))
    >>> obs = np.eye(3, dtype=np.float32)
    >>> responds_to_input(net, obs)
    True
    >>> with torch.no_grad():
    ...     _ = net.network.layers[0].bias.fill_(-100.0)   # every hidden unit dead
    >>> responds_to_input(net, obs)
    False
    """
    distinct = np.unique(np.asarray(obs, dtype=np.float32), axis=0)
    if len(distinct) < 2:
        return True
    with torch.no_grad():
        scores = policy.network(torch.from_numpy(distinct).to(policy.device)).cpu().numpy()
    return bool(np.any(scores.max(axis=0) > scores.min(axis=0)))
