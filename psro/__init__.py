"""The outer loop: policies, populations, oracles, evaluation, meta-solvers, checkpoints, CLI.

>>> from psro import PSRO
>>> history = PSRO("kuhn_poker", progress=False).run(iterations=2)
>>> len(history)
3
"""

from psro.config import PSROConfig
from psro.double_oracle import DoubleOracleResult, double_oracle  # noqa: E402  (the function shadows the module name)
from psro.loop import PSRO

__all__ = ["PSRO", "PSROConfig", "double_oracle", "DoubleOracleResult"]
