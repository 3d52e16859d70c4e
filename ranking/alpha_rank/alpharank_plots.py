"""Plots for alpha-Rank: the response graph and pi against alpha (matplotlib)."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["plot_pi_vs_alpha", "plot_response_graph"]


def plot_response_graph(result, top: int | None = 8, ax=None, min_mass: float = 0.0):
    """Draw the response graph of an :class:`ranking.AlphaRankResult`.

    Node area is proportional to ``pi``; an edge ``s -> t`` means a mutant
    ``t`` fixates in ``s`` more likely than a neutral one, and its width grows
    with the fixation probability.

    Parameters
    ----------
    result : AlphaRankResult
    top : int, optional
        Draw only the ``top`` profiles with the largest mass (None: all).
    ax : matplotlib Axes, optional
    min_mass : float
        Leave out profiles with less mass than this.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from games import catalog
    >>> from ranking import alpharank
    >>> ax = plot_response_graph(alpharank(catalog.rock_paper_scissors(), alpha=1.0))
    >>> len(ax.collections) > 0
    True
    """
    import matplotlib.pyplot as plt
    import networkx as nx

    graph = result.response_graph
    order = np.argsort(-result.pi, kind="stable")
    if top is not None:
        order = order[:top]
    labels = result.profiles
    keep = [labels[i] for i in order if result.pi[i] >= min_mass]
    sub = graph.subgraph(keep)
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 6))
    pos = nx.circular_layout(sub)
    pis = np.array([sub.nodes[v]["pi"] for v in sub.nodes])
    size = 300 + 3000 * pis / max(pis.max(initial=0.0), 1e-300)
    nx.draw_networkx_nodes(sub, pos, ax=ax, node_size=size, node_color=pis, cmap="viridis")
    widths = [0.5 + 2.5 * d["weight"] for _, _, d in sub.edges(data=True)]
    nx.draw_networkx_edges(sub, pos, ax=ax, width=widths, arrows=True, node_size=size,
                           connectionstyle="arc3,rad=0.1")
    text = {v: (v if isinstance(v, str) else "\n".join(v)) + f"\n{sub.nodes[v]['pi']:.3f}" for v in sub.nodes}
    nx.draw_networkx_labels(sub, pos, labels=text, ax=ax, font_size=8)
    ax.set_title(f"alpha-Rank response graph (alpha={result.alpha:g}, m={result.population_size})")
    ax.set_axis_off()
    return ax


def plot_pi_vs_alpha(sweep_table: pd.DataFrame, top: int | None = 10, ax=None):
    """Plot ``pi`` against alpha from :func:`ranking.sweep` (log x axis).

    Parameters
    ----------
    sweep_table : pandas.DataFrame
        Rows indexed by alpha, one column per profile.
    top : int, optional
        Draw the ``top`` profiles with the most mass at the largest alpha.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from games import catalog
    >>> from ranking import sweep
    >>> ax = plot_pi_vs_alpha(sweep(catalog.prisoners_dilemma(), alphas=[0.1, 1.0, 10.0]))
    >>> len(ax.lines)
    2
    """
    import matplotlib.pyplot as plt

    if not isinstance(sweep_table, pd.DataFrame) or sweep_table.empty:
        raise ValueError("sweep_table must be the non-empty DataFrame returned by ranking.sweep.")
    cols = sweep_table.iloc[-1].sort_values(ascending=False).index
    if top is not None:
        cols = cols[:top]
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    alphas = sweep_table.index.to_numpy(dtype=float)
    for c in cols:
        ax.plot(alphas, sweep_table[c].to_numpy(), marker=".", label=str(c))
    if np.all(alphas > 0):
        ax.set_xscale("log")
    ax.set_xlabel("selection intensity alpha")
    ax.set_ylabel("stationary mass pi")
    ax.legend(fontsize=8, loc="best")
    return ax
