"""Deprecated: the old path of :mod:`solvers.dynamics.evolutionary_dynamics`.

Importing it warns; it goes in the next release (CHANGELOG.md).
"""

import warnings

from solvers.dynamics.evolutionary_dynamics import (  # noqa: F401
    Populations,
    RestPoint,
    Trajectory,
    boltzmann_q,
    populations,
    replicator,
    rest_points,
    trajectory,
    vector_field,
)

warnings.warn("solvers.evolutionary_dynamics is deprecated and goes in the next release: "
              "import from solvers.dynamics.evolutionary_dynamics.", DeprecationWarning, stacklevel=2)
