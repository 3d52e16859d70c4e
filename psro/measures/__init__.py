"""Measures of how far a profile is from equilibrium: the exact exploitability of large board games.

>>> from psro.measures import exact_nash_conv
>>> from psro.policies import UniformPolicy
>>> round(exact_nash_conv("dark_hex(num_rows=2,num_cols=2)", [UniformPolicy(4)] * 2).nash_conv, 6)
1.25
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={"exact": ["exact_nash_conv", "Exploitability", "board_tables", "BoardTables"],
                  "boards": ["Board", "board_of"]},
)
