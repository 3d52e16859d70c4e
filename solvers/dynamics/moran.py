"""The Moran process: a mutant strategy invading a finite population of residents.

A population of ``N`` individuals plays a symmetric game; ``i`` of them play
the mutant strategy ``A`` and ``N - i`` the resident ``B``. With payoffs
``a = u(A, A)``, ``b = u(A, B)``, ``c = u(B, A)``, ``d = u(B, B)`` and no
self-play, the expected payoffs are (Nowak, Sasaki, Taylor & Fudenberg 2004)::

    F_i = (a (i - 1) + b (N - i)) / (N - 1),   G_i = (c i + d (N - i - 1)) / (N - 1),

and fitness is ``1 - w + w F`` (``"linear"``, selection intensity ``w``) or
``exp(w F)`` (``"exponential"``, as alpha-Rank uses). Each step one individual
is chosen to reproduce with probability proportional to fitness and its
offspring replaces one chosen uniformly at random. Starting from ``i``
mutants, the mutants fix with probability (the closed form)::

    rho_i = (1 + sum_{k=1}^{i-1} prod_{j=1}^{k} g_j / f_j) / (1 + sum_{k=1}^{N-1} prod_{j=1}^{k} g_j / f_j).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from games.normal_form import NormalFormGame
from games.validation import check_int
from solvers.dynamics.common import check_nonnegative_float, check_positive_int

__all__ = ["MoranFixation", "fixation_probability", "moran_fixation", "moran_process"]

FITNESS = ("linear", "exponential")


def _pair(game, mutant: int, resident: int) -> tuple:
    """``(a, b, c, d)`` of the mutant against the resident, from a symmetric game or a square matrix."""
    if isinstance(game, NormalFormGame):
        if game.num_players != 2 or not game.is_symmetric():
            raise ValueError("game must be a symmetric two-player game (payoffs[1] == payoffs[0].T) or a square "
                             "payoff matrix.")
        matrix = np.asarray(game.payoffs[0])
    else:
        try:
            matrix = np.asarray(game, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"game must be a square payoff matrix or a NormalFormGame; got {type(game).__name__}.") \
                from None
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
            raise ValueError(f"game must be a square payoff matrix; got shape {matrix.shape}.")
    if not np.all(np.isfinite(matrix)):
        raise ValueError("game contains NaN or inf payoffs.")
    k = matrix.shape[0]
    for name, s in (("mutant", mutant), ("resident", resident)):
        check_int(s, f"{name} (a strategy index)", minimum=0, maximum=k - 1)
    if mutant == resident:
        raise ValueError(f"mutant and resident must be different strategies; both are {mutant}.")
    return (matrix[mutant, mutant], matrix[mutant, resident], matrix[resident, mutant], matrix[resident, resident])


def _fitness(pair: tuple, n: int, w: float, fitness: str) -> tuple:
    """Mutant and resident fitness ``(f_i, g_i)`` for ``i = 0..N`` mutants."""
    a, b, c, d = pair
    i = np.arange(n + 1, dtype=np.float64)
    big_f = (a * (i - 1) + b * (n - i)) / (n - 1)
    big_g = (c * i + d * (n - i - 1)) / (n - 1)
    if fitness == "linear":
        f, g = 1 - w + w * big_f, 1 - w + w * big_g
        inner = slice(1, n)
        if min(f[inner].min(), g[inner].min()) <= 0:
            raise ValueError(f"selection_intensity={w} makes a fitness 1 - w + w * payoff non-positive; lower it "
                             "or use fitness='exponential'.")
        return f, g
    if fitness == "exponential":
        return np.exp(w * big_f), np.exp(w * big_g)
    raise ValueError(f"fitness must be one of {list(FITNESS)}; got {fitness!r}.")


def _checked(game, population_size, selection_intensity, fitness, mutant, resident):
    n = check_positive_int(population_size, "population_size")
    if n < 2:
        raise ValueError(f"population_size must be at least 2; got {n}.")
    w = check_nonnegative_float(selection_intensity, "selection_intensity")
    return n, _fitness(_pair(game, mutant, resident), n, w, fitness)


def fixation_probability(game, population_size: int, selection_intensity: float = 1.0, *, mutant: int = 0,
                         resident: int = 1, initial_mutants: int = 1, fitness: str = "linear") -> float:
    """The probability that ``initial_mutants`` mutants take over the population (closed form).

    Parameters
    ----------
    game : array_like (k, k) or NormalFormGame
        A symmetric game: ``game[i, j]`` is the payoff of ``i`` against ``j``.
    population_size : int
        ``N >= 2``.
    selection_intensity : float
        ``w >= 0``; 0 is neutral drift (``rho = i / N``).
    mutant, resident : int
        The two strategies.
    initial_mutants : int
        ``1 <= i <= N - 1``.
    fitness : {"linear", "exponential"}

    Examples
    --------
    >>> fixation_probability([[1, 1], [1, 1]], 10)   # neutral: 1 / N
    0.1
    >>> r = 2.0   # constant fitness ratio r: (1 - 1/r) / (1 - 1/r^N)
    >>> round(fixation_probability([[r, r], [1, 1]], 5), 12) == round((1 - 1 / r) / (1 - r ** -5), 12)
    True
    """
    n, (f, g) = _checked(game, population_size, selection_intensity, fitness, mutant, resident)
    i0 = check_positive_int(initial_mutants, "initial_mutants")
    if i0 >= n:
        raise ValueError(f"initial_mutants must be below population_size ({n}); got {i0}.")
    # log of prod_{j=1}^{k} g_j / f_j, k = 0..N-1, summed stably
    logs = np.concatenate([[0.0], np.cumsum(np.log(g[1:n]) - np.log(f[1:n]))])
    top = logs.max()
    total = np.exp(logs - top).sum()
    part = np.exp(logs[:i0] - top).sum()
    return float(part / total)


@dataclass(frozen=True)
class MoranFixation:
    """Simulated fixation of a mutant.

    Attributes
    ----------
    probability : float
        Fraction of runs in which the mutant fixed.
    stderr : float
        Its binomial standard error.
    fixations, trials : int
    mean_steps : float
        Mean number of population changes (steps that changed the mutant count) until absorption.
    """

    probability: float
    stderr: float
    fixations: int
    trials: int
    mean_steps: float


def moran_fixation(game, population_size: int, trials: int, rng=None, selection_intensity: float = 1.0, *,
                   mutant: int = 0, resident: int = 1, initial_mutants: int = 1,
                   fitness: str = "linear") -> MoranFixation:
    """Estimate the fixation probability by simulating ``trials`` Moran processes to absorption.

    The runs advance together (vectorised); steps that change nothing (an
    offspring replacing an individual of its own type) are skipped, which
    leaves where each run is absorbed unchanged: from ``i`` mutants the count
    goes up with probability ``f_i / (f_i + g_i)``.

    Parameters
    ----------
    game, population_size, selection_intensity, mutant, resident, initial_mutants, fitness
        As in :func:`fixation_probability`.
    trials : int
    rng : numpy.random.Generator, int or None

    Examples
    --------
    >>> res = moran_fixation([[1, 1], [1, 1]], 10, trials=4000, rng=0)
    >>> abs(res.probability - 0.1) < 4 * res.stderr
    True
    """
    n, (f, g) = _checked(game, population_size, selection_intensity, fitness, mutant, resident)
    trials = check_positive_int(trials, "trials")
    i0 = check_positive_int(initial_mutants, "initial_mutants")
    if i0 >= n:
        raise ValueError(f"initial_mutants must be below population_size ({n}); got {i0}.")
    rng = np.random.default_rng(rng)
    up = f / (f + g)
    state = np.full(trials, i0)
    steps = np.zeros(trials, dtype=np.int64)
    active = np.arange(trials)
    while active.size:
        s = state[active]
        move = np.where(rng.random(active.size) < up[s], 1, -1)
        state[active] = s + move
        steps[active] += 1
        active = active[(state[active] > 0) & (state[active] < n)]
    fixed = int((state == n).sum())
    p = fixed / trials
    return MoranFixation(probability=p, stderr=float(np.sqrt(max(p * (1 - p), 1e-300) / trials)), fixations=fixed,
                         trials=trials, mean_steps=float(steps.mean()))


def moran_process(game, population_size: int, rng=None, selection_intensity: float = 1.0, *, mutant: int = 0,
                  resident: int = 1, initial_mutants: int = 1, max_steps: int = 100_000,
                  fitness: str = "linear") -> np.ndarray:
    """One Moran process step by step (birth proportional to fitness, uniform death): the mutant count over time.

    Parameters
    ----------
    game, population_size, selection_intensity, mutant, resident, initial_mutants, fitness
        As in :func:`fixation_probability`.
    rng : numpy.random.Generator, int or None
    max_steps : int
        Stop after this many steps even if neither type has fixed.

    Returns
    -------
    ndarray of int
        The number of mutants after each step, starting with ``initial_mutants``
        and ending at 0 or ``N`` (absorbed) or after ``max_steps`` steps.

    Examples
    --------
    >>> counts = moran_process([[3, 3], [1, 1]], 8, rng=1)
    >>> int(counts[0]), int(counts[-1]) in (0, 8)
    (1, True)
    """
    n, (f, g) = _checked(game, population_size, selection_intensity, fitness, mutant, resident)
    i = check_positive_int(initial_mutants, "initial_mutants")
    if i >= n:
        raise ValueError(f"initial_mutants must be below population_size ({n}); got {i}.")
    max_steps = check_positive_int(max_steps, "max_steps")
    rng = np.random.default_rng(rng)
    out = [i]
    for _ in range(max_steps):
        birth_mutant = rng.random() * (i * f[i] + (n - i) * g[i]) < i * f[i]
        death_mutant = rng.random() * n < i
        i += int(birth_mutant) - int(death_mutant)
        out.append(i)
        if i in (0, n):
            break
    return np.array(out, dtype=np.int64)
