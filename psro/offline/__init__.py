"""Offline population training: from a fixed dataset of trajectories, with no further play.

The dataset format, its collection and the learned game model live in :mod:`games`
(:mod:`games.trajectories`, :func:`games.datasets.collect`, :func:`games.offline_model.fit_model`);
this package trains and judges policies with them:

- :mod:`psro.offline.pessimistic_gaps`: the pessimistic (relaxed) equilibrium gap of a candidate
  (Zhang, Bai & Jiang 2023), which ranks candidates when the true game cannot be queried;
- :mod:`psro.offline.coffee_psro`: COffeE-PSRO and naive offline PSRO;
- :mod:`psro.offline.behaviour_cloning`: behaviour cloning of the dataset.

The public names load on first use (PEP 562, through ``lazy_loader``).
"""

import lazy_loader

# One entry per public name: the submodule that defines it. Each helper keeps its own line.
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "pessimistic_gaps": ["PessimisticGap", "pessimistic_gap", "covers"],  # helper C
        "coffee_psro": ["COffeEPSRO", "OfflinePSRO"],  # helper D
        "behaviour_cloning": ["ClonedPolicy", "clone_behaviour", "policy_on_tree"],  # helper D
    },
)
