"""Deprecated: the old path of :mod:`ranking.alpha_rank.alpharank_plots`.

Importing it warns; it goes in the next release (CHANGELOG.md).
"""

import warnings

from ranking.alpha_rank.alpharank_plots import (  # noqa: F401
    plot_pi_vs_alpha,
    plot_response_graph,
)

warnings.warn("ranking.alpharank_plots is deprecated and goes in the next release: "
              "import from ranking.alpha_rank.alpharank_plots.", DeprecationWarning, stacklevel=2)
