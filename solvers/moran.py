"""Deprecated: the old path of :mod:`solvers.dynamics.moran`.

Importing it warns; it goes in the next release (CHANGELOG.md).
"""

import warnings

from solvers.dynamics.moran import (  # noqa: F401
    MoranFixation,
    fixation_probability,
    moran_fixation,
    moran_process,
)

warnings.warn("solvers.moran is deprecated and goes in the next release: "
              "import from solvers.dynamics.moran.", DeprecationWarning, stacklevel=2)
