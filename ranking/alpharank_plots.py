"""The old path of :mod:`ranking.alpha_rank.alpharank_plots`, kept so that ``from ranking.alpharank_plots import
plot_response_graph`` keeps working; new code imports from the subpackage.

>>> from ranking.alpharank_plots import plot_response_graph
>>> from ranking.alpha_rank.alpharank_plots import plot_response_graph as new
>>> plot_response_graph is new
True
"""

from ranking.alpha_rank.alpharank_plots import plot_pi_vs_alpha, plot_response_graph  # noqa: F401
