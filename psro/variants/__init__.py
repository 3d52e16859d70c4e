"""PSRO variants that papers compare against, each a small training loop built on :class:`psro.PSRO`'s public
phases (registered in :mod:`psro.algorithms`): here anytime PSRO (:mod:`psro.variants.anytime`: each player's
least exploitable mixture of its population, exploitability never increasing) and self-play PSRO
(:mod:`psro.variants.self_play_psro`: a near-optimal stochastic policy joins with every best response), with the
least-exploitable-mixture machinery they share in :mod:`psro.variants.least_exploitable`."""
