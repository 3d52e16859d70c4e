"""Pure functions from a NormalFormGame to an Equilibrium, registered by name.

>>> from games import catalog
>>> from solvers import solve
>>> solve(catalog.matching_pennies(), "nash_zero_sum").gap
0.0
"""

from solvers.equilibrium import Equilibrium
from solvers.gaps import cce_gains, cce_gap, ce_gain_matrices, ce_gains, ce_gap, nash_conv, nash_conv_per_player
from solvers.registry import make_equilibrium, method_info, methods, register, solve

# Importing the solver modules registers their methods.
from solvers import basic  # noqa: E402,F401  isort: skip
from solvers.nash import dispatch as _nash, lemke_howson as _lemke_howson  # noqa: E402,F401  isort: skip
from solvers.nash import nash_n_player as _nash_n_player, support_enumeration as _support_enumeration  # noqa: E402,F401  isort: skip
from solvers.nash import zero_sum as _zero_sum  # noqa: E402,F401  isort: skip
from solvers.dynamics import fictitious_play as _fictitious_play, qre as _qre  # noqa: E402,F401  isort: skip
from solvers.dynamics import regret_matching as _regret_matching, replicator as _replicator  # noqa: E402,F401  isort: skip
from solvers.risk_averse import equilibria as _risk_averse  # noqa: E402,F401  isort: skip
from solvers.correlated import equilibria as _correlated  # noqa: E402,F401  isort: skip
# Peer-parity tools (not registry methods: they return a list, a table or a non-Nash concept).
from solvers import dominance, rational  # noqa: E402,F401  isort: skip
from solvers.nash.extreme_equilibria import vertex_enumeration  # noqa: E402  isort: skip
from solvers.dynamics.qre_tracing import qre_branch  # noqa: E402  isort: skip
from solvers.stackelberg_commitment import stackelberg  # noqa: E402  isort: skip

__all__ = [
    "Equilibrium",
    "solve",
    "methods",
    "method_info",
    "register",
    "make_equilibrium",
    "nash_conv",
    "nash_conv_per_player",
    "ce_gap",
    "ce_gains",
    "ce_gain_matrices",
    "cce_gap",
    "cce_gains",
    "stackelberg",
    "vertex_enumeration",
    "qre_branch",
]
