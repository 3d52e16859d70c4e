"""The PSRO variants that papers compare against, each a small module on :class:`psro.PSRO`'s public phases.

Every variant is a registered training loop (``algorithm:`` in a config, a class exported from :mod:`psro`) that
overrides one or two of PSRO's phases (``meta_solve``, ``targets``, ``respond``, ``select``, ...), reads its own
options from ``algorithm_options`` and keeps its own state in ``state.extra`` (its ``Extra``, a typed
:class:`psro.loop.state.LoopExtra`) so that a checkpoint resumes it bit for bit:

- rectified PSRO (:mod:`psro.variants.rectified`) and diversity-aware PSRO (:mod:`psro.variants.diverse`), with
  the requirements they declare checked by :mod:`psro.loop.requirements`;
- anytime PSRO (:mod:`psro.variants.anytime`: each player's least exploitable mixture of its population, the
  exploitability never increasing) and self-play PSRO (:mod:`psro.variants.self_play_psro`: a near-optimal
  stochastic policy joins with every best response), with the least-exploitable-mixture machinery they share in
  :mod:`psro.variants.least_exploitable`;
- symmetric (single-population) PSRO (:mod:`psro.loop.seating`, the ``symmetric`` field of
  :class:`psro.config.PSROConfig`, ``PSRO(game, symmetric=True)``): one population plays every seat of a symmetric
  game, one best response per iteration, and the meta-game is solved as a symmetric game;
- XDO and NXDO (:mod:`psro.variants.xdo`: the extensive-form double oracle, with
  :mod:`psro.variants.restricted_game`, the restricted game and CFR+ on it, and :mod:`psro.variants.nxdo`, the
  restricted game of meta-actions solved by NFSP);
- pipeline PSRO (:mod:`psro.variants.pipeline`, P2SRO: levels of active policies trained in parallel through the
  run's executor, the lowest fixed when its improvement plateaus).
"""
