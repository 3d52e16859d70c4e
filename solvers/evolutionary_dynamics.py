"""The old path of :mod:`solvers.dynamics.evolutionary_dynamics`, kept so that ``from solvers.evolutionary_dynamics
import trajectory`` keeps working; new code imports from the subpackage.

>>> from solvers.evolutionary_dynamics import trajectory
>>> from solvers.dynamics.evolutionary_dynamics import trajectory as new
>>> trajectory is new
True
"""

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
