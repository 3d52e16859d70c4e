"""The approximate gap's settings: ``approx_gap_options``' own keys (:class:`ApproxGapSettings`), their defaults
and checks (:func:`approx_gap_settings`), the learned responses' default budget and the standard-error target's
cap (:func:`check_stderr_target`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from psro.errors import ConfigError, with_field

__all__ = ["APPROX_GAP_SETTINGS", "APPROX_GAP_STEPS", "APPROX_GAP_STEPS_FACTOR", "MAX_EPISODES_FACTOR",
           "RESPONSE_EVAL_EPISODES", "STDERR_FLOOR", "STRONGEST_RESPONDER", "ApproxGapSettings",
           "approx_gap_settings", "check_stderr_target", "default_responder", "unvalued"]


@dataclass(frozen=True)
class ApproxGapSettings:
    """``approx_gap_options``' own keys and their defaults (its other keys are the learned oracle's options);
    :func:`approx_gap_settings` checks them."""

    episodes: int = 2000
    """Episodes of each value in the estimate (the first round), at least 2."""
    selection_episodes: int | None = None
    """Episodes the last two candidates play in the race that picks the winner, the others fewer (successive
    halving; null: episodes)."""
    warm_start: bool = True
    """A candidate warm-started from the best member."""
    fresh: bool = True
    """A candidate trained from scratch (false: with warm_start, only the warm-started one is trained, at half the
    cost; where the population is strong, as on hold'em, the warm one is the one that finds the gap)."""
    oracle: str | None = None
    """The learned oracle of the fresh responses (null: :func:`default_responder`, the strongest that fits:
    model_br, whose table holds the observations play visits and which falls back on neural_br past its
    max_states, for runs on ppo, dqn, neural_br or model_br and for the self-play family, unless
    approx_gap_options sets oracle options, which are then the run's oracle's; the run's own otherwise)."""
    train: bool | str = True
    """true: fresh responses are trained, the step's own being one more candidate; auto: only for targets the
    step's responses do not answer, or with another oracle than the run's (cheaper, only as strong as the run's
    responses); false: never."""
    stderr_target: float | None = 0.25
    """Rounds of episodes, each doubling them, are added until the standard error is at most this fraction of the
    estimate or STDERR_FLOOR of the payoff range (null: one round)."""
    max_episodes: int | None = None
    """The cap of the episodes of each value (null: MAX_EPISODES_FACTOR times episodes)."""
    share: float | None = 0.2
    """The most of the run's wall time measuring may take (approx_gap_mode; null: no limit, the schedule alone
    decides). Rows that an approx_gap_every set to a number asks for and the share skips are counted in one WARNING
    as the run ends."""
    lbr: int | None = None
    """A local best response (psro.measures.local_best_response: one-step lookahead over the race's winner, on beliefs
    from
    the target's members) raced against the winner, valuing each action by this many playouts (e.g. 32); OpenSpiel
    games whose actions every player sees only (poker, liar's dice; null: none)."""


#: :class:`ApproxGapSettings` as ``{key: default}``
APPROX_GAP_SETTINGS = {f.name: f.default for f in dataclasses.fields(ApproxGapSettings)}

#: The standard error that is always small enough, as a fraction of the payoff range (an estimate near zero cannot
#: meet a target relative to itself)
STDERR_FLOOR = 0.05
#: The default cap of the episodes of each value, as a multiple of ``episodes``
MAX_EPISODES_FACTOR = 16

#: The default training budget (``total_steps``) of the approximate gap's learned responses: the run's oracle's
#: own budget ``s`` when it is larger, else ``min(10 s, APPROX_GAP_STEPS)`` (a lower bound is only as strong as its
#: responses: at 2,000 PPO steps they find a third to a half of Leduc's gap; at 20,000 one Leduc row of the
#: validation table still found 0.45 of it, at 40,000 0.53)
APPROX_GAP_STEPS = 40_000
#: How many times the run's oracle's budget the default may spend, at most (up to :data:`APPROX_GAP_STEPS`)
APPROX_GAP_STEPS_FACTOR = 10

#: The episodes a learned oracle plays to value each of the approximate gap's responses (``eval_episodes``, at
#: least one per environment), unless ``approx_gap_options`` sets them: the race and the estimate value them on
#: episodes of their own, so the oracle's value is never read
RESPONSE_EVAL_EPISODES = 1

def check_stderr_target(stderr_target, max_episodes, episodes: int) -> int:
    """The cap of the episodes of each value (``max_episodes``; None: :data:`MAX_EPISODES_FACTOR` times
    ``episodes``; just ``episodes`` without a ``stderr_target``), after checking both.

    Examples
    --------
    >>> check_stderr_target(0.25, None, 500), check_stderr_target(None, None, 500)
    (8000, 500)
    >>> check_stderr_target(0.25, 100, 500)
    Traceback (most recent call last):
    ...
    ValueError: max_episodes must be an int >= episodes (500), the first round, to add episodes until \
stderr_target is met; got 100 (raise max_episodes, or lower episodes).
    """
    if stderr_target is None:
        return episodes
    if isinstance(stderr_target, bool) or not isinstance(stderr_target, (int, float, np.integer, np.floating)) \
            or not math.isfinite(stderr_target) or stderr_target <= 0:
        raise ValueError("stderr_target must be a positive number (the standard error to reach, as a fraction of the "
                         f"estimate), or null for one round of episodes; got {stderr_target!r}.")
    cap = MAX_EPISODES_FACTOR * episodes if max_episodes is None else max_episodes
    if not _is_int(cap) or cap < episodes:
        raise ValueError(f"max_episodes must be an int >= episodes ({episodes}), the first round, to add episodes "
                         f"until stderr_target is met; got {max_episodes!r} (raise max_episodes, or lower episodes).")
    return int(cap)


#: The approximate gap's learned oracle where ``approx_gap_options`` names none and the run's oracle is one of
#: :data:`OUTRANKED` (a lower bound is only as strong as its responses: on Leduc's br_quality benchmark model_br's
#: median error is 0.026 at 1-2 CPU-seconds, PPO's 0.37-0.49; past max_states it is neural_br's, 0.028 at 6 s)
STRONGEST_RESPONDER = "model_br"
#: The run oracles whose runs measure with :data:`STRONGEST_RESPONDER` by default
OUTRANKED = ("ppo", "dqn", "neural_br", "model_br")


def default_responder(run_oracle: str, approx_gap_options: dict | None = None) -> str:
    """The learned oracle of the approximate gap's fresh responses when ``approx_gap_options`` names none:
    :data:`STRONGEST_RESPONDER` for a run whose oracle (the self-play family's nominal one is ``"dqn"``) is one of
    :data:`OUTRANKED`, unless ``approx_gap_options`` sets options of an oracle (a budget such as ``total_steps``:
    they were written for the run's oracle, which then stays the responder); the run's own oracle otherwise (a team
    or a user's oracle answers targets the single-agent responders may not).

    Examples
    --------
    >>> default_responder("ppo"), default_responder("ppo", {"episodes": 500}), default_responder("team_pg")
    ('model_br', 'model_br', 'team_pg')
    >>> default_responder("ppo", {"episodes": 500, "total_steps": 32768})
    'ppo'
    """
    tuned = any(key not in APPROX_GAP_SETTINGS for key in approx_gap_options or {})
    return STRONGEST_RESPONDER if run_oracle in OUTRANKED and not tuned else run_oracle


def approx_gap_settings(run_oracle_options: dict, approx_gap_options: dict | None, run_oracle: str) -> tuple:
    """``(settings, oracle_options)`` of the approximate gap: its own settings (:data:`APPROX_GAP_SETTINGS`,
    defaults filled in, and ``settings["responder"]``, the learned oracle it trains: ``oracle``, else
    :func:`default_responder` of ``run_oracle``) and the options of that oracle. Where it is the run's oracle
    (``run_oracle``), they are the run's oracle's own (never the run's ``warm_start``, which would start the fresh
    response from the responder's latest member), with a budget ``total_steps`` of at least the run's oracle's ``s``
    (default :data:`APPROX_GAP_STEPS`): ``max(s, min(10 s, APPROX_GAP_STEPS))``; another oracle starts from its own
    defaults instead. ``approx_gap_options`` overrides any of them.

    Examples
    --------
    >>> settings, options = approx_gap_settings({"total_steps": 512, "warm_start": True}, {"episodes": 300},
    ...                                         "model_br")
    >>> settings["episodes"], settings["warm_start"], settings["responder"], options
    (300, True, 'model_br', {'total_steps': 5120})
    >>> [approx_gap_settings({"total_steps": s}, {}, "model_br")[1]["total_steps"] for s in (256, 2000, 20000, 50000)]
    [2560, 20000, 40000, 50000]
    >>> settings, options = approx_gap_settings({"total_steps": 512, "hidden": [64]}, {}, "ppo")
    >>> settings["responder"], options   # (a PPO run measures with model_br, at model_br's own budget)
    ('model_br', {})
    >>> approx_gap_settings({}, {"total_steps": 256}, "ppo")[1]
    {'total_steps': 256}
    >>> approx_gap_settings({"total_steps": 512, "hidden": [64]}, {"oracle": "model_br", "total_steps": 9000},
    ...                     "ppo")[1]
    {'total_steps': 9000}
    >>> approx_gap_settings({}, {"episodes": 1}, "ppo")
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: approx_gap_options: episodes must be an int >= 2 (a standard error needs two episodes); \
got 1.
    >>> approx_gap_settings({}, {"stderr_target": 0}, "ppo")
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: approx_gap_options: stderr_target must be a positive number (the standard error to \
reach, as a fraction of the estimate), or null for one round of episodes; got 0.
    """
    given = dict(approx_gap_options or {})
    responder = given.get("oracle") or default_responder(run_oracle, given)
    other = responder != run_oracle
    options = {} if other else {k: v for k, v in run_oracle_options.items() if k != "warm_start"}
    if not other:
        own = int(options.get("total_steps", APPROX_GAP_STEPS))
        options["total_steps"] = max(own, min(APPROX_GAP_STEPS_FACTOR * own, APPROX_GAP_STEPS))
    options.update({k: v for k, v in given.items() if k not in APPROX_GAP_SETTINGS})
    settings = {k: given.get(k, default) for k, default in APPROX_GAP_SETTINGS.items()}
    settings["responder"] = responder
    if not _is_int(settings["episodes"]) or settings["episodes"] < 2:
        raise ConfigError("approx_gap_options", "episodes must be an int >= 2 (a standard error needs two episodes); "
                          f"got {settings['episodes']!r}.")
    if settings["selection_episodes"] is not None and (not _is_int(settings["selection_episodes"])
                                                       or settings["selection_episodes"] < 1):
        raise ConfigError("approx_gap_options", "selection_episodes must be a positive int (or null: episodes); got "
                          f"{settings['selection_episodes']!r}.")
    for key in ("warm_start", "fresh"):
        if not isinstance(settings[key], bool):
            raise ConfigError("approx_gap_options", f"{key} must be true or false; got {settings[key]!r}.")
    if not (settings["fresh"] or settings["warm_start"]) and settings["train"] is not False:
        raise ConfigError("approx_gap_options", "fresh and warm_start are both false, so no response would be trained; "
                          "set one of them to true, or train to false (the best member and the step's responses "
                          "only).")
    if settings["train"] not in (True, False, "auto"):
        raise ConfigError("approx_gap_options", f"train must be true, false or 'auto'; got {settings['train']!r}.")
    with_field("approx_gap_options", check_stderr_target, settings["stderr_target"], settings["max_episodes"],
               settings["episodes"])
    if settings["lbr"] is not None and (not _is_int(settings["lbr"]) or settings["lbr"] < 1):
        raise ConfigError("approx_gap_options", "lbr must be a positive int (the local best response's playouts per "
                          f"legal action, e.g. 32), or null for no such candidate; got {settings['lbr']!r}.")
    share = settings["share"]
    if share is not None and (isinstance(share, bool) or not isinstance(share, (int, float, np.integer, np.floating))
                              or not 0 < share < 1):
        raise ConfigError("approx_gap_options", "share must be a number in (0, 1), the most of the run's wall time "
                          f"measuring may take (e.g. 0.2), or null for no limit; got {share!r}.")
    return settings, options


def unvalued(oracle, approx_gap_options: dict | None):
    """``oracle`` (a learned oracle, changed in place) playing :data:`RESPONSE_EVAL_EPISODES` to value each
    response, where its config has ``eval_episodes`` and ``approx_gap_options`` does not set them.

    Examples
    --------
    >>> from psro.oracles.learned.oracle import make_learned_oracle
    >>> def ppo(episodes):
    ...     return make_learned_oracle("ppo", None, game="kuhn_poker", eval_episodes=episodes)
    >>> unvalued(ppo(500), {}).config.eval_episodes, unvalued(ppo(64), {"eval_episodes": 64}).config.eval_episodes
    (1, 64)
    """
    config = getattr(oracle, "config", None)
    if "eval_episodes" not in (approx_gap_options or {}) and dataclasses.is_dataclass(config) \
            and hasattr(config, "eval_episodes"):
        oracle.config = dataclasses.replace(config, eval_episodes=RESPONSE_EVAL_EPISODES)
    return oracle


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)
