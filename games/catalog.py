"""A catalog of classic normal-form games with their known equilibria, and random games.

Every function returns a :class:`games.NormalFormGame`. Payoffs are given as
``(row player's payoff, column player's payoff)`` in the docstrings.
"""

from __future__ import annotations

import math

import numpy as np

from games.memory_limit import MemoryLimitExceeded, check_memory
from games.normal_form import NormalFormGame

__all__ = [
    "rock_paper_scissors",
    "biased_rock_paper_scissors",
    "matching_pennies",
    "prisoners_dilemma",
    "stag_hunt",
    "chicken",
    "bach_or_stravinsky",
    "shapley_game",
    "three_player_matching_pennies",
    "random_game",
    "disc_game",
    "skill_game",
    "fxp_example",
    "fxp_teams",
    "names",
    "get",
    "from_spec",
]

_TWO = ("row", "col")


def rock_paper_scissors() -> NormalFormGame:
    """Rock-paper-scissors, zero-sum, win +1, loss -1.

    Known equilibria: the unique Nash equilibrium is uniform (1/3, 1/3, 1/3) for
    both players, with value 0. Its alpha-Rank distribution is also uniform.

    Examples
    --------
    >>> rock_paper_scissors().payoffs[0]
    array([[ 0., -1.,  1.],
           [ 1.,  0., -1.],
           [-1.,  1.,  0.]])
    """
    a = np.array([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], dtype=float)
    names = ("rock", "paper", "scissors")
    return NormalFormGame.from_bimatrix(a, -a, player_names=_TWO, strategy_names=(names, names),
                                        name="rock_paper_scissors")


def biased_rock_paper_scissors() -> NormalFormGame:
    """The biased rock-paper-scissors game of the alpha-Rank paper (Omidshafiei et al. 2019).

    Row payoffs ``[[0, -0.5, 1], [0.5, 0, -0.1], [-1, 0.1, 0]]``, zero-sum.
    Known equilibria: the unique Nash equilibrium is (1/16, 10/16, 5/16) for both
    players.

    Examples
    --------
    >>> biased_rock_paper_scissors().is_zero_sum()
    True
    """
    a = np.array([[0, -0.5, 1], [0.5, 0, -0.1], [-1, 0.1, 0]], dtype=float)
    names = ("rock", "paper", "scissors")
    return NormalFormGame.from_bimatrix(a, -a, player_names=_TWO, strategy_names=(names, names),
                                        name="biased_rock_paper_scissors")


def matching_pennies() -> NormalFormGame:
    """Matching pennies: the row player wins (+1) on a match, the column player on a mismatch.

    Known equilibria: the unique Nash equilibrium is (1/2, 1/2) for both, value 0.

    Examples
    --------
    >>> matching_pennies().payoffs[0].tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    a = np.array([[1, -1], [-1, 1]], dtype=float)
    names = ("heads", "tails")
    return NormalFormGame.from_bimatrix(a, -a, player_names=_TWO, strategy_names=(names, names),
                                        name="matching_pennies")


def prisoners_dilemma() -> NormalFormGame:
    """Prisoner's dilemma with (cooperate, defect); payoffs are minus the years in prison.

    ``(C,C)=(-1,-1)``, ``(C,D)=(-3,0)``, ``(D,C)=(0,-3)``, ``(D,D)=(-2,-2)``.
    Known equilibria: defection strictly dominates; the unique Nash, CE and CCE
    is (D, D) with payoffs (-2, -2).

    Examples
    --------
    >>> prisoners_dilemma().payoffs[:, 1, 1].tolist()
    [-2.0, -2.0]
    """
    a = np.array([[-1, -3], [0, -2]], dtype=float)
    names = ("cooperate", "defect")
    return NormalFormGame.from_bimatrix(a, a.T, player_names=_TWO, strategy_names=(names, names),
                                        name="prisoners_dilemma")


def stag_hunt() -> NormalFormGame:
    """The stag hunt (trust dilemma) with row payoffs ``[[4, 0], [3, 2]]``, symmetric.

    Known equilibria: pure (Stag, Stag) with (4, 4), payoff dominant; pure
    (Hare, Hare) with (2, 2), risk dominant; and the mixed equilibrium where
    each plays Stag with probability 2/3, with payoff 8/3 each.

    Examples
    --------
    >>> stag_hunt().payoffs[0].tolist()
    [[4.0, 0.0], [3.0, 2.0]]
    """
    a = np.array([[4, 0], [3, 2]], dtype=float)
    names = ("stag", "hare")
    return NormalFormGame.from_bimatrix(a, a.T, player_names=_TWO, strategy_names=(names, names),
                                        name="stag_hunt")


def chicken() -> NormalFormGame:
    """The game of chicken with (dare, swerve): ``(D,D)=(0,0)``, ``(D,S)=(7,2)``, ``(S,D)=(2,7)``, ``(S,S)=(6,6)``.

    Known equilibria: pure (D, S) and (S, D); the mixed Nash plays Dare with
    probability 1/3, paying 14/3 each. The max-welfare correlated equilibrium
    puts 1/4, 1/4, 1/2 on (D,S), (S,D), (S,S) and pays 5.25 each; the
    maximum-Gini CE pays 72/17 each.

    Examples
    --------
    >>> chicken().payoffs[0].tolist()
    [[0.0, 7.0], [2.0, 6.0]]
    """
    a = np.array([[0, 7], [2, 6]], dtype=float)
    names = ("dare", "swerve")
    return NormalFormGame.from_bimatrix(a, a.T, player_names=_TWO, strategy_names=(names, names),
                                        name="chicken")


def bach_or_stravinsky() -> NormalFormGame:
    """Bach or Stravinsky (battle of the sexes): ``(B,B)=(3,2)``, ``(S,S)=(2,3)``, else (0, 0).

    Known equilibria: pure (B, B) and (S, S); the mixed Nash has the row player
    play B with probability 3/5 and the column player B with 2/5, paying 6/5
    each. The maximum-Gini CE pays 60/43 each.

    Examples
    --------
    >>> bach_or_stravinsky().payoffs[:, 0, 0].tolist()
    [3.0, 2.0]
    """
    a = np.array([[3, 0], [0, 2]], dtype=float)
    b = np.array([[2, 0], [0, 3]], dtype=float)
    names = ("bach", "stravinsky")
    return NormalFormGame.from_bimatrix(a, b, player_names=_TWO, strategy_names=(names, names),
                                        name="bach_or_stravinsky")


def shapley_game() -> NormalFormGame:
    """Shapley's game, a 3x3 game on which fictitious play cycles.

    Row payoffs ``[[0,0,1],[1,0,0],[0,1,0]]``, column payoffs ``[[0,1,0],[0,0,1],[1,0,0]]``.
    Known equilibria: the unique Nash equilibrium is uniform for both players,
    paying 1/3 each.

    Examples
    --------
    >>> shapley_game().shape
    (3, 3)
    """
    a = np.array([[0, 0, 1], [1, 0, 0], [0, 1, 0]], dtype=float)
    b = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=float)
    return NormalFormGame.from_bimatrix(a, b, player_names=_TWO, name="shapley_game")


def three_player_matching_pennies() -> NormalFormGame:
    """Jordan's three-player matching pennies (a cyclic game).

    Player 1 wants to match player 2, player 2 wants to match player 3 and
    player 3 wants to mismatch player 1; each gets +1 when it succeeds and -1
    otherwise. Known equilibria: the unique Nash equilibrium has every player
    mix (1/2, 1/2), paying 0 to each.

    Examples
    --------
    >>> three_player_matching_pennies().payoffs[:, 0, 0, 0].tolist()
    [1.0, 1.0, -1.0]
    """
    a = np.indices((2, 2, 2))
    u0 = np.where(a[0] == a[1], 1.0, -1.0)
    u1 = np.where(a[1] == a[2], 1.0, -1.0)
    u2 = np.where(a[2] != a[0], 1.0, -1.0)
    names = ("heads", "tails")
    return NormalFormGame(np.stack([u0, u1, u2]), strategy_names=(names, names, names),
                          name="three_player_matching_pennies")


def random_game(shape, kind: str = "general", rng=None, low: float = -1.0, high: float = 1.0) -> NormalFormGame:
    """A random game with payoffs drawn uniformly from ``[low, high)``.

    Parameters
    ----------
    shape : sequence of int
        Number of strategies per player, e.g. ``(3, 3)`` or ``(2, 2, 2)``.
    kind : {"general", "zero_sum", "symmetric", "skew_symmetric"}
        ``"zero_sum"`` makes payoffs sum to zero at every profile; ``"symmetric"``
        makes the game invariant to permuting players (all ``k_i`` must be equal);
        ``"skew_symmetric"``: a two-player symmetric zero-sum game, row payoff
        ``A = (U - U.T) / 2`` for ``U`` uniform on ``[low, high)`` (column payoff ``-A = A.T``).
    rng : numpy.random.Generator or int, optional
        Source of randomness (a seed is accepted).

    Examples
    --------
    >>> g = random_game((3, 3), kind="zero_sum", rng=0)
    >>> g.is_zero_sum()
    True
    >>> random_game((2, 2, 2), kind="symmetric", rng=1).is_symmetric()
    True
    >>> g = random_game((4, 4), kind="skew_symmetric", rng=2)
    >>> g.is_symmetric(), g.is_zero_sum()
    (True, True)
    """
    rng = np.random.default_rng(rng)
    shape = tuple(int(k) for k in shape)
    if len(shape) < 1 or any(k < 1 for k in shape):
        raise ValueError(f"shape must list a positive number of strategies per player; got {shape}.")
    n = len(shape)
    # float64 payoffs (n, *shape), and for a symmetric game two tables of one player more while they are built
    check_memory(8 * (n + (2 if kind == "symmetric" else 0)) * math.prod(shape), f"random_game(shape={shape})",
                 "Ask for fewer strategies.")
    if kind == "general":
        payoffs = rng.uniform(low, high, size=(n, *shape))
    elif kind == "zero_sum":
        if n < 2:
            raise ValueError("a zero-sum game needs at least two players; pass a longer shape.")
        payoffs = rng.uniform(low, high, size=(n, *shape))
        payoffs = payoffs - payoffs.mean(axis=0, keepdims=True)
    elif kind == "symmetric":
        if len(set(shape)) != 1:
            raise ValueError(f"a symmetric game needs equal strategy counts; got shape {shape}.")
        import itertools

        base = rng.uniform(low, high, size=shape)  # player 0's payoff u_0(a_0, a_1, ..., a_{n-1})
        # Player 0's payoff only depends on its own action and the multiset of the others'.
        u0 = np.zeros(shape)
        others = list(itertools.permutations(range(1, n)))
        for perm in others:
            u0 += np.transpose(base, (0, *perm))
        u0 /= len(others)
        payoffs = np.empty((n, *shape))
        for p in range(n):
            # u_p(a) = u_0(a_p, a_{-p}) : move axis p to the front
            order = [p] + [q for q in range(n) if q != p]
            payoffs[p] = np.transpose(u0, np.argsort(order))
    elif kind == "skew_symmetric":
        if n != 2 or shape[0] != shape[1]:
            raise ValueError(f"a skew-symmetric game has two players with equal strategy counts; got shape {shape}.")
        base = rng.uniform(low, high, size=shape)
        row = (base - base.T) / 2.0
        payoffs = np.stack([row, -row])
    else:
        raise ValueError(f"kind must be 'general', 'zero_sum', 'symmetric' or 'skew_symmetric'; got {kind!r}.")
    return NormalFormGame(payoffs, name=f"random_{kind}")


def _skew_game(row: np.ndarray, name: str) -> NormalFormGame:
    """The two-player symmetric zero-sum game of a skew-symmetric row payoff (column payoff ``-row = row.T``)."""
    return NormalFormGame(np.stack([row, -row]), name=name)


def disc_game(num_strategies: int = 50, rng=None) -> NormalFormGame:
    """The disc game of Balduzzi et al. (2019): strategies are points drawn uniformly in the unit disc, and
    ``u_row(v, w) = v_1 w_2 - v_2 w_1`` (a purely cyclic, symmetric zero-sum game; its value is 0).

    Examples
    --------
    >>> g = disc_game(6, rng=0)
    >>> g.shape, g.is_symmetric(), g.is_zero_sum(), bool(abs(g.payoffs).max() <= 1)
    ((6, 6), True, True, True)
    """
    rng = np.random.default_rng(rng)
    k = int(num_strategies)
    if k < 1:
        raise ValueError(f"num_strategies must be positive; got {num_strategies!r}.")
    radius, angle = np.sqrt(rng.uniform(size=k)), rng.uniform(0.0, 2 * np.pi, size=k)
    points = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
    row = np.outer(points[:, 0], points[:, 1]) - np.outer(points[:, 1], points[:, 0])
    return _skew_game(row, "disc_game")


def skill_game(num_strategies: int = 50, noise: float = 0.1, rng=None) -> NormalFormGame:
    """A random game of skill (Balduzzi et al. 2019): strategy ``i`` has a skill ``s_i ~ N(0, 1)`` and
    ``u_row(i, j) = s_i - s_j + noise * e_ij`` with ``e`` skew-symmetric, ``e_ij = (g_ij - g_ji) / 2``,
    ``g_ij ~ N(0, 1)``: mostly transitive, with small cycles (a symmetric zero-sum game).

    Examples
    --------
    >>> g = skill_game(5, noise=0.0, rng=0)
    >>> best = g.payoffs[0].sum(axis=1).argmax()   # without noise the most skilled strategy beats every other
    >>> g.is_symmetric(), bool((g.payoffs[0][best] >= 0).all())
    (True, True)
    """
    rng = np.random.default_rng(rng)
    k = int(num_strategies)
    if k < 1:
        raise ValueError(f"num_strategies must be positive; got {num_strategies!r}.")
    skill = rng.normal(size=k)
    g = rng.normal(size=(k, k))
    row = skill[:, None] - skill[None, :] + float(noise) * (g - g.T) / 2.0
    return _skew_game(row, "skill_game")


def fxp_example(team_size: int = 3, C: float = 0.1, eps: float = 0.01) -> NormalFormGame:
    """The two-team game of the Fictitious Cross-Play paper (Xu et al. 2023), with a local equilibrium at all-1.

    Two teams of ``N = team_size`` players, each choosing 0 or 1; players ``0 .. N-1`` form team A and
    ``N .. 2N-1`` team B (:func:`fxp_teams`). With ``a`` and ``b`` the numbers of 1s in team A and team B,
    every player of team A gets

    ``u = a - b + [a=0](1+eps) b - [b=0](1+eps) a + [a=0][b=N](C - N eps) - [b=0][a=N](C - N eps)``

    and every player of team B gets ``-u`` (a two-team zero-sum game). Known equilibria: all-0 against all-0
    is a team-level Nash equilibrium (value 0: against all-0, ``u = -eps a - [a=N](C - N eps) <= 0``). The
    all-1 profile is only a local one: a single player who leaves it loses 1, but team A switching to all-0
    together gains ``C``.

    Parameters
    ----------
    team_size : int
        ``N``, players per team (at least 1).
    C : float
        The gain of the all-0 team against the all-1 team.
    eps : float
        The small bonus ``eps`` of the formula.

    Examples
    --------
    >>> g = fxp_example()
    >>> g.num_players, g.shape
    (6, (2, 2, 2, 2, 2, 2))
    >>> float(g.payoffs[0][1, 1, 1, 1, 1, 1])          # all-1: u = a - b = 0
    0.0
    >>> round(float(g.payoffs[0][0, 0, 0, 1, 1, 1]), 12)   # A all-0 against B all-1: -3 + 1.01 * 3 + 0.1 - 0.03
    0.1
    >>> round(float(g.payoffs[0][0, 1, 1, 1, 1, 1]), 12)   # one player of A leaves all-1: a = 2, b = 3
    -1.0
    >>> round(float(g.payoffs[3][0, 0, 1, 0, 0, 0]), 12)   # a = 1 against B all-0: u = 1 - 1.01; B gets 0.01
    0.01
    >>> bool((g.payoffs[:3] == -g.payoffs[3:]).all())
    True
    """
    from games.validation import check_int, check_real

    check_int(team_size, "team_size", minimum=1)
    check_real(C, "C")
    check_real(eps, "eps")
    n = int(team_size)
    grid = np.indices((2,) * (2 * n))
    a, b = grid[:n].sum(axis=0), grid[n:].sum(axis=0)
    a0, b0, aN, bN = (a == 0), (b == 0), (a == n), (b == n)
    u = (a - b + a0 * (1 + eps) * b - b0 * (1 + eps) * a + (a0 & bN) * (C - n * eps)
         - (b0 & aN) * (C - n * eps)).astype(np.float64)
    payoffs = np.stack([u] * n + [-u] * n)
    players = tuple(f"A{i}" for i in range(n)) + tuple(f"B{i}" for i in range(n))
    return NormalFormGame(payoffs, player_names=players, strategy_names=(("0", "1"),) * (2 * n),
                          name=f"fxp_example(team_size={n}, C={C}, eps={eps})")


def fxp_teams(team_size: int = 3) -> list:
    """The teams of :func:`fxp_example`: ``[[0, ..., N-1], [N, ..., 2N-1]]``.

    Examples
    --------
    >>> fxp_teams(3)
    [[0, 1, 2], [3, 4, 5]]
    """
    return [list(range(team_size)), list(range(team_size, 2 * team_size))]


_CATALOG = {
    "rock_paper_scissors": rock_paper_scissors,
    "biased_rock_paper_scissors": biased_rock_paper_scissors,
    "matching_pennies": matching_pennies,
    "prisoners_dilemma": prisoners_dilemma,
    "stag_hunt": stag_hunt,
    "chicken": chicken,
    "bach_or_stravinsky": bach_or_stravinsky,
    "shapley_game": shapley_game,
    "three_player_matching_pennies": three_player_matching_pennies,
}


def names() -> list:
    """Names of the catalog's fixed games.

    Examples
    --------
    >>> "chicken" in names()
    True
    """
    return sorted(_CATALOG)


def get(name: str) -> NormalFormGame:
    """A catalog game by name, with a suggestion when the name is unknown.

    Examples
    --------
    >>> get("stag_hunt").shape
    (2, 2)
    """
    if name not in _CATALOG:
        import difflib

        close = difflib.get_close_matches(name, _CATALOG, n=3, cutoff=0.4)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise ValueError(f"unknown catalog game {name!r}.{hint} Known games: {', '.join(names())}.")
    return _CATALOG[name]()


#: The parameterised games :func:`from_spec` builds besides the fixed ones of :func:`names`.
_PARAMETERISED = {"fxp_example": fxp_example, "random_game": random_game, "disc_game": disc_game,
                  "skill_game": skill_game}


def from_spec(spec: str) -> NormalFormGame:
    """A catalog game from a string: a fixed game's name, or ``name(key=value, ...)`` for a parameterised one
    (``fxp_example``, ``random_game``), the values Python literals. A config names a catalog game as
    ``catalog:<spec>``.

    Examples
    --------
    >>> from_spec("chicken").name
    'chicken'
    >>> from_spec("fxp_example(team_size=2, C=0.2)").shape
    (2, 2, 2, 2)
    >>> from_spec("fxp_example(team=2)")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: game: catalog game 'fxp_example(team=2)' ...
    """
    import ast

    if not isinstance(spec, str):
        raise TypeError(f"spec must be a string such as 'fxp_example(team_size=3)'; got {type(spec).__name__}.")
    text = spec.strip()
    name, _, rest = text.partition("(")
    name = name.strip()
    if not rest:
        return get(name)
    if name not in _PARAMETERISED or not rest.endswith(")"):
        raise ValueError(f"game: catalog game {spec!r} is not one of the parameterised games "
                         f"{sorted(_PARAMETERISED)} written as name(key=value, ...).")
    try:
        call = ast.parse(f"f({rest}", mode="eval").body
        if call.args:
            raise ValueError("give the parameters by name")
        options = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
        return _PARAMETERISED[name](**options)
    except MemoryLimitExceeded as exc:   # (well written, too large: the size and the limit say it all)
        raise MemoryLimitExceeded(f"game: {exc}") from None
    except (SyntaxError, ValueError, TypeError) as exc:
        raise ValueError(f"game: catalog game {spec!r} cannot be built: {exc}; write it as name(key=value, ...) "
                         "with the function's parameters (see games.catalog).") from None
