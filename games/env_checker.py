"""``check_env``: validate an environment game (or a batched env) before training on it, as Gymnasium's
``check_env`` does for its environments.

:func:`games.check_game` walks a game tree; an environment game (PettingZoo, a user's own numpy environment,
:class:`games.ObservationGame`) has none, so this checker plays it instead: seeded uniform random legal actions
in a few envs side by side, checking every row the env returns against the contract of
:class:`games.contracts.EnvStep` and :class:`games.contracts.BatchedEnv`:

* the game's sizes (``num_players``, ``num_actions``, ``obs_dim``: positive ints) and its ``reset`` / ``step``;
* ``reset`` gives one row per env, none of them done, with episode counters;
* every step answers exactly the envs stepped, in order;
* shapes and dtypes: ``obs`` float32 ``(b, obs_dim)`` and finite, ``mask`` bool ``(b, num_actions)`` with at least
  one legal action, ``player`` a seat, ``done`` bool, ``returns`` finite ``(b, num_players)`` and 0 where the
  episode goes on, ``episode`` counting up by one when an episode ends;
* episodes end (within ``max_steps`` steps), with their returns;
* determinism: two envs built (or reset) with the same seed, played with the same actions, give the same rows.

What it finds is returned as :class:`games.game_checker.Problem` objects in an :class:`EnvCheckReport`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from games.contracts import is_environment_game
from games.game_checker import Problem
from games.validation import check_int, is_integer

__all__ = ["ENV_PROBLEM_KINDS", "EnvCheckReport", "check_env"]

logger = logging.getLogger(__name__)

#: Every problem kind ``check_env`` reports, with what it means. The names are stable.
ENV_PROBLEM_KINDS: dict[str, str] = {
    "bad_sizes": "num_players, num_actions or obs_dim is missing or not a positive int",
    "exception": "batched_env, reset or step raised an exception",
    "bad_rows": "reset or step answered other envs than those started or stepped",
    "bad_field": "a field of the EnvStep is missing or has the wrong shape or dtype",
    "not_finite": "an observation or a return is NaN or inf",
    "bad_player": "the seat to act is not in [0, num_players)",
    "empty_mask": "a decision has no legal action",
    "returns_mid_episode": "returns are not 0 in a row whose episode goes on",
    "bad_episode_counter": "the episode counter does not count up by one when an episode ends",
    "no_episode_end": "no episode ended within max_steps steps",
    "nondeterministic": "the same seed and the same actions gave different rows",
}


@dataclass(frozen=True)
class EnvCheckReport:
    """What :func:`check_env` found.

    Attributes
    ----------
    env : str
        The environment's name.
    problems : tuple of Problem
        The first problem of each kind found (``history`` empty; the message says where).
    num_steps : int
        Steps played (each a batch of envs).
    num_episodes : int
        Episodes that ended.

    Examples
    --------
    >>> report = check_env("kuhn_poker", raise_on_error=False)
    >>> report.ok, report.num_episodes >= 20
    (True, True)
    """

    env: str
    problems: tuple = ()
    num_steps: int = 0
    num_episodes: int = 0
    num_problems: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether no problem was found."""
        return not self.problems

    @property
    def kinds(self) -> set:
        """The kinds of problems found."""
        return {p.kind for p in self.problems}

    def __str__(self) -> str:
        head = f"check_env({self.env!r}): {self.num_steps} steps, {self.num_episodes} episodes"
        if self.ok:
            return head + ": no problems found."
        return "\n".join([head + f": {sum(self.num_problems.values())} problem(s)"]
                         + [f"  - {problem}" for problem in self.problems])


class _Found(Exception):
    """Stops the check: what follows a broken row cannot be checked."""


class _Log:
    def __init__(self):
        self.problems, self.counts = [], {}

    def add(self, kind: str, message: str, fatal: bool = False) -> None:
        if kind not in self.counts:
            self.problems.append(Problem(kind, message))
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if fatal:
            raise _Found


def check_env(env_or_game: Any, *, num_envs: int = 4, episodes: int = 20, max_steps: int = 10_000, seed: int = 0,
              raise_on_error: bool = True) -> EnvCheckReport:
    """Validate an environment game or a batched env by playing it (see the module docstring).

    Parameters
    ----------
    env_or_game : environment game, BatchedEnv, or anything :func:`games.make_env` accepts
        An object with ``batched_env`` (checked through fresh envs of it), an env with ``reset`` and ``step``
        (checked as it is; determinism by resetting it with the same seed), or a game string.
    num_envs : int
        Envs played side by side.
    episodes : int
        Episodes to finish (across the envs) before the check ends.
    max_steps : int
        Steps after which an episode that has not ended is a problem.
    seed : int
        Seeds the envs and the random actions; the same seed gives the same report.
    raise_on_error : bool
        Raise ``ValueError`` listing the problems when any is found (the default, so that it works as an assertion
        in a test); False returns the report either way.

    Returns
    -------
    EnvCheckReport

    Examples
    --------
    >>> import numpy as np
    >>> from games.environment import ObservationGame
    >>> check_env(ObservationGame("tic_tac_toe")).ok
    True
    >>> class Coin:                       # one seat, two actions; bug: the observation has 3 entries, not obs_dim=2
    ...     num_players, num_actions, obs_dim = 1, 2, 2
    ...     def batched_env(self, num_envs, rng=None, **options):
    ...         return CoinEnv(num_envs)
    >>> from games.environment import EnvStep
    >>> class CoinEnv:
    ...     num_players, num_actions, obs_dim = 1, 2, 2
    ...     def __init__(self, n):
    ...         self.num_envs, self.episode = n, np.ones(n, np.int64)
    ...     def rows(self, envs, done, returns):
    ...         return EnvStep(envs, np.zeros(len(envs), np.int64), np.zeros((len(envs), 3), np.float32),
    ...                        np.ones((len(envs), 2), bool), done, returns, self.episode[envs].copy())
    ...     def reset(self, rng=None):
    ...         self.episode[:] = 1
    ...         return self.rows(np.arange(self.num_envs), np.zeros(self.num_envs, bool), np.zeros((self.num_envs, 1)))
    ...     def step(self, envs, actions):
    ...         self.episode[envs] += 1
    ...         return self.rows(np.asarray(envs), np.ones(len(envs), bool), np.asarray(actions, float)[:, None])
    >>> report = check_env(Coin(), raise_on_error=False)
    >>> print(report.problems[0])
    bad_field: reset: obs has shape (4, 3), dtype float32; expected shape (4, 2) (rows, obs_dim), float32
    """
    for name, value, least in (("num_envs", num_envs, 1), ("episodes", episodes, 1), ("max_steps", max_steps, 1)):
        check_int(value, name, minimum=least)
    seed = check_int(seed, "seed", minimum=0)
    log = _Log()
    label, steps, ended = _label(env_or_game), 0, 0
    try:
        first = _build(env_or_game, num_envs, seed, log)
        sizes = _sizes(first, log)
        steps, ended, trace = _play(first, sizes, seed, episodes, max_steps, log)
        second = _build(env_or_game, num_envs, seed, log)
        _, _, again = _play(second, sizes, seed, episodes, steps, log, stop_at=len(trace))
        if again != trace:
            log.add("nondeterministic", f"two envs seeded alike ({seed}) and played with the same actions differ "
                                        "within the first steps; draw every random number from the rng given to "
                                        "batched_env or reset.")
    except _Found:
        pass
    report = EnvCheckReport(label, tuple(log.problems), steps, ended, dict(log.counts))
    if raise_on_error and not report.ok:
        raise ValueError(str(report))
    logger.info("%s", report)
    return report


def _label(env_or_game) -> str:
    text = str(env_or_game)
    return type(env_or_game).__name__ if " object at 0x" in text else text


def _build(env_or_game, num_envs: int, seed: int, log: _Log):
    """The env to check, reset with ``seed`` by the caller (``_play``)."""
    try:
        if is_environment_game(env_or_game):
            return env_or_game.batched_env(num_envs, rng=np.random.default_rng(seed))
        if callable(getattr(env_or_game, "reset", None)) and callable(getattr(env_or_game, "step", None)):
            return env_or_game
        from games.environment import make_env

        return make_env(env_or_game, num_envs, rng=np.random.default_rng(seed))
    except (TypeError, ValueError) as exc:
        if not (is_environment_game(env_or_game) or isinstance(env_or_game, str)):
            raise TypeError(f"env_or_game must be an environment game (with batched_env), a batched env (with reset "
                            f"and step) or a game make_env accepts; got {type(env_or_game).__name__} ({exc}).") \
                from None
        log.add("exception", f"building the env raised {type(exc).__name__}: {exc}", fatal=True)
    except Exception as exc:   # (a user's code: any failure is a finding)
        log.add("exception", f"batched_env raised {type(exc).__name__}: {exc}", fatal=True)


def _sizes(env, log: _Log) -> tuple:
    values = []
    for name in ("num_envs", "num_players", "num_actions", "obs_dim"):
        value = getattr(env, name, None)
        if not is_integer(value) or value < 1:
            log.add("bad_sizes", f"the env's {name} is {value!r}; give a positive int.", fatal=True)
        values.append(int(value))
    return tuple(values)


def _call(log: _Log, what: str, method, *args):
    try:
        return method(*args)
    except Exception as exc:   # (a user's code: any failure is a finding)
        log.add("exception", f"{what} raised {type(exc).__name__}: {exc}", fatal=True)


def _play(env, sizes: tuple, seed: int, episodes: int, max_steps: int, log: _Log, stop_at=None) -> tuple:
    """Play seeded uniform random legal actions; ``(steps, episodes ended, trace of rows)``."""
    num_envs, num_players, _, _ = sizes
    rng = np.random.default_rng(seed)
    s = _call(log, "reset", env.reset, np.random.default_rng(seed))
    _check_rows(s, np.arange(num_envs), sizes, "reset", log)
    if s.done.any():
        log.add("bad_rows", "reset returned rows with done=True; a fresh episode has not ended.")
    counter = s.episode.copy()
    trace, steps, ended = [_digest(s)], 0, 0
    while ended < episodes and steps < max_steps and (stop_at is None or len(trace) < stop_at):
        legal = s.mask.astype(np.float64) / s.mask.sum(axis=1, keepdims=True)
        actions = np.array([rng.choice(sizes[2], p=row) for row in legal], dtype=np.int64)
        envs = s.envs
        s = _call(log, f"step {steps}", env.step, envs, actions)
        steps += 1
        _check_rows(s, envs, sizes, f"step {steps}", log)
        ongoing = ~s.done
        if np.any(s.returns[ongoing] != 0):
            log.add("returns_mid_episode", f"step {steps}: returns {s.returns[ongoing][0].tolist()} where the "
                                           "episode goes on; give returns only in the row whose done is True.")
        expected = counter[s.envs] + s.done
        if not np.array_equal(s.episode, expected):
            log.add("bad_episode_counter", f"step {steps}: episode {s.episode.tolist()}, expected "
                                           f"{expected.tolist()} (one more where done).")
        counter[s.envs] = s.episode
        ended += int(s.done.sum())
        trace.append(_digest(s))
    if ended == 0 and stop_at is None:
        log.add("no_episode_end", f"no episode ended in {steps} steps of {num_envs} envs; set done=True and the "
                                  f"returns ({num_players} per row) when an episode ends.")
    return steps, ended, trace


def _digest(s) -> tuple:
    return tuple(np.asarray(getattr(s, name)).tobytes() for name in
                 ("envs", "player", "obs", "mask", "done", "returns", "episode"))


def _dtype_fits(dtype, kind: str) -> bool:
    if kind == "f4":
        return dtype == np.float32
    return dtype.kind in ("iu" if kind == "i" else kind)


def _check_rows(s, envs: np.ndarray, sizes: tuple, where: str, log: _Log) -> None:
    """Fatal problems for a row that cannot be read; the others logged."""
    _, num_players, num_actions, obs_dim = sizes
    b = len(envs)
    specs = {"envs": ((b,), "i", "int"), "player": ((b,), "i", "int"), "obs": ((b, obs_dim), "f4", "float32"),
             "mask": ((b, num_actions), "b", "bool"), "done": ((b,), "b", "bool"),
             "returns": ((b, num_players), "f", "float"), "episode": ((b,), "i", "int")}
    for name, (shape, kind, dtype) in specs.items():
        value = getattr(s, name, None)
        value = None if value is None else np.asarray(value)
        if value is None or value.shape != shape or not _dtype_fits(value.dtype, kind):
            got = "nothing" if value is None else f"shape {value.shape}, dtype {value.dtype}"
            log.add("bad_field", f"{where}: {name} has {got}; expected shape {shape} "
                                 f"({'rows, obs_dim' if name == 'obs' else 'rows'}), {dtype}", fatal=True)
    if not np.array_equal(s.envs, envs):
        log.add("bad_rows", f"{where}: rows for envs {s.envs.tolist()}; expected {envs.tolist()} (one row per env "
                            "started or stepped, in the same order).", fatal=True)
    if not (np.isfinite(s.obs).all() and np.isfinite(s.returns).all()):
        log.add("not_finite", f"{where}: an observation or a return is not finite.")
    if np.any((s.player < 0) | (s.player >= num_players)):
        log.add("bad_player", f"{where}: seats {s.player.tolist()}; each must lie in [0, {num_players}).", fatal=True)
    if not s.mask.any(axis=1).all():
        log.add("empty_mask", f"{where}: env {int(s.envs[~s.mask.any(axis=1)][0])} has no legal action; every "
                              "decision needs at least one.", fatal=True)
