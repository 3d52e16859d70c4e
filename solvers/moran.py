"""The old path of :mod:`solvers.dynamics.moran`, kept so that ``from solvers.moran import fixation_probability``
keeps working; new code imports from the subpackage.

>>> from solvers.moran import fixation_probability
>>> from solvers.dynamics.moran import fixation_probability as new
>>> fixation_probability is new
True
"""

from solvers.dynamics.moran import MoranFixation, fixation_probability, moran_fixation, moran_process  # noqa: F401
