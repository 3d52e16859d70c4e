"""The training loop, by part: :class:`PSRO` and its six phases (:mod:`psro.loop.psro_loop`) on the base every
loop shares (:mod:`psro.loop.training`: ``run``, stopping, history, checkpoints), its measure phase
(:mod:`psro.loop.measures`), what a loop requires of its game and config (:mod:`psro.loop.requirements`), its
state (:mod:`psro.loop.state`), which population each seat plays from (:mod:`psro.loop.seating`, with the
symmetric games' checks in :mod:`psro.loop.symmetric_games`), which players and responses join
(:mod:`psro.loop.selection`) and the registry of the training loops (:mod:`psro.loop.algorithms`).

The public names load on first use (PEP 562, through ``lazy_loader``).

>>> from psro.loop import PSRO
>>> len(PSRO("kuhn_poker", progress=False).run(iterations=1))
2
"""

import importlib
import os
import warnings

import lazy_loader

_exported, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={"psro_loop": ["PSRO", "PHASES"], "training": ["TrainingLoop"], "state": ["LoopState"],
                  "algorithms": ["algorithm_class"]},
)


def __getattr__(name: str):
    """The public names above; any other name the module ``psro.loop`` had (before it became this package) still
    resolves, from :mod:`psro.loop.psro_loop`, with a DeprecationWarning (CHANGELOG.md)."""
    try:
        return _exported(name)
    except AttributeError:
        if name.startswith("__") or os.path.exists(os.path.join(os.path.dirname(__file__), f"{name}.py")):
            raise   # (dunders, and the submodules: the import system's)
        psro_loop = importlib.import_module("psro.loop.psro_loop")
        if not hasattr(psro_loop, name):
            raise
        warnings.warn(f"psro.loop.{name} is deprecated and goes in the next release: import it from "
                      f"psro.loop.psro_loop.", DeprecationWarning, stacklevel=2)
        return getattr(psro_loop, name)
