"""The empirical meta-game: payoffs estimated from samples, grown one policy at a time."""

from __future__ import annotations

import os
import tempfile

import numpy as np

from games.normal_form import NormalFormGame

__all__ = ["EmpiricalGame"]


class EmpiricalGame:
    """A normal-form game whose payoffs are estimated from samples.

    For every joint profile and player it keeps the number of samples, their sum
    and their sum of squares, so it gives means, standard errors and confidence
    bounds. Profiles can also be set exactly (``set_exact``), which records them
    with zero variance. The game grows when a player gains strategies; only the
    new profiles then need evaluating (:meth:`missing_profiles`).

    Parameters
    ----------
    shape : sequence of int
        Number of strategies per player.
    player_names, strategy_names : optional
        As in :class:`NormalFormGame`.

    Examples
    --------
    >>> eg = EmpiricalGame((2, 2))
    >>> eg.add_samples((0, 1), [[1.0, -1.0], [0.0, 0.0]])
    >>> eg.mean()[:, 0, 1]
    array([ 0.5, -0.5])
    >>> eg.grow(player=1)
    >>> eg.shape, len(eg.missing_profiles())
    ((2, 3), 5)
    """

    def __init__(self, shape, player_names=None, strategy_names=None):
        shape = tuple(int(k) for k in shape)
        if not shape or any(k < 0 for k in shape):
            raise ValueError(f"shape must list the number of strategies of each player; got {shape}.")
        n = len(shape)
        self.count = np.zeros((n, *shape))
        self.total = np.zeros((n, *shape))
        self.total_sq = np.zeros((n, *shape))
        self.exact = np.zeros(shape, dtype=bool)
        self.player_names = tuple(player_names) if player_names else tuple(f"p{i}" for i in range(n))
        if strategy_names is None:
            strategy_names = [[f"s{i}" for i in range(k)] for k in shape]
        self.strategy_names = [list(s) for s in strategy_names]

    # ------------------------------------------------------------------ shape
    @property
    def num_players(self) -> int:
        return self.count.shape[0]

    @property
    def shape(self) -> tuple:
        return tuple(self.count.shape[1:])

    def __repr__(self) -> str:
        return f"EmpiricalGame(shape={self.shape}, evaluated={int(self.evaluated().sum())}/{int(np.prod(self.shape))})"

    def grow(self, player: int, num_new: int = 1, names=None) -> None:
        """Add ``num_new`` strategies to ``player``; their profiles start unevaluated."""
        if not 0 <= player < self.num_players:
            raise ValueError(f"player must be in [0, {self.num_players}); got {player}.")
        pad = [(0, 0)] * (self.num_players + 1)
        pad[player + 1] = (0, num_new)
        self.count = np.pad(self.count, pad)
        self.total = np.pad(self.total, pad)
        self.total_sq = np.pad(self.total_sq, pad)
        self.exact = np.pad(self.exact, pad[1:])
        k = len(self.strategy_names[player])
        names = list(names) if names is not None else [f"s{k + i}" for i in range(num_new)]
        self.strategy_names[player].extend(names)

    # -------------------------------------------------------------- recording
    def _profile(self, profile) -> tuple:
        profile = tuple(int(a) for a in profile)
        if len(profile) != self.num_players or any(not 0 <= a < k for a, k in zip(profile, self.shape)):
            raise ValueError(f"profile {profile} is not a pure profile of a game with shape {self.shape}.")
        return profile

    def add_samples(self, profile, samples) -> None:
        """Record payoff samples at a profile.

        Parameters
        ----------
        profile : tuple of int
        samples : array_like, shape (num_samples, num_players) or (num_players,)
        """
        profile = self._profile(profile)
        s = np.asarray(samples, dtype=np.float64).reshape(-1, self.num_players)
        if not np.all(np.isfinite(s)):
            raise ValueError("samples must be finite payoffs; found NaN or inf.")
        idx = (slice(None), *profile)
        self.count[idx] += s.shape[0]
        self.total[idx] += s.sum(axis=0)
        self.total_sq[idx] += (s * s).sum(axis=0)

    def add_statistics(self, profile, count, total, total_sq) -> None:
        """Record pre-aggregated per-player sample statistics at a profile."""
        profile = self._profile(profile)
        idx = (slice(None), *profile)
        self.count[idx] += np.broadcast_to(np.asarray(count, dtype=float), (self.num_players,))
        self.total[idx] += np.asarray(total, dtype=float)
        self.total_sq[idx] += np.asarray(total_sq, dtype=float)

    def set_exact(self, profile, values) -> None:
        """Set the exact expected payoffs at a profile (zero variance)."""
        profile = self._profile(profile)
        v = np.asarray(values, dtype=np.float64).reshape((self.num_players,) + (1,) * self.num_players)
        self.set_exact_block([[a] for a in profile], v)

    def set_exact_block(self, index, values) -> None:
        """Set exact payoffs for a block of profiles at once (zero variance).

        Parameters
        ----------
        index : sequence of sequences of int
            One list of strategy indices per player; the block is their product.
        values : array_like, shape (num_players, len(index[0]), ..., len(index[-1]))

        Examples
        --------
        >>> eg = EmpiricalGame((2, 3))
        >>> eg.set_exact_block([[1], [0, 2]], [[[1.0, 2.0]], [[-1.0, -2.0]]])
        >>> eg.missing_profiles()
        [(0, 0), (0, 1), (0, 2), (1, 1)]
        """
        ix = np.ix_(*[np.asarray(i, dtype=np.intp) for i in index])
        v = np.asarray(values, dtype=np.float64)
        if not np.all(np.isfinite(v)):
            raise ValueError("values must be finite payoffs; found NaN or inf.")
        for p in range(self.num_players):
            self.count[p][ix] = 1.0
            self.total[p][ix] = v[p]
            self.total_sq[p][ix] = v[p] ** 2
        self.exact[ix] = True

    # ------------------------------------------------------------- estimates
    def evaluated(self) -> np.ndarray:
        """Boolean mask over profiles: has every player at least one sample (or an exact value)."""
        return np.all(self.count > 0, axis=0)

    def missing_profiles(self) -> list:
        """Pure profiles with no samples yet, in C order."""
        return [tuple(int(a) for a in p) for p in np.argwhere(~self.evaluated())]

    def is_complete(self) -> bool:
        return bool(self.evaluated().all())

    def mean(self) -> np.ndarray:
        """Sample means, shape ``(num_players, k_1, ..., k_n)``; NaN where unevaluated."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.count > 0, self.total / np.maximum(self.count, 1), np.nan)

    def variance(self) -> np.ndarray:
        """Unbiased sample variances (0 for exact profiles; NaN with fewer than 2 samples)."""
        c = self.count
        with np.errstate(invalid="ignore", divide="ignore"):
            m = self.total / np.maximum(c, 1)
            var = (self.total_sq - c * m * m) / np.maximum(c - 1, 1)
        var = np.where(c > 1, np.maximum(var, 0.0), np.nan)
        return np.where(self.exact[None], 0.0, var)

    def standard_error(self) -> np.ndarray:
        """Standard error of each mean (0 for exact profiles)."""
        with np.errstate(invalid="ignore"):
            return np.sqrt(self.variance() / np.maximum(self.count, 1))

    def confidence_interval(self, delta: float = 0.05, payoff_range=None):
        """Per-entry confidence interval ``(lower, upper)`` on the mean payoffs.

        With ``payoff_range=(lo, hi)`` it is Hoeffding's bound at level ``1 - delta``
        per entry; otherwise a normal approximation from the standard errors.
        Exact entries have zero width; unevaluated ones are ``(-inf, inf)``.
        """
        if not 0 < delta < 1:
            raise ValueError(f"delta must be in (0, 1); got {delta}.")
        m = self.mean()
        if payoff_range is not None:
            lo, hi = payoff_range
            with np.errstate(divide="ignore"):
                width = (hi - lo) * np.sqrt(np.log(2.0 / delta) / (2.0 * self.count))
        else:
            from scipy.stats import norm

            width = norm.ppf(1 - delta / 2) * self.standard_error()
        width = np.where(self.exact[None], 0.0, width)
        lower = np.where(self.count > 0, m - width, -np.inf)
        upper = np.where(self.count > 0, m + width, np.inf)
        return lower, upper

    def mean_game(self) -> NormalFormGame:
        """The game of sample means. Every profile must be evaluated."""
        if not self.is_complete():
            missing = self.missing_profiles()
            raise ValueError(
                f"{len(missing)} profiles have no samples yet (first: {missing[0]}); evaluate them "
                "before asking for the mean game."
            )
        return NormalFormGame(self.mean(), player_names=self.player_names, strategy_names=self.strategy_names)

    # -------------------------------------------------------------------- I/O
    def save(self, path) -> None:
        """Write to ``path`` (``.npz``) atomically: a temporary file, then a rename."""
        path = os.fspath(path)
        directory = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(dir=directory, suffix=".npz.tmp")
        os.close(fd)
        with open(tmp, "wb") as fh:
            np.savez(
                fh, count=self.count, total=self.total, total_sq=self.total_sq, exact=self.exact,
                player_names=np.array(self.player_names),
                strategy_names=np.array(["\x1f".join(s) for s in self.strategy_names]),
            )
        os.replace(tmp, path)

    @classmethod
    def load(cls, path) -> "EmpiricalGame":
        """Read a game written by :meth:`save` (no pickle); the shapes its headers declare are checked against the
        memory limit first (:func:`games.memory_limit.check_npz`)."""
        from games.memory_limit import check_npz

        check_npz(path, str(getattr(path, "name", None) or "the meta-game .npz"))
        with np.load(path, allow_pickle=False) as data:
            shape = data["count"].shape[1:]
            strategy_names = [s.split("\x1f") if s else [] for s in data["strategy_names"].tolist()]
            eg = cls(shape, player_names=data["player_names"].tolist(), strategy_names=strategy_names)
            eg.count = data["count"].copy()
            eg.total = data["total"].copy()
            eg.total_sq = data["total_sq"].copy()
            eg.exact = data["exact"].copy()
        return eg

    @classmethod
    def from_game(cls, game: NormalFormGame) -> "EmpiricalGame":
        """An empirical game whose every profile is set exactly from ``game``."""
        eg = cls(game.shape, player_names=game.player_names, strategy_names=game.strategy_names)
        eg.set_exact_block([range(k) for k in game.shape], game.payoffs)
        return eg
