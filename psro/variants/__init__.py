"""The PSRO variants that papers compare against, each a small module on PSRO's public phases (issue 27).

:mod:`psro.variants.symmetric` is symmetric (single-population) PSRO, the ``symmetric`` field of
:class:`psro.config.PSROConfig` (``PSRO(game, symmetric=True)``): one population plays every seat of a symmetric
game, one best response per iteration, and the meta-game is solved as a symmetric game.
"""
