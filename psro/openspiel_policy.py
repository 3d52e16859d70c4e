"""Deprecated: the old path of :mod:`psro.policies.openspiel`.

Importing it warns; it goes in the next release (CHANGELOG.md).
"""

import warnings

from psro.policies.openspiel import (  # noqa: F401
    from_openspiel_policy,
    members_policy,
    to_openspiel_policy,
)

warnings.warn("psro.openspiel_policy is deprecated and goes in the next release: "
              "import from psro.policies.openspiel.", DeprecationWarning, stacklevel=2)
