"""Pure functions from a NormalFormGame to an Equilibrium, registered by name.

The public names load on first use (PEP 562, through ``lazy_loader``), so
``import solvers`` imports neither scipy nor pandas; the registered methods
load the first time the registry is asked for one (:mod:`solvers.registry`).

>>> from games import catalog
>>> from solvers import solve
>>> solve(catalog.matching_pennies(), "nash_zero_sum").gap
0.0
"""

import lazy_loader

# One entry per public name: the submodule that defines it.
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submodules=["dominance", "rational"],   # peer-parity tools (a list, a table or a non-Nash concept)
    submod_attrs={
        "equilibrium": ["Equilibrium"],
        "gaps": ["cce_gains", "cce_gap", "ce_gain_matrices", "ce_gains", "ce_gap", "nash_conv",
                 "nash_conv_per_player"],
        "registry": ["make_equilibrium", "method_info", "methods", "register", "solve"],
        "nash.extreme_equilibria": ["vertex_enumeration"],
        "dynamics.qre_tracing": ["qre_branch"],
        "stackelberg_commitment": ["stackelberg"],
    },
)
