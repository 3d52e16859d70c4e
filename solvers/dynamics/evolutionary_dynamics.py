"""Continuous-time evolutionary dynamics: replicator (with mutation) and Boltzmann-Q vector fields.

A *state* is one population's mixed strategy (single population, a symmetric
game played against itself) or every player's population concatenated into one
flat vector (multi-population, one population per player), so that it can be
handed to :func:`scipy.integrate.solve_ivp` as is.

* **Replicator** (Taylor & Jonker 1978), with a row-stochastic mutation matrix
  ``Q`` (``Q[i, j]``: the chance that an offspring of type ``i`` is of type
  ``j``), the replicator-mutator equation as in Nashpy::

      dx_j/dt = sum_i x_i f_i(x) Q[i, j] - x_j phi(x),   phi = x . f.

  Without mutation (``Q = I``) it is ``x_j (f_j - phi)``. With mutation the
  fitness ``f`` must be non-negative for the state to stay in the simplex.
* **Boltzmann-Q** (Tuyls, 't Hoen & Vanderschaeren 2003; Bloembergen et al.
  2015, eq. 10, as OpenSpiel's ``egt.dynamics.boltzmannq``), the dynamics of
  Q-learning with Boltzmann exploration at temperature ``tau``::

      dx_j/dt = x_j (f_j - phi) / tau - x_j (ln x_j - sum_i x_i ln x_i).

Fitness ``f`` is each pure strategy's expected payoff against the current
state: ``A x`` in a single population with payoff matrix ``A``; against the
other populations' mixtures otherwise.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import xlogy

from games.normal_form import NormalFormGame
from games.validation import check_int
from solvers.dynamics.common import PayoffOperator, check_nonnegative_float

__all__ = [
    "Populations",
    "RestPoint",
    "Trajectory",
    "boltzmann_q",
    "populations",
    "replicator",
    "rest_points",
    "trajectory",
    "vector_field",
]

logger = logging.getLogger(__name__)

DYNAMICS = ("replicator", "boltzmann_q")


@dataclass(frozen=True, eq=False)
class Populations:
    """The fitness maps of one or more populations, in the layout of a flat state.

    Attributes
    ----------
    sizes : tuple of int
        Number of strategies of each population.
    single : bool
        One population playing a symmetric game against itself.
    matrix : ndarray or None
        The single population's payoff matrix.
    operator : PayoffOperator or None
        The multi-population payoffs.
    names : tuple of tuple of str
        Strategy names per population.
    """

    sizes: tuple
    single: bool
    matrix: np.ndarray | None
    operator: PayoffOperator | None
    names: tuple

    @property
    def dim(self) -> int:
        return int(sum(self.sizes))

    def split(self, state: np.ndarray) -> list:
        """The flat ``state`` as one strategy per population."""
        return np.split(np.asarray(state, dtype=np.float64), np.cumsum(self.sizes)[:-1])

    def fitness(self, parts: Sequence[np.ndarray]) -> list:
        """Each population's fitness vector at ``parts``."""
        if self.single:
            return [self.matrix @ parts[0]]
        return [self.operator.deviation_payoff(p, parts) for p in range(len(parts))]


def populations(game, single_population: bool | None = None) -> Populations:
    """The populations that ``game`` defines (see :func:`replicator` for the inference rule).

    Examples
    --------
    >>> from games import catalog
    >>> populations(catalog.rock_paper_scissors(), single_population=True).sizes
    (3,)
    >>> populations(catalog.matching_pennies()).sizes
    (2, 2)
    """
    if isinstance(game, Populations):
        return game
    if isinstance(game, NormalFormGame):
        if single_population:
            if game.num_players != 2 or game.shape[0] != game.shape[1] or not game.is_symmetric():
                raise ValueError(
                    f"single_population=True needs a symmetric two-player game (payoffs[1] == payoffs[0].T); got "
                    f"{game.num_players} players of shape {game.shape}. Use single_population=False for one "
                    "population per player."
                )
            return Populations((game.shape[0],), True, np.asarray(game.payoffs[0]), None, (game.strategy_names[0],))
        return Populations(game.shape, False, None, PayoffOperator.from_game(game), game.strategy_names)
    try:
        arr = np.asarray(game, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"game must be a NormalFormGame or a square payoff matrix; got {type(game).__name__}."
                        ) from None
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] < 1:
        raise ValueError(f"game must be a square payoff matrix (one population) or a NormalFormGame; got shape "
                         f"{arr.shape}.")
    if not np.all(np.isfinite(arr)):
        raise ValueError("game contains NaN or inf payoffs.")
    if single_population is False:
        return populations(NormalFormGame(np.stack([arr, arr.T])), single_population=False)
    return Populations((arr.shape[0],), True, arr, None, (tuple(f"s{i}" for i in range(arr.shape[0])),))


def _check_state(pops: Populations, state, argname: str = "state") -> np.ndarray:
    try:
        x = np.asarray(state, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{argname} must be a flat vector of probabilities.") from None
    if x.ndim != 1 or x.shape[0] != pops.dim:
        raise ValueError(f"{argname} must be a flat vector of length {pops.dim} (populations of sizes {pops.sizes}, "
                         f"concatenated); got shape {x.shape}.")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{argname} contains NaN or inf.")
    return x


def _mutation_matrices(pops: Populations, mutation) -> list | None:
    if mutation is None:
        return None
    if np.isscalar(mutation):
        mu = check_nonnegative_float(mutation, "mutation")
        if mu > 1:
            raise ValueError(f"mutation must be a rate in [0, 1] or a row-stochastic matrix; got {mutation}.")
        if mu == 0:
            return None
        out = []
        for k in pops.sizes:
            q = np.full((k, k), mu / max(k - 1, 1))
            np.fill_diagonal(q, 1.0 - mu if k > 1 else 1.0)
            out.append(q)
        return out
    try:
        one_matrix = np.ndim(mutation) == 2
    except ValueError:   # matrices of different sizes, one per population
        one_matrix = False
    mats = [mutation] * len(pops.sizes) if one_matrix else list(mutation)
    out = []
    for p, (q, k) in enumerate(zip(mats, pops.sizes)):
        q = np.asarray(q, dtype=np.float64)
        if q.shape != (k, k) or not np.all(np.isfinite(q)) or q.min() < 0 or not np.allclose(q.sum(axis=1), 1.0):
            raise ValueError(f"mutation matrix of population {p} must be ({k}, {k}), non-negative, with rows "
                             "summing to 1.")
        out.append(q)
    if len(out) != len(pops.sizes):
        raise ValueError(f"mutation needs one matrix per population ({len(pops.sizes)}); got {len(out)}.")
    return out


def replicator(game, state, mutation=None, single_population: bool | None = None) -> np.ndarray:
    """The replicator (or replicator-mutator) vector field at ``state``.

    Parameters
    ----------
    game : NormalFormGame or array_like (k, k)
        A square matrix is one population (``A[i, j]``: the payoff of ``i``
        against ``j``); a game is one population per player, unless
        ``single_population=True`` (a symmetric two-player game, ``payoffs[0]``).
    state : array_like
        A flat vector: the single population's strategy, or the populations'
        strategies concatenated.
    mutation : float, array_like or sequence of arrays, optional
        A mutation rate ``mu`` (an offspring mutates with probability ``mu`` to
        each other type equally) or a row-stochastic matrix per population.
    single_population : bool, optional
        ``None`` infers it: a matrix is one population, a game one per player.

    Returns
    -------
    ndarray
        ``dx/dt``, flat like ``state``; it sums to zero over each population.

    Examples
    --------
    >>> from games import catalog
    >>> rps = catalog.rock_paper_scissors()
    >>> replicator(rps, [0.5, 0.25, 0.25], single_population=True).tolist()   # paper gains on scissors
    [0.0, 0.0625, -0.0625]
    >>> replicator([[1, 1], [0, 0]], [0.5, 0.5]).tolist()   # logistic: x (1 - x)
    [0.25, -0.25]
    """
    pops = populations(game, single_population)
    x = _check_state(pops, state)
    return _replicator(pops, x, _mutation_matrices(pops, mutation))


def _replicator(pops: Populations, x: np.ndarray, mats) -> np.ndarray:
    parts = pops.split(x)
    out = []
    for p, (xp, f) in enumerate(zip(parts, pops.fitness(parts))):
        phi = xp @ f
        growth = xp * f
        out.append((growth if mats is None else growth @ mats[p]) - xp * phi)
    return np.concatenate(out)


def boltzmann_q(game, state, temperature: float = 1.0, single_population: bool | None = None) -> np.ndarray:
    """The Boltzmann-Q (Q-learning with Boltzmann exploration) vector field at ``state``.

    Parameters
    ----------
    game, state, single_population
        As in :func:`replicator`.
    temperature : float
        The exploration temperature ``tau`` (> 0); small ``tau`` approaches the
        replicator field scaled by ``1 / tau``.

    Returns
    -------
    ndarray
        ``dx/dt``, flat like ``state``.

    Examples
    --------
    >>> boltzmann_q([[1, 0], [0, 1]], [0.5, 0.5]).tolist()   # OpenSpiel's dynamics_test value
    [0.0, 0.0]
    >>> boltzmann_q([[0, 0], [0, 0]], [0.75, 0.25]).round(6).tolist()   # pure exploration pulls to uniform
    [-0.20599, 0.20599]
    """
    pops = populations(game, single_population)
    x = _check_state(pops, state)
    tau = check_nonnegative_float(temperature, "temperature", positive=True)
    return _boltzmann_q(pops, x, tau)


def _boltzmann_q(pops: Populations, x: np.ndarray, tau: float) -> np.ndarray:
    parts = pops.split(x)
    out = []
    for xp, f in zip(parts, pops.fitness(parts)):
        xlx = xlogy(xp, xp)
        out.append(xp * (f - xp @ f) / tau - (xlx - xp * xlx.sum()))
    return np.concatenate(out)


def _field(pops: Populations, dynamics: str, options: dict):
    """``f(x)`` for the named dynamics, with its options checked once."""
    if dynamics == "replicator":
        unknown = set(options) - {"mutation"}
        mats = _mutation_matrices(pops, options.get("mutation"))
        field = (lambda x: _replicator(pops, x, mats))
    elif dynamics == "boltzmann_q":
        unknown = set(options) - {"temperature"}
        tau = check_nonnegative_float(options.get("temperature", 1.0), "temperature", positive=True)
        field = (lambda x: _boltzmann_q(pops, x, tau))
    else:
        raise ValueError(f"dynamics must be one of {list(DYNAMICS)}; got {dynamics!r}.")
    if unknown:
        raise ValueError(f"unknown option(s) {sorted(unknown)} for dynamics={dynamics!r}.")
    return field


def vector_field(game, state, dynamics: str = "replicator", single_population: bool | None = None,
                 **options) -> np.ndarray:
    """The named dynamics' vector field at ``state`` (``mutation=`` or ``temperature=`` as options).

    Examples
    --------
    >>> vector_field([[1, 1], [0, 0]], [0.5, 0.5], "boltzmann_q", temperature=1.0).tolist()
    [0.25, -0.25]
    """
    pops = populations(game, single_population)
    return _field(pops, dynamics, options)(_check_state(pops, state))


@dataclass(frozen=True, eq=False)
class Trajectory:
    """A solution of the dynamics from one initial state.

    Attributes
    ----------
    t : ndarray, shape (T,)
    states : ndarray, shape (T, dim)
        The flat state at each time.
    sizes : tuple of int
        Population sizes (to split ``states``).
    success : bool
        Whether the ODE solver reached the final time.
    """

    t: np.ndarray
    states: np.ndarray
    sizes: tuple
    success: bool

    def population(self, p: int) -> np.ndarray:
        """Population ``p``'s strategies over time, ``(T, k_p)``."""
        start = int(np.sum(self.sizes[:p]))
        return self.states[:, start:start + self.sizes[p]]


def trajectory(game, initial, t_max: float = 10.0, dynamics: str = "replicator", num_points: int = 200,
               single_population: bool | None = None, rtol: float = 1e-8, atol: float = 1e-10,
               method: str = "LSODA", **options) -> Trajectory:
    """Integrate the dynamics from ``initial`` with :func:`scipy.integrate.solve_ivp`.

    Parameters
    ----------
    game, single_population
        As in :func:`replicator`.
    initial : array_like
        The flat initial state (each population's part a probability vector).
    t_max : float
        Final time.
    dynamics : {"replicator", "boltzmann_q"}
    num_points : int
        Number of evenly spaced output times in ``[0, t_max]``.
    rtol, atol, method
        Passed to ``solve_ivp`` (an adaptive solver; LSODA switches to a stiff
        method where Boltzmann-Q's entropy term needs it).
    **options
        ``mutation=`` (replicator) or ``temperature=`` (Boltzmann-Q).

    Returns
    -------
    Trajectory

    Examples
    --------
    Logistic growth, ``x(t) = x0 e^t / (1 - x0 + x0 e^t)``:

    >>> traj = trajectory([[1, 1], [0, 0]], [0.25, 0.75], t_max=2.0, num_points=3)
    >>> traj.states[:, 0].round(6).tolist()
    [0.25, 0.475367, 0.711235]
    """
    from scipy.integrate import solve_ivp

    pops = populations(game, single_population)
    x0 = _check_state(pops, initial, "initial")
    for p, part in enumerate(pops.split(x0)):
        if part.min() < 0 or abs(part.sum() - 1.0) > 1e-9:
            raise ValueError(f"initial: population {p}'s part must be a probability vector; got {part.tolist()}.")
    t_max = check_nonnegative_float(t_max, "t_max", positive=True)
    num_points = check_int(num_points, "num_points", minimum=2)
    field = _field(pops, dynamics, options)
    times = np.linspace(0.0, t_max, int(num_points))
    sol = solve_ivp(lambda _t, x: field(x), (0.0, t_max), x0, t_eval=times, rtol=rtol, atol=atol, method=method)
    if not sol.success:
        logger.warning("solve_ivp stopped early: %s", sol.message)
    return Trajectory(t=sol.t, states=sol.y.T.copy(), sizes=pops.sizes, success=bool(sol.success))


@dataclass(frozen=True, eq=False)
class RestPoint:
    """A rest point of the dynamics (``dx/dt = 0``) and its linear stability.

    Attributes
    ----------
    state : ndarray
        The flat state.
    eigenvalues : ndarray
        Of the Jacobian in the simplex's tangent space (the last coordinate of
        each population eliminated).
    stability : {"stable", "unstable", "neutral"}
        All real parts below ``-tol`` / some above ``tol`` / otherwise (a
        centre, as RPS's interior point under the replicator, or degenerate).
    """

    state: np.ndarray
    eigenvalues: np.ndarray
    stability: str


def _reduced(pops: Populations, field):
    """The field in reduced coordinates: each population's last probability eliminated."""
    def full(z):
        parts, start = [], 0
        for k in pops.sizes:
            head = z[start:start + k - 1]
            parts.append(np.append(head, 1.0 - head.sum()))
            start += k - 1
        return np.concatenate(parts)

    keep = np.concatenate([np.arange(k - 1) + off for k, off in zip(pops.sizes, np.cumsum((0,) + pops.sizes[:-1]))])
    return full, keep, (lambda z: field(full(z))[keep])


def _classify(pops: Populations, field, x: np.ndarray, tol: float) -> RestPoint:
    full, keep, g = _reduced(pops, field)
    z = x[keep]
    h = 1e-6
    jac = np.empty((z.size, z.size))
    for i in range(z.size):
        e = np.zeros(z.size)
        e[i] = h
        jac[:, i] = (g(z + e) - g(z - e)) / (2 * h)
    eig = np.linalg.eigvals(jac) if z.size else np.zeros(0)
    if eig.size and eig.real.max() > tol:
        kind = "unstable"
    elif eig.size == 0 or eig.real.max() < -tol:
        kind = "stable"
    else:
        kind = "neutral"
    return RestPoint(state=x, eigenvalues=eig, stability=kind)


def _equalizers(matrix: np.ndarray, rows: np.ndarray, cols: np.ndarray):
    """``y`` on ``cols`` (sum 1, > 0) that makes ``matrix[rows][:, cols] @ y`` constant, if unique."""
    sub = matrix[np.ix_(rows, cols)]
    a = np.block([[sub, -np.ones((rows.size, 1))], [np.ones((1, cols.size)), np.zeros((1, 1))]])
    b = np.zeros(rows.size + 1)
    b[-1] = 1.0
    sol, _, rank, _ = np.linalg.lstsq(a, b, rcond=None)
    if rank < cols.size + 1 or np.abs(a @ sol - b).max() > 1e-9:
        return None
    y = sol[:-1]
    return y if y.min() > 1e-12 else None


def _supports(k: int):
    for mask in range(1, 2 ** k):
        yield np.flatnonzero([(mask >> i) & 1 for i in range(k)])


def rest_points(game, dynamics: str = "replicator", single_population: bool | None = None, tol: float = 1e-9,
                grid: int = 11, **options) -> list:
    """The rest points of the dynamics, with their linear stability.

    Replicator dynamics without mutation, one population or two: every
    isolated rest point, exactly, by support enumeration (on each face, the
    point where fitness is equal across the support). Otherwise (mutation,
    Boltzmann-Q, more populations): ``scipy.optimize.root`` from a grid of
    interior starts, keeping distinct converged points.

    Parameters
    ----------
    game, dynamics, single_population, **options
        As in :func:`trajectory`.
    tol : float
        Threshold on eigenvalue real parts for the stability label, and on the
        field's size at a rest point.
    grid : int
        Starting points per reduced coordinate for the numerical search.

    Returns
    -------
    list of RestPoint

    Examples
    --------
    >>> from games import catalog
    >>> pts = rest_points(catalog.rock_paper_scissors(), single_population=True)
    >>> sorted((p.state.round(3).tolist(), p.stability) for p in pts)[0]
    ([0.0, 0.0, 1.0], 'unstable')
    >>> [p.stability for p in pts if p.state.min() > 0]   # the interior centre
    ['neutral']
    """
    pops = populations(game, single_population)
    field = _field(pops, dynamics, options)
    found = []
    exact = dynamics == "replicator" and _mutation_matrices(pops, options.get("mutation")) is None
    if exact and pops.single:
        a = pops.matrix
        for s in _supports(pops.sizes[0]):
            y = _equalizers(a, s, s)
            if y is not None:
                x = np.zeros(pops.sizes[0])
                x[s] = y
                found.append(x)
    elif exact and len(pops.sizes) == 2:
        u = pops.operator.tensors[0]         # (k0, k1): population 0's payoffs
        v = pops.operator.tensors[1]         # (k1, k0): population 1's payoffs
        for s in _supports(pops.sizes[0]):
            for t in _supports(pops.sizes[1]):
                if (s.size == 1) != (t.size == 1):
                    continue   # one side pure, the other mixed: never an isolated rest point
                if s.size == 1:
                    x, y = np.ones(1), np.ones(1)   # a vertex
                else:
                    y, x = _equalizers(u, s, t), _equalizers(v, t, s)
                    if x is None or y is None:
                        continue
                xs, ys = np.zeros(pops.sizes[0]), np.zeros(pops.sizes[1])
                xs[s], ys[t] = x, y
                found.append(np.concatenate([xs, ys]))
    else:
        found = _numerical_rest_points(pops, field, dynamics, options, grid, tol)
    unique = []
    for x in found:
        if np.abs(field(x)).max() <= max(tol, 1e-9) * max(1.0, _scale(pops)) and \
                not any(np.abs(x - u).max() < 1e-7 for u in unique):
            unique.append(x)
    return [_classify(pops, field, x, tol) for x in unique]


def _starts(dim: int, grid: int, low: float, high: float) -> np.ndarray:
    """A grid of starting points (random ones, seeded, beyond 4096 grid points)."""
    if dim == 0:
        return np.zeros((1, 0))
    if grid ** dim > 4096:
        return np.random.default_rng(0).uniform(low, high, (4096, dim))
    axes = [np.linspace(low, high, grid)] * dim
    return np.stack(np.meshgrid(*axes), -1).reshape(-1, dim)


def _numerical_rest_points(pops: Populations, field, dynamics: str, options: dict, grid: int, tol: float) -> list:
    """Rest points by ``scipy.optimize.root`` from a grid of starts.

    Boltzmann-Q's rest points are the logit fixed points ``x = softmax(f(x) / tau)``,
    solved in logit coordinates (well conditioned near the boundary); the others
    in the simplex's reduced coordinates.
    """
    from scipy.optimize import root

    found = []
    if dynamics == "boltzmann_q":
        tau = float(options.get("temperature", 1.0))

        def simplex(z):
            parts, start = [], 0
            for k in pops.sizes:
                logits = np.concatenate([[0.0], z[start:start + k - 1]])
                e = np.exp(logits - logits.max())
                parts.append(e / e.sum())
                start += k - 1
            return parts

        def residual(z):
            parts = simplex(z)
            return np.concatenate([z_p - (f[1:] - f[0]) / tau for z_p, f in
                                   zip(np.split(z, np.cumsum([k - 1 for k in pops.sizes])[:-1]),
                                       pops.fitness(parts))])

        for z0 in _starts(sum(k - 1 for k in pops.sizes), grid, -10.0, 10.0):
            sol = root(residual, z0, method="hybr", tol=1e-14)
            if sol.success and np.abs(residual(sol.x)).max() < 1e-9:
                found.append(np.concatenate(simplex(sol.x)))
        return found
    full, keep, g = _reduced(pops, field)
    for z0 in _starts(len(keep), grid, 0.02, 0.98):
        x0 = full(z0)
        if any(part.min() <= 0 for part in pops.split(x0)):
            continue
        sol = root(g, z0, method="hybr", tol=1e-13)
        x = full(sol.x)
        if sol.success and all(part.min() >= -1e-12 for part in pops.split(x)):
            found.append(np.clip(x, 0.0, None))
    return found


def _scale(pops: Populations) -> float:
    if pops.single:
        return float(np.abs(pops.matrix).max())
    return float(max(np.abs(t).max() for t in pops.operator.tensors))
