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

import lazy_loader

from psro.deprecation import package_names

_exported, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={"psro_loop": ["PSRO", "PHASES"], "training": ["TrainingLoop"], "state": ["LoopState"],
                  "algorithms": ["algorithm_class"]},
)


#: The public names above; any other name the module ``psro.loop`` had (before it became this package) still
#: resolves, from :mod:`psro.loop.psro_loop`, with a DeprecationWarning (CHANGELOG.md)
__getattr__ = package_names(__name__, "psro.loop.psro_loop", _exported)
