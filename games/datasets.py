"""Data sets: the published meta-games shipped with the package, and offline trajectories.

The published files are package data of :mod:`games`, read with :mod:`importlib.resources`,
so they are found wherever the package is installed (a wheel, an editable
install or a checkout). ``games/data/README.md`` gives their source and licence.

:func:`collect` plays a game with behaviour policies and returns the trajectory
table of :mod:`games.trajectories` (offline datasets).
"""

from __future__ import annotations

import ast
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import numpy as np
import pandas as pd

from games.normal_form import NormalFormGame
from games.trajectories import COLUMNS
from games.validation import check_positive

__all__ = ["reference_file", "load_soccer", "load_rrps_table", "rrps_game", "collect"]

_REFERENCE_FILES = {"soccer": ("soccer", "soccer.txt"), "rrps": ("rrps", "bot_table_file.txt")}


def reference_file(name: str) -> Traversable:
    """The packaged reference data file ``name`` (``"soccer"`` or ``"rrps"``).

    Parameters
    ----------
    name : str
        Which data set: ``"soccer"`` (Rowland et al. 2019) or ``"rrps"``
        (Lanctot et al. 2023).

    Returns
    -------
    importlib.resources.abc.Traversable
        The file inside the installed :mod:`games` package; open it with
        ``.open()`` or read it with ``.read_text()``.

    Examples
    --------
    >>> reference_file("soccer").name
    'soccer.txt'
    >>> reference_file("soccer").is_file()
    True
    """
    if name not in _REFERENCE_FILES:
        raise ValueError(f"name must be one of {sorted(_REFERENCE_FILES)}; got {name!r}.")
    entry = resources.files("games").joinpath("data", *_REFERENCE_FILES[name])
    if not entry.is_file():
        raise FileNotFoundError(
            f"the packaged data file games/data/{'/'.join(_REFERENCE_FILES[name])} is missing; "
            "reinstall the package (pip install .) so that its package data is included."
        )
    return entry


def _read_text(path, name: str) -> tuple[str, str]:
    """The text of ``path`` (a user's file) or of the packaged file ``name``, and a label for messages."""
    if path is not None:
        return Path(path).read_text(), str(path)
    entry = reference_file(name)
    return entry.read_text(), f"games/data/{'/'.join(_REFERENCE_FILES[name])}"


def load_soccer(path=None) -> NormalFormGame:
    """The soccer meta-game of Rowland et al. (2019): 10 agents, ``P[i, j]`` = P(i beats j).

    Returned as a symmetric constant-sum two-player game whose row payoffs are
    the win probabilities ``P`` and column payoffs ``P.T`` (``P + P.T = 1``).

    Examples
    --------
    >>> g = load_soccer()
    >>> g.shape, bool(np.allclose(g.payoffs[0] + g.payoffs[0].T, 1.0))
    ((10, 10), True)
    """
    text, label = _read_text(path, "soccer")
    p = np.loadtxt(text.splitlines())
    if p.ndim != 2 or p.shape[0] != p.shape[1]:
        raise ValueError(f"{label} must hold a square matrix of win probabilities; got shape {p.shape}.")
    names = tuple(f"agent_{i}" for i in range(p.shape[0]))
    return NormalFormGame.from_bimatrix(p, p.T, strategy_names=(names, names), name="soccer")


def load_rrps_table(path=None) -> pd.DataFrame:
    """The published 43-bot repeated-RPS cross-table (Lanctot et al. 2023) as a long DataFrame.

    Columns ``row_bot``, ``col_bot`` and ``value``: the row bot's mean return per
    match of 1000 throws.

    Examples
    --------
    >>> t = load_rrps_table()
    >>> len(t), t["row_bot"].nunique()
    (1849, 43)
    """
    text, label = _read_text(path, "rrps")
    rows = []
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        try:
            row, col, value = ast.literal_eval(line)
        except (ValueError, SyntaxError, TypeError):
            raise ValueError(f"{label}:{lineno}: expected ('row_bot', 'col_bot', value), got {line!r}") from None
        rows.append((str(row), str(col), float(value)))
    return pd.DataFrame(rows, columns=["row_bot", "col_bot", "value"])


def rrps_game(table: pd.DataFrame | None = None, scale: float = 1.0) -> NormalFormGame:
    """The RRPS cross-table as a symmetric two-player game, payoffs times ``scale``.

    Row payoffs are the table ``M[i, j]`` (bot i's return against bot j) and
    column payoffs ``M.T``. The table is zero-sum only up to sampling noise, as
    ``M[i, j]`` and ``M[j, i]`` were estimated separately. Bots are ordered
    alphabetically. Use ``scale=1/1000`` for returns per throw.

    Examples
    --------
    >>> g = rrps_game(scale=1e-3)
    >>> g.shape
    (43, 43)
    """
    scale = check_positive(scale, "scale")
    table = load_rrps_table() if table is None else table
    bots = sorted(set(table["row_bot"]) | set(table["col_bot"]))
    index = {b: i for i, b in enumerate(bots)}
    m = np.full((len(bots), len(bots)), np.nan)
    m[table["row_bot"].map(index).to_numpy(), table["col_bot"].map(index).to_numpy()] = table["value"].to_numpy()
    if np.isnan(m).any():
        missing = np.argwhere(np.isnan(m))[0]
        raise ValueError(f"the cross-table has no entry for ({bots[missing[0]]}, {bots[missing[1]]}).")
    m = m * scale
    names = tuple(bots)
    return NormalFormGame.from_bimatrix(m, m.T, strategy_names=(names, names), name="rrps")


# ------------------------------------------------------------------ offline trajectories
def _action_probabilities(policy, state, player: int, num_actions: int, legal: list) -> np.ndarray:
    """A behaviour policy's probabilities over ``num_actions`` at ``state`` (dict or array answers)."""
    import pyspiel

    if isinstance(policy, dict):  # a tabular policy: {infostate: probabilities}; unlisted infostates uniform
        answer = policy.get(state.information_state_string(player))
        if answer is None:
            answer = {a: 1.0 for a in legal}
    elif isinstance(policy, pyspiel.Policy):  # the C++ policies take the state alone
        answer = policy.action_probabilities(state)
    elif hasattr(policy, "action_probabilities"):
        answer = policy.action_probabilities(state, player)
    elif callable(policy):
        answer = policy(state, player)
    else:
        raise TypeError(
            "each behaviour policy must have action_probabilities(state, player) or be callable as "
            f"policy(state, player); got {type(policy).__name__}."
        )
    probs = np.zeros(num_actions)
    if isinstance(answer, dict):
        for a, p in answer.items():
            if not 0 <= int(a) < num_actions:
                raise ValueError(
                    f"behaviour policy {type(policy).__name__} gave probability to action {a} at history "
                    f"{state.history_str()!r}; probabilities must be zero off the legal actions {legal}."
                )
            probs[int(a)] = float(p)
    else:
        answer = np.asarray(answer, dtype=np.float64).ravel()
        if answer.shape != (num_actions,):
            raise ValueError(
                f"behaviour policy {type(policy).__name__} returned {answer.shape[0]} probabilities at "
                f"{state.history_str()!r}; expected one per distinct action ({num_actions}) or a dict."
            )
        probs[:] = answer
    mask = np.zeros(num_actions, dtype=bool)
    mask[legal] = True
    if not np.isfinite(probs).all() or (probs < 0).any() or probs[~mask].sum() > 1e-9:
        raise ValueError(
            f"behaviour policy {type(policy).__name__} gave {probs.tolist()} at history {state.history_str()!r} "
            f"(player {player}); probabilities must be finite, non-negative and zero off the legal actions {legal}."
        )
    total = probs.sum()
    if total <= 0:
        raise ValueError(
            f"behaviour policy {type(policy).__name__} gave no probability to any legal action {legal} at "
            f"history {state.history_str()!r} (player {player})."
        )
    return probs / total


def _mixture(behaviour_policies, num_players: int) -> tuple[np.ndarray, list]:
    """``behaviour_policies`` as (weights, per-component per-player policies)."""
    def per_player(entry):
        if isinstance(entry, (list, tuple)):
            if len(entry) != num_players:
                raise ValueError(
                    f"behaviour_policies: a per-player list must have one policy per player ({num_players}); "
                    f"got {len(entry)}."
                )
            return list(entry)
        return [entry] * num_players

    items = behaviour_policies
    is_mixture = (
        isinstance(items, (list, tuple)) and len(items) > 0
        and all(isinstance(e, tuple) and len(e) == 2 and isinstance(e[0], (int, float, np.floating)) for e in items)
    )
    if not is_mixture:
        return np.ones(1), [per_player(items)]
    weights = np.array([float(w) for w, _ in items])
    if not np.isfinite(weights).all() or (weights < 0).any() or weights.sum() <= 0:
        raise ValueError(
            "behaviour_policies: mixture weights must be finite, non-negative and not all zero; "
            f"got {weights.tolist()}."
        )
    return weights / weights.sum(), [per_player(p) for _, p in items]


def _draw(probs, rng: np.random.Generator) -> int:
    """An index drawn with probabilities proportional to ``probs`` (one uniform draw; faster than ``choice``)."""
    probs = probs.tolist() if isinstance(probs, np.ndarray) else list(probs)
    u = rng.random() * sum(probs)
    acc = 0.0
    for i, q in enumerate(probs):
        acc += q
        if u < acc:
            return i
    return max(i for i, q in enumerate(probs) if q > 0)


def collect(game, behaviour_policies, episodes: int, seed: int = 0) -> pd.DataFrame:
    """Play ``episodes`` episodes of ``game`` with behaviour policies; the trajectory table.

    Parameters
    ----------
    game : str, pyspiel.Game or games.SequentialGame
        A turn-based game with explicit chance (``games.load`` strings are accepted).
    behaviour_policies : policy, list of policies, or list of (weight, policies)
        A policy is an object with ``action_probabilities(state, player)`` (OpenSpiel's
        policies), a callable ``policy(state, player)`` (either answers a dict
        ``{action: probability}`` or an array over ``game.num_distinct_actions()``),
        or a tabular policy: a dict ``{infostate: probabilities}`` (such an answer
        per information-state string; unlisted infostates play uniformly). One policy plays every seat;
        a list gives one per player; a mixture ``[(weight, policies), ...]`` draws
        one component per episode with probability proportional to its weight.
    episodes : int
        How many episodes to play (>= 1).
    seed : int
        Seeds the one :class:`numpy.random.Generator` that draws the components,
        chance outcomes and actions, so the same seed gives the same table.

    Returns
    -------
    pandas.DataFrame
        The columns of :data:`games.trajectories.COLUMNS`, plus ``behaviour_prob``
        (the probability the behaviour policy gave the action; NaN on chance rows)
        and ``component`` (the mixture component of the episode). It passes
        :func:`games.trajectories.validate_trajectories`.

    Examples
    --------
    >>> import pyspiel
    >>> game = pyspiel.load_game("kuhn_poker")
    >>> df = collect(game, pyspiel.UniformRandomPolicy(game), episodes=3, seed=0)
    >>> list(df.columns[:9]) == list(COLUMNS)
    True
    >>> df.groupby("episode").size().tolist(), df["player"].head(3).tolist()
    ([4, 4, 4], [-1, -1, 0])
    >>> collect(game, pyspiel.UniformRandomPolicy(game), episodes=3, seed=0).equals(df)
    True
    """
    from games.custom_sequential import SequentialGame
    from games.openspiel_games import load
    from games.validation import check_int, check_seed

    episodes = check_int(episodes, "episodes", minimum=1)
    check_seed(seed, "seed")
    game = game.to_pyspiel() if isinstance(game, SequentialGame) else load(game)
    game_type = game.get_type()
    if game_type.dynamics.name != "SEQUENTIAL":
        raise ValueError(
            f"collect plays turn-based games; {game_type.short_name} is {game_type.dynamics.name}. "
            "Wrap it with pyspiel.convert_to_turn_based(game) first."
        )
    num_players, num_actions = game.num_players(), game.num_distinct_actions()
    weights, components = _mixture(behaviour_policies, num_players)
    rng = np.random.default_rng(seed)
    cols: dict[str, list] = {c: [] for c in (*COLUMNS, "behaviour_prob", "component")}
    zero = " ".join(["0.0"] * num_players)
    for episode in range(episodes):
        k = _draw(weights, rng) if len(weights) > 1 else 0
        policies = components[k]
        state = game.new_initial_state()
        step = 0
        while not state.is_terminal():
            player = state.current_player()
            if player < 0 and player != -1:
                raise ValueError(f"collect: unsupported node type (player id {player}) in {game_type.short_name}.")
            history = " ".join(map(str, state.history()))
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                action = int(outcomes[_draw(probs, rng)])
                legal, infostate, prob = sorted(int(o) for o in outcomes), "", np.nan
            else:
                legal = list(state.legal_actions(player))
                probs = _action_probabilities(policies[player], state, player, num_actions, legal)
                action = _draw(probs, rng)
                infostate, prob = state.information_state_string(player), float(probs[action])
            state.apply_action(action)
            rewards = state.rewards()
            for column, value in (
                ("episode", episode), ("step", step), ("player", int(player)), ("infostate", infostate),
                ("history", history), ("legal_actions", " ".join(map(str, legal))), ("action", action),
                ("reward", " ".join(repr(float(r)) for r in rewards) if any(rewards) else zero),
                ("done", state.is_terminal()), ("behaviour_prob", prob), ("component", k),
            ):
                cols[column].append(value)
            step += 1
    df = pd.DataFrame(cols)
    for column in ("episode", "step", "player", "action", "component"):
        df[column] = df[column].astype(np.int64)
    df["done"] = df["done"].astype(bool)
    return df
