"""The PSRO variants that papers compare against, each a small loop built on :class:`psro.PSRO`: it overrides a few
of PSRO's public phases, reads its own options dataclass from ``algorithm_options``, keeps its state in
``state.extra`` (and the loop's checkpointed fields), and is registered by name in :mod:`psro.algorithms`.
"""
