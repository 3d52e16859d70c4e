"""The training loops a run can use, by name: PSRO, the self-play family and offline PSRO.

``PSROConfig.algorithm`` names one; :func:`algorithm_class` imports its class on first use (so a worker that
only needs PSRO never imports the others). Every class takes ``Cls(config)`` or ``Cls(game, **fields)``, runs
with ``.run(iterations=..., time_limit=..., callback=...)`` to a history of the same columns
(:data:`psro.state.HISTORY_COLUMNS`) and resumes from its checkpoint with ``Cls.resume(directory)``.

Examples
--------
>>> algorithm_class("psro").__name__
'PSRO'
>>> algorithm_class("alphazero")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: algorithm: unknown algorithm 'alphazero'; choose one of ['psro', 'self_play', ...].
"""

from __future__ import annotations

import importlib

__all__ = ["ALGORITHMS", "algorithm_class"]

#: Algorithm name -> ``"module:Class"``.
ALGORITHMS = {
    "psro": "psro.loop:PSRO",
    "self_play": "psro.family.self_play:SelfPlay",
    "fictitious_self_play": "psro.family.self_play:FictitiousSelfPlay",
    "fxp": "psro.family.fxp:FXP",
    "league": "psro.family.league:League",
    "nfsp": "psro.family.nfsp:NFSP",
    "coffee_psro": "psro.offline.coffee_psro:COffeEPSRO",
    "offline_psro": "psro.offline.coffee_psro:OfflinePSRO",
}


def algorithm_class(name: str) -> type:
    """The class that runs the algorithm ``name`` (a key of :data:`ALGORITHMS`)."""
    if name not in ALGORITHMS:
        raise ValueError(f"algorithm: unknown algorithm {name!r}; choose one of {list(ALGORITHMS)}.")
    module, _, attribute = ALGORITHMS[name].partition(":")
    return getattr(importlib.import_module(module), attribute)
