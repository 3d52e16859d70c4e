"""The meta level of the loop: the meta-solver registry (:mod:`psro.meta.solvers`), the warm-started zero-sum
LP it keeps across iterations (:mod:`psro.meta.warm_start_lp`) and the best-response targets a meta-solution
defines (:mod:`psro.meta.targets`)."""
