"""The normal-form game: the common currency of the toolkit.

A :class:`NormalFormGame` holds a float64 payoff tensor of shape
``(num_players, k_1, ..., k_n)`` where ``payoffs[p][a_1, ..., a_n]`` is player
``p``'s payoff at the pure profile ``(a_1, ..., a_n)``, together with player and
strategy names. It is immutable and validated on construction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

__all__ = ["NormalFormGame", "as_game"]


def _as_payoff_array(payoffs, argname: str = "payoffs") -> np.ndarray:
    """Convert ``payoffs`` to a float64 array, with a clear error for ragged, complex or textual input.

    Payoffs are real numbers: a complex array is refused (its imaginary part would be dropped silently), and
    so is text, numeric strings such as ``"1"`` included (parse them where they are read, not here).
    """
    ragged = (f"{argname} is ragged (rows of different lengths) or not an array of numbers. Give every player's "
              "payoff table the same shape (k_1, ..., k_n).")
    complex_ = (f"{argname} is complex; payoffs must be real numbers (if every imaginary part is zero, pass "
                "payoffs.real).")
    text = (f"{argname} holds text; payoffs must be numbers, and numeric strings such as '1' are not accepted: "
            "convert them where they are read (e.g. float(value)).")
    try:
        arr = payoffs if isinstance(payoffs, np.ndarray) else np.asarray(payoffs)
    except (ValueError, TypeError):
        raise ValueError(ragged) from None
    if arr.dtype.kind == "O":   # Python objects: huge ints, or a ragged array made with dtype=object
        items = arr.ravel().tolist()
        if any(isinstance(x, (str, bytes)) for x in items):
            raise TypeError(text)
        if any(isinstance(x, (complex, np.complexfloating)) for x in items):
            raise TypeError(complex_)
        try:
            return arr.astype(np.float64)
        except (ValueError, TypeError):
            raise ValueError(ragged) from None
    if arr.dtype.kind == "c":
        raise TypeError(complex_)
    if arr.dtype.kind in "USV":
        raise TypeError(text)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{argname} must hold numbers, got dtype {arr.dtype}.")
    return np.asarray(arr, dtype=np.float64)


@dataclass(frozen=True, eq=False)
class NormalFormGame:
    """An n-player normal-form game.

    Parameters
    ----------
    payoffs : array_like, shape (num_players, k_1, ..., k_n)
        ``payoffs[p][a]`` is player ``p``'s payoff at pure profile ``a``.
    player_names : sequence of str, optional
        Defaults to ``("p0", "p1", ...)``.
    strategy_names : sequence of sequences of str, optional
        One sequence per player; defaults to ``("s0", "s1", ...)``.
    name : str, optional
        A label for the game.

    Raises
    ------
    ValueError
        If the payoffs are ragged, contain NaN or inf, or their shape does not
        match the number of players.

    Examples
    --------
    >>> import numpy as np
    >>> from games import NormalFormGame
    >>> g = NormalFormGame.from_bimatrix([[1, -1], [-1, 1]])
    >>> g.num_players, g.shape
    (2, (2, 2))
    >>> g.expected_payoffs_marginals([np.array([0.5, 0.5]), np.array([0.5, 0.5])])
    array([0., 0.])
    """

    payoffs: np.ndarray
    player_names: tuple = field(default=None)
    strategy_names: tuple = field(default=None)
    name: str = ""

    def __post_init__(self):
        arr = _as_payoff_array(self.payoffs)
        if arr.ndim < 2:
            raise ValueError(
                f"payoffs must have shape (num_players, k_1, ..., k_n) with at least one player; "
                f"got shape {arr.shape}. For a single matrix use NormalFormGame.from_bimatrix."
            )
        n = arr.shape[0]
        if arr.ndim != n + 1:
            raise ValueError(
                f"payoffs has shape {arr.shape}: its first axis says {n} players, so it needs "
                f"{n + 1} axes (num_players, k_1, ..., k_{n}) but has {arr.ndim}. "
                "Stack one payoff table per player along axis 0."
            )
        if any(k < 1 for k in arr.shape[1:]):
            raise ValueError(f"payoffs has shape {arr.shape}: every player needs at least one strategy.")
        if not np.all(np.isfinite(arr)):
            bad = np.argwhere(~np.isfinite(arr))[0]
            raise ValueError(
                f"payoffs must be finite; found {arr[tuple(bad)]} at index {tuple(int(i) for i in bad)}. "
                "Replace NaN/inf entries (e.g. with np.nan_to_num) before building the game."
            )
        arr = arr.copy()
        arr.setflags(write=False)
        object.__setattr__(self, "payoffs", arr)

        players = self.player_names
        if players is None:
            players = tuple(f"p{i}" for i in range(n))
        players = tuple(str(x) for x in players)
        if len(players) != n:
            raise ValueError(f"player_names has {len(players)} names but the game has {n} players.")
        if len(set(players)) != n:
            twice = sorted({x for x in players if players.count(x) > 1})
            raise ValueError(f"player_names names {twice} more than once; give each player its own name.")
        object.__setattr__(self, "player_names", players)

        strategies = self.strategy_names
        if strategies is None:
            strategies = tuple(tuple(f"s{i}" for i in range(k)) for k in arr.shape[1:])
        else:
            if isinstance(strategies, str) or len(strategies) != n:
                raise ValueError(
                    f"strategy_names must hold one list of names per player ({n}); got {strategies!r}."
                )
            strategies = tuple(tuple(str(s) for s in names) for names in strategies)
            for p, (names, k) in enumerate(zip(strategies, arr.shape[1:])):
                if len(names) != k:
                    raise ValueError(
                        f"strategy_names[{p}] has {len(names)} names but player {p} has {k} strategies."
                    )
        object.__setattr__(self, "strategy_names", strategies)
        if not isinstance(self.name, str):
            raise TypeError(f"name must be a str (the game's title); got {self.name!r} ({type(self.name).__name__}).")

    # ------------------------------------------------------------------ shape
    @property
    def num_players(self) -> int:
        """Number of players."""
        return self.payoffs.shape[0]

    @property
    def shape(self) -> tuple:
        """Number of strategies of each player, ``(k_1, ..., k_n)``."""
        return tuple(self.payoffs.shape[1:])

    @property
    def num_profiles(self) -> int:
        """Number of pure joint profiles, ``prod(k_i)``."""
        return int(np.prod(self.shape))

    def __repr__(self) -> str:
        label = f"{self.name!r}, " if self.name else ""
        return f"NormalFormGame({label}players={self.num_players}, shape={self.shape})"

    def __eq__(self, other) -> bool:
        if not isinstance(other, NormalFormGame):
            return NotImplemented
        return (
            self.payoffs.shape == other.payoffs.shape
            and np.array_equal(self.payoffs, other.payoffs)
            and self.player_names == other.player_names
            and self.strategy_names == other.strategy_names
        )

    __hash__ = None

    # ----------------------------------------------------------- constructors
    @classmethod
    def from_array(cls, payoffs, **names) -> "NormalFormGame":
        """Build from a payoff array of shape ``(num_players, k_1, ..., k_n)``.

        Examples
        --------
        >>> NormalFormGame.from_array(np.zeros((3, 2, 2, 2))).shape
        (2, 2, 2)
        """
        return cls(payoffs, **names)

    @classmethod
    def from_bimatrix(cls, row, col=None, **names) -> "NormalFormGame":
        """Build a two-player game from the row and column players' matrices.

        Parameters
        ----------
        row : array_like, shape (k_1, k_2)
            Row player's payoffs.
        col : array_like, shape (k_1, k_2), optional
            Column player's payoffs; defaults to ``-row`` (zero-sum).

        Examples
        --------
        >>> g = NormalFormGame.from_bimatrix([[3, 0], [5, 1]], [[3, 5], [0, 1]])
        >>> g.payoffs[1, 0, 1]
        5.0
        """
        a = _as_payoff_array(row, "row")
        if a.ndim != 2:
            raise ValueError(f"row must be a matrix (2-D); got shape {a.shape}.")
        b = -a if col is None else _as_payoff_array(col, "col")
        if b.shape != a.shape:
            raise ValueError(
                f"col has shape {b.shape} but row has shape {a.shape}; both players' matrices "
                "must have the same shape (rows = player 0's strategies)."
            )
        return cls(np.stack([a, b]), **names)

    @classmethod
    def from_pyspiel(cls, game) -> "NormalFormGame":
        """Build from a ``pyspiel.MatrixGame`` or ``pyspiel.TensorGame`` (or a loadable name).

        Examples
        --------
        >>> import pyspiel
        >>> NormalFormGame.from_pyspiel(pyspiel.load_game("matrix_rps")).shape
        (3, 3)
        """
        import pyspiel

        if isinstance(game, str):
            game = pyspiel.load_game(game)
        if isinstance(game, pyspiel.MatrixGame):
            payoffs = np.stack([np.array(game.row_utilities()), np.array(game.col_utilities())])
            strategies = (
                [game.row_action_name(i) for i in range(game.num_rows())],
                [game.col_action_name(j) for j in range(game.num_cols())],
            )
        elif isinstance(game, pyspiel.TensorGame):
            payoffs = np.stack([np.array(game.player_utilities(p)) for p in range(game.num_players())])
            strategies = [
                [game.action_name(p, a) for a in range(k)] for p, k in enumerate(game.shape())
            ]
        else:
            raise TypeError(
                f"game must be a pyspiel.MatrixGame or pyspiel.TensorGame, got {type(game).__name__}. "
                "Sequential games are played through games.load and psro instead."
            )
        return cls(payoffs, strategy_names=strategies, name=game.get_type().short_name)

    def to_pyspiel(self):
        """Convert to a ``pyspiel.MatrixGame`` (two players) or ``pyspiel.TensorGame``.

        Examples
        --------
        >>> from games import catalog
        >>> catalog.rock_paper_scissors().to_pyspiel().num_rows()
        3
        """
        import pyspiel

        short = self.name.replace(" ", "_").lower() or "nfg"
        if self.num_players == 2:
            return pyspiel.create_matrix_game(
                short, self.name or short, list(self.strategy_names[0]), list(self.strategy_names[1]),
                self.payoffs[0].tolist(), self.payoffs[1].tolist(),
            )
        return pyspiel.create_tensor_game(
            short, self.name or short, [list(s) for s in self.strategy_names],
            [self.payoffs[p].ravel().tolist() for p in range(self.num_players)],  # C order
        )

    # ------------------------------------------------------------- properties
    def is_zero_sum(self, atol: float = 1e-9) -> bool:
        """Whether payoffs sum to zero at every profile, relative to the payoffs' magnitude.

        Examples
        --------
        >>> NormalFormGame.from_bimatrix([[1e-300, 0], [0, 2e-300]], [[0, 0], [0, 0]]).is_zero_sum()
        False
        """
        scale = float(np.abs(self.payoffs).max())
        return bool(np.all(np.abs(self.payoffs.sum(axis=0)) <= atol * scale))

    def is_constant_sum(self, atol: float = 1e-9) -> bool:
        """Whether payoffs sum to the same constant at every profile.

        The tolerance is relative to the sum of the players' payoff ranges (plus
        the round-off of the sum), so neither a common offset nor a tiny or
        huge scale changes the answer.

        Examples
        --------
        >>> a, b = np.array([[1.0, 0], [0, 2]]), np.array([[2.0, 0], [0, 1]])
        >>> NormalFormGame.from_bimatrix(a + 1e12, b + 1e12).is_constant_sum()
        False
        >>> NormalFormGame.from_bimatrix(a * 1e-300, -a * 1e-300 + 5e-300).is_constant_sum()
        True
        """
        total = self.payoffs.sum(axis=0)
        ranges = np.ptp(self.payoffs.reshape(self.num_players, -1), axis=1)
        rounding = 4 * self.num_players * float(np.spacing(np.abs(self.payoffs).max()))  # of the sum itself
        return bool(np.ptp(total) <= atol * float(ranges.sum()) + rounding)

    def is_symmetric(self, atol: float = 1e-9) -> bool:
        """Whether the game is symmetric (two players: ``B == A.T``; n players: invariant to permutation)."""
        n = self.num_players
        if len(set(self.shape)) != 1:
            return False
        import itertools

        for perm in itertools.permutations(range(n)):
            # u_{perm[p]}(a_perm) == u_p(a) for all p, a
            permuted = np.transpose(self.payoffs[list(perm)], (0, *[1 + q for q in perm]))
            if not np.allclose(permuted, self.payoffs, atol=atol, rtol=0):
                return False
        return True

    def with_payoffs(self, payoffs) -> "NormalFormGame":
        """A copy with new payoffs of the same shape and the same names."""
        return NormalFormGame(payoffs, self.player_names, self.strategy_names, self.name)

    # ----------------------------------------------------------- evaluations
    def check_joint(self, joint, argname: str = "joint", atol: float = 1e-6) -> np.ndarray:
        """Validate and return a joint distribution over pure profiles."""
        return _check_distribution(joint, self.shape, argname, atol)

    def check_marginals(self, marginals, argname: str = "marginals", atol: float = 1e-6) -> list:
        """Validate and return one mixed strategy per player."""
        if isinstance(marginals, np.ndarray) and marginals.ndim == 1 and self.num_players == 1:
            marginals = [marginals]
        if len(marginals) != self.num_players:
            raise ValueError(
                f"{argname} must hold one mixed strategy per player ({self.num_players}); got {len(marginals)}."
            )
        return [
            _check_distribution(m, (k,), f"{argname}[{p}]", atol)
            for p, (m, k) in enumerate(zip(marginals, self.shape))
        ]

    def expected_payoffs(self, joint) -> np.ndarray:
        """Each player's expected payoff under a joint distribution over pure profiles.

        Examples
        --------
        >>> from games import catalog
        >>> g = catalog.prisoners_dilemma()
        >>> j = np.zeros(g.shape); j[0, 0] = 1.0
        >>> g.expected_payoffs(j)
        array([-1., -1.])
        """
        joint = self.check_joint(joint)
        return self.payoffs.reshape(self.num_players, -1) @ joint.reshape(-1)

    def expected_payoffs_marginals(self, marginals) -> np.ndarray:
        """Each player's expected payoff when players mix independently."""
        marginals = self.check_marginals(marginals)
        return np.array([_contract_all(self.payoffs[p], marginals) for p in range(self.num_players)])

    def deviation_payoffs(self, marginals) -> list:
        """Payoff of every pure strategy of each player against the others' mixtures.

        Returns
        -------
        list of ndarray
            ``out[p][a]`` is player ``p``'s expected payoff for playing ``a`` when
            every other player ``q`` plays ``marginals[q]``.

        Examples
        --------
        >>> from games import catalog
        >>> g = catalog.rock_paper_scissors()
        >>> g.deviation_payoffs([np.array([1.0, 0, 0]), np.ones(3) / 3])[0]
        array([0., 0., 0.])
        """
        marginals = self.check_marginals(marginals)
        return [_contract_except(self.payoffs[p], marginals, p) for p in range(self.num_players)]

    def joint_from_marginals(self, marginals) -> np.ndarray:
        """The product distribution of independent mixed strategies."""
        marginals = self.check_marginals(marginals)
        return product_distribution(marginals)


def product_distribution(marginals: Sequence[np.ndarray]) -> np.ndarray:
    """The outer product of per-player distributions, shape ``(k_1, ..., k_n)``."""
    out = np.asarray(marginals[0], dtype=np.float64)
    for m in marginals[1:]:
        out = np.multiply.outer(out, np.asarray(m, dtype=np.float64))
    return out


def _contract_all(table: np.ndarray, marginals: Sequence[np.ndarray]) -> float:
    out = table
    for m in reversed(marginals):
        out = out @ m
    return float(out)


def _contract_except(table: np.ndarray, marginals: Sequence[np.ndarray], player: int) -> np.ndarray:
    """Contract every axis but ``player`` of ``table`` with the matching marginal."""
    out = table
    n = table.ndim
    for q in range(n - 1, -1, -1):  # contract from the last axis so indices stay valid
        if q == player:
            continue
        out = np.tensordot(out, marginals[q], axes=([q], [0]))
    return out


def _check_distribution(x, shape, argname: str, atol: float) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (ValueError, TypeError):
        raise ValueError(f"{argname} must be an array of probabilities with shape {shape}.") from None
    if arr.shape != tuple(shape):
        if arr.size == int(np.prod(shape)):
            arr = arr.reshape(shape)
        else:
            raise ValueError(f"{argname} has shape {arr.shape} but the game needs {tuple(shape)}.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{argname} contains NaN or inf; it must be a probability distribution.")
    if arr.min() < -atol:
        raise ValueError(f"{argname} has a negative entry ({arr.min():.3g}); probabilities must be >= 0.")
    total = arr.sum()
    if abs(total - 1.0) > atol:
        raise ValueError(
            f"{argname} sums to {total:.6g}, not 1. Normalise it (x / x.sum()) before passing it in."
        )
    return arr


def as_game(game, argname: str = "game") -> NormalFormGame:
    """Coerce ``game`` (a NormalFormGame or a payoff array) into a :class:`NormalFormGame`.

    Examples
    --------
    >>> as_game(np.zeros((2, 3, 3))).shape
    (3, 3)
    """
    if isinstance(game, NormalFormGame):
        return game
    if isinstance(game, (np.ndarray, list, tuple)):
        return NormalFormGame(game)
    mean_game = getattr(game, "mean_game", None)
    if callable(mean_game):
        return mean_game()
    raise TypeError(
        f"{argname} must be a games.NormalFormGame or a payoff array of shape "
        f"(num_players, k_1, ..., k_n); got {type(game).__name__}."
    )
