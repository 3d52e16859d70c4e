"""The outer loop: policies, populations, oracles, evaluation, meta-solvers, checkpoints, CLI.

The public names load on first use (PEP 562, through ``lazy_loader``), so
``import psro`` stays cheap for worker processes and scripts that only need a
submodule; ``from psro import PSRO`` imports the loop then.

>>> from psro import PSRO
>>> history = PSRO("kuhn_poker", progress=False).run(iterations=2)
>>> len(history)
3
"""

import lazy_loader

# One entry per public name: the submodule that defines it.
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "config.model": ["PSROConfig"],
        "evaluation": ["register_evaluator"],
        "oracles": ["register_oracle"],
        "loop.state": ["LoopState"],
        "variants.double_oracle_search": ["double_oracle", "DoubleOracleResult"],
        "loop.psro_loop": ["PSRO"],
        "loop.training": ["TrainingLoop"],
        "loop.algorithms": ["algorithm_class"],
        "family.self_play": ["SelfPlay", "FictitiousSelfPlay"],
        "family.fxp": ["FXP"],
        "family.league": ["League"],
        "family.nfsp": ["NFSP"],
        "family.policy_gradient": ["PPOSelfPlay", "MMDSelfPlay"],
        "variants.rectified": ["RectifiedPSRO"],
        "variants.diverse": ["DiversePSRO"],
        "variants.xdo": ["XDO"],
        "offline.coffee_psro": ["COffeEPSRO", "OfflinePSRO"],
        "variants.anytime": ["AnytimePSRO"],
        "variants.self_play_psro": ["SelfPlayPSRO"],
        "variants.pipeline": ["PipelinePSRO"],
        "policies.openspiel": ["to_openspiel_policy", "from_openspiel_policy"],
        "run.population_ranking": ["rank_population"],
        "measures.local_best_response": ["LocalBestResponse"],
        "measures.approximate_gap": ["nash_conv_lower_bound"],
        "measures.exact": ["exact_nash_conv", "Exploitability"],
        "family.mmd": ["magnetic_mirror_descent", "MMDResult"],
    },
)

# Old module paths (psro.game_tree, psro.state, ...) import their new modules, with a DeprecationWarning.
from psro import deprecation  # noqa: E402  isort: skip

deprecation.install()
