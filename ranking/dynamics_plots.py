"""Phase portraits of evolutionary dynamics: the 2-simplex (three strategies) and the unit square (2x2 games).

Both draw the vector field of :mod:`solvers.dynamics.evolutionary_dynamics` (arrows on
the simplex, stream lines on the square), a few trajectories integrated with
``solve_ivp``, and the rest points: filled for stable, white for unstable,
grey for neutral (centres and degenerate points). matplotlib is imported when
a plot is made; the backend is left as it is.
"""

from __future__ import annotations

import numpy as np

from solvers.dynamics.evolutionary_dynamics import populations, rest_points, trajectory, vector_field

__all__ = ["plot_simplex_portrait", "plot_square_portrait", "to_triangle"]

_MARKERS = {"stable": dict(color="black", edgecolor="black"),
            "unstable": dict(color="white", edgecolor="black"),
            "neutral": dict(color="0.6", edgecolor="black")}
_CORNERS = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, np.sqrt(3) / 2]])


def to_triangle(x) -> np.ndarray:
    """Cartesian coordinates of points of the 2-simplex (rows of ``x``) in the equilateral triangle.

    Strategy 0 sits at (0, 0), strategy 1 at (1, 0), strategy 2 at the top.

    Examples
    --------
    >>> to_triangle([[1, 0, 0], [0, 0, 1], [1 / 3, 1 / 3, 1 / 3]]).round(4).tolist()
    [[0.0, 0.0], [0.5, 0.866], [0.5, 0.2887]]
    """
    return np.atleast_2d(np.asarray(x, dtype=np.float64)) @ _CORNERS


def _mark_rest_points(ax, points, xy_of, size: float = 60.0) -> None:
    for p in points:
        style = _MARKERS[p.stability]
        xy = xy_of(p.state)
        ax.scatter([xy[0]], [xy[1]], s=size, zorder=5, c=style["color"], edgecolors=style["edgecolor"],
                   linewidths=1.2, label=f"{p.stability} rest point")


def _legend_once(ax) -> None:
    handles, labels = ax.get_legend_handles_labels()
    seen = {}
    for h, lab in zip(handles, labels):
        seen.setdefault(lab, h)
    if seen:
        ax.legend(seen.values(), seen.keys(), loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)


def plot_simplex_portrait(game, dynamics: str = "replicator", ax=None, resolution: int = 14,
                          initial_states=None, t_max: float = 20.0, rest: bool = True, **options):
    """The phase portrait of a single population with three strategies, on the 2-simplex.

    Parameters
    ----------
    game : NormalFormGame or array_like (3, 3)
        A symmetric game (one population) with three strategies, e.g.
        ``catalog.rock_paper_scissors()``.
    dynamics : {"replicator", "boltzmann_q"}
    ax : matplotlib Axes, optional
    resolution : int
        Grid points per edge for the arrows.
    initial_states : sequence of array_like, optional
        Starting states of the trajectories drawn (default: three).
    t_max : float
        How long each trajectory runs.
    rest : bool
        Mark the rest points (:func:`solvers.dynamics.evolutionary_dynamics.rest_points`).
    **options
        ``mutation=`` or ``temperature=``.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from games import catalog
    >>> ax = plot_simplex_portrait(catalog.rock_paper_scissors(), resolution=6, t_max=5)
    >>> len(ax.collections) >= 5   # arrows, four rest points
    True
    """
    import matplotlib.pyplot as plt

    pops = populations(game, single_population=True)
    if pops.sizes != (3,):
        raise ValueError(f"game must give one population with 3 strategies for a simplex portrait; got sizes "
                         f"{pops.sizes}.")
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 4.5))
    ticks = np.arange(1, resolution) / resolution
    grid = np.array([[a, b, 1 - a - b] for a in ticks for b in ticks if 1 - a - b > 1e-9])
    field = np.array([vector_field(pops, x, dynamics, **options) for x in grid])
    xy, dxy = to_triangle(grid), field @ _CORNERS
    speed = np.linalg.norm(dxy, axis=1)
    unit = dxy / np.where(speed > 0, speed, 1.0)[:, None]
    ax.quiver(xy[:, 0], xy[:, 1], unit[:, 0], unit[:, 1], speed, cmap="viridis", angles="xy", scale_units="xy",
              scale=resolution * 1.6, width=0.005)
    if initial_states is None:
        initial_states = [[0.6, 0.3, 0.1], [0.2, 0.2, 0.6], [0.4, 0.5, 0.1]]
    for x0 in initial_states:
        traj = trajectory(pops, x0, t_max=t_max, dynamics=dynamics, num_points=400, **options)
        line = to_triangle(traj.states)
        ax.plot(line[:, 0], line[:, 1], lw=1.2, color="C3", alpha=0.8)
    if rest:
        _mark_rest_points(ax, rest_points(pops, dynamics, **options), lambda s: to_triangle(s)[0])
    ax.plot(*np.vstack([_CORNERS, _CORNERS[:1]]).T, color="black", lw=1)
    names = pops.names[0]
    for corner, name, offset in zip(_CORNERS, names, ([-0.04, -0.05], [0.04, -0.05], [0.0, 0.03])):
        ax.annotate(str(name), corner + offset, ha="center", fontsize=9)
    ax.set_aspect("equal")
    ax.set_xlim(-0.1, 1.1)
    ax.set_ylim(-0.1, 0.95)
    ax.axis("off")
    ax.set_title(f"{dynamics} dynamics")
    _legend_once(ax)
    return ax


def plot_square_portrait(game, dynamics: str = "replicator", ax=None, resolution: int = 25,
                         initial_states=None, t_max: float = 20.0, rest: bool = True, **options):
    """The phase portrait of a two-population 2x2 game on the unit square.

    The horizontal axis is the probability that population 0 plays its first
    strategy, the vertical one the same for population 1.

    Parameters
    ----------
    game : NormalFormGame
        A two-player game with two strategies each, e.g. ``catalog.stag_hunt()``.
    dynamics, ax, t_max, rest, **options
        As in :func:`plot_simplex_portrait`.
    resolution : int
        Grid points per side for the stream lines.
    initial_states : sequence of (p, q), optional
        Starting points of the trajectories drawn (default: none; the stream
        lines already show the flow).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from games import catalog
    >>> ax = plot_square_portrait(catalog.stag_hunt(), resolution=8)
    >>> ax.get_xlabel()
    'P(p0 plays stag)'
    """
    import matplotlib.pyplot as plt

    pops = populations(game, single_population=False)
    if pops.sizes != (2, 2):
        raise ValueError(f"game must be a 2x2 two-player game for a unit-square portrait; got sizes {pops.sizes}.")
    if ax is None:
        _, ax = plt.subplots(figsize=(4.8, 4.5))
    side = np.linspace(0.0, 1.0, resolution)
    p, q = np.meshgrid(side, side)
    u, v = np.empty_like(p), np.empty_like(q)
    for idx in np.ndindex(p.shape):
        a, b = p[idx], q[idx]
        field = vector_field(pops, np.array([a, 1 - a, b, 1 - b]), dynamics, **options)
        u[idx], v[idx] = field[0], field[2]
    speed = np.hypot(u, v)
    ax.streamplot(side, side, u, v, color=speed, cmap="viridis", density=1.0, linewidth=1.0, arrowsize=1.0)
    for a, b in initial_states or ():
        traj = trajectory(pops, [a, 1 - a, b, 1 - b], t_max=t_max, dynamics=dynamics, num_points=400, **options)
        ax.plot(traj.states[:, 0], traj.states[:, 2], color="C3", lw=1.5)
    if rest:
        _mark_rest_points(ax, rest_points(pops, dynamics, **options), lambda s: (s[0], s[2]))
    names = pops.names
    ax.set_xlabel(f"P(p0 plays {names[0][0]})")
    ax.set_ylabel(f"P(p1 plays {names[1][0]})")
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    ax.set_aspect("equal")
    ax.set_title(f"{dynamics} dynamics")
    _legend_once(ax)
    return ax
